package win_test

import (
	"errors"
	"fmt"
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
