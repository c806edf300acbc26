//go:build !mpi

// Command capi is libmpi_abi.so: the MPI C interface on the MPI 5.0
// standard ABI (include/abi/mpi.h), over the same runtime as the Go packages.
// It is built with go build -buildmode=c-shared (go run
// ./cmd/shmrun-install DIR builds and installs it with mpi.h and shmcc);
// C programs compiled against mpi.h link it, and run under shmrun beside Go
// ranks, in one world.
//
// The C side (mpi.c) defines every PMPI_ function of the standard and its
// MPI_ name as a weak alias, for tools; the calls shmrun implements enter
// Go through the shm* functions exported here, the others return
// MPI_ERR_UNSUPPORTED_OPERATION through the error handler (unsupported.c).
// Handles are the standard's predefined values (1..4095) or values this
// library gives out from 4096 on, looked up in tables (handles.go).
package main

//go:generate go run ../internal/capigen ..

func main() {}
