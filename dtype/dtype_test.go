package dtype_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"unsafe"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/dtype"
)

// elem is one basic element of a type map: its offset and its basic type.
type elem struct {
	off int64
	t   *dtype.Type
}

// typeMap expands t into its type map the slow, obvious way, from the
// public Envelope only: the reference the runs of Commit are checked
// against.
func typeMap(t *dtype.Type) []elem { return typeMapMemo(t, map[*dtype.Type][]elem{}) }

// typeMapMemo is typeMap with each old type's map computed once (nested
// types with many pieces would otherwise take exponential time).
func typeMapMemo(t *dtype.Type, memo map[*dtype.Type][]elem) []elem {
	if m, ok := memo[t]; ok {
		return m
	}
	m := typeMapOf(t, memo)
	memo[t] = m
	return m
}

func typeMapOf(t *dtype.Type, memo map[*dtype.Type][]elem) []elem {
	comb, ints, addrs, olds := t.Envelope()
	typeMap := func(o *dtype.Type) []elem { return typeMapMemo(o, memo) }
	rep := func(o *dtype.Type, disp int64, count int) []elem {
		if count == 0 {
			return nil
		}
		var out []elem
		sub := typeMap(o)
		for j := range count {
			for _, e := range sub {
				out = append(out, elem{disp + int64(j)*o.Extent() + e.off, e.t})
			}
		}
		return out
	}
	switch comb {
	case dtype.CombinerNamed:
		return []elem{{0, t}}
	case dtype.CombinerDup, dtype.CombinerResized:
		return typeMap(olds[0])
	case dtype.CombinerContiguous:
		return rep(olds[0], 0, ints[0])
	case dtype.CombinerVector:
		var out []elem
		for i := range ints[0] {
			out = append(out, rep(olds[0], int64(i*ints[2])*olds[0].Extent(), ints[1])...)
		}
		return out
	case dtype.CombinerHvector:
		var out []elem
		for i := range ints[0] {
			out = append(out, rep(olds[0], int64(i)*addrs[0], ints[1])...)
		}
		return out
	case dtype.CombinerIndexed:
		n := len(ints) / 2
		var out []elem
		for k := range n {
			out = append(out, rep(olds[0], int64(ints[n+k])*olds[0].Extent(), ints[k])...)
		}
		return out
	case dtype.CombinerHindexed:
		var out []elem
		for k := range ints {
			out = append(out, rep(olds[0], addrs[k], ints[k])...)
		}
		return out
	case dtype.CombinerIndexedBlock, dtype.CombinerHindexedBlock:
		var out []elem
		for k := range addrs {
			out = append(out, rep(olds[0], addrs[k], ints[0])...)
		}
		return out
	case dtype.CombinerStruct:
		var out []elem
		for k := range ints {
			out = append(out, rep(olds[k], addrs[k], ints[k])...)
		}
		return out
	case dtype.CombinerSubarray:
		order, n := dtype.Order(ints[0]), (len(ints)-1)/3
		sizes, subs, starts := ints[1:1+n], ints[1+n:1+2*n], ints[1+2*n:]
		var out []elem
		idx := make([]int, n)
		var walk func(d int)
		walk = func(d int) {
			if d == n {
				lin := 0
				if order == dtype.OrderC {
					for i := range n {
						lin = lin*sizes[i] + starts[i] + idx[i]
					}
				} else {
					for i := n - 1; i >= 0; i-- {
						lin = lin*sizes[i] + starts[i] + idx[i]
					}
				}
				out = append(out, rep(olds[0], int64(lin)*olds[0].Extent(), 1)...)
				return
			}
			dim := d
			if order == dtype.OrderFortran {
				dim = n - 1 - d
			}
			for i := range subs[dim] {
				idx[dim] = i
				walk(d + 1)
			}
		}
		walk(0)
		return out
	}
	panic(fmt.Sprintf("combiner %v", comb))
}

// refPack packs count instances by the reference type map. Basic
// elements are copied by their data bytes (pair types without padding).
func refPack(src []byte, count int, t *dtype.Type) []byte {
	var out []byte
	m := typeMap(t)
	for i := range count {
		for _, e := range m {
			runs, _ := e.t.Runs()
			for _, r := range runs {
				at := int64(i)*t.Extent() + e.off + r.Off
				out = append(out, src[at:at+r.Len]...)
			}
		}
	}
	return out
}

