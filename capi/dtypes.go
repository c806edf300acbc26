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
// MPI_Type_create_hindexed (in bytes: ap), and their _block forms
// (blocklens NULL: every block of block elements).
//
//export shmTypeIndexed
func shmTypeIndexed(count C.int64_t, blocklens *C.int, block C.int64_t, ip *C.int, ap *C.MPI_Aint, old C.uintptr_t, out *C.uintptr_t) C.int {
	var bl []int64
	if blocklens != nil {
		bl = int64s(ints(blocklens, max(count, 0)))
	}
	var d []int64
	if ap != nil {
		d = aints(ap, max(count, 0))
	} else {
		d = int64s(ints(ip, max(count, 0)))
	}
	return indexedType(count, blocklens != nil, bl, int64(block), d, ap != nil, false, old, out)
}

// shmTypeIndexedC is the large-count forms (MPI_Type_indexed_c,
// MPI_Type_create_hindexed_c and their _block forms): every count,
// blocklength and displacement an MPI_Count.
//
//export shmTypeIndexedC
func shmTypeIndexedC(count C.int64_t, blocklens *C.int64_t, block C.int64_t, displs *C.int64_t, bytes C.int, old C.uintptr_t, out *C.uintptr_t) C.int {
	var bl []int64
	if blocklens != nil {
		bl = counts64(blocklens, count)
	}
	return indexedType(count, blocklens != nil, bl, int64(block), counts64(displs, count), bytes != 0, true, old, out)
}

// counts64 is the n MPI_Counts at p (none for n <= 0).
func counts64(p *C.int64_t, n C.int64_t) []int64 {
	v := cArray(p, int(max(n, 0)))
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

// cName is a call's name in errors: name, or its large-count form's
// (name_c) when large.
func cName(name string, large bool) string {
	if large {
		return name + "_c"
	}
	return name
}

// indexedType makes the four indexed kinds (per blocks: bl given, else
// blocks of block elements; bytes: displacements in bytes), recording the
// call as its int (large false) or _c form made it.
func indexedType(count C.int64_t, perBlock bool, bl []int64, block int64, d []int64, bytes, large bool, old C.uintptr_t, out *C.uintptr_t) C.int {
	call := cName(map[[2]bool]string{{true, false}: "MPI_Type_indexed", {true, true}: "MPI_Type_create_hindexed",
		{false, false}: "MPI_Type_create_indexed_block", {false, true}: "MPI_Type_create_hindexed_block"}[[2]bool{perBlock, bytes}], large)
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
		ibl, id := intsOf(bl), intsOf(d)
		switch {
		case !perBlock && bytes:
			nt, err = dtype.HindexedBlock(int(block), d, t)
			if large {
				m = made(C.MPI_COMBINER_HINDEXED_BLOCK, true, slices.Concat(n, []int64{block}, d), nil, old)
			} else {
				m = made(C.MPI_COMBINER_HINDEXED_BLOCK, false, append(n, block), d, old)
			}
		case !perBlock:
			nt, err = dtype.IndexedBlock(int(block), id, t)
			m = made(C.MPI_COMBINER_INDEXED_BLOCK, large, slices.Concat(n, []int64{block}, d), nil, old)
		case bytes:
			nt, err = dtype.Hindexed(ibl, d, t)
			if large {
				m = made(C.MPI_COMBINER_HINDEXED, true, slices.Concat(n, bl, d), nil, old)
			} else {
				m = made(C.MPI_COMBINER_HINDEXED, false, append(n, bl...), d, old)
			}
		default:
			nt, err = dtype.Indexed(ibl, id, t)
			m = made(C.MPI_COMBINER_INDEXED, large, slices.Concat(n, bl, d), nil, old)
		}
		return newType(nt, err, out, m)
	})
}

// intsOf narrows v (int is 64 bits wide on every platform the C
// interface builds for).
func intsOf(v []int64) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

//export shmTypeStruct
func shmTypeStruct(count C.int64_t, blocklens *C.int, displs *C.MPI_Aint, types *C.uintptr_t, out *C.uintptr_t) C.int {
	return structType(count, int64s(ints(blocklens, max(count, 0))), aints(displs, max(count, 0)), types, false, out)
}

// shmTypeStructC is MPI_Type_create_struct_c.
//
//export shmTypeStructC
func shmTypeStructC(count C.int64_t, blocklens, displs *C.int64_t, types *C.uintptr_t, out *C.uintptr_t) C.int {
	return structType(count, counts64(blocklens, count), counts64(displs, count), types, true, out)
}

func structType(count C.int64_t, bl, d []int64, types *C.uintptr_t, large bool, out *C.uintptr_t) C.int {
	call := cName("MPI_Type_create_struct", large)
	return typeCall(call, func() error {
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
		nt, err := dtype.Struct(intsOf(bl), d, ts)
		m := made(C.MPI_COMBINER_STRUCT, false, append([]int64{int64(count)}, bl...), d, hs...)
		if large {
			m = made(C.MPI_COMBINER_STRUCT, true, slices.Concat([]int64{int64(count)}, bl, d), nil, hs...)
		}
		return newType(nt, err, out, m)
	})
}

//export shmTypeSubarray
func shmTypeSubarray(ndims C.int, sizes, subsizes, starts *C.int, order C.int, old C.uintptr_t, out *C.uintptr_t) C.int {
	n := C.int64_t(max(ndims, 0))
	return subarrayType(ndims, int64s(ints(sizes, n)), int64s(ints(subsizes, n)), int64s(ints(starts, n)), order, false, old, out)
}

