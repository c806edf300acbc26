//go:build !mpi

package main

/*
#include "mpi.h"

// The predefined ops on the predefined types the runtime has no element
// type for (long double and its kin, the Fortran pairs of reals): C
// functions the Go side runs as it runs a program's user functions
// (inout = in op inout, as MPI says).
#define SHMRUN_OPAQUE_OP(NAME, T, EXPR)                                                 \
	static void shmrun_op_##NAME(void *in, void *inout, int *len, MPI_Datatype *dt) \
	{                                                                              \
		(void)dt;                                                              \
		const T *a = in;                                                       \
		T *b = inout;                                                          \
		for (int i = 0; i < *len; i++)                                         \
			b[i] = (EXPR);                                                 \
	}
SHMRUN_OPAQUE_OP(ld_sum, long double, a[i] + b[i])
SHMRUN_OPAQUE_OP(ld_prod, long double, a[i] * b[i])
SHMRUN_OPAQUE_OP(ld_min, long double, a[i] < b[i] ? a[i] : b[i])
SHMRUN_OPAQUE_OP(ld_max, long double, a[i] > b[i] ? a[i] : b[i])
SHMRUN_OPAQUE_OP(ldc_sum, long double _Complex, a[i] + b[i])
SHMRUN_OPAQUE_OP(ldc_prod, long double _Complex, a[i] * b[i])

// MINLOC and MAXLOC: the lower index on a tie (MPI's definition).
#define SHMRUN_LOC_OPS(NAME, VT, IT)                                                                  \
	typedef struct {                                                                             \
		VT v;                                                                                \
		IT i;                                                                                \
	} shmrun_pair_##NAME;                                                                        \
	SHMRUN_OPAQUE_OP(NAME##_minloc, shmrun_pair_##NAME,                                          \
			 a[i].v < b[i].v || (a[i].v == b[i].v && a[i].i < b[i].i) ? a[i] : b[i])     \
	SHMRUN_OPAQUE_OP(NAME##_maxloc, shmrun_pair_##NAME,                                          \
			 a[i].v > b[i].v || (a[i].v == b[i].v && a[i].i < b[i].i) ? a[i] : b[i])
SHMRUN_LOC_OPS(ldi, long double, int)
SHMRUN_LOC_OPS(r2, float, float)
SHMRUN_LOC_OPS(d2, double, double)

// shmrun_opaque_op is the function of predefined op on opaque predefined
// type dt (handles), or 0 when the op does not apply to it.
static uintptr_t shmrun_opaque_op(uintptr_t dt, uintptr_t op) {
	MPI_Op o = (MPI_Op)op;
	switch (dt) {
	case (uintptr_t)MPI_LONG_DOUBLE:
		return o == MPI_SUM ? (uintptr_t)shmrun_op_ld_sum : o == MPI_PROD ? (uintptr_t)shmrun_op_ld_prod
		     : o == MPI_MIN ? (uintptr_t)shmrun_op_ld_min : o == MPI_MAX ? (uintptr_t)shmrun_op_ld_max : 0;
	case (uintptr_t)MPI_C_LONG_DOUBLE_COMPLEX:
	case (uintptr_t)MPI_CXX_LONG_DOUBLE_COMPLEX:
		return o == MPI_SUM ? (uintptr_t)shmrun_op_ldc_sum : o == MPI_PROD ? (uintptr_t)shmrun_op_ldc_prod : 0;
	case (uintptr_t)MPI_LONG_DOUBLE_INT:
		return o == MPI_MINLOC ? (uintptr_t)shmrun_op_ldi_minloc : o == MPI_MAXLOC ? (uintptr_t)shmrun_op_ldi_maxloc : 0;
	case (uintptr_t)MPI_2REAL:
		return o == MPI_MINLOC ? (uintptr_t)shmrun_op_r2_minloc : o == MPI_MAXLOC ? (uintptr_t)shmrun_op_r2_maxloc : 0;
	case (uintptr_t)MPI_2DOUBLE_PRECISION:
		return o == MPI_MINLOC ? (uintptr_t)shmrun_op_d2_minloc : o == MPI_MAXLOC ? (uintptr_t)shmrun_op_d2_maxloc : 0;
	}
	return 0;
}
*/
import "C"

import (
	"cmp"
	"fmt"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/winc"
)

// A userOp is an op made by MPI_Op_create, or by MPI_Op_create_c (large:
// its function is an MPI_User_function_c).
type userOp struct {
	fn      C.uintptr_t
	commute bool
	large   bool
}

