// Package faults holds the fault matrix of issue 12 as tests: each fault is
// made to happen to a real job (ranks are processes started by the real
// launcher through internal/ranktest) and the test checks how the job ends:
// the exit code and a message naming the cause, within a bounded time, with
// nothing left in the shm directory, no SIGBUS, and the data of the ranks
// that survived intact.
//
// The faults: SIGKILL of a rank blocked in Barrier, Fence, Lock (the holder
// and a waiter), LockAll (the holder and a waiter), Start, Wait, Free, in
// the middle of AllocateShared (inside its reservation, or awaited in its
// first exchange) and in the middle of a soak;
// SIGKILL of the launcher (its ranks die with it, and Cleanup removes what
// is left but never a live job's objects); a full shm tmpfs (every rank gets
// ErrNoMem, the job goes on, and a reserved window survives the directory
// filling up); Abort while the other ranks block, and the exit status it
// gives; an
// 8 GiB window; long AllocateShared/Free and Lock/Unlock cycles with flat
// descriptors, mappings and RSS; and a soak of 64 oversubscribed ranks
// doing mixed RMA under every kind of epoch, with counted invariants.
//
// Each check is shown to fail on a wrong outcome (TestChecksCatchFaults,
// TestCyclesSeeLeaks, TestSoakSeesBrokenInvariant, the "no reserve" case).
//
// The package has no code outside its tests. The default run is short; the
// long versions run when SHMRUN_SOAK is set to a duration (the soak's
// length, e.g. SHMRUN_SOAK=60s), which also turns on the full cycle counts,
// the 8 GiB window and 20 repetitions of the kill matrix.
package faults
