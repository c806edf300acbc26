package barrier

import (
	"errors"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/shmrun/shmrun/internal/raw"
)

// ErrAborted is returned by a wait that saw the job's abort word set: a rank
// failed or called Abort, and the launcher is ending the job.
var ErrAborted = errors.New("job aborted")

// Policy says how long a waiter spins, yields and sleeps.
//
// Spinning answers fastest when the peer runs on another core. Yielding is
// what makes oversubscribed jobs fast: the waiter hands its core to the rank it
// waits for instead of burning its time slice. Sleeping on the futex keeps a
// rank that waits for seconds from eating a core.
type Policy struct {
	Spin  int           // condition checks before the first yield
	Yield time.Duration // time spent yielding before sleeping (timed from the 16th yield)
	Sleep time.Duration // longest single futex sleep; the abort word is checked after each
	// Goroutines: the waiters are goroutines of one process (the heap-backed
	// test mode), so the yield phase yields the goroutine (runtime.Gosched),
	// not the OS thread, which would keep the goroutine's scheduler slot.
	Goroutines bool
}

// DefaultPolicy is for ranks that each have a core: a long spin (10000
// polls with a pause between them, PauseFrom: about 250 us where a pause
// takes 25 ns, as here) catches a peer on another core without a system
// call, a 1 ms yield phase covers a peer that was descheduled, and a 50 ms
// sleep bounds how late an abort is noticed.
var DefaultPolicy = Policy{Spin: 10000, Yield: time.Millisecond, Sleep: 50 * time.Millisecond}

// OversubscribedPolicy is for jobs with more ranks than cores: the peer a
// rank waits for needs this rank's core, so it spins only briefly and then
// yields: a long spin burns the time slice the peer needs, and sleeping at
// once pays a futex wait and wake for every round (bench/NOTES.md).
var OversubscribedPolicy = Policy{Spin: 20, Yield: time.Millisecond, Sleep: 50 * time.Millisecond}

// PauseFrom is the spin from which a wait pauses between polls (PAUSE on
// amd64, YIELD on arm64; raw.Pause): a rank with a core of its own.
// Without the pause a spinning rank takes the polled line back a cycle
// after a peer's locked add took it, and the peer's next add on it (a
// barrier's release) waits: a 2-rank fence took 90-130 ns, with it 40
// from Go and 27 from C. A shorter spin (oversubscribed ranks, which
// share cores) polls back to back and then yields: there, pausing
// only held the core longer that another rank needed (8 ranks on 2
// cores, Allreduce 8 B: 8.4 -> 9.5 us). The C library's spins follow the
// same rule (capi.h's SHMRUN_PAUSE_FROM).
const PauseFrom = 256

// Event is a doorbell in shared memory: two 32-bit words, seq then sleepers.
// A waker changes the state its waiters look at (with an atomic store or
// read-modify-write), then calls Notify; a waiter calls Await with a
// condition on that state.
//
// Protocol (C code must follow it exactly): a waiter that wants to sleep
// increments sleepers (then, on a Light event, calls raw.HeavyFence),
// loads seq, re-checks its condition, and only then
// futex-waits on seq with the loaded value; afterwards it decrements
// sleepers. Notify loads sleepers after the state change and, only if it is
// nonzero, increments seq and wakes all. With sequentially consistent
// atomics no wake-up is lost: a Notify that reads sleepers == 0 happened
// before the waiter's increment, so the waiter's re-check sees the new
// state. The common case — nobody asleep — costs one load.
type Event struct {
	Seq      *uint32 // the futex word, bumped by a Notify that finds sleepers
	Sleepers *uint32 // waiters in (or entering) the futex phase
	// Light: the wakers may skip the full fence between their state
	// change and their load of sleepers where their process is
	// registered for it (internal/raw's LightFence), so a waiter calls
	// raw.HeavyFence between counting itself and re-checking. Events
	// whose wakers always fence leave it false and save the sleepers the
	// system call.
	Light bool
}

// Notify wakes every waiter of e. Call it after the state change is stored.
// It bumps Seq when someone sleeps: for events whose Seq is only the futex
// word (a doorbell). Where Seq is the state itself, use Wake.
func (e Event) Notify() {
	if atomic.LoadUint32(e.Sleepers) != 0 {
		atomic.AddUint32(e.Seq, 1)
		raw.WakeAll(e.Seq)
	}
}

// Wake is Notify for an event whose Seq word is the state the waiters wait
// on, and which every state change stores a new value into: a collective
// flag line's round, an Ibarrier count, a lock word's low half. It wakes
// the sleepers without touching Seq: Notify's increment there would
// announce a state nobody reached (the round after the one published).
// No wake-up is lost: a waiter loads Seq after counting itself; a state
// change stored before that load is seen by its re-check, one stored
// after it makes the futex wait return at once (Seq differs), or comes
// before the waker's load of the count, which then sees the waiter. Call
// it after the state change is stored.
func (e Event) Wake() {
	if atomic.LoadUint32(e.Sleepers) != 0 {
		raw.WakeAll(e.Seq)
	}
}

// Waiting says what a waiter waits for, for the launcher's deadlock
// watch: Kind is a Wait* value; Peer (a world rank, or -1 for any) and
// Tag describe a point-to-point wait.
type Waiting struct {
	Kind      uint32
	Peer, Tag int32
}

