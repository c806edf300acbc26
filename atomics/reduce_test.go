package atomics

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/shmrun/shmrun/internal/raw"
)

// ReduceLocal must compute what an accumulate of in into a target holding
// inout computes, bit for bit: the reference is the byte-level combine the
// stripe path uses (combineInPlace), element by element.
func TestReduceLocalEveryOpEveryType(t *testing.T) {
	t.Run("int8", func(t *testing.T) { testReduceLocal(t, valsInt8) })
	t.Run("int16", func(t *testing.T) { testReduceLocal(t, valsInt16) })
	t.Run("int32", func(t *testing.T) { testReduceLocal(t, valsInt32) })
	t.Run("int64", func(t *testing.T) { testReduceLocal(t, valsInt64) })
	t.Run("uint8", func(t *testing.T) { testReduceLocal(t, valsUint8) })
	t.Run("uint16", func(t *testing.T) { testReduceLocal(t, valsUint16) })
	t.Run("uint32", func(t *testing.T) { testReduceLocal(t, valsUint32) })
	t.Run("uint64", func(t *testing.T) { testReduceLocal(t, valsUint64) })
	t.Run("float32", func(t *testing.T) { testReduceLocal(t, valsFloat32) })
	t.Run("float64", func(t *testing.T) { testReduceLocal(t, valsFloat64) })
	t.Run("complex64", func(t *testing.T) { testReduceLocal(t, valsCplx64) })
	t.Run("complex128", func(t *testing.T) { testReduceLocal(t, valsCplx128) })
	t.Run("FloatInt", func(t *testing.T) { testReduceLocal(t, valsFI) })
	t.Run("DoubleInt", func(t *testing.T) { testReduceLocal(t, valsDI) })
	t.Run("LongInt", func(t *testing.T) { testReduceLocal(t, valsLI) })
	t.Run("TwoInt", func(t *testing.T) { testReduceLocal(t, valsTI) })
	t.Run("ShortInt", func(t *testing.T) { testReduceLocal(t, valsSI) })
	// Named types take the path of their underlying type.
	type meters float64
	t.Run("named float64", func(t *testing.T) {
		testReduceLocal(t, []meters{0, meters(negZero64), 1, -1.5, meters(math.Inf(1)), meters(math.NaN())})
	})
	t.Run("named int32", func(t *testing.T) { testReduceLocal(t, []counter32{0, 1, -1, math.MaxInt32, math.MinInt32}) })
}

type counter32 int32

