//go:build !mpi

package win

import (
	"strings"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/internal/rmacheck"
	"github.com/shmrun/shmrun/internal/winc"
	"github.com/shmrun/shmrun/shm"
)

// AccumulateType is Accumulate with derived datatypes (MPI_Accumulate with
// an origin and a target datatype): the elements of ocount instances of
// otype from origin are combined with op into the elements of tcount
// instances of ttype at disp on target, each element atomically, as
// Accumulate does. Both types must be made of one and the same predefined
// type (the standard allows no other: ErrType), and op must be defined on
// it (ErrOp); bytes (dtype.Byte, MPI_BYTE) take Band, Bor, Bxor and
// Replace (NoOp too, fetching), on each byte. The other checks are
// PutType's. Local, completes eagerly.
//
// Never inlined: shmrun --check's frame walk reads the caller's line from
// its return address, which inside an inlined body names only the body.
//
//go:noinline
func AccumulateType(w *Win, origin []byte, ocount int, otype *dtype.Type, target, disp, tcount int, ttype *dtype.Type, op atomics.Op) error {
	return accumulateType(w, "AccumulateType", origin, ocount, otype, nil, 0, nil, target, disp, tcount, ttype, op)
}

// GetAccumulateType is GetAccumulate with derived datatypes
// (MPI_Get_accumulate with origin, result and target datatypes): the
// target's elements go into rcount instances of rtype in result and are
// combined with the origin's, element by element, atomically. With op
// NoOp the origin (buffer, count and type) is ignored. Local; as
// AccumulateType (never inlined, as it).
//
//go:noinline
func GetAccumulateType(w *Win, origin []byte, ocount int, otype *dtype.Type, result []byte, rcount int, rtype *dtype.Type,
	target, disp, tcount int, ttype *dtype.Type, op atomics.Op) error {
	if rtype == nil {
		return errorf(ErrType, "GetAccumulateType on rank %d: nil result type", w.Rank())
	}
	return accumulateType(w, "GetAccumulateType", origin, ocount, otype, result, rcount, rtype, target, disp, tcount, ttype, op)
}

func accumulateType(w *Win, call string, origin []byte, ocount int, otype *dtype.Type, result []byte, rcount int, rtype *dtype.Type,
	target, disp, tcount int, ttype *dtype.Type, op atomics.Op) error {
	fetch := rtype != nil
	lo, hi, err := accSpan(call, w, origin, ocount, otype, result, rcount, rtype, tcount, ttype, op)
	if err != nil {
		return err
	}
	e, ok := ttype.Elem()
	if !ok && onlyBytes(ttype) {
		// MPI's Byte class (MPI_BYTE, dtype.Byte): the bitwise ops,
		// Replace and NoOp, on unsigned bytes (MPI 4.1, 7.9.2 and 13.3.4).
		if op != atomics.Band && op != atomics.Bor && op != atomics.Bxor && op != atomics.Replace && op != atomics.NoOp {
			return errorf(ErrOp, "%s on rank %d: %v does not apply to bytes (MPI_BAND, MPI_BOR, MPI_BXOR, MPI_REPLACE and MPI_NO_OP do)", call, w.rank, op)
		}
		e, ok = atomics.Uint8, true
	}
	if !ok {
		return errorf(ErrType, "%s on rank %d: %v is not made of one predefined type (accumulates need one)", call, w.rank, ttype)
	}
	if err := atomics.Check(op, e, fetch); err != nil {
		return opError(call, w, target, err)
	}
	wh, run, err := w.accEnter(call, target, disp, lo, hi, int(ttype.Size())*tcount, op)
	if !run {
		return err
	}
	defer w.leave(&wh)
	a := typedAcc{w: w, call: call, wh: &wh, lo: lo, origin: origin, ocount: ocount, otype: otype, result: result, rcount: rcount, rtype: rtype,
		tcount: tcount, ttype: ttype, op: op, basic: dtype.Basic(e), n: int(ttype.Size() * int64(tcount) / dtype.Basic(e).Size())}
	if err := accTypedOf(e, &a); err != nil {
		return err
	}
	// The runs are recorded after the memory operation (atomics join
	// after it): shmrun --check.
	w.checkTyped(strings.TrimSuffix(call, "Type"), target, disp, tcount, ttype, rmacheck.Atomic, uint8(op), uint8(e))
	return nil
}