// shmOpCreate is MPI_Op_create and, large, MPI_Op_create_c.
//
//export shmOpCreate
func shmOpCreate(fn C.uintptr_t, commute, large C.int, out *C.uintptr_t) C.int {
	if fn == 0 {
		call := "MPI_Op_create"
		if large != 0 {
			call = "MPI_Op_create_c"
		}
		return raiseSelf(call, fmt.Errorf("a NULL function: %w", comm.ErrOp))
	}
	*out = C.uintptr_t(add(tab.ops, &opH{user: &userOp{fn: fn, commute: commute != 0, large: large != 0}, name: "a user op"}))
	return C.MPI_SUCCESS
}

//export shmOpFree
func shmOpFree(h *C.uintptr_t) C.int {
	x, err := opOf(uintptr(*h))
	if err == nil && x.user == nil {
		err = fmt.Errorf("%s is predefined: %w", x.name, comm.ErrOp)
	}
	if err != nil {
		return raiseSelf("MPI_Op_free", err)
	}
	if !dropPinned(tab.ops, uintptr(*h), &x.dead) {
		return raiseSelf("MPI_Op_free", fmt.Errorf("a freed op (handle %#x): %w", uintptr(*h), comm.ErrOp))
	}
	*h = hOpNull
	return C.MPI_SUCCESS
}

//export shmOpCommutative
func shmOpCommutative(h C.uintptr_t, flag *C.int) C.int {
	x, err := opOf(uintptr(h))
	if err != nil {
		return raiseSelf("MPI_Op_commutative", err)
	}
	*flag = cbool(x.user == nil || x.user.commute)
	return C.MPI_SUCCESS
}

// reduction kinds of shmReduce
const (
	redReduce = iota
	redAllreduce
	redScatterBlock
	redScan
	redExscan
)

var redNames = [...]string{"MPI_Reduce", "MPI_Allreduce", "MPI_Reduce_scatter_block", "MPI_Scan", "MPI_Exscan"}

// redKinds are their collective kinds (format.Coll*).
var redKinds = [...]uint8{format.CollReduce, format.CollAllreduce, format.CollReduceScatterBlock, format.CollScan, format.CollExscan}

// reducer runs one reduction kind for element type T.
type reducer func(kind int, c *comm.Comm, s, r []byte, n int, t *dtype.Type, op *opH, dt C.uintptr_t, root int, inPlace bool) error

func reducerOf[T atomics.Elem]() reducer {
	basic := dtype.Basic(atomics.TypeOf[T]())
	return func(kind int, c *comm.Comm, s, r []byte, n int, t *dtype.Type, op *opH, dt C.uintptr_t, root int, inPlace bool) error {
		if op.user != nil {
			u, err := comm.OpCreate(func(in, inout []T) {
				callUserOp(op.user, in, inout, len(in), dt, 0)
			}, op.user.commute)
			if err != nil {
				return err
			}
			return reduceAs[T](kind, c, s, r, n, t, u, root, inPlace)
		}
		if t == basic {
			// A predefined type: the generic call on views of the
			// buffers, no packing (the typed forms copy).
			// Reduce_scatter_block's send holds a block a rank, not n
			// elements, and so does its receive buffer in place.
			// (Counts, not the bytes over the extent: a pair type's
			// span is short of its last padding, and a view that
			// short would leave the last element out; such a view
			// is refused, and the typed path takes the call.)
			sn := n
			if kind == redScatterBlock {
				sn = n * c.Size()
			}
			rn := n
			if inPlace {
				rn = sn
			}
			sv, sok := viewOf[T](s, sn)
			rv, rok := viewOf[T](r, rn)
			if (sok || s == nil) && (rok || r == nil) {
				return reduceDirect(kind, c, sv, rv, op.op, root, inPlace)
			}
		}
		return reduceAs[T](kind, c, s, r, n, t, op.op, root, inPlace)
	}
}

