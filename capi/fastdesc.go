package main

/*
#include <stdlib.h>
#include "capi.h"

shmrun_win_desc *shmrun_wins[SHMRUN_WIN_SLOTS];

static void shmrun_set_win(int slot, shmrun_win_desc *d) {
	__atomic_store_n(&shmrun_wins[slot], d, __ATOMIC_RELEASE);
}
*/
import "C"

import (
	"github.com/shmrun/shmrun/win"
)

// Window handles and descriptors (capi.h): a window's handle names its
// slot; a window of the shared or allocate flavor has a descriptor the C
// fast path reads. Slots are reused lowest first; with every slot taken a
// window gets a handle past them and no descriptor.
var winSlots struct {
	used [C.SHMRUN_WIN_SLOTS]bool
	over uintptr // handles past the slots
}

// newWinHandle takes a window handle; tab is locked for writing.
func newWinHandle() (uintptr, int) {
	for s := range winSlots.used {
		if !winSlots.used[s] {
			winSlots.used[s] = true
			return uintptr(C.SHMRUN_WIN_BASE) + 16*uintptr(s), s
		}
	}
	winSlots.over++
	return uintptr(C.SHMRUN_WIN_BASE) + 16*(C.SHMRUN_WIN_SLOTS+winSlots.over), -1
}

// freeWinHandle gives h's slot back; tab is locked for writing.
func freeWinHandle(h uintptr) {
	if s := int((h - uintptr(C.SHMRUN_WIN_BASE)) / 16); s >= 0 && s < C.SHMRUN_WIN_SLOTS {
		C.shmrun_set_win(C.int(s), nil)
		winSlots.used[s] = false
	}
}

// newDesc builds w's descriptor (nil for flavors whose parts are not all
// mapped here).
func newDesc(w *win.Win) *C.shmrun_win_desc {
	if f := w.Attr().Flavor; f != win.FlavorShared && f != win.FlavorAllocate {
		return nil
	}
	n := w.Size()
	d := (*C.shmrun_win_desc)(C.calloc(1, C.sizeof_shmrun_win_desc))
	d.n = C.int(n)
	d.locked = (*C.int)(C.calloc(C.size_t(n), C.sizeof_int))
	d.base = (**C.char)(C.calloc(C.size_t(n), C.size_t(ptrSize)))
	d.size = (*C.MPI_Aint)(C.calloc(C.size_t(n), C.sizeof_MPI_Aint))
	d.disp = (*C.int)(C.calloc(C.size_t(n), C.sizeof_int))
	d.maxdisp = (*C.MPI_Aint)(C.calloc(C.size_t(n), C.sizeof_MPI_Aint))
	bases, sizes, disps, maxd := charPtrsAt(d.base, n), aintsAt(d.size, n), intsAt(d.disp, n), aintsAt(d.maxdisp, n)
	for q := range n {
		s, err := w.SharedQuery(q)
		if err != nil {
			freeDesc(d)
			return nil
		}
		bases[q], sizes[q], disps[q] = cptr(s.Bytes), C.MPI_Aint(s.Size), C.int(s.DispUnit)
		maxd[q] = -1 // no displacement is inside a part of disp unit 0
		if s.DispUnit > 0 {
			maxd[q] = C.MPI_Aint(s.Size / s.DispUnit)
		}
	}
	return d
}

func freeDesc(d *C.shmrun_win_desc) {
	if d == nil {
		return
	}
	freeC(d.locked)
	freeC(d.base)
	freeC(d.size)
	freeC(d.disp)
	freeC(d.maxdisp)
	freeC(d)
}

// noteEpoch records a passive-target epoch opened or closed by a
// synchronization call that succeeded.
func (x *winH) noteEpoch(kind, rank int) {
	d := x.desc
	if d == nil {
		return
	}
	// Stored from Go (atomically: C threads read them), not by a call
	// into C, which costs more than the rest of a Lock.
	switch kind {
	case syLockAll:
		storeInt(&d.lockall, 1)
	case syUnlockAll:
		storeInt(&d.lockall, 0)
	case syLock, syUnlock:
		if rank >= 0 && rank < int(d.n) {
			v := int32(0)
			if kind == syLock {
				v = 1
			}
			storeInt(&intsAt(d.locked, int(d.n))[rank], v)
		}
	}
}
