package dtype

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"sync/atomic"

	"github.com/shmrun/shmrun/atomics"
)

// Error classes. Every error of this package wraps one of them.
var (
	ErrArg    = atomics.ErrArg // one value for a class in every package
	ErrCount  = errors.New("MPI_ERR_COUNT: invalid count")
	ErrType   = errors.New("MPI_ERR_TYPE: invalid datatype")
	ErrBuffer = errors.New("MPI_ERR_BUFFER: invalid buffer")
	// ErrNoMem: a type whose commit would need more memory than this
	// implementation gives one type (Commit).
	ErrNoMem = errors.New("MPI_ERR_NO_MEM: out of memory")
)

func errorf(class error, format string, args ...any) error {
	return fmt.Errorf("dtype: "+format+": %w", append(args, class)...)
}

// Combiner says how a type was made (MPI_COMBINER_*).
type Combiner uint8

// Combiners.
const (
	CombinerNamed         Combiner = iota + 1 // a basic type
	CombinerDup                               // Dup
	CombinerContiguous                        // Contiguous
	CombinerVector                            // Vector
	CombinerHvector                           // Hvector
	CombinerIndexed                           // Indexed
	CombinerHindexed                          // Hindexed
	CombinerIndexedBlock                      // IndexedBlock
	CombinerHindexedBlock                     // HindexedBlock
	CombinerStruct                            // Struct
	CombinerSubarray                          // Subarray
	CombinerResized                           // Resized
	CombinerDarray                            // Darray
)

var combinerNames = [...]string{CombinerNamed: "MPI_COMBINER_NAMED", CombinerDup: "MPI_COMBINER_DUP",
	CombinerContiguous: "MPI_COMBINER_CONTIGUOUS", CombinerVector: "MPI_COMBINER_VECTOR", CombinerHvector: "MPI_COMBINER_HVECTOR",
	CombinerIndexed: "MPI_COMBINER_INDEXED", CombinerHindexed: "MPI_COMBINER_HINDEXED", CombinerIndexedBlock: "MPI_COMBINER_INDEXED_BLOCK",
	CombinerHindexedBlock: "MPI_COMBINER_HINDEXED_BLOCK", CombinerStruct: "MPI_COMBINER_STRUCT", CombinerSubarray: "MPI_COMBINER_SUBARRAY",
	CombinerResized: "MPI_COMBINER_RESIZED", CombinerDarray: "MPI_COMBINER_DARRAY"}

func (c Combiner) String() string {
	if int(c) < len(combinerNames) && combinerNames[c] != "" {
		return combinerNames[c]
	}
	return fmt.Sprintf("Combiner(%d)", uint8(c))
}

// Run is a piece of a type's data: Len bytes at offset Off from the start
// of the buffer (for one instance of the type at displacement 0).
type Run struct{ Off, Len int64 }

// Type is an MPI datatype, basic or derived. The zero Type and nil are
// invalid (ErrType). A Type never changes once made.
type Type struct {
	comb   Combiner
	basic  atomics.Type // CombinerNamed: the basic type; Byte has Uint8 and isByte
	isByte bool
	ints   []int   // the constructor's integer arguments (Envelope)
	addrs  []int64 // its byte displacements and strides
	types  []*Type // its old types
	inner  *Type   // Darray: the type it is made of (nested Hindexed types)

	size   int64 // bytes of data (MPI_Type_size)
	lb, ub int64 // bounds; extent = ub - lb
	// hasLB, hasUB: the bounds are markers (MPI 4.1 §5.1.7's lb_marker and
	// ub_marker), set by Resized and Subarray and carried by every type
	// built from one: an enclosing type's bound is then the markers' alone,
	// and a Struct adds no alignment padding after an ub marker.
	hasLB, hasUB bool
	tlb, tub     int64 // true bounds: the data's first and last byte + 1
	align        int64 // the largest alignment of its basic types (Struct's padding)
	nruns        int64 // an upper bound of one instance's runs, saturating at maxRuns+1

	pair [2]Run // basic pair types: where value and index sit
	np   int    // runs of a basic type (1, or 2 for MPI_SHORT_INT)

	comp      atomic.Pointer[compiled] // computed once: runs and signature
	committed atomic.Bool              // Commit succeeded
}

// compiled is a type's runs for one instance (type-map order, merged) and
// its signature (compressed).
type compiled struct {
	flat []Run
	sig  []SigRun
}

// SigRun is a run of the type signature: N elements of basic type T (Byte
// counts as its own kind: IsByte).
type SigRun struct {
	T      atomics.Type
	IsByte bool
	N      int64
}

// maxRuns bounds the runs one committed type may have: beyond it Commit is
// ErrNoMem rather than an allocation of gigabytes (2^26 runs already take
// about 4 GiB and 20 s to compile here).
const maxRuns = 1 << 26

// basic types, made once.
var basics = func() map[atomics.Type]*Type {
	m := map[atomics.Type]*Type{}
	for t := atomics.Int8; t <= atomics.ShortIntT; t++ {
		m[t] = newBasic(t, false)
	}
	return m
}()

// Byte is MPI_BYTE: one uninterpreted byte. In a signature it matches any
// data, as MPI_BYTE and MPI_PACKED do; accumulates refuse it.
var Byte = newBasic(atomics.Uint8, true)

