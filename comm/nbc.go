package comm

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/internal/raw"
)

// Nonblocking collectives (MPI 4.1 §6.12), written once for both
// backends. Each call queues its blocking form as a job on its
// communicator; one worker goroutine a communicator runs the queued jobs
// in call order, and the request completes when its job has run. The
// order is MPI's: every rank queues the same collectives in the same
// order, so every rank's worker runs them in that order, and a job waits
// for nothing but the other ranks' same job.
//
// The jobs must not run beside this rank's blocking collectives on the
// same communicator. Under shmrun both use the communicator's collective
// area: a blocking collective first waits until the queue is empty
// (drain; a collective inside a job, recognized by the job's goroutine,
// never waits), which keeps the order, and cannot deadlock, since the
// queued jobs wait only for the other ranks' same jobs. A Wait that finds
// its job, or one before it, not yet claimed by the worker runs it itself
// (runInline): a call waited for at once costs no hand-over. Over an MPI the jobs run on a
// duplicate of the communicator made with it (nbcTarget), which the MPI
// orders on its own.
//
// A job that is one collective call with a fast path (its data inline)
// need not wait for the worker at all: it steps (nbc_shm.go). It runs in
// the call that queues it, first in line, as far as it goes without
// waiting (its round published), and each test of its request runs it on
// from there; a Wait, a blocking collective's drain or a kicked worker
// claims it and runs the rest. A queue of such jobs starts no worker.
//
// A rank that shares its core with other ranks (an oversubscribed job:
// a short spin, nbcLazy) starts no worker when it queues a job: the
// worker's goroutine would wake a thread of its own (the runtime's second
// P) for a job the rank's Wait usually claims first, and that hand-over
// cost an Iallreduce + Wait loop at 8 ranks on 2 cores 46 µs a call
// against the blocking Allreduce's 5. The worker starts instead (kick)
// when the rank tests the request (Test and its kin), when it is about
// to block in any wait of the runtime (past a wait's spin: barrier.Idle),
// or when a blocking collective needs the queue empty (drain, which runs
// the jobs itself). The jobs then progress whenever the rank is in an
// MPI call that tests or waits, MPI's progress rule, though not while
// the rank computes outside MPI, where it has no core to spare anyway.

// nbcQueue is a communicator's queue of nonblocking collectives.
type nbcQueue struct {
	mu      sync.Mutex
	idle    sync.Cond      // broadcast when jobs empties
	jobs    []*nbcJob      // queued, in call order; the first may be running
	running bool           // a worker goroutine is running the jobs
	parked  bool           // jobs wait for a kick (nbcLazy, or steps'): counted in nbcParked
	wanted  bool           // a kick found the first job claimed: a step that leaves it hands it to the worker (leave)
	waiters int            // goroutines blocked until jobs end (addWaiter): the jobs go on without tests
	nostep  int            // jobs queued that do not step (allStep)
	pending atomic.Int32   // len(jobs), read without the lock
	runner  atomic.Uintptr // the goroutine running a job (raw.Goroutine), 0 between jobs
}

// nbcJob is one queued collective: run, once done is closed, left err;
// then complete, if set, tells its request (over an MPI). state says who
// runs it (jobFree and the rest). A job with no queue (q nil) is an
// MPI-backend Isendrecv's (isendrecv_mpi.go): a goroutine of its own
// runs it. A job that may step (step, set when it is queued and cleared
// once a step finds its call off the fast path) is a collective call on
// c that a test may run in steps (nbc_shm.go).
type nbcJob struct {
	q        *nbcQueue
	c        *Comm
	call     string
	run      func(c *Comm) error // called with c
	done     chan struct{}
	err      error
	complete func()
	state    atomic.Int32
	step     atomic.Bool
}

// A job's states.
const (
	jobFree    = 0 // nobody has run any of it
	jobClaimed = 1 // being run: by the worker, a Wait that found it first in line (runInline), or a step
	jobStepped = 2 // a step ran it as far as it went without waiting and left it to whoever goes on
)

// claim makes the caller j's runner if nobody runs it now.
func (j *nbcJob) claim() bool {
	return j.state.CompareAndSwap(jobFree, jobClaimed) || j.state.CompareAndSwap(jobStepped, jobClaimed)
}