func init() {
	winc.AccumulateUnits = func(x any, call string, origin []byte, ocount int, otype *dtype.Type, result []byte, rcount int, rtype *dtype.Type,
		target, disp, tcount int, ttype *dtype.Type, unit int, op atomics.Op, combine func(dst, src []byte)) error {
		w, _ := x.(*Win)
		return accumulateUnits(w, call, origin, ocount, otype, result, rcount, rtype, target, disp, tcount, ttype, unit, op, combine)
	}
}

// accumulateUnits is winc.AccumulateUnits: accumulateType for units of
// unit bytes that only the caller's combine can combine.
func accumulateUnits(w *Win, call string, origin []byte, ocount int, otype *dtype.Type, result []byte, rcount int, rtype *dtype.Type,
	target, disp, tcount int, ttype *dtype.Type, unit int, op atomics.Op, combine func(dst, src []byte)) error {
	fetch := rtype != nil
	lo, hi, err := accSpan(call, w, origin, ocount, otype, result, rcount, rtype, tcount, ttype, op)
	if err != nil {
		return err
	}
	size := ttype.Size() * int64(tcount)
	if unit <= 0 || size%int64(unit) != 0 {
		return errorf(ErrType, "%s on rank %d: %v is not made of %d-byte elements", call, w.rank, ttype, unit)
	}
	wh, run, err := w.accEnter(call, target, disp, lo, hi, int(size), op)
	if !run {
		return err
	}
	defer w.leave(&wh)
	// As bytes: the origin's and the result's packed forms, the target's
	// runs; a unit is never split between runs (the type is made of whole
	// elements).
	a := typedAcc{w: w, call: call, wh: &wh, lo: lo, origin: origin, ocount: ocount, otype: otype, result: result, rcount: rcount, rtype: rtype,
		tcount: tcount, ttype: ttype, op: op, basic: dtype.Basic(atomics.Uint8), n: int(size)}
	var src []byte
	if op != atomics.NoOp {
		if src, err = elems[uint8](&a, origin, ocount, otype); err != nil {
			return err
		}
	}
	var res []byte
	if fetch {
		res = make([]byte, size)
	}
	each := func(cur []byte, i int) {
		if fetch {
			copy(res[i:i+unit], cur)
		}
		if op != atomics.NoOp {
			combine(cur, src[i:i+unit])
		}
	}
	if wh.priv {
		err = privateTyped(&a, func(cur []uint8) bool {
			for i := 0; i < len(cur); i += unit {
				each(cur[i:i+unit:i+unit], i)
			}
			return op != atomics.NoOp
		})
	} else {
		unitT := dtype.Basic(atomics.Uint8)
		if unit > 1 {
			if unitT, err = dtype.Contiguous(unit, dtype.Byte); err != nil {
				return typeError(call, w, err)
			}
		}
		for i, o := range elemOffsets(ttype, tcount, unitT, int(size)/unit, lo) {
			at := wh.off + o
			k, lerr := w.stripes.Lock(at)
			if lerr != nil {
				return opError(call, w, wh.target, lerr)
			}
			each(wh.amem[at:at+int64(unit):at+int64(unit)], i*unit)
			w.stripes.Unlock(k)
		}
	}
	if err != nil {
		return err
	}
	if fetch {
		if err := scatter(&a, res, result, rcount, rtype); err != nil {
			return err
		}
	}
	w.checkTyped(strings.TrimSuffix(call, "Type"), target, disp, tcount, ttype, rmacheck.Atomic, uint8(op), 0)
	return nil
}

