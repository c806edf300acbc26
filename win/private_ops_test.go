//go:build !mpi

package win_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/win"
)

func init() { ranktest.Register("private-ops", privateOpsBody) }

// privateOpsBody is a differential test of the two accumulate paths: rank
// 1 exposes private memory in one Create window and AllocMem memory in
// another, with the same bytes; rank 0 applies every op the standard
// defines on each type, by Accumulate, GetAccumulate, FetchAndOp and
// CompareAndSwap, to both, at aligned and unaligned places, and the two
// must hold the same bits afterwards (and return the same results).
func privateOpsBody(c *comm.Comm) error {
	const size = 8192
	priv := make([]byte, size)
	shared, err := comm.AllocMem(size, nil)
	if err != nil {
		return err
	}
	for i := range priv {
		priv[i] = byte(i*7 + 3)
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
	t := 1 % c.Size()
	if c.Rank() == 0 {
		if err := wp.LockAll(0); err != nil {
			return err
		}
		if err := ws.LockAll(0); err != nil {
			return err
		}
		disp := 0
		for _, run := range []func(w *win.Win, disp int) ([]byte, error){
			opsOn[int8], opsOn[int16], opsOn[int32], opsOn[int64], opsOn[uint8], opsOn[uint32], opsOn[uint64],
			opsOn[float32], opsOn[float64], opsOn[complex64], opsOn[complex128],
			pairsOn[atomics.DoubleInt], pairsOn[atomics.TwoInt], pairsOn[atomics.LongInt],
		} {
			for _, shift := range []int{0, 3} { // aligned, and not
				rp, err := run(wp, disp+shift)
				if err != nil {
					return fmt.Errorf("private memory: %w", err)
				}
				rs, err := run(ws, disp+shift)
				if err != nil {
					return fmt.Errorf("AllocMem memory: %w", err)
				}
				if !bytes.Equal(rp, rs) {
					return fmt.Errorf("disp %d: results differ: private %x, shared %x", disp+shift, rp, rs)
				}
				disp += 160
			}
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
	if c.Rank() == t && !bytes.Equal(priv, shared) {
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

var allOps = []atomics.Op{atomics.Sum, atomics.Prod, atomics.Max, atomics.Min, atomics.Band, atomics.Bor, atomics.Bxor,
	atomics.Land, atomics.Lor, atomics.Lxor, atomics.Replace, atomics.NoOp}

// opsOn runs every op defined on T against 4 elements at disp of rank 1
// and returns every result it got back.
func opsOn[T atomics.Integer | ~float32 | ~float64 | ~complex64 | ~complex128](w *win.Win, disp int) ([]byte, error) {
	var out []byte
	src := []T{3, 2, 1, 5}
	res := make([]T, 4)
	for _, op := range allOps {
		err := win.Accumulate(w, src, 1, disp, op)
		if errors.Is(err, atomics.ErrOp) {
			continue // not defined on T, on both paths
		}
		if err != nil && op != atomics.NoOp {
			return nil, fmt.Errorf("Accumulate %v on %T: %w", op, src, err)
		}
		if err := win.GetAccumulate(w, src, res, 1, disp, op); err != nil {
			return nil, fmt.Errorf("GetAccumulate %v: %w", op, err)
		}
		out = append(out, raw.Bytes(res)...)
		old, err := win.FetchAndOp(w, src[1], 1, disp+8, op)
		if err != nil {
			return nil, fmt.Errorf("FetchAndOp %v: %w", op, err)
		}
		out = append(out, raw.Bytes([]T{old})...)
	}
	got := make([]T, 4)
	if err := win.GetT(w, got, 1, disp); err != nil {
		return nil, err
	}
	out = append(out, raw.Bytes(got)...)
	if err := casOn(w, disp, &out, got); err != nil {
		return nil, err
	}
	return out, w.Flush(1)
}

// casOn runs CompareAndSwap on integer types, a hit and a miss.
func casOn[T any](w *win.Win, disp int, out *[]byte, cur []T) error {
	var err error
	var old []byte
	switch v := any(cur).(type) {
	case []int64:
		var a, b int64
		if a, err = win.CompareAndSwap(w, 42, v[0], 1, disp); err == nil {
			b, err = win.CompareAndSwap(w, 7, v[0], 1, disp)
		}
		old = raw.Bytes([]int64{a, b})
	case []int32:
		var a, b int32
		if a, err = win.CompareAndSwap(w, 42, v[0], 1, disp); err == nil {
			b, err = win.CompareAndSwap(w, 7, v[0], 1, disp)
		}
		old = raw.Bytes([]int32{a, b})
	case []uint8:
		var a, b uint8
		if a, err = win.CompareAndSwap(w, 42, v[0], 1, disp); err == nil {
			b, err = win.CompareAndSwap(w, 7, v[0], 1, disp)
		}
		old = raw.Bytes([]uint8{a, b})
	}
	*out = append(*out, old...)
	return err
}

// pairsOn runs MinLoc and MaxLoc (and Replace, NoOp) on a pair type.
func pairsOn[T atomics.DoubleInt | atomics.TwoInt | atomics.LongInt](w *win.Win, disp int) ([]byte, error) {
	var out []byte
	src := make([]T, 3)
	b := raw.Bytes(src)
	for i := range b {
		b[i] = byte(i * 5)
	}
	res := make([]T, 3)
	for _, op := range []atomics.Op{atomics.MinLoc, atomics.MaxLoc, atomics.Replace, atomics.NoOp} {
		if op != atomics.NoOp {
			if err := win.Accumulate(w, src, 1, disp, op); err != nil {
				return nil, fmt.Errorf("Accumulate %v on %T: %w", op, src, err)
			}
		}
		if err := win.GetAccumulate(w, src, res, 1, disp, op); err != nil {
			return nil, fmt.Errorf("GetAccumulate %v: %w", op, err)
		}
		out = append(out, raw.Bytes(res)...)
	}
	return out, w.Flush(1)
}

func TestPrivateOps(t *testing.T)      { ranktest.Run(t, 2, "private-ops") }
func TestPrivateOpsLocal(t *testing.T) { runLocal(t, 2, privateOpsBody) }
