// Command dies: rank 1 exits with status 3 before Finalize, after a
// Barrier; the other ranks finalize. For internal/obs's test of a job
// whose records are partial.
package main

import (
	"os"

	"github.com/shmrun/shmrun/comm"
)

func main() {
	world, err := comm.Init()
	if err != nil {
		os.Exit(1)
	}
	if err := world.Barrier(); err != nil {
		os.Exit(1)
	}
	if world.Rank() == 1 {
		os.Exit(3)
	}
	_ = comm.Finalize() // fails or not as the launcher ends the job: only its record matters
}
