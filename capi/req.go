//go:build !mpi

package main

/*
#include <stdlib.h>
#include "mpi.h"
void shmrun_nbc_free(uintptr_t a);
*/
import "C"

import (
	"errors"
	"fmt"
	"github.com/shmrun/shmrun/internal/raw"
	"runtime"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/winc"
)

// reqOf is request handle h's object (nil for MPI_REQUEST_NULL).
func reqOf(call string, h C.uintptr_t) (*reqH, C.int) {
	if !initialized() {
		return nil, notInit(call)
	}
	if h == hRequestNull {
		return nil, 0
	}
	x, ok := getReq(uintptr(h))
	if !ok {
		return nil, raiseSelf(call, fmt.Errorf("an invalid request (handle %#x): %w", uintptr(h), errRequest))
	}
	if x.pc != nil {
		x.fromC()
	}
	return x, 0
}

// reqActive is reqOf for the completion calls: an inactive persistent
// request counts as MPI_REQUEST_NULL (nil), as the standard says.
func reqActive(call string, h C.uintptr_t) (*reqH, C.int) {
	x, code := reqOf(call, h)
	if x != nil && x.persist != nil && x.r == nil {
		return nil, code
	}
	return x, code
}

// retire ends request x's operation: a persistent request becomes
// inactive and keeps its handle; any other is freed and *h nulled. It
// returns the communicator whose handler x's errors go to: x itself is
// not to be used after (its slot is zeroed for a later request). The
// request's fields belong to the thread completing it (MPI: two threads
// may not complete one request at once), so no lock guards them.
func retire(x *reqH, h *C.uintptr_t) *commH {
	c := x.c
	if x.persist != nil {
		x.r, x.done, x.st, x.err = nil, false, comm.Status{}, nil
		if x.cqh != 0 {
			dropReq(x.cqh)
			x.cqh = 0
		}
		if x.pc != nil {
			persSet(x.pc, persInactive)
		}
		return c
	}
	first, n := x.chkFirst, x.chkN
	dropReq(uintptr(*h))
	*h = hRequestNull
	chkSettle(0, 0, first, n)
	chkDone(first, n)
	return c
}

// complete waits for (block) or tests request x and reports its outcome.
func (x *reqH) complete(block bool) (comm.Status, bool, error) {
	if x.done || x.r == nil {
		return x.st, true, x.err
	}
	if block {
		st, err := x.r.Wait()
		return st, true, err
	}
	if x.coll() {
		st, ok, err := x.testQuiet()
		if !ok && err == nil && winc.JobPending(x.r, false) {
			cYield()
		}
		return st, ok, err
	}
	return x.r.Test()
}

// cYield is a C thread's test of a collective not yet complete (MPI_Test
// and its kin): it lets the communicator's worker run the job. On one
// processor (GOMAXPROCS 1, a bound rank) it gives the processor up
// (Gosched): the worker takes it, C 22 ms -> 13.5 µs a polled Iallreduce
// (fa86093). With more, it gives the thread's CPU up (sched_yield): a
// Gosched from a C thread's call into Go hands the processor to another
// thread the system must wake, slower (unbound 2 ranks 80 µs-2.2 ms
// against 130 µs), and a sched_yield at GOMAXPROCS 1 lets the worker
// wait for the processor the C thread holds (11-26 ms). Go's own tests
// yield otherwise (comm's testYield).
func cYield() {
	if runtime.GOMAXPROCS(0) == 1 {
		runtime.Gosched()
		return
	}
	raw.YieldThread()
}

// testQuiet tests request x as complete does, but a collective's job not
// yet run does not yield to its worker: the caller tests several and
// yields once (yieldJobs).
func (x *reqH) testQuiet() (comm.Status, bool, error) {
	if x.done || x.r == nil {
		return x.st, true, x.err
	}
	if !x.coll() {
		return x.r.Test() // not a collective's: it never yields
	}
	var st comm.Status // escapes: a collective's request only
	ok, err := winc.TestQuiet(x.r, &st)
	return st, ok, err
}

