// Package launcher is the parent side of a shmrun job: it makes the job id,
// the control segment (a memfd, so it has no name to leak) and the job's lock
// file, starts the ranks from one spawner goroutine locked to its OS thread,
// supervises them, relays their output, and removes every object of the job
// when it ends. cmd/shmrun is a thin CLI over it; tests use it directly to
// run their own binary as ranks.
//
// Failure is fatal for the job, as under MPI's default error handler: when a
// rank exits non-zero, dies by a signal, or exits 0 after comm.Init without
// comm.Finalize, the launcher sets the job's abort word, wakes every waiter,
// sends SIGTERM to the job's process group, SIGKILL after the grace period,
// removes the job's segments, names the rank, pid and cause, and returns that
// rank's exit code (128+signal for a signal; the first failure decides).
// A rank's comm.Abort(code) ends the job the same way, with exit code code
// mod 256, except that a code whose low byte is 0 gives 1 (Abort(0) and
// Abort(256) exit 1, Abort(300) 44, Abort(-1) 255): an aborted job never
// exits 0.
//
// Ranks die with the launcher: each gets PR_SET_PDEATHSIG=SIGKILL, which the
// kernel fires when the parent *thread* exits (golang/go#27505), so the
// spawner thread lives until every rank is reaped.
package launcher
