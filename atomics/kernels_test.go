package atomics

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/shmrun/shmrun/barrier"
)

// Interesting values per type: zero, ±1, the extremes (for wrap-around),
// and for floats ±0, ±Inf, NaN and subnormals; pairs with equal values and
// different indices (for MinLoc/MaxLoc ties).
var (
	valsInt8    = []int8{0, 1, -1, 2, -7, math.MaxInt8, math.MinInt8, 0x55}
	valsInt16   = []int16{0, 1, -1, 3, -300, math.MaxInt16, math.MinInt16, 0x5555}
	valsInt32   = []int32{0, 1, -1, 7, -70000, math.MaxInt32, math.MinInt32, 0x55555555}
	valsInt64   = []int64{0, 1, -1, 11, -1 << 40, math.MaxInt64, math.MinInt64, 0x5555555555555555}
	valsUint8   = []uint8{0, 1, 2, 0x80, 0x7f, 0xff, 0x55}
	valsUint16  = []uint16{0, 1, 2, 0x8000, 0x7fff, 0xffff, 300}
	valsUint32  = []uint32{0, 1, 2, 1 << 31, math.MaxUint32, 70000}
	valsUint64  = []uint64{0, 1, 2, 1 << 63, math.MaxUint64, 1 << 40}
	negZero32   = float32(math.Copysign(0, -1))
	negZero64   = math.Copysign(0, -1)
	valsFloat32 = []float32{0, negZero32, 1, -1.5, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.MaxFloat32, math.SmallestNonzeroFloat32}
	valsFloat64 = []float64{0, negZero64, 1, -1.5, math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64, math.SmallestNonzeroFloat64}
	valsCplx64  = []complex64{0, 1 + 2i, complex(negZero32, 3), complex(float32(math.Inf(1)), 1), complex(float32(math.NaN()), 0), -4 - 0.5i}
	valsCplx128 = []complex128{0, 1 + 2i, complex(negZero64, 3), complex(math.Inf(1), 1), complex(math.NaN(), 0), -4 - 0.5i}
	valsFI      = []FloatInt{{1, 5}, {1, 3}, {-2, 7}, {0, 9}, {negZero32, 1}, {float32(math.NaN()), 2}, {float32(math.Inf(1)), 0}}
	valsDI      = []DoubleInt{{1, 5}, {1, 3}, {-2, 7}, {0, 9}, {negZero64, 1}, {math.NaN(), 2}, {math.MaxFloat64, -1}}
	valsLI      = []LongInt{{1, 5}, {1, 3}, {-2, 7}, {math.MaxInt64, 9}, {math.MinInt64, 1}, {math.MaxInt64, -4}}
	valsTI      = []TwoInt{{1, 5}, {1, 3}, {-2, 7}, {math.MaxInt32, 9}, {math.MinInt32, 1}, {0, 0}}
	valsSI      = []ShortInt{{1, 5}, {1, 3}, {-2, 7}, {math.MaxInt16, 9}, {math.MinInt16, 1}, {0, math.MaxInt32}}
)

var allOps = []Op{0, Sum, Prod, Max, Min, Band, Bor, Bxor, Land, Lor, Lxor, Replace, NoOp, MinLoc, MaxLoc, opEnd, 200}

// misaligns are added to an 8-aligned base offset: 0 keeps every type
// aligned; the others send elements wider than the misalignment allows
// through their stripes.
var misaligns = []int64{0, 1, 2, 4}