// musts returns a function that commits a new type or fails t.
func musts(t *testing.T) func(*dtype.Type, error) *dtype.Type {
	return func(tp *dtype.Type, err error) *dtype.Type {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if err := tp.Commit(); err != nil {
			t.Fatal(err)
		}
		return tp
	}
}

func commitBasics(t *testing.T) {
	for ty := atomics.Int8; ty <= atomics.ShortIntT; ty++ {
		if err := dtype.Basic(ty).Commit(); err != nil {
			t.Fatal(err)
		}
	}
	if err := dtype.Byte.Commit(); err != nil {
		t.Fatal(err)
	}
}

// checkAgainstRef packs count instances of tp with Pack and with the
// reference, compares, unpacks into a poisoned buffer and checks that
// exactly the type map's bytes came back.
func checkAgainstRef(t *testing.T, name string, tp *dtype.Type, count int) {
	t.Helper()
	lo, hi, err := tp.Span(count)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	shift := max(0, -lo) // a buffer the instances fit in, starting at 0
	if shift > 0 {
		// Shift by whole bytes: build the buffer with room before.
		_ = shift
	}
	if lo < 0 {
		t.Skipf("%s reaches before its buffer", name)
	}
	src := make([]byte, hi)
	for i := range src {
		src[i] = byte(i*131 + 7)
	}
	ps, err := dtype.PackSize(count, tp)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, ps)
	n, err := dtype.Pack(src, count, tp, got)
	if err != nil {
		t.Fatalf("%s: Pack: %v", name, err)
	}
	want := refPack(src, count, tp)
	if int64(n) != ps || !bytes.Equal(got, want) {
		t.Fatalf("%s: Pack gave %d bytes %x, the type map %d bytes %x", name, n, got, len(want), want)
	}
	back := bytes.Repeat([]byte{0xEE}, len(src))
	if _, err := dtype.Unpack(got, back, count, tp); err != nil {
		t.Fatalf("%s: Unpack: %v", name, err)
	}
	touched := make([]bool, len(src))
	m := typeMap(tp)
	for i := range count {
		for _, e := range m {
			runs, _ := e.t.Runs()
			for _, r := range runs {
				for b := range r.Len {
					touched[int64(i)*tp.Extent()+e.off+r.Off+b] = true
				}
			}
		}
	}
	for i := range src {
		if touched[i] && back[i] != src[i] || !touched[i] && back[i] != 0xEE {
			t.Fatalf("%s: Unpack byte %d is %#x (source %#x, in the type map: %v)", name, i, back[i], src[i], touched[i])
		}
	}
	// Size and true bounds agree with the type map.
	size, tlb, tub := mapBounds(m)
	if size != tp.Size() || (size > 0 && (tlb != tp.TrueLB() || tub-tlb != tp.TrueExtent())) {
		t.Fatalf("%s: Size %d TrueLB %d TrueExtent %d; the type map says %d, %d, %d", name, tp.Size(), tp.TrueLB(), tp.TrueExtent(), size, tlb, tub-tlb)
	}
}

