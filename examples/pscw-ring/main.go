// Command pscw-ring passes a token around a ring of ranks with generalized
// active-target synchronization: in each round every rank exposes its window
// to its left neighbour (Post) and accesses its right neighbour's (Start),
// puts the token it holds there, and closes both epochs (Complete, Wait).
//
//	go run ./cmd/shmrun -n 4 --oversubscribe ./examples/pscw-ring
package main

import (
	"fmt"
	"log"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/win"
)

const rounds = 1000

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
	w, err := win.AllocateShared(world, 8, 8, nil)
	if err != nil {
		return err
	}
	defer w.Free()
	box, err := win.View[int64](w.Local())
	if err != nil {
		return err
	}
	left, right := (rank+size-1)%size, (rank+1)%size
	all := world.Group()
	from, err := all.Incl(left)
	if err != nil {
		return err
	}
	to, err := all.Incl(right)
	if err != nil {
		return err
	}
	token := int64(rank) // each rank starts with its own number
	for range rounds {
		if err := w.Post(from, 0); err != nil {
			return err
		}
		if err := w.Start(to, 0); err != nil {
			return err
		}
		if err := win.PutT(w, []int64{token + 1}, right, 0); err != nil {
			return err
		}
		if err := w.Complete(); err != nil {
			return err
		}
		if err := w.Wait(); err != nil {
			return err
		}
		token = box[0] // what the left neighbour put
	}
	// After r rounds, the token here started at rank-r (mod size) and gained r.
	want := int64((rank-rounds%size+size)%size) + rounds
	if token != want {
		return fmt.Errorf("rank %d: token %d, want %d", rank, token, want)
	}
	if rank == 0 {
		fmt.Printf("pscw-ring: %d ranks, %d rounds: ok\n", size, rounds)
	}
	return nil
}
