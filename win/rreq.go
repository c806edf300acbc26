package win

import "github.com/shmrun/shmrun/atomics"

// The request-based RMA calls, for both backends: each returns a complete
// Request. rmaRequest (the passive-target check) and completeLocal (the
// origin-side completion Rput and Raccumulate need) are each backend's.

// Rput is Put returning a Request (MPI_Rput); only inside a passive-target
// epoch to target. The request is complete: src may be reused once Rput
// returns.
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

// Rget is Get returning a Request (MPI_Rget); only inside a passive-target
// epoch to target. The request is complete.
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
