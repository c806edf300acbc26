package atomics

import (
	"testing"
	"unsafe"
)

func TestTypeOfAndNames(t *testing.T) {
	cases := []struct {
		got  Type
		name string
		size uintptr
	}{
		{TypeOf[int8](), "MPI_INT8_T", 1},
		{TypeOf[int16](), "MPI_INT16_T", 2},
		{TypeOf[int32](), "MPI_INT32_T", 4},
		{TypeOf[int64](), "MPI_INT64_T", 8},
		{TypeOf[uint8](), "MPI_UINT8_T", 1},
		{TypeOf[byte](), "MPI_UINT8_T", 1},
		{TypeOf[uint16](), "MPI_UINT16_T", 2},
		{TypeOf[uint32](), "MPI_UINT32_T", 4},
		{TypeOf[uint64](), "MPI_UINT64_T", 8},
		{TypeOf[float32](), "MPI_FLOAT", 4},
		{TypeOf[float64](), "MPI_DOUBLE", 8},
		{TypeOf[complex64](), "MPI_C_FLOAT_COMPLEX", 8},
		{TypeOf[complex128](), "MPI_C_DOUBLE_COMPLEX", 16},
		{TypeOf[FloatInt](), "MPI_FLOAT_INT", unsafe.Sizeof(FloatInt{})},
		{TypeOf[DoubleInt](), "MPI_DOUBLE_INT", unsafe.Sizeof(DoubleInt{})},
		{TypeOf[LongInt](), "MPI_LONG_INT", unsafe.Sizeof(LongInt{})},
		{TypeOf[TwoInt](), "MPI_2INT", unsafe.Sizeof(TwoInt{})},
		{TypeOf[ShortInt](), "MPI_SHORT_INT", unsafe.Sizeof(ShortInt{})},
	}
	for _, c := range cases {
		if c.got.String() != c.name || uintptr(c.got.Size()) != c.size {
			t.Errorf("%v: name %q size %d, want %q %d", c.got, c.got.String(), c.got.Size(), c.name, c.size)
		}
	}
	if Type(0).String() != "Type(0)" || Type(0).Size() != 0 || typeEnd.String() != "Type(18)" {
		t.Error("invalid Type names")
	}
	names := map[Op]string{Sum: "MPI_SUM", Prod: "MPI_PROD", Max: "MPI_MAX", Min: "MPI_MIN",
		Band: "MPI_BAND", Bor: "MPI_BOR", Bxor: "MPI_BXOR", Land: "MPI_LAND", Lor: "MPI_LOR", Lxor: "MPI_LXOR",
		Replace: "MPI_REPLACE", NoOp: "MPI_NO_OP", MinLoc: "MPI_MINLOC", MaxLoc: "MPI_MAXLOC", 0: "Op(0)", 99: "Op(99)"}
	for op, name := range names {
		if op.String() != name {
			t.Errorf("Op %d: %q, want %q", uint8(op), op.String(), name)
		}
	}
}

// TestPairLayout: the pair types are laid out exactly as the C structs of
// LP64 Linux (value at 0, int index after it at its natural alignment), the
// layout C ranks see in the same segment.
func TestPairLayout(t *testing.T) {
	cases := []struct {
		name              string
		size, iOff, align uintptr
		wantSize, wantI   uintptr
	}{
		{"FloatInt", unsafe.Sizeof(FloatInt{}), unsafe.Offsetof(FloatInt{}.I), unsafe.Alignof(FloatInt{}), 8, 4},
		{"DoubleInt", unsafe.Sizeof(DoubleInt{}), unsafe.Offsetof(DoubleInt{}.I), unsafe.Alignof(DoubleInt{}), 16, 8},
		{"LongInt", unsafe.Sizeof(LongInt{}), unsafe.Offsetof(LongInt{}.I), unsafe.Alignof(LongInt{}), 16, 8},
		{"TwoInt", unsafe.Sizeof(TwoInt{}), unsafe.Offsetof(TwoInt{}.I), unsafe.Alignof(TwoInt{}), 8, 4},
		{"ShortInt", unsafe.Sizeof(ShortInt{}), unsafe.Offsetof(ShortInt{}.I), unsafe.Alignof(ShortInt{}), 8, 4},
	}
	for _, c := range cases {
		if c.size != c.wantSize || c.iOff != c.wantI {
			t.Errorf("%s: size %d, I at %d; C has %d and %d", c.name, c.size, c.iOff, c.wantSize, c.wantI)
		}
	}
}
