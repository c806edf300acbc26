//go:build mpi

package comm_test

import (
	"fmt"
	"os"
	"syscall"

	"github.com/shmrun/shmrun/internal/mpi"
)

// backendSignals checks what the MPI backend's Init says it did: every
// setting of mpi.EnvDefaults is in the environment, and the signals it
// mended (mpi.Restored) are real signals.
func backendSignals() error {
	for _, kv := range mpi.EnvDefaults() {
		if os.Getenv(kv[0]) == "" {
			return fmt.Errorf("Init's default %s=%s is not in the environment", kv[0], kv[1])
		}
	}
	for _, s := range mpi.Restored() {
		if s < 1 || s > 64 || syscall.Signal(s) == syscall.SIGKILL || syscall.Signal(s) == syscall.SIGSTOP {
			return fmt.Errorf("Init says it mended signal %d", s)
		}
	}
	return nil
}

// underMPI reports whether the ranks run over an MPI (the mpi build).
const underMPI = true
