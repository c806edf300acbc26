// Command gen writes include/shmrun/format.h, the C header of shmrun's
// cross-process formats, from their Go definitions. Run it with
// go generate ./internal/format.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/shmrun/shmrun/internal/format/cheader"
)

func main() {
	out := flag.String("o", "include/shmrun/format.h", "file to write")
	flag.Parse()
	h, err := cheader.Render()
	if err == nil {
		err = os.WriteFile(*out, h, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
