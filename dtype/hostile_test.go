package dtype_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/dtype"
)

// within runs f and fails t if it takes longer than d: a constructor,
// Commit or Pack whose work grows with a count rather than with the data
// would hang a program for hours on hostile arguments.
func within(t *testing.T, d time.Duration, name string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still running after %v", name, d)
	}
}

// TestEmptyRepeated: a type of no data repeated 2^40 times has no runs,
// so committing, packing and iterating it must not walk its copies.
func TestEmptyRepeated(t *testing.T) {
	empty, err := dtype.Contiguous(0, dtype.Basic(atomics.Int32))
	if err != nil {
		t.Fatal(err)
	}
	if err := empty.Commit(); err != nil {
		t.Fatal(err)
	}
	within(t, 5*time.Second, "Commit of 2^40 empty types", func() {
		many, err := dtype.Contiguous(1<<40, empty)
		if err != nil {
			t.Error(err)
			return
		}
		if err := many.Commit(); err != nil {
			t.Error(err)
		}
	})
	within(t, 5*time.Second, "Pack of 2^50 empty types", func() {
		if n, err := dtype.Pack(nil, 1<<50, empty, nil); n != 0 || err != nil {
			t.Errorf("Pack: %d, %v", n, err)
		}
		if n, err := dtype.Unpack(nil, nil, 1<<50, empty); n != 0 || err != nil {
			t.Errorf("Unpack: %d, %v", n, err)
		}
	})
}

// TestHugeCounts: constructors whose blocks number 2^40 must answer at
// once (a type too big to commit is Commit's ErrNoMem, not a hang of the
// constructor).
func TestHugeCounts(t *testing.T) {
	empty, err := dtype.Contiguous(0, dtype.Basic(atomics.Int32))
	if err != nil {
		t.Fatal(err)
	}
	zeroExt, err := dtype.Resized(empty, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	within(t, 5*time.Second, "Vector of 2^40 blocks", func() {
		v, err := dtype.Vector(1<<40, 1, 2, dtype.Byte)
		if err != nil {
			t.Error(err)
			return
		}
		if v.Size() != 1<<40 || v.Extent() != 1<<41-1 || v.TrueExtent() != 1<<41-1 {
			t.Errorf("%v: size %d extent %d true extent %d", v, v.Size(), v.Extent(), v.TrueExtent())
		}
		if err := v.Commit(); !errors.Is(err, dtype.ErrNoMem) {
			t.Errorf("Commit of 2^40 runs: %v, want ErrNoMem", err)
		}
	})
	within(t, 5*time.Second, "Hvector of 2^40 empty blocks", func() {
		v, err := dtype.Hvector(1<<40, 1<<20, 0, zeroExt)
		if err != nil {
			t.Error(err)
			return
		}
		if err := v.Commit(); err != nil {
			t.Error(err)
		}
	})
	within(t, 5*time.Second, "Subarray of 2^40 rows", func() {
		s, err := dtype.Subarray([]int{1 << 40, 2}, []int{1 << 40, 1}, []int{0, 1}, dtype.OrderC, zeroExt)
		if err != nil {
			t.Error(err)
			return
		}
		if err := s.Commit(); err != nil {
			t.Error(err)
		}
	})
}

// TestExtentOverflow: a type whose extent or true extent does not fit in
// int64 is an error of its constructor, and Span never returns a range
// whose length overflows: a window's range check computes hi - lo.
func TestExtentOverflow(t *testing.T) {
	i64 := dtype.Basic(atomics.Int64)
	if tp, err := dtype.Hindexed([]int{1, 1}, []int64{-100, math.MaxInt64 - 32}, i64); err == nil {
		t.Errorf("%v: extent %d, true extent %d: want an error", tp, tp.Extent(), tp.TrueExtent())
	}
	// Padded to the alignment of 8, the extent 9 would reach past 2^63.
	pad := []*dtype.Type{dtype.Basic(atomics.Int8), i64}
	if tp, err := dtype.Struct([]int{1, 1}, []int64{math.MaxInt64 - 9, math.MaxInt64 - 8}, pad); err == nil {
		t.Errorf("%v: lb %d extent %d: want an error", tp, tp.LB(), tp.Extent())
	}
	low, err := dtype.Hindexed([]int{1}, []int64{-100}, i64)
	if err != nil {
		t.Fatal(err)
	}
	far, err := dtype.Resized(low, 0, math.MaxInt64-5)
	if err != nil {
		t.Fatal(err)
	}
	if err := far.Commit(); err != nil {
		t.Fatal(err)
	}
	if lo, hi, err := far.Span(2); err == nil && hi-lo < 0 {
		t.Errorf("Span(2) of %v: [%d, %d), %d bytes", far, lo, hi, hi-lo)
	}
}

// TestFitsRecv: instances that hold more bytes than they span overlap,
// which a receive buffer's may not (and a receive would stage all of
// them: 2^40 zero-extent int64s in 8 bytes are 8 TiB); ones that tile or
// leave gaps fit.
func TestFitsRecv(t *testing.T) {
	i64 := dtype.Basic(atomics.Int64)
	flat, err := dtype.Resized(i64, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	twice, err := dtype.Indexed([]int{1, 1}, []int{0, 0}, i64)
	if err != nil {
		t.Fatal(err)
	}
	gappy, err := dtype.Vector(2, 1, 3, i64)
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range []*dtype.Type{flat, twice, gappy} {
		if err := tp.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		t     *dtype.Type
		count int
		ok    bool
	}{
		{flat, 1, true}, {flat, 2, false}, {flat, 1 << 40, false},
		{twice, 1, false}, {i64, 4, true}, {gappy, 2, true}, {gappy, 0, true},
	} {
		err := c.t.FitsRecv(c.count, 1<<10)
		if (err == nil) != c.ok {
			t.Errorf("%d × %v: FitsRecv %v, want ok %v", c.count, c.t, err, c.ok)
		}
		if err != nil && !errors.Is(err, dtype.ErrType) {
			t.Errorf("%d × %v: %v is not ErrType", c.count, c.t, err)
		}
	}
}