// reduceDirect is reduceAs on element slices (predefined types, aligned;
// and reduceBytes's buffers).
func reduceDirect[T atomics.Elem, O comm.Operation[T]](kind int, c *comm.Comm, s, r []T, op O, root int, inPlace bool) error {
	switch kind {
	case redReduce:
		if inPlace {
			return comm.ReduceInPlace(c, r, op, root)
		}
		return comm.Reduce(c, s, r, op, root)
	case redAllreduce:
		if inPlace {
			return comm.AllreduceInPlace(c, r, op)
		}
		return comm.Allreduce(c, s, r, op)
	case redScatterBlock:
		if inPlace {
			return comm.ReduceScatterBlockInPlace(c, r, op)
		}
		return comm.ReduceScatterBlock(c, s, r, op)
	case redScan:
		if inPlace {
			return comm.ScanInPlace(c, r, op)
		}
		return comm.Scan(c, s, r, op)
	default:
		if inPlace {
			return comm.ExscanInPlace(c, r, op)
		}
		return comm.Exscan(c, s, r, op)
	}
}

func reduceAs[T atomics.Elem, O comm.Operation[T]](kind int, c *comm.Comm, s, r []byte, n int, t *dtype.Type, op O, root int, inPlace bool) error {
	switch kind {
	case redReduce:
		if inPlace {
			return comm.ReduceTypeInPlace[T](c, r, n, t, op, root)
		}
		return comm.ReduceType[T](c, s, r, n, t, op, root)
	case redAllreduce:
		if inPlace {
			return comm.AllreduceTypeInPlace[T](c, r, n, t, op)
		}
		return comm.AllreduceType[T](c, s, r, n, t, op)
	case redScatterBlock:
		if inPlace {
			return comm.ReduceScatterBlockTypeInPlace[T](c, r, n, t, op)
		}
		return comm.ReduceScatterBlockType[T](c, s, r, n, t, op)
	case redScan:
		if inPlace {
			return comm.ScanTypeInPlace[T](c, r, n, t, op)
		}
		return comm.ScanType[T](c, s, r, n, t, op)
	default:
		if inPlace {
			return comm.ExscanTypeInPlace[T](c, r, n, t, op)
		}
		return comm.ExscanType[T](c, s, r, n, t, op)
	}
}

// reducers holds each element type's reducer, indexed by the type (a
// lookup with no map hash on every reduction).
var reducers = func() (r [256]reducer) {
	for e, f := range reducerMap {
		r[e] = f
	}
	return r
}()

var reducerMap = map[atomics.Type]reducer{
	atomics.Int8: reducerOf[int8](), atomics.Int16: reducerOf[int16](), atomics.Int32: reducerOf[int32](), atomics.Int64: reducerOf[int64](),
	atomics.Uint8: reducerOf[uint8](), atomics.Uint16: reducerOf[uint16](), atomics.Uint32: reducerOf[uint32](), atomics.Uint64: reducerOf[uint64](),
	atomics.Float32: reducerOf[float32](), atomics.Float64: reducerOf[float64](),
	atomics.Complex64: reducerOf[complex64](), atomics.Complex128: reducerOf[complex128](),
	atomics.FloatIntT: reducerOf[atomics.FloatInt](), atomics.DoubleIntT: reducerOf[atomics.DoubleInt](),
	atomics.LongIntT: reducerOf[atomics.LongInt](), atomics.TwoIntT: reducerOf[atomics.TwoInt](),
	atomics.ShortIntT: reducerOf[atomics.ShortInt](),
}

// sharesData reports whether the data of sn instances of st in s and of
// rn instances of rt in r (spans from the buffers' addresses, as buf
// makes them) share a byte. Only types whose instances are dense are
// compared: the data of types with holes may interleave, legally.
func sharesData(s []byte, sn int64, st *dtype.Type, r []byte, rn int64, rt *dtype.Type) bool {
	so, sl, ok := st.Contig(int(sn))
	ro, rl, ok2 := rt.Contig(int(rn))
	if !ok || !ok2 || so < 0 || ro < 0 || so+sl > int64(len(s)) || ro+rl > int64(len(r)) {
		return false
	}
	return overlaps(s[so:so+sl], r[ro:ro+rl])
}

// overlapping is the error of a collective whose send and receive
// buffers share bytes without being one buffer.
func overlapping(sp, rp *C.char) error {
	return fmt.Errorf("sendbuf (%p) and recvbuf (%p) overlap: they must not (MPI_IN_PLACE is the in-place form): %w", sp, rp, comm.ErrBuffer)
}

// aliased is the error of a collective whose send and receive buffers
// are one buffer at p: MPI forbids it (MPI_IN_PLACE is how a program says
// the data are already where they go). Only that simple case is refused,
// not buffers that overlap otherwise.
func aliased(p *C.char) error {
	return fmt.Errorf("sendbuf and recvbuf are one buffer (%p): they must not be aliased (MPI_IN_PLACE is the in-place form): %w", p, comm.ErrBuffer)
}

