package atomics

// The sequential reference the kernels are tested against, written from the
// standard's definitions with Go's own arithmetic on the concrete types
// (nothing shared with the kernels but the documented math.Max/math.Min rule),
// and the test helpers.

import (
	"bytes"
	"math"
	"testing"

	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/internal/raw"
)

type integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

func boolTo[I integer](b bool) I {
	if b {
		return 1
	}
	return 0
}

func refInt[I integer](op Op, a, b I) I {
	switch op {
	case Sum:
		return a + b
	case Prod:
		return a * b
	case Max:
		return max(a, b)
	case Min:
		return min(a, b)
	case Band:
		return a & b
	case Bor:
		return a | b
	case Bxor:
		return a ^ b
	case Land:
		return boolTo[I](a != 0 && b != 0)
	case Lor:
		return boolTo[I](a != 0 || b != 0)
	case Lxor:
		return boolTo[I]((a != 0) != (b != 0))
	case Replace:
		return b
	}
	return a
}

func refFloat[F ~float32 | ~float64](op Op, a, b F) F {
	switch op {
	case Sum:
		return a + b
	case Prod:
		return a * b
	case Max:
		return F(math.Max(float64(a), float64(b)))
	case Min:
		return F(math.Min(float64(a), float64(b)))
	case Replace:
		return b
	}
	return a
}

func refComplex[C ~complex64 | ~complex128](op Op, a, b C) C {
	switch op {
	case Sum:
		return a + b
	case Prod:
		return a * b
	case Replace:
		return b
	}
	return a
}

// refLoc is MINLOC/MAXLOC (MPI 3.1 §5.9.4) on a target a and an origin b:
// lt is a.V < b.V, eq a.V == b.V, gt a.V > b.V (all false when a NaN is
// involved: the target stays). On a tie the lower index wins.
func refLoc[P any](op Op, a, b P, lt, eq, gt bool, idx func(*P) *int32) P {
	switch op {
	case Replace:
		return b
	case NoOp:
		return a
	}
	if eq {
		if *idx(&b) < *idx(&a) {
			*idx(&a) = *idx(&b)
		}
		return a
	}
	if (op == MaxLoc && lt) || (op == MinLoc && gt) {
		return b
	}
	return a
}

// ref returns target op origin.
func ref[T Elem](op Op, a, b T) T {
	var r any
	switch x := any(a).(type) {
	case int8:
		r = refInt(op, x, any(b).(int8))
	case int16:
		r = refInt(op, x, any(b).(int16))
	case int32:
		r = refInt(op, x, any(b).(int32))
	case int64:
		r = refInt(op, x, any(b).(int64))
	case uint8:
		r = refInt(op, x, any(b).(uint8))
	case uint16:
		r = refInt(op, x, any(b).(uint16))
	case uint32:
		r = refInt(op, x, any(b).(uint32))
	case uint64:
		r = refInt(op, x, any(b).(uint64))
	case float32:
		r = refFloat(op, x, any(b).(float32))
	case float64:
		r = refFloat(op, x, any(b).(float64))
	case complex64:
		r = refComplex(op, x, any(b).(complex64))
	case complex128:
		r = refComplex(op, x, any(b).(complex128))
	case FloatInt:
		y := any(b).(FloatInt)
		r = refLoc(op, x, y, x.V < y.V, x.V == y.V, x.V > y.V, func(p *FloatInt) *int32 { return &p.I })
	case DoubleInt:
		y := any(b).(DoubleInt)
		r = refLoc(op, x, y, x.V < y.V, x.V == y.V, x.V > y.V, func(p *DoubleInt) *int32 { return &p.I })
	case LongInt:
		y := any(b).(LongInt)
		r = refLoc(op, x, y, x.V < y.V, x.V == y.V, x.V > y.V, func(p *LongInt) *int32 { return &p.I })
	case TwoInt:
		y := any(b).(TwoInt)
		r = refLoc(op, x, y, x.V < y.V, x.V == y.V, x.V > y.V, func(p *TwoInt) *int32 { return &p.I })
	case ShortInt:
		y := any(b).(ShortInt)
		r = refLoc(op, x, y, x.V < y.V, x.V == y.V, x.V > y.V, func(p *ShortInt) *int32 { return &p.I })
	default:
		panic("ref: unknown type")
	}
	return r.(T)
}

