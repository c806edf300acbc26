package atomics

import (
	"math"
	"slices"
	"testing"

	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/internal/raw"
)

// FuzzKernels runs a kernel chosen by the input on elements decoded from the
// input's bytes, at an offset chosen by the input, and checks it against the
// sequential reference: values, fetched results, the op table, and that no
// byte outside the target elements (padding included) changes.
func FuzzKernels(f *testing.F) {
	f.Add(uint8(3), uint8(Sum), uint8(0), uint8(0), []byte{1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0})
	f.Add(uint8(9), uint8(Max), uint8(1), uint8(1), slices.Repeat([]byte{0, 0, 0xf8, 0x7f, 0, 0, 0, 0x80}, 4))
	f.Add(uint8(11), uint8(Prod), uint8(4), uint8(2), slices.Repeat([]byte{0x3f, 0xf0, 0, 0, 0, 0, 0, 1}, 8))
	f.Add(uint8(13), uint8(MinLoc), uint8(0), uint8(1), slices.Repeat([]byte{1, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0}, 4))
	f.Add(uint8(16), uint8(MaxLoc), uint8(2), uint8(0), []byte("pairs of short and int, misaligned"))
	f.Add(uint8(0), uint8(Lxor), uint8(3), uint8(3), []byte{0, 1, 2, 0xff, 0x80, 0})
	f.Add(uint8(5), uint8(Bxor), uint8(2), uint8(3), []byte{0xff, 0xff, 1, 0, 0x34, 0x12, 0x34, 0x12})
	f.Add(uint8(7), uint8(NoOp), uint8(0), uint8(1), []byte{9, 9, 9, 9, 9, 9, 9, 9})
	f.Fuzz(func(t *testing.T, typeSel, op, misalign, kernel uint8, data []byte) {
		fuzzers[int(typeSel)%len(fuzzers)](t, Op(op%uint8(opEnd+1)), int64(misalign%8), kernel%4, data)
	})
}

var fuzzers = []func(t *testing.T, op Op, misalign int64, kernel uint8, data []byte){
	fuzzInt[int8], fuzzInt[int16], fuzzInt[int32], fuzzInt[int64],
	fuzzInt[uint8], fuzzInt[uint16], fuzzInt[uint32], fuzzInt[uint64],
	fuzzElem[float32], fuzzElem[float64], fuzzElem[complex64], fuzzElem[complex128],
	fuzzElem[FloatInt], fuzzElem[DoubleInt], fuzzElem[LongInt], fuzzElem[TwoInt], fuzzElem[ShortInt],
}

// decode splits data into up to 16 target and 16 origin elements of T.
func decode[T Elem](data []byte) (targets, origins []T) {
	size := TypeOf[T]().Size()
	n := min(len(data)/(2*size), 16)
	targets, origins = make([]T, n), make([]T, n)
	copy(raw.Bytes(targets), data)
	copy(raw.Bytes(origins), data[n*size:])
	return targets, origins
}

func fuzzInt[T Integer](t *testing.T, op Op, misalign int64, kernel uint8, data []byte) {
	if kernel != 3 {
		fuzzElem[T](t, op, misalign, kernel, data)
		return
	}
	targets, origins := decode[T](data)
	if len(targets) == 0 {
		return
	}
	typ := TypeOf[T]()
	off := 8 + misalign
	mem := newSegment(t, 32)
	st := newStripes(t, 2, nil, barrier.DefaultPolicy)
	// compare: the target itself when op is even, so both outcomes happen.
	cmp := origins[0] ^ targets[0]
	if op%2 == 0 {
		cmp = targets[0]
	}
	putElems(mem, off, targets[:1])
	before := slices.Clone(mem)
	old, err := CompareAndSwap(mem, off, origins[0], cmp, st)
	if err != nil {
		t.Fatal(err)
	}
	want := targets[0]
	if targets[0] == cmp {
		want = origins[0]
	}
	if got := getElem[T](mem, off); old != targets[0] || got != want {
		t.Fatalf("%v CAS(target %v, compare %v, new %v) at %d: old %v, now %v; want %v, %v", typ, targets[0], cmp, origins[0], off, old, got, targets[0], want)
	}
	checkUntouched(t, before, mem, off, 1, typ)
}

func fuzzElem[T Elem](t *testing.T, op Op, misalign int64, kernel uint8, data []byte) {
	targets, origins := decode[T](data)
	n := len(targets)
	if n == 0 {
		return
	}
	typ := TypeOf[T]()
	size := typ.Size()
	off := 8 + misalign
	mem := newSegment(t, int(off+int64(n*size)+15)&^7)
	st := newStripes(t, 2, nil, barrier.DefaultPolicy)
	putElems(mem, off, targets)
	before := slices.Clone(mem)
	fetching := kernel != 0
	var results []T
	var err error
	switch kernel {
	case 0:
		err = Accumulate(mem, off, origins, op, st)
	case 1:
		results = make([]T, n)
		err = GetAccumulate(mem, off, origins, results, op, st)
	default:
		n = 1
		results = make([]T, 1)
		results[0], err = FetchAndOp(mem, off, origins[0], op, st)
	}
	if !checkErr(t, typ.String(), err, op, typ, fetching) {
		if !slices.Equal(before, mem) {
			t.Fatal("a refused call changed the segment")
		}
		return
	}
	for i := range n {
		got, want := getElem[T](mem, off+int64(i*size)), ref(op, targets[i], origins[i])
		if !same(got, want) {
			t.Fatalf("%v %v at %d, kernel %d: %v op %v = %v, want %v", typ, op, off, kernel, targets[i], origins[i], got, want)
		}
		if fetching && !same(results[i], targets[i]) {
			t.Fatalf("%v %v at %d, kernel %d: fetched %v, want %v", typ, op, off, kernel, results[i], targets[i])
		}
	}
	checkUntouched(t, before, mem, off, n, typ)
}

// TestLittleEndian guards the byte-order assumption of unsafe.go.
func TestLittleEndian(t *testing.T) {
	if b := raw.Bytes([]uint32{0x01020304}); b[0] != 4 {
		t.Fatal("atomics assumes a little-endian machine")
	}
	if raw.BitsOf(int16(-2)) != 0xfffe || raw.FromBits[float64](math.Float64bits(1.5)) != 1.5 {
		t.Fatal("bitsOf/fromBits")
	}
}
