//go:build !mpi

package comm

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/shmrun/shmrun/barrier"
)

// Request is a nonblocking operation in progress (MPI_Request): a
// point-to-point send or receive, Ibarrier's, or a nonblocking
// collective's (Iallreduce and the rest; a Wait that finds its call not
// yet started by the communicator's worker runs it itself). Wait and Test may be
// called from any goroutine; once the request is complete they keep
// returning its outcome. The zero Request is complete with the empty
// status, as MPI_REQUEST_NULL is. A persistent request (SendInit,
// RecvInit and their forms) is different: each Start starts its
// operation anew, the Wait or Test that completes it returns its outcome,
// and until the next Start it is inactive: Wait and Test return the empty
// status at once.
type Request struct {
	// A request is small, since a message-rate loop allocates one per
	// message: a send written whole into the receiver's inbox at once
	// (an eager message) is complete when Isend returns and has no field
	// set (its requests come from a block of them); a receive's operation
	// goes back to the engine's free list when it completes, leaving its
	// outcome in rv (which comes from a block too).
	o   *op         // a send's operation, which keeps its outcome
	rv  *recvReq    // a receive's state
	ext *requestExt // what few requests need
}

// requestExt is the part of a Request most do not use: a fixed outcome
// (ProcNull's), a poll (Ibarrier's), a completion hook (a typed receive's
// scatter). mu orders them between goroutines.
type requestExt struct {
	mu    sync.Mutex
	done  bool
	st    Status
	err   error
	poll  func(block bool) (bool, error)      // reports completion; blocks if asked (not point-to-point)
	after func(Status, error) (Status, error) // run once at completion (a typed receive's scatter)
	pers  *persist                            // a persistent request's (p2p_persist.go); the fields above unused
	parts *[2]*Request                        // a send's and a receive's started together (isendrecv.go)
	job   *nbcJob                             // a nonblocking collective's, whose end rings the waits for several requests (jobEnded)
	coll  string                              // a nonblocking collective's call: Cancel and Free refuse it
}

// recvReq is a receive's request and what its operation leaves there when
// it completes (engine.complete): the operation itself then goes back to
// the engine's free list for a later receive, so that a window of
// receives allocates only these.
type recvReq struct {
	r         Request // the handle (r.rv is this)
	c         *Comm
	o         *op // the operation while pending (a stale link once done): under the engine's lock only
	err       error
	done      uint32 // doneSet once the fields below are set (a store-release), | doneCancelled
	from      int32  // the sender's world rank + 1 under shmrun --check (op.from)
	peer, tag int32  // the receive's, for the deadlock watch
	// The status, in 24 bytes rather than Status's 40 (a message-rate
	// loop allocates a recvReq a receive, and the collector runs as
	// often as the bytes allocated add up: 96 bytes, not 128): the
	// source (a communicator rank) and tag, the elements and bytes;
	// Cancelled is done's doneCancelled.
	src, stag    int32
	count, bytes int
}

// recvReq.done's bits.
const (
	doneSet       = 1
	doneCancelled = 2
)

// statusTo writes done receive rv's status to *st, field by field (see
// outcome).
func (rv *recvReq) statusTo(st *Status) {
	st.Source, st.Tag, st.Count, st.Cancelled, st.bytes = int(rv.src), int(rv.stag), rv.count, rv.done&doneCancelled != 0, rv.bytes
}

// status is done receive rv's status.
func (rv *recvReq) status() Status {
	var st Status
	rv.statusTo(&st)
	return st
}

// doneRequest is a request complete from the start with status st
// (ProcNull's).
func doneRequest(st Status) *Request { return &Request{ext: &requestExt{done: true, st: st}} }

// chkSnaps holds, under shmrun --check, the sender's message clock as the
// delivery of a receive found it (keyed by the receive's *op, then by its
// *recvReq once complete), until the call that completes the receive
// acquires it: chkReceived.
var chkSnaps sync.Map

// chkReceived is the acquire of its sender's clock by the thread that
// completes receive key (an *op or a *recvReq), from the world rank + 1
// the receive took its message from: once, a later Wait finds nothing.
func chkReceived(key any, from int32) {
	if chk != nil && from > 0 {
		if snap, ok := chkSnaps.LoadAndDelete(key); ok {
			chk.RecvSnap(snap.([]uint32))
		}
	}
}

func (rv *recvReq) isDone() bool { return atomic.LoadUint32(&rv.done) != 0 }

// waiting describes a wait for rv to the deadlock watch.
func (rv *recvReq) waiting() barrier.Waiting {
	return barrier.Waiting{Kind: barrier.WaitRecv, Peer: rv.peer, Tag: rv.tag}
}

