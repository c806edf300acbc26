//go:build !mpi

package win

import (
	"encoding/binary"
	"fmt"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/internal/rmacheck"
	"github.com/shmrun/shmrun/shm"
)

// span returns the offset in p.data of n bytes at disp (in units of the
// target's disp unit), or false if they are not all inside the target's part.
// It cannot overflow: disp is bounded by maxDisp = len/dispUnit (computed once)
// before it is multiplied.
func (p *part) span(disp, n int) (int, bool) {
	if uint(disp) > p.maxDisp {
		return 0, false
	}
	off := disp * int(p.dispUnit)
	return off, uint(n) <= uint(len(p.data)-off)
}

// Put copies src into target's part of the window at disp (MPI_Put). Local;
// it completes eagerly, but its completion at the target is guaranteed only
// by the synchronization that ends the epoch (or Flush). It needs an access
// epoch to target (ErrRMASync), a disp >= 0 (ErrDisp) and bytes inside the
// target's own part (ErrRMARange: a neighbour's bytes are never touched).
// ProcNull is a no-op inside any open access epoch (ErrRMASync outside).
//
// Never inlined: shmrun --check finds its caller's line from its return
// address (raw.ReturnPC).
//
//go:noinline
func (w *Win) Put(src []byte, target, disp int) error {
	if w != nil && uint(target) < uint(len(w.fast)) && w.ep.canAccess(target) {
		p := &w.fast[target]
		if off, ok := p.span(disp, len(src)); ok {
			if w.chk != nil { // shmrun --check: the caller's line is where Put returns to
				w.chk.RMA(target, uint64(off), uint64(off+len(src)), rmacheck.KeyOf(rmacheck.Write, 0, 0, namePut, w.epochOf(target)), raw.ReturnPC())
			}
			if len(src) == 8 { // one move instead of a memmove call
				binary.LittleEndian.PutUint64(p.data[off:], binary.LittleEndian.Uint64(src))
			} else {
				shm.Copy(p.data[off:], src)
			}
			return nil
		}
		if w.dyn != nil && disp >= 0 {
			if w.chk == nil && w.dyn.copyPinned(target, uint64(disp), src, true) {
				return nil
			}
			if dst, slot, sv, ok := w.dyn.hotData(target, uint64(disp), len(src)); ok {
				if w.chk != nil {
					w.checkRMA(namePut, target, disp, len(src), rmacheck.Write, 0, 0)
				}
				if len(src) == 8 {
					binary.LittleEndian.PutUint64(dst, binary.LittleEndian.Uint64(src))
				} else {
					shm.Copy(dst, src)
				}
				leaveSlot(slot, sv)
				return nil
			}
		}
	}
	return w.putSlow(src, target, disp)
}

// Get copies len(dst) bytes from target's part at disp into dst (MPI_Get).
// As Put for epochs, ranges and ProcNull; dst may be read once Get returns.
//
// Never inlined, as Put.
//
//go:noinline
func (w *Win) Get(dst []byte, target, disp int) error {
	if w != nil && uint(target) < uint(len(w.fast)) && w.ep.canAccess(target) {
		p := &w.fast[target]
		if off, ok := p.span(disp, len(dst)); ok {
			if w.chk != nil { // as Put's
				w.chk.RMA(target, uint64(off), uint64(off+len(dst)), rmacheck.KeyOf(rmacheck.Read, 0, 0, nameGet, w.epochOf(target)), raw.ReturnPC())
			}
			if len(dst) == 8 {
				binary.LittleEndian.PutUint64(dst, binary.LittleEndian.Uint64(p.data[off:]))
			} else {
				shm.Copy(dst, p.data[off:])
			}
			return nil
		}
		if w.dyn != nil && disp >= 0 {
			if w.chk == nil && w.dyn.copyPinned(target, uint64(disp), dst, false) {
				return nil
			}
			if src, slot, sv, ok := w.dyn.hotData(target, uint64(disp), len(dst)); ok {
				if w.chk != nil {
					w.checkRMA(nameGet, target, disp, len(dst), rmacheck.Read, 0, 0)
				}
				if len(dst) == 8 {
					binary.LittleEndian.PutUint64(dst, binary.LittleEndian.Uint64(src))
				} else {
					shm.Copy(dst, src)
				}
				leaveSlot(slot, sv)
				return nil
			}
		}
	}
	return w.getSlow(dst, target, disp)
}

// PutT is Put of a typed buffer (MPI_Put with a predefined datatype): disp is
// in units of the target's disp unit, the length is len(src)*sizeof(T).
func PutT[T atomics.Elem](w *Win, src []T, target, disp int) error {
	return w.Put(shm.Bytes(src), target, disp)
}

// GetT is Get into a typed buffer (MPI_Get with a predefined datatype):
// disp is in units of the target's disp unit, the length is
// len(dst)*sizeof(T). Local; epochs, ranges and ProcNull as for Get.
func GetT[T atomics.Elem](w *Win, dst []T, target, disp int) error {
	return w.Get(shm.Bytes(dst), target, disp)
}

// rmaRequest checks that a request-based call is inside a passive-target
// epoch, as the standard requires of MPI_Rput and its kin.
func (w *Win) rmaRequest(call string, target int) error {
	if w != nil && w.ep.h != nil && (w.ep.h.LockAll || w.ep.lockedTo(target)) {
		return nil
	}
	if err := w.live(call); err != nil {
		return err
	}
	if target == ProcNull && w.ep.passive(-1) {
		return nil
	}
	if target != ProcNull && (target < 0 || target >= w.size) {
		return errorf(ErrRank, "%s on rank %d: target %d outside a window of %d ranks", call, w.rank, target, w.size)
	}
	to := fmt.Sprintf("rank %d", target)
	if target == ProcNull {
		to = "ProcNull"
	}
	return errorf(ErrRMASync, "%s on rank %d to %s: request-based RMA is allowed only in a passive-target epoch (Lock or LockAll)", call, w.rank, to)
}

// completeLocal completes this rank's calls to target at the origin: RMA
// completes eagerly here, so there is nothing left to do.
func (w *Win) completeLocal(int) error { return nil }
