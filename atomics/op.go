package atomics

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/shmrun/shmrun/internal/raw"
)

// Op is a predefined MPI reduction operation as used by MPI_Accumulate,
// MPI_Get_accumulate and MPI_Fetch_and_op. The zero Op is invalid, so a
// forgotten op is an error rather than a silent MPI_SUM.
type Op uint8

// The predefined operations of MPI 3.1 §5.9.2 plus the two RMA-only ones of
// §11.3.4. All are commutative; for every op the target element is the left
// operand: target = target op origin.
const (
	Sum     Op = iota + 1 // MPI_SUM: addition; integers wrap on overflow
	Prod                  // MPI_PROD: multiplication; integers wrap on overflow
	Max                   // MPI_MAX: maximum; floats as math.Max (NaN wins, +0 > -0)
	Min                   // MPI_MIN: minimum; floats as math.Min (NaN wins, -0 < +0)
	Band                  // MPI_BAND: bitwise and
	Bor                   // MPI_BOR: bitwise or
	Bxor                  // MPI_BXOR: bitwise exclusive or
	Land                  // MPI_LAND: logical and; nonzero is true, the result is 1 or 0
	Lor                   // MPI_LOR: logical or; the result is 1 or 0
	Lxor                  // MPI_LXOR: logical exclusive or; the result is 1 or 0
	Replace               // MPI_REPLACE: the origin value replaces the target (an atomic put)
	NoOp                  // MPI_NO_OP: the target is left alone (an atomic get); fetching calls only
	MinLoc                // MPI_MINLOC: on pair types, the smaller value and its index; ties keep the lower index
	MaxLoc                // MPI_MAXLOC: on pair types, the larger value and its index; ties keep the lower index
	opEnd
)

var opNames = [opEnd]string{
	Sum: "MPI_SUM", Prod: "MPI_PROD", Max: "MPI_MAX", Min: "MPI_MIN",
	Band: "MPI_BAND", Bor: "MPI_BOR", Bxor: "MPI_BXOR",
	Land: "MPI_LAND", Lor: "MPI_LOR", Lxor: "MPI_LXOR",
	Replace: "MPI_REPLACE", NoOp: "MPI_NO_OP", MinLoc: "MPI_MINLOC", MaxLoc: "MPI_MAXLOC",
}

// String returns the op's MPI name, e.g. "MPI_SUM".
func (op Op) String() string {
	if op > 0 && op < opEnd {
		return opNames[op]
	}
	return fmt.Sprintf("Op(%d)", uint8(op))
}

// Type is the MPI predefined datatype of an element, as derived from a Go
// type by TypeOf. The zero Type is invalid.
type Type uint8

// The predefined datatypes the accumulate calls accept.
const (
	Int8       Type = iota + 1 // MPI_INT8_T (Go int8)
	Int16                      // MPI_INT16_T (Go int16)
	Int32                      // MPI_INT32_T (Go int32)
	Int64                      // MPI_INT64_T (Go int64)
	Uint8                      // MPI_UINT8_T (Go uint8 and byte)
	Uint16                     // MPI_UINT16_T (Go uint16)
	Uint32                     // MPI_UINT32_T (Go uint32)
	Uint64                     // MPI_UINT64_T (Go uint64)
	Float32                    // MPI_FLOAT (Go float32)
	Float64                    // MPI_DOUBLE (Go float64)
	Complex64                  // MPI_C_FLOAT_COMPLEX (Go complex64)
	Complex128                 // MPI_C_DOUBLE_COMPLEX (Go complex128)
	FloatIntT                  // MPI_FLOAT_INT (FloatInt)
	DoubleIntT                 // MPI_DOUBLE_INT (DoubleInt)
	LongIntT                   // MPI_LONG_INT (LongInt; C long is 64-bit on Linux amd64 and arm64)
	TwoIntT                    // MPI_2INT (TwoInt)
	ShortIntT                  // MPI_SHORT_INT (ShortInt)
	typeEnd
)

type typeInfo struct {
	name   string
	size   uint8
	class  class
	signed bool
}

// class groups the types the way the op table of MPI 3.1 §5.9.2 does.
type class uint8

const (
	classInt class = iota + 1
	classFloat
	classComplex
	classPair
)

