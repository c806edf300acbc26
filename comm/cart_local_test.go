//go:build !mpi

package comm_test

import "testing"

// TestCartLocal runs the Cartesian bodies on goroutine ranks, where the
// race detector sees them.
func TestCartLocal(t *testing.T) {
	runWorld(t, 6, cartBody)
	runWorld(t, 6, cartErrors)
}
