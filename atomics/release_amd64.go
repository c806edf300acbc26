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
// operation: it drains the store buffer and waits until this core owns the
// line, where a plain store retires into the store buffer and the core goes
// on. On a line another core is polling, that wait is paid in every
// hand-off; the full fence a caller may need afterwards can be a locked add
// on a private line, which no peer touches (bench/NOTES.md).
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
