//go:build !mpi

package comm

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/internal/winc"
)

// nbcTarget is the communicator a nonblocking collective's job runs on:
// c itself, whose blocking collectives wait for the queue (prepare).
func (c *Comm) nbcTarget(string) (*Comm, error) { return c, nil }

// nbcRequest is the request of job j: complete once j has run.
func nbcRequest(call string, j *nbcJob) (*Request, error) {
	return &Request{ext: &requestExt{job: j, coll: call}}, nil
}

// poll is the completion of j's request (requestExt.poll): Wait's if
// block, else a test's, which takes its turn at the jobs (testTurn).
func (j *nbcJob) poll(block bool) (bool, error) {
	if block {
		j.await()
		return true, j.err
	}
	select {
	case <-j.done:
		return true, j.err
	default:
	}
	j.q.testTurn()
	select {
	case <-j.done:
		return true, j.err
	default:
		return false, nil // the test may yield (Request.test, wantsYield)
	}
}

// stepping says that jobs may step (queueJob): a constant, false for the
// MPI backend's queue, where none does (nbc_mpi.go).
const stepping = true

// Steps. A job that is one collective call on its communicator (j.step)
// need not wait for a worker's thread, nor block a test: a step runs it on
// the caller's goroutine in try mode (collArea.try), in which the call,
// on its fast path (coll_fast.go), stops where it would wait instead of
// waiting (errTry): before its round, with nothing done; or after
// publishing its round, which the next run of the same call goes on from
// (collArea.resume: the same call again, since its job is the same
// closure over the same arguments) to read the other ranks' lines. A job
// left so is stepped (jobStepped): the next test steps it again, and
// anyone who must see it end (a Wait, a blocking collective's drain, the
// worker a wait of the runtime kicks) claims it and runs the rest to its
// end. A call that would take the general path (one that does not ride
// inline, a communicator whose area is not made yet, shmrun --check or
// --stats) stops before it starts (prepare) and its job stops stepping:
// the worker runs it as before. So a small nonblocking collective polled
// by Test progresses in the test itself, as an MPI's does, with no thread
// to wake: from C, unbound, an Iallreduce polled by MPI_Test took
// 85-500 µs a call when its job ran on the worker (bench/NOTES.md). Only
// the first call of a job runs in try mode (fastEnd ends it): a job of
// two calls would be run again from its start.

// stepFirst steps the jobs first in q's line while each steps to its end.
func (q *nbcQueue) stepFirst() {
	for {
		h := q.claimFirst(true)
		if h == nil || !q.step(h) {
			return
		}
	}
}

// testTurn is a test's turn at q's jobs: it steps those first in line
// that may step and that nobody runs, and otherwise kicks the worker (a
// test is when a parked job starts, nbcLazy).
func (q *nbcQueue) testTurn() {
	for {
		h := q.claimFirst(true)
		if h == nil {
			break
		}
		if !q.step(h) {
			if h.step.Load() {
				return // stepped: the next test goes on with it
			}
			break // off the fast path: the worker's
		}
	}
	q.kick()
}

// step runs job j, first in q's line and claimed by the caller, as far
// as it goes without waiting (the comment above), and reports whether it
// ran to its end (then ended: end).
func (q *nbcQueue) step(j *nbcJob) bool {
	a := j.c.coll.Load()
	if a == nil || rec != nil || chk != nil {
		// The general path's: its call makes the area, or is observed.
		q.leave(j, jobFree, true)
		return false
	}
	if stepHook != nil {
		stepHook()
	}
	q.enter()
	a.tried = 0
	a.try.Store(raw.Goroutine())
	err := j.run(j.c)
	a.try.Store(0)
	q.exit()
	tried := a.tried
	a.tried = 0
	if tried == 0 {
		nbcCounts.stepEnds.Add(1)
		q.end(j, err) // the caller's loop steps the next (stepFirst, testTurn)
		return true
	}
	nbcCounts.stepStops.Add(1)
	if tried == triedGeneral {
		q.leave(j, jobFree, true)
	} else {
		q.leave(j, jobStepped, false)
	}
	return false
}

// stepHook, if set, runs at the start of every step (for the tests: a
// step that holds its job a while).
var stepHook func()

