// Command gohello is a Go program that the launcher tests hand to the
// launcher as source, to check that it is built and run.
package main

import (
	"fmt"
	"os"
)

func main() { fmt.Println("hello from a built Go program", os.Args[1:]) }
