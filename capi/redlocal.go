//go:build !mpi

package main

/*
#include "mpi.h"
*/
import "C"

import (
	"fmt"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/raw"
)

// shmReduceLocal is MPI_Reduce_local and MPI_Reduce_local_c (call):
// inout = in op inout for count instances of datatype dt, on this process
// alone (MPI 4.1 §6.9.7), with the types and ops MPI_Reduce takes
// (reduction) and its errors, raised on MPI_COMM_SELF's handler. A
// program's op is called on the program's buffers themselves, with count
// instances (an MPI_User_function with at most INT_MAX a call); a
// predefined op reduces the elements of the datatype's type map.
//
//export shmReduceLocal
func shmReduceLocal(in, inout *C.char, count C.int64_t, dt, oph C.uintptr_t, call *C.char) C.int {
	return typeCall(callName(call), func() error {
		t, err := typeOf(uintptr(dt))
		if err != nil {
			return err
		}
		if !t.t.Committed() {
			return fmt.Errorf("%v is not committed: %w", t.t, comm.ErrType)
		}
		op, err := opOf(uintptr(oph))
		if err != nil {
			return err
		}
		t, op, e, _, err := reduction(t, op, dt, oph)
		if err != nil {
			return err
		}
		n := int64(count)
		a, ta, err := buf(in, n, t.t)
		if err != nil {
			return fmt.Errorf("inbuf: %w", err)
		}
		b, tb, err := buf(inout, n, t.t)
		if err != nil {
			return fmt.Errorf("inoutbuf: %w", err)
		}
		tt, err := sameMove(t.t, ta, tb)
		if err != nil {
			return err
		}
		if len(b) > 0 {
			// The result is written through the type map: entries that
			// overlap are erroneous there, as in a receive buffer.
			if err := tt.FitsRecv(int(n), len(b)); err != nil {
				return fmt.Errorf("inoutbuf: %w", err)
			}
		}
		if len(a) > 0 && in == inout {
			return fmt.Errorf("inbuf and inoutbuf are one buffer (%p): the op reads one and writes the other: %w", in, comm.ErrBuffer)
		}
		if op.user != nil {
			callUserOpAt(op.user, in, inout, n, t.t.Extent(), dt)
			return nil
		}
		return localReducers[e](tt, a, b, int(n), op.op)
	})
}

// A localReducer reduces n instances of t in in into inout, element by
// element, with a predefined op: on the buffers themselves for a
// predefined type whose elements they hold aligned, else on the type
// map's elements copied out (elemsIn), the result copied back into
// inout's (its holes keep what they held).
type localReducer func(t *dtype.Type, in, inout []byte, n int, op atomics.Op) error

func localReducerOf[T atomics.Elem]() localReducer {
	basic := dtype.Basic(atomics.TypeOf[T]())
	return func(t *dtype.Type, in, inout []byte, n int, op atomics.Op) error {
		if t == basic {
			a, aok := viewOf[T](in, n)
			b, bok := viewOf[T](inout, n)
			if aok && bok {
				return atomics.ReduceLocal(a, b, op)
			}
		}
		b := elemsIn[T](inout, n, t)
		if err := atomics.ReduceLocal(elemsIn[T](in, n, t), b, op); err != nil {
			return err
		}
		return storeElemsIn(b, inout, n, t)
	}
}

// elemsIn is the elements of T that n instances of t, made of T's basic
// type alone, hold in b, in type-map order (a pair type's with their
// padding restored).
func elemsIn[T atomics.Elem](b []byte, n int, t *dtype.Type) []T {
	basic := dtype.Basic(atomics.TypeOf[T]())
	packed := make([]byte, t.Size()*int64(n))
	dtype.Pack(b, n, t, packed)
	out := make([]T, int64(len(packed))/basic.Size())
	if basic.Size() == int64(raw.SizeOf[T]()) {
		copy(raw.Bytes(out), packed)
	} else {
		dtype.Unpack(packed, raw.Bytes(out), len(out), basic)
	}
	return out
}

// storeElemsIn writes elements v back into n instances of t in b
// (elemsIn's inverse); instances whose entries overlap are an error.
func storeElemsIn[T atomics.Elem](v []T, b []byte, n int, t *dtype.Type) error {
	basic := dtype.Basic(atomics.TypeOf[T]())
	packed := raw.Bytes(v)
	if basic.Size() != int64(raw.SizeOf[T]()) {
		packed = make([]byte, int64(len(v))*basic.Size())
		dtype.Pack(raw.Bytes(v), len(v), basic, packed)
	}
	_, err := dtype.Unpack(packed, b, n, t)
	return err
}

// localReducers holds each element type's localReducer.
var localReducers = map[atomics.Type]localReducer{
	atomics.Int8: localReducerOf[int8](), atomics.Int16: localReducerOf[int16](), atomics.Int32: localReducerOf[int32](),
	atomics.Int64: localReducerOf[int64](), atomics.Uint8: localReducerOf[uint8](), atomics.Uint16: localReducerOf[uint16](),
	atomics.Uint32: localReducerOf[uint32](), atomics.Uint64: localReducerOf[uint64](),
	atomics.Float32: localReducerOf[float32](), atomics.Float64: localReducerOf[float64](),
	atomics.Complex64: localReducerOf[complex64](), atomics.Complex128: localReducerOf[complex128](),
	atomics.FloatIntT: localReducerOf[atomics.FloatInt](), atomics.DoubleIntT: localReducerOf[atomics.DoubleInt](),
	atomics.LongIntT: localReducerOf[atomics.LongInt](), atomics.TwoIntT: localReducerOf[atomics.TwoInt](),
	atomics.ShortIntT: localReducerOf[atomics.ShortInt](),
}