// ended reports whether j has run to its end.
func (j *nbcJob) ended() bool {
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

// claimable reports whether nobody runs j now (it may have ended).
func (j *nbcJob) claimable() bool { return j.state.Load() != jobClaimed }

// await is the Wait of job j: runInline for a queued one; for one with
// no queue, until its goroutine is done.
func (j *nbcJob) await() {
	if j.q == nil {
		<-j.done
		return
	}
	j.q.runInline(j)
}

// jobEnds tells the waits for several requests with no point-to-point
// engine to wait on (Waitany over nonblocking collectives; native only:
// next is in nbc_shm.go) that a job has ended: a channel closed at each
// end, and a new one made.
var jobEnds jobSignal

type jobSignal struct {
	mu sync.Mutex
	ch chan struct{}
}

// signal closes the current channel, if anyone took it.
func (s *jobSignal) signal() {
	s.mu.Lock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
	s.mu.Unlock()
}

// nbcQueues are every communicator's queue that has had a job, for
// Finalize, which lets them run out first.
var nbcQueues struct {
	sync.Mutex
	all map[*nbcQueue]struct{}
}

// nbcLazy: this process starts no worker until a kick (see above). Set
// at Init.
var nbcLazy atomic.Bool

// nbcParked counts the queues whose jobs wait for a kick: kickParked's
// test, one load when there are none.
var nbcParked atomic.Int32

// queue returns c's queue, made on first use.
func (c *Comm) queue() *nbcQueue {
	if q := c.nbc.Load(); q != nil {
		return q
	}
	q := &nbcQueue{}
	q.idle.L = &q.mu
	if !c.nbc.CompareAndSwap(nil, q) {
		return c.nbc.Load()
	}
	nbcQueues.Lock()
	if nbcQueues.all == nil {
		nbcQueues.all = map[*nbcQueue]struct{}{}
	}
	nbcQueues.all[q] = struct{}{}
	nbcQueues.Unlock()
	return q
}

// startNBC queues run, the blocking form of the nonblocking collective
// call on c (run calls it on the communicator nbcTarget gives), and
// returns its request. Local.
func (c *Comm) startNBC(call string, run func(t *Comm) error) (*Request, error) {
	return c.startJob(call, run, true)
}

// startJob is startNBC; step says whether run is one collective call,
// which may step (queueJob).
func (c *Comm) startJob(call string, run func(t *Comm) error, step bool) (*Request, error) {
	if err := c.valid(call); err != nil {
		return nil, err
	}
	t, err := c.nbcTarget(call)
	if err != nil {
		return nil, err
	}
	return c.queueJob(call, t, run, step)
}

// queueJob makes run(t), a job, the next of c's queue; step says
// whether it is one collective call, which may step (nbc_shm.go): first
// in line, it runs now as far as it goes without waiting, so that its
// round goes out in the call, as an MPI that starts the collective's
// schedule in the call sends its first messages.
func (c *Comm) queueJob(call string, t *Comm, run func(t *Comm) error, step bool) (*Request, error) {
	q := c.queue()
	j := &nbcJob{q: q, c: t, call: call, run: run, done: make(chan struct{})}
	j.step.Store(step && stepping)
	r, err := nbcRequest(call, j)
	if err != nil {
		return nil, err
	}
	q.mu.Lock()
	q.jobs = append(q.jobs, j)
	q.pending.Add(1)
	if !j.step.Load() {
		q.nostep++
	}
	first := q.schedule()
	q.mu.Unlock()
	if first {
		q.stepFirst()
	}
	return r, nil
}

// schedule decides who goes on with q's jobs once they have changed (a
// job queued, or ended), with q.mu held: the worker, if it is running;
// else, unless a goroutine is blocked until they end (waiters), the
// tests and waits, when this process starts no worker until a kick
// (nbcLazy) or every job queued may step (they park: a test steps them,
// a wait of the runtime kicks them); else a worker, started now.
// It reports whether the caller should step the first job (stepFirst):
// one may, and nobody has run any of it.
func (q *nbcQueue) schedule() (step bool) {
	if q.running || len(q.jobs) == 0 {
		return false
	}
	if q.waiters == 0 && (nbcLazy.Load() || q.allStep()) {
		if !q.parked {
			q.parked = true
			nbcParked.Add(1)
		}
		h := q.jobs[0]
		return h.step.Load() && h.state.Load() == jobFree
	}
	q.unpark()
	q.startWorker()
	return false
}

// workHook, if set, runs in work after a failed claim, before the lock
// (for the tests: a worker preempted there).
var workHook func()

// unpark takes q off the parked queues. q.mu is held.
func (q *nbcQueue) unpark() {
	if q.parked {
		q.parked = false
		nbcParked.Add(-1)
	}
}

// startWorker starts q's worker goroutine. q.mu is held.
func (q *nbcQueue) startWorker() {
	q.running = true
	nbcCounts.workers.Add(1)
	go q.work()
}

// nbcCounts counts, for the tests, the workers started (startWorker) and
// the steps that ran a job to its end or stopped (nbc_shm.go).
var nbcCounts struct{ workers, stepEnds, stepStops atomic.Uint64 }

// allStep reports whether every job queued may step. q.mu is held.
func (q *nbcQueue) allStep() bool { return q.nostep == 0 }

// work runs q's jobs until none is left, in order. A job a Wait has
// claimed (runInline) it leaves to that Wait and stops, rather than
// sleep until the job's end and be woken then: the job's end (runJob)
// starts a worker again if jobs are left.
func (q *nbcQueue) work() {
	q.mu.Lock()
	for len(q.jobs) > 0 {
		j := q.jobs[0]
		q.mu.Unlock()
		if j.claim() {
			q.runJob(j)
			q.mu.Lock()
			continue
		}
		if workHook != nil {
			workHook()
		}
		q.mu.Lock()
		if len(q.jobs) > 0 && q.jobs[0] == j && !j.claimable() {
			// Still running: its end restarts the worker, and a
			// step that leaves it hands it over (leave). (A step
			// that left it since the claim failed made it
			// claimable again: the loop claims it.)
			q.wanted = true
			break
		}
	}
	q.running = false
	q.mu.Unlock()
}

// runJob runs j, first in q's line and claimed by the caller, to its end,
// then ends it (end). The caller's goroutine (raw.Goroutine) tells drain
// that a collective called from the job is the job's own; where raw has
// no assembly for that, it keeps to its thread meanwhile, which is what
// identifies it there. (Not elsewhere: a worker locked to its thread
// takes the processor from a rank's one core only by a hand-over between
// threads, which a loop of Tests at GOMAXPROCS 1 never makes: an
// Iallreduce polled by Test took 20 ms.)
func (q *nbcQueue) runJob(j *nbcJob) {
	q.enter()
	err := j.run(j.c)
	q.exit()
	if q.end(j, err) {
		q.stepFirst()
	}
}

// enter makes the calling goroutine q's runner (runJob) until exit.
func (q *nbcQueue) enter() {
	if raw.GoroutineByThread {
		runtime.LockOSThread()
	}
	q.runner.Store(raw.Goroutine())
}

// exit is the end of enter.
func (q *nbcQueue) exit() {
	q.runner.Store(0)
	if raw.GoroutineByThread {
		runtime.UnlockOSThread()
	}
}

// end ends j, first in q's line and run to its end by the caller with
// outcome err: it takes j out of the line and completes it; the jobs
// after it go on (schedule). It reports whether the caller should step
// the first of them (stepFirst; a step's caller, in its loop, goes on to
// it anyway: no step nests in another).
func (q *nbcQueue) end(j *nbcJob, err error) (step bool) {
	if err != nil {
		j.err = fmt.Errorf("comm: %s: %w", j.call, err)
	}
	q.mu.Lock()
	q.jobs[0] = nil // the backing array must not keep done jobs alive
	q.jobs = q.jobs[1:]
	q.pending.Add(-1)
	if !j.step.Load() {
		q.nostep--
	}
	wanted := q.wanted
	q.wanted = false
	next := false
	switch {
	case len(q.jobs) == 0:
		q.idle.Broadcast()
		if q.parked {
			q.parked = false
			nbcParked.Add(-1)
		}
	case wanted && !q.running:
		// A kick came while j ran (or the worker left j to its runner):
		// the jobs after it are the worker's, not parked until the next.
		q.unpark()
		q.startWorker()
	default:
		next = q.schedule()
	}
	q.mu.Unlock()
	// The MPI's request first: a waiter woken by done may go straight into
	// MPI_Wait, holding its P while this goroutine would need one.
	if j.complete != nil {
		j.complete()
	}
	close(j.done)
	jobEnds.signal()
	jobEnded()
	return next
}

// runInline is the Wait of job j: while j is not done, it runs the job
// first in line itself if nobody runs it now (the worker has not claimed
// it, a step left it), so that a collective waited for at once costs no
// hand-over to the worker's thread; then it waits for j.
func (q *nbcQueue) runInline(j *nbcJob) {
	for j.claimable() && q.runFirst() {
	}
	select {
	case <-j.done:
		return
	default:
	}
	q.mu.Lock()
	q.addWaiter()
	q.mu.Unlock()
	<-j.done
	q.mu.Lock()
	q.waiters--
	q.mu.Unlock()
}

// addWaiter counts the caller among those blocked until q's jobs end (a
// Wait, a drain) while someone else runs the first: from now on the
// jobs go on without tests, on the worker (schedule; leave hands a
// step's job to it), which starts now if the first job is free. q.mu is
// held.
func (q *nbcQueue) addWaiter() {
	q.waiters++
	if !q.running && len(q.jobs) > 0 && q.jobs[0].claimable() {
		q.unpark()
		q.startWorker()
	}
}

// runFirst runs the job first in line here to its end if nobody runs it
// now, reporting whether it did. Once it is claimed nothing waits for a
// kick (until the job's end parks the jobs after it: end).
func (q *nbcQueue) runFirst() bool {
	h := q.claimFirst(false)
	if h == nil {
		return false
	}
	q.runJob(h)
	return true
}

// claimFirst claims the job first in line, one that may step only if
// step (for a step), and returns it; nil if there is none or someone
// runs it. q.mu must not be held.
func (q *nbcQueue) claimFirst(step bool) *nbcJob {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.jobs) == 0 {
		return nil
	}
	h := q.jobs[0]
	if step && !h.step.Load() || !h.claim() {
		return nil
	}
	if q.parked && !step {
		// (A step leaves the queue parked: a kick meanwhile is
		// remembered, wanted, and the step hands the job over.)
		q.parked = false
		nbcParked.Add(-1)
	}
	return h
}

