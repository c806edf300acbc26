//go:build mpi

package win

import "github.com/shmrun/shmrun/atomics"

// The request-based RMA calls under the MPI backend complete at the
// origin before they return, as on the shmrun backend: Rget and
// RgetAccumulate through their calls' flush_local, Rput and Raccumulate by
// MPI_Win_flush_local after the operation (they are allowed only in
// passive-target epochs, where it is), so the Request returned is
// complete.

// rmaRequest checks that a request-based call is inside a passive-target
// epoch to target, as the standard requires of MPI_Rput and its kin.
func (w *Win) rmaRequest(call string, target int) error {
	if err := w.usable(call); err != nil {
		return err
	}
	if target != ProcNull && (target < 0 || target >= w.size) {
		return errorf(ErrRank, "%s on rank %d: target %d outside a window of %d ranks", call, w.rank, target, w.size)
	}
	w.mu.Lock()
	ok, passive := w.ep.access(target)
	w.mu.Unlock()
	if ok && passive {
		return nil
	}
	return errorf(ErrRMASync, "%s on rank %d to rank %d: request-based RMA is allowed only in a passive-target epoch (Lock or LockAll)", call, w.rank, target)
}

// completeLocal completes this rank's calls to target at the origin.
func (w *Win) completeLocal(target int) error {
	if target == ProcNull {
		return nil
	}
	return w.FlushLocal(target)
}

// Rput is Put returning a Request (MPI_Rput); only inside a
// passive-target epoch to target. The request is complete: src may be
// reused once Rput returns.
func (w *Win) Rput(src []byte, target, disp int) (*Request, error) {
	if err := w.rmaRequest("Rput", target); err != nil {
		return nil, err
	}
	if err := w.Put(src, target, disp); err != nil {
		return nil, err
	}
	if err := w.completeLocal(target); err != nil {
		return nil, err
	}
	return doneRequest, nil
}

// Rget is Get returning a Request (MPI_Rget); only inside a
// passive-target epoch to target. The request is complete.
func (w *Win) Rget(dst []byte, target, disp int) (*Request, error) {
	if err := w.rmaRequest("Rget", target); err != nil {
		return nil, err
	}
	if err := w.Get(dst, target, disp); err != nil {
		return nil, err
	}
	return doneRequest, nil
}

// Raccumulate is Accumulate returning a Request (MPI_Raccumulate); only
// inside a passive-target epoch to target. The request is complete.
func Raccumulate[T atomics.Elem](w *Win, src []T, target, disp int, op atomics.Op) (*Request, error) {
	if err := w.rmaRequest("Raccumulate", target); err != nil {
		return nil, err
	}
	if err := Accumulate(w, src, target, disp, op); err != nil {
		return nil, err
	}
	if err := w.completeLocal(target); err != nil {
		return nil, err
	}
	return doneRequest, nil
}

// RgetAccumulate is GetAccumulate returning a Request
// (MPI_Rget_accumulate); only inside a passive-target epoch to target.
// The request is complete.
func RgetAccumulate[T atomics.Elem](w *Win, src, result []T, target, disp int, op atomics.Op) (*Request, error) {
	if err := w.rmaRequest("RgetAccumulate", target); err != nil {
		return nil, err
	}
	if err := GetAccumulate(w, src, result, target, disp, op); err != nil {
		return nil, err
	}
	return doneRequest, nil
}