// accSpan checks an accumulate's origin (unless a fetching NoOp ignores
// it) and result against its target (typedRange, fitsResult), and a
// fetching one's origin and result against each other (aliased), and
// returns the target's span.
func accSpan(call string, w *Win, origin []byte, ocount int, otype *dtype.Type, result []byte, rcount int, rtype *dtype.Type,
	tcount int, ttype *dtype.Type, op atomics.Op) (lo, hi int64, err error) {
	fetch := rtype != nil
	if fetch {
		lo, hi, err = typedRange(call, w, result, rcount, rtype, tcount, ttype)
		if err == nil {
			err = fitsResult(call, w, result, rcount, rtype)
		}
	}
	if err == nil && (!fetch || op != atomics.NoOp) {
		lo, hi, err = typedRange(call, w, origin, ocount, otype, tcount, ttype)
	}
	if e, _ := ttype.Elem(); err == nil && fetch && op != atomics.NoOp && ocount > 0 && otype.Size()*int64(ocount) > int64(e.Size()) {
		// Origin and result data of one run each may be compared as
		// bytes (of other shapes they may interleave, as MPI allows);
		// one element may overlap, as GetAccumulate's.
		oo, on, ook := otype.Contig(ocount)
		ro, rn, rok := rtype.Contig(rcount)
		if ook && rok {
			err = aliased(call, w, origin[oo:oo+on], result[ro:ro+rn])
		}
	}
	return lo, hi, err
}

// accEnter records an accumulate of n bytes (shmrun --stats), tells the
// checker its target's atomics are released, and reaches [lo, hi) past
// disp on target (reachTyped: run false when there is nothing to do).
func (w *Win) accEnter(call string, target, disp int, lo, hi int64, n int, op atomics.Op) (where, bool, error) {
	if w.obs != nil {
		w.obs.RMA(strings.TrimSuffix(call, "Type"), target, n)
	}
	w.releaseTyped(target, disp, lo, hi, op)
	return w.reachTyped(call, target, disp, lo, hi)
}

// onlyBytes reports whether t's data are bytes alone (dtype.Byte, or a
// type made of it).
func onlyBytes(t *dtype.Type) bool {
	s, err := t.Signature()
	return err == nil && len(s) == 1 && s[0].IsByte
}

// accTypedOf is accTyped for elements of type e.
func accTypedOf(e atomics.Type, a *typedAcc) error {
	switch e {
	case atomics.Int8:
		return accTyped[int8](a)
	case atomics.Int16:
		return accTyped[int16](a)
	case atomics.Int32:
		return accTyped[int32](a)
	case atomics.Int64:
		return accTyped[int64](a)
	case atomics.Uint8:
		return accTyped[uint8](a)
	case atomics.Uint16:
		return accTyped[uint16](a)
	case atomics.Uint32:
		return accTyped[uint32](a)
	case atomics.Uint64:
		return accTyped[uint64](a)
	case atomics.Float32:
		return accTyped[float32](a)
	case atomics.Float64:
		return accTyped[float64](a)
	case atomics.Complex64:
		return accTyped[complex64](a)
	case atomics.Complex128:
		return accTyped[complex128](a)
	case atomics.FloatIntT:
		return accTyped[atomics.FloatInt](a)
	case atomics.DoubleIntT:
		return accTyped[atomics.DoubleInt](a)
	case atomics.LongIntT:
		return accTyped[atomics.LongInt](a)
	case atomics.TwoIntT:
		return accTyped[atomics.TwoInt](a)
	case atomics.ShortIntT:
		return accTyped[atomics.ShortInt](a)
	}
	return errorf(ErrType, "%s on rank %d: %v", a.call, a.w.rank, e)
}

// typedAcc is one AccumulateType or GetAccumulateType call, checked.
type typedAcc struct {
	w      *Win
	call   string
	wh     *where
	lo     int64 // the target span's first byte, relative to disp
	origin []byte
	ocount int
	otype  *dtype.Type
	result []byte
	rcount int
	rtype  *dtype.Type
	tcount int
	ttype  *dtype.Type
	op     atomics.Op
	basic  *dtype.Type // the predefined type of every element
	n      int         // elements
}

// elems returns the elements of the origin as a []T (through Pack and
// Unpack, which handle every layout, the pair types' padding included).
func elems[T atomics.Elem](a *typedAcc, buf []byte, count int, t *dtype.Type) ([]T, error) {
	out := make([]T, a.n)
	if a.n == 0 || t == nil {
		return out, nil
	}
	packed := make([]byte, t.Size()*int64(count))
	if _, err := dtype.Pack(buf, count, t, packed); err != nil {
		return nil, typeError(a.call, a.w, err)
	}
	if _, err := dtype.Unpack(packed, raw.Bytes(out), a.n, a.basic); err != nil {
		return nil, typeError(a.call, a.w, err)
	}
	return out, nil
}