// drain waits until q has no job queued or running, unless the caller is
// q's worker (a collective of a job).
func (q *nbcQueue) drain() {
	if q == nil || q.pending.Load() == 0 {
		return
	}
	if q.runner.Load() == raw.Goroutine() {
		return
	}
	// Run what nobody has claimed here, in order (as runInline does):
	// the queue's worker may not be running (nbcLazy), and a blocking
	// collective waits for all of it anyway.
	for q.runFirst() {
	}
	q.mu.Lock()
	if len(q.jobs) > 0 {
		q.addWaiter()
		for len(q.jobs) > 0 {
			q.idle.Wait()
		}
		q.waiters--
	}
	q.mu.Unlock()
}

// nbcDrainAll lets every communicator's queued collectives run out
// (Finalize: a job must not outlive the runtime it runs on).
func nbcDrainAll() {
	for _, q := range allQueues() {
		q.drain()
	}
}

// allQueues returns the queues of nbcQueues.
func allQueues() []*nbcQueue {
	nbcQueues.Lock()
	defer nbcQueues.Unlock()
	qs := make([]*nbcQueue, 0, len(nbcQueues.all))
	for q := range nbcQueues.all {
		qs = append(qs, q)
	}
	return qs
}

// forgetQueue drops c's queue from nbcQueues once c is freed.
func (c *Comm) forgetQueue() {
	if q := c.nbc.Load(); q != nil {
		q.drain()
		nbcQueues.Lock()
		delete(nbcQueues.all, q)
		nbcQueues.Unlock()
	}
}

