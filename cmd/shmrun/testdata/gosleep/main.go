// Command gosleep is a Go program for shmrun's tests to build: each rank
// says "ready <pid>" and sleeps until it is killed.
package main

import (
	"fmt"
	"os"
	"time"
)

func main() {
	fmt.Printf("ready %d\n", os.Getpid())
	time.Sleep(time.Hour)
}
