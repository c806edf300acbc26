//go:build !mpi

package win

import (
	"errors"
	"fmt"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/internal/rmacheck"
)

// Accumulate operations are atomic per element, as the standard's atomicity
// rules require (MPI 3.1 §11.7.1): aligned 1-, 2-, 4- and 8-byte integers are
// updated lock-free, floats by compare-and-swap loops, complex numbers, pair
// types and unaligned elements under a lock stripe of the window chosen by the
// element's offset in the segment (see package atomics). Nothing serializes a
// whole target or window. Calls from one origin complete in program order and
// each element operation is sequentially consistent, so the default ordering
// rar,raw,war,waw holds; accumulate_ordering=none permits no reordering we
// would exploit. accumulate_ops=same_op is a promise we do not need: every
// op, NoOp and Replace included, is atomic on its own.
//
// Alignment matters for speed, not for correctness: an element takes the
// lock-free path when its offset in the segment is a multiple of its size.
// In the contiguous layout a rank's part starts right after the previous
// rank's last byte, so keep every rank's size a multiple of 8 (or use
// alloc_shared_noncontig) and accumulates on 8-byte elements stay lock-free;
// otherwise they take a stripe: a lock, the update and an unlock instead of
// one atomic instruction.

// The accumulate family checks like Put, inline: a rank in range with an
// access epoch, then span; everything else goes to the slow path (remote.go).

// opError wraps a kernel's error in the matching class of this package
// (ErrOp is the kernels' own sentinel).
func opError(call string, w *Win, target int, err error) error {
	class := ErrOther
	switch {
	case errors.Is(err, atomics.ErrOp):
		return fmt.Errorf("win: %s on rank %d to rank %d: %w", call, w.rank, target, err)
	case errors.Is(err, barrier.ErrAborted):
		class = ErrAborted
	case errors.Is(err, atomics.ErrRange):
		class = ErrRMARange
	case errors.Is(err, atomics.ErrArg):
		class = ErrArg
	}
	return fmt.Errorf("win: %s on rank %d to rank %d: %v: %w", call, w.rank, target, err, class)
}

// Accumulate combines src into target's memory at disp element by element
// with op (MPI_Accumulate): Sum, Prod, Max, Min, Band, Bor, Bxor, Land, Lor,
// Lxor, Replace, and MinLoc/MaxLoc on pair types. Local, completes eagerly;
// epochs, ranges and ProcNull as for Put. An op the standard does not define
// on T (a bit op on a float, say) is ErrOp.
//
// Never inlined: shmrun --check finds its caller's line from its return
// address (raw.ReturnPC).
//
//go:noinline
func Accumulate[T atomics.Elem](w *Win, src []T, target, disp int, op atomics.Op) error {
	if w != nil && uint(target) < uint(len(w.fast)) && w.ep.canAccess(target) {
		p := &w.fast[target]
		if o, in := p.span(disp, len(src)*atomics.SizeOf[T]()); in {
			if w.chk != nil { // shmrun --check: the release before, the record after
				t, lo, hi, key, pc := w.atomicAccess(nameAccumulate, target, disp, len(src)*atomics.SizeOf[T](), uint8(op), uint8(atomics.TypeOf[T]()), raw.ReturnPC())
				rep := w.chk.AtomicBefore(t, lo, hi, key, pc)
				if err := atomics.Accumulate(p.amem, p.off+int64(o), src, op, w.stripes); err != nil {
					return opError("Accumulate", w, target, err)
				}
				w.chk.AtomicAfter(t, lo, hi, key, pc, rep)
				return nil
			}
			if op == atomics.Sum && len(src) == 1 {
				if _, ok := raw.FetchAddWord(p.amem, p.off+int64(o), src[0]); ok {
					return nil
				}
			}
			if err := atomics.Accumulate(p.amem, p.off+int64(o), src, op, w.stripes); err != nil {
				return opError("Accumulate", w, target, err)
			}
			return nil
		}
	}
	return accumulateSlow(w, src, target, disp, op)
}

