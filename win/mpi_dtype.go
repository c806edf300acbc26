//go:build mpi

package win

import (
	"runtime"
	"sync"
	"weak"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/mpi"
)

// The datatype forms of RMA under the MPI backend: the origin's instances
// are packed (dtype.Pack) into contiguous bytes or elements, and the
// target's layout is an MPI datatype made from the target type's runs
// (one per type and element kind, freed once the type is garbage), so each
// call is one MPI call.

// typeKey names a dtype.Type by a weak pointer: the cache below must not
// keep a program's types (nor their MPI datatypes) alive once the program
// drops them, a type made per call (a Vector of this call's count) would
// otherwise grow both for ever.
type typeKey struct {
	t    weak.Pointer[dtype.Type]
	elem atomics.Type
}

var mpiTypes sync.Map // typeKey → mpi.Datatype

// mpiType returns t's layout as an MPI datatype of bytes (elem 0) or of
// elements of elem, made on t's first use with elem and freed (from a
// cleanup) once t is garbage.
func mpiType(t *dtype.Type, elem atomics.Type) (mpi.Datatype, error) {
	k := typeKey{weak.Make(t), elem}
	if d, ok := mpiTypes.Load(k); ok {
		return d.(mpi.Datatype), nil
	}
	runs, err := t.Runs()
	if err != nil {
		return mpi.Datatype{}, err
	}
	size := int64(1)
	if elem != 0 {
		size = dtype.Basic(elem).Size()
	}
	lens, displs := make([]int, len(runs)), make([]int64, len(runs))
	for i, r := range runs {
		lens[i], displs[i] = int(r.Len/size), r.Off
	}
	if gapped(elem) {
		// A pair type's element is two runs with a gap (DoubleInt's data
		// are 12 of its 16 bytes): one block a element, at its first byte.
		offs := elemOffsets(t, 1, dtype.Basic(elem), int(t.Size()/size), 0)
		lens, displs = make([]int, len(offs)), offs
		for i := range lens {
			lens[i] = 1
		}
	}
	d, err := mpi.MakeType(lens, displs, elem, t.LB(), t.Extent())
	if err != nil {
		return mpi.Datatype{}, err
	}
	if old, loaded := mpiTypes.LoadOrStore(k, d); loaded {
		_ = d.Free() // another goroutine made it first
		return old.(mpi.Datatype), nil
	}
	runtime.AddCleanup(t, func(k typeKey) {
		if d, ok := mpiTypes.LoadAndDelete(k); ok {
			_ = d.(mpi.Datatype).Free()
		}
	}, k)
	return d, nil
}

// gapped says whether elements of elem have a gap in memory (the pair
// types whose data are fewer bytes than the element: DoubleInt,
// LongInt, ShortInt): their packed form (dtype.Pack) is shorter than the
// elements the MPI reads and writes.
func gapped(elem atomics.Type) bool {
	return elem != 0 && dtype.Basic(elem).Size() != int64(elem.Size())
}

// spread turns n packed elements of elem into the elements' own layout
// (gaps restored) for the MPI, where elem is gapped.
func spread(packed []byte, n int, elem atomics.Type) []byte {
	if !gapped(elem) || packed == nil {
		return packed
	}
	out := make([]byte, n*elem.Size())
	_, _ = dtype.Unpack(packed, out, n, dtype.Basic(elem))
	return out
}

// typed checks a typed call's origin and target types and returns the
// origin packed, the target's MPI datatype, and the bytes the target
// instances span from disp (lo may be negative).
func (w *Win) typed(call string, origin []byte, ocount int, otype *dtype.Type, tcount int, ttype *dtype.Type, elem atomics.Type, pack bool) (packed []byte, tt mpi.Datatype, lo, hi int64, err error) {
	for _, t := range []*dtype.Type{otype, ttype} {
		if err := t.CheckCommitted(); err != nil {
			return nil, tt, 0, 0, errorf(ErrType, "%s on rank %d: %v", call, w.rank, err)
		}
	}
	if ocount < 0 || tcount < 0 {
		return nil, tt, 0, 0, errorf(ErrCount, "%s on rank %d: counts %d and %d", call, w.rank, ocount, tcount)
	}
	if err := otype.Fits(ocount, len(origin)); err != nil {
		return nil, tt, 0, 0, errorf(ErrBuffer, "%s on rank %d: %v", call, w.rank, err)
	}
	if !pack {
		// A result: data arrive there (dtype.FitsRecv).
		if err := otype.FitsRecv(ocount, len(origin)); err != nil {
			return nil, tt, 0, 0, errorf(ErrType, "%s on rank %d: %v", call, w.rank, err)
		}
	}
	if int64(ocount)*otype.Size() != int64(tcount)*ttype.Size() {
		return nil, tt, 0, 0, errorf(ErrType, "%s on rank %d: %d bytes of origin data for %d bytes of target data", call, w.rank,
			int64(ocount)*otype.Size(), int64(tcount)*ttype.Size())
	}
	if pack {
		n, err := dtype.PackSize(ocount, otype)
		if err != nil {
			return nil, tt, 0, 0, errorf(ErrType, "%s on rank %d: %v", call, w.rank, err)
		}
		packed = make([]byte, n)
		if _, err := dtype.Pack(origin, ocount, otype, packed); err != nil {
			return nil, tt, 0, 0, errorf(ErrBuffer, "%s on rank %d: %v", call, w.rank, err)
		}
	}
	if tt, err = mpiType(ttype, elem); err != nil {
		return nil, tt, 0, 0, w.mpiErr(call, err)
	}
	lo, hi, err = ttype.Span(tcount)
	if err != nil {
		return nil, tt, 0, 0, errorf(ErrType, "%s on rank %d: %v", call, w.rank, err)
	}
	return packed, tt, lo, hi, nil
}

