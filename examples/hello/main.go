// Command hello is the smallest shmrun program: every rank says who it is.
//
//	go run ./cmd/shmrun -n 4 --oversubscribe ./examples/hello
package main

import (
	"fmt"
	"log"

	"github.com/shmrun/shmrun/comm"
)

func main() {
	world, err := comm.Init()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("hello from rank %d of %d\n", world.Rank(), world.Size())
	if err := comm.Finalize(); err != nil {
		log.Fatal(err)
	}
}
