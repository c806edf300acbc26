//go:build !mpi

package win

import (
	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/rmacheck"
)

// shmrun --check's hooks (internal/rmacheck): the RMA calls' fast and slow
// paths call checkRMA when w.chk is set; a checked window's
// synchronization calls take their slow paths (w.ep.observe), which carry
// the clocks (fence.go, lock.go, pscw.go); Checked records loads and
// stores.

func init() {
	rmacheck.LocalAccess = func(w any, target int, lo, n uint64, write bool, site string, thread int, how string) {
		x, ok := w.(*Win)
		if !ok || x.chk == nil || n == 0 {
			return
		}
		kind, call := rmacheck.Read, nameLoad
		if write {
			kind, call = rmacheck.Write, nameStore
		}
		if how != "" {
			call = rmacheck.Name(how)
		}
		x.chk.Access(&rmacheck.Access{Target: target, Lo: lo, Hi: lo + n, Kind: kind, Local: true, Call: call,
			Epoch: x.epochOf(target), Site: rmacheck.Name(site), Thread: thread})
	}
	rmacheck.WindowOf = func(w any, target int) (int, string) {
		x, ok := w.(*Win)
		if !ok {
			return -1, ""
		}
		e := x.epochOf(target)
		if e == rmacheck.NoEpoch {
			return x.chk.ID(), ""
		}
		return x.chk.ID(), e.String()
	}
}

// The calls' names in the checker's records (rmacheck.Name).
var (
	namePut            = rmacheck.Name("Put")
	nameGet            = rmacheck.Name("Get")
	nameAccumulate     = rmacheck.Name("Accumulate")
	nameGetAccumulate  = rmacheck.Name("GetAccumulate")
	nameFetchAndOp     = rmacheck.Name("FetchAndOp")
	nameCompareAndSwap = rmacheck.Name("CompareAndSwap")
	nameLoad           = rmacheck.Name("load")
	nameStore          = rmacheck.Name("store")
	nameCLoad          = rmacheck.Name("Load")
	nameCStore         = rmacheck.Name("Store")
	nameCLoadSlice     = rmacheck.Name("LoadSlice")
	nameCStoreSlice    = rmacheck.Name("StoreSlice")
)

// callName is call's name in the records: the common ones without
// rmacheck.Name's map.
func callName(call string) uint32 {
	switch call {
	case "Put":
		return namePut
	case "Get":
		return nameGet
	case "Accumulate":
		return nameAccumulate
	case "GetAccumulate":
		return nameGetAccumulate
	case "FetchAndOp":
		return nameFetchAndOp
	case "CompareAndSwap":
		return nameCompareAndSwap
	}
	return rmacheck.Name(call)
}

// epochOf is the epoch a call of this rank to target is in, for the
// checker's reports.
func (w *Win) epochOf(target int) rmacheck.Epoch {
	if w.ep.h.LockAll { // the common case, inlined into the RMA calls' check
		return rmacheck.EpochLockAll
	}
	return w.epochOfTarget(target)
}

// epochOfTarget is epochOf outside LockAll.
func (w *Win) epochOfTarget(target int) rmacheck.Epoch {
	switch {
	case target >= 0 && target < w.size && w.ep.lockOf(target) == Exclusive:
		return rmacheck.EpochExclusive
	case target >= 0 && target < w.size && w.ep.lockOf(target) == Shared:
		return rmacheck.EpochShared
	case w.ep.startOpen() && w.ep.postOpen():
		return rmacheck.EpochPSCW
	case w.ep.startOpen():
		return rmacheck.EpochPSCWAccess
	case w.ep.postOpen():
		return rmacheck.EpochPSCWExposure
	case w.ep.h.FenceOpen:
		return rmacheck.EpochFence
	}
	return rmacheck.NoEpoch
}

// lo is where disp starts in target's part (a dynamic window: the
// address).
func (w *Win) lo(target, disp int) uint64 {
	if w.dyn != nil {
		return uint64(disp)
	}
	return uint64(disp) * uint64(w.parts[target].dispUnit)
}

// checkRMA records an RMA call's n bytes at disp on target.
func (w *Win) checkRMA(call uint32, target, disp, n int, kind rmacheck.Kind, op, typ uint8) {
	if target == ProcNull || n <= 0 {
		return
	}
	lo := w.lo(target, disp)
	w.chk.Access(&rmacheck.Access{Target: target, Lo: lo, Hi: lo + uint64(n), Kind: kind, Op: op, Typ: typ, Call: call, Epoch: w.epochOf(target)})
}

// atomicAccess is what an atomic RMA call of n bytes at disp on target (a
// rank of the window) gives the checker: Log.AtomicBefore before its
// memory operation, Log.AtomicAfter after. pc is where the call returns to
// (raw.ReturnPC in a call never inlined), passed through.
func (w *Win) atomicAccess(call uint32, target, disp, n int, op, typ uint8, pc uintptr) (t int, lo, hi, key uint64, _ uintptr) {
	lo = w.lo(target, disp)
	return target, lo, lo + uint64(n), rmacheck.KeyOf(rmacheck.Atomic, op, typ, call, w.epochOf(target)), pc
}

// slowAtomic is an atomic call's access on the slow paths, made known to
// the checker in two parts as the fast paths do: atomicBefore before the
// memory operation, atomicAfter once it succeeded.
type slowAtomic struct {
	on          bool
	t           int
	lo, hi, key uint64
	rep         bool
}