var types = [typeEnd]typeInfo{
	Int8:       {"MPI_INT8_T", 1, classInt, true},
	Int16:      {"MPI_INT16_T", 2, classInt, true},
	Int32:      {"MPI_INT32_T", 4, classInt, true},
	Int64:      {"MPI_INT64_T", 8, classInt, true},
	Uint8:      {"MPI_UINT8_T", 1, classInt, false},
	Uint16:     {"MPI_UINT16_T", 2, classInt, false},
	Uint32:     {"MPI_UINT32_T", 4, classInt, false},
	Uint64:     {"MPI_UINT64_T", 8, classInt, false},
	Float32:    {"MPI_FLOAT", 4, classFloat, true},
	Float64:    {"MPI_DOUBLE", 8, classFloat, true},
	Complex64:  {"MPI_C_FLOAT_COMPLEX", 8, classComplex, true},
	Complex128: {"MPI_C_DOUBLE_COMPLEX", 16, classComplex, true},
	FloatIntT:  {"MPI_FLOAT_INT", 8, classPair, true},
	DoubleIntT: {"MPI_DOUBLE_INT", 16, classPair, true},
	LongIntT:   {"MPI_LONG_INT", 16, classPair, true},
	TwoIntT:    {"MPI_2INT", 8, classPair, true},
	ShortIntT:  {"MPI_SHORT_INT", 8, classPair, true},
}