// collArgs resolves a collective's communicator.
func collArgs(call string, h C.uintptr_t) (*commH, C.int) {
	return commOf(call, uintptr(h))
}

// reduction is how the reducing calls (MPI_Reduce and its kin,
// MPI_Reduce_local) run op on datatype t (handles dt and oph): MPI_BYTE
// as unsigned bytes under the bitwise ops (MPI's "Byte" class), a
// predefined op on an opaque predefined type (long double and its kin)
// as its C function. bytes says the op is a C function to call on whole
// instances (a program's on any type but a predefined one of an element;
// long double's), else e is the element type t is made of, which
// reducers[e] reduces. An op that does not apply to the type (an
// arithmetic or bitwise op on a logical type included) is ErrOp; a
// type not made of one predefined type a reduction takes, ErrType.
func reduction(t *typeH, op *opH, dt, oph C.uintptr_t) (_ *typeH, _ *opH, e atomics.Type, bytes bool, _ error) {
	if err := logicalOp(t, op, false); err != nil {
		return nil, nil, 0, false, err
	}
	e, ok := t.t.Elem()
	switch {
	case uintptr(dt) == hByte && op.user == nil:
		if op.op != atomics.Band && op.op != atomics.Bor && op.op != atomics.Bxor {
			return nil, nil, 0, false, fmt.Errorf("%s does not apply to MPI_BYTE (MPI_BAND, MPI_BOR and MPI_BXOR do): %w", op.name, comm.ErrOp)
		}
		e, ok, t = atomics.Uint8, true, &typeH{t: dtype.Basic(atomics.Uint8), name: t.name, pre: true}
	case t.pre && !ok && op.user == nil:
		fn := C.shmrun_opaque_op(dt, oph)
		if fn == 0 {
			return nil, nil, 0, false, fmt.Errorf("%s does not apply to %s: %w", op.name, t.name, comm.ErrOp)
		}
		op = &opH{name: op.name, user: &userOp{fn: fn, commute: true}}
	}
	bytes = op.user != nil && (!t.pre || !ok)
	if !bytes && (!ok || reducers[e] == nil) {
		return nil, nil, 0, false, fmt.Errorf("%s is not made of one predefined type a reduction takes: %w", t.t, comm.ErrType)
	}
	return t, op, e, bytes, nil
}

// opaqueUnits is how the accumulates combine elements of leaf, an opaque
// predefined type, under predefined op (handle oph): its element's bytes, and a
// function that combines one target element with one origin element
// (nil for NoOp, which only the fetching calls take; Replace a copy; the
// others the C function the reductions call, or ErrOp where none
// applies).
func opaqueUnits(leaf *typeH, op *opH, oph C.uintptr_t, fetch bool) (int, func(dst, src []byte), error) {
	unit := int(leaf.t.Size())
	switch op.op {
	case atomics.NoOp:
		if !fetch {
			return 0, nil, fmt.Errorf("%s is for the fetching calls (MPI_Get_accumulate, MPI_Fetch_and_op): %w", op.name, comm.ErrOp)
		}
		return unit, nil, nil
	case atomics.Replace:
		return unit, func(dst, src []byte) { copy(dst, src) }, nil
	}
	h := opaqueHandles[leaf.t]
	fn := C.shmrun_opaque_op(C.uintptr_t(h), oph)
	if fn == 0 {
		return 0, nil, fmt.Errorf("%s does not apply to %s: %w", op.name, leaf.name, comm.ErrOp)
	}
	return unit, unitCombine(fn, C.uintptr_t(h), int(leaf.t.Extent())), nil
}

