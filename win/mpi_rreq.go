//go:build mpi

package win

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