func TestConstructorsAgainstTypeMap(t *testing.T) {
	commitBasics(t)
	f64, i32, i8 := dtype.Basic(atomics.Float64), dtype.Basic(atomics.Int32), dtype.Basic(atomics.Int8)
	di, si := dtype.Basic(atomics.DoubleIntT), dtype.Basic(atomics.ShortIntT)
	type mk func() (*dtype.Type, error)
	vec, _ := dtype.Vector(3, 2, 4, i32)
	strct, _ := dtype.Struct([]int{1, 2, 1}, []int64{0, 8, 20}, []*dtype.Type{f64, i32, i8})
	cases := []struct {
		name  string
		f     mk
		count int
	}{
		{"contiguous", func() (*dtype.Type, error) { return dtype.Contiguous(5, f64) }, 3},
		{"contiguous-0", func() (*dtype.Type, error) { return dtype.Contiguous(0, f64) }, 2},
		{"vector", func() (*dtype.Type, error) { return dtype.Vector(4, 2, 5, i32) }, 3},
		{"vector-stride-1-dense", func() (*dtype.Type, error) { return dtype.Vector(4, 3, 3, i32) }, 2},
		{"vector-negative-stride", func() (*dtype.Type, error) {
			v, err := dtype.Vector(3, 1, -2, f64)
			if err != nil {
				return nil, err
			}
			return dtype.Resized(v, 0, 64) // shifted into the buffer by the struct below
		}, 0},
		{"hvector", func() (*dtype.Type, error) { return dtype.Hvector(3, 2, 20, i32) }, 2},
		{"indexed", func() (*dtype.Type, error) { return dtype.Indexed([]int{2, 0, 3}, []int{5, 1, 0}, i32) }, 2},
		{"hindexed", func() (*dtype.Type, error) { return dtype.Hindexed([]int{1, 2}, []int64{30, 2}, i8) }, 3},
		{"indexed-block", func() (*dtype.Type, error) { return dtype.IndexedBlock(2, []int{4, 0, 8}, i32) }, 2},
		{"hindexed-block", func() (*dtype.Type, error) { return dtype.HindexedBlock(3, []int64{16, 0}, i8) }, 2},
		{"struct", func() (*dtype.Type, error) { return strct, nil }, 3},
		{"struct-pairs", func() (*dtype.Type, error) {
			return dtype.Struct([]int{2, 1}, []int64{0, 32}, []*dtype.Type{di, si})
		}, 2},
		{"vector-of-struct", func() (*dtype.Type, error) { return dtype.Vector(3, 1, 2, strct) }, 2},
		{"indexed-of-vector", func() (*dtype.Type, error) { return dtype.Indexed([]int{1, 2}, []int{3, 0}, vec) }, 2},
		{"resized", func() (*dtype.Type, error) { return dtype.Resized(vec, 0, 100) }, 3},
		{"resized-negative-lb", func() (*dtype.Type, error) {
			s, err := dtype.Hindexed([]int{1}, []int64{16}, f64)
			if err != nil {
				return nil, err
			}
			return dtype.Resized(s, 8, 24)
		}, 3},
		{"subarray-c", func() (*dtype.Type, error) {
			return dtype.Subarray([]int{4, 6, 5}, []int{2, 3, 2}, []int{1, 2, 3}, dtype.OrderC, i32)
		}, 2},
		{"subarray-fortran", func() (*dtype.Type, error) {
			return dtype.Subarray([]int{4, 6, 5}, []int{2, 3, 2}, []int{1, 2, 3}, dtype.OrderFortran, i32)
		}, 2},
		{"subarray-of-struct", func() (*dtype.Type, error) {
			return dtype.Subarray([]int{3, 3}, []int{2, 2}, []int{1, 0}, dtype.OrderC, strct)
		}, 1},
		{"dup", func() (*dtype.Type, error) { return vec.Dup() }, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tp := musts(t)(c.f())
			for _, count := range []int{0, 1, c.count} {
				checkAgainstRef(t, c.name, tp, count)
			}
		})
	}
}

