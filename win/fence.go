//go:build !mpi

package win

import (
	"time"

	"github.com/shmrun/shmrun/internal/rmacheck"
)

// Fence synchronizes the window's group (MPI_Win_fence): collective. It
// closes the fence epoch before it (every put of that epoch is visible to
// every rank after the Fence) and opens the next unless ModeNoSucceed is
// given. assert is 0 or an OR of ModeNoStore, ModeNoPut, ModeNoPrecede and
// ModeNoSucceed (other bits: ErrAssert); every rank must pass the same
// ModeNoPrecede and ModeNoSucceed. Because RMA completes eagerly, a Fence that
// may open an epoch must still wait for every rank, so it is a barrier plus a
// full fence; only ModeNoPrecede|ModeNoSucceed together skip the barrier
// (and, under shmrun --check, order no access before the Fence before one
// after it).
//
// A Fence while a Lock, LockAll, Start or Post epoch is open is ErrRMASync;
// a failure on any rank fails the Fence on every rank, and no epoch changes.
func (w *Win) Fence(assert int) error {
	if w != nil && w.obs != nil {
		defer w.obs.Sync("Fence", time.Now())
	}
	if w != nil && w.chk != nil && assert&(ModeNoPrecede|ModeNoSucceed) != ModeNoPrecede|ModeNoSucceed {
		// shmrun --check: the epoch's calls are complete; the fence is a
		// release and an acquire among the window's ranks. With
		// ModeNoPrecede alone it still orders each rank's loads and
		// stores before it before the RMA calls after it, with
		// ModeNoSucceed alone the RMA calls before it before the loads
		// and stores after it. With both it closes no epoch and opens
		// none, and waits for no rank: it orders nothing, and takes no
		// slot (every rank passes both or neither, so the fences that
		// do alternate alike).
		slot := rmacheck.SlotFence + int(w.fences&1)
		w.fences++
		w.chk.Complete(-1)
		w.clocks.Release(slot)
		defer w.clocks.Acquire(slot, nil)
	}
	defer w.checkEpoch("Fence")
	if err := w.live("Fence"); err != nil {
		return err
	}
	var err error
	const allowed = ModeNoStore | ModeNoPut | ModeNoPrecede | ModeNoSucceed
	switch {
	case assert&^allowed != 0:
		err = errorf(ErrAssert, "Fence on rank %d: assert %#x has bits other than ModeNoStore|ModeNoPut|ModeNoPrecede|ModeNoSucceed", w.rank, assert)
	case w.ep.h.LockAll || w.ep.anyLocked() || w.ep.startOpen() || w.ep.postOpen():
		err = errorf(ErrRMASync, "Fence on rank %d: %s", w.rank, w.ep.describeOpen())
	case assert&ModeNoPrecede != 0 && w.ep.h.FenceOpen && w.ep.h.FenceUsed.Load():
		err = errorf(ErrAssert, "Fence on rank %d: ModeNoPrecede, but RMA calls were made since the last Fence", w.rank)
	}
	if assert&(ModeNoPrecede|ModeNoSucceed) == ModeNoPrecede|ModeNoSucceed {
		// Nothing to close, nothing to open: no rank waits for another.
		if err != nil {
			return err
		}
		w.fullFence()
		w.ep.setFence(false)
		return nil
	}
	if err = w.agreeFence(err, "Fence"); err != nil {
		return err
	}
	if assert&ModeNoSucceed != 0 {
		w.ep.setFence(false)
	} else {
		w.ep.h.FenceUsed.Store(false)
		w.ep.setFence(true)
	}
	return nil
}

// agreeFence is the window barrier with failure agreement: the failing
// rank's error class travels in the barrier's failure word (or, up to
// format.FlagFenceRanks ranks, in its fence word), so every rank returns
// the same class. The barrier's atomic read-modify-writes are full
// fences, the fence words' stores releases and their loads acquires:
// every rank's puts before it are visible to every rank after it.
func (w *Win) agreeFence(local error, call string) error {
	code := uint32(0)
	if local != nil {
		code = uint32(classCode(local))<<16 | uint32(w.rank+1)
	}
	var got uint32
	var err error
	if w.ff != nil {
		got, err = w.flagAgree(code)
	} else {
		got, err = w.fence.AgreeCode(code)
	}
	if err != nil {
		return errorf(ErrAborted, "%s on rank %d: %v", call, w.rank, err)
	}
	return w.fenceVerdict(local, got, call)
}

// fenceVerdict is the error of a fence round whose agreed failure code is
// got (0: none); local is this rank's own failure.
func (w *Win) fenceVerdict(local error, got uint32, call string) error {
	if got == 0 {
		return nil
	}
	if local != nil && int(got&0xffff)-1 == w.rank {
		return local
	}
	class := classes[int(got>>16)%len(classes)]
	return errorf(class, "%s on rank %d: failed on rank %d", call, w.rank, int(got&0xffff)-1)
}