// typedRMA is rma for a call whose target bytes span [lo, hi) from disp.
func (w *Win) typedRMA(call string, target, disp int, lo, hi int64, via route) (mpi.Win, int, bool, error) {
	if lo < 0 && target != ProcNull && disp >= 0 && target >= 0 && target < w.size && w.flavor != FlavorDynamic &&
		int64(disp*w.units[target])+lo < 0 {
		return mpi.Win{}, 0, false, errorf(ErrRMARange, "%s on rank %d to rank %d: the target data starts %d bytes before disp %d", call, w.rank, target, -lo, disp)
	}
	return w.rma(call, target, disp, int(max(hi, 0)), via)
}

// elemOf is the one predefined type both types of an accumulate are made
// of (ErrType otherwise), checked against op.
func (w *Win) elemOf(call string, otype, ttype *dtype.Type, op atomics.Op, fetch bool) (atomics.Type, error) {
	e1, ok1 := otype.Elem()
	e2, ok2 := ttype.Elem()
	if !ok1 || !ok2 || e1 != e2 {
		return 0, errorf(ErrType, "%s on rank %d: %v and %v are not made of one and the same predefined type", call, w.rank, otype, ttype)
	}
	if err := atomics.Check(op, e1, fetch); err != nil {
		return 0, errorf(ErrOp, "%s on rank %d: %v", call, w.rank, err)
	}
	return e1, nil
}

// PutType is Put with derived datatypes (MPI_Put with an origin and a
// target datatype): ocount instances of otype from origin go into tcount
// instances of ttype at disp on target. Local; the origin is packed, so it
// may change once PutType returns.
func PutType(w *Win, origin []byte, ocount int, otype *dtype.Type, target, disp, tcount int, ttype *dtype.Type) error {
	packed, tt, lo, hi, err := w.typed("PutType", origin, ocount, otype, tcount, ttype, 0, true)
	if err != nil {
		return err
	}
	h, off, noop, err := w.typedRMA("PutType", target, disp, lo, hi, viaWin)
	if err != nil || noop {
		return err
	}
	if w.d != nil {
		return w.directPutType(packed, target, disp, tcount, ttype)
	}
	// The cleanup mpiType attached to ttype frees tt once ttype is
	// garbage: ttype must outlive the MPI call that takes tt.
	defer runtime.KeepAlive(ttype)
	defer w.mu.Unlock()
	if err := h.PutType(w.origin(packed, target), len(packed), 0, target, off, tcount, tt); err != nil {
		return w.mpiErr("PutType", err)
	}
	return nil
}

// GetType is Get with derived datatypes (MPI_Get with a result and a
// target datatype): tcount instances of ttype at disp on target go into
// rcount instances of rtype in result, which may be read once GetType
// returns.
func GetType(w *Win, result []byte, rcount int, rtype *dtype.Type, target, disp, tcount int, ttype *dtype.Type) error {
	_, tt, lo, hi, err := w.typed("GetType", result, rcount, rtype, tcount, ttype, 0, false)
	if err != nil {
		return err
	}
	h, off, noop, err := w.typedRMA("GetType", target, disp, lo, hi, viaTwinFetch)
	if err != nil || noop {
		return err
	}
	n := int(int64(rcount) * rtype.Size())
	tmp := make([]byte, n)
	if w.d != nil {
		if err := w.directGetType(tmp, target, disp, tcount, ttype); err != nil {
			return errorf(ErrType, "GetType on rank %d: %v", w.rank, err)
		}
		_, _ = dtype.UnpackPrefix(tmp[:n], result, rcount, rtype)
		return nil
	}
	// The cleanup mpiType attached to ttype frees tt once ttype is
	// garbage: ttype must outlive the MPI call that takes tt.
	defer runtime.KeepAlive(ttype)
	defer w.mu.Unlock()
	if err := h.GetType(tmp, n, 0, target, off, tcount, tt); err != nil {
		return w.mpiErr("GetType", err)
	}
	_, _ = dtype.UnpackPrefix(tmp[:n], result, rcount, rtype)
	return nil
}