// Bounds of the standard's own examples.
func TestBounds(t *testing.T) {
	mk := musts(t)
	commitBasics(t)
	f64, i8 := dtype.Basic(atomics.Float64), dtype.Basic(atomics.Int8)
	// MPI 4.1 §5.1.2: Type = {(double,0),(char,8)}: extent 16 (aligned to 8).
	s := mk(dtype.Struct([]int{1, 1}, []int64{0, 8}, []*dtype.Type{f64, i8}))
	if s.Extent() != 16 || s.Size() != 9 || s.TrueExtent() != 9 {
		t.Errorf("struct {double; char}: extent %d size %d true extent %d, want 16 9 9", s.Extent(), s.Size(), s.TrueExtent())
	}
	// Vector(2, 3, 4, old) of that type: extent 4*16 + 3*16 = 112.
	v := mk(dtype.Vector(2, 3, 4, s))
	if v.Extent() != 112 || v.Size() != 54 {
		t.Errorf("vector: extent %d size %d, want 112 54", v.Extent(), v.Size())
	}
	r := mk(dtype.Resized(v, -8, 200))
	if r.LB() != -8 || r.Extent() != 200 || r.TrueLB() != 0 {
		t.Errorf("resized: lb %d extent %d true lb %d", r.LB(), r.Extent(), r.TrueLB())
	}
	neg := mk(dtype.Vector(3, 1, -2, f64)) // blocks at 0, -16, -32
	if neg.LB() != -32 || neg.Extent() != 40 || neg.TrueLB() != -32 {
		t.Errorf("negative stride: lb %d extent %d true lb %d", neg.LB(), neg.Extent(), neg.TrueLB())
	}
	if err := neg.Fits(1, 100); !errors.Is(err, dtype.ErrBuffer) {
		t.Errorf("a type reaching before its buffer: %v, want ErrBuffer", err)
	}
	if err := v.Fits(2, 100); !errors.Is(err, dtype.ErrBuffer) {
		t.Errorf("two instances in 100 bytes: %v, want ErrBuffer", err)
	}
	// §5.1's ε rounds any typemap's extent to its strictest alignment, not
	// only a struct's: ints at 0, 4, 8 and 3, 7, 11 end at 15, extent 16
	// (Open MPI: 16). A block of length 0 is no typemap entry and brings
	// no alignment: {int@-16, 0 doubles@100} is 4 bytes (Open MPI: 4).
	i32 := dtype.Basic(atomics.Int32)
	hv := mk(dtype.Hvector(2, 1, 3, mk(dtype.Contiguous(3, i32))))
	if hv.Extent() != 16 || hv.TrueExtent() != 15 {
		t.Errorf("hvector(2, 1, 3 bytes, 3 ints): extent %d true extent %d, want 16 15", hv.Extent(), hv.TrueExtent())
	}
	z := mk(dtype.Struct([]int{1, 0}, []int64{-16, 100}, []*dtype.Type{i32, f64}))
	if z.LB() != -16 || z.Extent() != 4 {
		t.Errorf("{int@-16, 0 doubles@100}: lb %d extent %d, want -16 4", z.LB(), z.Extent())
	}
}

// TestBoundMarkers: Resized (and Subarray) bounds are MPI 4.1 §5.1.7's
// lb_marker and ub_marker, which carry into every type built from them:
// the enclosing type's bounds are the markers' alone and a Struct adds no
// padding after an ub marker. The values are Open MPI 4.1's (MPICH 4.0
// pads and takes every entry's bounds, as this package did).
func TestBoundMarkers(t *testing.T) {
	mk := musts(t)
	commitBasics(t)
	f64, i32, i8 := dtype.Basic(atomics.Float64), dtype.Basic(atomics.Int32), dtype.Basic(atomics.Int8)
	r6 := mk(dtype.Resized(i32, 0, 6))
	r9 := mk(dtype.Resized(f64, 0, 9))
	c2 := mk(dtype.Contiguous(2, r6))
	sub := mk(dtype.Subarray([]int{4}, []int{2}, []int{1}, dtype.OrderC, i8))
	for _, tt := range []struct {
		name      string
		t         *dtype.Type
		lb, ext   int64
		tlb, text int64
	}{
		{"{double@0, char@8}: padded", mk(dtype.Struct([]int{1, 1}, []int64{0, 8}, []*dtype.Type{f64, i8})), 0, 16, 0, 9},
		{"{int@0, char@4}: padded", mk(dtype.Struct([]int{1, 1}, []int64{0, 4}, []*dtype.Type{i32, i8})), 0, 8, 0, 5},
		{"{resized(int,0,6)@0, char@6}: ub marker at 6", mk(dtype.Struct([]int{1, 1}, []int64{0, 6}, []*dtype.Type{r6, i8})), 0, 6, 0, 7},
		{"{char@0, resized(double,0,9)@1}: lb marker at 1", mk(dtype.Struct([]int{1, 1}, []int64{0, 1}, []*dtype.Type{i8, r9})), 1, 9, 0, 9},
		{"{contiguous(2, resized(int,0,6))@0, char@12}", mk(dtype.Struct([]int{1, 1}, []int64{0, 12}, []*dtype.Type{c2, i8})), 0, 12, 0, 13},
		{"contiguous(2, resized(int,0,6))", c2, 0, 12, 0, 10},
		{"{subarray@0, double@8}: the subarray's markers", mk(dtype.Struct([]int{1, 1}, []int64{0, 8}, []*dtype.Type{sub, f64})), 0, 4, 1, 15},
		{"dup of resized", mk(r6.Dup()), 0, 6, 0, 4},
	} {
		if tt.t.LB() != tt.lb || tt.t.Extent() != tt.ext || tt.t.TrueLB() != tt.tlb || tt.t.TrueExtent() != tt.text {
			t.Errorf("%s: lb %d extent %d, true lb %d extent %d; want %d %d, %d %d", tt.name,
				tt.t.LB(), tt.t.Extent(), tt.t.TrueLB(), tt.t.TrueExtent(), tt.lb, tt.ext, tt.tlb, tt.text)
		}
	}
}

