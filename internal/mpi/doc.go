// Package mpi is the binding of the MPI backend (go build -tags mpi) to the
// system's MPI library (Open MPI through pkg-config ompi-c, or MPICH with
// -tags mpi,mpich). It is the only cgo of the backend: packages comm and win
// call these functions, one cgo call per MPI call, and never per element.
// Without the tag the package is empty.
//
// Buffers are Go memory handed to C for the length of one call, as cgo's
// pointer rules allow, except where MPI keeps the address after the call
// returns (the origin buffers of RMA calls, window memory given to
// MPI_Win_create): there the caller pins the memory with runtime.Pinner
// until MPI is done with it, which the functions' comments name.
package mpi