// scatter writes vs into count instances of t in buf.
func scatter[T atomics.Elem](a *typedAcc, vs []T, buf []byte, count int, t *dtype.Type) error {
	if a.n == 0 {
		return nil
	}
	packed := make([]byte, a.basic.Size()*int64(a.n))
	if _, err := dtype.Pack(raw.Bytes(vs), a.n, a.basic, packed); err != nil {
		return typeError(a.call, a.w, err)
	}
	if _, err := dtype.Unpack(packed, buf, count, t); err != nil {
		return typeError(a.call, a.w, err)
	}
	return nil
}

// targetElems returns the offset (from the target span's start) of each
// target element, in type-map order.
func targetElems(a *typedAcc) []int64 {
	return elemOffsets(a.ttype, a.tcount, a.basic, a.n, a.lo)
}

func accTyped[T atomics.Elem](a *typedAcc) error {
	var src []T
	var err error
	if a.op != atomics.NoOp {
		if src, err = elems[T](a, a.origin, a.ocount, a.otype); err != nil {
			return err
		}
	}
	fetch := a.rtype != nil
	var res []T
	if fetch {
		res = make([]T, a.n)
	}
	wh, w := a.wh, a.w
	if wh.priv {
		err = privateTyped(a, func(cur []T) bool {
			copy(res, cur)
			combineLocal(src, cur, a.op)
			return a.op != atomics.NoOp
		})
	} else {
		// Mapped memory: each element by the kernels, atomically; runs of
		// adjacent elements in one call.
		offs := targetElems(a)
		size := int64(atomics.SizeOf[T]())
		for i := 0; i < len(offs) && err == nil; {
			j := i + 1
			for j < len(offs) && offs[j] == offs[j-1]+size {
				j++
			}
			off := wh.off + offs[i]
			var s []T
			if src != nil {
				s = src[i:j]
			}
			if fetch {
				err = atomics.GetAccumulate(wh.amem, off, s, res[i:j], a.op, w.stripes)
			} else {
				err = atomics.Accumulate(wh.amem, off, s, a.op, w.stripes)
			}
			i = j
		}
		if err != nil {
			return opError(a.call, w, wh.target, err)
		}
	}
	if err != nil {
		return err
	}
	if fetch {
		return scatter(a, res, a.result, a.rcount, a.rtype)
	}
	return nil
}

// privateTyped runs f on the target's elements in private memory under
// the target's stripe: its runs read into cur, f, and written back unless
// f says no. Only the runs move: the bytes between them are not the call's.
func privateTyped[T atomics.Elem](a *typedAcc, f func(cur []T) bool) error {
	w, wh := a.w, a.wh
	k, err := w.stripes.Lock(privateKey(wh.target))
	if err != nil {
		return opError(a.call, w, wh.target, err)
	}
	defer w.stripes.Unlock(k)
	it, _ := a.ttype.Iter(a.tcount)
	var pieces []shm.Piece
	var total int64
	for {
		off, n, ok := it.Next()
		if !ok {
			break
		}
		pieces = appendPiece(pieces, shm.Piece{Addr: wh.addr + uint64(off-a.lo), Len: int(n)})
		total += n
	}
	packed := make([]byte, total)
	move := func(write bool) error {
		if wh.data == nil {
			if write {
				return shm.WriteProcessPieces(wh.pid, pieces, packed)
			}
			return shm.ReadProcessPieces(wh.pid, packed, pieces)
		}
		at := 0 // the caller's own memory: wh.data is the span
		for _, p := range pieces {
			o := int64(p.Addr - wh.addr)
			if write {
				copy(wh.data[o:o+int64(p.Len)], packed[at:])
			} else {
				copy(packed[at:], wh.data[o:o+int64(p.Len)])
			}
			at += p.Len
		}
		return nil
	}
	if err := move(false); err != nil {
		return w.remoteErr(a.call, wh, err)
	}
	cur := make([]T, a.n)
	if _, err := dtype.Unpack(packed, raw.Bytes(cur), a.n, a.basic); err != nil {
		return typeError(a.call, w, err)
	}
	if !f(cur) {
		return nil
	}
	if _, err := dtype.Pack(raw.Bytes(cur), a.n, a.basic, packed); err != nil {
		return typeError(a.call, w, err)
	}
	return w.remoteErr(a.call, wh, move(true))
}