type particle struct {
	Pos  [3]float64
	Mass float32
	_    [4]byte
	ID   int64
	Tag  uint8
}

func TestOfStruct(t *testing.T) {
	tp, err := dtype.Of[particle]()
	if err != nil {
		t.Fatal(err)
	}
	if err := tp.Commit(); err != nil {
		t.Fatal(err)
	}
	if tp.Extent() != 48 || tp.Size() != 24+4+8+1 {
		t.Fatalf("Of[particle]: extent %d size %d, want 48 37", tp.Extent(), tp.Size())
	}
	ps := []particle{{Pos: [3]float64{1, 2, 3}, Mass: 4, ID: 5, Tag: 6}, {Pos: [3]float64{7, 8, 9}, Mass: 10, ID: 11, Tag: 12}}
	checkAgainstRef(t, "particle", tp, 2)
	for _, bad := range []func() (*dtype.Type, error){dtype.Of[*int], dtype.Of[string], dtype.Of[struct{ B bool }], dtype.Of[[]float64], dtype.Of[uintptr]} {
		if _, err := bad(); !errors.Is(err, dtype.ErrType) {
			t.Errorf("a type with no MPI type: %v, want ErrType", err)
		}
	}
	if tp2, err := dtype.Of[atomics.DoubleInt](); err != nil || tp2 != dtype.Basic(atomics.DoubleIntT) {
		t.Errorf("Of[DoubleInt] = %v, %v", tp2, err)
	}
	packed := make([]byte, 2*37)
	if _, err := dtype.Pack(bytesOf(ps), 2, tp, packed); err != nil {
		t.Fatal(err)
	}
	if packed[37+36] != 12 || packed[37] != 0 || packed[37+7] != 0x40 { // Tag of the second; 7.0's low and high bytes
		t.Errorf("packed particles: %x", packed)
	}
}

func TestSignatures(t *testing.T) {
	mk := musts(t)
	commitBasics(t)
	f64, i32 := dtype.Basic(atomics.Float64), dtype.Basic(atomics.Int32)
	col := mk(dtype.Vector(8, 1, 8, f64))
	row := mk(dtype.Contiguous(8, f64))
	mixed := mk(dtype.Struct([]int{1, 1}, []int64{0, 8}, []*dtype.Type{f64, i32}))
	for _, c := range []struct {
		a     *dtype.Type
		na    int
		b     *dtype.Type
		nb    int
		match bool
	}{{col, 1, row, 1, true}, {col, 2, f64, 16, true}, {col, 1, f64, 7, false}, {mixed, 2, mixed, 2, true},
		{mixed, 1, f64, 2, false}, {col, 0, row, 0, true}, {dtype.Byte, 8, f64, 1, false}} {
		got, err := dtype.SameSignature(c.a, c.na, c.b, c.nb)
		if err != nil || got != c.match {
			t.Errorf("SameSignature(%d × %v, %d × %v) = %v, %v; want %v", c.na, c.a, c.nb, c.b, got, err, c.match)
		}
	}
	if e, ok := col.Elem(); !ok || e != atomics.Float64 {
		t.Errorf("Elem of a column = %v, %v", e, ok)
	}
	if _, ok := mixed.Elem(); ok {
		t.Error("Elem of a struct of double and int succeeded")
	}
}

