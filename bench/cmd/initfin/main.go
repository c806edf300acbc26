// Command initfin is the job start+teardown benchmark's rank: Init, Barrier,
// Finalize — the Go twin of bench/c/initfin.c.
package main

import (
	"fmt"
	"os"

	"github.com/shmrun/shmrun/comm"
)

func main() {
	world, err := comm.Init()
	if err == nil {
		err = world.Barrier()
	}
	if err == nil {
		err = comm.Finalize()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "initfin:", err)
		os.Exit(1)
	}
}
