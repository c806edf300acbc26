//go:build mpi

package main

import "github.com/shmrun/shmrun/internal/mpi"

// Built with -tags mpi, rmabench measures the Go API over the MPI backend
// (bench/run's runtime gompi), and the cost of one cgo call, the
// backend's overhead on every MPI call.
var library = "shmrun Go API over " + mpi.Impl

func init() {
	table = append(table, meas{name: "cgo_call", kind: origin, body: func(_ *ctx, _ *meas, k int64) error {
		for range k {
			mpi.Noop()
		}
		return nil
	}})
}

// shmRows is empty here: the rows with state of their own in ctx
// (flavors.go, dtypes.go) are the shared-memory backend's.
//
//lint:ignore U1000 embedded in ctx for the other backend's fields
type shmRows struct{}
