//go:build !amd64 || race

package atomics

import "sync/atomic"

// StoreRelease32 stores v to *addr with release ordering: a load-acquire
// (sync/atomic's Load) that sees v also sees every load and store the caller
// made before the call. It is for words with one writer that another
// process polls (the PSCW post and complete counters). Here (not amd64, or
// under the race detector, which must see the store) it is
// atomic.StoreUint32; on amd64 a plain MOV (see release_amd64.go for why).
func StoreRelease32(addr *uint32, v uint32) { atomic.StoreUint32(addr, v) }

// StoreRelease64 is StoreRelease32 for a 64-bit word (8-byte aligned, as
// sync/atomic requires). For a program's own flags in a shared window
// (an acknowledgement a peer polls, say), it is the Go spelling of C's
// __atomic_store_n(p, v, __ATOMIC_RELEASE).
func StoreRelease64(addr *uint64, v uint64) { atomic.StoreUint64(addr, v) }
