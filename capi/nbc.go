//go:build !mpi

package main

/*
#include "mpi.h"
#include "capi.h"
int shmrun_nbc_run(uintptr_t a);
void shmrun_nbc_call_of(uintptr_t a, shmrun_nbc_call *c);
void shmrun_nbc_done(uintptr_t a);
void shmrun_nbc_free(uintptr_t a);
int shmrun_nbc_handles(uintptr_t a, int n, uintptr_t *out, int max);
static inline void shmrun_nbc_hold(shmrun_comm_desc *d, int by)
{
	__atomic_add_fetch(&d->nbc, by, __ATOMIC_RELEASE);
}
*/
import "C"

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/internal/winc"
)

// The nonblocking collectives of C (MPI_Iallreduce and the rest): the C
// half keeps the call's arguments (mpi.c's shmrun_nbc), and the job that
// package comm's queue runs on the communicator's worker makes the
// blocking call with them, through the library's own entry points, so
// that every check and path of the blocking call is the nonblocking
// one's. While a job is queued or running, the communicator's C fast
// paths leave the collective area to it (the descriptor's nbc count),
// and its errors are not raised where they happen, on the worker, but
// returned, to be raised by the call that completes the request
// (MPI 4.1 §6.12: errors of a nonblocking collective are reported at its
// completion).

// jobRunners are the goroutines running a C job now (onJob), one entry
// for each job each runs now (a few at most: one a communicator with
// jobs); n counts them, onJob's test when there are none. (A sync.Map's
// store and delete a job, or a map's, cost an Iallreduce polled by
// MPI_Test 5%.)
var jobRunners struct {
	sync.Mutex
	n  atomic.Int32
	gs []uintptr
}

// onJob reports whether the calling goroutine runs a nonblocking
// collective's job: raise then returns the error code, and the job
// carries the error to the request.
func onJob() bool {
	if jobRunners.n.Load() == 0 {
		return false
	}
	g := raw.Goroutine()
	jobRunners.Lock()
	defer jobRunners.Unlock()
	return slices.Contains(jobRunners.gs, g)
}

// enterJob counts the calling goroutine g among jobRunners until
// exitJob(g).
func enterJob() (g uintptr) {
	g = raw.Goroutine()
	jobRunners.Lock()
	jobRunners.gs = append(jobRunners.gs, g)
	jobRunners.n.Add(1)
	jobRunners.Unlock()
	return g
}

func exitJob(g uintptr) {
	jobRunners.Lock()
	if i := slices.Index(jobRunners.gs, g); i >= 0 {
		last := len(jobRunners.gs) - 1
		jobRunners.gs[i] = jobRunners.gs[last]
		jobRunners.gs = jobRunners.gs[:last]
		jobRunners.n.Add(-1)
	}
	jobRunners.Unlock()
}

// codeError is the error that error code code stands for.
func codeError(code C.int) error {
	class, _ := classOfCode(code)
	msg, _ := messageOf(code)
	return &classError{class: class, msg: msg}
}

// hold makes x's C fast paths leave its collective area to a job queued
// now (the descriptor's nbc count, if x has a descriptor) and returns
// what gives the area back once the job has run or could not be queued.
func hold(x *commH) (release func()) {
	tab.RLock()
	var d *C.shmrun_comm_desc
	if x.fast != nil {
		d = x.fast.d
	}
	tab.RUnlock()
	if d == nil {
		return func() {}
	}
	C.shmrun_nbc_hold(d, 1)
	return func() { C.shmrun_nbc_hold(d, -1) }
}

// shmInitColl makes persistent collective call (MPI_Bcast_init and the
// rest) on communicator h, whose arguments the C half keeps at arg for
// every start (freed by MPI_Request_free, or here if the call fails):
// each MPI_Start queues the blocking call with them, as shmStartColl does
// once. The info is checked (a wrong handle is this rank's error: making
// the request is local); its hints are not used.
//
//export shmInitColl
func shmInitColl(h C.uintptr_t, call *C.char, arg, info C.uintptr_t, req *C.uintptr_t) C.int {
	name := callName(call)
	x, code := commOf(name, uintptr(h))
	if code != 0 {
		C.shmrun_nbc_free(arg)
		return code
	}
	if _, err := infoMap(uintptr(info)); err != nil {
		C.shmrun_nbc_free(arg)
		return x.raise(name, err)
	}
	pins := pinHandles(arg, x.c.Size())
	var direct C.shmrun_nbc_call
	C.shmrun_nbc_call_of(arg, &direct)
	r, err := winc.InitColl(x.c, name, func() (func() error, func()) {
		release := hold(x)
		return func() error { return runJob(x.c, arg, &direct, release) }, release
	})
	if err != nil {
		unpin(pins)
		C.shmrun_nbc_free(arg)
		return x.raise(name, err)
	}
	tab.Lock()
	x.pcolls++
	tab.Unlock()
	*req = C.uintptr_t(newReq(reqH{c: x, persist: &persistent{r: r.(*comm.Request), name: call, arg: arg, pins: pins}}))
	return C.MPI_SUCCESS
}