// leave gives j, claimed by the caller, up in state s (jobFree: none of
// it ran; jobStepped), and lets q's jobs go on (schedule: parked again,
// or the worker's, for a job that does not step).
func (q *nbcQueue) leave(j *nbcJob, s int32, unstep bool) {
	q.mu.Lock()
	if unstep && j.step.Load() {
		j.step.Store(false) // off the fast path: the worker's from now on
		q.nostep++
	}
	j.state.Store(s)
	if (q.wanted || q.waiters > 0) && !q.running {
		// A kick came while the step ran (a wait of the runtime about
		// to yield or sleep, or the worker, which left the job to the
		// step), or a goroutine waits for the jobs to end: the worker
		// runs it to its end.
		q.wanted = false
		q.unpark()
		q.startWorker()
	} else {
		q.schedule() // never asks for a step: j is first, and either stepped or not to step
	}
	q.mu.Unlock()
}

// wantsYield reports whether a test that found j not yet complete should
// yield (testYield, the C interface's cYield): when the ranks share cores
// (nbcLazy), or a worker runs its queue's jobs or must (a job first in
// line that does not step). A test steps the rest itself.
func (j *nbcJob) wantsYield() bool {
	if nbcLazy.Load() {
		return true
	}
	q := j.q
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.running || len(q.jobs) > 0 && !q.jobs[0].step.Load()
}

// testYield is a test's of a nonblocking collective not yet complete: its
// job runs on the worker goroutine, which a loop of tests must let run.
// The test gives its processor up (Gosched): the worker, made runnable
// when the job was queued, is in this processor's queue and runs at once,
// where the runtime would otherwise wake a thread of its own for it, a
// wake-up that cost an Iallreduce polled by Test, 2 ranks unbound, 120-480
// µs a call (4.9-5.1 µs with the Gosched; bound, GOMAXPROCS 1, 4.2-4.7
// both; Open MPI, whose test does the collective's work itself, 1.3 µs:
// quick runs on a slow host state). A rank that shares its core with
// other ranks (nbcLazy) then also gives its thread's CPU up (sched_yield):
// at 8 ranks on 2 cores the Gosched alone measured 24-28 ms a call (the
// loop kept the CPU the other ranks needed), the sched_yield alone 1.1
// ms, both 0.19-0.20 ms. A test of several requests yields once, not
// once for each (jobPending). Tests from C yield their own way (capi's
// cYield).
func testYield() {
	testYields.Add(1)
	runtime.Gosched()
	if nbcLazy.Load() {
		raw.YieldThread()
	}
}

// testYields counts testYield's calls (for tests).
var testYields atomic.Uint64

// jobOf is the job of r, a nonblocking or persistent collective's
// request (the active operation's), or nil.
func jobOf(r *Request) *nbcJob {
	if r == nil || r.ext == nil {
		return nil
	}
	x := r.ext
	if p := x.pers; p != nil {
		if p.freed || !p.active || p.cur.ext == nil {
			return nil
		}
		x = p.cur.ext
	}
	return x.job
}

// jobPending reports whether r is a nonblocking or persistent
// collective's request whose job has not run yet, and that a test of it
// should yield for (wantsYield).
func jobPending(r *Request) bool {
	j := jobOf(r)
	if j == nil {
		return false
	}
	return !j.ended() && j.wantsYield()
}

func init() {
	barrier.Idle = idle
	winc.StartNBC = func(x any, call string, run func() error, step bool) (any, error) {
		c, _ := x.(*Comm)
		r, err := c.startJob(call, func(*Comm) error { return run() }, step)
		if err != nil {
			return nil, err
		}
		return r, nil
	}
	winc.InitColl = func(x any, call string, start func() (func() error, func())) (any, error) {
		c, _ := x.(*Comm)
		r, err := c.initPersist(call, func(c *Comm) (*Request, error) {
			run, undo := start()
			r, err := c.startNBC(call, func(*Comm) error { return run() })
			if err != nil {
				undo()
			}
			return r, err
		})
		if err != nil {
			return nil, err
		}
		return r, nil
	}
	winc.NBCPending = func(x any) bool {
		c, _ := x.(*Comm)
		return c != nil && c.nbc.Load() != nil && c.nbc.Load().pending.Load() > 0
	}
	winc.NBCDrain = func(x any) {
		if c, _ := x.(*Comm); c != nil {
			c.nbc.Load().drain()
		}
	}
	winc.NBCDrainAll = nbcDrainAll
	winc.Stopped = func(x any) bool {
		c, _ := x.(*Comm)
		a := c.coll.Load()
		return a != nil && a.tried != 0
	}
	winc.TestQuiet = func(x, st any) (bool, error) {
		s, ok, err := x.(*Request).test(false)
		*st.(*Status) = s
		return ok, err
	}
	winc.JobPending = func(x any, turn bool) bool {
		r, _ := x.(*Request)
		j := jobOf(r)
		if j == nil || j.ended() {
			return false
		}
		if turn {
			j.q.testTurn()
		}
		return jobPending(r)
	}
	winc.Waitany = func(rs []any, st any, yield func()) (int, error) {
		reqs := make([]*Request, len(rs))
		for i, x := range rs {
			reqs[i], _ = x.(*Request)
		}
		i, s, err := waitany(reqs, yield)
		*st.(*Status) = s
		return i, err
	}
	winc.KeptComm = func(x any) any {
		if c, _ := x.(*Comm); c != nil {
			if l := c.live.Load(); l != nil {
				if h := l.cur.Load(); h != nil {
					return h
				}
			}
		}
		return nil
	}
}

