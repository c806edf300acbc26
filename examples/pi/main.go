// Command pi computes π by the midpoint rule on 4/(1+x²) over [0,1]: each rank
// sums its share of the intervals into its own slot of a shared window, and
// rank 0 adds the slots after a fence.
//
//	go run ./cmd/shmrun -n 4 --oversubscribe ./examples/pi [intervals]
package main

import (
	"fmt"
	"log"
	"os"
	"strconv"

	"github.com/shmrun/shmrun/comm"
)

func main() {
	world, err := comm.Init()
	if err != nil {
		log.Fatal(err)
	}
	n := 10_000_000
	if len(os.Args) > 1 {
		if n, err = strconv.Atoi(os.Args[1]); err != nil || n < 1 {
			log.Fatalf("pi: intervals %q: want a positive integer", os.Args[1])
		}
	}
	sum := partialSum(world.Rank(), world.Size(), n)
	total, err := reduceSum(world, sum)
	if err != nil {
		log.Fatal(err)
	}
	if world.Rank() == 0 {
		fmt.Printf("pi ≈ %.15f with %d intervals on %d ranks\n", total, n, world.Size())
	}
	if err := comm.Finalize(); err != nil {
		log.Fatal(err)
	}
}

// partialSum integrates the intervals rank, rank+size, rank+2*size, ...
func partialSum(rank, size, n int) float64 {
	h := 1.0 / float64(n)
	s := 0.0
	for i := rank; i < n; i += size {
		x := h * (float64(i) + 0.5)
		s += 4 / (1 + x*x)
	}
	return s * h
}
