//go:build !mpi

package main

/*
#include <stdlib.h>
#include "capi.h"
*/
import "C"

import (
	"github.com/shmrun/shmrun/internal/winc"
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

// dropAllWinDescs takes every window's descriptor out of the C table
// (MPI_Finalize): an RMA call on a window the program did not free then
// takes the Go path, which names a call after MPI_Finalize an error,
// rather than running in C as if MPI were still initialized. The
// descriptors stay allocated, as the windows themselves do.
func dropAllWinDescs() {
	tab.Lock()
	defer tab.Unlock()
	for s, used := range winSlots.used {
		if used {
			C.shmrun_set_win(C.int(s), nil)
		}
	}
}

// newDesc builds w's descriptor (nil for flavors whose parts are not all
// mapped here) and returns it with the Go slow paths its C calls hand over
// to.
func newDesc(w *win.Win) (*C.shmrun_win_desc, *winc.State) {
	if f := w.Attr().Flavor; f != win.FlavorShared && f != win.FlavorAllocate {
		return nil, nil
	}
	st := winc.Of(w)
	if st == nil {
		return nil, nil
	}
	n := w.Size()
	d := C.shmrun_new_win_desc()
	if d == nil {
		return nil, nil // no memory: the window works through Go
	}
	d.n = C.int(n)
	d.ep = cword[winc.Epoch, C.shmrun_epoch](st.Epoch)
	if n > 0 {
		d.tgt = cword[uint8, C.uint8_t](&st.Tgt[0])
	}
	d.global = cword[uint64, C.uint64_t](st.Global)
	d.gsleep = cword[uint32, C.uint32_t](st.GlobalSleepers)
	d.fstate = cword[uint64, C.uint64_t](st.FenceState)
	d.fsleep = cword[uint32, C.uint32_t](st.FenceSleepers)
	d.ffail[0] = cword[uint32, C.uint32_t](st.FenceFail[0])
	d.ffail[1] = cword[uint32, C.uint32_t](st.FenceFail[1])
	d.fn = C.uint32_t(st.FenceN)
	for p := range 2 {
		if st.FenceWord[p] != nil {
			d.fword[p] = cword[uint64, C.uint64_t](st.FenceWord[p])
			d.fwsleep[p] = cword[uint32, C.uint32_t](st.FenceWordSleepers[p])
		}
		if st.FencePeer[p] != nil {
			d.fpeer[p] = cword[uint64, C.uint64_t](st.FencePeer[p])
		}
	}
	d.spin = C.int(st.Spin)
	if n > 0 {
		d.starts_from = cword[uint32, C.uint32_t](&st.StartsFrom[0])
		d.posts_to = cword[uint32, C.uint32_t](&st.PostsTo[0])
		d.start_group = cword[int32, C.int32_t](&st.StartGroup[0])
		d.post_group = cword[int32, C.int32_t](&st.PostGroup[0])
	}
	words := func(src []*uint32) **C.uint32_t {
		p := (**C.uint32_t)(C.calloc(C.size_t(n), C.size_t(ptrSize)))
		dst := cArray(p, n)
		for r := range dst {
			dst[r] = cword[uint32, C.uint32_t](src[r])
		}
		return p
	}
	d.postw, d.completew, d.startw, d.waitw = words(st.PostWord), words(st.CompleteWord), words(st.StartWord), words(st.WaitWord)
	d.bellsleep = words(st.BellSleepers)
	d.parts = (*C.struct_shmrun_part)(C.calloc(C.size_t(n), C.sizeof_struct_shmrun_part))
	d.lockw = (**C.uint64_t)(C.calloc(C.size_t(n), C.size_t(ptrSize)))
	d.lsleep = (**C.uint32_t)(C.calloc(C.size_t(n), C.size_t(ptrSize)))
	parts := cArray(d.parts, n)
	lockw, lsleep := cArray(d.lockw, n), cArray(d.lsleep, n)
	for q := range n {
		s, err := w.SharedQuery(q)
		if err != nil {
			freeDesc(d)
			return nil, nil
		}
		p := &parts[q]
		p.base, p.size, p.disp = cptr(s.Bytes), C.MPI_Aint(s.Size), C.MPI_Aint(s.DispUnit)
		p.maxdisp = -1 // no displacement is inside a part of disp unit 0
		if s.DispUnit > 0 {
			p.maxdisp = C.MPI_Aint(s.Size / s.DispUnit)
		}
		lockw[q] = cword[uint64, C.uint64_t](st.LockWords[q])
		lsleep[q] = cword[uint32, C.uint32_t](st.LockSleepers[q])
	}
	return d, st
}

func freeDesc(d *C.shmrun_win_desc) {
	if d == nil {
		return
	}
	freeC(d.parts)
	freeC(d.lockw)
	freeC(d.lsleep)
	for _, p := range []**C.uint32_t{d.postw, d.completew, d.startw, d.waitw, d.bellsleep} {
		freeC(p)
	}
	for i := range d.groups {
		freeC(d.groups[i].ranks)
	}
	freeC(d)
}

// The slow paths of the C synchronization calls (mpi_fast.h): the C side
// made the first add on a lock word or the Lock_all count, and Go finishes
// the call by the protocol of package win.

//export shmWinLockAfter
func shmWinLockAfter(h C.uintptr_t, shared, rank C.int, v C.uint64_t) C.int {
	x, code := winOf("MPI_Win_lock", uintptr(h))
	if code != 0 {
		return code
	}
	after := x.fast.LockAfter
	if shared != 0 {
		after = x.fast.SharedAfter
	}
	if err := after(int(rank), uint64(v)); err != nil {
		return x.raise("MPI_Win_lock", err)
	}
	return C.MPI_SUCCESS
}

//export shmWinWake
func shmWinWake(h C.uintptr_t, rank C.int, v C.uint64_t) {
	if x, code := winOf("MPI_Win_unlock", uintptr(h)); code == 0 {
		if rank < 0 {
			x.fast.NotifyAll()
		} else {
			x.fast.UnlockAfter(int(rank), uint64(v))
		}
	}
}

//export shmWinLockAllRetry
func shmWinLockAllRetry(h C.uintptr_t) C.int {
	x, code := winOf("MPI_Win_lock_all", uintptr(h))
	if code != 0 {
		return code
	}
	if err := x.fast.LockAllRetry(); err != nil {
		return x.raise("MPI_Win_lock_all", err)
	}
	return C.MPI_SUCCESS
}

// The slow paths of MPI_Win_fence in C: waiting past the spin phase, waking
// sleepers, and the error of a round another rank failed.

// fenceSlow runs f, one of them, on window h's state, and raises its
// error on the window.
func fenceSlow(h C.uintptr_t, f func(st *winc.State) error) C.int {
	x, code := winOf("MPI_Win_fence", uintptr(h))
	if code != 0 {
		return code
	}
	if err := f(x.fast); err != nil {
		return x.raise("MPI_Win_fence", err)
	}
	return C.MPI_SUCCESS
}

func shmWinFenceWait(h C.uintptr_t, old C.uint32_t, gen *C.uint32_t) C.int {
	return fenceSlow(h, func(st *winc.State) error {
		g, err := st.FenceWait(uint32(old))
		*gen = C.uint32_t(g)
		return err
	})
}

func shmWinFenceWake(h C.uintptr_t) {
	if x, code := winOf("MPI_Win_fence", uintptr(h)); code == 0 {
		x.fast.FenceWake()
	}
}

// The slow paths of the fence of a window of one or two ranks (mpi_fast.h's
// shmrun_flag_fence).

//export shmWinFlagFenceWait
func shmWinFlagFenceWait(h C.uintptr_t, g C.uint32_t) C.int {
	return fenceSlow(h, func(st *winc.State) error { return st.FlagFenceWait(uint32(g)) })
}

//export shmWinFlagFenceWake
func shmWinFlagFenceWake(h C.uintptr_t, p C.uint32_t) {
	if x, code := winOf("MPI_Win_fence", uintptr(h)); code == 0 {
		x.fast.FlagFenceWake(uint32(p))
	}
}

//export shmWinFenceCode
func shmWinFenceCode(h C.uintptr_t, fail C.uint32_t) C.int {
	return fenceSlow(h, func(st *winc.State) error { return st.FenceCode(uint32(fail)) })
}

//export shmWinFenceFailed
func shmWinFenceFailed(h C.uintptr_t, gen C.uint32_t) C.int {
	return fenceSlow(h, func(st *winc.State) error { return st.FenceFailed(uint32(gen)) })
}

// noteGroup caches, after a Post or Start the Go path made, the window
// ranks of its group (now the epoch state's open group) under the group's
// handle, for the C fast path's next Post or Start with it.
func (x *winH) noteGroup(g uintptr, start bool) {
	d, st := x.desc, x.fast
	if d == nil || g == 0 {
		return
	}
	n, src := st.Epoch.PostN, st.PostGroup
	if start {
		n, src = st.Epoch.StartN, st.StartGroup
	}
	if n < 0 || d.groups[0].handle == C.uintptr_t(g) || d.groups[1].handle == C.uintptr_t(g) {
		return
	}
	freeC(d.groups[1].ranks)
	d.groups[1] = d.groups[0]
	ranks := (*C.int32_t)(C.calloc(C.size_t(max(n, 1)), 4))
	for i, r := range src[:n] {
		cArray(ranks, int(n))[i] = C.int32_t(r)
	}
	d.groups[0].handle, d.groups[0].n, d.groups[0].ranks = C.uintptr_t(g), C.int(n), ranks
}

//export shmWinBell
func shmWinBell(h C.uintptr_t, r C.int) {
	if x, code := winOf("MPI_Win_post", uintptr(h)); code == 0 {
		x.fast.BellNotify(int(r))
	}
}
