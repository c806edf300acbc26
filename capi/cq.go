//go:build !mpi && cgo

package main

/*
#include <stdlib.h>
#include "capi.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/winc"
)

// Receives queued in C (capi.h's shmrun_cq, p2p_fast.h). MPI_Irecv of
// a basic type from a given source, while Go's engine is quiet, queues
// the receive in C (or receives its message at once) and hands out a
// handle of the form SHMRUN_REQ_CQ | gen<<14 | idx<<4; the completion
// calls (Wait, Test, their all, any and some forms) complete such
// requests in C while they can. The Go side
// meets them two ways:
//   - package comm's engine, whenever its lock is taken in Go, first
//     moves every receive still queued into its posted queue, in post
//     order (cqMigrate, through winc.CQMigrate): the receive becomes a Go
//     request kept in cqTab, and its slot says MIGRATED;
//   - a handle of the form reaching a Go completion call (getReq) is
//     looked up by slot: a MIGRATED one is cqTab's request; a receive
//     completed in C becomes a completed Go request there first (adopted
//     under cqMu); one still queued is moved by locking the engine
//     (winc.P2PFlush). Retiring the request frees the slot (cqDrop).

// cqTab holds the requests of the queued receives moved into Go, by
// slot: written under the engine's lock (cqMigrate) or cqMu (cqReq's
// adoption of a receive done in C) before the slot's state says
// MIGRATED, then the completing thread's, as any request's reqH.
var (
	cqTab [cqSlots]reqH
	cqMu  sync.Mutex
)

// p2pComms maps the handles of the communicators with a point-to-point
// descriptor (the only ones a receive can be queued on) to their
// objects, for cqMigrate, which runs under the engine's lock and so may
// not take tab's (installP2PDesc takes the engine's under it).
var p2pComms sync.Map // uintptr -> *commH

// Slot states (capi.h).
const (
	cqFree     = C.SHMRUN_CQ_FREE
	cqPosted   = C.SHMRUN_CQ_POSTED
	cqDone     = C.SHMRUN_CQ_DONE
	cqMigrated = C.SHMRUN_CQ_MIGRATED
	reqCQ      = C.SHMRUN_REQ_CQ
	reqCQBits  = C.SHMRUN_REQ_CQ_BITS
	cqSlots    = C.SHMRUN_CQ_SLOTS
)

func init() { winc.CQMigrate = cqMigrate }

// isCQ reports whether h is the request of a receive queued in C.
func isCQ(h uintptr) bool { return h&^reqCQBits == reqCQ }

// cqSlot is the slot and generation of queued receive handle h.
func cqSlot(h uintptr) (*C.shmrun_cq_slot, int, uint32) {
	idx := int(h>>4) & (cqSlots - 1)
	return &C.shmrun_cq.slot[idx], idx, uint32(h>>14) & 0xffff
}

// cqState is slot s's state word; cqSet stores it (after cqTab's entry).
func cqState(s *C.shmrun_cq_slot) uint32   { return loadWord(&s.state) }
func cqSet(s *C.shmrun_cq_slot, st uint32) { storeWord(&s.state, st) }

// cqMigrate is winc.CQMigrate: it moves every receive still queued in C
// into Go's engine by post, in post order, keeping each request in
// cqTab. The engine is locked.
func cqMigrate(post func(c any, buf []byte, src, tag, elem int, sig uint32) any) {
	for {
		idx := int(C.shmrun_cq_pop())
		if idx < 0 {
			return
		}
		s := &C.shmrun_cq.slot[idx]
		gen := cqState(s) >> 2
		v, ok := p2pComms.Load(uintptr(s.comm))
		if !ok {
			// Its communicator was freed while a thread queued on it.
			cqTab[idx] = reqH{done: true, err: fmt.Errorf("MPI_Irecv: the communicator (handle %#x) was freed: %w",
				uintptr(s.comm), comm.ErrComm)}
		} else {
			x := v.(*commH)
			buf := unsafe.Slice((*byte)(s.buf), int(s.room))
			r := post(x.c, buf, int(s.world), goTag(s.tag), int(s.es), uint32(s.sig))
			cqTab[idx] = reqH{r: r.(*comm.Request), c: x}
		}
		cqSet(s, gen<<2|cqMigrated)
	}
}

// cqReq is getReq for a queued receive's handle h: its request, moved
// into Go if it was not.
func cqReq(h uintptr) (*reqH, bool) {
	s, idx, gen := cqSlot(h)
	for range 3 {
		st := cqState(s)
		if st>>2 != gen {
			return nil, false
		}
		switch st & 3 {
		case cqMigrated:
			return &cqTab[idx], true
		case cqDone:
			cqMu.Lock()
			if cqState(s) == st {
				var x *commH
				if v, ok := p2pComms.Load(uintptr(s.comm)); ok {
					x = v.(*commH)
				}
				cqTab[idx] = reqH{r: winc.DoneRecv(int(s.src), int(s.rtag), int64(s.n)).(*comm.Request), c: x}
				cqSet(s, gen<<2|cqMigrated)
			}
			cqMu.Unlock()
		case cqPosted:
			cqFlush()
		default:
			return nil, false
		}
	}
	return nil, false
}

// cqDrop frees the slot of queued receive handle h, whose request is
// retired (nothing if h is not live).
func cqDrop(h uintptr) {
	s, idx, gen := cqSlot(h)
	if st := cqState(s); st>>2 != gen || st&3 == cqFree || st&3 == cqPosted {
		return
	}
	cqTab[idx] = reqH{}
	cqSet(s, gen<<2|cqFree)
}

// cqFlush moves the receives queued in C into Go's engine, if any were
// ever queued: before a communicator is freed or the library finalized,
// and for a handle of one still queued.
func cqFlush() {
	if C.shmrun_cq.e == nil {
		return
	}
	if w := worldH.Load(); w != nil {
		_ = winc.P2PFlush(w.c)
	}
}

// Persistent requests C may start (capi.h's shmrun_pers): states.
const (
	persInactive = C.SHMRUN_PERS_INACTIVE
	persCStarted = C.SHMRUN_PERS_C
	persGo       = C.SHMRUN_PERS_GO
)

func persGet(pc *C.shmrun_pers) uint32     { return loadWord(&pc.state) }
func persSet(pc *C.shmrun_pers, st uint32) { storeWord(&pc.state, st) }

// persSlot is the C table's entry of request handle h (a slot handle).
func persSlot(h uintptr) *unsafe.Pointer {
	return (*unsafe.Pointer)(unsafe.Pointer(&C.shmrun_perss[h>>4&(reqSlots-1)]))
}

// persC gives persistent request h (just made, inactive) a C part, so
// that MPI_Start and MPI_Startall may start it in C: a standard-mode
// send or a receive from a given rank, with its arguments as the call
// gave them (C checks them again at each start, and leaves to Go what
// its fast paths do not take). Only requests in a slot of the request
// table can have one.
func persC(h uintptr, buf *C.char, count C.int64_t, dt C.uintptr_t, peer, tag C.int, comm C.uintptr_t, send bool) {
	if _, _, ok := decodeReq(h); !ok {
		return
	}
	x, ok := getReq(h)
	if !ok {
		return
	}
	pc := (*C.shmrun_pers)(C.calloc(1, C.sizeof_shmrun_pers))
	pc.handle, pc.send = C.uintptr_t(h), C.uint32_t(cbool(send))
	pc.buf, pc.count, pc.dt, pc.comm = unsafe.Pointer(buf), C.MPI_Count(count), dt, comm
	pc.peer, pc.tag = C.int32_t(peer), C.int32_t(tag)
	x.pc = pc
	atomic.StorePointer(persSlot(h), unsafe.Pointer(pc))
}

// persDrop takes persistent request h's C part pc out of the C table and
// frees it (MPI_Request_free).
func persDrop(h uintptr, pc *C.shmrun_pers) {
	atomic.CompareAndSwapPointer(persSlot(h), unsafe.Pointer(pc), nil)
	freeC(pc)
}

// fromC hands the operation C started of persistent request x (if it
// did) to Go, for a call on x that goes through Go: a send's, complete at
// its start, or the receive C queued, which becomes Go's (cqReq) and
// whose slot retire frees.
func (x *reqH) fromC() {
	pc := x.pc
	if persGet(pc) != persCStarted {
		return
	}
	x.r = new(comm.Request) // a send complete at its start: the empty status
	if pc.send == 0 {
		if y, ok := cqReq(uintptr(pc.cq)); ok && y.r != nil {
			x.r, x.cqh = y.r, uintptr(pc.cq)
		} else {
			x.done, x.err = true, fmt.Errorf("the receive started in C (handle %#x) is lost: %w", uintptr(pc.cq), errRequest)
			if ok {
				x.err, x.cqh = y.err, uintptr(pc.cq)
			}
		}
	}
	pc.cq = 0
	persSet(pc, persGo)
}
