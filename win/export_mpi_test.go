//go:build mpi

package win

// MPITypesCached is the number of MPI datatypes the backend keeps for
// the program's dtype.Types.
func MPITypesCached() int {
	n := 0
	mpiTypes.Range(func(any, any) bool { n++; return true })
	return n
}
