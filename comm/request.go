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
}

// Request is a nonblocking operation in progress (MPI_Request), such as
// Ibarrier's. Wait and Test may be called from any goroutine; once the
// request is complete they keep returning its outcome.
type Request struct {
	mu   sync.Mutex
	poll func(block bool) (bool, error) // reports completion; blocks if asked
	done bool
	st   Status
	err  error
}

// Wait blocks until the operation completes and returns its status
// (MPI_Wait). It returns ErrAborted if the job ends first. A nil Request
// is an error.
func (r *Request) Wait() (Status, error) {
	if r == nil {
		return Status{}, fmt.Errorf("comm: Wait: nil request: %w", ErrArg)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.done {
		_, r.err = r.poll(true)
		r.done = true
	}
	return r.st, r.err
}

// Test reports whether the operation has completed, and if so its status
// (MPI_Test). Local: it never blocks. A nil Request is an error.
func (r *Request) Test() (Status, bool, error) {
	if r == nil {
		return Status{}, false, fmt.Errorf("comm: Test: nil request: %w", ErrArg)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.done {
		ok, err := r.poll(false)
		if !ok && err == nil {
			return Status{}, false, nil
		}
		r.done, r.err = true, err
	}
	return r.st, true, r.err
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
	me := a.ibar[a.me]
	atomics.StoreRelease32(me.Seq, j)
	a.fullFence()
	me.Notify()
	next := 0 // ranks [0, next) are known to have arrived
	return &Request{poll: func(block bool) (bool, error) {
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
		return true, nil
	}}, nil
}
