package typesig

import (
	"testing"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/format"
)

func mustSig(t testing.TB, ty *dtype.Type) []dtype.SigRun {
	t.Helper()
	if err := ty.Commit(); err != nil {
		t.Fatal(err)
	}
	s, err := ty.Signature()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// refDigest expands the element sequence, a pair type into its two
// halves, and hashes it one element at a time: the definition the
// doubling code must agree with.
func refDigest(sig []dtype.SigRun, count int, n int64) (uint32, bool) {
	var elems []dtype.SigRun
	for range count {
		for _, r := range sig {
			for range r.N {
				if a, b := halves(r.T); a != 0 && !r.IsByte {
					elems = append(elems, dtype.SigRun{T: a, N: 1}, dtype.SigRun{T: b, N: 1})
					continue
				}
				elems = append(elems, dtype.SigRun{T: r.T, IsByte: r.IsByte, N: 1})
			}
		}
	}
	var h, p uint64 = 0, 1
	var first dtype.SigRun
	mixed := false
	k := 0
	for len(elems) > 0 && n > 0 {
		e := elems[0]
		elems = elems[1:]
		es := elemSize(e)
		if es > n {
			return 0, false
		}
		n -= es
		if k == 0 {
			first = e
		} else if e.T != first.T || e.IsByte != first.IsByte {
			mixed = true
		}
		k++
		h = (h + mulmod(p, code(e))) % mod
		p = mulmod(p, base)
	}
	if n > 0 {
		return 0, false
	}
	switch {
	case k == 0, !mixed && first.IsByte:
		return Any, true
	case !mixed:
		return Kind(first.T), true
	}
	return Hashed | uint32(h)&(Hashed-1), true
}

func TestCanonical(t *testing.T) {
	f64 := dtype.Basic(atomics.Float64)
	i32 := dtype.Basic(atomics.Int32)
	vec, _ := dtype.Vector(4, 1, 3, f64)
	con, _ := dtype.Contiguous(4, f64)
	if a, b := Of(mustSig(t, vec), 3), Of(mustSig(t, con), 3); a != b || a != Kind(atomics.Float64) {
		t.Fatalf("vector %#x, contiguous %#x, want %#x", a, b, Kind(atomics.Float64))
	}
	// struct {int32; float64} twice == struct of two such pairs once.
	pair, _ := dtype.Struct([]int{1, 1}, []int64{0, 8}, []*dtype.Type{i32, f64})
	two, _ := dtype.Contiguous(2, pair)
	a, b := Of(mustSig(t, pair), 2), Of(mustSig(t, two), 1)
	if a != b || a&Hashed == 0 {
		t.Fatalf("pair×2 %#x, (2 pairs)×1 %#x", a, b)
	}
	swapped, _ := dtype.Struct([]int{1, 1}, []int64{0, 8}, []*dtype.Type{f64, i32})
	if Of(mustSig(t, swapped), 2) == a {
		t.Fatal("{float64,int32} digests like {int32,float64}")
	}
	if Of(mustSig(t, dtype.Byte), 7) != Any || Of(mustSig(t, pair), 0) != Any {
		t.Fatal("Byte or empty data is not Any")
	}
	// A receive of 4 pairs holding a 2-pair message.
	if d, ok := Prefix(mustSig(t, pair), pair.Size(), 4, 2*pair.Size()); !ok || d != a {
		t.Fatalf("prefix of 2 pairs: %#x %v, want %#x", d, ok, a)
	}
	// 4 bytes of a pair: its int32 alone.
	if d, ok := Prefix(mustSig(t, pair), pair.Size(), 4, 4); !ok || d != Kind(atomics.Int32) {
		t.Fatalf("prefix of 4 bytes: %#x %v", d, ok)
	}
	if _, ok := Prefix(mustSig(t, pair), pair.Size(), 4, 6); ok {
		t.Fatal("a cut inside the float64 is ok")
	}
	if _, ok := Prefix(mustSig(t, pair), pair.Size(), 1, 2*pair.Size()); ok {
		t.Fatal("a prefix longer than the data is ok")
	}
	if !Match(Any, a) || !Match(a, Any) || Match(a, Kind(atomics.Int32)) {
		t.Fatal("Match")
	}
}

// TestPairs checks that a pair type digests as its two halves (MPI 4.1
// §6.9.4): MPI_2INT as ints, MPI_DOUBLE_INT as a struct of a double and
// an int, and that a receive of pairs may hold a value without its int.
func TestPairs(t *testing.T) {
	i32 := dtype.Basic(atomics.Int32)
	f64 := dtype.Basic(atomics.Float64)
	twoInt := dtype.Basic(atomics.TwoIntT)
	if a, b := Of(mustSig(t, twoInt), 2), Of(mustSig(t, i32), 4); a != b || a != Kind(atomics.Int32) {
		t.Fatalf("2 MPI_2INT %#x, 4 MPI_INT %#x", a, b)
	}
	if d, ok := Uniform(atomics.TwoIntT); !ok || d != Kind(atomics.Int32) {
		t.Fatalf("Uniform(TwoIntT) = %#x %v", d, ok)
	}
	if _, ok := Uniform(atomics.DoubleIntT); ok {
		t.Fatal("Uniform(DoubleIntT) is ok")
	}
	di := dtype.Basic(atomics.DoubleIntT)
	st, _ := dtype.Struct([]int{1, 1}, []int64{0, 8}, []*dtype.Type{f64, i32})
	for _, n := range []int{1, 3} {
		if a, b := Of(mustSig(t, di), n), Of(mustSig(t, st), n); a != b || a&Hashed == 0 {
			t.Fatalf("%d MPI_DOUBLE_INT %#x, %d struct{double; int} %#x", n, a, n, b)
		}
	}
	// 2 pairs and a double: a prefix of 3 pairs.
	want := Of(append(mustSig(t, st), mustSig(t, st)[0], mustSig(t, st)[1], dtype.SigRun{T: atomics.Float64, N: 1}), 1)
	if d, ok := Prefix(mustSig(t, di), di.Size(), 3, 2*di.Size()+8); !ok || d != want {
		t.Fatalf("2.5 pairs: %#x %v, want %#x", d, ok, want)
	}
	if _, ok := Prefix(mustSig(t, di), di.Size(), 3, 2*di.Size()+4); ok {
		t.Fatal("a cut inside a pair's double is ok")
	}
}

// FuzzDigest checks Of and Prefix against the element-by-element
// definition on signatures made of fuzzed runs.
func FuzzDigest(f *testing.F) {
	f.Add([]byte{3, 2, 10, 1, 255, 1}, uint8(3), uint16(20))
	f.Add([]byte{11, 4}, uint8(2), uint16(64))
	f.Fuzz(func(t *testing.T, runs []byte, count uint8, n uint16) {
		var sig []dtype.SigRun
		var size int64
		for i := 0; i+1 < len(runs) && len(sig) < 8; i += 2 {
			r := dtype.SigRun{N: int64(runs[i+1]%5) + 1}
			if runs[i] == 255 {
				r.T, r.IsByte = atomics.Uint8, true
			} else {
				r.T = atomics.Type(runs[i]%uint8(atomics.ShortIntT) + 1)
			}
			sig = append(sig, r)
			size += r.N * elemSize(r)
		}
		c := int(count % 6)
		if want, _ := refDigest(sig, c, size*int64(c)); Of(sig, c) != want {
			t.Fatalf("Of(%v, %d) = %#x, want %#x", sig, c, Of(sig, c), want)
		}
		if size == 0 {
			return
		}
		got, ok := Prefix(sig, size, c, int64(n))
		want, wok := refDigest(sig, c, int64(n))
		if int64(n) > size*int64(c) {
			wok = false
		}
		if ok != wok || ok && got != want {
			t.Fatalf("Prefix(%v, %d, %d) = %#x %v, want %#x %v", sig, c, n, got, ok, want, wok)
		}
	})
}

// TestCollElem: a data-movement collective counts a basic type as
// itself, MPI_2INT as twice as many ints, the other pairs as mixed bytes
// without their Go struct's padding (the packed size the typed forms
// move).
func TestCollElem(t *testing.T) {
	for _, tc := range []struct {
		k    atomics.Type
		typ  uint8
		size int
	}{
		{atomics.Float64, uint8(atomics.Float64), 8},
		{atomics.Int8, uint8(atomics.Int8), 1},
		{atomics.TwoIntT, uint8(atomics.Int32), 4},
		{atomics.FloatIntT, format.FlagTypeMixed, 1},
		{atomics.DoubleIntT, format.FlagTypeMixed, 1},
		{atomics.LongIntT, format.FlagTypeMixed, 1},
		{atomics.ShortIntT, format.FlagTypeMixed, 1},
	} {
		if typ, size := CollElem(tc.k); typ != tc.typ || size != tc.size {
			t.Errorf("CollElem(%v) = %#x, %d; want %#x, %d", tc.k, typ, size, tc.typ, tc.size)
		}
	}
}