// TestLargeStrides: a vector's extent is its last block's place plus
// the block (MPI 4.1 §5.1.2), so strides that reach past half of int64
// are fine while the last block's bounds fit: 2 int64s 2^62 bytes apart
// span 2^62+8 (Open MPI agrees); 3 of them do not fit.
func TestLargeStrides(t *testing.T) {
	i64 := dtype.Basic(atomics.Int64)
	for name, f := range map[string]func(int) (*dtype.Type, error){
		"Hvector": func(n int) (*dtype.Type, error) { return dtype.Hvector(n, 1, 1<<62, i64) },
		"Vector":  func(n int) (*dtype.Type, error) { return dtype.Vector(n, 1, 1<<59, i64) },
	} {
		tp, err := f(2)
		if err != nil {
			t.Errorf("%s of 2 blocks 2^62 bytes apart: %v", name, err)
		} else if tp.Extent() != 1<<62+8 || tp.Size() != 16 {
			t.Errorf("%s of 2 blocks 2^62 bytes apart: extent %d, size %d; want %d, 16", name, tp.Extent(), tp.Size(), int64(1<<62+8))
		}
		if tp, err := f(3); !errors.Is(err, dtype.ErrArg) {
			t.Errorf("%s of 3 blocks 2^62 bytes apart: %v, %v; want ErrArg", name, tp, err)
		}
	}
}

func TestErrors(t *testing.T) {
	f64 := dtype.Basic(atomics.Float64)
	for name, f := range map[string]func() (*dtype.Type, error){
		"nil old":            func() (*dtype.Type, error) { return dtype.Contiguous(1, nil) },
		"negative count":     func() (*dtype.Type, error) { return dtype.Contiguous(-1, f64) },
		"negative blocklen":  func() (*dtype.Type, error) { return dtype.Vector(2, -1, 1, f64) },
		"lengths differ":     func() (*dtype.Type, error) { return dtype.Indexed([]int{1}, []int{0, 1}, f64) },
		"struct lengths":     func() (*dtype.Type, error) { return dtype.Struct([]int{1}, []int64{0}, nil) },
		"overflowing stride": func() (*dtype.Type, error) { return dtype.Hvector(3, 1, 1<<62, f64) },
		"overflowing vector": func() (*dtype.Type, error) { return dtype.Vector(1<<40, 1, 1<<30, f64) },
		"subarray start":     func() (*dtype.Type, error) { return dtype.Subarray([]int{4}, []int{2}, []int{3}, dtype.OrderC, f64) },
		"subarray order":     func() (*dtype.Type, error) { return dtype.Subarray([]int{4}, []int{2}, []int{0}, 9, f64) },
		"resized overflow":   func() (*dtype.Type, error) { return dtype.Resized(f64, 1<<62, 1<<62) },
	} {
		if tp, err := f(); err == nil {
			t.Errorf("%s: got %v, want an error", name, tp)
		}
	}
	v, err := dtype.Vector(2, 1, 2, f64)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dtype.Pack(make([]byte, 64), 1, v, make([]byte, 16)); !errors.Is(err, dtype.ErrType) {
		t.Errorf("Pack with an uncommitted type: %v, want ErrType", err)
	}
	if err := v.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := dtype.Pack(make([]byte, 16), 1, v, make([]byte, 16)); !errors.Is(err, dtype.ErrBuffer) {
		t.Errorf("Pack from a buffer too short: %v, want ErrBuffer", err)
	}
	if _, err := dtype.Pack(make([]byte, 64), 1, v, make([]byte, 8)); !errors.Is(err, dtype.ErrBuffer) {
		t.Errorf("Pack into a buffer too short: %v, want ErrBuffer", err)
	}
	huge, err := dtype.Vector(1<<20, 1, 2, dtype.Byte)
	if err != nil {
		t.Fatal(err)
	}
	big, err := dtype.Vector(1<<7, 1, 1<<22, huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Commit(); !errors.Is(err, dtype.ErrNoMem) {
		t.Errorf("Commit of 2^27 runs: %v, want ErrNoMem", err)
	}
	var zero dtype.Type
	if err := zero.Commit(); !errors.Is(err, dtype.ErrType) || (*dtype.Type)(nil).Size() != 0 || zero.String() != "<invalid type>" {
		t.Errorf("the zero Type: %v", err)
	}
}

// bytesOf is the memory of a slice of plain structs.
func bytesOf[T any](s []T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(s[0])))
}

