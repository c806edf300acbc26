//go:build !mpi

package comm

import "github.com/shmrun/shmrun/internal/format"

// singletonJob gives a world not started by shmrun its own job id, so its
// segment names never collide with a job's.
func singletonJob() string { return format.NewJobID() }