// String returns the datatype's MPI name, e.g. "MPI_INT64_T" or "MPI_DOUBLE_INT".
func (t Type) String() string {
	if t > 0 && t < typeEnd {
		return types[t].name
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// Size returns the extent of one element of t in bytes (MPI_Type_size; for
// the pair types this includes the C padding, as MPI_Type_get_extent), or 0
// for an invalid Type.
func (t Type) Size() int {
	if t > 0 && t < typeEnd {
		return int(types[t].size)
	}
	return 0
}

func (t Type) class() class {
	if t < typeEnd {
		return types[t].class
	}
	return 0
}

// FloatInt is MPI_FLOAT_INT, the C struct { float v; int i; }: a value and
// its index for MinLoc and MaxLoc. 8 bytes: V at 0, I at 4.
type FloatInt struct {
	V float32
	I int32
}

// DoubleInt is MPI_DOUBLE_INT, the C struct { double v; int i; }.
// 16 bytes: V at 0, I at 8, 4 bytes of padding.
type DoubleInt struct {
	V float64
	I int32
}

// LongInt is MPI_LONG_INT, the C struct { long v; int i; } of LP64 Linux.
// 16 bytes: V at 0, I at 8, 4 bytes of padding.
type LongInt struct {
	V int64
	I int32
}

// TwoInt is MPI_2INT, the C struct { int v; int i; }. 8 bytes: V at 0, I at 4.
type TwoInt struct{ V, I int32 }

// ShortInt is MPI_SHORT_INT, the C struct { short v; int i; }.
// 8 bytes: V at 0, 2 bytes of padding, I at 4.
type ShortInt struct {
	V int16
	I int32
}

// Integer is the set of Go types of MPI's C integer datatypes: the only
// types MPI_Compare_and_swap accepts.
type Integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// Elem is the set of Go element types the accumulate calls accept: the
// integers, the floating-point and complex types, and MPI's pair types for
// MinLoc and MaxLoc.
type Elem interface {
	Integer | ~float32 | ~float64 | ~complex64 | ~complex128 |
		FloatInt | DoubleInt | LongInt | TwoInt | ShortInt
}

// SizeOf is the size in bytes of one element of T (MPI_Type_size of its
// datatype). It is a constant within each instantiation, so callers on a hot
// path can use it instead of TypeOf[T]().Size().
func SizeOf[T Elem]() int { return raw.SizeOf[T]() }

// TypeOf returns the MPI datatype of T. Named types map to the datatype of
// their underlying type. It is cheap (a type switch, no allocation) and meant
// to be called on every RMA call.
func TypeOf[T Elem]() Type {
	switch any(*new(T)).(type) {
	case int64:
		return Int64
	case uint64:
		return Uint64
	case float64:
		return Float64
	case int32:
		return Int32
	case uint32:
		return Uint32
	case float32:
		return Float32
	case int8:
		return Int8
	case uint8:
		return Uint8
	case int16:
		return Int16
	case uint16:
		return Uint16
	case complex64:
		return Complex64
	case complex128:
		return Complex128
	case FloatInt:
		return FloatIntT
	case DoubleInt:
		return DoubleIntT
	case LongInt:
		return LongIntT
	case TwoInt:
		return TwoIntT
	case ShortInt:
		return ShortIntT
	}
	return typeOfNamed[T]()
}

// typeOfNamed handles named types (type Count int64): the type switch above
// sees only exact types. The pair types are exact members of Elem, so only
// the kinds below can reach here.
func typeOfNamed[T Elem]() Type {
	switch reflect.TypeFor[T]().Kind() {
	case reflect.Int8:
		return Int8
	case reflect.Int16:
		return Int16
	case reflect.Int32:
		return Int32
	case reflect.Int64:
		return Int64
	case reflect.Uint8:
		return Uint8
	case reflect.Uint16:
		return Uint16
	case reflect.Uint32:
		return Uint32
	case reflect.Uint64:
		return Uint64
	case reflect.Float32:
		return Float32
	case reflect.Float64:
		return Float64
	case reflect.Complex64:
		return Complex64
	case reflect.Complex128:
		return Complex128
	}
	panic("atomics: TypeOf: " + reflect.TypeFor[T]().String() + " is not in Elem")
}

// Errors. A kernel's error wraps one of these, or barrier.ErrAborted when the
// job was aborted while it waited for a stripe.
var (
	// ErrOp is MPI_ERR_OP: an op the standard does not define on the
	// datatype, or NoOp in a call that does not fetch.
	ErrOp = errors.New("MPI_ERR_OP: invalid reduction operation")
	// ErrRange is MPI_ERR_RMA_RANGE: the target elements are not inside
	// the segment.
	ErrRange = errors.New("target range outside the segment")
	// ErrArg is MPI_ERR_ARG: buffers whose lengths disagree, a segment
	// that is not 8-byte aligned or not a multiple of 8 bytes long, or an
	// element that needs a stripe when no stripes were given.
	ErrArg = errors.New("MPI_ERR_ARG: invalid argument")
)

// opError is the ErrOp a forbidden combination returns. Its message is the
// whole story ("atomics: MPI_BAND is not defined on MPI_DOUBLE"); errors.Is
// finds ErrOp through Unwrap.
type opError struct {
	op       Op
	t        Type
	fetching bool
}

func (e *opError) Error() string {
	if e.op == NoOp && !e.fetching && e.t.class() != 0 {
		return "atomics: MPI_NO_OP is only defined in fetching calls (MPI_Get_accumulate, MPI_Fetch_and_op), not in MPI_Accumulate on " + e.t.String()
	}
	return "atomics: " + e.op.String() + " is not defined on " + e.t.String()
}

func (e *opError) Unwrap() error { return ErrOp }

// opTable[op] is the set of classes op is defined on (bit 1<<class).
var opTable = [opEnd]uint8{
	Sum:     1<<classInt | 1<<classFloat | 1<<classComplex,
	Prod:    1<<classInt | 1<<classFloat | 1<<classComplex,
	Max:     1<<classInt | 1<<classFloat,
	Min:     1<<classInt | 1<<classFloat,
	Band:    1 << classInt,
	Bor:     1 << classInt,
	Bxor:    1 << classInt,
	Land:    1 << classInt,
	Lor:     1 << classInt,
	Lxor:    1 << classInt,
	Replace: 1<<classInt | 1<<classFloat | 1<<classComplex | 1<<classPair,
	NoOp:    1<<classInt | 1<<classFloat | 1<<classComplex | 1<<classPair,
	MinLoc:  1 << classPair,
	MaxLoc:  1 << classPair,
}

// Check reports whether op may be applied to elements of type t: the op and
// datatype table of MPI 3.1 §5.9.2 as §11.3.4 uses it for RMA. Integers take
// every op but MinLoc and MaxLoc; floats Sum, Prod, Max, Min, Replace; complex
// Sum, Prod, Replace; the pair types MinLoc, MaxLoc, Replace. NoOp is allowed
// on every type when fetching (MPI_Get_accumulate, MPI_Fetch_and_op) and never
// otherwise. The error wraps ErrOp and names op and type, e.g.
// "atomics: MPI_BAND is not defined on MPI_DOUBLE". Check is local and cheap.
func Check(op Op, t Type, fetching bool) error {
	if op > 0 && op < opEnd && opTable[op]&(1<<t.class()) != 0 && (op != NoOp || fetching) {
		return nil
	}
	return &opError{op, t, fetching}
}