// shmTypeSubarrayC is MPI_Type_create_subarray_c: its sizes, subsizes and
// starts MPI_Counts (ndims and order stay ints).
//
//export shmTypeSubarrayC
func shmTypeSubarrayC(ndims C.int, sizes, subsizes, starts *C.int64_t, order C.int, old C.uintptr_t, out *C.uintptr_t) C.int {
	n := C.int64_t(max(ndims, 0))
	return subarrayType(ndims, counts64(sizes, n), counts64(subsizes, n), counts64(starts, n), order, true, old, out)
}

func subarrayType(ndims C.int, sz, sub, st []int64, order C.int, large bool, old C.uintptr_t, out *C.uintptr_t) C.int {
	call := cName("MPI_Type_create_subarray", large)
	return typeCall(call, func() error {
		t, err := typeArg(old)
		if err != nil {
			return err
		}
		o := goOrder(order)
		nt, err := dtype.Subarray(intsOf(sz), intsOf(sub), intsOf(st), o, t)
		var m *madeBy
		if large {
			// MPI 4.1 §5.1.13: ndims and order stay integers.
			m = made(C.MPI_COMBINER_SUBARRAY, false, []int64{int64(ndims), int64(order)}, nil, old)
			if m != nil {
				m.counts = slices.Concat(sz, sub, st)
			}
		} else {
			m = made(C.MPI_COMBINER_SUBARRAY, false, slices.Concat([]int64{int64(ndims)}, sz, sub, st, []int64{int64(order)}), nil, old)
		}
		return newType(nt, err, out, m)
	})
}

// shmTypeResized is MPI_Type_create_resized and (large) its _c form,
// whose lb and extent are MPI_Counts.
//
//export shmTypeResized
func shmTypeResized(old C.uintptr_t, lb, extent C.int64_t, large C.int, out *C.uintptr_t) C.int {
	call := cName("MPI_Type_create_resized", large != 0)
	return typeCall(call, func() error {
		t, err := typeArg(old)
		if err != nil {
			return err
		}
		nt, err := dtype.Resized(t, int64(lb), int64(extent))
		m := made(C.MPI_COMBINER_RESIZED, false, nil, []int64{int64(lb), int64(extent)}, old)
		if large != 0 {
			m = made(C.MPI_COMBINER_RESIZED, true, []int64{int64(lb), int64(extent)}, nil, old)
		}
		return newType(nt, err, out, m)
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
		if !dropPinned(tab.types, uintptr(*h), &x.dead) {
			return fmt.Errorf("a freed datatype (handle %#x): %w", uintptr(*h), comm.ErrType)
		}
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
			src, t, err := buf(in, int64(incount), t)
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
		dst, t, err := buf(out, int64(outsize), t)
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

// shmTypeDarray is MPI_Type_create_darray and (large: gsizes are
// MPI_Counts) its _c form, over package dtype's Darray.
//
//export shmTypeDarray
func shmTypeDarray(size, rank, ndims C.int, gsizes *C.int64_t, gsizes32 *C.int, distribs, dargs, psizes *C.int, order C.int, old C.uintptr_t, large C.int, out *C.uintptr_t) C.int {
	call := cName("MPI_Type_create_darray", large != 0)
	return typeCall(call, func() error {
		t, err := typeArg(old)
		if err != nil {
			return err
		}
		n := C.int64_t(max(ndims, 0))
		var gs []int64
		if large != 0 {
			gs = counts64(gsizes, n)
		} else {
			gs = int64s(ints(gsizes32, n))
		}
		ds, dg, ps := ints(distribs, n), ints(dargs, n), ints(psizes, n)
		dist := make([]dtype.Distrib, len(ds))
		darg := slices.Clone(dg)
		for i, d := range ds {
			switch d {
			case C.MPI_DISTRIBUTE_BLOCK:
				dist[i] = dtype.DistributeBlock
			case C.MPI_DISTRIBUTE_CYCLIC:
				dist[i] = dtype.DistributeCyclic
			case C.MPI_DISTRIBUTE_NONE:
				dist[i] = dtype.DistributeNone
			default:
				return fmt.Errorf("array_of_distribs[%d] is %d, not an MPI_DISTRIBUTE_ constant: %w", i, d, comm.ErrArg)
			}
			if darg[i] == C.MPI_DISTRIBUTE_DFLT_DARG {
				darg[i] = dtype.DefaultDarg
			} else if darg[i] < 1 {
				darg[i] = 0 // refused by Darray, whatever its value
			}
		}
		o := goOrder(order)
		nt, err := dtype.Darray(int(size), int(rank), intsOf(gs), dist, darg, ps, o, t)
		tail := slices.Concat(int64s(ds), int64s(dg), int64s(ps), []int64{int64(order)})
		var m *madeBy
		if large != 0 {
			// MPI 4.1 §5.1.13: the gsizes among the large counts.
			m = made(C.MPI_COMBINER_DARRAY, false, slices.Concat([]int64{int64(size), int64(rank), int64(ndims)}, tail), nil, old)
			if m != nil {
				m.counts = gs
			}
		} else {
			m = made(C.MPI_COMBINER_DARRAY, false, slices.Concat([]int64{int64(size), int64(rank), int64(ndims)}, gs, tail), nil, old)
		}
		return newType(nt, err, out, m)
	})
}

// goOrder is package dtype's order for MPI_ORDER_C or MPI_ORDER_FORTRAN
// (0, refused by the constructors, for anything else).
func goOrder(order C.int) dtype.Order {
	switch order {
	case C.MPI_ORDER_C:
		return dtype.OrderC
	case C.MPI_ORDER_FORTRAN:
		return dtype.OrderFortran
	}
	return 0
}
