//go:build !mpi

package comm_test

import (
	"testing"

	"github.com/shmrun/shmrun/internal/ranktest"
)

// TestNonblockingCollOversubscribed runs the backends' nonblocking
// collective body with 16 ranks on this machine's cores: each rank's
// worker and its main goroutine compete for the CPU the other ranks need.
func TestNonblockingCollOversubscribed(t *testing.T) {
	if testing.Short() {
		t.Skip("16 processes")
	}
	res := ranktest.Run(t, 16, "be_nbc")
	if got := len(res.Lines()); got != 16 {
		t.Fatalf("%d lines of output, want one a rank:\n%s", got, res.Stdout)
	}
}
