//go:build !mpi

package comm

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestFifoModel runs random pushes and takes (mostly near the front, as
// matching does) against a plain slice, checking order and contents, and
// that taken cells are cleared (no pointer kept alive).
func TestFifoModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var q fifo[*int]
	var model []*int
	for step := range 200000 {
		switch n := len(model); {
		case n == 0 || rng.IntN(3) > 0 && n < 300:
			v := new(int)
			*v = step
			q.push(v)
			model = append(model, v)
		case rng.IntN(20) == 0:
			q.reset()
			model = model[:0]
		case rng.IntN(20) == 0:
			notThird := func(v *int) bool { return *v%3 != 0 }
			q.keep(notThird)
			model = slices.DeleteFunc(model, func(v *int) bool { return !notThird(v) })
		default:
			i := 0
			if rng.IntN(4) == 0 {
				i = rng.IntN(n)
			}
			q.take(i)
			model = slices.Delete(model, i, i+1)
		}
		if got := q.all(); !slices.Equal(got, model) {
			t.Fatalf("step %d: queue holds %d items, model %d (or different ones)", step, len(got), len(model))
		}
		for i, x := range q.items[:q.head] {
			if x != nil {
				t.Fatalf("step %d: taken cell %d still holds an item", step, i)
			}
		}
		for i, x := range q.items[len(q.items):cap(q.items)] {
			if x != nil {
				t.Fatalf("step %d: spare cell %d still holds an item", step, i)
			}
		}
	}
}

// TestSlab checks that a slab hands out distinct zero values, a new array
// each n, and says when it made one.
func TestSlab(t *testing.T) {
	var s slab[[2]int]
	seen := map[*[2]int]bool{}
	for i := range 10 {
		x, fresh := s.take(4)
		if fresh != (i%4 == 0) {
			t.Fatalf("take %d: fresh %v", i, fresh)
		}
		if *x != [2]int{} || seen[x] {
			t.Fatalf("take %d: %v, seen before %v", i, *x, seen[x])
		}
		seen[x] = true
		x[0] = i + 1 // the caller's to write
	}
}
