package atomics

import (
	"fmt"
	"math"

	"github.com/shmrun/shmrun/internal/raw"
)

// ReduceLocal is MPI_Reduce_local: inout[i] = in[i] op inout[i] for every
// i, with the same result, bit for bit, as an accumulate of in[i] into a
// target element holding inout[i] (inout is the target: for MinLoc and
// MaxLoc against a NaN value, it is kept). Local, plain loads and stores:
// for private memory or memory other processes do not touch meanwhile (the
// collectives call it on data a round of their protocol handed over). It
// never allocates. Replace and NoOp are RMA operations, not reductions, and
// are refused with ErrOp like an op the type does not define; in and inout
// of different lengths are ErrArg.
func ReduceLocal[T Elem](in, inout []T, op Op) error {
	t := TypeOf[T]()
	if op == Replace || op == NoOp {
		return fmt.Errorf("atomics: ReduceLocal: %v is an RMA operation, not a reduction: %w", op, ErrOp)
	}
	if err := Check(op, t, false); err != nil {
		return err
	}
	if len(in) != len(inout) {
		return fmt.Errorf("atomics: ReduceLocal: %d input elements for %d in inout: %w", len(in), len(inout), ErrArg)
	}
	if len(in) == 0 {
		return nil
	}
	a, b := raw.Bytes(in), raw.Bytes(inout)
	switch t {
	case Int8:
		reduceInt(raw.Elems[int8](a), raw.Elems[int8](b), op)
	case Int16:
		reduceInt(raw.Elems[int16](a), raw.Elems[int16](b), op)
	case Int32:
		reduceInt(raw.Elems[int32](a), raw.Elems[int32](b), op)
	case Int64:
		reduceInt(raw.Elems[int64](a), raw.Elems[int64](b), op)
	case Uint8:
		reduceInt(raw.Elems[uint8](a), raw.Elems[uint8](b), op)
	case Uint16:
		reduceInt(raw.Elems[uint16](a), raw.Elems[uint16](b), op)
	case Uint32:
		reduceInt(raw.Elems[uint32](a), raw.Elems[uint32](b), op)
	case Uint64:
		reduceInt(raw.Elems[uint64](a), raw.Elems[uint64](b), op)
	case Float32:
		reduceFloat(raw.Elems[float32](a), raw.Elems[float32](b), op)
	case Float64:
		reduceFloat(raw.Elems[float64](a), raw.Elems[float64](b), op)
	case Complex64:
		reduceComplex(raw.Elems[complex64](a), raw.Elems[complex64](b), op)
	case Complex128:
		reduceComplex(raw.Elems[complex128](a), raw.Elems[complex128](b), op)
	default: // the pair types: MinLoc and MaxLoc, element by element
		size := t.Size()
		for i := 0; i+size <= len(a); i += size {
			combineInPlace(t, op, b[i:i+size], a[i:i+size])
		}
	}
	return nil
}

type intElem interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// reduceInt has one loop per op so each compiles to a tight loop per
// element size (Go stencils one copy per shape).
func reduceInt[E intElem](in, inout []E, op Op) {
	inout = inout[:len(in)]
	switch op {
	case Sum:
		for i, v := range in {
			inout[i] += v
		}
	case Prod:
		for i, v := range in {
			inout[i] *= v
		}
	case Max:
		for i, v := range in {
			inout[i] = max(inout[i], v)
		}
	case Min:
		for i, v := range in {
			inout[i] = min(inout[i], v)
		}
	case Band:
		for i, v := range in {
			inout[i] &= v
		}
	case Bor:
		for i, v := range in {
			inout[i] |= v
		}
	case Bxor:
		for i, v := range in {
			inout[i] ^= v
		}
	case Land:
		for i, v := range in {
			inout[i] = E(b2i(inout[i] != 0 && v != 0))
		}
	case Lor:
		for i, v := range in {
			inout[i] = E(b2i(inout[i] != 0 || v != 0))
		}
	case Lxor:
		for i, v := range in {
			inout[i] = E(b2i((inout[i] != 0) != (v != 0)))
		}
	}
}

func b2i(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// reduceFloat: Max and Min are math.Max and math.Min, as the accumulate
// kernels compute them (NaN wins, +0 > -0); float32 through float64, which
// is exact for both.
func reduceFloat[E ~float32 | ~float64](in, inout []E, op Op) {
	inout = inout[:len(in)]
	switch op {
	case Sum:
		for i, v := range in {
			inout[i] += v
		}
	case Prod:
		for i, v := range in {
			inout[i] *= v
		}
	case Max:
		for i, v := range in {
			inout[i] = E(math.Max(float64(inout[i]), float64(v)))
		}
	case Min:
		for i, v := range in {
			inout[i] = E(math.Min(float64(inout[i]), float64(v)))
		}
	}
}

func reduceComplex[E ~complex64 | ~complex128](in, inout []E, op Op) {
	inout = inout[:len(in)]
	if op == Sum {
		for i, v := range in {
			inout[i] += v
		}
		return
	}
	for i, v := range in {
		inout[i] *= v
	}
}

// CombineLocal applies an accumulate of src to cur with plain loads and
// stores: cur[i] becomes what an Accumulate of src[i] with op would leave
// in a target element holding cur[i], bit for bit, Replace and NoOp
// included; the padding of the pair types is never written. It is for
// private memory under a lock (the accumulates of a window over memory
// other processes cannot map). An op not defined on T is ErrOp (NoOp and
// Replace are defined on every type), lengths that differ are ErrArg.
func CombineLocal[T Elem](src, cur []T, op Op) error {
	t := TypeOf[T]()
	if err := Check(op, t, true); err != nil {
		return err
	}
	if op != NoOp && len(src) != len(cur) {
		return fmt.Errorf("atomics: CombineLocal: %d source elements for %d: %w", len(src), len(cur), ErrArg)
	}
	switch {
	case op == NoOp:
	case op == Replace && t.class() != classPair:
		copy(cur, src)
	case op == Replace:
		a, b := raw.Bytes(src), raw.Bytes(cur)
		size := t.Size()
		for i := 0; i+size <= len(a); i += size {
			combineInPlace(t, op, b[i:i+size], a[i:i+size])
		}
	default:
		return ReduceLocal(src, cur, op)
	}
	return nil
}