// coll reports whether x is a collective's request (nonblocking, or
// persistent), whose job a test must let run.
func (x *reqH) coll() bool { return x.nbc || x.persist != nil && x.persist.arg != 0 }

// yieldJobs is the yield (cYield) of a call on several requests that
// stopped at an incomplete one, or found none complete: once a call, if
// a collective's job among xs (those from where it stopped) has not run
// yet; those parked start (a test is when a parked job starts), the
// ones past the request a call stopped at included. MPI_Testall,
// MPI_Testany and MPI_Testsome call it only when they hold a collective's
// request: it costs their calls on point-to-point requests nothing.
func yieldJobs(xs []*reqH) {
	pending := false
	for _, x := range xs {
		if x != nil && x.r != nil && !x.done && x.coll() && winc.JobPending(x.r, true) {
			pending = true
		}
	}
	if pending {
		cYield()
	}
}

// collsOf is the requests of handles h that are collectives', for
// yieldJobs (nil if none).
func collsOf(h []C.uintptr_t) []*reqH {
	var xs []*reqH
	for _, hh := range h {
		if x, ok := getReq(uintptr(hh)); ok && x.coll() {
			xs = append(xs, x)
		}
	}
	return xs
}

// errorOf raises a request's error on its communicator's handler.
func (x *reqH) errorOf(call string, err error) C.int { return reqError(x.c, call, err) }

// reqError raises the error of a request of communicator c (nil: none).
func reqError(c *commH, call string, err error) C.int {
	if errors.Is(err, comm.ErrAborted) || c == nil {
		return raiseSelf(call, err)
	}
	return c.raise(call, err)
}

// finish1 completes request *h (block: waits) into status; the handle
// becomes MPI_REQUEST_NULL once complete.
func finish1(call string, h *C.uintptr_t, status *C.MPI_Status, block bool) (bool, C.int) {
	x, code := reqActive(call, *h)
	if code != 0 {
		return false, code
	}
	if x == nil {
		emptyStatus(status)
		return true, C.MPI_SUCCESS
	}
	st, ok, err := x.complete(block)
	if !ok && err == nil {
		return false, C.MPI_SUCCESS
	}
	c := retire(x, h)
	if err != nil {
		code := reqError(c, call, err)
		setStatus(status, &st)
		return true, code
	}
	setStatus(status, &st)
	return true, C.MPI_SUCCESS
}

//export shmWait
func shmWait(h *C.uintptr_t, status *C.MPI_Status) C.int {
	_, code := finish1("MPI_Wait", h, status, true)
	return code
}

//export shmTest
func shmTest(h *C.uintptr_t, flag *C.int, status *C.MPI_Status) C.int {
	ok, code := finish1("MPI_Test", h, status, false)
	*flag = cbool(ok)
	return code
}

// shmWaitall is MPI_Waitall (block) and MPI_Testall. A request's error is
// in its status's MPI_ERROR and the call returns MPI_ERR_IN_STATUS.
//
//export shmWaitall
func shmWaitall(n C.int, hs *C.uintptr_t, statuses *C.MPI_Status, block C.int, flag *C.int) C.int {
	call := "MPI_Testall"
	if block != 0 {
		call = "MPI_Waitall"
	}
	h := cArray(hs, int(n))
	sts := cArray(statuses, int(n))
	var small [128]*reqH // a window of requests, without an allocation
	xs := small[:0]
	if len(h) > len(small) {
		xs = make([]*reqH, len(h))
	}
	xs = xs[:len(h)]
	for i := range h {
		x, code := reqActive(call, h[i])
		if code != 0 {
			return code
		}
		xs[i] = x
	}
	if block == 0 {
		for i, x := range xs {
			if x != nil && !x.done && x.r != nil {
				st, ok, err := x.testQuiet()
				if !ok {
					yieldJobs(xs[i:])
					*flag = 0
					return C.MPI_SUCCESS
				}
				x.keep(st, err) // harvested below, with the others
			}
		}
		*flag = 1
	}
	var f inStatus
	for i, x := range xs {
		var st *C.MPI_Status
		if sts != nil {
			st = &sts[i]
		}
		if x == nil {
			emptyStatus(st)
			continue
		}
		// Not x.complete: a Status returned by value through one more
		// call is copied by halves the next loads cannot forward from.
		s, err := x.st, x.err
		if !x.done && x.r != nil {
			s, err = x.r.Wait()
		}
		f.put(st, &s, err, retire(x, &h[i]))
	}
	return f.result(call)
}

