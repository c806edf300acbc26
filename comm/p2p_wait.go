//go:build !mpi

package comm

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/shmrun/shmrun/barrier"
)

// Completion of several requests. As in MPI, a completed request is
// deallocated: these functions set its entry of the slice to nil
// (MPI_REQUEST_NULL), and nil entries are skipped. A persistent request
// stays (it becomes inactive), and an inactive one counts as nil.

// waitRot rotates where Waitany, Waitsome and Testany start looking, so
// that a request that is always ready does not starve the others: the
// engine's rot, or this one for requests of no engine. (One counter for
// every engine of a process let the goroutine ranks of the test mode,
// calling in step, start one rank's calls at every other index: Waitany
// over four ready requests served two of them three times as often.)
var waitRot atomic.Uint32

// engineOf is the point-to-point engine of r (nil for a null request or
// a collective one).
func engineOf(r *Request) *engine {
	switch {
	case r.isNull():
	case r.rv != nil:
		return r.rv.c.world.eng
	case r.o != nil:
		return r.o.c.world.eng
	case r.ext != nil && r.ext.pers != nil && r.ext.pers.coll == nil:
		return r.ext.pers.c.world.eng // the world's engine, whichever communicator it works on now
	case r.ext != nil && r.ext.parts != nil:
		// An Isendrecv's: its parts' engine rings when they complete.
		if e := engineOf(r.ext.parts[1]); e != nil {
			return e
		}
		return engineOf(r.ext.parts[0])
	}
	return nil
}

// collOf is the collective request r stands for, which reports the job's
// end itself: r, a nonblocking collective's (or Ibarrier's, or
// Isendrecv's) request, or an active persistent collective's current
// one; nil for any other.
func collOf(r *Request) *Request {
	switch {
	case r == nil || r.o != nil || r.rv != nil || r.ext == nil:
		return nil
	case r.ext.pers == nil:
		return r
	case r.ext.pers.coll != nil && r.ext.pers.active && !r.ext.pers.freed:
		return &r.ext.pers.cur
	}
	return nil
}

// rotation is the counter testany starts from for reqs.
func rotation(reqs []*Request) *atomic.Uint32 {
	for _, r := range reqs {
		if e := engineOf(r); e != nil {
			return &e.rot
		}
	}
	return &waitRot
}

// waitMany waits until cond(), which tests reqs, holds: on the doorbell of
// the point-to-point engine if any request has one, which the end of a
// nonblocking collective's job rings too while this waits (watchJobs); an
// Ibarrier's request, whose completion rings nothing here, is then
// re-tested at least every millisecond. With no engine, by polling with
// growing sleeps that a job's end cuts short.
func waitMany(reqs []*Request, cond func() bool) error {
	var e *engine
	jobs, polled := false, false
	for _, r := range reqs {
		if x := engineOf(r); x != nil {
			e = x
		} else if q := collOf(r); q != nil && !q.completeYield(false) { // cond yields
			if q.ext.job != nil {
				jobs = true
			} else {
				polled = true
			}
		}
	}
	if e != nil {
		p := e.policy
		if polled {
			p.Sleep = min(p.Sleep, time.Millisecond)
		}
		if jobs {
			defer watchJobs(e)()
		}
		return e.waitFor(p, barrier.Waiting{Kind: barrier.WaitMany, Peer: -1, Tag: AnyTag}, cond)
	}
	// No engine: collective requests only. A job's end wakes the wait
	// (jobEnds, taken before the test so that no end is missed); the
	// growing timeout is for Ibarrier's, which has no job.
	for d := time.Microsecond; ; d = min(2*d, time.Millisecond) {
		ends := jobEnds.next()
		if cond() {
			return nil
		}
		for _, r := range reqs {
			if q := collOf(r); q != nil {
				// A collective request reports the job's end itself
				// (and keeps its outcome for the Wait or Test to come).
				if _, _, err := q.test(false); errors.Is(err, ErrAborted) {
					return barrier.ErrAborted
				}
			}
		}
		t := time.NewTimer(d)
		select {
		case <-ends:
		case <-t.C:
		}
		t.Stop()
	}
}

// testOne tests reqs[i] (nil, or an inactive persistent request: not
// ready).
func testOne(reqs []*Request, i int) (Status, bool, error) {
	if reqs[i].isNull() {
		return Status{}, false, nil
	}
	return reqs[i].test(false)
}

// yieldOnce is the tests of several requests' yield (testYield, or the
// C interface's): once a call if a collective's job among them has not
// run yet.
func yieldOnce(reqs []*Request, yield func()) {
	for _, r := range reqs {
		if jobPending(r) {
			yield()
			return
		}
	}
}

// done is what the calls on several requests do to a completed request's
// entry: nil, unless the request is persistent (it stays, inactive).
func done(reqs []*Request, i int) {
	if x := reqs[i].ext; x == nil || x.pers == nil {
		reqs[i] = nil
	}
}

func active(reqs []*Request) int {
	n := 0
	for _, r := range reqs {
		if !r.isNull() {
			n++
		}
	}
	return n
}

// abortErr is the error of a wait for several requests that the job's end
// interrupted.
func abortErr(call string) error {
	return fmt.Errorf("comm: %s: %w", call, ErrAborted)
}

// Waitall waits for every request (MPI_Waitall) and returns their
// statuses, in order, setting the entries to nil (a persistent request's
// entry stays: it becomes inactive). Blocking. If some failed, the error
// joins theirs, each naming its index.
func Waitall(reqs []*Request) ([]Status, error) {
	sts := make([]Status, len(reqs))
	return sts, WaitallInto(reqs, sts)
}