//export shmReduce
func shmReduce(sp, rp *C.char, count C.int64_t, dt, oph C.uintptr_t, root C.int, h C.uintptr_t, kind C.int, inPlace C.int) C.int {
	call := redNames[kind]
	x, code := collArgs(call, h)
	if code != 0 {
		return code
	}
	refuse := func(err error) error { return winc.RefuseColl(x.c, call, redKinds[kind], err) }
	err := func() error {
		t, err := typeOf(uintptr(dt))
		if err != nil {
			return refuse(err)
		}
		op, err := opOf(uintptr(oph))
		if err != nil {
			return refuse(err)
		}
		t, op, e, bytes, err := reduction(t, op, dt, oph)
		if err != nil {
			return refuse(err)
		}
		red := reducers[e]
		// Reduce_scatter_block's send (or in-place) buffer holds a block
		// per rank; its result, and every other reduction's data, n.
		n := int64(count)
		sn := n
		if kind == redScatterBlock {
			sn = n * int64(x.c.Size())
		}
		var s, r []byte
		var ts, tr *dtype.Type // the types buf takes the buffers with
		if inPlace == 0 {
			if s, ts, err = buf(sp, sn, t.t); err != nil {
				return refuse(err)
			}
		}
		receives := kind != redReduce || int(root) == x.c.Rank()
		if inPlace != 0 && !receives && root >= 0 && int(root) < x.c.Size() {
			// MPI_IN_PLACE is the root's alone: a non-root's send buffer
			// is its data.
			return refuse(fmt.Errorf("MPI_IN_PLACE on rank %d, which is not the root (%d): %w", x.c.Rank(), root, comm.ErrBuffer))
		}
		if inPlace != 0 {
			if r, tr, err = buf(rp, sn, t.t); err != nil {
				return refuse(err)
			}
		} else if receives {
			if r, tr, err = buf(rp, n, t.t); err != nil {
				return refuse(err)
			}
		}
		if inPlace == 0 && len(s) > 0 && len(r) > 0 && sp == rp {
			return refuse(aliased(sp))
		}
		tt, err := sameMove(t.t, ts, tr)
		if err != nil {
			return refuse(err)
		}
		if inPlace == 0 && receives && sharesData(s, sn, tt, r, n, tt) {
			return refuse(overlapping(sp, rp))
		}
		if bytes {
			return reduceBytes(int(kind), x.c, s, r, int(n), tt, t.t.TrueLB(), op.user, dt, int(root), inPlace != 0)
		}
		return red(int(kind), x.c, s, r, int(n), tt, op, dt, int(root), inPlace != 0)
	}()
	if err != nil {
		return x.raise(call, err)
	}
	return C.MPI_SUCCESS
}

// sameMove is the one type a reduction takes both its buffers with: t,
// or the type buf moved them by (ts for the send buffer, tr for the
// receive buffer; nil where there is none), which must be the same move
// for both: instances of a negative extent, whose data start further
// back the more of them there are, in buffers of different counts are
// refused.
func sameMove(t, ts, tr *dtype.Type) (*dtype.Type, error) {
	switch {
	case ts == nil || ts == t:
		if tr == nil || ts == nil {
			return cmp.Or(tr, t), nil
		}
		if tr == t {
			return t, nil
		}
	case tr == nil || tr.LB() == ts.LB():
		return ts, nil
	}
	return nil, fmt.Errorf("%v's data reach before the send and receive buffers by different amounts (a negative extent): %w", t, errUnsupported)
}

//export shmBarrier
func shmBarrier(h C.uintptr_t) C.int {
	x, code := collArgs("MPI_Barrier", h)
	if code != 0 {
		return code
	}
	if err := x.c.Barrier(); err != nil {
		return x.raise("MPI_Barrier", err)
	}
	installCommDesc(x) // the next MPI_Barrier runs in C
	return C.MPI_SUCCESS
}

//export shmIbarrier
func shmIbarrier(h C.uintptr_t, req *C.uintptr_t) C.int {
	x, code := collArgs("MPI_Ibarrier", h)
	if code != 0 {
		return code
	}
	r, err := x.c.Ibarrier()
	if err != nil {
		return x.raise("MPI_Ibarrier", err)
	}
	*req = C.uintptr_t(newReq(reqH{r: r, c: x, nbc: true}))
	return C.MPI_SUCCESS
}

//export shmBcast
func shmBcast(p *C.char, count C.int64_t, dt C.uintptr_t, root C.int, h C.uintptr_t) C.int {
	const call = "MPI_Bcast"
	x, code := collArgs(call, h)
	if code != 0 {
		return code
	}
	err := func() error {
		t, err := typeOf(uintptr(dt))
		if err != nil {
			return winc.RefuseColl(x.c, call, format.CollBcast, err)
		}
		b, tt, err := buf(p, int64(count), t.t)
		if err != nil {
			return winc.RefuseColl(x.c, call, format.CollBcast, err)
		}
		return comm.BcastType(x.c, b, int(count), tt, int(root))
	}()
	if err != nil {
		return x.raise(call, err)
	}
	return C.MPI_SUCCESS
}

// Data-movement collective kinds of shmMove.
const (
	mvGather = iota
	mvScatter
	mvAllgather
	mvAlltoall
)

