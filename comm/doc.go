// Package comm is the rank side of a shmrun job: Init attaches to the job
// the launcher started (or makes a singleton world of size 1 when the program
// runs on its own, as MPI allows), and the returned world communicator gives
// Rank, Size, Barrier, Group and Abort. Finalize ends the rank's part.
//
// It sits above barrier and shm and below win. All state lives on the *Comm
// values; the only process-wide state is which world Init returned, so that
// Finalize can find it (MPI_Init/MPI_Finalize are process-wide too).
//
// Collective calls (Barrier, Finalize) must be called by every rank of the
// communicator in the same order. A collective that fails on one rank never
// strands the others: they agree on the outcome through the barrier.
package comm