func TestKernelsEveryOpEveryType(t *testing.T) {
	t.Run("int8", func(t *testing.T) { testKernels(t, valsInt8) })
	t.Run("int16", func(t *testing.T) { testKernels(t, valsInt16) })
	t.Run("int32", func(t *testing.T) { testKernels(t, valsInt32) })
	t.Run("int64", func(t *testing.T) { testKernels(t, valsInt64) })
	t.Run("uint8", func(t *testing.T) { testKernels(t, valsUint8) })
	t.Run("uint16", func(t *testing.T) { testKernels(t, valsUint16) })
	t.Run("uint32", func(t *testing.T) { testKernels(t, valsUint32) })
	t.Run("uint64", func(t *testing.T) { testKernels(t, valsUint64) })
	t.Run("float32", func(t *testing.T) { testKernels(t, valsFloat32) })
	t.Run("float64", func(t *testing.T) { testKernels(t, valsFloat64) })
	t.Run("complex64", func(t *testing.T) { testKernels(t, valsCplx64) })
	t.Run("complex128", func(t *testing.T) { testKernels(t, valsCplx128) })
	t.Run("FloatInt", func(t *testing.T) { testKernels(t, valsFI) })
	t.Run("DoubleInt", func(t *testing.T) { testKernels(t, valsDI) })
	t.Run("LongInt", func(t *testing.T) { testKernels(t, valsLI) })
	t.Run("TwoInt", func(t *testing.T) { testKernels(t, valsTI) })
	t.Run("ShortInt", func(t *testing.T) { testKernels(t, valsSI) })
}

// testKernels runs Accumulate, GetAccumulate and FetchAndOp with every op on
// every ordered pair of vals (target, origin), at aligned and unaligned
// offsets, and checks the targets and results against ref, forbidden
// combinations against refAllowed, and the bytes around the targets.
func testKernels[T Elem](t *testing.T, vals []T) {
	typ := TypeOf[T]()
	size := typ.Size()
	var targets, origins []T
	for _, a := range vals {
		for _, b := range vals {
			targets, origins = append(targets, a), append(origins, b)
		}
	}
	n := len(targets)
	st := newStripes(t, 4, nil, barrier.DefaultPolicy)
	memLen := (64+8+n*size+64)&^7 + 8
	for _, op := range allOps {
		for _, misalign := range misaligns {
			off := 64 + misalign
			name := fmt.Sprintf("%v/off%d", op, off)

			// Accumulate over all pairs at once (the batch loops).
			mem := newSegment(t, memLen)
			putElems(mem, off, targets)
			before := slices.Clone(mem)
			err := Accumulate(mem, off, origins, op, st)
			if !checkErr(t, name+"/Accumulate", err, op, typ, false) {
				if !bytes.Equal(before, mem) {
					t.Fatalf("%s/Accumulate: refused, but the segment changed", name)
				}
			} else {
				for i := range n {
					if got, want := getElem[T](mem, off+int64(i*size)), ref(op, targets[i], origins[i]); !same(got, want) {
						t.Fatalf("%s/Accumulate: %v op %v = %v, want %v", name, targets[i], origins[i], got, want)
					}
				}
				checkUntouched(t, before, mem, off, n, typ)
			}

			// GetAccumulate: the same plus the old values.
			mem = newSegment(t, memLen)
			putElems(mem, off, targets)
			before = slices.Clone(mem)
			result := make([]T, n)
			src := origins
			if op == NoOp {
				src = nil
			}
			err = GetAccumulate(mem, off, src, result, op, st)
			if checkErr(t, name+"/GetAccumulate", err, op, typ, true) {
				for i := range n {
					if got, want := getElem[T](mem, off+int64(i*size)), ref(op, targets[i], origins[i]); !same(got, want) {
						t.Fatalf("%s/GetAccumulate: %v op %v = %v, want %v", name, targets[i], origins[i], got, want)
					}
					if !same(result[i], targets[i]) {
						t.Fatalf("%s/GetAccumulate: result %d is %v, want the old target %v", name, i, result[i], targets[i])
					}
				}
				checkUntouched(t, before, mem, off, n, typ)
			}

			// One-element Accumulate and GetAccumulate (the hot paths).
			mem = newSegment(t, memLen)
			for i := range n {
				putElems(mem, off, targets[i:i+1])
				before = slices.Clone(mem)
				err := Accumulate(mem, off, origins[i:i+1], op, st)
				if !checkErr(t, name+"/Accumulate(1)", err, op, typ, false) {
					break
				}
				if got, want := getElem[T](mem, off), ref(op, targets[i], origins[i]); !same(got, want) {
					t.Fatalf("%s/Accumulate(1): %v op %v = %v, want %v", name, targets[i], origins[i], got, want)
				}
				checkUntouched(t, before, mem, off, 1, typ)
			}
			for i := range n {
				putElems(mem, off, targets[i:i+1])
				before = slices.Clone(mem)
				res := make([]T, 1)
				src := origins[i : i+1]
				if op == NoOp {
					src = nil
				}
				err := GetAccumulate(mem, off, src, res, op, st)
				if !checkErr(t, name+"/GetAccumulate(1)", err, op, typ, true) {
					break
				}
				if got, want := getElem[T](mem, off), ref(op, targets[i], origins[i]); !same(got, want) || !same(res[0], targets[i]) {
					t.Fatalf("%s/GetAccumulate(1): %v op %v = %v (fetched %v), want %v (%v)", name, targets[i], origins[i], got, res[0], want, targets[i])
				}
				checkUntouched(t, before, mem, off, 1, typ)
			}

			// FetchAndOp, one element at a time, the neighbours are guards.
			mem = newSegment(t, memLen)
			for i := range n {
				putElems(mem, off, targets[i:i+1])
				before = slices.Clone(mem)
				old, err := FetchAndOp(mem, off, origins[i], op, st)
				if !checkErr(t, name+"/FetchAndOp", err, op, typ, true) {
					break
				}
				if got, want := getElem[T](mem, off), ref(op, targets[i], origins[i]); !same(got, want) {
					t.Fatalf("%s/FetchAndOp: %v op %v = %v, want %v", name, targets[i], origins[i], got, want)
				}
				if !same(old, targets[i]) {
					t.Fatalf("%s/FetchAndOp: returned %v, want the old target %v", name, old, targets[i])
				}
				checkUntouched(t, before, mem, off, 1, typ)
			}
		}
	}
}

