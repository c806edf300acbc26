// Command halo-put is the halo exchange of halo-load done with RMA instead of
// loads: each rank Puts its edge cells into its neighbours' ghost cells and a
// Fence ends each exchange.
//
//	go run ./cmd/shmrun -n 4 --oversubscribe ./examples/halo-put
package main

import (
	"fmt"
	"log"
	"math"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/win"
)

const (
	cells = 1000 // interior cells per rank; the strip is [ghost, cells..., ghost]
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
	w, err := win.Allocate(world, (cells+2)*8, 8, nil)
	if err != nil {
		return err
	}
	defer w.Free()
	u, err := win.View[float64](w.Local())
	if err != nil {
		return err
	}
	for i := 1; i <= cells; i++ {
		u[i] = float64(rank*cells + i - 1)
	}
	next := make([]float64, cells+2)
	if err := w.Fence(win.ModeNoPrecede); err != nil {
		return err
	}
	for range steps {
		// My first interior cell is my left neighbour's right ghost, and so on.
		if rank > 0 {
			if err := win.PutT(w, u[1:2], rank-1, cells+1); err != nil {
				return err
			}
		}
		if rank < size-1 {
			if err := win.PutT(w, u[cells:cells+1], rank+1, 0); err != nil {
				return err
			}
		}
		if err := w.Fence(0); err != nil { // ghosts have arrived
			return err
		}
		if rank == 0 {
			u[0] = 2*u[1] - u[2] // fixed ends: extrapolate the ramp
		}
		if rank == size-1 {
			u[cells+1] = 2*u[cells] - u[cells-1]
		}
		for i := 1; i <= cells; i++ {
			next[i] = (u[i-1] + 2*u[i] + u[i+1]) / 4
		}
		copy(u[1:cells+1], next[1:cells+1])
		if err := w.Fence(0); err != nil { // nobody puts into u while we read it
			return err
		}
	}
	if err := w.Fence(win.ModeNoSucceed); err != nil {
		return err
	}
	for i := 1; i <= cells; i++ {
		if want := float64(rank*cells + i - 1); math.Abs(u[i]-want) > 1e-9 {
			return fmt.Errorf("rank %d: cell %d is %v, want %v", rank, i-1, u[i], want)
		}
	}
	if rank == 0 {
		fmt.Printf("halo-put: %d ranks x %d cells, %d steps: ok\n", size, cells, steps)
	}
	return nil
}