// TestUnpackOverlap: Unpack into instances whose entries overlap (a
// vector of stride 0) is ErrType, as a receive into them is (MPI 4.1
// §5.1.2); Pack from them is fine.
func TestUnpackOverlap(t *testing.T) {
	v, err := dtype.Vector(2, 1, 0, dtype.Basic(atomics.Int32))
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Commit(); err != nil {
		t.Fatal(err)
	}
	src := []byte{1, 0, 0, 0, 2, 0, 0, 0}
	if _, err := dtype.Pack(src[:4], 1, v, make([]byte, 8)); err != nil {
		t.Fatalf("Pack from overlapping entries: %v", err)
	}
	dst := make([]byte, 4)
	if _, err := dtype.Unpack(src, dst, 1, v); !errors.Is(err, dtype.ErrType) {
		t.Fatalf("Unpack into overlapping entries: %v, want ErrType", err)
	}
	if !bytes.Equal(dst, make([]byte, 4)) {
		t.Fatalf("the refused Unpack wrote % x", dst)
	}
}

// TestUnpackPrefix: a short packed buffer fills the instances' bytes it
// covers in type-map order and leaves the rest; a full one is Unpack.
func TestUnpackPrefix(t *testing.T) {
	col, err := dtype.Vector(3, 2, 4, dtype.Byte) // bytes 0-1, 4-5, 8-9
	if err != nil {
		t.Fatal(err)
	}
	if err := col.Commit(); err != nil {
		t.Fatal(err)
	}
	src := []byte{1, 2, 3, 4, 5, 6}
	for n := range len(src) + 1 {
		dst := bytes.Repeat([]byte{0xee}, 10)
		got, err := dtype.UnpackPrefix(src[:n], dst, 1, col)
		if err != nil || got != n {
			t.Fatalf("n=%d: read %d, %v", n, got, err)
		}
		want := bytes.Repeat([]byte{0xee}, 10)
		for i, off := range []int{0, 1, 4, 5, 8, 9}[:n] {
			want[off] = src[i]
		}
		if !bytes.Equal(dst, want) {
			t.Fatalf("n=%d: % x, want % x", n, dst, want)
		}
	}
	full := make([]byte, 10)
	if _, err := dtype.Unpack(src, full, 1, col); err != nil {
		t.Fatal(err)
	}
	pre := make([]byte, 10)
	if _, err := dtype.UnpackPrefix(src, pre, 1, col); err != nil || !bytes.Equal(pre, full) {
		t.Fatalf("full buffer: % x, Unpack gives % x (%v)", pre, full, err)
	}
}

// mapBounds is a type map's size in bytes and its true bounds: its
// lowest and one past its highest byte (0, 0 without data).
func mapBounds(m []elem) (size, tlb, tub int64) {
	first := true
	for _, e := range m {
		runs, _ := e.t.Runs()
		for _, r := range runs {
			size += r.Len
			if first || e.off+r.Off < tlb {
				tlb = e.off + r.Off
			}
			if first || e.off+r.Off+r.Len > tub {
				tub = e.off + r.Off + r.Len
			}
			first = false
		}
	}
	return size, tlb, tub
}

// Dup keeps the committed state (MPI 4.1 §5.1.10): a duplicate of a
// committed or predefined type is ready for communication at once, one
// of an uncommitted type is not.
func TestDupCommittedState(t *testing.T) {
	must := func(tp *dtype.Type, err error) *dtype.Type {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return tp
	}
	vec := must(dtype.Vector(3, 1, 2, dtype.Basic(atomics.Int32)))
	d := must(vec.Dup())
	if d.Committed() {
		t.Fatal("the Dup of an uncommitted type is committed")
	}
	if err := vec.Commit(); err != nil {
		t.Fatal(err)
	}
	dc := must(vec.Dup())
	if !dc.Committed() || dc.CheckCommitted() != nil {
		t.Fatalf("the Dup of a committed type: committed %v, %v", dc.Committed(), dc.CheckCommitted())
	}
	want, err := vec.Runs()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := dc.Runs(); err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("runs of the Dup %v (%v), want %v", got, err, want)
	}
	if d.Committed() {
		t.Fatal("committing the old type committed an earlier Dup")
	}
	if p := must(dtype.Basic(atomics.Float64).Dup()); !p.Committed() {
		t.Fatal("the Dup of a predefined type is not committed")
	}
}