// checkErr checks err against the op table and reports whether the call was
// allowed (and succeeded).
func checkErr(tb testing.TB, name string, err error, op Op, typ Type, fetching bool) bool {
	tb.Helper()
	if !refAllowed(op, typ, fetching) {
		if !errors.Is(err, ErrOp) {
			tb.Fatalf("%s: %v on %v (fetching %v): got error %v, want ErrOp", name, op, typ, fetching, err)
		}
		if msg := err.Error(); !bytes.Contains([]byte(msg), []byte(op.String())) || !bytes.Contains([]byte(msg), []byte(typ.String())) {
			tb.Fatalf("%s: error %q does not name the op and the type", name, msg)
		}
		return false
	}
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return true
}

func TestCompareAndSwapEveryType(t *testing.T) {
	t.Run("int8", func(t *testing.T) { testCAS(t, valsInt8) })
	t.Run("int16", func(t *testing.T) { testCAS(t, valsInt16) })
	t.Run("int32", func(t *testing.T) { testCAS(t, valsInt32) })
	t.Run("int64", func(t *testing.T) { testCAS(t, valsInt64) })
	t.Run("uint8", func(t *testing.T) { testCAS(t, valsUint8) })
	t.Run("uint16", func(t *testing.T) { testCAS(t, valsUint16) })
	t.Run("uint32", func(t *testing.T) { testCAS(t, valsUint32) })
	t.Run("uint64", func(t *testing.T) { testCAS(t, valsUint64) })
}

func testCAS[T Integer](t *testing.T, vals []T) {
	typ := TypeOf[T]()
	st := newStripes(t, 2, nil, barrier.DefaultPolicy)
	for _, misalign := range misaligns {
		off := 16 + misalign
		mem := newSegment(t, 48)
		for _, a := range vals {
			for _, cmp := range vals {
				v := a ^ cmp ^ 0x5a // a value that differs from both, mostly
				putElems(mem, off, []T{a})
				before := slices.Clone(mem)
				old, err := CompareAndSwap(mem, off, v, cmp, st)
				if err != nil {
					t.Fatal(err)
				}
				want := a
				if a == cmp {
					want = v
				}
				if got := getElem[T](mem, off); old != a || got != want {
					t.Fatalf("%v at %d: CAS(target %v, compare %v, new %v) = old %v, target %v; want %v, %v", typ, off, a, cmp, v, old, got, a, want)
				}
				checkUntouched(t, before, mem, off, 1, typ)
			}
		}
	}
}

