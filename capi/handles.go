//go:build !mpi

package main

/*
#include "capi.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/winc"
	"github.com/shmrun/shmrun/win"
)

// Predefined handle values (the standard's, include/abi/mpi.h).
const (
	hCommNull  = 0x100
	hCommWorld = 0x101
	hCommSelf  = 0x102

	hGroupNull  = 0x108
	hGroupEmpty = 0x109

	hWinNull     = 0x110
	hRequestNull = 0x180
	hInfoNull    = 0x130
	hInfoEnv     = 0x131

	hMessageNull   = 0x128
	hMessageNoProc = 0x129

	hErrorsAreFatal = 0x141
	hErrorsAbort    = 0x142
	hErrorsReturn   = 0x143
	hErrhandlerNull = 0x140

	hOpNull       = 0x20
	hDatatypeNull = 0x200

	// firstHandle is the first value this library gives a handle it makes:
	// 1..4095 are the standard's predefined values.
	firstHandle = 0x10000
)

// A commH is a communicator handle's object.
type commH struct {
	h    uintptr // its handle
	c    *comm.Comm
	errh uintptr
	name string
	attr *attrBlock // C memory for MPI_Comm_get_attr's answers (world only)
	fast *commFast  // the C barrier's descriptor, once made
	// The C eager point-to-point descriptor (p2pfast.go), once made;
	// p2pTried once its making was tried.
	p2p      atomic.Pointer[C.shmrun_p2p_comm]
	p2pTried atomic.Bool

	// uattrs are the attributes of the program's keys (attrcache.go),
	// under tab's lock; so are a window's and a datatype's.
	uattrs []attr
	// pcolls counts the persistent collectives made on it and not yet
	// freed, under tab's lock: MPI_Comm_free keeps the handle for their
	// jobs (tab.kept) until the last of them is freed.
	pcolls int
}

// A winH is a window handle's object.
type winH struct {
	h     uintptr // its handle
	w     *win.Win
	errh  uintptr
	name  string
	attrs winAttrs // C memory for MPI_Win_get_attr's answers
	comm  *comm.Comm
	desc  *C.shmrun_win_desc // the C fast path's descriptor, or nil
	fast  *winc.State        // its Go slow paths (nil with desc)

	uattrs []attr
}

// A reqH is a request handle's object: a point-to-point or collective
// request of the runtime, or one complete from the start (done, st), or
// one whose outcome a call that must not free it found (done, st, err:
// MPI_Request_get_status's and a wait for several requests').
type reqH struct {
	r       *comm.Request
	c       *commH // whose error handler its errors go to
	done    bool
	st      comm.Status
	err     error
	persist *persistent // a persistent request's (inactive while r is nil)
	// A persistent request C may start: its C part (capi.h's
	// shmrun_pers), and while an operation C started is Go's, the handle
	// of its receive queued in C, freed when it completes.
	pc  *C.shmrun_pers
	cqh uintptr
	// An RMA request form's buffers in shmcc --check's table (chkRMA),
	// dropped when the request completes.
	chkFirst uint32
	chkN     int
	// nbc: a nonblocking collective's (nbc.go), which MPI_Request_free
	// and MPI_Cancel may not take (MPI 4.1 §6.12).
	nbc bool
}

// The handle tables. One lock guards them all: lookups take it for
// reading, which goroutines and C threads share (MPI_THREAD_MULTIPLE).
var tab = struct {
	sync.RWMutex
	next    uintptr
	wrapped bool // next has come back from handleEnd: values are reused
	comms   map[uintptr]*commH
	groups  map[uintptr]*comm.Group
	wins    map[uintptr]*winH
	reqs    map[uintptr]*reqH
	types   map[uintptr]*typeH
	ops     map[uintptr]*opH
	infos   map[uintptr]*infoH
	errhs   map[uintptr]*errhH
	msgs    map[uintptr]*msgH
	// reserved are handles given out before their object exists
	// (MPI_Comm_idup's new communicator, until its job ends): live for
	// newHandle.
	reserved map[uintptr]struct{}
	// pins counts the pending nonblocking and persistent collectives
	// using a program's datatype or op (pinHandles).
	pins map[uintptr]int
	// kept are freed communicators' handles that their persistent
	// collectives' jobs still call with (their argument blocks hold the
	// handle): only a job finds them (commOf), on the communicator its
	// requests go on with (comm's KeptComm).
	kept map[uintptr]*commH
}{
	next:   firstHandle,
	comms:  map[uintptr]*commH{},
	groups: map[uintptr]*comm.Group{},
	wins:   map[uintptr]*winH{},
	reqs:   map[uintptr]*reqH{},
	types:  map[uintptr]*typeH{},
	ops:    map[uintptr]*opH{},
	infos:  map[uintptr]*infoH{},
	errhs:  map[uintptr]*errhH{},
	msgs:   map[uintptr]*msgH{},

	reserved: map[uintptr]struct{}{},
	pins:     map[uintptr]int{},
	kept:     map[uintptr]*commH{},
}

// handleEnd bounds the values newHandle gives: request slot handles have
// reqSpace set (and MPI_*_toint needs an int).
const handleEnd = reqSpace

// newHandle is a fresh handle value; tab is locked for writing. Values
// step by 16 so that no handle is a small offset of another. Once all
// 67 million below handleEnd have been given (a long run that makes and
// frees objects), they are given again from the first, skipping those
// still live: a freed handle names a new object only after every other
// value has been given out since.
func newHandle() uintptr {
	for range (handleEnd - firstHandle) / 16 {
		h := tab.next
		tab.next += 16
		if tab.next >= handleEnd {
			tab.next, tab.wrapped = firstHandle, true
		}
		if !tab.wrapped || !liveHandle(h) {
			return h
		}
	}
	// Every value is live: 67 million objects. Past handleEnd, a
	// request of the fallback map may share a slot handle's value.
	h := handleEnd + tab.next
	tab.next += 16
	return h
}

// liveHandle reports whether an object of any kind holds handle h; tab
// is locked.
func liveHandle(h uintptr) bool {
	_, c := tab.comms[h]
	_, g := tab.groups[h]
	_, w := tab.wins[h]
	_, r := tab.reqs[h]
	_, t := tab.types[h]
	_, o := tab.ops[h]
	_, i := tab.infos[h]
	_, e := tab.errhs[h]
	_, m := tab.msgs[h]
	_, v := tab.reserved[h]
	_, k := tab.kept[h]
	return c || g || w || r || t || o || i || e || m || v || k
}

// add stores x under a fresh handle in m and returns the handle.
func add[T any](m map[uintptr]T, x T) uintptr {
	tab.Lock()
	defer tab.Unlock()
	h := newHandle()
	m[h] = x
	return h
}

// get looks h up in m.
func get[T any](m map[uintptr]T, h uintptr) (T, bool) {
	tab.RLock()
	defer tab.RUnlock()
	x, ok := m[h]
	return x, ok
}

// drop removes h from m.
func drop[T any](m map[uintptr]T, h uintptr) {
	tab.Lock()
	defer tab.Unlock()
	delete(m, h)
}

// commOf is communicator handle h's object, or the error a call with it
// raises (on MPI_COMM_SELF's handler, there being no valid object).
func commOf(call string, h uintptr) (*commH, C.int) {
	if !initialized() {
		return nil, notInit(call)
	}
	if h == hCommWorld {
		if x := worldH.Load(); x != nil {
			return x, 0
		}
	}
	if x, ok := get(tab.comms, h); ok {
		return x, 0
	}
	if x, ok := get(tab.kept, h); ok && onJob() {
		return x, 0 // a persistent collective's job on a freed communicator
	}
	what := "an invalid communicator"
	if h == hCommNull {
		what = "MPI_COMM_NULL"
	}
	return nil, raiseSelf(call, fmt.Errorf("%s (handle %#x): %w", what, h, comm.ErrComm))
}

// worldH is MPI_COMM_WORLD's object, looked up without the tables' lock.
var worldH atomic.Pointer[commH]

// winOf is window handle h's object.
func winOf(call string, h uintptr) (*winH, C.int) {
	if !initialized() {
		return nil, notInit(call)
	}
	if x, ok := get(tab.wins, h); ok {
		return x, 0
	}
	what := "an invalid window"
	if h == hWinNull {
		what = "MPI_WIN_NULL"
	}
	return nil, raiseSelf(call, fmt.Errorf("%s (handle %#x): %w", what, h, win.ErrWin))
}

// raise raises err from call on x's error handler.
func (x *commH) raise(call string, err error) C.int {
	tab.RLock()
	eh := x.errh
	tab.RUnlock()
	return raise(call, eh, x.h, err)
}

// raise raises err from call on x's error handler.
func (x *winH) raise(call string, err error) C.int {
	tab.RLock()
	eh := x.errh
	tab.RUnlock()
	return raise(call, eh, x.h, err)
}

// raiseSelf raises err on MPI_COMM_SELF's handler.
func raiseSelf(call string, err error) C.int {
	if x, ok := get(tab.comms, hCommSelf); ok {
		return x.raise(call, err)
	}
	return raise(call, hErrorsAreFatal, hCommSelf, err)
}

// notInit is the error of a call made before MPI_Init or after
// MPI_Finalize.
func notInit(call string) C.int {
	st := "before MPI_Init"
	if finalized() {
		st = "after MPI_Finalize"
	}
	return raise(call, hErrorsAreFatal, 0, fmt.Errorf("called %s: %w", st, errNotInit))
}
