//go:build !mpi

package main

/*
#include "mpi.h"
*/
import "C"

import (
	"fmt"
	"slices"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
)

// typeCall runs f for a datatype call, raising its error on MPI_COMM_SELF's
// handler (datatypes have no handler of their own).
func typeCall(call string, f func() error) C.int {
	if !initialized() {
		return notInit(call)
	}
	if err := f(); err != nil {
		return raiseSelf(call, err)
	}
	return C.MPI_SUCCESS
}

// commTypeCall is typeCall for a call with a communicator argument (the
// pack calls): an invalid communicator is its error, and errors are
// raised on the communicator's handler, as MPI 4.1 9.3 wants of a call
// with one.
func commTypeCall(call string, h C.uintptr_t, f func() error) C.int {
	if !initialized() {
		return notInit(call)
	}
	x, code := commOf(call, uintptr(h))
	if code != 0 {
		return code
	}
	if err := f(); err != nil {
		return x.raise(call, err)
	}
	return C.MPI_SUCCESS
}

// newType registers a type made by a constructor, with the arguments it
// was made from (MPI_Type_get_contents).
func newType(t *dtype.Type, err error, out *C.uintptr_t, m *madeBy) error {
	if err != nil {
		return err
	}
	*out = C.uintptr_t(add(tab.types, &typeH{t: t, made: m}))
	return nil
}

// typeArg is the datatype of handle h: its Go type, and what
// MPI_Type_get_contents returns for it as an old type (oldOf).
func typeArg(h C.uintptr_t) (*dtype.Type, error) {
	x, err := typeOf(uintptr(h))
	if err != nil {
		return nil, err
	}
	return x.t, nil
}

// shmTypeContiguous is MPI_Type_contiguous and, large, its _c form.
//
//export shmTypeContiguous
func shmTypeContiguous(count C.int64_t, old C.uintptr_t, large C.int, out *C.uintptr_t) C.int {
	return typeCall("MPI_Type_contiguous", func() error {
		t, err := typeArg(old)
		if err != nil {
			return err
		}
		nt, err := dtype.Contiguous(int(count), t)
		return newType(nt, err, out, made(C.MPI_COMBINER_CONTIGUOUS, large != 0, []int64{int64(count)}, nil, old))
	})
}

// shmTypeVector is MPI_Type_vector (stride in elements) and
// MPI_Type_create_hvector (bytes), and (large) their _c forms.
//
//export shmTypeVector
func shmTypeVector(count, blocklen, stride C.int64_t, bytes C.int, old C.uintptr_t, large C.int, out *C.uintptr_t) C.int {
	call := "MPI_Type_vector"
	if bytes != 0 {
		call = "MPI_Type_create_hvector"
	}
	return typeCall(call, func() error {
		t, err := typeArg(old)
		if err != nil {
			return err
		}
		var nt *dtype.Type
		var m *madeBy
		if bytes != 0 {
			nt, err = dtype.Hvector(int(count), int(blocklen), int64(stride), t)
			if large != 0 { // the _c form's stride is an MPI_Count
				m = made(C.MPI_COMBINER_HVECTOR, true, []int64{int64(count), int64(blocklen), int64(stride)}, nil, old)
			} else {
				m = made(C.MPI_COMBINER_HVECTOR, false, []int64{int64(count), int64(blocklen)}, []int64{int64(stride)}, old)
			}
		} else {
			nt, err = dtype.Vector(int(count), int(blocklen), int(stride), t)
			m = made(C.MPI_COMBINER_VECTOR, large != 0, []int64{int64(count), int64(blocklen), int64(stride)}, nil, old)
		}
		return newType(nt, err, out, m)
	})
}