// dropColl is the free of a persistent collective made on x: the last
// one after x's MPI_Comm_free lets go of x's handle.
func dropColl(x *commH) {
	tab.Lock()
	defer tab.Unlock()
	if x.pcolls--; x.pcolls == 0 {
		delete(tab.kept, x.h)
	}
}

// pinHandles keeps the program's datatypes and ops that the call of
// argument block arg (on a communicator of n ranks) uses alive until
// unpin: MPI_Type_free and MPI_Op_free of one while the call is pending
// only mark it (MPI 4.1 §5.1.10: a communication using a freed datatype
// completes normally), and its job still finds it by its handle.
func pinHandles(arg C.uintptr_t, n int) []uintptr {
	var few [8]C.uintptr_t
	k := int(C.shmrun_nbc_handles(arg, C.int(n), &few[0], C.int(len(few))))
	hs := few[:min(k, len(few))]
	if k > len(few) {
		hs = make([]C.uintptr_t, k)
		C.shmrun_nbc_handles(arg, C.int(n), &hs[0], C.int(k))
	}
	tab.Lock()
	defer tab.Unlock()
	var pins []uintptr
	for _, ch := range hs {
		h := uintptr(ch)
		t, isType := tab.types[h]
		o, isOp := tab.ops[h]
		if isType && !t.pre || isOp && o.user != nil {
			tab.pins[h]++
			pins = append(pins, h)
		}
	}
	return pins
}

// unpin lets go of pinHandles' handles, dropping those freed meanwhile.
func unpin(pins []uintptr) {
	if len(pins) == 0 {
		return
	}
	tab.Lock()
	defer tab.Unlock()
	for _, h := range pins {
		if tab.pins[h]--; tab.pins[h] > 0 {
			continue
		}
		delete(tab.pins, h)
		if t, ok := tab.types[h]; ok && t.dead {
			delete(tab.types, h)
		}
		if o, ok := tab.ops[h]; ok && o.dead {
			delete(tab.ops, h)
		}
	}
}

// dropPinned removes handle h's object from m, or, while a pending call
// pins it, marks it dead (set dead), to be removed at the last unpin. It
// reports false when the object was dead already (freed twice).
func dropPinned[T any](m map[uintptr]T, h uintptr, dead *bool) bool {
	tab.Lock()
	defer tab.Unlock()
	if *dead {
		return false
	}
	if tab.pins[h] > 0 {
		*dead = true
	} else {
		delete(m, h)
	}
	return true
}

// runJob runs the blocking call of argument block arg (call: its call
// as the Go half's entry point takes it, shmrun_nbc_call_of) on a job's
// goroutine (the caller's, while it runs: onJob), then ends the job: its
// block goes (shmrun_nbc_done) and release. A step's call that stopped
// (winc.Stopped: it runs again, from the start) ends nothing and returns
// winc.ErrTry.
func runJob(c *comm.Comm, arg C.uintptr_t, call *C.shmrun_nbc_call, release func()) error {
	g := enterJob()
	rc := runCall(arg, call)
	exitJob(g)
	if winc.Stopped(c) {
		return winc.ErrTry
	}
	C.shmrun_nbc_done(arg)
	release()
	if rc != C.MPI_SUCCESS {
		return codeError(rc)
	}
	return nil
}

