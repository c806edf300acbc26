package dtype_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/dtype"
)

// darrayOwner is the grid coordinate along one dimension that holds index
// i, the slow, obvious way.
func darrayOwner(i, gsize int, dist dtype.Distrib, darg, psize int) int {
	switch dist {
	case dtype.DistributeNone:
		return 0
	case dtype.DistributeBlock:
		b := darg
		if b == dtype.DefaultDarg {
			b = (gsize + psize - 1) / psize
		}
		return i / b
	}
	k := darg
	if k == dtype.DefaultDarg {
		k = 1
	}
	return i / k % psize
}

// darrayWant is the byte offsets of rank's elements of the array, in the
// array's order: every global index, walked in that order, kept if rank
// holds it along every dimension.
func darrayWant(rank int, gsizes []int, distribs []dtype.Distrib, dargs, psizes []int, order dtype.Order, ext int64) []int64 {
	n := len(gsizes)
	coords := make([]int, n)
	for d, r := n-1, rank; d >= 0; d-- {
		coords[d], r = r%psizes[d], r/psizes[d]
	}
	idx := make([]int, n)
	var out []int64
	for {
		mine := true
		for d := range n {
			if darrayOwner(idx[d], gsizes[d], distribs[d], dargs[d], psizes[d]) != coords[d] {
				mine = false
			}
		}
		if mine {
			off, s := int64(0), ext
			if order == dtype.OrderC {
				for d := n - 1; d >= 0; d-- {
					off += int64(idx[d]) * s
					s *= int64(gsizes[d])
				}
			} else {
				for d := range n {
					off += int64(idx[d]) * s
					s *= int64(gsizes[d])
				}
			}
			out = append(out, off)
		}
		// the next index in the array's order
		k := 0
		for ; k < n; k++ {
			d := k // Fortran: the first dimension fastest
			if order == dtype.OrderC {
				d = n - 1 - k
			}
			if idx[d]++; idx[d] < gsizes[d] {
				break
			}
			idx[d] = 0
		}
		if k == n {
			return out
		}
	}
}

// TestDarray checks every process's part of several distributions
// against the element-by-element reference: the offsets in order, the
// size, and the extent (the whole array's, lower bound 0); and that the
// processes' parts tile the array exactly once.
func TestDarray(t *testing.T) {
	i32 := dtype.Basic(atomics.Int32)
	const (
		B = dtype.DistributeBlock
		C = dtype.DistributeCyclic
		N = dtype.DistributeNone
		D = dtype.DefaultDarg
	)
	cases := []struct {
		gsizes   []int
		distribs []dtype.Distrib
		dargs    []int
		psizes   []int
	}{
		{[]int{10}, []dtype.Distrib{B}, []int{D}, []int{3}},
		{[]int{10}, []dtype.Distrib{C}, []int{D}, []int{3}},
		{[]int{10}, []dtype.Distrib{C}, []int{2}, []int{3}},
		{[]int{10}, []dtype.Distrib{B}, []int{4}, []int{3}},
		{[]int{7, 5}, []dtype.Distrib{B, B}, []int{D, D}, []int{2, 2}},
		{[]int{7, 5}, []dtype.Distrib{C, B}, []int{2, D}, []int{2, 3}},
		{[]int{6, 9}, []dtype.Distrib{N, C}, []int{D, 2}, []int{1, 4}},
		{[]int{4, 3, 5}, []dtype.Distrib{B, C, C}, []int{D, 1, 3}, []int{2, 1, 2}},
		{[]int{3}, []dtype.Distrib{B}, []int{D}, []int{5}}, // processes with nothing
	}
	for _, c := range cases {
		size := 1
		for _, p := range c.psizes {
			size *= p
		}
		elems := 1
		for _, g := range c.gsizes {
			elems *= g
		}
		for _, order := range []dtype.Order{dtype.OrderC, dtype.OrderFortran} {
			name := fmt.Sprint(c.gsizes, c.distribs, c.dargs, c.psizes, order)
			seen := make([]int, elems)
			for rank := range size {
				dt, err := dtype.Darray(size, rank, c.gsizes, c.distribs, c.dargs, c.psizes, order, i32)
				if err != nil {
					t.Fatalf("%s rank %d: %v", name, rank, err)
				}
				if err := dt.Commit(); err != nil {
					t.Fatal(err)
				}
				want := darrayWant(rank, c.gsizes, c.distribs, c.dargs, c.psizes, order, 4)
				var got []int64
				if err := dt.Each(1, func(off, n int64) bool {
					for o := off; o < off+n; o += 4 {
						got = append(got, o)
					}
					return true
				}); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s rank %d: offsets %v, want %v", name, rank, got, want)
				}
				if dt.Size() != int64(4*len(want)) || dt.LB() != 0 || dt.Extent() != int64(4*elems) {
					t.Errorf("%s rank %d: size %d lb %d extent %d, want %d 0 %d", name, rank, dt.Size(), dt.LB(), dt.Extent(), 4*len(want), 4*elems)
				}
				for _, o := range want {
					seen[o/4]++
				}
				comb, ints, _, olds := dt.Envelope()
				if comb != dtype.CombinerDarray || ints[0] != size || ints[1] != rank || len(olds) != 1 || olds[0] != i32 {
					t.Errorf("%s rank %d: envelope %v %v %v", name, rank, comb, ints, olds)
				}
			}
			for i, k := range seen {
				if k != 1 {
					t.Errorf("%s: element %d held by %d processes", name, i, k)
				}
			}
		}
	}
}

// TestDarrayErrors checks that bad arguments are ErrArg, naming the call.
func TestDarrayErrors(t *testing.T) {
	i32 := dtype.Basic(atomics.Int32)
	B, C, N, D := dtype.DistributeBlock, dtype.DistributeCyclic, dtype.DistributeNone, dtype.DefaultDarg
	for _, c := range []struct {
		what          string
		size, rank    int
		gsizes        []int
		distribs      []dtype.Distrib
		dargs, psizes []int
		order         dtype.Order
	}{
		{"rank past size", 2, 2, []int{4}, []dtype.Distrib{B}, []int{D}, []int{2}, dtype.OrderC},
		{"grid not size", 3, 0, []int{4}, []dtype.Distrib{B}, []int{D}, []int{2}, dtype.OrderC},
		{"blocks too small", 2, 0, []int{9}, []dtype.Distrib{B}, []int{4}, []int{2}, dtype.OrderC},
		{"none with psize 2", 2, 0, []int{4}, []dtype.Distrib{N}, []int{D}, []int{2}, dtype.OrderC},
		{"darg 0", 2, 0, []int{4}, []dtype.Distrib{C}, []int{0}, []int{2}, dtype.OrderC},
		{"gsize 0", 2, 0, []int{0}, []dtype.Distrib{C}, []int{D}, []int{2}, dtype.OrderC},
		{"bad order", 2, 0, []int{4}, []dtype.Distrib{C}, []int{D}, []int{2}, 9},
		{"bad distrib", 2, 0, []int{4}, []dtype.Distrib{9}, []int{D}, []int{2}, dtype.OrderC},
		{"lengths differ", 2, 0, []int{4, 4}, []dtype.Distrib{C}, []int{D}, []int{2}, dtype.OrderC},
	} {
		_, err := dtype.Darray(c.size, c.rank, c.gsizes, c.distribs, c.dargs, c.psizes, c.order, i32)
		if !errors.Is(err, dtype.ErrArg) {
			t.Errorf("%s: %v, want ErrArg", c.what, err)
		}
	}
}
