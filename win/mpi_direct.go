//go:build mpi

package win

import (
	"errors"
	"sync/atomic"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/mpi"
	"github.com/shmrun/shmrun/internal/raw"
)

// The direct path. An AllocateShared window whose memory model is
// MPI_WIN_UNIFIED (Open MPI's osc/sm, MPICH's shared windows) is one
// mapping of every rank's part in every process, and in the unified model
// a process's stores to it are the public copy: RMA to it is done here by
// load and store, as the shmrun backend does, with no MPI call. Put and
// Get copy; Accumulate and its kin run the atomics package's kernels
// (lock-free per element where the hardware allows, else under lock
// stripes in a region of the window after the last rank's part, shared
// by all processes); the datatype forms do the same run by run. Every
// rank of the window takes this path for every call, so the atomicity of
// accumulates holds among them. Flush and its kin are then a full memory
// barrier instead of an MPI call, since every operation is complete when
// it returns. Passive-target locks (mpi_dlock.go) and the counters of
// Post, Start, Complete and Wait (mpi_dpscw.go) are words in that region
// too; Fence, and Sync outside a lock epoch, stay the MPI's, whose
// barriers order these accesses with the other ranks'. The direct path
// needs no twin window.

// directStripes is the lock stripes of a direct window.
const directStripes = 64

// directExtra is the bytes the last rank's part of a shared window of n
// ranks grows by to hold the direct path's stripes, locks and active
// target counters, aligned.
func directExtra(n int) int {
	return (directStripes+1+directLockLines(n))*atomics.StripeLen + n*dpscwBlock(n, atomics.StripeLen)
}

// direct is a window's direct path.
type direct struct {
	seg   []byte // every rank's part, as one span of this process's mapping
	offs  []int  // every rank's part's offset in seg
	st    *atomics.Stripes
	locks *dlocks
	pscw  *dpscw
	// fence is the word whose atomic update is Flush's memory barrier.
	fence atomic.Uint64
}

// setDirect gives a shared window its direct path if its memory model is
// unified and every process maps the parts at the same offsets from the
// lowest (the stripes are found by offset). Collective.
func (w *Win) setDirect(call string) error {
	unified, err := w.h.Unified()
	if err != nil {
		return w.mpiErr(call, err)
	}
	var seg []byte
	var offs []int
	if unified {
		if seg, offs, err = w.h.SharedSpan(w.size); err != nil {
			unified = false
		}
	}
	// Every rank must agree: the digest of the offsets, or -1.
	digest := int64(-1)
	if unified && seg != nil {
		digest = 17
		for _, o := range offs {
			digest = (digest*1_000_003 + int64(o)) & (1<<62 - 1)
		}
	}
	v := []int64{digest, -digest}
	if err := comm.AllreduceInPlace(w.c, v, atomics.Max); err != nil {
		return errorf(ErrOther, "%s: %v", call, err)
	}
	if digest < 0 || v[0] != digest || -v[1] != digest {
		return nil
	}
	last := w.size - 1
	at := (offs[last] + w.sizes[last] + atomics.StripeLen - 1) &^ (atomics.StripeLen - 1)
	end := offs[last] + w.sizes[last] + directExtra(w.size)
	lk := at + directStripes*atomics.StripeLen
	ps := lk + directLockLines(w.size)*atomics.StripeLen
	if end > len(seg) || ps+w.size*dpscwBlock(w.size, atomics.StripeLen) > end {
		return nil
	}
	st, err := atomics.NewStripes(seg[at:lk], nil, barrier.DefaultPolicy)
	if err != nil {
		return nil
	}
	w.d = &direct{seg: seg, offs: offs, st: st, locks: newDLocks(seg[lk:ps], w.size, atomics.StripeLen),
		pscw: newDPSCW(seg[ps:end], w.size, w.rank, atomics.StripeLen)}
	return nil
}

// oneNode reports whether every rank of c (hc in the MPI) shares this
// rank's node (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED), agreed by
// every rank. Collective.
func oneNode(c *comm.Comm, hc mpi.Comm) (bool, error) {
	same := int64(0)
	if sh, err := hc.SplitShared(0); err == nil {
		if n, err := sh.Size(); err == nil && n == c.Size() {
			same = 1
		}
		_ = sh.Free()
	}
	v := []int64{same}
	if err := comm.AllreduceInPlace(c, v, atomics.Min); err != nil {
		return false, err
	}
	return v[0] == 1, nil
}