// inStatus gathers what a multi-completion call writes into its
// statuses: each status with its MPI_ERROR, and the first failure, which
// the call raises as MPI_ERR_IN_STATUS on that request's communicator.
type inStatus struct {
	first  error
	firstC *commH
}

// put writes s and err's class into st (nil: MPI_STATUSES_IGNORE); c is
// the communicator of the request that ended with err.
func (f *inStatus) put(st *C.MPI_Status, s *comm.Status, err error, c *commH) {
	code := C.int(C.MPI_SUCCESS)
	if err != nil {
		code = classOf(err)
		if f.first == nil {
			f.first, f.firstC = err, c
		}
	}
	setStatus(st, s)
	if st != nil {
		st.MPI_ERROR = code
	}
}

// result is the call's return: MPI_ERR_IN_STATUS raised if a request
// failed, else MPI_SUCCESS.
func (f *inStatus) result(call string) C.int {
	if f.first != nil {
		return reqError(f.firstC, call, &inStatusError{f.first})
	}
	return C.MPI_SUCCESS
}

// inStatusError is the error of a multi-completion call some of whose
// requests failed: its class is MPI_ERR_IN_STATUS whatever the first
// failure's (MPI 4.1 §3.7.5), each status's MPI_ERROR saying which.
type inStatusError struct{ first error }

func (e *inStatusError) Error() string {
	return "a request failed (MPI_ERR_IN_STATUS; see each status's MPI_ERROR): " + e.first.Error()
}

func (e *inStatusError) Unwrap() error { return e.first }

// shmWaitany is MPI_Waitany (block) and MPI_Testany.
//
//export shmWaitany
func shmWaitany(n C.int, hs *C.uintptr_t, index *C.int, block C.int, flag *C.int, status *C.MPI_Status) C.int {
	call := "MPI_Testany"
	if block != 0 {
		call = "MPI_Waitany"
	}
	h := cArray(hs, int(n))
	for {
		active, coll := false, false
		for i := range h {
			x, code := reqActive(call, h[i])
			if code != 0 {
				return code
			}
			if x == nil {
				continue
			}
			active, coll = true, coll || x.coll()
			s, ok, err := x.testQuiet()
			if !ok && err == nil {
				continue
			}
			c := retire(x, &h[i])
			*index = C.int(i)
			if flag != nil {
				*flag = 1
			}
			if err != nil {
				code := reqError(c, call, err)
				setStatus(status, &s)
				return code
			}
			setStatus(status, &s)
			return C.MPI_SUCCESS
		}
		if !active {
			*index = C.MPI_UNDEFINED
			if flag != nil {
				*flag = 1
			}
			emptyStatus(status)
			return C.MPI_SUCCESS
		}
		if block == 0 {
			if coll {
				yieldJobs(collsOf(h))
			}
			*flag = 0
			return C.MPI_SUCCESS
		}
		if code := waitSome(call, h); code != 0 {
			return code
		}
	}
}

// waitSome blocks until one of the requests h completes (the runtime's
// Waitany over a copy), keeping the outcome in its object, where the
// caller's test then finds and harvests it.
func waitSome(call string, h []C.uintptr_t) C.int {
	var rs []any // *comm.Request
	var xs []*reqH
	for _, hh := range h {
		if x, ok := getReq(uintptr(hh)); ok && x.r != nil && !x.done {
			rs, xs = append(rs, x.r), append(xs, x)
		}
	}
	if len(rs) == 0 {
		return 0
	}
	var st comm.Status
	i, err := winc.Waitany(rs, &st, cYield) // its polls yield as a C thread's must
	if errors.Is(err, comm.ErrAborted) {
		return raiseSelf(call, err)
	}
	if i >= 0 {
		xs[i].keep(st, err)
	}
	return 0
}

