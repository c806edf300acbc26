//go:build !mpi

package win

import (
	"runtime"
	"sync"
)

// pins keeps every Pinner a window holds reachable from the package, so
// that a window dropped without Free leaves its memory pinned (a leak, as
// an unfreed window is) instead of a Pinner collected while pinned, which
// the runtime turns into a fatal panic. The one package-level state of
// win: pinning is a property of the process.
var pins sync.Map // *pinned → struct{}

// pinned is a runtime.Pinner registered in pins while it pins anything.
type pinned struct{ p runtime.Pinner }

// pin pins the memory under b (nonempty) and returns the handle to unpin.
func pin(b []byte) *pinned {
	pp := &pinned{}
	pp.p.Pin(&b[0])
	pins.Store(pp, struct{}{})
	return pp
}

// unpin releases pp; nil is a no-op.
func (pp *pinned) unpin() {
	if pp == nil {
		return
	}
	pp.p.Unpin()
	pins.Delete(pp)
}