// AccumulateType is Accumulate with derived datatypes (MPI_Accumulate
// with an origin and a target datatype): the elements of ocount instances
// of otype are combined with op into those of tcount instances of ttype
// at disp on target, each element atomically. Both types must be made of
// one and the same predefined type (ErrType), and op must be defined on
// it (ErrOp). Local; the origin is packed.
func AccumulateType(w *Win, origin []byte, ocount int, otype *dtype.Type, target, disp, tcount int, ttype *dtype.Type, op atomics.Op) error {
	e, err := w.elemOf("AccumulateType", otype, ttype, op, false)
	if err != nil {
		return err
	}
	packed, tt, lo, hi, err := w.typed("AccumulateType", origin, ocount, otype, tcount, ttype, e, true)
	if err != nil {
		return err
	}
	h, off, noop, err := w.typedRMA("AccumulateType", target, disp, lo, hi, viaTwinAccum)
	if err != nil || noop {
		return err
	}
	if w.d != nil {
		return w.directAccType("AccumulateType", e, packed, nil, target, disp, tcount, ttype, op)
	}
	// The cleanup mpiType attached to ttype frees tt once ttype is
	// garbage: ttype must outlive the MPI call that takes tt.
	defer runtime.KeepAlive(ttype)
	defer w.mu.Unlock()
	n := len(packed) / int(dtype.Basic(e).Size())
	if err := h.AccumulateType(w.origin(spread(packed, n, e), target), n, e, target, off, tcount, tt, op); err != nil {
		return w.mpiErr("AccumulateType", err)
	}
	return nil
}

// GetAccumulateType is GetAccumulate with derived datatypes
// (MPI_Get_accumulate with origin, result and target datatypes): the
// target's elements before the update go into rcount instances of rtype
// in result, which may be read once it returns. The types are
// AccumulateType's; with NoOp the origin is not used.
func GetAccumulateType(w *Win, origin []byte, ocount int, otype *dtype.Type, result []byte, rcount int, rtype *dtype.Type, target, disp, tcount int, ttype *dtype.Type, op atomics.Op) error {
	e, err := w.elemOf("GetAccumulateType", rtype, ttype, op, true)
	if err != nil {
		return err
	}
	var packed []byte
	if op != atomics.NoOp {
		if _, err := w.elemOf("GetAccumulateType", otype, ttype, op, true); err != nil {
			return err
		}
		if packed, _, _, _, err = w.typed("GetAccumulateType", origin, ocount, otype, tcount, ttype, e, true); err != nil {
			return err
		}
	}
	_, tt, lo, hi, err := w.typed("GetAccumulateType", result, rcount, rtype, tcount, ttype, e, false)
	if err != nil {
		return err
	}
	h, off, noop, err := w.typedRMA("GetAccumulateType", target, disp, lo, hi, viaTwinFetch)
	if err != nil || noop {
		return err
	}
	nb := int(int64(rcount) * rtype.Size())
	tmp := make([]byte, nb)
	if w.d != nil {
		if err := w.directAccType("GetAccumulateType", e, packed, tmp, target, disp, tcount, ttype, op); err != nil {
			return err
		}
		_, _ = dtype.UnpackPrefix(tmp[:nb], result, rcount, rtype)
		return nil
	}
	// The cleanup mpiType attached to ttype frees tt once ttype is
	// garbage: ttype must outlive the MPI call that takes tt.
	defer runtime.KeepAlive(ttype)
	defer w.mu.Unlock()
	n := nb / int(dtype.Basic(e).Size())
	// The MPI reads and writes whole elements of e: gaps included.
	out := tmp
	if gapped(e) {
		out = make([]byte, n*e.Size())
	}
	in := spread(packed, n, e)
	if in == nil {
		in = out // NoOp: the origin is not read
	}
	if err := h.GetAccumulateType(in, out, n, e, target, off, tcount, tt, op); err != nil {
		return w.mpiErr("GetAccumulateType", err)
	}
	if gapped(e) {
		_, _ = dtype.Pack(out, n, dtype.Basic(e), tmp)
	}
	_, _ = dtype.UnpackPrefix(tmp[:nb], result, rcount, rtype)
	return nil
}
