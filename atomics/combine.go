package atomics

import (
	"encoding/binary"
	"math"
)

// Element values travel as bit patterns: the element's bytes read as a
// little-endian integer (scalars in a uint64, 16-byte elements as bytes).

// sizeMask returns the mask of an element of size bytes (1, 2, 4 or 8).
func sizeMask(size int) uint64 { return ^uint64(0) >> (64 - 8*uint(size)) }

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// combine returns old op v for a scalar type t (an integer or a float), on
// bit patterns. Bits above the element are ignored in the inputs and zero in
// the result. op has passed Check for t; MinLoc and MaxLoc never come here.
func combine(t Type, op Op, old, v uint64) uint64 {
	ti := &types[t]
	m := sizeMask(int(ti.size))
	old, v = old&m, v&m
	if ti.class == classFloat {
		return combineFloat(t, op, old, v)
	}
	var r uint64
	switch op {
	case Sum:
		r = old + v // wraps, for signed and unsigned alike
	case Prod:
		r = old * v // the low bits of a product do not depend on signedness
	case Max, Min:
		less := old < v
		if ti.signed {
			s := 64 - 8*uint(ti.size)
			less = int64(old<<s)>>s < int64(v<<s)>>s
		}
		if (op == Max) == less {
			r = v
		} else {
			r = old
		}
	case Band:
		r = old & v
	case Bor:
		r = old | v
	case Bxor:
		r = old ^ v
	case Land:
		r = b2u(old != 0 && v != 0)
	case Lor:
		r = b2u(old != 0 || v != 0)
	case Lxor:
		r = b2u((old != 0) != (v != 0))
	case Replace:
		r = v
	default: // NoOp
		r = old
	}
	return r & m
}

// combineFloat is combine for Float32 and Float64: IEEE arithmetic in the
// element's precision; Max and Min are math.Max and math.Min (NaN wins over
// everything but an infinity of the winning sign, +0 > -0).
func combineFloat(t Type, op Op, old, v uint64) uint64 {
	switch op {
	case Replace:
		return v
	case NoOp:
		return old
	}
	if t == Float32 {
		a, b := math.Float32frombits(uint32(old)), math.Float32frombits(uint32(v))
		var r float32
		switch op {
		case Sum:
			r = a + b
		case Prod:
			r = a * b
		case Max:
			r = float32(math.Max(float64(a), float64(b)))
		default: // Min
			r = float32(math.Min(float64(a), float64(b)))
		}
		return uint64(math.Float32bits(r))
	}
	a, b := math.Float64frombits(old), math.Float64frombits(v)
	var r float64
	switch op {
	case Sum:
		r = a + b
	case Prod:
		r = a * b
	case Max:
		r = math.Max(a, b)
	default: // Min
		r = math.Min(a, b)
	}
	return math.Float64bits(r)
}

// combineInPlace applies op to the element e (target bytes, updated in place)
// with origin bytes v, for any type. It writes only the bytes that change
// meaning: for the pair types the value and index fields, never the padding.
// The caller holds e's stripe.
func combineInPlace(t Type, op Op, e, v []byte) {
	if op == NoOp {
		return
	}
	switch t.class() {
	case classInt, classFloat:
		size := len(e)
		old := loadLE(e, size)
		if r := combine(t, op, old, loadLE(v, size)); r != old {
			storeLE(e, size, r)
		}
	case classComplex:
		if op == Replace {
			copy(e, v)
			return
		}
		if t == Complex64 {
			a := complex(f32(e[0:]), f32(e[4:]))
			b := complex(f32(v[0:]), f32(v[4:]))
			if op == Sum {
				a += b
			} else {
				a *= b
			}
			binary.LittleEndian.PutUint32(e[0:], math.Float32bits(real(a)))
			binary.LittleEndian.PutUint32(e[4:], math.Float32bits(imag(a)))
			return
		}
		a := complex(f64(e[0:]), f64(e[8:]))
		b := complex(f64(v[0:]), f64(v[8:]))
		if op == Sum {
			a += b
		} else {
			a *= b
		}
		binary.LittleEndian.PutUint64(e[0:], math.Float64bits(real(a)))
		binary.LittleEndian.PutUint64(e[8:], math.Float64bits(imag(a)))
	case classPair:
		vo, vs, io := pairLayout(t)
		if op != Replace {
			c := pairCompare(t, v[vo:], e[vo:]) // origin vs target
			if c == 0 {
				// Equal values: the lower index wins, the target keeps its value.
				if ot, oo := i32(e[io:]), i32(v[io:]); oo < ot {
					copy(e[io:io+4], v[io:io+4])
				}
				return
			}
			if (op == MinLoc) != (c < 0) || c == cmpUnordered {
				return // the target is better (or a NaN is involved): keep it
			}
		}
		copy(e[vo:vo+vs], v[vo:vo+vs])
		copy(e[io:io+4], v[io:io+4])
	}
}

// pairLayout returns the value's offset and size and the index's offset in a
// pair type (the C struct layout).
func pairLayout(t Type) (vo, vs, io int) {
	switch t {
	case FloatIntT, TwoIntT:
		return 0, 4, 4
	case ShortIntT:
		return 0, 2, 4
	default: // DoubleIntT, LongIntT
		return 0, 8, 8
	}
}

const cmpUnordered = 2

// pairCompare compares the value fields of two pair elements: -1 if a < b, 0
// if equal, +1 if a > b, cmpUnordered if either is a NaN.
func pairCompare(t Type, a, b []byte) int {
	switch t {
	case FloatIntT, DoubleIntT:
		var x, y float64
		if t == FloatIntT {
			x, y = float64(f32(a)), float64(f32(b))
		} else {
			x, y = f64(a), f64(b)
		}
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		case x == y:
			return 0
		}
		return cmpUnordered
	}
	var x, y int64
	switch t {
	case ShortIntT:
		x, y = int64(int16(binary.LittleEndian.Uint16(a))), int64(int16(binary.LittleEndian.Uint16(b)))
	case TwoIntT:
		x, y = int64(i32(a)), int64(i32(b))
	default: // LongIntT
		x, y = int64(binary.LittleEndian.Uint64(a)), int64(binary.LittleEndian.Uint64(b))
	}
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func f32(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }
func f64(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) }
func i32(b []byte) int32   { return int32(binary.LittleEndian.Uint32(b)) }

// loadLE reads a size-byte little-endian scalar from b.
func loadLE(b []byte, size int) uint64 {
	switch size {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return binary.LittleEndian.Uint64(b)
}

// storeLE writes the low size bytes of x to b, little-endian.
func storeLE(b []byte, size int, x uint64) {
	switch size {
	case 1:
		b[0] = byte(x)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(x))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(x))
	default:
		binary.LittleEndian.PutUint64(b, x)
	}
}
