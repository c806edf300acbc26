//go:build !mpi

package comm_test

// backendSignals: the shmrun backend installs no signal handlers of its
// own in a rank.
func backendSignals() error { return nil }

// underMPI reports whether the ranks run over an MPI (the mpi build).
const underMPI = false
