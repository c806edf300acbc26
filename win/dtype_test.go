//go:build !mpi

package win_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/win"
)

func init() {
	for _, k := range []string{"shared", "create-private", "dynamic-allocmem", "dynamic-private"} {
		ranktest.Register("typed-"+k, func(c *comm.Comm) error { return typedBody(c, k) })
	}
}

const typedN = 16 // each rank's matrix is typedN × typedN float64

// typedBody: every rank puts its column me of a matrix into column me of
// its right neighbour's matrix (a Vector on both sides), gets row me of
// the neighbour's matrix into a strided buffer (Contiguous at the target,
// Vector at the origin), and puts a 4×4 subarray; the data are checked on
// both sides, on every window flavor.
func typedBody(c *comm.Comm, kind string) error {
	n, me := c.Size(), c.Rank()
	right, left := (me+1)%n, (me+n-1)%n
	f64 := dtype.Basic(atomics.Float64)
	col, err := dtype.Vector(typedN, 1, typedN, f64)
	if err != nil {
		return err
	}
	row, err := dtype.Contiguous(typedN, f64)
	if err != nil {
		return err
	}
	sub, err := dtype.Subarray([]int{typedN, typedN}, []int{4, 4}, []int{me + 1, 2}, dtype.OrderC, f64)
	if err != nil {
		return err
	}
	for _, t := range []*dtype.Type{col, row, sub} {
		if err := t.Commit(); err != nil {
			return err
		}
	}
	f, err := makeFlavorWin(c, kind, typedN*typedN)
	if err != nil {
		return err
	}
	w := f.w
	mine := make([]float64, typedN*typedN)
	for i := range mine {
		mine[i] = float64(me*10000 + i)
	}
	copy(f.local, make([]int64, len(f.local)))
	if err := w.Fence(0); err != nil {
		return err
	}
	// My column me → the right neighbour's column me.
	if err := win.PutType(w, bytesOf(mine[me:]), 1, col, right, f.disp(right, me), 1, col); err != nil {
		return err
	}
	if err := w.Fence(0); err != nil {
		return err
	}
	got, err := win.View[float64](bytesOf(f.local))
	if err != nil {
		return err
	}
	for i := range typedN {
		if want := float64(left*10000 + i*typedN + left); got[i*typedN+left] != want {
			return fmt.Errorf("%s: column %d row %d holds %v, want %v", kind, left, i, got[i*typedN+left], want)
		}
	}
	// Row 0 of the right neighbour → a strided buffer here (every other float).
	strided := make([]float64, 2*typedN)
	every2, err := dtype.Vector(typedN, 1, 2, f64)
	if err != nil {
		return err
	}
	if err := every2.Commit(); err != nil {
		return err
	}
	if err := win.GetType(w, bytesOf(strided), 1, every2, right, f.disp(right, 0), 1, row); err != nil {
		return err
	}
	if err := w.Fence(0); err != nil {
		return err
	}
	for i := range typedN {
		want := 0.0
		if i == me {
			want = float64(me*10000 + me)
		}
		if strided[2*i] != want || strided[2*i+1] != 0 {
			return fmt.Errorf("%s: strided Get element %d: %v %v, want %v 0", kind, i, strided[2*i], strided[2*i+1], want)
		}
	}
	// A 4×4 block of mine (at row me+1, column 2) into the same place there.
	if err := win.PutType(w, bytesOf(mine), 1, sub, right, f.disp(right, 0), 1, sub); err != nil {
		return err
	}
	if err := w.Fence(0); err != nil {
		return err
	}
	for r := range 4 {
		for cc := range 4 {
			i := (left+1+r)*typedN + 2 + cc
			if want := float64(left*10000 + i); got[i] != want {
				return fmt.Errorf("%s: subarray element %d holds %v, want %v", kind, i, got[i], want)
			}
		}
	}
	// Misuse: signatures that differ, an origin too short, a target range past the end.
	if err := win.PutType(w, bytesOf(mine), 1, col, right, f.disp(right, 0), 2, col); !errors.Is(err, win.ErrType) {
		return fmt.Errorf("%s: mismatched signatures: %v, want ErrType", kind, err)
	}
	if err := win.PutType(w, bytesOf(mine[:8]), 1, row, right, f.disp(right, 0), 1, row); !errors.Is(err, win.ErrBuffer) {
		return fmt.Errorf("%s: short origin: %v, want ErrBuffer", kind, err)
	}
	if err := win.PutType(w, bytesOf(mine), 1, row, right, f.disp(right, typedN*typedN-8), 1, row); !errors.Is(err, win.ErrRMARange) {
		return fmt.Errorf("%s: past the end: %v, want ErrRMARange", kind, err)
	}
	if err := win.GetType(w, bytesOf(mine[:8]), 1, row, right, f.disp(right, 0), 1, row); !errors.Is(err, win.ErrBuffer) {
		return fmt.Errorf("%s: short result: %v, want ErrBuffer", kind, err)
	}
	if err := win.GetType(w, bytesOf(mine), 1, row, right, f.disp(right, typedN*typedN-8), 1, row); !errors.Is(err, win.ErrRMARange) || !strings.Contains(err.Error(), "GetType") {
		return fmt.Errorf("%s: Get past the end: %v, want ErrRMARange naming GetType", kind, err)
	}
	if err := w.Fence(win.ModeNoSucceed); err != nil {
		return err
	}
	return f.free()
}

