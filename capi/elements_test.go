//go:build !mpi && cgo

package main

import (
	"errors"
	"testing"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
)

// TestElementsOf holds MPI_Get_elements' count to the basic elements of
// the type-map prefix a message's bytes fill (MPI 4.1 §5.1.11), for types
// that mix basic types, nest them, pad them, and hold pair and opaque
// types; -1 is MPI_UNDEFINED (the bytes end inside an element).
func TestElementsOf(t *testing.T) {
	must := func(x *dtype.Type, err error) *dtype.Type {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Commit(); err != nil {
			t.Fatal(err)
		}
		return x
	}
	i32, f64, i16 := dtype.Basic(atomics.Int32), dtype.Basic(atomics.Float64), dtype.Basic(atomics.Int16)
	ldouble := predefTypeArr[0x220-hDatatypeNull].t // MPI_LONG_DOUBLE: opaque, 16 bytes
	s := must(dtype.Struct([]int{1, 1}, []int64{0, 8}, []*dtype.Type{i32, f64}))
	vec := must(dtype.Vector(2, 1, 2, s))                                            // 2 × s, with holes
	nest := must(dtype.Struct([]int{2, 1}, []int64{0, 48}, []*dtype.Type{i16, vec})) // short, short, then vec
	ld := must(dtype.Struct([]int{1, 1}, []int64{0, 16}, []*dtype.Type{i32, ldouble}))
	di2 := must(dtype.Contiguous(2, dtype.Basic(atomics.DoubleIntT)))
	bytes3 := must(dtype.Contiguous(3, dtype.Byte))
	resized := must(dtype.Resized(s, 0, 32))
	sub := must(dtype.Subarray([]int{4, 4}, []int{2, 2}, []int{1, 1}, dtype.OrderC, s))
	for _, c := range []struct {
		name string
		t    *dtype.Type
		want map[int64]int64 // bytes: elements
	}{
		{"struct{int, double}", s, map[int64]int64{0: 0, 4: 1, 6: -1, 12: 2, 16: 3, 24: 4, 28: 5, 30: -1}},
		{"vector of it", vec, map[int64]int64{12: 2, 16: 3, 24: 4, 36: 6, 40: 7, 44: -1, 48: 8}},
		{"struct{2 short, vec}", nest, map[int64]int64{2: 1, 3: -1, 4: 2, 8: 3, 16: 4, 28: 6, 30: 7, 32: 8, 33: -1, 60: 14}},
		{"struct{int, long double}", ld, map[int64]int64{4: 1, 12: -1, 20: 2, 24: 3, 28: -1, 40: 4}},
		{"contiguous(2, MPI_DOUBLE_INT)", di2, map[int64]int64{4: -1, 8: 1, 12: 2, 16: -1, 20: 3, 24: 4, 32: 5}},
		{"contiguous(3, MPI_BYTE)", bytes3, map[int64]int64{1: 1, 5: 5}},
		{"resized struct", resized, map[int64]int64{12: 2, 16: 3}},
		{"subarray of structs", sub, map[int64]int64{12: 2, 48: 8, 52: 9, 54: -1}},
	} {
		for n, w := range c.want {
			got, ok := elementsOf(c.t, false, n)
			if !ok {
				got = -1
			}
			if got != w {
				t.Errorf("%s, %d bytes: %d elements, want %d", c.name, n, got, w)
			}
		}
	}
	// A predefined type counts as MPI_Get_count does, a pair type too.
	for _, c := range []struct {
		h    uintptr
		n    int64
		want int64
	}{{0x229, 24, 2}, {0x229, 8, -1}, {0x220, 32, 2}, {0x209, 8, 2}, {0x247, 5, 5}, {0x230, 16, 2}} {
		x := predefTypeArr[c.h-hDatatypeNull]
		got, ok := elementsOf(x.t, x.pre, c.n)
		if !ok {
			got = -1
		}
		if got != c.want {
			t.Errorf("%s, %d bytes: %d elements, want %d", x.name, c.n, got, c.want)
		}
	}
}

