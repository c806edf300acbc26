package dtype

import "slices"

// piece is count consecutive instances of t, the first at byte disp of the
// new type: every constructor is a list of pieces in type-map order.
type piece struct {
	t     *Type
	disp  int64
	count int64
}

// pieces yields t's pieces (none for a basic type). The arguments were
// checked by the constructor, and the products cannot overflow: bounds()
// computed them all first.
func (t *Type) pieces(yield func(piece) bool) {
	switch t.comb {
	case CombinerDup:
		yield(piece{t.types[0], 0, 1})
	case CombinerResized:
		yield(piece{t.types[0], 0, 1})
	case CombinerContiguous:
		yield(piece{t.types[0], 0, int64(t.ints[0])})
	case CombinerVector, CombinerHvector:
		o := t.types[0]
		count, bl := int64(t.ints[0]), int64(t.ints[1])
		stride := t.addrs[0] // bytes
		for i := range count {
			if !yield(piece{o, i * stride, bl}) {
				return
			}
		}
	case CombinerIndexed, CombinerHindexed, CombinerIndexedBlock, CombinerHindexedBlock:
		o := t.types[0]
		n := len(t.addrs)
		for k := range n {
			bl := int64(t.ints[0])
			if t.comb == CombinerIndexed || t.comb == CombinerHindexed {
				bl = int64(t.ints[k])
			}
			if !yield(piece{o, t.addrs[k], bl}) {
				return
			}
		}
	case CombinerStruct:
		for k, o := range t.types {
			if !yield(piece{o, t.addrs[k], int64(t.ints[k])}) {
				return
			}
		}
	case CombinerSubarray:
		t.subarrayPieces(yield)
	case CombinerDarray:
		yield(piece{t.inner, 0, 1})
	}
}

// shape yields what build needs of t's pieces: each piece with how many
// times its data count (size and runs). A Vector's blocks and a
// Subarray's rows are copies of one piece shifted, so their bounds are
// those of the first and the last copy (yielded with times 0): build's work
// does not grow with a count, which may be 2^40.
func (t *Type) shape(yield func(p piece, times int64) bool) {
	switch t.comb {
	case CombinerVector, CombinerHvector:
		count := int64(t.ints[0])
		if count == 0 {
			return
		}
		p := piece{t.types[0], 0, int64(t.ints[1])}
		if !yield(p, count) {
			return
		}
		p.disp = (count - 1) * t.addrs[0]
		yield(p, 0)
	case CombinerSubarray:
		t.subarrayShape(yield)
	default:
		t.pieces(func(p piece) bool { return yield(p, 1) })
	}
}

// build finishes a new type: its bounds, size and alignment from its
// pieces, with overflow checked.
func build(t *Type, call string) (*Type, error) {
	first, seen := true, false
	var lbM, ubM int64 // the markers' bounds, where pieces carry markers
	t.align = 1
	var err error
	t.shape(func(p piece, times int64) bool {
		o := p.t
		if p.count == 0 {
			return true // no typemap entry: no alignment either (MPI 4.1 §5.1.2's ε)
		}
		t.align = max(t.align, o.align)
		ext := o.ub - o.lb
		span, ok := mul(p.count-1, ext)
		if !ok {
			err = errorf(ErrArg, "%s: %d copies of a %d-byte extent overflow", call, p.count, ext)
			return false
		}
		sz, ok0 := mul(p.count, o.size)
		sz, ok1 := mul(sz, times)
		size, ok2 := add(t.size, sz)
		lo, ok3 := add(p.disp, min(0, span))
		hi, ok4 := add(p.disp, max(0, span))
		lb, ok5 := add(lo, o.lb)
		ub, ok6 := add(hi, o.ub)
		tlb, ok7 := add(lo, o.tlb)
		tub, ok8 := add(hi, o.tub)
		if !(ok0 && ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7 && ok8) {
			err = errorf(ErrArg, "%s: the type's bounds overflow int64", call)
			return false
		}
		t.size = size
		var runs int64
		if o.nruns == 1 && o.size == ext {
			runs = 1 // consecutive copies of a dense type: one run
		} else if r, ok := mul(o.nruns, p.count); ok {
			runs = r
		} else {
			runs = maxRuns + 1
		}
		if r, ok := mul(runs, times); ok {
			t.nruns = min(t.nruns+min(r, maxRuns+1), maxRuns+1)
		} else {
			t.nruns = maxRuns + 1
		}
		if first {
			t.lb, t.ub = lb, ub
		} else {
			t.lb, t.ub = min(t.lb, lb), max(t.ub, ub)
		}
		if o.hasLB {
			lbM = min(lb, lbM)
			if !t.hasLB {
				lbM, t.hasLB = lb, true
			}
		}
		if o.hasUB {
			ubM = max(ub, ubM)
			if !t.hasUB {
				ubM, t.hasUB = ub, true
			}
		}
		if o.size > 0 {
			if !seen {
				t.tlb, t.tub, seen = tlb, tub, true
			} else {
				t.tlb, t.tub = min(t.tlb, tlb), max(t.tub, tub)
			}
		}
		first = false
		return true
	})
	if err != nil {
		return nil, err
	}
	if t.hasLB {
		t.lb = lbM
	}
	if t.hasUB {
		t.ub = ubM
	}
	if t.align > 1 && !t.hasUB {
		// MPI's ε: the extent rounded up to the strictest alignment of
		// the typemap's entries, whatever the constructor (MPI 4.1 §5.1's
		// definition of ub; an hvector of ints 3 bytes apart is 16 bytes,
		// not 15); none after an ub marker, which fixes the upper bound.
		if ext := t.ub - t.lb; ext%t.align != 0 {
			ub, ok := add(t.ub, t.align-ext%t.align)
			if !ok {
				return nil, errorf(ErrArg, "%s: the type's upper bound, aligned, overflows int64", call)
			}
			t.ub = ub
		}
	}
	// Extents are differences of bounds: they must fit in int64 too, or
	// Span and a window's range check would compute a negative length.
	if _, ok := sub(t.ub, t.lb); !ok {
		return nil, errorf(ErrArg, "%s: the type's extent overflows int64", call)
	}
	if _, ok := sub(t.tub, t.tlb); !ok {
		return nil, errorf(ErrArg, "%s: the type's true extent overflows int64", call)
	}
	return t, nil
}