// GetAccumulate stores the target's elements at disp into result and
// combines src into them with op, atomically per element
// (MPI_Get_accumulate). op may also be NoOp (an atomic read): src is then
// ignored, whatever its length (nil included), as the standard ignores the
// origin buffer of MPI_NO_OP. len(result) must equal len(src) unless op is
// NoOp (ErrCount), and the two may not share memory (MPI 4.1 §12.3.4:
// ErrBuffer; one element may, as it is read before its result is
// written). Local, completes eagerly; epochs, ranges and ProcNull as for
// Put (ErrRMASync outside an epoch, ErrRMARange past the target's part);
// an op the standard does not define on T is ErrOp.
//
// Never inlined: shmrun --check finds its caller's line from its return
// address (raw.ReturnPC).
//
//go:noinline
func GetAccumulate[T atomics.Elem](w *Win, src, result []T, target, disp int, op atomics.Op) error {
	if op != atomics.NoOp && len(src) != len(result) {
		return errorf(ErrCount, "GetAccumulate on rank %d: %d source elements but %d result elements", w.Rank(), len(src), len(result))
	}
	// One element is read before its result is written, whatever the
	// path; more may be combined after the result is copied out.
	if len(result) > 1 && op != atomics.NoOp {
		if err := aliased("GetAccumulate", w, raw.Bytes(src), raw.Bytes(result)); err != nil {
			return err
		}
	}
	if w != nil && uint(target) < uint(len(w.fast)) && w.ep.canAccess(target) {
		p := &w.fast[target]
		if o, in := p.span(disp, len(result)*atomics.SizeOf[T]()); in {
			if w.chk != nil {
				t, lo, hi, key, pc := w.atomicAccess(nameGetAccumulate, target, disp, len(result)*atomics.SizeOf[T](), uint8(op), uint8(atomics.TypeOf[T]()), raw.ReturnPC())
				rep := w.chk.AtomicBefore(t, lo, hi, key, pc)
				if err := atomics.GetAccumulate(p.amem, p.off+int64(o), src, result, op, w.stripes); err != nil {
					return opError("GetAccumulate", w, target, err)
				}
				w.chk.AtomicAfter(t, lo, hi, key, pc, rep)
				return nil
			}
			if op == atomics.Sum && len(src) == 1 {
				if old, ok := raw.FetchAddWord(p.amem, p.off+int64(o), src[0]); ok {
					result[0] = old
					return nil
				}
			}
			if err := atomics.GetAccumulate(p.amem, p.off+int64(o), src, result, op, w.stripes); err != nil {
				return opError("GetAccumulate", w, target, err)
			}
			return nil
		}
	}
	return getAccumulateSlow(w, src, result, target, disp, op)
}

// FetchAndOp returns the element at disp on target and combines v into it
// with op, atomically (MPI_Fetch_and_op). op may be NoOp (atomic read) or
// Replace (atomic swap). On the common types it is one atomic instruction.
// Local, completes eagerly; epochs, ranges and ProcNull as for Put
// (ErrRMASync outside an epoch, ErrRMARange past the target's part); an op
// the standard does not define on T (a bit op on a float) is ErrOp.
//
// Never inlined: shmrun --check finds its caller's line from its return
// address (raw.ReturnPC).
//
//go:noinline
func FetchAndOp[T atomics.Elem](w *Win, v T, target, disp int, op atomics.Op) (T, error) {
	if w != nil && uint(target) < uint(len(w.fast)) && w.ep.canAccess(target) {
		p := &w.fast[target]
		if o, in := p.span(disp, atomics.SizeOf[T]()); in {
			if w.chk != nil {
				t, lo, hi, key, pc := w.atomicAccess(nameFetchAndOp, target, disp, atomics.SizeOf[T](), uint8(op), uint8(atomics.TypeOf[T]()), raw.ReturnPC())
				rep := w.chk.AtomicBefore(t, lo, hi, key, pc)
				var old T
				ok := false
				if op == atomics.Sum {
					old, ok = raw.FetchAddWord(p.amem, p.off+int64(o), v)
				}
				if !ok {
					var err error
					if old, err = atomics.FetchAndOp(p.amem, p.off+int64(o), v, op, w.stripes); err != nil {
						return old, opError("FetchAndOp", w, target, err)
					}
				}
				w.chk.AtomicAfter(t, lo, hi, key, pc, rep)
				return old, nil
			}
			if op == atomics.Sum {
				if old, ok := raw.FetchAddWord(p.amem, p.off+int64(o), v); ok {
					return old, nil
				}
			}
			old, err := atomics.FetchAndOp(p.amem, p.off+int64(o), v, op, w.stripes)
			if err != nil {
				return old, opError("FetchAndOp", w, target, err)
			}
			return old, nil
		}
	}
	return fetchAndOpSlow(w, v, target, disp, op)
}

// CompareAndSwap replaces the element at disp on target with v if it equals
// compare, and returns the element it found (MPI_Compare_and_swap),
// atomically. Integer types only: a float does not compile. Local,
// completes eagerly; epochs, ranges and ProcNull as for Put (ErrRMASync
// outside an epoch, ErrRMARange past the target's part).
//
// Never inlined: shmrun --check finds its caller's line from its return
// address (raw.ReturnPC).
//
//go:noinline
func CompareAndSwap[T atomics.Integer](w *Win, v, compare T, target, disp int) (T, error) {
	if w != nil && uint(target) < uint(len(w.fast)) && w.ep.canAccess(target) {
		p := &w.fast[target]
		if o, in := p.span(disp, atomics.SizeOf[T]()); in {
			if w.chk != nil {
				t, lo, hi, key, pc := w.atomicAccess(nameCompareAndSwap, target, disp, atomics.SizeOf[T](), rmacheck.OpCAS, uint8(atomics.TypeOf[T]()), raw.ReturnPC())
				rep := w.chk.AtomicBefore(t, lo, hi, key, pc)
				old, err := atomics.CompareAndSwap(p.amem, p.off+int64(o), v, compare, w.stripes)
				if err != nil {
					return old, opError("CompareAndSwap", w, target, err)
				}
				w.chk.AtomicAfter(t, lo, hi, key, pc, rep)
				return old, nil
			}
			if raw.SwapIfWord(p.amem, p.off+int64(o), v, compare) {
				return compare, nil
			}
			old, err := atomics.CompareAndSwap(p.amem, p.off+int64(o), v, compare, w.stripes)
			if err != nil {
				return old, opError("CompareAndSwap", w, target, err)
			}
			return old, nil
		}
	}
	return compareAndSwapSlow(w, v, compare, target, disp)
}