var mvNames = [...]string{"MPI_Gather", "MPI_Scatter", "MPI_Allgather", "MPI_Alltoall"}

// mvKinds are their collective kinds (format.Coll*).
var mvKinds = [...]uint8{format.CollGather, format.CollScatter, format.CollAllgather, format.CollAlltoall}

// shmMove is Gather, Scatter, Allgather and Alltoall (inPlace: the
// MPI_IN_PLACE form; for Scatter it is the receive buffer that is
// MPI_IN_PLACE).
//
//export shmMove
func shmMove(sp *C.char, scount C.int64_t, sdt C.uintptr_t, rp *C.char, rcount C.int64_t, rdt C.uintptr_t,
	root C.int, h C.uintptr_t, kind, inPlace C.int) C.int {
	call := mvNames[kind]
	x, code := collArgs(call, h)
	if code != 0 {
		return code
	}
	n := int64(x.c.Size())
	me := x.c.Rank()
	isRoot := me == int(root)
	refuse := func(err error) error { return winc.RefuseColl(x.c, call, mvKinds[kind], err) }
	err := func() error {
		if inPlace != 0 && (kind == mvGather || kind == mvScatter) && !isRoot && root >= 0 && int64(root) < n {
			// The buffer MPI_IN_PLACE stands for is the root's alone; a
			// non-root's is its data, which the call would otherwise take
			// from (or put at) MPI_IN_PLACE's address.
			return refuse(fmt.Errorf("MPI_IN_PLACE on rank %d, which is not the root (%d): %w", me, root, comm.ErrBuffer))
		}
		// What each side's buffer holds: n blocks at the side that has
		// every rank's data, one block elsewhere.
		sBlocks, rBlocks := int64(1), int64(1)
		sUsed, rUsed := true, true
		switch kind {
		case mvGather:
			rBlocks, rUsed = n, isRoot
		case mvScatter:
			sBlocks, sUsed = n, isRoot
		case mvAllgather:
			rBlocks = n
		case mvAlltoall:
			sBlocks, rBlocks = n, n
		}
		var st, rt *dtype.Type
		var s, r []byte
		if sUsed && !(inPlace != 0 && kind != mvScatter) {
			t, err := typeOf(uintptr(sdt))
			if err != nil {
				return refuse(err)
			}
			if s, st, err = buf(sp, sBlocks*int64(scount), t.t); err != nil {
				return refuse(err)
			}
		}
		if rUsed && !(inPlace != 0 && kind == mvScatter) {
			t, err := typeOf(uintptr(rdt))
			if err != nil {
				return refuse(err)
			}
			if r, rt, err = buf(rp, rBlocks*int64(rcount), t.t); err != nil {
				return refuse(err)
			}
		}
		if len(s) > 0 && len(r) > 0 && sp == rp {
			return refuse(aliased(sp))
		}
		if st != nil && rt != nil && sharesData(s, sBlocks*int64(scount), st, r, rBlocks*int64(rcount), rt) {
			return refuse(overlapping(sp, rp))
		}
		if inPlace != 0 {
			switch kind {
			case mvGather:
				if isRoot {
					return comm.GatherTypeInPlace(x.c, r, int(rcount), rt, int(root))
				}
			case mvScatter:
				if isRoot {
					return comm.ScatterTypeInPlace(x.c, s, int(scount), st, int(root))
				}
			case mvAllgather:
				return comm.AllgatherTypeInPlace(x.c, r, int(rcount), rt)
			case mvAlltoall:
				return comm.AlltoallTypeInPlace(x.c, r, int(rcount), rt)
			}
		}
		if st == nil {
			st = dtype.Byte
		}
		if rt == nil {
			rt = dtype.Byte
		}
		switch kind {
		case mvGather:
			if !isRoot {
				rcount = 0
			}
			return comm.GatherType(x.c, s, int(scount), st, r, int(rcount), rt, int(root))
		case mvScatter:
			if !isRoot {
				scount = 0
			}
			return comm.ScatterType(x.c, s, int(scount), st, r, int(rcount), rt, int(root))
		case mvAllgather:
			return comm.AllgatherType(x.c, s, int(scount), st, r, int(rcount), rt)
		default:
			return comm.AlltoallType(x.c, s, int(scount), st, r, int(rcount), rt)
		}
	}()
	if err != nil {
		return x.raise(call, err)
	}
	return C.MPI_SUCCESS
}
