//go:build !mpi

package win

import (
	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/internal/rmacheck"
	"github.com/shmrun/shmrun/shm"
)

// The slow path of the RMA calls: every call whose target bytes are not in
// parts[target].data comes here, to fail with the reason, to run ProcNull,
// or to reach memory of a Create window that is private to its owner
// (process_vm_readv/writev, accumulates under a lock) or a dynamic
// window's attached regions.

// where is a target range found by resolve.
type where struct {
	noop   bool   // ProcNull inside an epoch: nothing to do
	priv   bool   // private memory: data is the caller's own, else pid/addr
	data   []byte // the bytes, when this process can touch them
	amem   []byte // mapped memory: the mapping data is in, for the atomics kernels
	off    int64  // data's offset in amem
	pid    int
	addr   uint64
	target int
	slot   *uint64 // dynamic windows: the access slot held (leave it)
	sv     uint64
}

// privateKey is the stripe offset of a rank's private memory: every
// accumulate on it takes this one stripe for the whole call.
func privateKey(target int) int64 { return int64(target+1) << 20 }

// resolve checks an RMA call of n bytes at disp on target and finds them,
// or says why not.
func (w *Win) resolve(call string, target, disp, n int) (where, error) {
	wh, err := w.resolveRange(call, target, disp, 0, int64(n))
	if w != nil && w.obs != nil && err == nil {
		w.obs.RMA(call, target, n)
	}
	return wh, err
}

// resolveRange is resolve for the n bytes that start lo bytes from disp
// (lo < 0 for a derived type whose data start before its origin).
func (w *Win) resolveRange(call string, target, disp int, lo, n int64) (where, error) {
	if err := w.live(call); err != nil {
		return where{}, err
	}
	if target == ProcNull {
		if w.ep.h.AccessAll || w.ep.anyLocked() || w.ep.startOpen() {
			return where{noop: true}, nil
		}
		return where{}, errorf(ErrRMASync, "%s on rank %d to ProcNull: no access epoch is open", call, w.rank)
	}
	if target < 0 || target >= w.size {
		return where{}, errorf(ErrRank, "%s on rank %d: target %d outside a window of %d ranks", call, w.rank, target, w.size)
	}
	if !w.ep.canAccess(target) {
		return where{}, errorf(ErrRMASync, "%s on rank %d to rank %d: no access epoch to that rank is open (Fence, Start, Lock or LockAll first)", call, w.rank, target)
	}
	if disp < 0 {
		return where{}, errorf(ErrDisp, "%s on rank %d to rank %d: disp %d is negative", call, w.rank, target, disp)
	}
	if n == 0 {
		// No data: no memory to reach, wherever disp points (Open MPI
		// and MPICH take such a call too).
		return where{noop: true}, nil
	}
	if n < 0 {
		// A length that wrapped past 2^63 would pass the checks below,
		// which compare it with what is left of the memory.
		return where{}, errorf(ErrRMARange, "%s on rank %d to rank %d: a range of %d bytes", call, w.rank, target, n)
	}
	if w.dyn != nil {
		a := int64(disp) + lo
		if lo < 0 && a < 0 || lo > 0 && a < int64(disp) {
			return where{}, errorf(ErrRMARange, "%s on rank %d to rank %d: address %#x %+d is not an address", call, w.rank, target, disp, lo)
		}
		return w.dyn.resolve(w, call, target, uint64(a), int(n))
	}
	p := &w.parts[target]
	size, what := int64(len(p.data)), "segment"
	priv := w.ext != nil && w.ext.rem[target].private
	if priv {
		size, what = int64(w.ext.rem[target].size), "window memory"
	}
	// disp ≤ size/unit keeps disp*unit from overflowing.
	if uint64(disp) <= uint64(size)/uint64(p.dispUnit) {
		start := int64(disp)*p.dispUnit + lo
		if start >= 0 && start <= size && n <= size-start {
			if priv {
				rm := &w.ext.rem[target]
				wh := where{priv: true, pid: rm.pid, addr: rm.addr + uint64(start), target: target}
				if target == w.rank {
					wh.data = w.ext.own[start : start+n]
				}
				return wh, nil
			}
			return where{data: p.data[start : start+n], amem: p.amem, off: p.off + start, target: target}, nil
		}
	}
	if lo != 0 {
		return where{}, errorf(ErrRMARange, "%s on rank %d to rank %d: disp %d (x %d-byte unit) %+d, %d bytes, is not inside its %d-byte %s",
			call, w.rank, target, disp, p.dispUnit, lo, n, size, what)
	}
	return where{}, errorf(ErrRMARange, "%s on rank %d to rank %d: disp %d (x %d-byte unit) + %d bytes exceeds its %d-byte %s",
		call, w.rank, target, disp, p.dispUnit, n, size, what)
}