// keep records the outcome of x's operation, found by a call that must
// not free the request (a persistent request's operation, once complete,
// is inactive in the runtime: its outcome is here alone).
func (x *reqH) keep(st comm.Status, err error) {
	x.done, x.st, x.err = true, st, err
}

// shmWaitsome is MPI_Waitsome (block) and MPI_Testsome.
//
//export shmWaitsome
func shmWaitsome(n C.int, hs *C.uintptr_t, outcount *C.int, indices *C.int, statuses *C.MPI_Status, block C.int) C.int {
	call := "MPI_Testsome"
	if block != 0 {
		call = "MPI_Waitsome"
	}
	h := cArray(hs, int(n))
	idx := cArray(indices, int(n))
	sts := cArray(statuses, int(n))
	for {
		active, coll, got := false, false, 0
		var f inStatus
		for i := range h {
			x, code := reqActive(call, h[i])
			if code != 0 {
				return code
			}
			if x == nil {
				continue
			}
			active, coll = true, coll || x.coll()
			s, ok, err := x.testQuiet()
			if !ok && err == nil {
				continue
			}
			c := retire(x, &h[i])
			idx[got] = C.int(i)
			var st *C.MPI_Status
			if sts != nil {
				st = &sts[got]
			}
			f.put(st, &s, err, c)
			got++
		}
		if !active {
			*outcount = C.MPI_UNDEFINED
			return C.MPI_SUCCESS
		}
		if got > 0 || block == 0 {
			if got == 0 && coll {
				yieldJobs(collsOf(h))
			}
			*outcount = C.int(got)
			return f.result(call)
		}
		if code := waitSome(call, h); code != 0 {
			return code
		}
	}
}

//export shmRequestFree
func shmRequestFree(h *C.uintptr_t) C.int {
	x, code := reqOf("MPI_Request_free", *h)
	if code != 0 {
		return code
	}
	if x == nil {
		return raiseSelf("MPI_Request_free", fmt.Errorf("MPI_REQUEST_NULL: %w", errRequest))
	}
	if x.nbc {
		return x.errorOf("MPI_Request_free", fmt.Errorf("the request of a nonblocking collective cannot be freed, only completed (MPI 4.1 §6.12): %w", errRequest))
	}
	// The operation goes on; nothing will ask for its outcome.
	if x.persist == nil && x.r != nil && !x.done {
		// A typed receive's data still has to reach its buffer, which
		// the completion call would have scattered there.
		if err := x.r.Free(); err != nil {
			return x.errorOf("MPI_Request_free", err)
		}
	}
	if x.persist != nil {
		if err := x.persist.r.Free(); err != nil {
			return x.errorOf("MPI_Request_free", err)
		}
		if x.persist.arg != 0 {
			C.shmrun_nbc_free(x.persist.arg) // inactive: no job holds it
			unpin(x.persist.pins)
			dropColl(x.c)
		}
		if x.cqh != 0 {
			dropReq(x.cqh) // its receive goes on in Go's engine
		}
		if x.pc != nil {
			persDrop(uintptr(*h), x.pc)
		}
	}
	dropReq(uintptr(*h))
	*h = hRequestNull
	return C.MPI_SUCCESS
}