// atomicBefore is Log.AtomicBefore for an atomic call of n bytes at disp
// on target, when checking (its line is found by walking the frames).
func (w *Win) atomicBefore(call uint32, target, disp, n int, op, typ uint8) slowAtomic {
	if w.chk == nil || target == ProcNull || n <= 0 {
		return slowAtomic{}
	}
	t, lo, hi, key, _ := w.atomicAccess(call, target, disp, n, op, typ, 0)
	return slowAtomic{on: true, t: t, lo: lo, hi: hi, key: key, rep: w.chk.AtomicBefore(t, lo, hi, key, 0)}
}

// atomicAfter is Log.AtomicAfter for a's call.
func (w *Win) atomicAfter(a slowAtomic) {
	if a.on {
		w.chk.AtomicAfter(a.t, a.lo, a.hi, a.key, 0, a.rep)
	}
}

// checkTyped records a typed RMA call's target runs: tcount instances of
// ttype at disp on target, one record per run. An atomic call's runs are
// recorded after its memory operation, its release made before
// (releaseTyped).
func (w *Win) checkTyped(call string, target, disp, tcount int, ttype *dtype.Type, kind rmacheck.Kind, op, typ uint8) {
	if !w.checksTyped(target) {
		return
	}
	base, epoch, name := int64(w.lo(target, disp)), w.epochOf(target), callName(call)
	_ = ttype.Each(tcount, func(off, n int64) bool {
		a := &rmacheck.Access{Target: target, Lo: uint64(base + off), Hi: uint64(base + off + n), Kind: kind, Op: op, Typ: typ,
			Call: name, Epoch: epoch}
		if kind == rmacheck.Atomic {
			w.chk.AccessAfter(a)
		} else {
			w.chk.Access(a)
		}
		return true
	})
}

// checksTyped reports whether a typed call to target is checked: the
// checker is on and the call is not an error it returns.
func (w *Win) checksTyped(target int) bool {
	return target != ProcNull && w.chk != nil && uint(target) < uint(w.size) && w.ep.canAccess(target)
}

// releaseTyped is a typed atomic call's release, before its memory
// operation (checkTyped records it after), for the locations of bytes
// [lo, hi) past disp, which hold its runs.
func (w *Win) releaseTyped(target, disp int, lo, hi int64, op atomics.Op) {
	if op != atomics.NoOp && w.checksTyped(target) && hi > lo {
		base := int64(w.lo(target, disp))
		w.chk.ReleaseAtomic(target, uint64(base+lo), uint64(base+hi))
	}
}

// Checked is checked load/store access to one rank's part of a window
// (shmrun --check): the loads and stores it makes are checked against the
// RMA calls and the other ranks' checked accesses to the same bytes, as
// RMA calls are against each other. Plain slices (Local, SharedQuery,
// View) cannot be checked: the checker sees nothing of them. Off (the
// default), each method costs one branch more than a slice access. Like
// a View, it aliases the window's memory: not to be used after Free; an
// index out of range panics as a slice's does.
type Checked[T atomics.Elem] struct {
	w      *Win
	target int
	s      []T
}

// NewChecked returns checked access to rank target's part of w (this
// rank's own, or another's mapped here: a shared window's). Local. Errors
// as SharedQuery's and View's.
func NewChecked[T atomics.Elem](w *Win, target int) (Checked[T], error) {
	seg, err := w.SharedQuery(target)
	if err != nil {
		return Checked[T]{}, err
	}
	target = w.queryRank(target)
	s, err := View[T](seg)
	if err != nil {
		return Checked[T]{}, err
	}
	return Checked[T]{w: w, target: target, s: s}, nil
}

// Len is the number of elements.
func (c Checked[T]) Len() int { return len(c.s) }

// Load returns element i (a load: checked against RMA calls and other
// ranks' stores to it).
func (c Checked[T]) Load(i int) T {
	if c.w != nil && c.w.chk != nil {
		c.record(nameCLoad, i, 1, rmacheck.Read)
	}
	return c.s[i]
}

// Store sets element i (a store: checked against RMA calls and other
// ranks' loads and stores of it).
func (c Checked[T]) Store(i int, v T) {
	if c.w != nil && c.w.chk != nil {
		c.record(nameCStore, i, 1, rmacheck.Write)
	}
	c.s[i] = v
}

// LoadSlice copies elements [i, i+len(dst)) into dst (one checked load
// of them all).
func (c Checked[T]) LoadSlice(dst []T, i int) {
	if c.w != nil && c.w.chk != nil {
		c.record(nameCLoadSlice, i, len(dst), rmacheck.Read)
	}
	copy(dst, c.s[i:i+len(dst)])
}

// StoreSlice copies src into elements [i, i+len(src)) (one checked
// store of them all).
func (c Checked[T]) StoreSlice(i int, src []T) {
	if c.w != nil && c.w.chk != nil {
		c.record(nameCStoreSlice, i, len(src), rmacheck.Write)
	}
	copy(c.s[i:i+len(src)], src)
}

func (c Checked[T]) record(call uint32, i, n int, kind rmacheck.Kind) {
	if i < 0 || n <= 0 || i+n > len(c.s) {
		return // the access itself panics with the index
	}
	size := uint64(atomics.SizeOf[T]())
	lo := uint64(i) * size
	c.w.chk.Access(&rmacheck.Access{Target: c.target, Lo: lo, Hi: lo + uint64(n)*size, Kind: kind, Local: true, Call: call,
		Epoch: c.w.epochOf(c.target)})
}
