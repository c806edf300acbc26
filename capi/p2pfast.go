//go:build !mpi

package main

/*
#include <stdlib.h>
#include "capi.h"
*/
import "C"

import (
	"unsafe"

	"github.com/shmrun/shmrun/internal/winc"
)

// MPI_Send, MPI_Isend and MPI_Recv of eager messages run in C
// (p2p_fast.h) over a communicator's point-to-point descriptor, made by
// the first such call on it that goes through Go and cached by handle in
// shmrun_p2ps. They take the engine's lock and go on only while Go's
// engine holds nothing in progress (internal/winc's P2P); a completed C
// Isend's request is a handle of the form SHMRUN_REQ_SENT | k<<4
// (reqSent, isSent here).

// installP2PDesc makes x's point-to-point descriptor if it has none yet
// and the engine allows it (not observed), and caches it; a descriptor
// made before is cached again, in case another communicator's took its
// slot. One attempt to make it per communicator: tab is locked for
// writing only on the first call.
func installP2PDesc(x *commH) {
	if x.p2pTried.Load() {
		if d := x.p2p.Load(); d != nil {
			C.shmrun_set_p2p(d.handle, d)
		}
		return
	}
	tab.Lock()
	defer tab.Unlock()
	if x.p2pTried.Swap(true) {
		return
	}
	p := winc.P2POf(x.c)
	if p == nil || len(p.World) == 0 {
		return
	}
	d := (*C.shmrun_p2p_comm)(C.calloc(1, C.sizeof_shmrun_p2p_comm))
	w := (*[1 << 28]C.int32_t)(C.calloc(C.size_t(len(p.World)), 4))[:len(p.World):len(p.World)]
	for i, r := range p.World {
		w[i] = C.int32_t(r)
	}
	d.handle = C.uintptr_t(x.h)
	d.e = cword[winc.P2P, C.shmrun_p2p](p.Eng)
	d.tx = cword[winc.P2PTx, C.shmrun_p2p_tx](&p.Tx[0])
	d.rx = cword[winc.P2PRx, C.shmrun_p2p_rx](&p.Rx[0])
	d.world = &w[0]
	d.ctx, d.n, d.me = C.uint32_t(p.Ctx), C.uint32_t(len(p.World)), C.uint32_t(p.Me)
	x.p2p.Store(d)
	p2pComms.Store(x.h, x)
	C.shmrun_set_p2p(d.handle, d)
}

// dropP2PDesc uncaches and frees x's point-to-point descriptor; as
// dropCommDesc.
func dropP2PDesc(x *commH) {
	d := x.p2p.Swap(nil)
	if d == nil {
		return
	}
	p2pComms.Delete(x.h)
	C.shmrun_unset_p2p(d)
	freeLater(d.world)
	freeLater(d)
}

// reqSent and reqSentK are capi.h's SHMRUN_REQ_SENT and
// SHMRUN_REQ_SENT_K: the requests of eager MPI_Isends completed in C are
// reqSent | k<<4. Go's completion calls find each as a new reqH of a send
// complete with the empty status a completed Go send has (getReq); it is
// in no table, so retiring it frees nothing (dropReq).
const (
	reqSent  = 0x40000008
	reqSentK = 0x3ffffff0
)

// isSent reports whether h is the request of a send completed in C.
func isSent(h uintptr) bool { return h&^reqSentK == reqSent }

// p2pLayout is capi.h's point-to-point structs' layout, for the test that
// holds it to internal/winc's.
func p2pLayout() map[string]uintptr {
	var e C.shmrun_p2p
	var t C.shmrun_p2p_tx
	var r C.shmrun_p2p_rx
	return map[string]uintptr{
		"lock": unsafe.Offsetof(e.lock), "quiet": unsafe.Offsetof(e.quiet), "n": unsafe.Offsetof(e.n),
		"eager": unsafe.Offsetof(e.eager), "spin": unsafe.Offsetof(e.spin), "cq": unsafe.Offsetof(e.cq), "next_id": unsafe.Offsetof(e.next_id),
		"sizeof":  unsafe.Sizeof(e),
		"tx.ring": unsafe.Offsetof(t.ring), "tx.tail": unsafe.Offsetof(t.tail), "tx.seq": unsafe.Offsetof(t.seq),
		"tx.sleepers": unsafe.Offsetof(t.sleepers), "tx.head": unsafe.Offsetof(t.head),
		"tx.seen_tail": unsafe.Offsetof(t.seen_tail), "tx.stamp": unsafe.Offsetof(t.stamp),
		"tx.ring_len": unsafe.Offsetof(t.ring_len), "tx.sizeof": unsafe.Sizeof(t),
		"rx.ring": unsafe.Offsetof(r.ring), "rx.tail": unsafe.Offsetof(r.tail), "rx.pos": unsafe.Offsetof(r.pos),
		"rx.given": unsafe.Offsetof(r.given), "rx.stamp": unsafe.Offsetof(r.stamp),
		"rx.ring_len": unsafe.Offsetof(r.ring_len), "rx.sizeof": unsafe.Sizeof(r),
		"REQ_SENT": C.SHMRUN_REQ_SENT, "REQ_SENT_K": C.SHMRUN_REQ_SENT_K,
	}
}