// TestFloatMaxMinRule pins the documented rule for MPI_MAX and MPI_MIN on
// floats (that of math.Max and math.Min) on the lock-free and the striped path.
func TestFloatMaxMinRule(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	cases := []struct {
		op          Op
		target, v   float64
		want        float64
		wantSignbit bool
	}{
		{Max, 0, negZero64, 0, false},
		{Max, negZero64, 0, 0, false},
		{Min, 0, negZero64, 0, true},
		{Min, negZero64, 0, 0, true},
		{Max, negZero64, negZero64, 0, true},
		{Max, nan, 1, nan, false},
		{Max, 1, nan, nan, false},
		{Min, nan, -1, nan, false},
		{Max, nan, inf, inf, false}, // math.Max: +Inf beats NaN
		{Min, nan, -inf, -inf, true},
		{Max, 2, 3, 3, false},
		{Min, 2, 3, 2, false},
	}
	st := newStripes(t, 1, nil, barrier.DefaultPolicy)
	for _, c := range cases {
		for _, off := range []int64{8, 9} {
			mem := newSegment(t, 32)
			putElems(mem, off, []float64{c.target})
			if _, err := FetchAndOp(mem, off, c.v, c.op, st); err != nil {
				t.Fatal(err)
			}
			got := getElem[float64](mem, off)
			if !sameF64(got, c.want) && !(got == c.want && math.Signbit(got) == c.wantSignbit) {
				t.Errorf("%v(%v, %v) at %d = %v, want %v", c.op, c.target, c.v, off, got, c.want)
			}
			if got == 0 && math.Signbit(got) != c.wantSignbit {
				t.Errorf("%v(%v, %v) at %d = %v: wrong sign of zero", c.op, c.target, c.v, off, got)
			}
			mem32 := newSegment(t, 32)
			putElems(mem32, off, []float32{float32(c.target)})
			if _, err := FetchAndOp(mem32, off, float32(c.v), c.op, st); err != nil {
				t.Fatal(err)
			}
			if got32 := getElem[float32](mem32, off); !sameF32(got32, float32(got)) {
				t.Errorf("float32 %v(%v, %v) at %d = %v, float64 gives %v", c.op, c.target, c.v, off, got32, got)
			}
		}
	}
}

// TestLocTies pins MPI's tie rule: equal values keep the lower index,
// whichever side it is on, and the target's value stays.
func TestLocTies(t *testing.T) {
	st := newStripes(t, 1, nil, barrier.DefaultPolicy)
	cases := []struct {
		op        Op
		target, v DoubleInt
		want      DoubleInt
	}{
		{MinLoc, DoubleInt{1, 5}, DoubleInt{1, 3}, DoubleInt{1, 3}},
		{MinLoc, DoubleInt{1, 3}, DoubleInt{1, 5}, DoubleInt{1, 3}},
		{MaxLoc, DoubleInt{1, 5}, DoubleInt{1, 3}, DoubleInt{1, 3}},
		{MaxLoc, DoubleInt{1, 3}, DoubleInt{1, 5}, DoubleInt{1, 3}},
		{MaxLoc, DoubleInt{negZero64, 7}, DoubleInt{0, 2}, DoubleInt{negZero64, 2}},
		{MaxLoc, DoubleInt{1, 7}, DoubleInt{2, 9}, DoubleInt{2, 9}},
		{MinLoc, DoubleInt{1, 7}, DoubleInt{2, 1}, DoubleInt{1, 7}},
		{MinLoc, DoubleInt{math.NaN(), 7}, DoubleInt{2, 1}, DoubleInt{math.NaN(), 7}},
		{MinLoc, DoubleInt{2, 7}, DoubleInt{math.NaN(), 1}, DoubleInt{2, 7}},
	}
	for _, c := range cases {
		mem := newSegment(t, 32)
		putElems(mem, 8, []DoubleInt{c.target})
		old, err := FetchAndOp(mem, 8, c.v, c.op, st)
		if err != nil {
			t.Fatal(err)
		}
		if got := getElem[DoubleInt](mem, 8); !same(got, c.want) || !same(old, c.target) || math.Signbit(got.V) != math.Signbit(c.want.V) {
			t.Errorf("%v(%v, %v) = %v (old %v), want %v", c.op, c.target, c.v, got, old, c.want)
		}
	}
}