func ints(p *C.int, n C.int64_t) []int {
	v := cArray(p, int(n))
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

func aints(p *C.MPI_Aint, n C.int64_t) []int64 {
	v := cArray(p, int(n))
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

// shmTypeIndexed is MPI_Type_indexed (displacements in extents: ip) and
// MPI_Type_create_hindexed (bytes: ap); blocklens nil with a block length
// for the _block forms.
//
//export shmTypeIndexed
func shmTypeIndexed(count C.int64_t, blocklens *C.int, block C.int64_t, ip *C.int, ap *C.MPI_Aint, old C.uintptr_t, out *C.uintptr_t) C.int {
	call := map[[2]bool]string{{false, false}: "MPI_Type_indexed", {false, true}: "MPI_Type_create_hindexed",
		{true, false}: "MPI_Type_create_indexed_block", {true, true}: "MPI_Type_create_hindexed_block"}[[2]bool{blocklens == nil, ap != nil}]
	return typeCall(call, func() error {
		if count < 0 {
			return fmt.Errorf("count %d is negative: %w", int64(count), comm.ErrCount)
		}
		t, err := typeArg(old)
		if err != nil {
			return err
		}
		var nt *dtype.Type
		var m *madeBy
		n := []int64{int64(count)}
		switch {
		case blocklens == nil && ap != nil:
			d := aints(ap, count)
			nt, err = dtype.HindexedBlock(int(block), d, t)
			m = made(C.MPI_COMBINER_HINDEXED_BLOCK, false, append(n, int64(block)), d, old)
		case blocklens == nil:
			d := ints(ip, count)
			nt, err = dtype.IndexedBlock(int(block), d, t)
			m = made(C.MPI_COMBINER_INDEXED_BLOCK, false, append(append(n, int64(block)), int64s(d)...), nil, old)
		case ap != nil:
			bl, d := ints(blocklens, count), aints(ap, count)
			nt, err = dtype.Hindexed(bl, d, t)
			m = made(C.MPI_COMBINER_HINDEXED, false, append(n, int64s(bl)...), d, old)
		default:
			bl, d := ints(blocklens, count), ints(ip, count)
			nt, err = dtype.Indexed(bl, d, t)
			m = made(C.MPI_COMBINER_INDEXED, false, slices.Concat(n, int64s(bl), int64s(d)), nil, old)
		}
		return newType(nt, err, out, m)
	})
}

//export shmTypeStruct
func shmTypeStruct(count C.int64_t, blocklens *C.int, displs *C.MPI_Aint, types *C.uintptr_t, out *C.uintptr_t) C.int {
	return typeCall("MPI_Type_create_struct", func() error {
		if count < 0 {
			return fmt.Errorf("count %d is negative: %w", int64(count), comm.ErrCount)
		}
		hs := cArray(types, int(count))
		ts := make([]*dtype.Type, len(hs))
		for i, h := range hs {
			t, err := typeArg(h)
			if err != nil {
				return fmt.Errorf("type %d: %w", i, err)
			}
			ts[i] = t
		}
		bl, d := ints(blocklens, count), aints(displs, count)
		nt, err := dtype.Struct(bl, d, ts)
		return newType(nt, err, out, made(C.MPI_COMBINER_STRUCT, false, append([]int64{int64(count)}, int64s(bl)...), d, hs...))
	})
}

//export shmTypeSubarray
func shmTypeSubarray(ndims C.int, sizes, subsizes, starts *C.int, order C.int, old C.uintptr_t, out *C.uintptr_t) C.int {
	return typeCall("MPI_Type_create_subarray", func() error {
		t, err := typeArg(old)
		if err != nil {
			return err
		}
		var o dtype.Order
		switch order {
		case C.MPI_ORDER_C:
			o = dtype.OrderC
		case C.MPI_ORDER_FORTRAN:
			o = dtype.OrderFortran
		}
		n := C.int64_t(ndims)
		sz, sub, st := ints(sizes, n), ints(subsizes, n), ints(starts, n)
		nt, err := dtype.Subarray(sz, sub, st, o, t)
		iv := slices.Concat([]int64{int64(ndims)}, int64s(sz), int64s(sub), int64s(st), []int64{int64(order)})
		return newType(nt, err, out, made(C.MPI_COMBINER_SUBARRAY, false, iv, nil, old))
	})
}

//export shmTypeResized
func shmTypeResized(old C.uintptr_t, lb, extent C.MPI_Aint, out *C.uintptr_t) C.int {
	return typeCall("MPI_Type_create_resized", func() error {
		t, err := typeArg(old)
		if err != nil {
			return err
		}
		nt, err := dtype.Resized(t, int64(lb), int64(extent))
		return newType(nt, err, out, made(C.MPI_COMBINER_RESIZED, false, nil, []int64{int64(lb), int64(extent)}, old))
	})
}

//export shmTypeDup
func shmTypeDup(old C.uintptr_t, out *C.uintptr_t) C.int {
	return typeCall("MPI_Type_dup", func() error {
		x, err := typeOf(uintptr(old))
		if err != nil {
			return err
		}
		nt, err := x.t.Dup()
		if err := newType(nt, err, out, made(C.MPI_COMBINER_DUP, false, nil, nil, old)); err != nil {
			return err
		}
		as, err := copyAll(attrType, uintptr(old), attrsSnapshot(&x.uattrs), uintptr(*out))
		if err != nil {
			drop(tab.types, uintptr(*out))
			*out = hDatatypeNull
			return err
		}
		y, _ := get(tab.types, uintptr(*out))
		tab.Lock()
		y.uattrs = as
		tab.Unlock()
		return nil
	})
}

//export shmTypeCommit
func shmTypeCommit(h *C.uintptr_t) C.int {
	return typeCall("MPI_Type_commit", func() error {
		t, err := typeArg(*h)
		if err != nil {
			return err
		}
		return t.Commit()
	})
}

//export shmTypeFree
func shmTypeFree(h *C.uintptr_t) C.int {
	return typeCall("MPI_Type_free", func() error {
		x, err := typeOf(uintptr(*h))
		if err != nil {
			return err
		}
		if x.pre {
			return fmt.Errorf("%s is predefined: %w", x.name, comm.ErrType)
		}
		if err := deleteAll(attrType, uintptr(*h), &x.uattrs); err != nil {
			return err // not freed
		}
		drop(tab.types, uintptr(*h))
		*h = hDatatypeNull
		return nil
	})
}

// shmTypeExtent is MPI_Type_size, MPI_Type_get_extent and
// MPI_Type_get_true_extent (what: 0, 1, 2).
//
//export shmTypeExtent
func shmTypeExtent(h C.uintptr_t, what C.int, a, b *C.int64_t) C.int {
	call := [...]string{"MPI_Type_size", "MPI_Type_get_extent", "MPI_Type_get_true_extent"}[what]
	return typeCall(call, func() error {
		t, err := typeArg(h)
		if err != nil {
			return err
		}
		switch what {
		case 0:
			*a = C.int64_t(t.Size())
		case 1:
			*a, *b = C.int64_t(t.LB()), C.int64_t(t.Extent())
		default:
			*a, *b = C.int64_t(t.TrueLB()), C.int64_t(t.TrueExtent())
		}
		return nil
	})
}

//export shmTypeGetName
func shmTypeGetName(h C.uintptr_t, name *C.char, resultlen *C.int) C.int {
	return typeCall("MPI_Type_get_name", func() error {
		x, err := typeOf(uintptr(h))
		if err != nil {
			return err
		}
		*resultlen = C.int(putString(name, C.MPI_MAX_OBJECT_NAME, x.name))
		return nil
	})
}

//export shmTypeSetName
func shmTypeSetName(h C.uintptr_t, name *C.char) C.int {
	return typeCall("MPI_Type_set_name", func() error {
		x, err := typeOf(uintptr(h))
		if err != nil {
			return err
		}
		tab.Lock()
		x.name = objectName(name) // cut as a communicator's and a window's are
		tab.Unlock()
		return nil
	})
}

// shmPack is MPI_Pack (pack) and MPI_Unpack on communicator h: position
// in bytes, moved on.
//
//export shmPack
func shmPack(in *C.char, incount C.int64_t, dt C.uintptr_t, out *C.char, outsize C.int64_t, position *C.int64_t, pack C.int, h C.uintptr_t) C.int {
	call := "MPI_Unpack"
	if pack != 0 {
		call = "MPI_Pack"
	}
	return commTypeCall(call, h, func() error {
		t, err := typeArg(dt)
		if err != nil {
			return err
		}
		pos := int64(*position)
		if pack != 0 {
			src, err := buf(in, int64(incount), t)
			if err != nil {
				return err
			}
			dst := bytesAt(out, int64(outsize))
			if pos < 0 || pos > int64(len(dst)) {
				return fmt.Errorf("position %d outside a %d-byte buffer: %w", pos, len(dst), comm.ErrArg)
			}
			n, err := dtype.Pack(src, int(incount), t, dst[pos:])
			if err != nil {
				return err
			}
			*position = C.int64_t(pos + int64(n))
			return nil
		}
		// Unpack: in is the packed buffer of insize (incount) bytes, out
		// receives outsize (count) instances.
		src := bytesAt(in, int64(incount))
		dst, err := buf(out, int64(outsize), t)
		if err != nil {
			return err
		}
		if pos < 0 || pos > int64(len(src)) {
			return fmt.Errorf("position %d outside a %d-byte buffer: %w", pos, len(src), comm.ErrArg)
		}
		n, err := dtype.Unpack(src[pos:], dst, int(outsize), t)
		if err != nil {
			return err
		}
		*position = C.int64_t(pos + int64(n))
		return nil
	})
}

// shmPackSize is MPI_Pack_size on communicator h.
//
//export shmPackSize
func shmPackSize(count C.int64_t, dt C.uintptr_t, size *C.int64_t, h C.uintptr_t) C.int {
	return commTypeCall("MPI_Pack_size", h, func() error {
		t, err := typeArg(dt)
		if err != nil {
			return err
		}
		n, err := dtype.PackSize(int(count), t)
		*size = C.int64_t(n)
		return err
	})
}
