package dtype_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/dtype"
)

// FuzzConstructors builds nested types from arbitrary arguments: no
// constructor, Commit, Span, Pack or Unpack may panic, and where a type is
// small enough its packing must agree with the reference type map.
func FuzzConstructors(f *testing.F) {
	f.Add([]byte{0, 3, 1, 2, 5, 4, 1, 0})
	f.Add([]byte{2, 2, 3, 250, 1, 5, 0, 9, 9, 9})
	f.Add([]byte{7, 1, 200, 100, 6, 3, 3, 1, 1})
	f.Fuzz(func(t *testing.T, prog []byte) {
		next := func() int {
			if len(prog) == 0 {
				return 0
			}
			b := prog[0]
			prog = prog[1:]
			return int(int8(b))
		}
		cur := dtype.Basic(atomics.Type(1 + uint8(next())%uint8(atomics.ShortIntT)))
		if cur == nil {
			return
		}
		for step := 0; step < 4 && len(prog) > 0; step++ {
			var nt *dtype.Type
			var err error
			switch uint(next()) % 9 {
			case 0:
				nt, err = dtype.Contiguous(next(), cur)
			case 1:
				nt, err = dtype.Vector(next(), next(), next(), cur)
			case 2:
				nt, err = dtype.Hvector(next(), next(), int64(next())*int64(next()), cur)
			case 3:
				nt, err = dtype.Indexed([]int{next(), next()}, []int{next(), next()}, cur)
			case 4:
				nt, err = dtype.Hindexed([]int{next()}, []int64{int64(next()) << uint(next()&63)}, cur)
			case 5:
				nt, err = dtype.IndexedBlock(next(), []int{next(), next(), next()}, cur)
			case 6:
				nt, err = dtype.Struct([]int{next(), next()}, []int64{int64(next()), int64(next())}, []*dtype.Type{cur, dtype.Basic(atomics.Int8)})
			case 7:
				nt, err = dtype.Resized(cur, int64(next()), int64(next()))
			case 8:
				nt, err = dtype.Subarray([]int{next(), next()}, []int{next(), next()}, []int{next(), next()}, dtype.Order(1+next()&1), cur)
			}
			if err != nil {
				return
			}
			cur = nt
		}
		if cur.Size() > 1<<14 { // bounded runs: a quick Commit
			return
		}
		if err := cur.Commit(); err != nil {
			return
		}
		checkBounds(t, cur)
		lo, hi, err := cur.Span(2)
		if err != nil || lo < 0 || hi > 1<<16 || cur.Size() > 1<<14 {
			return
		}
		src := make([]byte, hi)
		for i := range src {
			src[i] = byte(i)
		}
		packed := make([]byte, 2*cur.Size())
		if _, err := dtype.Pack(src, 2, cur, packed); err != nil {
			t.Fatalf("Pack of %v: %v", cur, err)
		}
		if want := refPack(src, 2, cur); !bytes.Equal(packed, want) {
			t.Fatalf("%v: Pack %x, type map %x", cur, packed, want)
		}
		back := make([]byte, hi)
		_, err = dtype.Unpack(packed, back, 2, cur)
		if ferr := cur.FitsRecv(2, len(back)); ferr != nil {
			// Entries that overlap take no data, as a receive's.
			if !errors.Is(err, dtype.ErrType) {
				t.Fatalf("Unpack of %v, whose entries overlap (%v): %v, want ErrType", cur, ferr, err)
			}
		} else if err != nil {
			t.Fatalf("Unpack of %v: %v", cur, err)
		}
	})
}

// checkBounds checks t's size and true bounds against its reference type
// map, and that every run of three instances lies inside Span(3): a
// window's range check trusts Span, and a run past it would reach another
// rank's memory.
func checkBounds(t *testing.T, tp *dtype.Type) {
	t.Helper()
	size, tlb, tub := mapBounds(typeMap(tp))
	if size != tp.Size() || tlb != tp.TrueLB() || tub-tlb != tp.TrueExtent() {
		t.Fatalf("%v: size %d, true lb %d, true extent %d; the type map's %d, %d, %d",
			tp, tp.Size(), tp.TrueLB(), tp.TrueExtent(), size, tlb, tub-tlb)
	}
	lo, hi, err := tp.Span(3)
	if err != nil {
		return
	}
	_ = tp.Each(3, func(off, n int64) bool {
		if off < lo || off+n > hi {
			t.Fatalf("%v: run [%d, %d) outside Span(3) [%d, %d)", tp, off, off+n, lo, hi)
		}
		return true
	})
}