// at is the offset in d.seg of byte disp units into target's part.
func (w *Win) at(target, disp int) int64 {
	return int64(w.d.offs[target] + disp*w.units[target])
}

// barrier is Flush's memory barrier on a direct window: an atomic
// read-modify-write orders every access before it with every one after.
func (d *direct) barrier() { d.fence.Add(1) }

// directErr is the error of an atomics kernel on a direct window.
func (w *Win) directErr(call string, target int, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, atomics.ErrOp):
		return errorf(ErrOp, "%s on rank %d to rank %d: %v", call, w.rank, target, err)
	case errors.Is(err, atomics.ErrRange):
		return errorf(ErrRMARange, "%s on rank %d to rank %d: %v", call, w.rank, target, err)
	}
	return errorf(ErrOther, "%s on rank %d to rank %d: %v", call, w.rank, target, err)
}

// The untyped calls on a direct window: w.rma has checked the call and
// holds w.mu, which these release.

func (w *Win) directPut(src []byte, target, disp int) error {
	o := w.at(target, disp)
	w.mu.Unlock()
	bigCopy(w.d.seg[o:o+int64(len(src))], src)
	return nil
}

func (w *Win) directGet(dst []byte, target, disp int) error {
	o := w.at(target, disp)
	w.mu.Unlock()
	bigCopy(dst, w.d.seg[o:o+int64(len(dst))])
	return nil
}

// bigCopyMin is the size from which bigCopy hands a copy to C's memcpy.
// Measured here into another process's part of an Open MPI shared window
// (bench rows put_bw_*, quick interleaved runs): at 64 KiB Go's copy took
// 1.36 µs and memcpy 1.55-1.59; at 1 MiB Go's 50-53 µs, memcpy 41-44 (Open
// MPI's own MPI_Put 40-44); at 16 MiB 2.08 ms against 1.35 (glibc turns
// to non-temporal stores for large copies, Go's copy does not here).
const bigCopyMin = 256 << 10

// bigCopy is copy, through C's memcpy from bigCopyMin bytes on.
func bigCopy(dst, src []byte) {
	if len(src) >= bigCopyMin {
		mpi.Memcpy(dst, src)
		return
	}
	copy(dst, src)
}

func directAccumulate[T atomics.Elem](w *Win, src []T, target, disp int, op atomics.Op) error {
	o := w.at(target, disp)
	w.mu.Unlock()
	return w.directErr("Accumulate", target, atomics.Accumulate(w.d.seg, o, src, op, w.d.st))
}

func directGetAccumulate[T atomics.Elem](w *Win, src, result []T, target, disp int, op atomics.Op) error {
	o := w.at(target, disp)
	w.mu.Unlock()
	return w.directErr("GetAccumulate", target, atomics.GetAccumulate(w.d.seg, o, src, result, op, w.d.st))
}

func directFetchAndOp[T atomics.Elem](w *Win, v T, target, disp int, op atomics.Op) (T, error) {
	o := w.at(target, disp)
	w.mu.Unlock()
	old, err := atomics.FetchAndOp(w.d.seg, o, v, op, w.d.st)
	return old, w.directErr("FetchAndOp", target, err)
}

func directCAS[T atomics.Integer](w *Win, v, compare T, target, disp int) (T, error) {
	o := w.at(target, disp)
	w.mu.Unlock()
	old, err := atomics.CompareAndSwap(w.d.seg, o, v, compare, w.d.st)
	return old, w.directErr("CompareAndSwap", target, err)
}

// The datatype forms on a direct window: the target's runs, from disp.

// directPutType writes packed into tcount instances of ttype at disp on
// target, run by run.
func (w *Win) directPutType(packed []byte, target, disp, tcount int, ttype *dtype.Type) error {
	o := w.at(target, disp)
	w.mu.Unlock()
	return ttype.Each(tcount, func(off, m int64) bool {
		packed = packed[copy(w.d.seg[o+off:o+off+m], packed):]
		return true
	})
}

// directGetType reads tcount instances of ttype at disp on target into
// packed, run by run.
func (w *Win) directGetType(packed []byte, target, disp, tcount int, ttype *dtype.Type) error {
	o := w.at(target, disp)
	w.mu.Unlock()
	return ttype.Each(tcount, func(off, m int64) bool {
		packed = packed[copy(packed, w.d.seg[o+off:o+off+m]):]
		return true
	})
}