// leave ends what resolve began (a dynamic window's access).
func (w *Win) leave(wh *where) {
	if wh.slot != nil {
		w.dyn.leave(wh)
	}
}

func (w *Win) putSlow(src []byte, target, disp int) error {
	wh, err := w.resolve("Put", target, disp, len(src))
	if err != nil || wh.noop {
		return err
	}
	if w.chk != nil {
		w.checkRMA(namePut, target, disp, len(src), rmacheck.Write, 0, 0)
	}
	defer w.leave(&wh)
	if wh.data == nil {
		return w.remoteErr("Put", &wh, shm.WriteProcess(wh.pid, wh.addr, src))
	}
	shm.Copy(wh.data, src)
	return nil
}

func (w *Win) getSlow(dst []byte, target, disp int) error {
	wh, err := w.resolve("Get", target, disp, len(dst))
	if err != nil || wh.noop {
		return err
	}
	if w.chk != nil {
		w.checkRMA(nameGet, target, disp, len(dst), rmacheck.Read, 0, 0)
	}
	defer w.leave(&wh)
	if wh.data == nil {
		return w.remoteErr("Get", &wh, shm.ReadProcess(wh.pid, dst, wh.addr))
	}
	shm.Copy(dst, wh.data)
	return nil
}

func (w *Win) remoteErr(call string, wh *where, err error) error {
	if err == nil {
		return nil
	}
	return errorf(ErrOther, "%s on rank %d to rank %d: %v", call, w.rank, wh.target, err)
}

// privateRMW runs f on a copy of the n elements at wh, which is private
// memory, under the target's stripe: read, f, and write back if f says so.
// Every accumulate that reaches private memory runs here, the owner's own
// too, so they are atomic with each other.
func privateRMW[T atomics.Elem](w *Win, call string, wh *where, n int, f func(cur []T) bool) error {
	k, err := w.stripes.Lock(privateKey(wh.target))
	if err != nil {
		return opError(call, w, wh.target, err)
	}
	defer w.stripes.Unlock(k)
	cur := make([]T, n)
	b := raw.Bytes(cur)
	if wh.data != nil {
		copy(b, wh.data)
	} else if err := shm.ReadProcess(wh.pid, b, wh.addr); err != nil {
		return w.remoteErr(call, wh, err)
	}
	if !f(cur) {
		return nil
	}
	if wh.data != nil {
		copy(wh.data, b)
		return nil
	}
	return w.remoteErr(call, wh, shm.WriteProcess(wh.pid, wh.addr, b))
}

// combineLocal applies op to cur with src as an accumulate would (op was
// checked by the caller).
func combineLocal[T atomics.Elem](src, cur []T, op atomics.Op) {
	_ = atomics.CombineLocal(src, cur, op)
}

