//go:build !mpi

package main

/*
#include <stdlib.h>
#include "capi.h"
*/
import "C"

import (
	"fmt"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/internal/typesig"
	"github.com/shmrun/shmrun/internal/winc"
)

// MPI_Barrier runs in C (mpi_fast.h) over a communicator's descriptor,
// made after the first MPI_Barrier on it that went through Go (which makes
// the collective area) and cached by handle in shmrun_comms; so do
// MPI_Bcast, MPI_Reduce and MPI_Allreduce of data that fits a flag line,
// for the datatypes and ops of the tables filled here.

func init() {
	fillCollTables()
	if raw.RegisterLightFence() {
		C.shmrun_light_fence = 1
	}
}

// fillCollTables fills capi.h's tables of the predefined datatypes and
// ops the C small collectives take, from predefTypes and predefOps: the
// signature they publish is the one the Go path would (comm's typed
// wire: the element type when its basic type has the element's size, a
// data-movement call's as typesig.CollElem counts it).
func fillCollTables() {
	for _, p := range predefTypes {
		e := p.elem
		if e == 0 || dtype.Basic(e).Size() != int64(e.Size()) || e.Size() != p.size {
			continue
		}
		cls := C.SHMRUN_CLS_OTHER
		switch e {
		case atomics.Int8, atomics.Int16, atomics.Int32, atomics.Int64:
			cls = C.SHMRUN_CLS_SIGNED
		case atomics.Uint8, atomics.Uint16, atomics.Uint32, atomics.Uint64:
			cls = C.SHMRUN_CLS_UNSIGNED
		case atomics.Float32, atomics.Float64:
			cls = C.SHMRUN_CLS_FLOAT
		}
		if isLogicalName(p.name) {
			// Moved by the small collectives, reduced in Go (logicalOp).
			cls = C.SHMRUN_CLS_OTHER
		}
		msig, _ := typesig.Uniform(e) // 0: not uniform
		mtyp, unit := typesig.CollElem(e)
		C.shmrun_ctypes[p.h-hDatatypeNull] = C.shmrun_ctype{typ: C.uint8_t(e), size: C.uint8_t(p.size), cls: C.uint8_t(cls), msig: C.uint8_t(msig),
			mtyp: C.uint8_t(mtyp), mmul: C.uint8_t(p.size / unit)}
		for _, o := range predefOps {
			if o.op != atomics.Replace && o.op != atomics.NoOp && atomics.Check(o.op, e, false) == nil {
				C.shmrun_copok[e] |= 1 << uint(o.op)
			}
		}
	}
	for _, o := range predefOps {
		if o.op != atomics.Replace && o.op != atomics.NoOp {
			C.shmrun_cops[o.h-hOpNull] = C.uint8_t(o.op)
		}
	}
}

// commFast is a communicator's descriptor and the Go slow paths its C
// barrier hands over to; commH.fast holds it.
type commFast struct {
	d *C.shmrun_comm_desc
	b *winc.Barrier
}

// installCommDesc makes x's descriptor if it has none and the
// communicator has its collective area, and caches it.
func installCommDesc(x *commH) {
	tab.Lock()
	defer tab.Unlock()
	if x.fast != nil {
		setCommSlot(x.fast.d)
		return
	}
	if winc.NBCPending(x.c) {
		// A descriptor made now would not count the collectives queued
		// already (nbc.go), and its fast paths would run beside them.
		return
	}
	b := winc.BarrierOf(x.c)
	if b == nil {
		return
	}
	d := (*C.shmrun_comm_desc)(C.calloc(1, C.sizeof_shmrun_comm_desc))
	d.handle = C.uintptr_t(x.h)
	d.h = cword[winc.Coll, C.shmrun_coll](b.Coll)
	d.sig[0], d.sig[1] = C.uint64_t(b.Sig[0]), C.uint64_t(b.Sig[1])
	d.sleepers = cword[uint32, C.uint32_t](b.Sleepers)
	d.n, d.par, d.spin = C.uint32_t(b.N), C.uint32_t(b.Parities), C.int(b.Spin)
	d.lines, d.me = cword[uint32, C.char](b.Lines), C.uint32_t(b.Me)
	if b.Checked != nil {
		d.checked = cword[uint32, C.uint32_t](b.Checked)
	}
	x.fast = &commFast{d: d, b: b}
	setCommSlot(d)
}

