//go:build amd64 || arm64

package raw

import "unsafe"

// Prefetch asks the CPU to bring the line of m[off] into its cache ahead
// of the loads that will need it (PREFETCHT0 on amd64, PRFM PLDL1KEEP on
// arm64): a receiver about to read a run of packets another core wrote
// gets their lines overlapped instead of one miss after the other. It
// changes nothing a program can observe; an off outside m does nothing.
func Prefetch(m []byte, off int64) {
	if off >= 0 && off < int64(len(m)) {
		prefetch(unsafe.Pointer(&m[off]))
	}
}

// prefetch is Prefetch's instruction. Invariant: p points into a live
// mapping or object (a prefetch never faults, but the caller's m keeps
// it valid anyway).
//
//go:noescape
func prefetch(p unsafe.Pointer)
