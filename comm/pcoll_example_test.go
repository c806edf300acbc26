//go:build !mpi

package comm_test

import (
	"fmt"
	"sync"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
)

// A convergence loop with a persistent Allreduce: made once, its buffers
// refilled and the operation started every iteration, and completed
// after the rank's own work of the iteration (the ranks here are
// goroutines of a heap-backed world, as in tests; under shmrun -n 3 each
// would be a process calling comm.Init).
func ExampleAllreduceInit() {
	ranks, err := comm.NewLocalWorld(3)
	if err != nil {
		panic(err)
	}
	lines := make([]string, len(ranks))
	var wg sync.WaitGroup
	for i, c := range ranks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local, global := []float64{0}, []float64{0}
			req, err := comm.AllreduceInit(c, local, global, atomics.Max)
			if err != nil {
				panic(err)
			}
			defer req.Free()
			residual := float64(c.Rank()+1) * 8
			for iter := 1; ; iter++ {
				residual /= 2
				local[0] = residual
				if err := req.Start(); err != nil {
					panic(err)
				}
				// ... the next sweep's work would overlap here ...
				if _, err := req.Wait(); err != nil {
					panic(err)
				}
				if global[0] < 1 {
					lines[i] = fmt.Sprintf("rank %d: converged after %d iterations (max residual %g)", c.Rank(), iter, global[0])
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// rank 0: converged after 5 iterations (max residual 0.75)
	// rank 1: converged after 5 iterations (max residual 0.75)
	// rank 2: converged after 5 iterations (max residual 0.75)
}
