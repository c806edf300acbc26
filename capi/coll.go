package main

/*
#include "mpi.h"

// Calling a program's reduction function (MPI_User_function).
static void shmrun_call_user_op(uintptr_t fn, void *in, void *inout, int len, uintptr_t dt) {
	MPI_Datatype t = (MPI_Datatype)dt;
	((MPI_User_function *)fn)(in, inout, &len, &t);
}

// The predefined ops on MPI_LONG_DOUBLE, which the runtime has no element
// type for: C functions the Go side runs as user functions over 16-byte
// units, one long double each (inout = in op inout, as MPI says).
#define SHMRUN_LD_OP(NAME, EXPR)                                                        \
	static void shmrun_ld_##NAME(void *in, void *inout, int *len, MPI_Datatype *dt) \
	{                                                                              \
		(void)dt;                                                              \
		const long double *a = in;                                             \
		long double *b = inout;                                                \
		for (int i = 0; i < *len; i++)                                         \
			b[i] = (EXPR);                                                 \
	}
SHMRUN_LD_OP(sum, a[i] + b[i])
SHMRUN_LD_OP(prod, a[i] * b[i])
SHMRUN_LD_OP(min, a[i] < b[i] ? a[i] : b[i])
SHMRUN_LD_OP(max, a[i] > b[i] ? a[i] : b[i])

// shmrun_ld_op is the function of predefined op (a handle), or 0.
static uintptr_t shmrun_ld_op(uintptr_t op) {
	if (op == (uintptr_t)MPI_SUM) return (uintptr_t)shmrun_ld_sum;
	if (op == (uintptr_t)MPI_PROD) return (uintptr_t)shmrun_ld_prod;
	if (op == (uintptr_t)MPI_MIN) return (uintptr_t)shmrun_ld_min;
	if (op == (uintptr_t)MPI_MAX) return (uintptr_t)shmrun_ld_max;
	return 0;
}
*/
import "C"

import (
	"fmt"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
)

// hLongDouble is MPI_LONG_DOUBLE's handle; ldUnits the type its reductions
// run over (16-byte units).
const hLongDouble = 0x220

var ldUnits = &typeH{t: dtype.Basic(atomics.Complex128)}

// A userOp is an op made by MPI_Op_create.
type userOp struct {
	fn      C.uintptr_t
	commute bool
}

