// Command allreduce solves −d²u/dx² = 1 on (0, 1) with u(0) = u(1) = 0 by Jacobi
// iteration on a grid split across the ranks. Each rank keeps its block of
// the grid, in two generations, in a shared window and reads its
// neighbours' edge values straight from their parts; every iteration ends
// with an Allreduce of the squared update, which decides when to stop and is
// also the iteration's synchronization: no rank starts writing the next
// generation before every rank has finished reading the last one.
//
//	go run ./cmd/shmrun -n 4 --oversubscribe ./examples/allreduce [points]
package main

import (
	"fmt"
	"log"
	"math"
	"os"
	"strconv"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/win"
)

func main() {
	world, err := comm.Init()
	if err != nil {
		log.Fatal(err)
	}
	points := 64
	if len(os.Args) > 1 {
		if points, err = strconv.Atoi(os.Args[1]); err != nil || points < world.Size() {
			log.Fatalf("allreduce: points %q: want an integer of at least %d (one a rank)", os.Args[1], world.Size())
		}
	}
	iters, residual, maxErr, err := solve(world, points, 1e-9, 1_000_000)
	if err != nil {
		log.Fatal(err)
	}
	if world.Rank() == 0 {
		fmt.Printf("%d points on %d ranks: %d iterations, update %.1e, max error %.1e\n",
			points, world.Size(), iters, residual, maxErr)
	}
	if err := comm.Finalize(); err != nil {
		log.Fatal(err)
	}
}

// block returns the first grid point and the number of points of rank r
// when points are split as evenly as possible over size ranks.
func block(r, size, points int) (first, count int) {
	q, rem := points/size, points%size
	return r*q + min(r, rem), q + btoi(r < rem)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// solve iterates until the root-mean-square update falls below tol (or
// maxIters) and returns the iterations, the last update and the largest
// error against the exact solution u = x(1-x)/2.
func solve(c *comm.Comm, points int, tol float64, maxIters int) (int, float64, float64, error) {
	me, size := c.Rank(), c.Size()
	first, count := block(me, size, points)
	h := 1 / float64(points+1)
	// Each rank's part: generation 0, then generation 1, count values each.
	w, err := win.AllocateShared(c, 16*count, 8, nil)
	if err != nil {
		return 0, 0, 0, err
	}
	defer w.Free()
	parts := make([][]float64, size)
	for r := range size {
		seg, err := w.SharedQuery(r)
		if err != nil {
			return 0, 0, 0, err
		}
		if parts[r], err = win.View[float64](seg.Bytes); err != nil {
			return 0, 0, 0, err
		}
	}
	gen := func(r, g int) []float64 {
		_, n := block(r, size, points)
		return parts[r][g*n : (g+1)*n]
	}
	// edge returns the value of generation g just left (side -1) or right
	// (+1) of this rank's block: a neighbour's, or the boundary's 0.
	edge := func(g, side int) float64 {
		r := me + side
		if r < 0 || r >= size {
			return 0
		}
		v := gen(r, g)
		if side < 0 {
			return v[len(v)-1]
		}
		return v[0]
	}
	// The window starts zeroed: u = 0 is the first guess. The first
	// Allreduce below orders every rank's view of it.
	sum := []float64{0}
	it, rms := 0, math.Inf(1)
	for it < maxIters && rms > tol {
		old, next := gen(me, it&1), gen(me, (it+1)&1)
		left, right := edge(it&1, -1), edge(it&1, +1)
		local := 0.0
		for i := range next {
			l, r := left, right
			if i > 0 {
				l = old[i-1]
			}
			if i < count-1 {
				r = old[i+1]
			}
			next[i] = (l + r + h*h) / 2
			d := next[i] - old[i]
			local += d * d
		}
		if err := comm.Allreduce(c, []float64{local}, sum, atomics.Sum); err != nil {
			return 0, 0, 0, err
		}
		rms = math.Sqrt(sum[0] / float64(points))
		it++
	}
	maxErr := 0.0
	for i, u := range gen(me, it&1) {
		x := float64(first+i+1) * h
		maxErr = max(maxErr, math.Abs(u-x*(1-x)/2))
	}
	errs := []float64{0}
	if err := comm.Reduce(c, []float64{maxErr}, errs, atomics.Max, 0); err != nil {
		return 0, 0, 0, err
	}
	return it, rms, errs[0], nil
}