// The nonblocking collectives. Each is collective and nonblocking: every
// rank of c calls it in the same order as c's other collectives, blocking
// or not; it returns at once, and the request completes (Wait, Test and
// their kin) once the operation is done on this rank, with the empty
// status, or with the error the blocking form would have returned
// (mismatched arguments are an error on every rank, from its Wait). The
// buffers belong to the operation until then: they must not be written
// (nor, for results, read) before the request completes. Argument errors
// this rank can see alone (a nil communicator, a freed one) are returned
// at once.

// Ibcast is Bcast started (MPI_Ibcast).
func Ibcast[T atomics.Elem](c *Comm, buf []T, root int) (*Request, error) {
	return c.startNBC("Ibcast", func(t *Comm) error { return Bcast(t, buf, root) })
}

// Ireduce is Reduce started (MPI_Ireduce).
func Ireduce[T atomics.Elem, O Operation[T]](c *Comm, send, recv []T, op O, root int) (*Request, error) {
	return c.startNBC("Ireduce", func(t *Comm) error { return Reduce(t, send, recv, op, root) })
}

// IreduceInPlace is ReduceInPlace started (MPI_Ireduce with MPI_IN_PLACE).
func IreduceInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []T, op O, root int) (*Request, error) {
	return c.startNBC("IreduceInPlace", func(t *Comm) error { return ReduceInPlace(t, buf, op, root) })
}

