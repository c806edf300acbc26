//go:build !race

package atomics

// StoreRelease32 stores v to *addr with release ordering: a load-acquire
// (sync/atomic's Load) that sees v also sees every load and store the caller
// made before the call. It is for words with one writer that another
// process polls (the PSCW post and complete counters): it does not order the
// store before the caller's later loads, so follow it with a full fence
// where that matters (before reading a doorbell's sleepers count).
//
// On amd64 it is a plain MOV in assembly (x86 stores are release stores; the
// call keeps the compiler from moving memory accesses across it; string and
// non-temporal copies before it end in SFENCE or complete in order before a
// later discrete store). sync/atomic's Store is an XCHG instead, a locked
// operation: taking a line that another core is polling with a locked
// instruction made a two-process flag hand-off 1.6x slower than plain
// stores on an AMD EPYC Zen 5 guest (1010 ns against 640), where a locked
// add on a private line after the plain store cost nothing measurable.
// Under the race detector it is atomic.StoreUint32, which the detector sees.
//
//go:noescape
func StoreRelease32(addr *uint32, v uint32)

// StoreRelease64 is StoreRelease32 for a 64-bit word (8-byte aligned, as
// sync/atomic requires). For a program's own flags in a shared window
// (an acknowledgement a peer polls, say), it is the Go spelling of C's
// __atomic_store_n(p, v, __ATOMIC_RELEASE).
//
//go:noescape
func StoreRelease64(addr *uint64, v uint64)