//export shmOpCreate
func shmOpCreate(fn C.uintptr_t, commute C.int, out *C.uintptr_t) C.int {
	if fn == 0 {
		return raiseSelf("MPI_Op_create", fmt.Errorf("a NULL function: %w", comm.ErrOp))
	}
	*out = C.uintptr_t(add(tab.ops, &opH{user: &userOp{fn: fn, commute: commute != 0}, name: "a user op"}))
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
	drop(tab.ops, uintptr(*h))
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

// reducer runs one reduction kind for element type T.
type reducer func(kind int, c *comm.Comm, s, r []byte, n int, t *dtype.Type, op *opH, dt C.uintptr_t, root int, inPlace bool) error

func reducerOf[T atomics.Elem]() reducer {
	basic := dtype.Basic(atomics.TypeOf[T]())
	return func(kind int, c *comm.Comm, s, r []byte, n int, t *dtype.Type, op *opH, dt C.uintptr_t, root int, inPlace bool) error {
		if op.user != nil {
			u, err := comm.OpCreate(func(in, inout []T) {
				C.shmrun_call_user_op(op.user.fn, elemsPtr(in), elemsPtr(inout), C.int(len(in)), basicHandle[T](dt, t))
			}, op.user.commute)
			if err != nil {
				return err
			}
			return reduceAs[T](kind, c, s, r, n, t, u, root, inPlace)
		}
		if t == basic {
			// A predefined type: the generic call on views of the
			// buffers, no packing (the typed forms copy).
			sv, sok := viewOf[T](s, n)
			rv, rok := viewOf[T](r, len(r)/max(1, int(t.Extent())))
			if (sok || s == nil) && (rok || r == nil) {
				return reduceDirect(kind, c, sv, rv, op.op, root, inPlace)
			}
		}
		return reduceAs[T](kind, c, s, r, n, t, op.op, root, inPlace)
	}
}

// reduceDirect is reduceAs on element slices (predefined types, aligned).
func reduceDirect[T atomics.Elem](kind int, c *comm.Comm, s, r []T, op atomics.Op, root int, inPlace bool) error {
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

// basicHandle is the datatype handle a user op is called with: the call's
// own when it is predefined, else the predefined type of its element.
func basicHandle[T atomics.Elem](dt C.uintptr_t, t *dtype.Type) C.uintptr_t {
	if x, ok := get(tab.types, uintptr(dt)); ok && x.pre {
		return dt
	}
	e := atomics.TypeOf[T]()
	for _, p := range predefTypes {
		if p.elem == e {
			return C.uintptr_t(p.h)
		}
	}
	return dt
}

// collArgs resolves a collective's communicator.
func collArgs(call string, h C.uintptr_t) (*commH, C.int) {
	return commOf(call, uintptr(h))
}

//export shmReduce
func shmReduce(sp, rp *C.char, count C.int64_t, dt, oph C.uintptr_t, root C.int, h C.uintptr_t, kind C.int, inPlace C.int) C.int {
	call := redNames[kind]
	x, code := collArgs(call, h)
	if code != 0 {
		return code
	}
	err := func() error {
		t, err := typeOf(uintptr(dt))
		if err != nil {
			return err
		}
		op, err := opOf(uintptr(oph))
		if err != nil {
			return err
		}
		e, ok := t.t.Elem()
		if uintptr(dt) == hLongDouble && t.t.Size() == 16 {
			// long double: its ops in C over 16-byte units (complex128's
			// size; its arithmetic is never used).
			fn := C.shmrun_ld_op(oph)
			if fn == 0 {
				return fmt.Errorf("%s does not apply to MPI_LONG_DOUBLE (SUM, PROD, MIN and MAX do): %w", op.name, comm.ErrOp)
			}
			op = &opH{name: op.name, user: &userOp{fn: fn, commute: true}}
			e, ok, t = atomics.Complex128, true, ldUnits
		}
		red := reducers[e]
		if !ok || red == nil {
			return fmt.Errorf("%s is not made of one predefined type a reduction takes: %w", t.t, comm.ErrType)
		}
		// Reduce_scatter_block's send (or in-place) buffer holds a block
		// per rank; its result, and every other reduction's data, n.
		n := int64(count)
		sn := n
		if kind == redScatterBlock {
			sn = n * int64(x.c.Size())
		}
		var s, r []byte
		if inPlace == 0 {
			if s, err = buf(sp, sn, t.t); err != nil {
				return err
			}
		}
		receives := kind != redReduce || int(root) == x.c.Rank()
		if inPlace != 0 {
			if r, err = buf(rp, sn, t.t); err != nil {
				return err
			}
		} else if receives {
			if r, err = buf(rp, n, t.t); err != nil {
				return err
			}
		}
		return red(int(kind), x.c, s, r, int(n), t.t, op, dt, int(root), inPlace != 0)
	}()
	if err != nil {
		return x.raise(call, err)
	}
	return C.MPI_SUCCESS
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
	*req = C.uintptr_t(add(tab.reqs, &reqH{r: r, c: x}))
	return C.MPI_SUCCESS
}

//export shmBcast
func shmBcast(p *C.char, count C.int64_t, dt C.uintptr_t, root C.int, h C.uintptr_t) C.int {
	x, t, b, code := p2pArgs("MPI_Bcast", h, dt, p, count)
	if code != 0 {
		return code
	}
	if err := comm.BcastType(x.c, b, int(count), t, int(root)); err != nil {
		return x.raise("MPI_Bcast", err)
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
	err := func() error {
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
				return err
			}
			st = t.t
			if s, err = buf(sp, sBlocks*int64(scount), st); err != nil {
				return err
			}
		}
		if rUsed && !(inPlace != 0 && kind == mvScatter) {
			t, err := typeOf(uintptr(rdt))
			if err != nil {
				return err
			}
			rt = t.t
			if r, err = buf(rp, rBlocks*int64(rcount), rt); err != nil {
				return err
			}
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