func newBasic(t atomics.Type, isByte bool) *Type {
	ext := int64(t.Size())
	// Predefined types are committed, as in MPI.
	b := &Type{comb: CombinerNamed, basic: t, isByte: isByte, ub: ext, align: ext, np: 1, nruns: 1}
	b.committed.Store(true)
	switch t {
	case atomics.FloatIntT, atomics.TwoIntT: // 4 + 4
		b.pair = [2]Run{{0, 4}, {4, 4}}
		b.align = 4
	case atomics.DoubleIntT, atomics.LongIntT: // 8 + 4, padded to 16
		b.pair = [2]Run{{0, 8}, {8, 4}}
		b.align = 8
	case atomics.ShortIntT: // 2, pad 2, 4
		b.pair = [2]Run{{0, 2}, {4, 4}}
		b.align, b.np, b.nruns = 4, 2, 2
	case atomics.Complex64:
		b.align = 4
	case atomics.Complex128:
		b.align = 8
	}
	b.size = ext
	if b.pair[1].Len > 0 {
		b.size = b.pair[0].Len + b.pair[1].Len
	}
	b.tlb, b.tub = 0, ext
	if b.pair[1].Len > 0 {
		b.tub = b.pair[1].Off + b.pair[1].Len
	}
	return b
}

// Basic returns the predefined type of an atomics.Type (MPI_INT64_T,
// MPI_DOUBLE, MPI_DOUBLE_INT, ...), or nil for an invalid one.
func Basic(t atomics.Type) *Type { return basics[t] }

func (t *Type) valid() bool { return t != nil && t.comb != 0 }

func check(t *Type, call string) error {
	if !t.valid() {
		return errorf(ErrType, "%s: nil or zero Type", call)
	}
	return nil
}

// Size is the number of data bytes of one instance (MPI_Type_size). Local.
func (t *Type) Size() int64 {
	if !t.valid() {
		return 0
	}
	return t.size
}

// Extent is ub - lb (MPI_Type_get_extent): how far apart consecutive
// instances lie in a buffer of count instances.
func (t *Type) Extent() int64 {
	if !t.valid() {
		return 0
	}
	return t.ub - t.lb
}

// LB is the lower bound (MPI_Type_get_extent's lb).
func (t *Type) LB() int64 {
	if !t.valid() {
		return 0
	}
	return t.lb
}

// TrueLB is the offset of the first data byte (MPI_Type_get_true_extent).
func (t *Type) TrueLB() int64 {
	if !t.valid() {
		return 0
	}
	return t.tlb
}

// TrueExtent is the span from the first data byte to the last, inclusive
// (MPI_Type_get_true_extent).
func (t *Type) TrueExtent() int64 {
	if !t.valid() {
		return 0
	}
	return t.tub - t.tlb
}

// Envelope returns how t was made and with what (MPI_Type_get_envelope and
// MPI_Type_get_contents in one): the combiner, the integer arguments, the
// byte displacements or strides, and the old types. The slices are copies.
func (t *Type) Envelope() (Combiner, []int, []int64, []*Type) {
	if !t.valid() {
		return 0, nil, nil, nil
	}
	return t.comb, append([]int(nil), t.ints...), append([]int64(nil), t.addrs...), append([]*Type(nil), t.types...)
}

// String describes t for printing: MPI_DOUBLE, or
// MPI_COMBINER_VECTOR(count=4 blocklength=1 stride=8; MPI_DOUBLE).
func (t *Type) String() string {
	if !t.valid() {
		return "<invalid type>"
	}
	if t.comb == CombinerNamed {
		if t.isByte {
			return "MPI_BYTE"
		}
		return t.basic.String()
	}
	var b strings.Builder
	b.WriteString(t.comb.String())
	b.WriteString("(")
	sep := ""
	for _, v := range t.ints {
		fmt.Fprintf(&b, "%s%d", sep, v)
		sep = " "
	}
	if len(t.addrs) > 0 {
		b.WriteString("; bytes")
		for _, v := range t.addrs {
			fmt.Fprintf(&b, " %d", v)
		}
	}
	for _, o := range t.types {
		fmt.Fprintf(&b, "; %v", o)
	}
	b.WriteString(")")
	return b.String()
}

// Committed reports whether Commit has succeeded on t.
func (t *Type) Committed() bool {
	if !t.valid() {
		return false
	}
	return t.committed.Load()
}

// mul, add and sub are int64 arithmetic that reports overflow.
func mul(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	hi, lo := bits.Mul64(uint64(abs(a)), uint64(abs(b)))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, false
	}
	r := int64(lo)
	if (a < 0) != (b < 0) {
		r = -r
	}
	return r, true
}

func add(a, b int64) (int64, bool) {
	r := a + b
	if (a > 0 && b > 0 && r < 0) || (a < 0 && b < 0 && r >= 0) {
		return 0, false
	}
	return r, true
}

func sub(a, b int64) (int64, bool) {
	r := a - b
	if (b > 0 && r > a) || (b < 0 && r < a) {
		return 0, false
	}
	return r, true
}

func abs(a int64) int64 {
	if a < 0 {
		return -a
	}
	return a
}
