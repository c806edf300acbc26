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
	return &Request{ext: &requestExt{job: j, coll: call, poll: func(block bool) (bool, error) {
		if block {
			j.await()
			return true, j.err
		}
		select {
		case <-j.done:
			return true, j.err
		default:
			j.q.kick()        // a test is when a parked job starts (nbcLazy)
			return false, nil // the test yields (Request.test)
		}
	}}}, nil
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
// collective's request whose job has not run yet.
func jobPending(r *Request) bool {
	j := jobOf(r)
	if j == nil {
		return false
	}
	select {
	case <-j.done:
		return false
	default:
		return true
	}
}

func init() {
	barrier.Idle = idle
	winc.StartNBC = func(x any, call string, run func() error) (any, error) {
		c, _ := x.(*Comm)
		r, err := c.startNBC(call, func(*Comm) error { return run() })
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
	winc.TestQuiet = func(x, st any) (bool, error) {
		s, ok, err := x.(*Request).test(false)
		*st.(*Status) = s
		return ok, err
	}
	winc.JobPending = func(x any) bool {
		r, _ := x.(*Request)
		if !jobPending(r) {
			return false
		}
		jobOf(r).q.kick() // a test is when a parked job starts (nbcLazy)
		return true
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

// kick starts q's worker if its jobs wait for one and the first is not
// running already (a Wait's, runInline: its wait kicks too, and the jobs
// after it must wait for it anyway).
func (q *nbcQueue) kick() {
	if nbcParked.Load() == 0 {
		return
	}
	q.mu.Lock()
	if q.parked && (len(q.jobs) == 0 || q.jobs[0].state.Load() == 0) {
		// (A first job claimed already unparked the queue, runFirst,
		// unless another goroutine queued more since.)
		q.parked = false
		nbcParked.Add(-1)
		if len(q.jobs) > 0 && !q.running {
			q.running = true
			go q.work()
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
