package win

import (
	"github.com/shmrun/shmrun/shm"
)

// Free frees the window (MPI_Win_free): collective. It fails with ErrRMASync
// on every rank if any rank has an epoch open (the window then stays valid),
// and with ErrWin if the window was freed already. After it returns, slices
// from Local, SharedQuery and View must not be used: the memory is unmapped.
func (w *Win) Free() error {
	if err := w.live("Free"); err != nil {
		return err
	}
	var err error
	if open := w.ep.describeOpen(); open != "" {
		err = errorf(ErrRMASync, "Free on rank %d: %s is still open", w.rank, open)
	}
	if err = agree(w.t, err); err != nil {
		return err
	}
	w.freed.Store(true)
	w.ep.setGate(gateFreed, true)
	w.t.Release() // after the window's last collective on the team
	if w.mapped {
		if uerr := shm.Unmap(w.mem); uerr != nil {
			return errorf(ErrOther, "Free on rank %d: unmap: %v", w.rank, uerr)
		}
	}
	w.mem, w.parts = nil, nil
	w.checkEpoch("Free")
	return nil
}