//export shmCancel
func shmCancel(h *C.uintptr_t) C.int {
	x, code := reqOf("MPI_Cancel", *h)
	if code != 0 {
		return code
	}
	if x == nil {
		return raiseSelf("MPI_Cancel", fmt.Errorf("MPI_REQUEST_NULL: %w", errRequest))
	}
	if x.nbc || x.persist != nil && x.persist.arg != 0 {
		return x.errorOf("MPI_Cancel", fmt.Errorf("the request of a collective cannot be cancelled (MPI 4.1 §6.12, §6.13): %w", errRequest))
	}
	if x.r != nil {
		if err := x.r.Cancel(); err != nil {
			return x.errorOf("MPI_Cancel", err)
		}
	}
	return C.MPI_SUCCESS
}

//export shmGetCount
func shmGetCount(status *C.MPI_Status, dt C.uintptr_t, count *C.int64_t, elements C.int) C.int {
	call := "MPI_Get_count"
	if elements != 0 {
		call = "MPI_Get_elements"
	}
	t, err := typeOf(uintptr(dt))
	if err != nil {
		return raiseSelf(call, err)
	}
	n := statusBytes(status)
	if elements != 0 {
		// The basic elements received (elements.go): of the type map's
		// prefix the bytes fill, MPI_UNDEFINED if they end inside one.
		if e, ok := elementsOf(t.t, t.pre, n); ok {
			*count = C.int64_t(e)
		} else {
			*count = C.MPI_UNDEFINED
		}
		return C.MPI_SUCCESS
	}
	switch size := t.t.Size(); {
	case size == 0:
		*count = 0 // "If the size of the datatype is zero, this routine will return a count of zero" (MPI 4.1 §3.2.5)
	case n%size != 0:
		*count = C.MPI_UNDEFINED
	default:
		*count = C.int64_t(n / size)
	}
	return C.MPI_SUCCESS
}

// shmStatusSetElements is MPI_Status_set_elements and its _c and _x forms
// (call): the status's byte count becomes that of count basic elements of
// datatype dt (elementBytes), so that MPI_Get_elements with dt gives
// count and MPI_Get_count the whole instances they make, MPI_UNDEFINED
// when they end inside one (MPI 4.1 §12.3). The other fields stay.
//
//export shmStatusSetElements
func shmStatusSetElements(status *C.MPI_Status, dt C.uintptr_t, count C.int64_t, call *C.char) C.int {
	return typeCall(callName(call), func() error {
		if count < 0 {
			return fmt.Errorf("count %d is negative: %w", int64(count), comm.ErrCount)
		}
		t, err := typeOf(uintptr(dt))
		if err != nil {
			return err
		}
		if !t.t.Committed() {
			return fmt.Errorf("%v is not committed: %w", t.t, comm.ErrType)
		}
		n, err := elementBytes(t.t, t.pre, int64(count))
		if err != nil {
			return err
		}
		setStatusBytes(status, n)
		return nil
	})
}

//export shmTestCancelled
func shmTestCancelled(status *C.MPI_Status, flag *C.int) C.int {
	*flag = cbool(status.MPI_internal[2] != 0)
	return C.MPI_SUCCESS
}

// A persistent request (MPI_Send_init and its kin): the runtime's
// persistent request, which each MPI_Start starts anew (comm's
// Request.Start), and the init call's name.
type persistent struct {
	r    *comm.Request
	name *C.char // mpi.c's literal (static; callName caches by address)
	// arg is a persistent collective's argument block (mpi.c's
	// shmrun_nbc, kept across starts), freed with the request, and pins
	// the program's datatypes and ops it uses (pinHandles), let go then.
	arg  C.uintptr_t
	pins []uintptr
}

