//go:build !mpi

package main

/*
#include "mpi.h"

// Calling a program's reduction function on len instances of dt at in
// and inout, which are shift bytes (the datatype's true lower bound) past
// the instances' origin: an MPI_User_function, or with large an
// MPI_User_function_c (MPI_Op_create_c's), whose len is an MPI_Count.
static void shmrun_call_user_op(uintptr_t fn, int large, void *in, void *inout, int64_t len, uintptr_t dt, intptr_t shift) {
	MPI_Datatype t = (MPI_Datatype)dt;
	if (large) {
		MPI_Count n = len;
		((MPI_User_function_c *)fn)((char *)in - shift, (char *)inout - shift, &n, &t);
	} else {
		int n = (int)len;
		((MPI_User_function *)fn)((char *)in - shift, (char *)inout - shift, &n, &t);
	}
}
*/
import "C"

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
)

// hByte is MPI_BYTE's handle.
const hByte = 0x247

// callUserOp calls a program's reduction function, op's, on n instances
// of datatype dt at in and inout, shift bytes past the instances' origin
// (n is at most a piece of the collective area's instances: an int).
func callUserOp[T any](op *userOp, in, inout []T, n int, dt C.uintptr_t, shift int64) {
	C.shmrun_call_user_op(op.fn, cbool(op.large), elemsPtr(in), elemsPtr(inout), C.int64_t(n), dt, C.intptr_t(shift))
}

// unitCombine is a function that combines one instance of predefined
// type dt in dst (window memory, outside Go's heap) with one in src, by
// fn, a predefined op's C function for that type (MPI_User_function's
// inout = in op inout, in src's place).
// An instance whose data is less than its extent (MPI_LONG_DOUBLE_INT's
// 20 bytes of 32) goes through aligned scratch of an extent each: the
// function reads and writes the whole C struct.
func unitCombine(fn C.uintptr_t, dt C.uintptr_t, ext int) func(dst, src []byte) {
	var a, b []byte
	return func(dst, src []byte) {
		if len(dst) >= ext {
			C.shmrun_call_user_op(fn, 0, unsafe.Pointer(&src[0]), unsafe.Pointer(&dst[0]), 1, dt, 0)
			return
		}
		if a == nil {
			a, b = alignedBytes(ext), alignedBytes(ext)
		}
		copy(a, src)
		copy(b, dst)
		C.shmrun_call_user_op(fn, 0, unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0]), 1, dt, 0)
		copy(dst, b)
	}
}

// callUserOpAt calls op's function on the program's own buffers, n
// instances of dt (of extent ext) at in and inout, as MPI_Reduce_local
// does: an MPI_User_function, whose len is an int, in calls of at most
// INT_MAX instances, each call's buffers that many extents further on.
func callUserOpAt(op *userOp, in, inout *C.char, n, ext int64, dt C.uintptr_t) {
	for n > 0 {
		k := n
		if !op.large {
			k = min(n, math.MaxInt32)
		}
		C.shmrun_call_user_op(op.fn, cbool(op.large), unsafe.Pointer(in), unsafe.Pointer(inout), C.int64_t(k), dt, 0)
		n -= k
		in = (*C.char)(unsafe.Add(unsafe.Pointer(in), k*ext))
		inout = (*C.char)(unsafe.Add(unsafe.Pointer(inout), k*ext))
	}
}

// reduceBytes runs a reduction whose op is a C function called on whole
// instances of t as they lie in memory: a program's user op on a derived
// datatype (MPI calls it with instances of the call's datatype, in that
// datatype's layout, and the datatype itself) or on an opaque predefined
// type, and the predefined ops on long double and its kin (C functions
// of shmrun_opaque_op). Each buffer's instances are copied into a
// contiguous buffer of one extent an instance, reduced as bytes in units
// of an extent, and the result is copied back through the type map, so
// the holes of recv are left as they were. s and r are the call's
// buffers as shmReduce made them (r nil where the rank receives nothing),
// and t the type buf took them with: the call's datatype, or, where its
// data start before the buffers' addresses, that type moved up by as many
// bytes; tl is the call's datatype's true lower bound, which places an
// instance's copy where the function, laying it out by the call's
// datatype, looks for it.
func reduceBytes(kind int, c *comm.Comm, s, r []byte, n int, t *dtype.Type, tl int64, op *userOp, dt C.uintptr_t, root int, inPlace bool) error {
	e, tm := t.Extent(), t.TrueLB() // tm: where t's data start in the buffers, >= 0
	if e <= 0 || tm < 0 || t.TrueExtent() > e {
		return fmt.Errorf("a reduction over %v, whose instances overlap or run backwards (extent %d, true extent %d): %w",
			t, e, t.TrueExtent(), comm.ErrType)
	}
	unit := int(e)
	// The function gets its instances aligned as the C compiler aligns
	// them: a piece of the runtime's buffers that is not (the inline bytes
	// of a small call, 8 past a boundary) is copied.
	var scratch [2][]byte
	alignedFor := func(i int, b []byte) []byte {
		if aligned(b) || len(b) == 0 {
			return b
		}
		if len(scratch[i]) < len(b) {
			scratch[i] = alignedBytes(len(b))
		}
		c := scratch[i][:len(b)]
		copy(c, b)
		return c
	}
	u, err := comm.OpCreate(func(in, inout []byte) {
		a, b := alignedFor(0, in), alignedFor(1, inout)
		callUserOp(op, a, b, len(in)/unit, dt, tl)
		if len(inout) > 0 && &b[0] != &inout[0] {
			copy(inout, b)
		}
	}, op.commute)
	if err == nil {
		u, err = u.InUnits(unit)
	}
	if err != nil {
		return err
	}
	// gather copies count instances of b into one extent an instance;
	// scatter copies them back.
	gather := func(b []byte, count int) []byte {
		tmp := alignedBytes(count * unit)
		if b != nil {
			t.Each(count, func(off, l int64) bool {
				copy(tmp[off-tm:off-tm+l], b[off:off+l])
				return true
			})
		}
		return tmp
	}
	scatter := func(tmp, b []byte, count int) {
		t.Each(count, func(off, l int64) bool {
			copy(b[off:off+l], tmp[off-tm:off-tm+l])
			return true
		})
	}
	sn := n
	if kind == redScatterBlock {
		sn = n * c.Size()
	}
	var ss, rr []byte
	switch {
	case inPlace:
		rr = gather(r, sn)
		ss = rr
	default:
		ss = gather(s, sn)
		if r != nil {
			rr = gather(nil, n)
		}
	}
	if err := reduceDirect(kind, c, ss, rr, u, root, inPlace); err != nil {
		return err
	}
	if r != nil && (kind != redExscan || c.Rank() > 0) {
		scatter(rr, r, n)
	}
	return nil
}