func olds(call string, ts ...*Type) error {
	for _, o := range ts {
		if err := check(o, call); err != nil {
			return err
		}
	}
	return nil
}

func nonneg(call, what string, vs ...int) error {
	for _, v := range vs {
		if v < 0 {
			return errorf(ErrCount, "%s: %s %d is negative", call, what, v)
		}
	}
	return nil
}

// Contiguous is count copies of old, one after another
// (MPI_Type_contiguous). Local.
func Contiguous(count int, old *Type) (*Type, error) {
	const call = "Contiguous"
	if err := olds(call, old); err != nil {
		return nil, err
	}
	if err := nonneg(call, "count", count); err != nil {
		return nil, err
	}
	return build(&Type{comb: CombinerContiguous, ints: []int{count}, types: []*Type{old}}, call)
}

// Vector is count blocks of blocklen copies of old, the blocks stride
// extents of old apart (MPI_Type_vector); stride may be negative. Local.
func Vector(count, blocklen, stride int, old *Type) (*Type, error) {
	const call = "Vector"
	if err := olds(call, old); err != nil {
		return nil, err
	}
	if err := nonneg(call, "count or block length", count, blocklen); err != nil {
		return nil, err
	}
	bstride, ok := mul(int64(stride), old.ub-old.lb)
	if !ok {
		return nil, errorf(ErrArg, "%s: stride %d extents of %d bytes overflow", call, stride, old.ub-old.lb)
	}
	if _, ok := mul(int64(max(count-1, 0)), bstride); !ok { // the last block's place; build checks the bounds
		return nil, errorf(ErrArg, "%s: %d strides of %d bytes overflow", call, count-1, bstride)
	}
	return build(&Type{comb: CombinerVector, ints: []int{count, blocklen, stride}, addrs: []int64{bstride}, types: []*Type{old}}, call)
}

// Hvector is Vector with the stride in bytes (MPI_Type_create_hvector).
// Local.
func Hvector(count, blocklen int, stride int64, old *Type) (*Type, error) {
	const call = "Hvector"
	if err := olds(call, old); err != nil {
		return nil, err
	}
	if err := nonneg(call, "count or block length", count, blocklen); err != nil {
		return nil, err
	}
	if _, ok := mul(int64(max(count-1, 0)), stride); !ok { // the last block's place; build checks the bounds
		return nil, errorf(ErrArg, "%s: %d strides of %d bytes overflow", call, count-1, stride)
	}
	return build(&Type{comb: CombinerHvector, ints: []int{count, blocklen}, addrs: []int64{stride}, types: []*Type{old}}, call)
}

// extents converts displacements in extents of old to bytes.
func extents(call string, displs []int, old *Type) ([]int64, error) {
	out := make([]int64, len(displs))
	for i, d := range displs {
		b, ok := mul(int64(d), old.ub-old.lb)
		if !ok {
			return nil, errorf(ErrArg, "%s: displacement %d extents of %d bytes overflows", call, d, old.ub-old.lb)
		}
		out[i] = b
	}
	return out, nil
}

// Indexed is blocks of blocklens[i] copies of old at displs[i] extents of
// old (MPI_Type_indexed); the slices must have the same length, displs may
// be negative and out of order. Local.
func Indexed(blocklens, displs []int, old *Type) (*Type, error) {
	const call = "Indexed"
	if err := olds(call, old); err != nil {
		return nil, err
	}
	if len(blocklens) != len(displs) {
		return nil, errorf(ErrArg, "%s: %d block lengths for %d displacements", call, len(blocklens), len(displs))
	}
	if err := nonneg(call, "block length", blocklens...); err != nil {
		return nil, err
	}
	b, err := extents(call, displs, old)
	if err != nil {
		return nil, err
	}
	return build(&Type{comb: CombinerIndexed, ints: slices.Concat(blocklens, displs), addrs: b, types: []*Type{old}}, call)
}

