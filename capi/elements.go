//go:build !mpi

package main

import (
	"fmt"
	"math"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
)

// Basic elements (MPI 4.1 §5.1.11): MPI_Get_elements counts the basic
// elements of a message received with a datatype, the basic types of its
// type map the data fill, including those of a last, partial instance.
//
// A basic element is one predefined type of the type map; a pair type
// (MPI_DOUBLE_INT and its kin, MPI_2REAL, ...) is two of them there, as
// the standard defines those types as structs of two basic types (MPI 4.1
// §6.9.4). Called
// with a predefined type itself, MPI_Get_elements returns what
// MPI_Get_count does, as the standard says it does (Open MPI counts the
// same ways).

// pairElems are the two basic elements of the pair types, by size.
var pairElems = map[atomics.Type][]int64{
	atomics.FloatIntT:  {4, 4},
	atomics.DoubleIntT: {8, 4},
	atomics.LongIntT:   {8, 4},
	atomics.TwoIntT:    {4, 4},
	atomics.ShortIntT:  {2, 4},
}

// opaqueElems are the basic elements of the predefined types the runtime
// moves as opaque bytes (registerTypes): one of the type's size (long
// double, ...), two halves for the Fortran pairs of reals, and the long
// double and the int of MPI_LONG_DOUBLE_INT.
var opaqueElems = map[*dtype.Type][]int64{}

// opaqueHandles are the handles of the opaque predefined types.
var opaqueHandles = map[*dtype.Type]uintptr{}

// noteOpaque records predefined type t of handle h and the given name,
// made of bytes.
func noteOpaque(h uintptr, name string, t *dtype.Type) {
	opaqueHandles[t] = h
	switch name {
	case "MPI_2REAL", "MPI_2DOUBLE_PRECISION":
		opaqueElems[t] = []int64{t.Size() / 2, t.Size() / 2}
	case "MPI_LONG_DOUBLE_INT":
		opaqueElems[t] = []int64{16, 4}
	default:
		opaqueElems[t] = []int64{t.Size()}
	}
}

// leafElems are the basic elements of t, by size, if t is a predefined
// type (named, or one of the opaque ones).
func leafElems(t *dtype.Type) ([]int64, bool) {
	if e, ok := opaqueElems[t]; ok {
		return e, true
	}
	if c, _, _, _ := t.Envelope(); c != dtype.CombinerNamed {
		return nil, false
	}
	e, ok := t.Elem()
	if !ok {
		return []int64{1}, true // MPI_BYTE, MPI_PACKED
	}
	if p, ok := pairElems[e]; ok {
		return p, true
	}
	return []int64{t.Size()}, true
}

// elemCounter counts basic elements of a committed type's instances,
// remembering each old type's count (a struct of many blocks of one type
// walks that type once).
type elemCounter map[*dtype.Type]int64

// perInstance is the number of basic elements in one instance of t.
func (m elemCounter) perInstance(t *dtype.Type) int64 {
	if n, ok := m[t]; ok {
		return n
	}
	var n int64
	if e, ok := leafElems(t); ok {
		n = int64(len(e))
	} else {
		comb, ints, _, olds := t.Envelope()
		if comb == dtype.CombinerStruct {
			for i, o := range olds {
				n += int64(ints[i]) * m.perInstance(o)
			}
		} else if o := olds[0]; o.Size() > 0 {
			// Every other constructor is copies of one old type (their
			// order does not change a count): size(t) / size(old) of them.
			n = t.Size() / o.Size() * m.perInstance(o)
		}
	}
	m[t] = n
	return n
}

// prefix is the number of basic elements in the first r bytes of one
// instance's data (0 <= r <= t.Size()), in type-map order; false when the
// r bytes end inside a basic element.
func (m elemCounter) prefix(t *dtype.Type, r int64) (int64, bool) {
	if r == 0 {
		return 0, true
	}
	if e, ok := leafElems(t); ok {
		var n int64
		for _, sz := range e {
			if r < sz {
				return n, false
			}
			r -= sz
			if n++; r == 0 {
				return n, true
			}
		}
		return n, false // past the type's data: not a prefix
	}
	comb, ints, _, olds := t.Envelope()
	if comb != dtype.CombinerStruct {
		return m.copies(olds[0], r)
	}
	var n int64
	for i, o := range olds {
		block := int64(ints[i]) * o.Size()
		if r <= block {
			k, ok := m.copies(o, r)
			return n + k, ok
		}
		n += int64(ints[i]) * m.perInstance(o)
		r -= block
	}
	return n, false
}