func accumulateSlow[T atomics.Elem](w *Win, src []T, target, disp int, op atomics.Op) error {
	const call = "Accumulate"
	wh, err := w.resolve(call, target, disp, len(src)*atomics.SizeOf[T]())
	if err != nil || wh.noop {
		return err
	}
	ck := w.atomicBefore(nameAccumulate, target, disp, len(src)*atomics.SizeOf[T](), uint8(op), uint8(atomics.TypeOf[T]()))
	defer w.leave(&wh)
	if err := atomics.Check(op, atomics.TypeOf[T](), false); err != nil {
		return opError(call, w, target, err)
	}
	if !wh.priv {
		if err := atomics.Accumulate(wh.amem, wh.off, src, op, w.stripes); err != nil {
			return opError(call, w, target, err)
		}
		w.atomicAfter(ck)
		return nil
	}
	err = privateRMW(w, call, &wh, len(src), func(cur []T) bool {
		combineLocal(src, cur, op)
		return op != atomics.NoOp
	})
	if err == nil {
		w.atomicAfter(ck)
	}
	return err
}

func getAccumulateSlow[T atomics.Elem](w *Win, src, result []T, target, disp int, op atomics.Op) error {
	const call = "GetAccumulate"
	wh, err := w.resolve(call, target, disp, len(result)*atomics.SizeOf[T]())
	if err != nil || wh.noop {
		return err
	}
	ck := w.atomicBefore(nameGetAccumulate, target, disp, len(result)*atomics.SizeOf[T](), uint8(op), uint8(atomics.TypeOf[T]()))
	defer w.leave(&wh)
	if err := atomics.Check(op, atomics.TypeOf[T](), true); err != nil {
		return opError(call, w, target, err)
	}
	if !wh.priv {
		if err := atomics.GetAccumulate(wh.amem, wh.off, src, result, op, w.stripes); err != nil {
			return opError(call, w, target, err)
		}
		w.atomicAfter(ck)
		return nil
	}
	err = privateRMW(w, call, &wh, len(result), func(cur []T) bool {
		copy(result, cur)
		combineLocal(src, cur, op)
		return op != atomics.NoOp
	})
	if err == nil {
		w.atomicAfter(ck)
	}
	return err
}

func fetchAndOpSlow[T atomics.Elem](w *Win, v T, target, disp int, op atomics.Op) (T, error) {
	const call = "FetchAndOp"
	var old T
	wh, err := w.resolve(call, target, disp, atomics.SizeOf[T]())
	if err != nil || wh.noop {
		return old, err
	}
	ck := w.atomicBefore(nameFetchAndOp, target, disp, atomics.SizeOf[T](), uint8(op), uint8(atomics.TypeOf[T]()))
	defer w.leave(&wh)
	if err := atomics.Check(op, atomics.TypeOf[T](), true); err != nil {
		return old, opError(call, w, target, err)
	}
	if !wh.priv {
		old, err = atomics.FetchAndOp(wh.amem, wh.off, v, op, w.stripes)
		if err != nil {
			return old, opError(call, w, target, err)
		}
		w.atomicAfter(ck)
		return old, nil
	}
	err = privateRMW(w, call, &wh, 1, func(cur []T) bool {
		old = cur[0]
		combineLocal([]T{v}, cur, op)
		return op != atomics.NoOp
	})
	if err == nil {
		w.atomicAfter(ck)
	}
	return old, err
}

func compareAndSwapSlow[T atomics.Integer](w *Win, v, compare T, target, disp int) (T, error) {
	const call = "CompareAndSwap"
	var old T
	wh, err := w.resolve(call, target, disp, atomics.SizeOf[T]())
	if err != nil || wh.noop {
		return old, err
	}
	ck := w.atomicBefore(nameCompareAndSwap, target, disp, atomics.SizeOf[T](), rmacheck.OpCAS, uint8(atomics.TypeOf[T]()))
	defer w.leave(&wh)
	if !wh.priv {
		old, err = atomics.CompareAndSwap(wh.amem, wh.off, v, compare, w.stripes)
		if err != nil {
			return old, opError(call, w, target, err)
		}
		w.atomicAfter(ck)
		return old, nil
	}
	err = privateRMW(w, call, &wh, 1, func(cur []T) bool {
		old = cur[0]
		if cur[0] != compare {
			return false
		}
		cur[0] = v
		return true
	})
	if err == nil {
		w.atomicAfter(ck)
	}
	return old, err
}