// Hindexed is Indexed with displacements in bytes
// (MPI_Type_create_hindexed). Local.
func Hindexed(blocklens []int, displs []int64, old *Type) (*Type, error) {
	const call = "Hindexed"
	if err := olds(call, old); err != nil {
		return nil, err
	}
	if len(blocklens) != len(displs) {
		return nil, errorf(ErrArg, "%s: %d block lengths for %d displacements", call, len(blocklens), len(displs))
	}
	if err := nonneg(call, "block length", blocklens...); err != nil {
		return nil, err
	}
	return build(&Type{comb: CombinerHindexed, ints: slices.Clone(blocklens), addrs: slices.Clone(displs), types: []*Type{old}}, call)
}

// IndexedBlock is Indexed with one block length for every block
// (MPI_Type_create_indexed_block). Local.
func IndexedBlock(blocklen int, displs []int, old *Type) (*Type, error) {
	const call = "IndexedBlock"
	if err := olds(call, old); err != nil {
		return nil, err
	}
	if err := nonneg(call, "block length", blocklen); err != nil {
		return nil, err
	}
	b, err := extents(call, displs, old)
	if err != nil {
		return nil, err
	}
	return build(&Type{comb: CombinerIndexedBlock, ints: append([]int{blocklen}, displs...), addrs: b, types: []*Type{old}}, call)
}

// HindexedBlock is IndexedBlock with displacements in bytes
// (MPI_Type_create_hindexed_block). Local.
func HindexedBlock(blocklen int, displs []int64, old *Type) (*Type, error) {
	const call = "HindexedBlock"
	if err := olds(call, old); err != nil {
		return nil, err
	}
	if err := nonneg(call, "block length", blocklen); err != nil {
		return nil, err
	}
	return build(&Type{comb: CombinerHindexedBlock, ints: []int{blocklen}, addrs: slices.Clone(displs), types: []*Type{old}}, call)
}

// Struct is blocks of blocklens[i] copies of types[i] at displs[i] bytes
// (MPI_Type_create_struct); the extent is rounded up to the strictest
// alignment of its basic types (of blocks of length > 0), as MPI says for
// every constructor's type, unless a component carries an upper-bound
// marker (see Resized). Local.
func Struct(blocklens []int, displs []int64, types []*Type) (*Type, error) {
	const call = "Struct"
	if err := olds(call, types...); err != nil {
		return nil, err
	}
	if len(blocklens) != len(displs) || len(blocklens) != len(types) {
		return nil, errorf(ErrArg, "%s: %d block lengths, %d displacements and %d types", call, len(blocklens), len(displs), len(types))
	}
	if err := nonneg(call, "block length", blocklens...); err != nil {
		return nil, err
	}
	return build(&Type{comb: CombinerStruct, ints: slices.Clone(blocklens), addrs: slices.Clone(displs), types: slices.Clone(types)}, call)
}

// Resized is old with its lower bound set to lb and its extent to extent
// (MPI_Type_create_resized): the data stay, the spacing of consecutive
// instances changes. Its bounds are markers (MPI 4.1 §5.1.7), which every
// type built from it carries: that type's lower bound is the least lower
// marker of its components and its upper bound the greatest upper marker,
// whatever data lie beyond them, and a Struct adds no padding after an
// upper marker (as Open MPI computes; MPICH 4.0 differs). Local.
func Resized(old *Type, lb, extent int64) (*Type, error) {
	const call = "Resized"
	if err := olds(call, old); err != nil {
		return nil, err
	}
	ub, ok := add(lb, extent)
	if !ok {
		return nil, errorf(ErrArg, "%s: lb %d + extent %d overflows", call, lb, extent)
	}
	t := &Type{comb: CombinerResized, addrs: []int64{lb, extent}, types: []*Type{old}}
	if _, err := build(t, call); err != nil {
		return nil, err
	}
	t.lb, t.ub, t.hasLB, t.hasUB = lb, ub, true, true
	return t, nil
}

// Dup is a copy of old (MPI_Type_dup): the same type map, and committed
// if t is (a predefined type is): "the same committed state" (MPI 4.1
// §5.1.10). Local.
func (t *Type) Dup() (*Type, error) {
	if err := check(t, "Dup"); err != nil {
		return nil, err
	}
	d, err := build(&Type{comb: CombinerDup, types: []*Type{t}}, "Dup")
	if err != nil {
		return nil, err
	}
	d.lb, d.ub, d.hasLB, d.hasUB, d.nruns = t.lb, t.ub, t.hasLB, t.hasUB, t.nruns
	if t.committed.Load() {
		if _, _, err := t.compile(); err != nil {
			return nil, err
		}
		d.comp.Store(t.comp.Load()) // the same runs and signature, never written
		d.committed.Store(true)
	}
	return d, nil
}
