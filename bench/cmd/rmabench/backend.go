//go:build !mpi

package main

import (
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/win"
)

// library names the runtime in the INFO line.
const library = "shmrun"

// shmRows is the state of the rows built only here (flavors.go,
// dtypes.go), a part of ctx.
type shmRows struct {
	xw    *win.Win    // flavor rows: their window,
	xmem  []byte      // the memory it exposes,
	xdisp int         // and the displacement of rank 1's first byte
	dt    *dtype.Type // datatype rows: the type,
	dmat  []float64   // and rank 0's private matrix
}