// copies is the number of basic elements in the first r bytes of
// consecutive instances of t.
func (m elemCounter) copies(t *dtype.Type, r int64) (int64, bool) {
	sz := t.Size()
	if sz == 0 {
		return 0, r == 0
	}
	k, ok := m.prefix(t, r%sz)
	return r/sz*m.perInstance(t) + k, ok
}

// elementsOf is MPI_Get_elements' answer for n bytes received with t: the
// basic elements in them, false when they end inside one. A predefined
// type (pre) counts whole instances, as MPI_Get_count does; a type of
// size 0 holds none, whatever arrived (0, as MPI_Get_count says).
func elementsOf(t *dtype.Type, pre bool, n int64) (int64, bool) {
	size := t.Size()
	switch {
	case size == 0:
		return 0, true
	case pre:
		return n / size, n%size == 0
	}
	return elemCounter{}.copies(t, n)
}

// elementBytes is elementsOf's inverse, for MPI_Status_set_elements: the
// bytes that hold count basic elements of consecutive instances of t in
// type-map order (the whole instances they make, then a prefix of the
// next one's type map), which elementsOf counts as count. A predefined
// type (pre) takes count whole instances, as MPI_Get_elements counts
// them. ErrCount when no number of bytes holds count: a type of no basic
// elements (and count > 0), or more bytes than an MPI_Count counts.
func elementBytes(t *dtype.Type, pre bool, count int64) (int64, error) {
	tooMany := fmt.Errorf("%d basic elements of %v are more bytes than an MPI_Count counts: %w", count, t, comm.ErrCount)
	if size := t.Size(); pre {
		if count > math.MaxInt64/size {
			return 0, tooMany
		}
		return count * size, nil
	}
	m := elemCounter{}
	if m.perInstance(t) == 0 {
		if count == 0 {
			return 0, nil
		}
		return 0, fmt.Errorf("count %d of %v, which holds no basic elements: %w", count, t, comm.ErrCount)
	}
	n, ok := m.copiesBytes(t, count)
	if !ok {
		return 0, tooMany
	}
	return n, nil
}

// copiesBytes is the bytes of the first k basic elements of consecutive
// instances of t (copies' inverse); false if they overflow an int64. t
// holds basic elements.
func (m elemCounter) copiesBytes(t *dtype.Type, k int64) (int64, bool) {
	per, size := m.perInstance(t), t.Size()
	q, r := k/per, k%per
	if q > math.MaxInt64/size {
		return 0, false
	}
	b := q * size
	rb := m.prefixBytes(t, r)
	if b > math.MaxInt64-rb {
		return 0, false
	}
	return b + rb, true
}

// prefixBytes is the bytes of the first r basic elements of one instance
// of t, in type-map order (prefix's inverse), 0 <= r < perInstance(t):
// fewer than t's size, which they cannot overflow.
func (m elemCounter) prefixBytes(t *dtype.Type, r int64) int64 {
	if r == 0 {
		return 0
	}
	if e, ok := leafElems(t); ok {
		var n int64
		for _, sz := range e[:r] {
			n += sz
		}
		return n
	}
	comb, ints, _, olds := t.Envelope()
	if comb != dtype.CombinerStruct {
		n, _ := m.copiesBytes(olds[0], r)
		return n
	}
	var n int64
	for i, o := range olds {
		k := int64(ints[i]) * m.perInstance(o)
		if r <= k {
			b, _ := m.copiesBytes(o, r)
			return n + b
		}
		n += int64(ints[i]) * o.Size()
		r -= k
	}
	return n // not reached: r < perInstance(t)
}