func testReduceLocal[T Elem](t *testing.T, vals []T) {
	typ := TypeOf[T]()
	size := typ.Size()
	var in, inout []T
	for _, a := range vals {
		for _, b := range vals {
			in, inout = append(in, a), append(inout, b)
		}
	}
	for _, op := range allOps {
		got := append([]T(nil), inout...)
		err := ReduceLocal(in, got, op)
		if op == Replace || op == NoOp || Check(op, typ, false) != nil {
			if !errors.Is(err, ErrOp) {
				t.Errorf("%v on %v: %v, want ErrOp", op, typ, err)
			}
			if !bytes.Equal(raw.Bytes(got), raw.Bytes(inout)) {
				t.Errorf("%v on %v: a refused op changed inout", op, typ)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v on %v: %v", op, typ, err)
		}
		want := append([]T(nil), inout...)
		wb, ib := raw.Bytes(want), raw.Bytes(in)
		for i := 0; i < len(wb); i += size {
			combineInPlace(typ, op, wb[i:i+size], ib[i:i+size])
		}
		gb := raw.Bytes(got)
		for i := range got {
			if !sameElem(typ, gb[i*size:(i+1)*size], wb[i*size:(i+1)*size]) {
				t.Errorf("%v on %v: in %v, inout %v: got %v, want %v", op, typ, in[i], inout[i], got[i], want[i])
			}
		}
	}
}

// sameElem compares two elements' meaningful bytes (a pair type's padding
// is not part of its value; which NaN an operation on NaNs gives depends on
// the order the compiler feeds the operands, so any NaN equals any NaN).
func sameElem(t Type, a, b []byte) bool {
	switch t {
	case Float32, Complex64:
		for i := 0; i < len(a); i += 4 {
			x, y := f32(a[i:]), f32(b[i:])
			if !(x != x && y != y) && math.Float32bits(x) != math.Float32bits(y) {
				return false
			}
		}
		return true
	case Float64, Complex128:
		for i := 0; i < len(a); i += 8 {
			x, y := f64(a[i:]), f64(b[i:])
			if !(x != x && y != y) && math.Float64bits(x) != math.Float64bits(y) {
				return false
			}
		}
		return true
	}
	if t.class() == classPair {
		vo, vs, io := pairLayout(t)
		return bytes.Equal(a[vo:vo+vs], b[vo:vo+vs]) && bytes.Equal(a[io:io+4], b[io:io+4])
	}
	return bytes.Equal(a, b)
}

func TestReduceLocalArguments(t *testing.T) {
	if err := ReduceLocal([]int64{1, 2}, []int64{1}, Sum); !errors.Is(err, ErrArg) {
		t.Errorf("different lengths: %v, want ErrArg", err)
	}
	if err := ReduceLocal([]float64(nil), nil, Sum); err != nil {
		t.Errorf("empty: %v", err)
	}
	if err := ReduceLocal([]float64{1}, []float64{2}, Band); !errors.Is(err, ErrOp) {
		t.Errorf("Band on float64: %v, want ErrOp", err)
	}
}

// FuzzReduceLocal: on any bytes, any type and any op, ReduceLocal agrees
// with the byte-level combine and refuses exactly the combinations Check
// refuses (plus Replace and NoOp).
func FuzzReduceLocal(f *testing.F) {
	f.Add(uint8(3), uint8(Sum), []byte{1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0})
	f.Add(uint8(9), uint8(Max), []byte{0, 0, 0xf8, 0x7f, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x80})
	f.Add(uint8(13), uint8(MinLoc), []byte("pairs of double and int, sixteen bytes each......"))
	f.Add(uint8(0), uint8(Lxor), []byte{0, 1, 2, 0xff, 0x80, 0})
	f.Fuzz(func(t *testing.T, typeSel, op uint8, data []byte) {
		reduceFuzzers[int(typeSel)%len(reduceFuzzers)](t, Op(op%uint8(opEnd+1)), data)
	})
}

var reduceFuzzers = []func(t *testing.T, op Op, data []byte){
	fuzzReduce[int8], fuzzReduce[int16], fuzzReduce[int32], fuzzReduce[int64],
	fuzzReduce[uint8], fuzzReduce[uint16], fuzzReduce[uint32], fuzzReduce[uint64],
	fuzzReduce[float32], fuzzReduce[float64], fuzzReduce[complex64], fuzzReduce[complex128],
	fuzzReduce[FloatInt], fuzzReduce[DoubleInt], fuzzReduce[LongInt], fuzzReduce[TwoInt], fuzzReduce[ShortInt],
}

func fuzzReduce[T Elem](t *testing.T, op Op, data []byte) {
	typ := TypeOf[T]()
	inout, in := decode[T](data)
	got := append([]T(nil), inout...)
	err := ReduceLocal(in, got, op)
	if op == Replace || op == NoOp || Check(op, typ, false) != nil {
		if !errors.Is(err, ErrOp) {
			t.Fatalf("%v on %v: %v, want ErrOp", op, typ, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("%v on %v: %v", op, typ, err)
	}
	size := typ.Size()
	want := append([]T(nil), inout...)
	wb, ib, gb := raw.Bytes(want), raw.Bytes(in), raw.Bytes(got)
	for i := 0; i < len(wb); i += size {
		combineInPlace(typ, op, wb[i:i+size], ib[i:i+size])
		if !sameElem(typ, gb[i:i+size], wb[i:i+size]) {
			t.Fatalf("%v on %v, element %d: got %x, want %x", op, typ, i/size, gb[i:i+size], wb[i:i+size])
		}
	}
}

func BenchmarkReduceLocal(b *testing.B) {
	for _, n := range []int{1, 8, 1024, 131072} {
		b.Run(fmt.Sprintf("SumFloat64x%d", n), func(b *testing.B) {
			in, inout := make([]float64, n), make([]float64, n)
			b.SetBytes(int64(8 * n))
			for b.Loop() {
				ReduceLocal(in, inout, Sum)
			}
		})
		b.Run(fmt.Sprintf("SumInt64x%d", n), func(b *testing.B) {
			in, inout := make([]int64, n), make([]int64, n)
			b.SetBytes(int64(8 * n))
			for b.Loop() {
				ReduceLocal(in, inout, Sum)
			}
		})
	}
}

// FuzzCombineLocal: CombineLocal leaves exactly the bytes an accumulate
// leaves in a target (combineInPlace, the kernels' element step), padding
// included, for every op and type, Replace and NoOp too.
func FuzzCombineLocal(f *testing.F) {
	f.Add(uint8(13), uint8(Replace), []byte("pairs of double and int, sixteen bytes each......"))
	f.Add(uint8(9), uint8(NoOp), []byte{0, 0, 0xf8, 0x7f, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x80})
	f.Add(uint8(3), uint8(Sum), []byte{1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, typeSel, op uint8, data []byte) {
		combineFuzzers[int(typeSel)%len(combineFuzzers)](t, Op(op%uint8(opEnd+1)), data)
	})
}

var combineFuzzers = []func(t *testing.T, op Op, data []byte){
	fuzzCombine[int8], fuzzCombine[int16], fuzzCombine[int32], fuzzCombine[int64],
	fuzzCombine[uint8], fuzzCombine[uint16], fuzzCombine[uint32], fuzzCombine[uint64],
	fuzzCombine[float32], fuzzCombine[float64], fuzzCombine[complex64], fuzzCombine[complex128],
	fuzzCombine[FloatInt], fuzzCombine[DoubleInt], fuzzCombine[LongInt], fuzzCombine[TwoInt], fuzzCombine[ShortInt],
}

func fuzzCombine[T Elem](t *testing.T, op Op, data []byte) {
	typ := TypeOf[T]()
	cur, src := decode[T](data)
	got := append([]T(nil), cur...)
	err := CombineLocal(src, got, op)
	if Check(op, typ, true) != nil {
		if !errors.Is(err, ErrOp) {
			t.Fatalf("%v on %v: %v, want ErrOp", op, typ, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("%v on %v: %v", op, typ, err)
	}
	size := typ.Size()
	want := append([]T(nil), cur...)
	wb, sb, gb := raw.Bytes(want), raw.Bytes(src), raw.Bytes(got)
	for i := 0; i < len(wb); i += size {
		combineInPlace(typ, op, wb[i:i+size], sb[i:i+size])
		if op == Replace || op == NoOp || typ.class() == classPair {
			if !bytes.Equal(gb[i:i+size], wb[i:i+size]) {
				t.Fatalf("%v on %v, element %d: got %x, want %x", op, typ, i/size, gb[i:i+size], wb[i:i+size])
			}
		} else if !sameElem(typ, gb[i:i+size], wb[i:i+size]) {
			t.Fatalf("%v on %v, element %d: got %x, want %x", op, typ, i/size, gb[i:i+size], wb[i:i+size])
		}
	}
}
