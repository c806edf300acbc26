//go:build !race

package shm

import "golang.org/x/sys/cpu"

// repMovsb copies n bytes from src to dst with REP MOVSB, forward.
//
// Invariant: src[0:n] and dst[0:n] are valid memory and do not overlap
// (Copy checks). It is assembly, so it is not preempted while it
// runs: callers keep n to a copyPiece.
//
//go:noescape
func repMovsb(dst, src *byte, n uintptr)

// useRep is true on CPUs with fast string moves (ERMS).
var useRep = cpu.X86.HasERMS

// copyCached copies min(len(dst), len(src)) bytes, at most copyPiece, of
// ranges that do not overlap, with cached stores: REP MOVSB where the CPU has
// ERMS, else copy (under 1 MiB memmove's stores are cached).
func copyCached(dst, src []byte) {
	n := min(len(dst), len(src))
	if !useRep || n == 0 {
		copy(dst, src)
		return
	}
	repMovsb(&dst[0], &src[0], uintptr(n))
}

// copyVec copies n ≥ 32 bytes from src to dst with 32-byte AVX2 moves.
//
// Invariant: n ≥ 32, src[0:n] and dst[0:n] are valid memory and do not
// overlap, and the CPU has AVX2 (useVec).
//
//go:noescape
func copyVec(dst, src *byte, n uintptr)

// useVec is true on CPUs with AVX2.
var useVec = cpu.X86.HasAVX2