// initColl makes the persistent collective call, whose starts queue run
// as the nonblocking collectives do (pcoll.go).
func (c *Comm) initColl(call string, run func(t *Comm) error) (*Request, error) {
	return c.initPersist(call, func(c *Comm) (*Request, error) { return c.startNBC(call, run) })
}

// initPersist makes a persistent collective whose every start is
// start's request.
func (c *Comm) initPersist(call string, start func(c *Comm) (*Request, error)) (*Request, error) {
	if err := c.valid(call); err != nil {
		return nil, err
	}
	return c.holdPersist(&persist{call: call, coll: start})
}

// next is the channel the next job's end closes.
func (s *jobSignal) next() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// jobBells are the engines on whose doorbell a wait for several requests
// (waitMany) sleeps while some of those requests are nonblocking
// collectives': a job's end rings them (jobEnded), as a message's arrival
// does, so that such a wait needs no timeout to see the job end.
var jobBells struct {
	n  atomic.Int32 // waits registered: jobEnded's test when nobody waits
	mu sync.Mutex
	at map[*engine]int
}

// watchJobs registers a wait on e's doorbell for jobs' ends until the
// returned function is called. Register before testing the requests: an
// end after the registration rings the doorbell, one before it shows in
// the test.
func watchJobs(e *engine) (stop func()) {
	jobBells.mu.Lock()
	if jobBells.at == nil {
		jobBells.at = map[*engine]int{}
	}
	jobBells.at[e]++
	jobBells.n.Add(1)
	jobBells.mu.Unlock()
	return func() {
		jobBells.mu.Lock()
		if jobBells.at[e]--; jobBells.at[e] == 0 {
			delete(jobBells.at, e)
		}
		jobBells.n.Add(-1)
		jobBells.mu.Unlock()
	}
}

// jobEnded rings the doorbells of the waits watchJobs registered; a job
// calls it once its request tests complete.
func jobEnded() {
	if jobBells.n.Load() == 0 {
		return
	}
	jobBells.mu.Lock()
	for e := range jobBells.at {
		e.notify(e.bell)
	}
	jobBells.mu.Unlock()
}

// kick starts q's worker if its jobs wait for one. If someone runs the
// first job now, it marks the queue wanted instead: a step hands the job
// to the worker when it leaves it; a runner that runs it to its end (a
// Wait's, runInline: its wait kicks too, and the jobs after it must wait
// for it anyway) lets the jobs after it go on then (end).
func (q *nbcQueue) kick() {
	if nbcParked.Load() == 0 {
		return
	}
	q.mu.Lock()
	if q.parked && len(q.jobs) > 0 && !q.jobs[0].claimable() {
		q.wanted = true
	} else if q.parked {
		q.parked = false
		nbcParked.Add(-1)
		if len(q.jobs) > 0 && !q.running {
			q.startWorker()
		}
	}
	q.mu.Unlock()
}

// idle is barrier.Idle: a wait of the runtime about to yield or sleep
// kicks the parked nonblocking collectives (kickParked) and moves this
// rank's transfers in pieces on (idleProgress): with full (a wait that
// slept its whole sleep unwoken), whether or not one is known in flight,
// so that a message whose receive this rank posted is matched. Two loads
// when there is nothing to do, as most waits find.
func idle(full bool) (inFlight, moved bool) {
	if nbcParked.Load() != 0 {
		kickParked()
	}
	if !full && !idleBulk.Load() {
		return false, false
	}
	return idleProgress()
}

// kickParked kicks every queue whose jobs wait for a kick: a wait of the
// runtime about to yield or sleep (barrier.Idle), which a job of this
// rank may be what it waits for.
func kickParked() {
	if nbcParked.Load() == 0 {
		return
	}
	for _, q := range allQueues() {
		q.kick()
	}
}
