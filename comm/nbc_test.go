//go:build !mpi

package comm_test

import (
	"testing"

	"github.com/shmrun/shmrun/internal/ranktest"
)

// TestNonblockingCollOversubscribed runs the backends' nonblocking and
// persistent collective bodies with 16 ranks on this machine's cores:
// each rank's worker and its main goroutine compete for the CPU the other
// ranks need.
func TestNonblockingCollOversubscribed(t *testing.T) {
	if testing.Short() {
		t.Skip("16 processes")
	}
	ranktest.RunEach(t, []string{"be_nbc", "be_pcoll"}, []int{16})
}
