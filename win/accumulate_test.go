//go:build !mpi

package win_test

import (
	"fmt"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/win"
)

func init() {
	ranktest.Register("fetch-add", fetchAddBody)
	ranktest.Register("subword", subwordBody)
	ranktest.Register("mcs", mcsBody)
}

func bodyInt(i, def int) int {
	if a := ranktest.BodyArgs(); len(a) > i {
		if v, err := strconv.Atoi(a[i]); err == nil {
			return v
		}
	}
	return def
}

// fetchAddBody: every rank adds 1 to one int64 at rank 0, k times; the total
// is exact and every fetched value is distinct (checked by their sum).
func fetchAddBody(c *comm.Comm) error {
	k := bodyInt(0, 100000)
	w, err := win.AllocateShared(c, 8, 8, nil)
	if err != nil {
		return err
	}
	defer w.Free()
	if err := w.LockAll(0); err != nil {
		return err
	}
	for range k {
		if _, err := win.FetchAndOp(w, int64(1), 0, 0, atomics.Sum); err != nil {
			return err
		}
	}
	if err := w.FlushAll(); err != nil {
		return err
	}
	if err := w.UnlockAll(); err != nil {
		return err
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	got, _ := win.View[int64](mustQuery(w, 0).Bytes)
	return check(got[0] == int64(k*c.Size()), "total %d after %d ranks x %d FetchAndOp(Sum)", got[0], c.Size(), k)
}

func TestFetchAndOpCounted2(t *testing.T)  { ranktest.Run(t, 2, "fetch-add") }
func TestFetchAndOpCounted8(t *testing.T)  { ranktest.Run(t, 8, "fetch-add") }
func TestFetchAndOpCounted32(t *testing.T) { ranktest.Run(t, 32, "fetch-add") }

// subwordBody: ranks update neighbouring 1- and 2-byte elements that share
// one 32-bit word (and one 8-byte word) with different ops; no update of a
// neighbour may be lost.
func subwordBody(c *comm.Comm) error {
	const k = 20000
	n, me := c.Size(), c.Rank()
	w, err := win.AllocateShared(c, 8, 1, nil)
	if err != nil {
		return err
	}
	defer w.Free()
	if err := w.LockAll(0); err != nil {
		return err
	}
	// Byte 0..1: uint8 counters (Sum) of even/odd ranks; bytes 2-3: an
	// int16 counter (Sum); byte 4: uint8 that rank 0 Bor's bits into; bytes 6-7: uint16 Bxor.
	for i := range k {
		var errs [4]error
		_, errs[0] = win.FetchAndOp(w, uint8(1), 0, me%2, atomics.Sum)
		errs[1] = win.Accumulate(w, []int16{1}, 0, 2, atomics.Sum)
		if me == 0 && i < 8 {
			errs[2] = win.Accumulate(w, []uint8{1 << i}, 0, 4, atomics.Bor)
		}
		_, errs[3] = win.FetchAndOp(w, uint16(1<<(me%16)), 0, 6, atomics.Bxor)
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
	}
	if err := w.UnlockAll(); err != nil {
		return err
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	b := mustQuery(w, 0).Bytes
	evens, odds := (n+1)/2, n/2
	var xor uint16
	for r := range n {
		if k%2 == 1 {
			xor ^= 1 << (r % 16)
		}
	}
	return check(b[0] == uint8(evens*k) && b[1] == uint8(odds*k) &&
		int16(uint16(b[2])|uint16(b[3])<<8) == int16(n*k) && b[4] == 0xff && b[5] == 0 &&
		uint16(b[6])|uint16(b[7])<<8 == xor,
		"bytes %v after %d ranks x %d mixed sub-word ops", b, n, k)
}

func TestSubwordNeighbours(t *testing.T)      { ranktest.Run(t, 4, "subword") }
func TestSubwordNeighboursLocal(t *testing.T) { runLocal(t, 4, subwordBody) }

// mcsBody: an MCS queue lock built from FetchAndOp(Replace), CompareAndSwap
// and Accumulate(Replace), in the style of MPICH's and "Using Advanced MPI"'s
// examples, guards a plain (non-atomic) counter at rank 0.
func mcsBody(c *comm.Comm) error {
	const k = 200
	const (
		locked = 0 // my qnode: am I waiting?
		next   = 1 // my qnode: who waits after me (-1 none)
		tail   = 2 // at rank 0: the queue's last rank (-1 none)
		count  = 3 // at rank 0: the guarded counter
	)
	me := int64(c.Rank())
	w, err := win.AllocateShared(c, 4*8, 8, nil)
	if err != nil {
		return err
	}
	defer w.Free()
	mine, _ := win.View[int64](w.Local())
	mine[tail] = -1
	if err := c.Barrier(); err != nil {
		return err
	}
	if err := w.LockAll(0); err != nil {
		return err
	}
	// Polling yields the CPU: with 16 ranks on 2 cores a spinning rank
	// would otherwise burn whole time slices while the lock holder waits.
	load := func(rank, disp int) (int64, error) {
		_, _, _ = unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
		return win.FetchAndOp(w, int64(0), rank, disp, atomics.NoOp)
	}
	store := func(v int64, rank, disp int) error {
		if err := win.Accumulate(w, []int64{v}, rank, disp, atomics.Replace); err != nil {
			return err
		}
		return w.Flush(rank)
	}
	for range k {
		// Acquire.
		if err := store(1, int(me), locked); err != nil {
			return err
		}
		if err := store(-1, int(me), next); err != nil {
			return err
		}
		pred, err := win.FetchAndOp(w, me, 0, tail, atomics.Replace)
		if err != nil {
			return err
		}
		if pred != -1 {
			if err := store(me, int(pred), next); err != nil {
				return err
			}
			for {
				v, err := load(int(me), locked)
				if err != nil {
					return err
				}
				if v == 0 {
					break
				}
			}
		}
		// Critical section: a plain read-modify-write.
		var cnt [1]int64
		if err := win.GetT(w, cnt[:], 0, count); err != nil {
			return err
		}
		cnt[0]++
		if err := win.PutT(w, cnt[:], 0, count); err != nil {
			return err
		}
		if err := w.Flush(0); err != nil {
			return err
		}
		// Release.
		succ, err := load(int(me), next)
		if err != nil {
			return err
		}
		if succ == -1 {
			old, err := win.CompareAndSwap(w, int64(-1), me, 0, tail)
			if err != nil {
				return err
			}
			if old == me {
				continue
			}
			for succ == -1 {
				if succ, err = load(int(me), next); err != nil {
					return err
				}
			}
		}
		if err := store(0, int(succ), locked); err != nil {
			return err
		}
	}
	if err := w.UnlockAll(); err != nil {
		return err
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	got, _ := win.View[int64](mustQuery(w, 0).Bytes)
	return check(got[count] == int64(k*c.Size()), "guarded counter %d after %d ranks x %d", got[count], c.Size(), k)
}

func TestMCSLock16(t *testing.T) { ranktest.Run(t, 16, "mcs") }

// inLockAll runs body on a one-rank, 64-byte window inside LockAll.
func inLockAll(t *testing.T, body func(w *win.Win) error) {
	t.Helper()
	runLocal(t, 1, func(c *comm.Comm) error {
		w, err := win.AllocateShared(c, 64, 8, nil)
		if err != nil {
			return err
		}
		defer w.Free()
		if err := w.LockAll(0); err != nil {
			return err
		}
		defer w.UnlockAll()
		return body(w)
	})
}

// TestOpTypeRules: a forbidden op/type combination is ErrOp naming both.
func TestOpTypeRules(t *testing.T) {
	inLockAll(t, func(w *win.Win) error {
		err := win.Accumulate(w, []float64{1}, 0, 0, atomics.Band)
		if err := check(err != nil && fmt.Sprint(err) != "" && isClass(err, win.ErrOp), "Band on float64: %v", err); err != nil {
			return err
		}
		err = win.Accumulate(w, []int64{1}, 0, 0, atomics.NoOp)
		return check(isClass(err, win.ErrOp), "NoOp in Accumulate: %v", err)
	})
}

// TestCompareAndSwapResults: a swap returns compare, a failed one the value
// it found and changes nothing, for the inlined int64 path and the general
// paths (int32, a named type) alike.
func TestCompareAndSwapResults(t *testing.T) {
	type count int64
	inLockAll(t, func(w *win.Win) error {
		steps := []struct {
			v, cmp, wantOld, wantAfter int64
		}{{5, 0, 0, 5}, {7, 0, 5, 5}, {-1, 5, 5, -1}, {3, -2, -1, -1}}
		for i, s := range steps {
			old, err := win.CompareAndSwap(w, s.v, s.cmp, 0, 0)
			if err != nil {
				return err
			}
			o32, err := win.CompareAndSwap(w, int32(s.v), int32(s.cmp), 0, 2)
			if err != nil {
				return err
			}
			oc, err := win.CompareAndSwap(w, count(s.v), count(s.cmp), 0, 3)
			if err != nil {
				return err
			}
			after, _ := win.FetchAndOp(w, int64(0), 0, 0, atomics.NoOp)
			a32, _ := win.FetchAndOp(w, int32(0), 0, 2, atomics.NoOp)
			ac, _ := win.FetchAndOp(w, count(0), 0, 3, atomics.NoOp)
			if old != s.wantOld || int64(o32) != s.wantOld || int64(oc) != s.wantOld ||
				after != s.wantAfter || int64(a32) != s.wantAfter || int64(ac) != s.wantAfter {
				return fmt.Errorf("step %d: old %d/%d/%d, after %d/%d/%d; want %d, %d",
					i, old, o32, oc, after, a32, ac, s.wantOld, s.wantAfter)
			}
		}
		return nil
	})
}

// TestGetAccumulateNoOpIgnoresSrc: with NoOp the origin buffer is ignored,
// so any src (nil, shorter, longer than result) is accepted and the target's
// elements are read into result, on the one-element and general paths.
func TestGetAccumulateNoOpIgnoresSrc(t *testing.T) {
	inLockAll(t, func(w *win.Win) error {
		if _, err := win.FetchAndOp(w, int64(7), 0, 0, atomics.Replace); err != nil {
			return err
		}
		for _, src := range [][]int64{nil, {}, {1}, {1, 2, 3, 4, 5}} {
			for _, n := range []int{1, 2} {
				res := make([]int64, n)
				if err := win.GetAccumulate(w, src, res, 0, 0, atomics.NoOp); err != nil {
					return fmt.Errorf("NoOp with %d source and %d result elements: %v", len(src), n, err)
				}
				if res[0] != 7 {
					return fmt.Errorf("NoOp with %d source elements read %d, want 7", len(src), res[0])
				}
			}
		}
		err := win.GetAccumulate(w, []int64{1}, make([]int64, 2), 0, 0, atomics.Sum)
		return check(isClass(err, win.ErrCount), "Sum with 1 source and 2 result elements: %v, want ErrCount", err)
	})
}
