//go:build !mpi

package win

import (
	"github.com/shmrun/shmrun/internal/heap"
	"github.com/shmrun/shmrun/shm"
)

// Free frees the window (MPI_Win_free): collective. It fails with ErrRMASync
// on every rank if any rank has an epoch open (the window then stays valid),
// with ErrWin if the window was freed already, and with ErrAborted if the
// job ended first; any other error is the release's (an unmap that failed),
// and the window is freed all the same. After it returns, slices from
// Local, SharedQuery and View must not be used: the memory is unmapped.
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
	err = w.dispose()
	w.checkEpoch("Free")
	return err
}

// dispose is Free once every rank agreed (or a creation that every rank
// agreed has failed): it lets go of the memory and the team.
func (w *Win) dispose() error {
	w.freed.Store(true)
	w.ep.drop()
	w.hot = w.ep.h
	w.t.Release() // after the window's last collective on the team
	var err error
	if w.ext != nil {
		err = w.ext.release()
	}
	if w.dyn != nil {
		if derr := w.dyn.release(); err == nil {
			err = derr
		}
	}
	switch {
	case w.regID != 0:
		// Unmapped now, or when the last window over this memory is freed.
		if uerr := heap.Unregister(w.regID); uerr != nil && err == nil {
			err = errorf(ErrOther, "Free on rank %d: unmap: %v", w.rank, uerr)
		}
	case w.mapped:
		if uerr := shm.Unmap(w.mem); uerr != nil && err == nil {
			err = errorf(ErrOther, "Free on rank %d: unmap: %v", w.rank, uerr)
		}
	}
	w.chk.Close() // before its area goes
	if w.chkMem != nil && !w.t.Local() {
		shm.Unmap(w.chkMem)
	}
	w.mem, w.parts, w.fast, w.chk, w.chkMem = nil, nil, nil, nil, nil
	w.obs.Free()
	return err
}
