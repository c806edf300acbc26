package comm

import (
	"fmt"
	"sync"

	"github.com/shmrun/shmrun/atomics"
)

// Status describes a completed operation (MPI_Status): the source rank and
// tag of a received message, the elements it carried, and whether it was
// cancelled. A collective's request completes with the zero Status.
type Status struct {
	Source, Tag, Count int
	Cancelled          bool
	bytes              int // the message's length (GetCount)
}

// Request is a nonblocking operation in progress (MPI_Request): a
// point-to-point send or receive, or Ibarrier's. Wait and Test may be
// called from any goroutine; once the request is complete they keep
// returning its outcome.
type Request struct {
	mu   sync.Mutex
	done bool
	st   Status
	err  error
	eng  *engine // point-to-point: the engine, and the operation until the
	op   *op     // request completes (then a send's goes back to opPool)
	recv *op     // a receive's operation, never recycled: Cancel reads it without mu
	call string
	ext  *requestExt // what few requests need
}

// requestExt is the part of a Request most do not use, apart so that the
// one allocation of an Isend or Irecv stays small (a window of them is
// what a message-rate loop allocates, and the garbage collector runs as
// often as that fills its heap).
type requestExt struct {
	poll  func(block bool) (bool, error)      // reports completion; blocks if asked (not point-to-point)
	after func(Status, error) (Status, error) // run once at completion (a typed receive's scatter)
}

// doneRequest is a request complete from the start (ProcNull's).
func doneRequest(st Status) *Request { return &Request{done: true, st: st} }

// harvest records a completed operation's outcome in r and gives a send's
// operation back to the pool: nothing references it once it is complete
// (as for the blocking calls' operations). A receive's stays: Cancel may
// look at it from another goroutine while a Wait holds r.mu. r.mu is held.
func (r *Request) harvest() {
	o := r.op
	chkReceived(o)
	r.st, r.err, r.done, r.op = o.st, o.err, true, nil
	if r.recv == nil {
		putOp(o)
	}
	r.finish()
}

// chkReceived is a receive's acquire of its sender's clock by the thread
// that completes it (shmrun --check; deliver's, on the thread that
// delivered, may be another's).
func chkReceived(o *op) {
	if chk != nil && o.from > 0 {
		chk.Recv(int(o.from - 1))
	}
}

// Wait blocks until the operation completes and returns its status
// (MPI_Wait): a receive's source, tag and count (ErrTruncate if the
// message was longer than the buffer), a cancelled receive's Cancelled.
// It returns ErrAborted if the job ends first. A nil Request is an error.
func (r *Request) Wait() (Status, error) {
	if r == nil {
		return Status{}, fmt.Errorf("comm: Wait: nil request: %w", ErrArg)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.done {
		if r.op != nil {
			if err := r.eng.waitOp(r.op); err != nil {
				return Status{}, r.op.c.wrapWait(r.call, err)
			}
			r.harvest()
		} else {
			_, r.err = r.ext.poll(true)
			r.done = true
		}
	}
	return r.st, r.err
}

// finish runs r's completion hook, once.
func (r *Request) finish() {
	if r.ext != nil && r.ext.after != nil {
		r.st, r.err = r.ext.after(r.st, r.err)
		r.ext.after = nil
	}
}

// Test reports whether the operation has completed, and if so its status
// (MPI_Test). Local: it never blocks. A nil Request is an error.
func (r *Request) Test() (Status, bool, error) {
	if r == nil {
		return Status{}, false, fmt.Errorf("comm: Test: nil request: %w", ErrArg)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.ready() {
		return Status{}, false, nil
	}
	return r.st, true, r.err
}

// ready reports whether r is complete, recording its outcome if it has
// just completed; r.mu is held.
func (r *Request) ready() bool {
	if r.done {
		return true
	}
	if r.op != nil {
		if !r.eng.poll(r.op.isDone) {
			return false
		}
		r.harvest()
		return true
	}
	ok, err := r.ext.poll(false)
	if !ok && err == nil {
		return false
	}
	r.done, r.err = true, err
	return true
}

// Cancel asks for a pending receive to be withdrawn (MPI_Cancel): if no
// message has matched it yet, it completes with Cancelled set in its
// status; otherwise it completes normally. Either way the request must
// still be completed by Wait or Test. Cancelling a send, or a request
// already complete, does nothing (the operation completes normally, as
// the standard allows). Local. A nil Request is an error.
func (r *Request) Cancel() error {
	if r == nil {
		return fmt.Errorf("comm: Cancel: nil request: %w", ErrArg)
	}
	// Not under r.mu: a Wait for this very receive may hold it.
	if o := r.recv; o != nil && !o.isDone() {
		r.eng.cancel(o)
	}
	return nil
}

// Ibarrier starts a barrier and returns at once (MPI_Ibarrier): the
// request completes when every rank of c has called Ibarrier as many times
// as this one has. Collective, nonblocking: it must be called by every rank
// in the same order as c's other collectives, but it waits for nobody —
// except that a communicator's very first collective call (this one, if no
// other came before) sets up its collective area, which every rank must
// reach. Unlike the blocking collectives, a rank in Ibarrier while another
// is in a different collective is not detected.
func (c *Comm) Ibarrier() (*Request, error) {
	a, err := c.prepare("Ibarrier")
	if err != nil {
		return nil, err
	}
	a.ibarN++
	j := a.ibarN
	if c.clocks != nil {
		c.clocks.Release(clockIbarrier) // shmrun --check: before this rank's arrival
	}
	me := a.ibar[a.me]
	atomics.StoreRelease32(me.Seq, j)
	a.fullFence()
	me.Notify()
	next := 0 // ranks [0, next) are known to have arrived
	return &Request{ext: &requestExt{poll: func(block bool) (bool, error) {
		if a.freed.Load() {
			return false, fmt.Errorf("comm: Ibarrier on rank %d: the communicator was freed before the request completed: %w", c.Rank(), ErrComm)
		}
		for ; next < a.n; next++ {
			ev := a.ibar[next]
			if reached(ev.Seq, j) {
				continue
			}
			if !block {
				return false, nil
			}
			if err := ev.Await(a.abort, a.policy, func() bool { return reached(ev.Seq, j) }); err != nil {
				return false, c.wrapWait("Ibarrier", err)
			}
		}
		if c.clocks != nil {
			c.clocks.Acquire(clockIbarrier, nil) // shmrun --check: every member arrived
		}
		return true, nil
	}}}, nil
}