func TestWrapOnOverflow(t *testing.T) {
	mem := newSegment(t, 16)
	putElems(mem, 0, []int64{math.MaxInt64})
	putElems(mem, 8, []int8{math.MaxInt8, math.MinInt8})
	putElems(mem, 10, []uint16{0xffff})
	if old, _ := FetchAndOp(mem, 0, int64(1), Sum, nil); old != math.MaxInt64 || getElem[int64](mem, 0) != math.MinInt64 {
		t.Errorf("int64 max + 1 = %v", getElem[int64](mem, 0))
	}
	if err := Accumulate(mem, 8, []int8{1, -1}, Sum, nil); err != nil || getElem[int8](mem, 8) != math.MinInt8 || getElem[int8](mem, 9) != math.MaxInt8 {
		t.Errorf("int8 wrap: %v %v %v", getElem[int8](mem, 8), getElem[int8](mem, 9), err)
	}
	if _, err := FetchAndOp(mem, 10, uint16(3), Prod, nil); err != nil || getElem[uint16](mem, 10) != 0xfffd {
		t.Errorf("uint16 0xffff * 3 = %#x %v", getElem[uint16](mem, 10), err)
	}
	if getElem[byte](mem, 12) != guardByte {
		t.Error("neighbour byte changed")
	}
}

func TestCheck(t *testing.T) {
	for op := Op(0); op < 20; op++ {
		for typ := Type(0); typ < 20; typ++ {
			for _, fetching := range []bool{false, true} {
				err := Check(op, typ, fetching)
				if want := refAllowed(op, typ, fetching); want != (err == nil) {
					t.Errorf("Check(%v, %v, %v) = %v, want allowed %v", op, typ, fetching, err, want)
				}
				if err != nil && !errors.Is(err, ErrOp) {
					t.Errorf("Check(%v, %v, %v) = %v: does not wrap ErrOp", op, typ, fetching, err)
				}
			}
		}
	}
	for _, c := range []struct {
		op       Op
		t        Type
		fetching bool
		msg      string
	}{
		{Band, Float64, false, "atomics: MPI_BAND is not defined on MPI_DOUBLE"},
		{Max, Complex128, true, "atomics: MPI_MAX is not defined on MPI_C_DOUBLE_COMPLEX"},
		{MinLoc, Int32, false, "atomics: MPI_MINLOC is not defined on MPI_INT32_T"},
		{Sum, TwoIntT, false, "atomics: MPI_SUM is not defined on MPI_2INT"},
		{Lxor, Float32, false, "atomics: MPI_LXOR is not defined on MPI_FLOAT"},
		{NoOp, Int64, false, "atomics: MPI_NO_OP is only defined in fetching calls (MPI_Get_accumulate, MPI_Fetch_and_op), not in MPI_Accumulate on MPI_INT64_T"},
		{Op(0), Int64, true, "atomics: Op(0) is not defined on MPI_INT64_T"},
	} {
		if err := Check(c.op, c.t, c.fetching); err == nil || err.Error() != c.msg {
			t.Errorf("Check(%v, %v, %v) = %v, want %q", c.op, c.t, c.fetching, err, c.msg)
		}
	}
	// The kernels refuse before touching memory.
	mem := newSegment(t, 16)
	if err := Accumulate(mem, 0, []float64{1}, Band, nil); !errors.Is(err, ErrOp) || err.Error() != "atomics: MPI_BAND is not defined on MPI_DOUBLE" {
		t.Errorf("Accumulate(float64, MPI_BAND) = %v", err)
	}
	if _, err := FetchAndOp(mem, 0, complex64(1), Min, nil); !errors.Is(err, ErrOp) {
		t.Errorf("FetchAndOp(complex64, MPI_MIN) = %v", err)
	}
	if err := GetAccumulate(mem, 0, []TwoInt{{}}, make([]TwoInt, 1), Bor, nil); !errors.Is(err, ErrOp) {
		t.Errorf("GetAccumulate(2INT, MPI_BOR) = %v", err)
	}
	if err := Accumulate(mem, 0, []uint8{1}, NoOp, nil); !errors.Is(err, ErrOp) {
		t.Errorf("Accumulate(NoOp) = %v", err)
	}
	if mem[0] != guardByte {
		t.Error("a refused call changed the segment")
	}
}