// WaitallInto is Waitall writing the statuses into sts, which must hold
// len(reqs) of them, or be nil when they are not wanted (as
// MPI_STATUSES_IGNORE): a loop of persistent requests started by Startall
// and completed by WaitallInto allocates nothing. Blocking.
func WaitallInto(reqs []*Request, sts []Status) error {
	if sts != nil && len(sts) < len(reqs) {
		return fmt.Errorf("comm: WaitallInto: %d statuses for %d requests: %w", len(sts), len(reqs), ErrArg)
	}
	var errs []error
	var ignored Status
	for i, r := range reqs {
		st := &ignored
		if sts != nil {
			st = &sts[i]
		}
		if r == nil {
			*st = emptyStatus
			continue
		}
		if err := r.wait(st); err != nil {
			if errors.Is(err, ErrAborted) {
				return err
			}
			errs = append(errs, fmt.Errorf("request %d: %w", i, err))
		}
		done(reqs, i)
	}
	return errors.Join(errs...)
}

// Testall reports whether every request is complete (MPI_Testall); if so
// it returns their statuses and sets the entries to nil, otherwise it
// leaves them all as they are (a persistent request stays active). Local.
func Testall(reqs []*Request) ([]Status, bool, error) {
	for i, r := range reqs {
		if !r.isNull() && !r.completeYield(false) {
			// The collectives after it are tested too: a test is when a
			// parked job starts (nbcLazy), and their jobs must progress
			// while this loops.
			for _, q := range reqs[i+1:] {
				if collOf(q) != nil {
					q.completeYield(false)
				}
			}
			yieldOnce(reqs, testYield)
			return nil, false, nil
		}
	}
	sts, err := Waitall(reqs)
	return sts, true, err
}

// Waitany waits until one of the requests completes (MPI_Waitany) and
// returns its index and status, setting its entry to nil. Blocking. With
// no non-nil request it returns Undefined at once. When several are
// complete, which one it returns rotates from call to call.
func Waitany(reqs []*Request) (int, Status, error) { return waitany(reqs, testYield) }

// waitany is Waitany whose polls, while a collective's job has not run,
// give the worker its turn by yield (testYield; the C interface's own).
func waitany(reqs []*Request, yield func()) (int, Status, error) {
	if active(reqs) == 0 {
		return Undefined, emptyStatus, nil
	}
	idx := -1
	var st Status
	var rerr error
	cond := func() bool {
		idx, st, rerr = testany(reqs, yield)
		return idx >= 0
	}
	if err := waitMany(reqs, cond); err != nil {
		return Undefined, Status{}, abortErr("Waitany")
	}
	return idx, st, rerr
}

// testany finds a complete request, starting at a rotating index, and
// sets its entry to nil; if none is, it yields (yieldOnce).
func testany(reqs []*Request, yield func()) (int, Status, error) {
	n := len(reqs)
	start := int(rotation(reqs).Add(1) % uint32(n))
	for k := range n {
		i := (start + k) % n
		st, ok, err := testOne(reqs, i)
		if ok {
			done(reqs, i)
			return i, st, err
		}
	}
	yieldOnce(reqs, yield)
	return -1, Status{}, nil
}

// Testany reports whether one of the requests is complete (MPI_Testany):
// if so its index and status, its entry set to nil. Local. With no non-nil
// request it returns Undefined and true.
func Testany(reqs []*Request) (int, Status, bool, error) {
	if active(reqs) == 0 {
		return Undefined, emptyStatus, true, nil
	}
	i, st, err := testany(reqs, testYield)
	if i < 0 {
		return Undefined, Status{}, false, nil
	}
	return i, st, true, err
}

// Waitsome waits until at least one request completes (MPI_Waitsome) and
// returns the indices and statuses of all that are complete, setting
// their entries to nil. Blocking. With no non-nil request it returns nil.
func Waitsome(reqs []*Request) ([]int, []Status, error) {
	if active(reqs) == 0 {
		return nil, nil, nil
	}
	var idx []int
	var sts []Status
	var errs []error
	cond := func() bool {
		idx, sts, errs = testsome(reqs)
		return len(idx) > 0
	}
	if err := waitMany(reqs, cond); err != nil {
		return nil, nil, abortErr("Waitsome")
	}
	return idx, sts, errors.Join(errs...)
}

// Testsome returns the indices and statuses of the requests that are
// complete (MPI_Testsome), setting their entries to nil. Local. With no
// active request it returns nil indices (MPI's outcount MPI_UNDEFINED);
// with active requests none of which is complete, an empty slice that is
// not nil (outcount 0).
func Testsome(reqs []*Request) ([]int, []Status, error) {
	if active(reqs) == 0 {
		return nil, nil, nil
	}
	idx, sts, errs := testsome(reqs)
	if idx == nil {
		idx = []int{}
	}
	return idx, sts, errors.Join(errs...)
}

func testsome(reqs []*Request) ([]int, []Status, []error) {
	var idx []int
	var sts []Status
	var errs []error
	for i := range reqs {
		st, ok, err := testOne(reqs, i)
		if !ok {
			continue
		}
		done(reqs, i)
		idx, sts = append(idx, i), append(sts, st)
		if err != nil {
			errs = append(errs, fmt.Errorf("request %d: %w", i, err))
		}
	}
	if len(idx) == 0 {
		yieldOnce(reqs, testYield)
	}
	return idx, sts, errs
}