// outcome writes the status of r's completed operation to *st and
// returns its error, after its hook if it has one. (Through a pointer: a
// Status returned by value through two calls is copied by halves that
// the next load cannot forward from, which cost a message-rate loop more
// than the rest of Waitall.)
func (r *Request) outcome(st *Status) error {
	var err error
	if rv := r.rv; rv != nil {
		chkReceived(rv, rv.from)
		rv.statusTo(st)
		err = rv.err
	} else {
		*st, err = r.o.st, r.o.err
	}
	x := r.ext
	if x == nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.done {
		x.st, x.err, x.done = *st, err, true
		if x.after != nil {
			x.st, x.err = x.after(x.st, x.err)
			x.after = nil
		}
	}
	*st = x.st
	return x.err
}

// Wait blocks until the operation completes and returns its status
// (MPI_Wait): a receive's source, tag and count (ErrTruncate if the
// message was longer than the buffer), a cancelled receive's Cancelled.
// It returns ErrAborted if the job ends first. A nil Request is an error.
func (r *Request) Wait() (Status, error) {
	var st Status
	err := r.wait(&st)
	return st, err
}

// wait is Wait writing the status to *st.
func (r *Request) wait(st *Status) error {
	if r == nil {
		return fmt.Errorf("comm: Wait: nil request: %w", ErrArg)
	}
	if rv := r.rv; rv != nil {
		if !rv.isDone() {
			if err := rv.c.world.eng.waitDone(&rv.done, rv.waiting(), true); err != nil {
				return rv.c.wrapWait("Wait", err)
			}
		}
		return r.outcome(st)
	}
	if o := r.o; o != nil {
		if !o.isDone() {
			if err := o.c.world.eng.waitOp(o); err != nil {
				return o.c.wrapWait(o.call, err)
			}
		}
		return r.outcome(st)
	}
	x := r.ext
	if x == nil {
		*st = emptyStatus // the zero Request, or a send complete at its start
		return nil
	}
	if x.pers != nil {
		return x.pers.wait(st)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.done {
		_, x.err = x.pollOnce(true)
		x.done = true
	}
	*st = x.st
	return x.err
}

// pollOnce is x's poll, or its job's (a nonblocking collective's).
func (x *requestExt) pollOnce(block bool) (bool, error) {
	if x.poll == nil && x.job != nil {
		return x.job.poll(block)
	}
	return x.poll(block)
}

// Test reports whether the operation has completed, and if so its status
// (MPI_Test). Local: it never blocks. A nil Request is an error.
func (r *Request) Test() (Status, bool, error) { return r.test(true) }

// test is Test; a collective's job not yet complete gives the processor
// to its worker here if yield (testYield), else the caller does, once for
// all the requests it tests.
func (r *Request) test(yield bool) (Status, bool, error) {
	if r == nil {
		return Status{}, false, fmt.Errorf("comm: Test: nil request: %w", ErrArg)
	}
	var ok bool
	switch {
	case r.rv != nil:
		ok = r.rv.c.world.eng.poll(r.rv.isDone)
	case r.o != nil:
		ok = r.o.c.world.eng.poll(r.o.isDone)
	case r.ext == nil:
		return emptyStatus, true, nil
	case r.ext.pers != nil:
		return r.ext.pers.test(yield)
	default:
		x := r.ext
		x.mu.Lock()
		defer x.mu.Unlock()
		if !x.done {
			ok, err := x.pollOnce(false)
			if !ok && err == nil {
				if yield && x.job != nil && x.job.wantsYield() {
					testYield()
				}
				return Status{}, false, nil
			}
			x.done, x.err = true, err
		}
		return x.st, true, x.err
	}
	if !ok {
		return Status{}, false, nil
	}
	var st Status
	err := r.outcome(&st)
	return st, true, err
}

// complete reports whether r's operation is complete, after a progress
// step, without completing it: a Test would leave a persistent request
// inactive and its outcome returned (Testall's first pass). Local.
func (r *Request) complete() bool { return r.completeYield(true) }

// completeYield is complete; yield as for test.
func (r *Request) completeYield(yield bool) bool {
	switch {
	case r.rv != nil:
		return r.rv.c.world.eng.poll(r.rv.isDone)
	case r.o != nil:
		return r.o.c.world.eng.poll(r.o.isDone)
	case r.ext == nil:
		return true
	case r.ext.pers != nil:
		p := r.ext.pers
		if p.freed || !p.active || p.cur.o == nil && p.cur.rv == nil && p.cur.ext == nil {
			return true // Wait says what is wrong, or returns at once
		}
		return p.cur.completeYield(yield)
	}
	_, ok, err := r.test(yield) // Ibarrier's: keeps its outcome
	return ok || err != nil
}

// Cancel asks for a pending receive to be withdrawn (MPI_Cancel): if no
// message has matched it yet, it completes with Cancelled set in its
// status; otherwise it completes normally. Either way the request must
// still be completed by Wait or Test. Cancelling a send, or a request
// already complete, does nothing (the operation completes normally, as
// the standard allows). Local. A nil Request is an error, and a
// nonblocking collective's request ErrRequest (MPI 4.1 §6.12: it may not
// be cancelled).
func (r *Request) Cancel() error {
	if r == nil {
		return fmt.Errorf("comm: Cancel: nil request: %w", ErrArg)
	}
	if x := r.ext; x != nil && x.coll != "" {
		return fmt.Errorf("comm: Cancel: the request of %s, a nonblocking collective, may not be cancelled: %w", x.coll, ErrRequest)
	}
	if rv := r.rv; rv != nil && !rv.isDone() {
		rv.c.world.eng.cancel(rv)
	}
	if x := r.ext; x != nil && x.pers != nil {
		return x.pers.cancel()
	}
	return nil
}

// Ibarrier starts a barrier and returns at once (MPI_Ibarrier): the
// request completes when every rank of c has called Ibarrier as many times
// as this one has. Collective, nonblocking: it must be called by every rank
// in the same order as c's other collectives, but it waits for nobody (MPI
// 4.1 §6.12). A communicator's very first collective call sets up its
// collective area, which every rank must reach: when Ibarrier is that
// call, the making of the area and the arrival are queued as a nonblocking
// collective's job, and the request completes after it. Unlike the
// blocking collectives, a rank in Ibarrier while another is in a different
// collective is not detected.
func (c *Comm) Ibarrier() (*Request, error) {
	// Not prepare: Ibarrier's counters are apart from the rounds the
	// nonblocking collectives' jobs may be running, which it must not
	// wait for.
	if err := c.check("Ibarrier"); err != nil {
		return nil, err
	}
	j := c.ibarN.Add(1)
	a := c.coll.Load() // which publishes c.clocks too
	var made *Request  // the job that makes the area and arrives, until it has
	if a != nil {
		if c.clocks != nil {
			c.clocks.Release(clockIbarrier) // shmrun --check: before this rank's arrival
		}
		a.arriveIbarrier(j)
	} else {
		// shmrun --check: what this rank did before the call, released
		// by the job once the area (and its clocks) exist.
		held := chk.Held()
		// Queued as the nonblocking collectives are (nbc.go), so that
		// it runs in order with this rank's other collective calls on
		// c, which all make or use the area.
		var err error
		made, err = c.startJob("Ibarrier", func(*Comm) error {
			a, err := c.area("Ibarrier")
			if err != nil {
				return err
			}
			c.clocks.ReleaseHeld(clockIbarrier, held)
			a.arriveIbarrier(j) // a later call's may be there already: counts only rise
			return nil
		}, false)
		if err != nil {
			return nil, err
		}
	}
	next := 0 // ranks [0, next) are known to have arrived
	return &Request{ext: &requestExt{coll: "Ibarrier", poll: func(block bool) (bool, error) {
		if made != nil {
			var err error
			if block {
				_, err = made.Wait()
			} else if _, ok, terr := made.Test(); terr != nil {
				err = terr
			} else if !ok {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			a, made = c.coll.Load(), nil
		}
		if a.freed.Load() {
			// MPI 4.1 §7.4.3: an operation pending at MPI_Comm_free
			// completes normally. This one has: every rank made its
			// Ibarriers before its Free (collectives are in one order),
			// and Free's barrier saw every rank arrive there. The area
			// may already serve another communicator: it is not read.
			return true, nil
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

// arriveIbarrier publishes that this rank has made j Ibarrier calls, and
// wakes those waiting for it. A count is only ever raised: the goroutine
// of a first Ibarrier may publish after a later call has (both publish
// every call made by then).
func (a *collArea) arriveIbarrier(j uint32) {
	me := a.ibar[a.me]
	for {
		old := atomic.LoadUint32(me.Seq)
		if int32(old-j) >= 0 || atomic.CompareAndSwapUint32(me.Seq, old, j) {
			break // a compare-and-swap: a full fence before the wake's load of the sleepers
		}
	}
	me.Wake() // the count is the futex word
}