func TestArgumentErrors(t *testing.T) {
	mem := newSegment(t, 32)
	st := newStripes(t, 1, nil, barrier.DefaultPolicy)
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"past the end", Accumulate(mem, 32, []int8{1}, Sum, st), ErrRange},
		{"straddles the end", Accumulate(mem, 24, []int64{1, 2}, Sum, st), ErrRange},
		{"negative offset", Accumulate(mem, -8, []int64{1}, Sum, st), ErrRange},
		{"huge offset", Accumulate(mem, math.MaxInt64-2, []int64{1}, Sum, st), ErrRange},
		{"fetch past the end", func() error { _, err := FetchAndOp(mem, 28, int64(1), Sum, st); return err }(), ErrRange},
		{"fetch negative", func() error { _, err := FetchAndOp(mem, -1, int32(1), Sum, st); return err }(), ErrRange},
		{"cas past the end", func() error { _, err := CompareAndSwap(mem, 31, uint16(1), 0, st); return err }(), ErrRange},
		{"long complex past the end", func() error { _, err := FetchAndOp(mem, 24, complex128(1), Sum, st); return err }(), ErrRange},
		{"lengths differ", GetAccumulate(mem, 0, []int32{1, 2}, make([]int32, 3), Sum, st), ErrArg},
		{"unaligned segment", Accumulate(mem[1:25], 0, []int8{1}, Sum, st), ErrArg},
		{"odd-length segment", Accumulate(mem[:31], 0, []int8{1}, Sum, st), ErrArg},
		{"stripe needed, none given", Accumulate(mem, 0, []complex128{1}, Sum, nil), ErrArg},
		{"unaligned, no stripes", func() error { _, err := FetchAndOp(mem, 1, int32(1), Sum, nil); return err }(), ErrArg},
		{"unaligned CAS, no stripes", func() error { _, err := CompareAndSwap(mem, 2, int32(1), 0, nil); return err }(), ErrArg},
	}
	for _, c := range cases {
		if !errors.Is(c.err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, c.err, c.want)
		}
	}
	for i, b := range mem {
		if b != guardByte {
			t.Fatalf("a refused call changed byte %d", i)
		}
	}
	// Empty calls succeed and touch nothing, wherever they point.
	if err := Accumulate(mem, 1000, []int64{}, Sum, nil); err != nil {
		t.Error(err)
	}
	if err := GetAccumulate[int64](mem, 1000, nil, nil, NoOp, nil); err != nil {
		t.Error(err)
	}
}

// Named types map to their underlying datatype and take the same paths.
type counter int64
type flags uint8

func TestNamedTypes(t *testing.T) {
	if TypeOf[counter]() != Int64 || TypeOf[flags]() != Uint8 {
		t.Fatalf("TypeOf: %v %v", TypeOf[counter](), TypeOf[flags]())
	}
	mem := newSegment(t, 16)
	putElems(mem, 0, []counter{40})
	if old, err := FetchAndOp(mem, 0, counter(2), Sum, nil); err != nil || old != 40 || getElem[counter](mem, 0) != 42 {
		t.Errorf("FetchAndOp(counter) = %v, %v; now %v", old, err, getElem[counter](mem, 0))
	}
	putElems(mem, 9, []flags{0x0f})
	if old, err := CompareAndSwap(mem, 9, flags(0xf0), 0x0f, nil); err != nil || old != 0x0f || getElem[flags](mem, 9) != 0xf0 {
		t.Errorf("CompareAndSwap(flags) = %v, %v", old, err)
	}
	if mem[8] != guardByte || mem[10] != guardByte {
		t.Error("neighbours changed")
	}
}
