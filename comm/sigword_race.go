//go:build race && !mpi

package comm

import (
	"sync/atomic"

	"github.com/shmrun/shmrun/internal/raw"
)

// loadSig is sigword.go's, atomic: the race detector's build.
func loadSig(m []byte) (uint64, uint64) {
	return atomic.LoadUint64(raw.Uint64At(m, 0)), atomic.LoadUint64(raw.Uint64At(m, 8))
}

// storeSig is sigword.go's, atomic.
func storeSig(m []byte, w0, w1 uint64) {
	atomic.StoreUint64(raw.Uint64At(m, 0), w0)
	atomic.StoreUint64(raw.Uint64At(m, 8), w1)
}
