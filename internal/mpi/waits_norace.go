//go:build mpi && !race

package mpi

// waits counts the calls of waited. A plain increment, not an atomic add:
// goroutines of one rank that call at once may lose counts, which only
// moves the next Gosched, while a locked add on a word every goroutine
// shares cost every MPI call ~5-10 ns (bench/NOTES.md). Under the race
// detector, an atomic add (waits_race.go).
var waits uint32

func waitsInc() uint32 {
	waits++
	return waits
}