// Iallreduce is Allreduce started (MPI_Iallreduce).
func Iallreduce[T atomics.Elem, O Operation[T]](c *Comm, send, recv []T, op O) (*Request, error) {
	return c.startNBC("Iallreduce", func(t *Comm) error { return Allreduce(t, send, recv, op) })
}

// IallreduceInPlace is AllreduceInPlace started (MPI_Iallreduce with
// MPI_IN_PLACE).
func IallreduceInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []T, op O) (*Request, error) {
	return c.startNBC("IallreduceInPlace", func(t *Comm) error { return AllreduceInPlace(t, buf, op) })
}

// Igather is Gather started (MPI_Igather).
func Igather[T atomics.Elem](c *Comm, send, recv []T, root int) (*Request, error) {
	return c.startNBC("Igather", func(t *Comm) error { return Gather(t, send, recv, root) })
}

// IgatherInPlace is GatherInPlace started (MPI_Igather with MPI_IN_PLACE).
func IgatherInPlace[T atomics.Elem](c *Comm, buf []T, root int) (*Request, error) {
	return c.startNBC("IgatherInPlace", func(t *Comm) error { return GatherInPlace(t, buf, root) })
}

// Igatherv is Gatherv started (MPI_Igatherv).
func Igatherv[T atomics.Elem](c *Comm, send, recv []T, counts, displs []int, root int) (*Request, error) {
	return c.startNBC("Igatherv", func(t *Comm) error { return Gatherv(t, send, recv, counts, displs, root) })
}

// IgathervInPlace is GathervInPlace started (MPI_Igatherv with
// MPI_IN_PLACE).
func IgathervInPlace[T atomics.Elem](c *Comm, buf []T, counts, displs []int, root int) (*Request, error) {
	return c.startNBC("IgathervInPlace", func(t *Comm) error { return GathervInPlace(t, buf, counts, displs, root) })
}

// Iscatter is Scatter started (MPI_Iscatter).
func Iscatter[T atomics.Elem](c *Comm, send, recv []T, root int) (*Request, error) {
	return c.startNBC("Iscatter", func(t *Comm) error { return Scatter(t, send, recv, root) })
}

// IscatterInPlace is ScatterInPlace started (MPI_Iscatter with
// MPI_IN_PLACE).
func IscatterInPlace[T atomics.Elem](c *Comm, buf []T, root int) (*Request, error) {
	return c.startNBC("IscatterInPlace", func(t *Comm) error { return ScatterInPlace(t, buf, root) })
}

// Iscatterv is Scatterv started (MPI_Iscatterv).
func Iscatterv[T atomics.Elem](c *Comm, send []T, counts, displs []int, recv []T, root int) (*Request, error) {
	return c.startNBC("Iscatterv", func(t *Comm) error { return Scatterv(t, send, counts, displs, recv, root) })
}

// IscattervInPlace is ScattervInPlace started (MPI_Iscatterv with
// MPI_IN_PLACE).
func IscattervInPlace[T atomics.Elem](c *Comm, buf []T, counts, displs []int, root int) (*Request, error) {
	return c.startNBC("IscattervInPlace", func(t *Comm) error { return ScattervInPlace(t, buf, counts, displs, root) })
}

// Iallgather is Allgather started (MPI_Iallgather).
func Iallgather[T atomics.Elem](c *Comm, send, recv []T) (*Request, error) {
	return c.startNBC("Iallgather", func(t *Comm) error { return Allgather(t, send, recv) })
}

