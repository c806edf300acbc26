//go:build !mpi && race

package comm_test

const raceEnabled = true