// shmPersistInit is MPI_Send_init, MPI_Ssend_init, MPI_Rsend_init and
// MPI_Recv_init (and their _c forms): an inactive request, the arguments
// checked as the operation would check them.
//
//export shmPersistInit
func shmPersistInit(p *C.char, count C.int64_t, dt C.uintptr_t, peer, tag C.int, h C.uintptr_t, send, mode C.int, req *C.uintptr_t, call *C.char) C.int {
	name := callName(call)
	x, t, b, code := p2pArgs(name, h, dt, p, count)
	if code != 0 {
		return code
	}
	var r *comm.Request
	var err error
	switch {
	case send == 0:
		r, err = x.c.RecvInitType(b, int(count), t, goRank(peer), goTag(tag))
	case mode == modeSync:
		r, err = x.c.SsendInitType(b, int(count), t, goRank(peer), int(tag))
	default:
		r, err = x.c.SendInitType(b, int(count), t, goRank(peer), int(tag))
	}
	if err != nil {
		return x.raise(name, err)
	}
	*req = C.uintptr_t(newReq(reqH{c: x, persist: &persistent{r: r, name: call}}))
	if mode != modeSync && peer >= 0 {
		persC(uintptr(*req), p, count, dt, peer, tag, h, send != 0)
	}
	return C.MPI_SUCCESS
}

// shmStart is MPI_Start: an inactive persistent request starts its
// operation.
//
//export shmStart
func shmStart(h *C.uintptr_t) C.int { return start("MPI_Start", h) }

// shmStartall is MPI_Startall: MPI_Start of each request in turn (one
// call into Go for them all), stopping at the first error.
//
//export shmStartall
func shmStartall(n C.int, hs *C.uintptr_t) C.int {
	if n < 0 {
		return raiseSelf("MPI_Startall", fmt.Errorf("count %d is negative: %w", n, comm.ErrCount))
	}
	h := cArray(hs, int(n))
	for i := range h {
		if code := start("MPI_Startall", &h[i]); code != C.MPI_SUCCESS {
			return code
		}
	}
	return C.MPI_SUCCESS
}

// start starts persistent request *h for call (MPI_Start, MPI_Startall).
func start(call string, h *C.uintptr_t) C.int {
	x, code := reqOf(call, *h)
	if code != 0 {
		return code
	}
	if x == nil || x.persist == nil {
		return raiseSelf(call, fmt.Errorf("not a persistent request (handle %#x): %w", uintptr(*h), errRequest))
	}
	if x.r != nil {
		return x.errorOf(call, fmt.Errorf("the persistent request of %s is active (started and not completed): %w", goString(x.persist.name), errRequest))
	}
	if err := x.persist.r.Start(); err != nil {
		return x.errorOf(call, err)
	}
	x.r = x.persist.r
	if x.pc != nil {
		persSet(x.pc, persGo)
	}
	return C.MPI_SUCCESS
}

// shmRequestGetStatus is MPI_Request_get_status: Test without freeing or
// deactivating the request (a null or inactive one is complete, with an
// empty status).
//
//export shmRequestGetStatus
func shmRequestGetStatus(h C.uintptr_t, flag *C.int, status *C.MPI_Status) C.int {
	x, code := reqActive("MPI_Request_get_status", h)
	if code != 0 {
		return code
	}
	if x == nil {
		*flag = 1
		emptyStatus(status)
		return C.MPI_SUCCESS
	}
	st, ok, err := x.complete(false)
	if ok {
		x.keep(st, err) // the request stays: a later completion call returns this
	}
	*flag = cbool(ok || err != nil)
	if err != nil {
		code := x.errorOf("MPI_Request_get_status", err)
		setStatus(status, &st)
		return code
	}
	if ok {
		setStatus(status, &st)
	}
	return C.MPI_SUCCESS
}

// peeked is what peek finds of a request: whether its operation is
// complete (a null or inactive request counts as complete, null set),
// its status and its error.
type peeked struct {
	st         comm.Status
	done, null bool
	x          *reqH
	err        error
}

// peek is MPI_Request_get_status of request h; the request stays as it
// is, its outcome kept for the call that completes it.
func peek(call string, h C.uintptr_t) (peeked, C.int) {
	x, code := reqActive(call, h)
	if code != 0 || x == nil {
		return peeked{done: true, null: true}, code
	}
	st, ok, err := x.testQuiet() // the caller yields once (yieldJobs)
	if ok || err != nil {
		x.keep(st, err)
	}
	return peeked{st: st, done: ok || err != nil, x: x, err: err}, 0
}

