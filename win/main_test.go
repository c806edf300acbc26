//go:build !mpi

package win_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
)

// mpiBackend: these tests run over an MPI (-tags mpi).
const mpiBackend = false

func TestMain(m *testing.M) { ranktest.Main(m) }

// runLocal runs body as the n goroutine ranks of a heap-backed world: the
// mode in which the race detector sees every shared access. A hung world is
// aborted and fails the test (ranktest.RunLocal).
func runLocal(t testing.TB, n int, body func(c *comm.Comm) error) {
	t.Helper()
	ranktest.RunLocal(t, n, body)
}

// check returns an error naming what differs.
func check(cond bool, format string, args ...any) error {
	if cond {
		return nil
	}
	return fmt.Errorf(format, args...)
}

func isClass(err, class error) bool { return errors.Is(err, class) }
