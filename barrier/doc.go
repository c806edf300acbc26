// Package barrier makes processes wait for each other on words of shared
// memory: a futex primitive, a three-phase wait policy (spin, then yield the
// CPU, then sleep on the futex), an Event (a doorbell a waiter can sleep on),
// and a reusable barrier for any group of ranks in any segment.
//
// It sits above shm and below comm, win and atomics. Every wait notices the
// job's abort word within Policy.Sleep, so a dead peer never leaves a rank
// hanging: the wait returns ErrAborted.
//
// The words it uses are documented in docs/FORMAT.md so that C code can follow
// the same protocol: futexes are shared (never FUTEX_PRIVATE_FLAG), 32-bit,
// and every access is atomic.
package barrier
