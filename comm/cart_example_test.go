//go:build !mpi

package comm_test

import (
	"fmt"
	"sync"

	"github.com/shmrun/shmrun/comm"
)

// A 2-D periodic grid of 6 ranks: DimsCreate picks 3x2, CartCreate lays
// the ranks out row by row, and CartShift names each rank's neighbours
// along both dimensions (the ranks here are goroutines of a heap-backed
// world, as in tests; under shmrun -n 6 each would be a process calling
// comm.Init).
func ExampleComm_CartShift() {
	ranks, err := comm.NewLocalWorld(6)
	if err != nil {
		panic(err)
	}
	lines := make([]string, len(ranks))
	var wg sync.WaitGroup
	for i, c := range ranks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dims := []int{0, 0}
			if err := comm.DimsCreate(c.Size(), dims); err != nil {
				panic(err)
			}
			grid, err := c.CartCreate(dims, []bool{true, true}, false)
			if err != nil {
				panic(err)
			}
			defer grid.Free()
			_, _, coords, _ := grid.CartGet()
			up, down, _ := grid.CartShift(0, 1) // source and dest along dimension 0
			left, right, _ := grid.CartShift(1, 1)
			lines[i] = fmt.Sprintf("rank %d at %v: dim 0 from %d to %d, dim 1 from %d to %d", grid.Rank(), coords, up, down, left, right)
		}()
	}
	wg.Wait()
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// rank 0 at [0 0]: dim 0 from 4 to 2, dim 1 from 1 to 1
	// rank 1 at [0 1]: dim 0 from 5 to 3, dim 1 from 0 to 0
	// rank 2 at [1 0]: dim 0 from 0 to 4, dim 1 from 3 to 3
	// rank 3 at [1 1]: dim 0 from 1 to 5, dim 1 from 2 to 2
	// rank 4 at [2 0]: dim 0 from 2 to 0, dim 1 from 5 to 5
	// rank 5 at [2 1]: dim 0 from 3 to 1, dim 1 from 4 to 4
}
