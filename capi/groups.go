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

// newGroup registers g and returns its handle (MPI_GROUP_EMPTY for an
// empty group).
func newGroup(g *comm.Group) C.uintptr_t {
	if g == nil || g.Size() == 0 {
		return hGroupEmpty
	}
	return C.uintptr_t(add(tab.groups, g))
}

// groupOf is group handle h's group.
func groupOf(h uintptr) (*comm.Group, error) {
	if h == hGroupEmpty {
		return emptyGroup(), nil
	}
	if g, ok := get(tab.groups, h); ok {
		return g, nil
	}
	if h == hGroupNull {
		return nil, fmt.Errorf("MPI_GROUP_NULL: %w", comm.ErrGroup)
	}
	return nil, fmt.Errorf("an invalid group (handle %#x): %w", h, comm.ErrGroup)
}

// emptyGroup is the world's group with every rank excluded.
func emptyGroup() *comm.Group {
	w, ok := get(tab.comms, hCommWorld)
	if !ok {
		return nil
	}
	g := w.c.Group()
	all := make([]int, g.Size())
	for i := range all {
		all[i] = i
	}
	e, _ := g.Excl(all...)
	return e
}

// groupCall runs f on the group handle g for call, raising its errors on
// MPI_COMM_SELF's handler (groups have none of their own).
func groupCall(call string, g C.uintptr_t, f func(*comm.Group) error) C.int {
	if !initialized() {
		return notInit(call)
	}
	grp, err := groupOf(uintptr(g))
	if err == nil {
		err = f(grp)
	}
	if err != nil {
		return raiseSelf(call, err)
	}
	return C.MPI_SUCCESS
}

//export shmGroupSize
func shmGroupSize(g C.uintptr_t, size *C.int) C.int {
	return groupCall("MPI_Group_size", g, func(x *comm.Group) error {
		*size = C.int(x.Size())
		return nil
	})
}

//export shmGroupRank
func shmGroupRank(g C.uintptr_t, rank *C.int) C.int {
	return groupCall("MPI_Group_rank", g, func(x *comm.Group) error {
		*rank = cRank(x.Rank())
		return nil
	})
}

func goInts(p *C.int, n C.int) []int {
	v := cArray(p, int(n))
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

//export shmGroupInclExcl
func shmGroupInclExcl(g C.uintptr_t, n C.int, ranks *C.int, excl C.int, out *C.uintptr_t) C.int {
	call := "MPI_Group_incl"
	if excl != 0 {
		call = "MPI_Group_excl"
	}
	return groupCall(call, g, func(x *comm.Group) error {
		if n < 0 {
			return fmt.Errorf("%d ranks: %w", int(n), comm.ErrArg)
		}
		var y *comm.Group
		var err error
		if excl != 0 {
			y, err = x.Excl(goInts(ranks, n)...)
		} else {
			y, err = x.Incl(goInts(ranks, n)...)
		}
		if err == nil {
			*out = newGroup(y)
		}
		return err
	})
}

//export shmGroupRange
func shmGroupRange(g C.uintptr_t, n C.int, ranges *C.int, excl C.int, out *C.uintptr_t) C.int {
	call := "MPI_Group_range_incl"
	if excl != 0 {
		call = "MPI_Group_range_excl"
	}
	return groupCall(call, g, func(x *comm.Group) error {
		if n < 0 {
			return fmt.Errorf("%d ranges: %w", int(n), comm.ErrArg)
		}
		v := goInts(ranges, 3*n)
		rs := make([][3]int, n)
		for i := range rs {
			rs[i] = [3]int{v[3*i], v[3*i+1], v[3*i+2]}
		}
		var y *comm.Group
		var err error
		if excl != 0 {
			y, err = x.RangeExcl(rs...)
		} else {
			y, err = x.RangeIncl(rs...)
		}
		if err == nil {
			*out = newGroup(y)
		}
		return err
	})
}

//export shmGroupSetOp
func shmGroupSetOp(a, b C.uintptr_t, which C.int, out *C.uintptr_t) C.int {
	call := [...]string{"MPI_Group_union", "MPI_Group_intersection", "MPI_Group_difference"}[which]
	return groupCall(call, a, func(x *comm.Group) error {
		y, err := groupOf(uintptr(b))
		if err != nil {
			return err
		}
		var z *comm.Group
		switch which {
		case 0:
			z, err = x.Union(y)
		case 1:
			z, err = x.Intersection(y)
		default:
			z, err = x.Difference(y)
		}
		if err == nil {
			*out = newGroup(z)
		}
		return err
	})
}

//export shmGroupTranslateRanks
func shmGroupTranslateRanks(a C.uintptr_t, n C.int, ranks *C.int, b C.uintptr_t, out *C.int) C.int {
	return groupCall("MPI_Group_translate_ranks", a, func(x *comm.Group) error {
		y, err := groupOf(uintptr(b))
		if err != nil {
			return err
		}
		in := goInts(ranks, n)
		for i, r := range in {
			in[i] = goRank(C.int(r))
		}
		got, err := x.TranslateRanks(in, y)
		if err != nil {
			return err
		}
		o := cArray(out, int(n))
		for i, r := range got {
			o[i] = cRank(r)
		}
		return nil
	})
}

//export shmGroupCompare
func shmGroupCompare(a, b C.uintptr_t, result *C.int) C.int {
	return groupCall("MPI_Group_compare", a, func(x *comm.Group) error {
		y, err := groupOf(uintptr(b))
		if err == nil {
			*result = cCompare(x.Compare(y))
		}
		return err
	})
}

//export shmGroupFree
func shmGroupFree(g *C.uintptr_t) C.int {
	return groupCall("MPI_Group_free", *g, func(*comm.Group) error {
		if *g != hGroupEmpty {
			drop(tab.groups, uintptr(*g))
		}
		*g = hGroupNull
		return nil
	})
}
