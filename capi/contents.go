//go:build !mpi

package main

/*
#include "mpi.h"
*/
import "C"

import (
	"fmt"

	"github.com/shmrun/shmrun/comm"
)

// Decoding datatypes (MPI 4.1 §5.1.13): MPI_Type_get_envelope says how a
// datatype was made, MPI_Type_get_contents returns the arguments of the
// constructor call that made it, as the program gave them (the old types'
// handles too: a predefined one as it was, a derived one as a new handle
// the program frees).

// madeBy is the constructor call that made a derived datatype: its
// combiner and its integer, address and (for the large-count _c
// constructors) MPI_Count arguments, in the standard's order for that
// combiner, and its old types.
type madeBy struct {
	comb   C.int
	ints   []int64
	addrs  []int64
	counts []int64
	olds   []oldType
}

// oldType is a constructor's old type: a predefined handle (x nil), or a
// derived type's object, kept here after the program frees its handle.
type oldType struct {
	h uintptr
	x *typeH
}

// made records a constructor call of combiner comb with the integer (or,
// large, MPI_Count) arguments iv, the address arguments av and the old
// types' handles (which the constructor has checked).
func made(comb C.int, large bool, iv, av []int64, olds ...C.uintptr_t) *madeBy {
	m := &madeBy{comb: comb, ints: iv, addrs: av}
	if large {
		m.ints, m.counts = nil, iv
	}
	for _, h := range olds {
		x, err := typeOf(uintptr(h))
		switch {
		case err != nil:
			return nil // the constructor fails on it
		case x.pre:
			m.olds = append(m.olds, oldType{h: uintptr(h)})
		default:
			m.olds = append(m.olds, oldType{x: x})
		}
	}
	return m
}

// int64s widens v.
func int64s(v []int) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

// madeOf is how the datatype of handle h was made: nil for a predefined
// one (MPI_COMBINER_NAMED).
func madeOf(h C.uintptr_t) (*madeBy, error) {
	x, err := typeOf(uintptr(h))
	if err != nil {
		return nil, err
	}
	if x.pre {
		return nil, nil
	}
	if x.made == nil {
		return nil, fmt.Errorf("datatype %#x records no constructor call: %w", uintptr(h), comm.ErrType)
	}
	return x.made, nil
}

// shmTypeGetEnvelope is MPI_Type_get_envelope and (large) its _c form:
// the int form cannot say how many MPI_Count arguments a _c constructor
// took, so for such a type it is MPI_ERR_TYPE.
//
//export shmTypeGetEnvelope
func shmTypeGetEnvelope(h C.uintptr_t, ni, na, nc, nd *C.int64_t, comb *C.int, large C.int) C.int {
	call := cName("MPI_Type_get_envelope", large != 0)
	return typeCall(call, func() error {
		m, err := madeOf(h)
		if err != nil {
			return err
		}
		if m == nil {
			*ni, *na, *nc, *nd, *comb = 0, 0, 0, 0, C.MPI_COMBINER_NAMED
			return nil
		}
		if len(m.counts) > 0 && large == 0 {
			return fmt.Errorf("datatype %#x was made by a large-count constructor (its %d MPI_Count arguments): MPI_Type_get_envelope_c says so: %w", uintptr(h), len(m.counts), comm.ErrType)
		}
		*ni, *na, *nc, *nd, *comb = C.int64_t(len(m.ints)), C.int64_t(len(m.addrs)), C.int64_t(len(m.counts)), C.int64_t(len(m.olds)), m.comb
		return nil
	})
}

// shmTypeGetContents is MPI_Type_get_contents and (large) its _c form:
// the arrays of at most maxi, maxa, maxc and maxd entries get the
// constructor's arguments; a derived old type's entry is a new handle.
//
//export shmTypeGetContents
func shmTypeGetContents(h C.uintptr_t, maxi, maxa, maxc, maxd C.int64_t, ip *C.int, ap *C.MPI_Aint, cp *C.MPI_Count, dp *C.uintptr_t, large C.int) C.int {
	call := cName("MPI_Type_get_contents", large != 0)
	return typeCall(call, func() error {
		m, err := madeOf(h)
		if err != nil {
			return err
		}
		if m == nil {
			return fmt.Errorf("datatype %#x is predefined (MPI_COMBINER_NAMED): it has no contents: %w", uintptr(h), comm.ErrType)
		}
		if len(m.counts) > 0 && large == 0 {
			return fmt.Errorf("datatype %#x was made by a large-count constructor: MPI_Type_get_contents_c returns its MPI_Count arguments: %w", uintptr(h), comm.ErrType)
		}
		for _, a := range []struct {
			what string
			max  C.int64_t
			n    int
			p    bool
		}{{"max_integers", maxi, len(m.ints), ip != nil}, {"max_addresses", maxa, len(m.addrs), ap != nil},
			{"max_large_counts", maxc, len(m.counts), cp != nil}, {"max_datatypes", maxd, len(m.olds), dp != nil}} {
			switch {
			case int64(a.max) < int64(a.n):
				return fmt.Errorf("%s is %d: the constructor took %d: %w", a.what, int64(a.max), a.n, comm.ErrArg)
			case a.n > 0 && !a.p:
				return fmt.Errorf("the array for %s is NULL: %w", a.what, comm.ErrArg)
			}
		}
		iv, av, cv := cArray(ip, len(m.ints)), cArray(ap, len(m.addrs)), cArray(cp, len(m.counts))
		for i, v := range m.ints {
			iv[i] = C.int(v)
		}
		for i, v := range m.addrs {
			av[i] = C.MPI_Aint(v)
		}
		for i, v := range m.counts {
			cv[i] = C.MPI_Count(v)
		}
		out := cArray(dp, len(m.olds))
		for i, o := range m.olds {
			if o.x == nil {
				out[i] = C.uintptr_t(o.h)
				continue
			}
			tab.RLock()
			dup := typeH{t: o.x.t, name: o.x.name, made: o.x.made} // a new object: no attributes
			tab.RUnlock()
			out[i] = C.uintptr_t(add(tab.types, &dup))
		}
		return nil
	})
}