// TestElementBytes holds MPI_Status_set_elements' byte count to
// MPI_Get_elements' (elementsOf) and MPI_Get_count's: count elements of a
// type set in a status are count elements again, and whole instances
// exactly when count is a multiple of an instance's elements; a type of
// no elements and counts past an MPI_Count's bytes are ErrCount.
func TestElementBytes(t *testing.T) {
	must := func(x *dtype.Type, err error) *dtype.Type {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Commit(); err != nil {
			t.Fatal(err)
		}
		return x
	}
	i32, f64, i16 := dtype.Basic(atomics.Int32), dtype.Basic(atomics.Float64), dtype.Basic(atomics.Int16)
	ldouble := predefTypeArr[0x220-hDatatypeNull].t
	s := must(dtype.Struct([]int{1, 1}, []int64{0, 8}, []*dtype.Type{i32, f64}))
	vec := must(dtype.Vector(2, 1, 2, s))
	nest := must(dtype.Struct([]int{2, 1}, []int64{0, 48}, []*dtype.Type{i16, vec}))
	types := []struct {
		name string
		t    *dtype.Type
		per  int64 // basic elements an instance
	}{
		{"struct{int, double}", s, 2},
		{"vector of it", vec, 4},
		{"struct{2 short, vec}", nest, 6},
		{"struct{int, long double}", must(dtype.Struct([]int{1, 1}, []int64{0, 16}, []*dtype.Type{i32, ldouble})), 2},
		{"contiguous(2, MPI_DOUBLE_INT)", must(dtype.Contiguous(2, dtype.Basic(atomics.DoubleIntT))), 4},
		{"contiguous(3, MPI_BYTE)", must(dtype.Contiguous(3, dtype.Byte)), 3},
		{"resized struct", must(dtype.Resized(s, 0, 32)), 2},
		{"subarray of structs", must(dtype.Subarray([]int{4, 4}, []int{2, 2}, []int{1, 1}, dtype.OrderC, s)), 8},
		{"struct{0 × int, double, 0-size contiguous}", must(dtype.Struct([]int{0, 1, 2}, []int64{0, 8, 16},
			[]*dtype.Type{i32, f64, must(dtype.Contiguous(0, i32))})), 1},
	}
	for _, c := range types {
		for k := int64(0); k <= 3*c.per+1; k++ {
			n, err := elementBytes(c.t, false, k)
			if err != nil {
				t.Fatalf("%s, %d elements: %v", c.name, k, err)
			}
			if e, ok := elementsOf(c.t, false, n); !ok || e != k {
				t.Errorf("%s: %d elements set are %d bytes, which hold %d elements (%v)", c.name, k, n, e, ok)
			}
			if whole := n%c.t.Size() == 0; whole != (k%c.per == 0) {
				t.Errorf("%s: %d elements set are %d bytes: whole instances %v, want %v", c.name, k, n, whole, !whole)
			}
		}
	}
	for _, c := range []struct {
		h     uintptr
		count int64
		want  int64
	}{{0x229, 3, 36}, {0x220, 2, 32}, {0x209, 5, 20}, {0x247, 5, 5}, {0x230, 2, 16}} {
		x := predefTypeArr[c.h-hDatatypeNull]
		if n, err := elementBytes(x.t, x.pre, c.count); err != nil || n != c.want {
			t.Errorf("%s, %d elements: %d bytes (%v), want %d", x.name, c.count, n, err, c.want)
		}
	}
	dbl := predefTypeArr[0x214-hDatatypeNull]
	for _, c := range []struct {
		name  string
		t     *dtype.Type
		pre   bool
		count int64
	}{
		{"MPI_DOUBLE, 2^62 elements", dbl.t, true, 1 << 62},
		{"struct{int, double}, 2^62 elements", s, false, 1 << 62},
		{"contiguous(0, MPI_INT), 1 element", must(dtype.Contiguous(0, i32)), false, 1},
	} {
		if n, err := elementBytes(c.t, c.pre, c.count); !errors.Is(err, comm.ErrCount) {
			t.Errorf("%s: %d bytes, %v; want ErrCount", c.name, n, err)
		}
	}
	if n, err := elementBytes(must(dtype.Contiguous(0, i32)), false, 0); n != 0 || err != nil {
		t.Errorf("contiguous(0, MPI_INT), 0 elements: %d bytes, %v; want 0", n, err)
	}
}
