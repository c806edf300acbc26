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