// shmRequestGetStatusAll is MPI_Request_get_status_all (MPI 4.1): Testall
// that leaves the requests as they are.
//
//export shmRequestGetStatusAll
func shmRequestGetStatusAll(n C.int, hs *C.uintptr_t, flag *C.int, statuses *C.MPI_Status) C.int {
	const call = "MPI_Request_get_status_all"
	if n < 0 {
		return raiseSelf(call, fmt.Errorf("count %d is negative: %w", n, comm.ErrCount))
	}
	h := cArray(hs, int(n))
	all := make([]peeked, len(h))
	for i := range h {
		p, code := peek(call, h[i])
		if code != 0 {
			return code
		}
		if !p.done {
			if cs := collsOf(h[i:]); cs != nil {
				yieldJobs(cs)
			}
			*flag = 0
			return C.MPI_SUCCESS
		}
		all[i] = p
	}
	*flag = 1
	sts := cArray(statuses, int(n))
	var f inStatus
	for i, g := range all {
		var st *C.MPI_Status
		if sts != nil {
			st = &sts[i]
		}
		if g.null {
			emptyStatus(st) // a null or inactive request's (MPI 4.1 §3.7.3)
			continue
		}
		f.put(st, &g.st, g.err, g.x.c)
	}
	return f.result(call)
}

// shmRequestGetStatusAny is MPI_Request_get_status_any (MPI 4.1): Testany
// that leaves the requests as they are. With no active request, index is
// MPI_UNDEFINED and flag true.
//
//export shmRequestGetStatusAny
func shmRequestGetStatusAny(n C.int, hs *C.uintptr_t, index *C.int, flag *C.int, status *C.MPI_Status) C.int {
	const call = "MPI_Request_get_status_any"
	if n < 0 {
		return raiseSelf(call, fmt.Errorf("count %d is negative: %w", n, comm.ErrCount))
	}
	h := cArray(hs, int(n))
	active, coll := false, false
	for i := range h {
		p, code := peek(call, h[i])
		if code != 0 {
			return code
		}
		if p.null {
			continue
		}
		active, coll = true, coll || p.x.coll()
		if !p.done {
			continue
		}
		*index, *flag = C.int(i), 1
		setStatus(status, &p.st)
		if p.err != nil {
			return p.x.errorOf(call, p.err)
		}
		return C.MPI_SUCCESS
	}
	*index, *flag = C.MPI_UNDEFINED, cbool(!active)
	if !active {
		emptyStatus(status)
	}
	if coll {
		yieldJobs(collsOf(h))
	}
	return C.MPI_SUCCESS
}

// shmRequestGetStatusSome is MPI_Request_get_status_some (MPI 4.1):
// Testsome that leaves the requests as they are. With no active request,
// outcount is MPI_UNDEFINED.
//
//export shmRequestGetStatusSome
func shmRequestGetStatusSome(n C.int, hs *C.uintptr_t, outcount *C.int, indices *C.int, statuses *C.MPI_Status) C.int {
	const call = "MPI_Request_get_status_some"
	if n < 0 {
		return raiseSelf(call, fmt.Errorf("count %d is negative: %w", n, comm.ErrCount))
	}
	h := cArray(hs, int(n))
	idx := cArray(indices, int(n))
	sts := cArray(statuses, int(n))
	active, coll, got := false, false, 0
	var f inStatus
	for i := range h {
		p, code := peek(call, h[i])
		if code != 0 {
			return code
		}
		if p.null {
			continue
		}
		active, coll = true, coll || p.x.coll()
		if !p.done {
			continue
		}
		idx[got] = C.int(i)
		var st *C.MPI_Status
		if sts != nil {
			st = &sts[got]
		}
		f.put(st, &p.st, p.err, p.x.c)
		got++
	}
	if !active {
		*outcount = C.MPI_UNDEFINED
		return C.MPI_SUCCESS
	}
	if got == 0 && coll {
		yieldJobs(collsOf(h))
	}
	*outcount = C.int(got)
	return f.result(call)
}