// Kinds of waits (format.RankWaitKind).
const (
	WaitOther = 1 // a collective, a barrier, a window's synchronization
	WaitRecv  = 2 // a receive
	WaitSend  = 3 // a send that waits for its receiver
	WaitProbe = 4 // a probe
	WaitMany  = 5 // several requests (Waitall, Waitany, Waitsome)
)

// Watch, when set, is told when a waiter of this process goes to sleep
// in the futex phase (asleep true) and when it wakes with its condition
// met or the job aborted (false); a timed-out sleep that goes back to
// sleep says nothing. Package comm sets it once, at Init under shmrun,
// to publish the rank's waits for the launcher's deadlock watch.
var Watch func(w Waiting, asleep bool)

// Idle, when set, is called by a wait whose condition is still false
// after its spin phase, before it yields or sleeps, and again each time
// its sleep ends with the condition still false: package comm starts
// there the work it put off (a nonblocking collective's job, which the
// wait may depend on) and moves on the transfers in pieces of its
// point-to-point engine (which another rank may be waiting for while this
// one waits in a barrier). It reports whether such a transfer is still in
// flight, and whether this call moved one: while one is, the wait sleeps a
// millisecond at a time to move it on again, twice as long after each
// call that moved nothing (up to its policy's sleep), so that a transfer
// stuck for good (a deadlock) costs next to nothing and the launcher's
// deadlock watch still sees the rank idle. With full, after a sleep that
// ran its whole length unwoken, it moves the engine on whatever it
// believes in flight (a message another rank waits to have matched by a
// receive this rank posted). Set once, before any wait.
var Idle func(full bool) (inFlight, moved bool)

// Await returns nil once done() is true, or ErrAborted once *abort is nonzero
// (abort may be nil). done must read shared state with atomic loads.
func (e Event) Await(abort *uint32, p Policy, done func() bool) error {
	return e.AwaitAs(Waiting{Kind: WaitOther}, abort, p, done)
}

// AwaitAs is Await that tells Watch what it waits for.
func (e Event) AwaitAs(w Waiting, abort *uint32, p Policy, done func() bool) error {
	pause := p.Spin >= PauseFrom
	for range p.Spin {
		if done() {
			return nil
		}
		if pause {
			raw.Pause()
		}
	}
	if aborted(abort, done) {
		return ErrAborted
	}
	inFlight := false
	if idle := Idle; idle != nil {
		inFlight, _ = idle(false)
	}
	if p.Yield > 0 {
		// The clock is read first after 16 yields, not before the first:
		// most waits of an oversubscribed job end within a few yields, and
		// a read of the clock costs as much as several polls.
		var deadline time.Time
		for i := 0; ; i++ {
			if done() {
				return nil
			}
			if i&15 == 15 {
				if aborted(abort, done) {
					return ErrAborted
				}
				now := time.Now()
				if deadline.IsZero() {
					deadline = now.Add(p.Yield)
				} else if now.After(deadline) {
					break
				}
			}
			if p.Goroutines {
				runtime.Gosched()
			} else {
				yieldCPU()
			}
		}
	}
	if watch := Watch; watch != nil {
		watch(w, true)
		defer watch(w, false)
	}
	back := time.Millisecond // the sleep while a transfer is in flight (Idle)
	for {
		// Announce the sleep before reading seq: a Notify that comes after
		// our read of seq either changes seq (the futex returns at once) or
		// sees our sleepers count and wakes us. No wake-up is lost. The
		// heavy fence (Light events) lets a waker of a registered process
		// skip its own full fence between its store and its load of our
		// count (internal/raw's LightFence).
		atomic.AddUint32(e.Sleepers, 1)
		if e.Light && !raw.HeavyFence() {
			// The heavy fence failed: a waker that skipped its fence may
			// miss this sleeper, so look again soon.
			p.Sleep = min(p.Sleep, time.Millisecond)
		}
		seq := atomic.LoadUint32(e.Seq)
		if done() {
			atomic.AddUint32(e.Sleepers, ^uint32(0))
			return nil
		}
		sleep := p.Sleep
		if inFlight {
			sleep = min(sleep, back)
		}
		raw.FutexWait(e.Seq, seq, sleep)
		atomic.AddUint32(e.Sleepers, ^uint32(0))
		if aborted(abort, done) {
			return ErrAborted
		}
		if done() {
			return nil
		}
		// A long sleep that ran out with seq unchanged: nothing woke it
		// (not the 1 ms sleeps of a failed heavy fence, which would make
		// a pass over the rings every millisecond for good).
		if idle := Idle; idle != nil && (inFlight || sleep >= 10*time.Millisecond && atomic.LoadUint32(e.Seq) == seq) {
			var moved bool
			if inFlight, moved = idle(true); moved {
				back = time.Millisecond
			} else {
				back = min(2*back, p.Sleep)
			}
		}
	}
}

// aborted reports whether the job aborted while the condition done is
// still false: done is read once more after the abort is seen, since a
// rank that saw the condition met may abort right after (a barrier's
// last arriver), and its waiters must return the condition, not the
// abort that came later.
func aborted(abort *uint32, done func() bool) bool {
	return abort != nil && atomic.LoadUint32(abort) != 0 && !done()
}