func TestTyped(t *testing.T) {
	for _, k := range []string{"shared", "create-private", "dynamic-allocmem", "dynamic-private"} {
		t.Run(k, func(t *testing.T) { ranktest.Run(t, 3, "typed-"+k) })
	}
}

func TestTypedLocal(t *testing.T) {
	for _, k := range []string{"shared", "create-private", "dynamic-allocmem"} {
		t.Run(k, func(t *testing.T) { runLocal(t, 3, func(c *comm.Comm) error { return typedBody(c, k) }) })
	}
}

// bytesOf is the memory of a slice of plain values.
func bytesOf[T any](s []T) []byte { return raw.Bytes(s) }

func init() {
	ranktest.Register("typed-acc-contended", typedAccContendedBody)
	ranktest.Register("typed-acc-diff", typedAccDiffBody)
	ranktest.Register("typed-acc-bytes", typedAccBytesBody)
}

const typedAccRounds = 200

// typedAccContendedBody: every rank adds 1 to every other int64 of rank
// 0's memory through a Vector type, over and over, in every kind of
// window memory at once, while rank 0's own accumulates do the same:
// each element ends at ranks × rounds (element-atomic under contention),
// and the elements between them stay 0.
func typedAccContendedBody(c *comm.Comm) error {
	n := c.Size()
	i64 := dtype.Basic(atomics.Int64)
	every2, err := dtype.Vector(32, 1, 2, i64)
	if err != nil {
		return err
	}
	if err := every2.Commit(); err != nil {
		return err
	}
	ones := make([]int64, 32)
	for i := range ones {
		ones[i] = 1
	}
	dense, err := dtype.Contiguous(32, i64)
	if err != nil {
		return err
	}
	if err := dense.Commit(); err != nil {
		return err
	}
	return flavorsLocked(c, 64, func(kind string, f *flavorWin) error {
		for range typedAccRounds {
			if err := win.AccumulateType(f.w, bytesOf(ones), 1, dense, 0, f.disp(0, 0), 1, every2, atomics.Sum); err != nil {
				return err
			}
		}
		if err := f.w.UnlockAll(); err != nil {
			return err
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		if c.Rank() == 0 {
			for i, v := range f.local {
				want := int64(0)
				if i%2 == 0 {
					want = int64(n * typedAccRounds)
				}
				if v != want {
					return fmt.Errorf("%s: element %d is %d, want %d", kind, i, v, want)
				}
			}
		}
		return c.Barrier()
	})
}

// typedAccBytesBody: MPI's Byte class in the accumulates (MPI 4.1,
// 7.9.2: the bitwise ops, Replace and NoOp). Every rank ORs its own bit
// into every other byte of rank 0's memory through a Vector of
// dtype.Byte, over and over, in every kind of window memory: each of
// those bytes ends with every rank's bit, the bytes between them 0; a
// fetching NoOp reads them back; each rank's Bxor of its bit clears them
// again; Sum on bytes is ErrOp.
func typedAccBytesBody(c *comm.Comm) error {
	n := c.Size()
	every2, err := dtype.Vector(32, 1, 2, dtype.Byte)
	if err != nil {
		return err
	}
	if err := every2.Commit(); err != nil {
		return err
	}
	mine := make([]byte, 32)
	for i := range mine {
		mine[i] = 1 << c.Rank()
	}
	all := byte(1<<n - 1)
	return flavorsLocked(c, 8, func(kind string, f *flavorWin) error {
		for range typedAccRounds {
			if err := win.AccumulateType(f.w, mine, 32, dtype.Byte, 0, f.disp(0, 0), 1, every2, atomics.Bor); err != nil {
				return err
			}
		}
		if err := win.AccumulateType(f.w, mine, 32, dtype.Byte, 0, f.disp(0, 0), 1, every2, atomics.Sum); !errors.Is(err, win.ErrOp) {
			return fmt.Errorf("%s: Sum on bytes: %v, want ErrOp", kind, err)
		}
		if err := f.w.FlushAll(); err != nil {
			return err
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		got := make([]byte, 32)
		if err := win.GetAccumulateType(f.w, nil, 0, nil, got, 32, dtype.Byte, 0, f.disp(0, 0), 1, every2, atomics.NoOp); err != nil {
			return err
		}
		for i, b := range got {
			if b != all {
				return fmt.Errorf("%s: byte %d read back as %#x, want %#x", kind, 2*i, b, all)
			}
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		if err := win.AccumulateType(f.w, mine, 32, dtype.Byte, 0, f.disp(0, 0), 1, every2, atomics.Bxor); err != nil {
			return err
		}
		if err := f.w.UnlockAll(); err != nil {
			return err
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		if c.Rank() == 0 {
			for i, b := range bytesOf(f.local) {
				if b != 0 {
					return fmt.Errorf("%s: byte %d is %#x after every rank's Bxor, want 0", kind, i, b)
				}
			}
		}
		return c.Barrier()
	})
}

func TestTypedAccBytes(t *testing.T) { ranktest.Run(t, 4, "typed-acc-bytes") }

// flavorsLocked runs body on each kind of window memory (makeFlavorWin of
// words) inside a LockAll epoch, which body ends, and frees the window.
func flavorsLocked(c *comm.Comm, words int, body func(kind string, f *flavorWin) error) error {
	for _, kind := range []string{"shared", "create-private", "dynamic-allocmem"} {
		f, err := makeFlavorWin(c, kind, words)
		if err != nil {
			return err
		}
		if err := f.w.LockAll(0); err != nil {
			return err
		}
		if err := body(kind, f); err != nil {
			return err
		}
		if err := f.free(); err != nil {
			return err
		}
	}
	return nil
}

func TestTypedAccContended(t *testing.T) { ranktest.Run(t, 6, "typed-acc-contended") }
func TestTypedAccContendedLocal(t *testing.T) {
	runLocal(t, 4, typedAccContendedBody)
}

// typedAccDiffBody: AccumulateType and GetAccumulateType through strided
// and structured types of int32, float64, DoubleInt (MaxLoc) and ShortInt
// (MinLoc) on private memory (lock, read, combine, write back) and on
// AllocMem memory (the kernels) must leave the same bytes and return the
// same results.
func typedAccDiffBody(c *comm.Comm) error {
	const size = 4096
	priv := make([]byte, size)
	shared, err := comm.AllocMem(size, nil)
	if err != nil {
		return err
	}
	for i := range priv {
		priv[i] = byte(i*13 + 1)
	}
	copy(shared, priv)
	wp, err := win.Create(c, priv, 1, nil)
	if err != nil {
		return err
	}
	ws, err := win.Create(c, shared, 1, nil)
	if err != nil {
		return err
	}
	if c.Rank() == 0 {
		for _, w := range []*win.Win{wp, ws} {
			if err := w.LockAll(0); err != nil {
				return err
			}
		}
		type tcase struct {
			basic atomics.Type
			ops   []atomics.Op
		}
		src := make([]byte, 1024)
		for i := range src {
			src[i] = byte(i*7 + 3)
		}
		disp := 0
		for _, tc := range []tcase{
			{atomics.Int32, []atomics.Op{atomics.Sum, atomics.Max, atomics.Bxor, atomics.Replace, atomics.NoOp}},
			{atomics.Float64, []atomics.Op{atomics.Sum, atomics.Min, atomics.Replace}},
			{atomics.DoubleIntT, []atomics.Op{atomics.MaxLoc, atomics.MinLoc, atomics.Replace}},
			{atomics.ShortIntT, []atomics.Op{atomics.MinLoc, atomics.MaxLoc}},
		} {
			b := dtype.Basic(tc.basic)
			strided, err := dtype.Vector(5, 2, 3, b)
			if err != nil {
				return err
			}
			if err := strided.Commit(); err != nil {
				return err
			}
			flat, err := dtype.Contiguous(10, b)
			if err != nil {
				return err
			}
			if err := flat.Commit(); err != nil {
				return err
			}
			for _, op := range tc.ops {
				var outs [2][]byte
				for k, w := range []*win.Win{wp, ws} {
					res := make([]byte, flat.Extent())
					var err error
					if op == atomics.NoOp {
						err = win.GetAccumulateType(w, nil, 0, nil, res, 1, flat, 1, disp, 1, strided, op)
					} else {
						err = win.AccumulateType(w, src, 1, flat, 1, disp, 1, strided, op)
						if err == nil {
							err = win.GetAccumulateType(w, src, 1, flat, res, 1, flat, 1, disp, 1, strided, op)
						}
					}
					if err != nil {
						return fmt.Errorf("%v %v: %w", tc.basic, op, err)
					}
					outs[k] = res
				}
				if string(outs[0]) != string(outs[1]) {
					return fmt.Errorf("%v %v: results differ: private %x, AllocMem %x", tc.basic, op, outs[0], outs[1])
				}
			}
			disp += int(strided.Extent()) + 64
		}
		for _, w := range []*win.Win{wp, ws} {
			if err := w.UnlockAll(); err != nil {
				return err
			}
		}
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	if c.Rank() == 1%c.Size() && string(priv) != string(shared) {
		for i := range priv {
			if priv[i] != shared[i] {
				return fmt.Errorf("byte %d: private memory %#x, AllocMem memory %#x", i, priv[i], shared[i])
			}
		}
	}
	if err := wp.Free(); err != nil {
		return err
	}
	if err := ws.Free(); err != nil {
		return err
	}
	return comm.FreeMem(shared)
}

func TestTypedAccDiff(t *testing.T) { ranktest.Run(t, 2, "typed-acc-diff") }

// TestTypedSpanOverflow: a target type whose instances reach from before
// disp to past 2^63 bytes after it is an error of the call, not a range
// of negative length that passes the range check (and then a panic
// slicing the window, or a write outside the target's part).
func TestTypedSpanOverflow(t *testing.T) {
	inLockAll(t, func(w *win.Win) error {
		i64 := dtype.Basic(atomics.Int64)
		low, err := dtype.Hindexed([]int{1}, []int64{-40}, i64) // 8 bytes 40 before its origin
		if err != nil {
			return err
		}
		far, err := dtype.Resized(low, 0, math.MaxInt64-5)
		if err != nil {
			return err
		}
		pair, err := dtype.Contiguous(2, i64)
		if err != nil {
			return err
		}
		for _, tp := range []*dtype.Type{far, pair} {
			if err := tp.Commit(); err != nil {
				return err
			}
		}
		err = win.PutType(w, make([]byte, 16), 1, pair, 0, 5, 2, far) // disp 5 × 8 bytes: the first int64 at byte 0
		return check(err != nil, "PutType to 2 instances %d bytes apart: %v", far.Extent(), err)
	})
}
