// Command halo-load runs a 1-D Jacobi smoothing where each rank owns a strip
// of a shared window and reads its neighbours' boundary cells by plain loads
// through SharedQuery — no copies. The pattern (LockAll for the whole run;
// Sync + Barrier + Sync around each step) is the one taught for MPI-3 shared
// memory: Sync makes this rank's stores visible and the others' visible to it;
// the Barrier orders the ranks.
//
//	go run ./cmd/shmrun -n 4 --oversubscribe ./examples/halo-load
package main

import (
	"fmt"
	"log"
	"math"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/win"
)

const (
	cells = 1000 // per rank
	steps = 200
)

func main() {
	world, err := comm.Init()
	if err != nil {
		log.Fatal(err)
	}
	if err := run(world); err != nil {
		log.Fatal(err)
	}
	if err := comm.Finalize(); err != nil {
		log.Fatal(err)
	}
}

func run(world *comm.Comm) error {
	rank, size := world.Rank(), world.Size()
	// Two buffers (old and new) per rank, contiguous across ranks.
	w, err := win.AllocateShared(world, 2*cells*8, 8, nil)
	if err != nil {
		return err
	}
	defer w.Free()
	mine, err := win.View[float64](w.Local())
	if err != nil {
		return err
	}
	// The left and right neighbours' buffers, through this process's mapping.
	left, right := neighbour(w, rank-1), neighbour(w, rank+1)
	for i := range cells {
		mine[i] = float64(rank*cells + i) // a ramp: smoothing keeps its interior
	}
	if err := w.LockAll(win.ModeNoCheck); err != nil {
		return err
	}
	cur := 0
	for range steps {
		if err := step(w, world, mine, left, right, cur); err != nil {
			return err
		}
		cur = 1 - cur
	}
	if err := w.UnlockAll(); err != nil {
		return err
	}
	// The ramp is a fixed point of the smoothing, edges included: a stale or
	// torn read of a neighbour's edge would show up in the edge cells.
	for i := range cells {
		want, got := float64(rank*cells+i), mine[cur*cells+i]
		if math.Abs(got-want) > 1e-9 {
			return fmt.Errorf("rank %d: cell %d is %v, want %v", rank, i, got, want)
		}
	}
	if rank == 0 {
		fmt.Printf("halo-load: %d ranks x %d cells, %d steps: ok\n", size, cells, steps)
	}
	return nil
}

// step computes new = smooth(old) over this rank's strip, reading the
// neighbours' edge cells of old by plain loads.
func step(w *win.Win, world *comm.Comm, mine, left, right []float64, cur int) error {
	old, next := mine[cur*cells:(cur+1)*cells], mine[(1-cur)*cells:(2-cur)*cells]
	if err := w.Sync(); err != nil { // publish old, see the neighbours' old
		return err
	}
	if err := world.Barrier(); err != nil {
		return err
	}
	if err := w.Sync(); err != nil {
		return err
	}
	for i := range cells {
		l, r := edge(old, left, i-1, cur), edge(old, right, i+1, cur)
		next[i] = (l + 2*old[i] + r) / 4
	}
	// Nobody may overwrite old before every neighbour has read its edge.
	return world.Barrier()
}

// edge reads cell i of old, or the neighbour's edge cell when i is outside;
// at the ends of the whole domain the boundary stays fixed (ramp extrapolated).
func edge(old, nb []float64, i, cur int) float64 {
	switch {
	case i >= 0 && i < cells:
		return old[i]
	case nb == nil && i < 0:
		return 2*old[0] - old[1]
	case nb == nil:
		return 2*old[cells-1] - old[cells-2]
	case i < 0:
		return nb[cur*cells+cells-1]
	default:
		return nb[cur*cells]
	}
}

func neighbour(w *win.Win, r int) []float64 {
	if r < 0 || r >= w.Size() {
		return nil
	}
	seg, err := w.SharedQuery(r)
	if err != nil {
		log.Fatal(err)
	}
	v, err := win.View[float64](seg.Bytes)
	if err != nil {
		log.Fatal(err)
	}
	return v
}