// directAccType combines the packed origin elements (nil for NoOp) into
// the elements of tcount instances of ttype at disp on target, runs of
// adjacent elements at a time, atomically per element; res, if not nil,
// receives the elements before (packed, as the basic type's data).
func (w *Win) directAccType(call string, e atomics.Type, packed, res []byte, target, disp, tcount int, ttype *dtype.Type, op atomics.Op) error {
	o := w.at(target, disp)
	w.mu.Unlock()
	switch e {
	case atomics.Int8:
		return directAccRuns[int8](w, call, packed, res, o, target, tcount, ttype, op)
	case atomics.Int16:
		return directAccRuns[int16](w, call, packed, res, o, target, tcount, ttype, op)
	case atomics.Int32:
		return directAccRuns[int32](w, call, packed, res, o, target, tcount, ttype, op)
	case atomics.Int64:
		return directAccRuns[int64](w, call, packed, res, o, target, tcount, ttype, op)
	case atomics.Uint8:
		return directAccRuns[uint8](w, call, packed, res, o, target, tcount, ttype, op)
	case atomics.Uint16:
		return directAccRuns[uint16](w, call, packed, res, o, target, tcount, ttype, op)
	case atomics.Uint32:
		return directAccRuns[uint32](w, call, packed, res, o, target, tcount, ttype, op)
	case atomics.Uint64:
		return directAccRuns[uint64](w, call, packed, res, o, target, tcount, ttype, op)
	case atomics.Float32:
		return directAccRuns[float32](w, call, packed, res, o, target, tcount, ttype, op)
	case atomics.Float64:
		return directAccRuns[float64](w, call, packed, res, o, target, tcount, ttype, op)
	case atomics.Complex64:
		return directAccRuns[complex64](w, call, packed, res, o, target, tcount, ttype, op)
	case atomics.Complex128:
		return directAccRuns[complex128](w, call, packed, res, o, target, tcount, ttype, op)
	case atomics.FloatIntT:
		return directAccRuns[atomics.FloatInt](w, call, packed, res, o, target, tcount, ttype, op)
	case atomics.DoubleIntT:
		return directAccRuns[atomics.DoubleInt](w, call, packed, res, o, target, tcount, ttype, op)
	case atomics.LongIntT:
		return directAccRuns[atomics.LongInt](w, call, packed, res, o, target, tcount, ttype, op)
	case atomics.TwoIntT:
		return directAccRuns[atomics.TwoInt](w, call, packed, res, o, target, tcount, ttype, op)
	case atomics.ShortIntT:
		return directAccRuns[atomics.ShortInt](w, call, packed, res, o, target, tcount, ttype, op)
	}
	return errorf(ErrType, "%s on rank %d: %v", call, w.rank, e)
}

func directAccRuns[T atomics.Elem](w *Win, call string, packed, res []byte, o int64, target, tcount int, ttype *dtype.Type, op atomics.Op) error {
	basic := dtype.Basic(atomics.TypeOf[T]())
	n := int(ttype.Size() * int64(tcount) / basic.Size())
	// The packed data as []T (Unpack restores a pair type's padding).
	var src []T
	if packed != nil {
		src = make([]T, n)
		if _, err := dtype.Unpack(packed, raw.Bytes(src), n, basic); err != nil {
			return errorf(ErrType, "%s on rank %d: %v", call, w.rank, err)
		}
	}
	var out []T
	if res != nil {
		out = make([]T, n)
	}
	offs := elemOffsets(ttype, tcount, basic, n, 0)
	size := int64(atomics.SizeOf[T]())
	var err error
	for i := 0; i < len(offs) && err == nil; {
		j := i + 1
		for j < len(offs) && offs[j] == offs[j-1]+size {
			j++
		}
		var s []T
		if src != nil {
			s = src[i:j]
		}
		if out != nil {
			err = atomics.GetAccumulate(w.d.seg, o+offs[i], s, out[i:j], op, w.d.st)
		} else {
			err = atomics.Accumulate(w.d.seg, o+offs[i], s, op, w.d.st)
		}
		i = j
	}
	if err != nil {
		return w.directErr(call, target, err)
	}
	if out != nil {
		if _, err := dtype.Pack(raw.Bytes(out), n, basic, res); err != nil {
			return errorf(ErrType, "%s on rank %d: %v", call, w.rank, err)
		}
	}
	return nil
}
