//go:build mpi

package win_test

import (
	"testing"

	"github.com/shmrun/shmrun/internal/ranktest"
)

func TestMain(m *testing.M) { ranktest.Main(m) }

// mpiBackend: these tests run over an MPI (-tags mpi).
const mpiBackend = true
