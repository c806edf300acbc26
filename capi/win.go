//go:build !mpi

package main

/*
#include <stdlib.h>
#include "capi.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/winc"
	"github.com/shmrun/shmrun/win"
)

// winAttrs is a window's attribute block in C memory.
type winAttrs = *C.shmrun_win_attrs

// goAssert translates MPI_MODE_* bits; bits the standard does not define
// keep a bit of their own, which the window refuses with ErrAssert.
func goAssert(a C.int) int {
	var out int
	for _, m := range [...]struct {
		c C.int
		g int
	}{{C.MPI_MODE_NOCHECK, win.ModeNoCheck}, {C.MPI_MODE_NOSTORE, win.ModeNoStore}, {C.MPI_MODE_NOPUT, win.ModeNoPut},
		{C.MPI_MODE_NOPRECEDE, win.ModeNoPrecede}, {C.MPI_MODE_NOSUCCEED, win.ModeNoSucceed}} {
		if a&m.c != 0 {
			out |= m.g
			a &^= m.c
		}
	}
	if a != 0 {
		out |= 1 << 20
	}
	return out
}

var flavors = map[win.Flavor]C.int{
	win.FlavorCreate: C.MPI_WIN_FLAVOR_CREATE, win.FlavorAllocate: C.MPI_WIN_FLAVOR_ALLOCATE,
	win.FlavorDynamic: C.MPI_WIN_FLAVOR_DYNAMIC, win.FlavorShared: C.MPI_WIN_FLAVOR_SHARED,
}

// newWin registers w made on x and returns its handle.
func newWin(w *win.Win, x *commH) C.uintptr_t {
	a := w.Attr()
	blk := (*C.shmrun_win_attrs)(C.calloc(1, C.sizeof_shmrun_win_attrs))
	blk.size = C.MPI_Aint(a.Size)
	blk.disp_unit = C.int(a.DispUnit)
	blk.flavor = flavors[a.Flavor]
	blk.model = C.MPI_WIN_UNIFIED
	d, fast := newDesc(w)
	tab.Lock()
	defer tab.Unlock()
	h, slot := newWinHandle()
	tab.wins[h] = &winH{h: h, w: w, errh: hErrorsAreFatal, attrs: blk, comm: x.c, desc: d, fast: fast}
	if slot >= 0 && d != nil {
		C.shmrun_set_win(C.int(slot), d)
	}
	chkWindow(h, w)
	return C.uintptr_t(h)
}

// Window creation kinds of shmWinAllocate.
const (
	wkShared = iota
	wkAllocate
	wkCreate
	wkDynamic
)

var wkNames = [...]string{"MPI_Win_allocate_shared", "MPI_Win_allocate", "MPI_Win_create", "MPI_Win_create_dynamic"}

//export shmWinAllocate
func shmWinAllocate(size C.MPI_Aint, dispUnit C.int, info, h C.uintptr_t, kind C.int, mem *C.char, base **C.char, out *C.uintptr_t) C.int {
	call := wkNames[kind]
	x, code := commOf(call, uintptr(h))
	if code != 0 {
		return code
	}
	in, bad := infoMap(uintptr(info))
	// A negative size goes on to Allocate and AllocateShared, which refuse
	// it on every rank alike; refused here on one rank, it would leave the
	// others in the window's creation, matched with this rank's next
	// collective call. Create's memory cannot carry it.
	switch {
	case bad != nil:
	case out == nil:
		bad = fmt.Errorf("win is NULL: %w", win.ErrArg)
	case base == nil && (kind == wkShared || kind == wkAllocate):
		bad = fmt.Errorf("baseptr is NULL: %w", win.ErrArg)
	case kind == wkCreate && size < 0:
		bad = fmt.Errorf("size %d is negative: %w", int64(size), win.ErrSize)
	case kind == wkCreate && size > 0 && mem == nil:
		// bytesAt would make it no memory at all: a window of size 0
		// where the program asked for size bytes.
		bad = fmt.Errorf("base is NULL and size is %d: %w", int64(size), win.ErrArg)
	}
	if bad != nil {
		// This rank still joins the others' creation, with an info value
		// that fails it on every rank: refused here alone, it would leave
		// them waiting in it, matched with this rank's next collective.
		refused := win.Info{"no_locks": "(another argument of this rank was refused)"}
		switch kind {
		case wkShared:
			_, _ = win.AllocateShared(x.c, 0, 1, refused)
		case wkAllocate:
			_, _ = win.Allocate(x.c, 0, 1, refused)
		case wkCreate:
			_, _ = win.Create(x.c, nil, 1, refused)
		default:
			_, _ = win.CreateDynamic(x.c, refused)
		}
		return x.raise(call, bad)
	}
	var w *win.Win
	var err error
	switch kind {
	case wkShared:
		w, err = win.AllocateShared(x.c, int(size), int(dispUnit), win.Info(in))
	case wkAllocate:
		w, err = win.Allocate(x.c, int(size), int(dispUnit), win.Info(in))
	case wkCreate:
		own := bytesAt(mem, int64(size))
		if own == nil && mem != nil {
			// Size 0: an empty slice that keeps base, which MPI_WIN_BASE
			// reports (the value given to MPI_Win_create), not NULL.
			own = emptyAt(mem)
		}
		w, err = win.Create(x.c, own, int(dispUnit), win.Info(in))
	default:
		w, err = win.CreateDynamic(x.c, win.Info(in))
	}
	if err != nil {
		return x.raise(call, err)
	}
	if base != nil {
		*base = cptr(w.Local())
	}
	*out = newWin(w, x)
	return C.MPI_SUCCESS
}

//export shmWinSharedQuery
func shmWinSharedQuery(h C.uintptr_t, rank C.int, size *C.MPI_Aint, dispUnit *C.int, base **C.char) C.int {
	x, code := winOf("MPI_Win_shared_query", uintptr(h))
	if code != 0 {
		return code
	}
	s, err := x.w.SharedQuery(winRank(rank))
	if err != nil {
		return x.raise("MPI_Win_shared_query", err)
	}
	*size, *dispUnit, *base = C.MPI_Aint(s.Size), C.int(s.DispUnit), cptr(s.Bytes)
	return C.MPI_SUCCESS
}

func winRank(r C.int) int {
	if r == C.MPI_PROC_NULL {
		return win.ProcNull
	}
	return int(r)
}

//export shmWinFree
func shmWinFree(h *C.uintptr_t) C.int {
	x, code := winOf("MPI_Win_free", uintptr(*h))
	if code != 0 {
		return code
	}
	if err := deleteAll(attrWin, x.h, &x.uattrs); err != nil {
		return x.raise("MPI_Win_free", err) // not freed
	}
	if chkOn {
		// The window's loads and stores, while its checker is there; then
		// none is gathered or recorded for it (before its memory goes).
		chkFlush()
		chkFree(x.h)
	}
	err := x.w.Free()
	if err != nil && (errors.Is(err, win.ErrRMASync) || errors.Is(err, win.ErrWin) || errors.Is(err, win.ErrAborted)) {
		return x.raise("MPI_Win_free", err) // not freed: the handle stays
	}
	// Freed, perhaps with its release's error: the C fast paths must not
	// find the descriptor of memory that is gone.
	tab.Lock()
	delete(tab.wins, uintptr(*h))
	freeWinHandle(uintptr(*h))
	tab.Unlock()
	freeDesc(x.desc)
	freeAttrs(x.attrs)
	*h = hWinNull
	defer releaseErrh(&x.errh)
	if err != nil {
		return x.raise("MPI_Win_free", err)
	}
	return C.MPI_SUCCESS
}

//export shmWinAttrs
func shmWinAttrs(h C.uintptr_t, key C.int, out *winAttrs, base **C.char) C.int {
	x, code := winOf("MPI_Win_get_attr", uintptr(h))
	if code != 0 {
		return code
	}
	// As on communicators: below firstKeyval only the window's predefined
	// keys are keys, and MPI_KEYVAL_INVALID or a communicator's key is
	// MPI_ERR_KEYVAL rather than a key without a value.
	if key < C.MPI_WIN_BASE || key > C.MPI_WIN_MODEL && key < firstKeyval {
		return x.raise("MPI_Win_get_attr", fmt.Errorf("attribute key %d: %w", int(key), errKeyval))
	}
	*out = x.attrs
	*base = cptr(x.w.Attr().Base)
	return C.MPI_SUCCESS
}

// Synchronization calls of shmWinSync.
const (
	syFence = iota
	syLock
	syUnlock
	syLockAll
	syUnlockAll
	syFlush
	syFlushAll
	syFlushLocal
	syFlushLocalAll
	sySync
	syComplete
	syWait
	syTest
	syPost
	syStart
)

var syNames = [...]string{"MPI_Win_fence", "MPI_Win_lock", "MPI_Win_unlock", "MPI_Win_lock_all", "MPI_Win_unlock_all",
	"MPI_Win_flush", "MPI_Win_flush_all", "MPI_Win_flush_local", "MPI_Win_flush_local_all", "MPI_Win_sync",
	"MPI_Win_complete", "MPI_Win_wait", "MPI_Win_test", "MPI_Win_post", "MPI_Win_start"}

//export shmWinSync
func shmWinSync(h C.uintptr_t, kind, arg, rank, assert C.int, group C.uintptr_t, flag *C.int) C.int {
	call := syNames[kind]
	x, code := winOf(call, uintptr(h))
	if code != 0 {
		return code
	}
	w := x.w
	switch kind { // --check: what completes records its buffers in window memory first
	case syUnlock, syFlush, syFlushLocal:
		chkSettle(x.h, winRank(rank), 0, 0)
	case syFence, syUnlockAll, syFlushAll, syFlushLocalAll, syComplete:
		chkSettle(x.h, -1, 0, 0)
	}
	var err error
	switch kind {
	case syFence:
		err = w.Fence(goAssert(assert))
	case syLock:
		switch arg {
		case C.MPI_LOCK_EXCLUSIVE:
			err = w.Lock(win.Exclusive, winRank(rank), goAssert(assert))
		case C.MPI_LOCK_SHARED:
			err = w.Lock(win.Shared, winRank(rank), goAssert(assert))
		default:
			err = fmt.Errorf("lock type %d is neither MPI_LOCK_EXCLUSIVE nor MPI_LOCK_SHARED: %w", int(arg), win.ErrLockType)
		}
	case syUnlock:
		err = w.Unlock(winRank(rank))
	case syLockAll:
		err = w.LockAll(goAssert(assert))
	case syUnlockAll:
		err = w.UnlockAll()
	case syFlush:
		err = w.Flush(winRank(rank))
	case syFlushAll:
		err = w.FlushAll()
	case syFlushLocal:
		err = w.FlushLocal(winRank(rank))
	case syFlushLocalAll:
		err = w.FlushLocalAll()
	case sySync:
		err = w.Sync()
	case syComplete:
		err = w.Complete()
	case syWait:
		err = w.Wait()
	case syTest:
		var ok bool
		ok, err = w.Test()
		*flag = cbool(ok)
	case syPost, syStart:
		var g *comm.Group
		if g, err = groupOf(uintptr(group)); err == nil {
			if kind == syPost {
				err = w.Post(g, goAssert(assert))
			} else {
				err = w.Start(g, goAssert(assert))
			}
		}
	}
	if err != nil {
		return x.raise(call, err)
	}
	if kind == syPost || kind == syStart {
		x.noteGroup(uintptr(group), kind == syStart)
	}
	switch kind { // the calls that complete RMA calls: their buffers are the program's again
	case syUnlock, syFlush, syFlushLocal:
		chkComplete(x.h, winRank(rank))
	case syFence, syUnlockAll, syFlushAll, syFlushLocalAll, syComplete:
		chkComplete(x.h, -1)
	}
	return C.MPI_SUCCESS
}

// RMA calls of shmRMA.
const (
	rmPut = iota
	rmGet
	rmAccumulate
	rmGetAccumulate
	rmFetchAndOp
	rmCompareAndSwap
)

var rmNames = [...]string{"MPI_Put", "MPI_Get", "MPI_Accumulate", "MPI_Get_accumulate", "MPI_Fetch_and_op", "MPI_Compare_and_swap"}

// shmRMA is Put, Get, Accumulate, Get_accumulate, Fetch_and_op and
// Compare_and_swap (and their request forms: req non-NULL gets a request
// that is complete, RMA being eager here, after the request form's own
// epoch check).
//
//export shmRMA
func shmRMA(kind C.int, op *C.char, ocount C.int64_t, odt C.uintptr_t, res *C.char, rcount C.int64_t, rdt C.uintptr_t,
	target C.int, disp C.MPI_Aint, tcount C.int64_t, tdt C.uintptr_t, oph C.uintptr_t, h C.uintptr_t, req *C.uintptr_t, cmp *C.char) C.int {
	call := rmNames[kind]
	if req != nil {
		call = "MPI_R" + strings.ToLower(call[4:5]) + call[5:] // MPI_Rput, MPI_Rget_accumulate
	}
	x, code := winOf(call, uintptr(h))
	if code != 0 {
		return code
	}
	var chkFirst uint32
	var chkN int
	err := func() error {
		// With MPI_NO_OP a fetching call ignores its origin buffer, count
		// and datatype (MPI_DATATYPE_NULL is common there).
		var ot *dtype.Type
		if kind != rmGetAccumulate && kind != rmFetchAndOp || !noOp(oph) {
			oh, err := typeOf(uintptr(odt))
			if err != nil {
				return err
			}
			ot = oh.t
		}
		tt, err := typeOf(uintptr(tdt))
		if err != nil {
			return err
		}
		var ob, rb []byte
		var rt *typeH
		ot0 := ot           // the origin's type as the call gave it (buf may move ot)
		var rtt *dtype.Type // rt's type as the result buffer is taken with (buf)
		if ot != nil {
			if ob, ot, err = buf(op, int64(ocount), ot); err != nil {
				return err
			}
		}
		if kind == rmGetAccumulate || kind == rmFetchAndOp || kind == rmCompareAndSwap {
			if rt, err = typeOf(uintptr(rdt)); err != nil {
				return err
			}
			if kind == rmFetchAndOp && uintptr(rdt) >= firstHandle {
				// MPI 4.1 §12.3.4: one element of a predefined type. A
				// derived type of one such element is taken (as before);
				// one of more is not.
				if e, ok := rt.t.Elem(); !ok || rt.t.Size() != dtype.Basic(e).Size() {
					return fmt.Errorf("MPI_Fetch_and_op moves one element of a predefined datatype, not %v: %w", rt.t, comm.ErrType)
				}
			}
			if rb, rtt, err = buf(res, int64(rcount), rt.t); err != nil {
				return err
			}
		}
		var opv atomics.Op
		var unit int // an opaque type's element bytes (long double's): combine combines one
		var combine func(dst, src []byte)
		if kind == rmAccumulate || kind == rmGetAccumulate || kind == rmFetchAndOp {
			o, err := opOf(uintptr(oph))
			if err != nil {
				return err
			}
			if o.user != nil {
				return fmt.Errorf("a user-defined op in an RMA call (the standard allows only predefined ones): %w", comm.ErrOp)
			}
			if err := logicalOp(tt, o, true); err != nil {
				return err
			}
			opv = o.op
			if _, ok := tt.t.Elem(); !ok {
				// Long double and its kin are made of bytes here, as
				// MPI_BYTE is, but they are not bytes to the ops: their
				// elements are combined whole, by C (opaqueUnits).
				if leaf, found, err := opaqueLeaf(tt); found || err != nil {
					if err != nil {
						return err
					}
					if unit, combine, err = opaqueUnits(leaf, o, oph, kind != rmAccumulate); err != nil {
						return err
					}
				}
			}
		}
		t := winRank(target)
		d := int(disp)
		if req != nil {
			// The request forms are allowed only in a passive-target
			// epoch: the same request call of no data makes that check.
			var err error
			switch kind {
			case rmGet:
				_, err = x.w.Rget(nil, t, 0)
			case rmAccumulate:
				_, err = win.Raccumulate[byte](x.w, nil, t, 0, atomics.Replace)
			case rmGetAccumulate:
				_, err = win.RgetAccumulate[byte](x.w, nil, nil, t, 0, atomics.NoOp)
			default:
				_, err = x.w.Rput(nil, t, 0)
			}
			if err != nil {
				return err
			}
		}
		var err2 error
		origin := chkBuffer{b: ob, count: int64(ocount), t: ot, what: "origin"}
		switch {
		case unit > 0 && kind == rmAccumulate:
			err2 = winc.AccumulateUnits(x.w, "AccumulateType", ob, int(ocount), ot, nil, 0, nil, t, d, int(tcount), tt.t, unit, opv, combine)
		case unit > 0:
			err2 = winc.AccumulateUnits(x.w, "GetAccumulateType", ob, int(ocount), ot, rb, int(rcount), rtt, t, d, int(tcount), tt.t, unit, opv, combine)
		}
		switch {
		case unit > 0:
		case kind == rmPut:
			err2 = win.PutType(x.w, ob, int(ocount), ot, t, d, int(tcount), tt.t)
		case kind == rmGet:
			err2 = win.GetType(x.w, ob, int(ocount), ot, t, d, int(tcount), tt.t)
			origin.result = true
		case kind == rmAccumulate:
			err2 = win.AccumulateType(x.w, ob, int(ocount), ot, t, d, int(tcount), tt.t, opv)
		case kind == rmFetchAndOp:
			// One element of a predefined type: win.FetchAndOp itself (so
			// --stats and --check name it); others, e.g. long double, as
			// the one-element Get_accumulate it is.
			if fop := fopOps[elemOf(rtt)]; fop != nil && len(rb) >= int(rtt.TrueLB()+rtt.Size()) && (noOp(oph) || ot != nil && len(ob) >= int(ot.TrueLB()+rtt.Size())) {
				// Each element at its type's true lower bound (a derived
				// type of one element may place it past the address).
				if ot != nil && len(ob) > 0 {
					ob = ob[ot.TrueLB():]
				}
				err2 = fop(x.w, ob, rb[rtt.TrueLB():], t, d, opv)
			} else {
				err2 = win.GetAccumulateType(x.w, ob, int(ocount), ot, rb, int(rcount), rtt, t, d, int(tcount), tt.t, opv)
			}
		case kind == rmGetAccumulate:
			err2 = win.GetAccumulateType(x.w, ob, int(ocount), ot, rb, int(rcount), rtt, t, d, int(tcount), tt.t, opv)
		default:
			// The compare buffer holds what the origin does, moved as it is.
			compare, _, err := buf(cmp, int64(ocount), ot0)
			if err != nil {
				return err
			}
			err2 = compareAndSwap(x.w, ob, compare, rb, ot, t, d)
			origin.t = nil
			if err2 == nil {
				chkRMA(x.h, x.w, call, t, origin, chkBuffer{b: compare, what: "compare"}, chkBuffer{b: rb, result: true, what: "result"})
			}
			return err2
		}
		if err2 == nil {
			var res chkBuffer
			if rt != nil {
				res = chkBuffer{b: rb, count: int64(rcount), t: rtt, result: true, what: "result"}
			}
			// A request form's buffers are the program's again at its
			// request's completion (or the window's synchronization).
			chkFirst, chkN = chkRMA(x.h, x.w, call, t, origin, res)
		}
		return err2
	}()
	if err != nil {
		return x.raise(call, err)
	}
	if req != nil {
		*req = C.uintptr_t(newReq(reqH{done: true, st: comm.Status{Source: comm.AnySource, Tag: comm.AnyTag},
			chkFirst: chkFirst, chkN: chkN}))
	}
	return C.MPI_SUCCESS
}

func noOp(h C.uintptr_t) bool {
	o, err := opOf(uintptr(h))
	return err == nil && o.user == nil && o.op == atomics.NoOp
}

// compareAndSwap is MPI_Compare_and_swap on one element of t's type: an
// integer, or MPI_BYTE (the standard's Byte category, compared as one
// unsigned byte).
func compareAndSwap(w *win.Win, origin, compare, result []byte, t *dtype.Type, target, disp int) error {
	e, ok := t.Elem()
	if t == dtype.Byte {
		e, ok = atomics.Uint8, true
	}
	if !ok || t.Size() != int64(e.Size()) {
		return fmt.Errorf("%v is not a predefined integer type: %w", t, comm.ErrType)
	}
	cas := casOps[e]
	if cas == nil {
		return fmt.Errorf("%v: compare-and-swap takes integer types only: %w", t, comm.ErrType)
	}
	// The element sits at t's true lower bound in each buffer (a derived
	// type of one element may place it past the address).
	at := t.TrueLB()
	if at < 0 || int64(len(origin)) < at+int64(e.Size()) || int64(len(compare)) < at+int64(e.Size()) || int64(len(result)) < at+int64(e.Size()) {
		return fmt.Errorf("a NULL origin, compare or result buffer: %w", comm.ErrBuffer)
	}
	return cas(w, origin[at:], compare[at:], result[at:], target, disp)
}

// elemOf is t's element type when t is one predefined element (0 if not).
func elemOf(t *dtype.Type) atomics.Type {
	e, ok := t.Elem()
	if !ok || t.Size() != int64(e.Size()) {
		return 0
	}
	return e
}

type fopFn func(w *win.Win, origin, result []byte, target, disp int, op atomics.Op) error

// fopOf is MPI_Fetch_and_op on one T (origin unread for MPI_NO_OP).
func fopOf[T atomics.Elem]() fopFn {
	return func(w *win.Win, origin, result []byte, target, disp int, op atomics.Op) error {
		var v T
		if len(origin) > 0 {
			v = loadElem[T](origin)
		}
		old, err := win.FetchAndOp(w, v, target, disp, op)
		if err == nil && target != win.ProcNull { // MPI_PROC_NULL leaves the result as it is
			storeElem(result, old)
		}
		return err
	}
}

var fopOps = map[atomics.Type]fopFn{
	atomics.Int8: fopOf[int8](), atomics.Int16: fopOf[int16](), atomics.Int32: fopOf[int32](), atomics.Int64: fopOf[int64](),
	atomics.Uint8: fopOf[uint8](), atomics.Uint16: fopOf[uint16](), atomics.Uint32: fopOf[uint32](), atomics.Uint64: fopOf[uint64](),
	atomics.Float32: fopOf[float32](), atomics.Float64: fopOf[float64](),
	atomics.Complex64: fopOf[complex64](), atomics.Complex128: fopOf[complex128](),
	atomics.FloatIntT: fopOf[atomics.FloatInt](), atomics.DoubleIntT: fopOf[atomics.DoubleInt](),
	atomics.LongIntT: fopOf[atomics.LongInt](), atomics.TwoIntT: fopOf[atomics.TwoInt](), atomics.ShortIntT: fopOf[atomics.ShortInt](),
}

type casFn func(w *win.Win, origin, compare, result []byte, target, disp int) error

func casOf[T atomics.Integer]() casFn {
	return func(w *win.Win, origin, compare, result []byte, target, disp int) error {
		v, c := loadElem[T](origin), loadElem[T](compare)
		old, err := win.CompareAndSwap(w, v, c, target, disp)
		if err == nil && target != win.ProcNull { // MPI_PROC_NULL leaves the result as it is
			storeElem(result, old)
		}
		return err
	}
}

var casOps = map[atomics.Type]casFn{
	atomics.Int8: casOf[int8](), atomics.Int16: casOf[int16](), atomics.Int32: casOf[int32](), atomics.Int64: casOf[int64](),
	atomics.Uint8: casOf[uint8](), atomics.Uint16: casOf[uint16](), atomics.Uint32: casOf[uint32](), atomics.Uint64: casOf[uint64](),
}