// runCall makes the blocking call of argument block arg: straight into
// its Go half (call's entry) where its C half does nothing more on a
// job's way (shmrun_nbc_call_of), which saves a step two crossings
// between Go and C, else through the C half.
func runCall(arg C.uintptr_t, call *C.shmrun_nbc_call) C.int {
	k := call
	switch k.entry {
	case 1:
		return shmReduce(k.sbuf, k.rbuf, C.int64_t(k.rcount), k.rtype, k.op, k.root, k.comm, k.kind, k.inplace)
	case 2:
		return shmBcast(k.rbuf, C.int64_t(k.rcount), k.rtype, k.root, k.comm)
	case 3:
		return shmMove(k.sbuf, C.int64_t(k.scount), k.stype, k.rbuf, C.int64_t(k.rcount), k.rtype, k.root, k.comm, k.kind, k.inplace)
	}
	return C.shmrun_nbc_run(arg)
}

// shmStartColl starts nonblocking collective call (named by call) on
// communicator h, whose arguments the C half keeps at arg (it frees them,
// here if the call cannot start), and returns its request.
//
//export shmStartColl
func shmStartColl(h C.uintptr_t, call *C.char, arg C.uintptr_t, req *C.uintptr_t) C.int {
	name := callName(call)
	x, code := commOf(name, uintptr(h))
	if code != 0 {
		C.shmrun_nbc_free(arg)
		return code
	}
	release, pins := hold(x), pinHandles(arg, x.c.Size())
	var direct C.shmrun_nbc_call
	C.shmrun_nbc_call_of(arg, &direct)
	r, err := winc.StartNBC(x.c, name, func() error {
		err := runJob(x.c, arg, &direct, release)
		if err != winc.ErrTry {
			unpin(pins)
		}
		return err
	}, true)
	if err != nil {
		release()
		unpin(pins)
		C.shmrun_nbc_free(arg)
		return x.raise(name, err)
	}
	*req = C.uintptr_t(newReq(reqH{r: r.(*comm.Request), c: x, nbc: true}))
	return C.MPI_SUCCESS
}

// shmCommIdup is MPI_Comm_idup and (withInfo) MPI_Comm_idup_with_info: the
// duplication queued as a nonblocking collective on comm (nbc.go), whose
// job makes the communicator. The program's attributes are copied here,
// by their copy callbacks on the calling thread, from what comm holds at
// the call (MPI 4.1 §7.4.2: as if MPI_Comm_dup ran when MPI_Comm_idup is
// called; attributes changed after it, or comm freed, do not reach the
// duplicate). A copy callback's error is this call's, with newcomm
// MPI_COMM_NULL and no request (the duplication still runs, for the
// other ranks, and its communicator stays unfreed, as in commDup). The
// new handle is given now and names the communicator once the request
// completes (it is not to be used before); if the duplication fails, the
// request's completion raises the error and the handle names nothing. A
// wrong info on one rank fails every rank's request: the job refuses the
// Dup collectively, in the queue's order.
//
//export shmCommIdup
func shmCommIdup(h, info C.uintptr_t, withInfo C.int, out, req *C.uintptr_t) C.int {
	name := "MPI_Comm_idup"
	if withInfo != 0 {
		name += "_with_info"
	}
	x, code := commOf(name, uintptr(h))
	if code != 0 {
		return code
	}
	var bad error
	if withInfo != 0 {
		_, bad = infoMap(uintptr(info))
	}
	tab.Lock()
	nh := newHandle()
	tab.reserved[nh] = struct{}{} // until the job has registered it, or failed
	tab.Unlock()
	unreserve := func() { drop(tab.reserved, nh) }
	var as []attr
	var cerr error
	if bad == nil {
		as, cerr = copyAll(attrComm, x.h, attrsSnapshot(&x.uattrs), nh)
	}
	release := hold(x)
	r, err := winc.StartNBC(x.c, name, func() error {
		defer release()
		defer unreserve()
		if bad != nil {
			return winc.RefuseColl(x.c, name, format.CollDup, bad)
		}
		c, err := x.c.Dup()
		if err != nil {
			forgetAll(as)
			return err
		}
		if cerr != nil {
			return nil // the call failed on this rank: nobody waits for this
		}
		newCommAt(nh, c, x)
		y, _ := get(tab.comms, nh)
		tab.Lock()
		y.uattrs = as
		tab.Unlock()
		return nil
	}, false) // not one call: the duplication's
	if err != nil {
		release()
		unreserve()
		forgetAll(as)
		return x.raise(name, err)
	}
	if cerr != nil {
		*out, *req = hCommNull, hRequestNull
		return x.raise(name, cerr)
	}
	*out = C.uintptr_t(nh)
	*req = C.uintptr_t(newReq(reqH{r: r.(*comm.Request), c: x, nbc: true}))
	return C.MPI_SUCCESS
}