// IallgatherInPlace is AllgatherInPlace started (MPI_Iallgather with
// MPI_IN_PLACE).
func IallgatherInPlace[T atomics.Elem](c *Comm, buf []T) (*Request, error) {
	return c.startNBC("IallgatherInPlace", func(t *Comm) error { return AllgatherInPlace(t, buf) })
}

// Iallgatherv is Allgatherv started (MPI_Iallgatherv).
func Iallgatherv[T atomics.Elem](c *Comm, send, recv []T, counts, displs []int) (*Request, error) {
	return c.startNBC("Iallgatherv", func(t *Comm) error { return Allgatherv(t, send, recv, counts, displs) })
}

// IallgathervInPlace is AllgathervInPlace started (MPI_Iallgatherv with
// MPI_IN_PLACE).
func IallgathervInPlace[T atomics.Elem](c *Comm, buf []T, counts, displs []int) (*Request, error) {
	return c.startNBC("IallgathervInPlace", func(t *Comm) error { return AllgathervInPlace(t, buf, counts, displs) })
}

// Ialltoall is Alltoall started (MPI_Ialltoall).
func Ialltoall[T atomics.Elem](c *Comm, send, recv []T) (*Request, error) {
	return c.startNBC("Ialltoall", func(t *Comm) error { return Alltoall(t, send, recv) })
}

// IalltoallInPlace is AlltoallInPlace started (MPI_Ialltoall with
// MPI_IN_PLACE).
func IalltoallInPlace[T atomics.Elem](c *Comm, buf []T) (*Request, error) {
	return c.startNBC("IalltoallInPlace", func(t *Comm) error { return AlltoallInPlace(t, buf) })
}

// Ialltoallv is Alltoallv started (MPI_Ialltoallv).
func Ialltoallv[T atomics.Elem](c *Comm, send []T, sendCounts, sendDispls []int, recv []T, recvCounts, recvDispls []int) (*Request, error) {
	return c.startNBC("Ialltoallv", func(t *Comm) error {
		return Alltoallv(t, send, sendCounts, sendDispls, recv, recvCounts, recvDispls)
	})
}

// IalltoallvInPlace is AlltoallvInPlace started (MPI_Ialltoallv with
// MPI_IN_PLACE).
func IalltoallvInPlace[T atomics.Elem](c *Comm, buf []T, counts, displs []int) (*Request, error) {
	return c.startNBC("IalltoallvInPlace", func(t *Comm) error { return AlltoallvInPlace(t, buf, counts, displs) })
}

// IreduceScatterBlock is ReduceScatterBlock started
// (MPI_Ireduce_scatter_block).
func IreduceScatterBlock[T atomics.Elem, O Operation[T]](c *Comm, send, recv []T, op O) (*Request, error) {
	return c.startNBC("IreduceScatterBlock", func(t *Comm) error { return ReduceScatterBlock(t, send, recv, op) })
}

// IreduceScatterBlockInPlace is ReduceScatterBlockInPlace started
// (MPI_Ireduce_scatter_block with MPI_IN_PLACE).
func IreduceScatterBlockInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []T, op O) (*Request, error) {
	return c.startNBC("IreduceScatterBlockInPlace", func(t *Comm) error { return ReduceScatterBlockInPlace(t, buf, op) })
}

// Iscan is Scan started (MPI_Iscan).
func Iscan[T atomics.Elem, O Operation[T]](c *Comm, send, recv []T, op O) (*Request, error) {
	return c.startNBC("Iscan", func(t *Comm) error { return Scan(t, send, recv, op) })
}

// IscanInPlace is ScanInPlace started (MPI_Iscan with MPI_IN_PLACE).
func IscanInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []T, op O) (*Request, error) {
	return c.startNBC("IscanInPlace", func(t *Comm) error { return ScanInPlace(t, buf, op) })
}

// Iexscan is Exscan started (MPI_Iexscan).
func Iexscan[T atomics.Elem, O Operation[T]](c *Comm, send, recv []T, op O) (*Request, error) {
	return c.startNBC("Iexscan", func(t *Comm) error { return Exscan(t, send, recv, op) })
}

// IexscanInPlace is ExscanInPlace started (MPI_Iexscan with MPI_IN_PLACE).
func IexscanInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []T, op O) (*Request, error) {
	return c.startNBC("IexscanInPlace", func(t *Comm) error { return ExscanInPlace(t, buf, op) })
}
