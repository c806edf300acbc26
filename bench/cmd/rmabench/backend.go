//go:build !mpi

package main

// library names the runtime in the INFO line.
const library = "shmrun"