// setCommSlot caches d under its handle.
func setCommSlot(d *C.shmrun_comm_desc) { C.shmrun_set_comm(d.handle, d) }

// dropCommDesc uncaches and frees x's descriptor; tab is locked for
// writing, and no C call may be using the communicator (it is being
// freed, or the library finalized).
func dropCommDesc(x *commH) {
	dropP2PDesc(x)
	if x.fast == nil {
		return
	}
	C.shmrun_unset_comm(x.fast.d)
	freeLater(x.fast.d)
	x.fast = nil
}

// dropAllCommDescs is dropCommDesc of every communicator (MPI_Finalize:
// later calls take the Go path, which names the error).
func dropAllCommDescs() {
	tab.Lock()
	defer tab.Unlock()
	for _, x := range tab.comms {
		dropCommDesc(x)
	}
}

// commFastOf is h's communicator's descriptor state, for the slow paths.
func commFastOf(h C.uintptr_t) (*commH, *commFast, C.int) {
	x, code := commOf("MPI_Barrier", uintptr(h))
	if code != 0 {
		return nil, nil, code
	}
	if x.fast == nil {
		return x, nil, x.raise("MPI_Barrier", fmt.Errorf("the communicator has no C barrier descriptor: %w", comm.ErrOther))
	}
	return x, x.fast, 0
}

// A window's fence barrier's slow paths (mpi_fast.h's shmrun_bar_arrive).

//export shmBarrierWait
func shmBarrierWait(h C.uintptr_t, old C.uint32_t, gen *C.uint32_t) C.int {
	return shmWinFenceWait(h, old, gen)
}

//export shmBarrierWake
func shmBarrierWake(h C.uintptr_t) { shmWinFenceWake(h) }

//export shmBarrierCorrupt
func shmBarrierCorrupt(h C.uintptr_t) C.int {
	x, code := winOf("MPI_Win_fence", uintptr(h))
	if code != 0 {
		return code
	}
	return x.raise("MPI_Win_fence", fmt.Errorf("more arrivals than ranks at a barrier: its line in the segment is corrupt: %w", comm.ErrOther))
}

//export shmCommWakeLines
func shmCommWakeLines(h C.uintptr_t) {
	if _, f, code := commFastOf(h); code == 0 {
		f.b.WakeLines()
	}
}

// collCallNames are the C names of the small collectives' kinds.
var collCallNames = map[C.uint8_t]string{format.CollBarrier: "MPI_Barrier", format.CollBcast: "MPI_Bcast", format.CollReduce: "MPI_Reduce", format.CollAllreduce: "MPI_Allreduce"}

// smallColl is the communicator of handle h and the C name of kind for
// the small collectives' slow paths, or the error code to return.
func smallColl(h C.uintptr_t, kind C.uint8_t) (*commH, string, C.int) {
	call := collCallNames[kind]
	x, code := commOf(call, uintptr(h))
	if code != 0 {
		return nil, call, code
	}
	if x.fast == nil {
		return nil, call, x.raise(call, fmt.Errorf("the communicator has no C collective descriptor: %w", comm.ErrOther))
	}
	return x, call, 0
}

//export shmCommWaitRound
func shmCommWaitRound(h C.uintptr_t, r C.uint32_t, kind C.uint8_t) C.int {
	x, call, code := smallColl(h, kind)
	if code != 0 {
		return code
	}
	if err := x.fast.b.WaitRound(uint32(r), uint8(kind)); err != nil {
		return x.raise(call, err)
	}
	return C.MPI_SUCCESS
}

//export shmCommMismatch
func shmCommMismatch(h C.uintptr_t, r C.uint32_t, kind, same C.uint8_t) C.int {
	x, call, code := smallColl(h, kind)
	if code != 0 {
		return code
	}
	if err := x.fast.b.Mismatch(uint32(r), uint8(kind), uint8(same)); err != nil {
		return x.raise(call, err)
	}
	return C.MPI_SUCCESS // signatures that differ and still match (a type that matches any by size)
}