// refAllowed is the op/type table of MPI 3.1 §5.9.2 and §11.3.4, written
// out independently of Check.
func refAllowed(op Op, t Type, fetching bool) bool {
	kind := map[Type]string{
		Int8: "int", Int16: "int", Int32: "int", Int64: "int",
		Uint8: "int", Uint16: "int", Uint32: "int", Uint64: "int",
		Float32: "float", Float64: "float", Complex64: "complex", Complex128: "complex",
		FloatIntT: "pair", DoubleIntT: "pair", LongIntT: "pair", TwoIntT: "pair", ShortIntT: "pair",
	}[t]
	switch {
	case kind == "" || op < Sum || op > MaxLoc:
		return false
	case op == NoOp:
		return fetching
	case op == Replace:
		return true
	case op == MinLoc || op == MaxLoc:
		return kind == "pair"
	case kind == "int":
		return true
	case kind == "float":
		return op == Sum || op == Prod || op == Max || op == Min
	case kind == "complex":
		return op == Sum || op == Prod
	}
	return false
}

func sameF32(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

func sameF64(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (a != a && b != b)
}

// same compares elements exactly: floats by bits (so -0 ≠ +0), any NaN
// equal to any NaN, pair types by their fields (never their padding).
func same[T Elem](a, b T) bool {
	switch x := any(a).(type) {
	case float32:
		return sameF32(x, any(b).(float32))
	case float64:
		return sameF64(x, any(b).(float64))
	case complex64:
		y := any(b).(complex64)
		return sameF32(real(x), real(y)) && sameF32(imag(x), imag(y))
	case complex128:
		y := any(b).(complex128)
		return sameF64(real(x), real(y)) && sameF64(imag(x), imag(y))
	case FloatInt:
		y := any(b).(FloatInt)
		return sameF32(x.V, y.V) && x.I == y.I
	case DoubleInt:
		y := any(b).(DoubleInt)
		return sameF64(x.V, y.V) && x.I == y.I
	}
	return any(a) == any(b)
}

// padding returns the padding bytes of one element of t (offsets in it).
func padding(t Type) []int {
	switch t {
	case DoubleIntT, LongIntT:
		return []int{12, 13, 14, 15}
	case ShortIntT:
		return []int{2, 3}
	}
	return nil
}

const guardByte = 0xA5

// newSegment returns an n-byte heap "segment" (n a multiple of 8), 8-byte
// aligned like a mapping, every byte set to guardByte.
func newSegment(tb testing.TB, n int) []byte {
	tb.Helper()
	if n%8 != 0 {
		tb.Fatalf("newSegment(%d): not a multiple of 8", n)
	}
	mem := raw.Bytes(make([]uint64, n/8))
	for i := range mem {
		mem[i] = guardByte
	}
	return mem
}

// newStripes returns n stripes over a zeroed heap region.
func newStripes(tb testing.TB, n int, abort *uint32, p barrier.Policy) *Stripes {
	tb.Helper()
	st, err := NewStripes(raw.Bytes(make([]uint64, n*StripeLen/8)), abort, p)
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

// putElems writes s at mem[off:] with plain stores and fills the padding of
// pair types with 0xEE, so that tests see whether a kernel touches it.
func putElems[T Elem](mem []byte, off int64, s []T) {
	copy(mem[off:], raw.Bytes(s))
	size := TypeOf[T]().Size()
	for i := range s {
		for _, p := range padding(TypeOf[T]()) {
			mem[off+int64(i*size+p)] = 0xEE
		}
	}
}

func getElem[T Elem](mem []byte, off int64) T {
	s := make([]T, 1)
	copy(raw.Bytes(s), mem[off:])
	return s[0]
}

// checkUntouched fails unless mem equals before everywhere except the value
// bytes of the n elements of type t at off (padding bytes must be equal too).
func checkUntouched(tb testing.TB, before, mem []byte, off int64, n int, t Type) {
	tb.Helper()
	end := off + int64(n*t.Size())
	if !bytes.Equal(before[:off], mem[:off]) || !bytes.Equal(before[end:], mem[end:]) {
		tb.Fatalf("bytes outside the target range [%d, %d) changed:\nbefore %x\nafter  %x", off, end, before, mem)
	}
	for i := range n {
		for _, p := range padding(t) {
			if at := off + int64(i*t.Size()+p); before[at] != mem[at] {
				tb.Fatalf("padding byte %d of element %d (%v) changed from %#x to %#x", p, i, t, before[at], mem[at])
			}
		}
	}
}
