package dtype

// Distrib is how Darray spreads a dimension over the process grid
// (MPI_DISTRIBUTE_BLOCK, _CYCLIC, _NONE).
type Distrib uint8

// Distributions.
const (
	DistributeBlock  Distrib = iota + 1 // contiguous blocks, one per process
	DistributeCyclic                    // blocks dealt round-robin
	DistributeNone                      // not distributed: the grid's size there is 1
)

// DefaultDarg is Darray's distribution argument for the default block
// size (MPI_DISTRIBUTE_DFLT_DARG): ceil(gsize/psize) for a block
// distribution, 1 for a cyclic one.
const DefaultDarg = -1

// Darray is the part of an ndims-dimensional array of gsizes elements of
// old that process rank of a grid of psizes processes (size in all,
// ranked in row-major order whatever the array's order) holds, the array
// distributed along each dimension as distribs says with block sizes
// dargs (MPI_Type_create_darray). The elements come in the array's own
// order; the type's extent is the whole array's and its lower bound 0,
// as Subarray's. Local. Every gsize and psize must be ≥ 1 and the
// psizes' product size; a block distribution's darg times its psize must
// cover its gsize; a dimension not distributed has psize 1 (ErrArg
// otherwise).
func Darray(size, rank int, gsizes []int, distribs []Distrib, dargs, psizes []int, order Order, old *Type) (*Type, error) {
	const call = "Darray"
	if err := olds(call, old); err != nil {
		return nil, err
	}
	n := len(gsizes)
	if n == 0 || len(distribs) != n || len(dargs) != n || len(psizes) != n {
		return nil, errorf(ErrArg, "%s: %d gsizes, %d distribs, %d dargs and %d psizes: want the same number ≥ 1",
			call, len(gsizes), len(distribs), len(dargs), len(psizes))
	}
	if order != OrderC && order != OrderFortran {
		return nil, errorf(ErrArg, "%s: order %d is neither OrderC nor OrderFortran", call, order)
	}
	if size < 1 || rank < 0 || rank >= size {
		return nil, errorf(ErrArg, "%s: rank %d of %d processes", call, rank, size)
	}
	procs, elems := 1, int64(1)
	for d := range n {
		if gsizes[d] < 1 || psizes[d] < 1 {
			return nil, errorf(ErrArg, "%s: dimension %d: gsize %d, psize %d", call, d, gsizes[d], psizes[d])
		}
		if dargs[d] < 1 && dargs[d] != DefaultDarg {
			return nil, errorf(ErrArg, "%s: dimension %d: darg %d is neither ≥ 1 nor DefaultDarg", call, d, dargs[d])
		}
		switch distribs[d] {
		case DistributeNone:
			if psizes[d] != 1 {
				return nil, errorf(ErrArg, "%s: dimension %d is not distributed but its psize is %d", call, d, psizes[d])
			}
		case DistributeBlock:
			if dargs[d] != DefaultDarg && int64(dargs[d])*int64(psizes[d]) < int64(gsizes[d]) {
				return nil, errorf(ErrArg, "%s: dimension %d: blocks of %d on %d processes do not cover %d elements",
					call, d, dargs[d], psizes[d], gsizes[d])
			}
		case DistributeCyclic:
		default:
			return nil, errorf(ErrArg, "%s: dimension %d: distribution %d", call, d, distribs[d])
		}
		var ok bool
		if procs > size || psizes[d] > size {
			return nil, errorf(ErrArg, "%s: the psizes' product is not %d", call, size)
		}
		procs *= psizes[d]
		if elems, ok = mul(elems, int64(gsizes[d])); !ok {
			return nil, errorf(ErrArg, "%s: the array's size overflows", call)
		}
	}
	if procs != size {
		return nil, errorf(ErrArg, "%s: the psizes' product is %d, not %d", call, procs, size)
	}
	ext := old.ub - old.lb
	whole, ok := mul(elems, ext)
	if !ok {
		return nil, errorf(ErrArg, "%s: the array's extent overflows", call)
	}

	// This process's coordinates in the grid, row-major.
	coords := make([]int, n)
	for d, r := n-1, rank; d >= 0; d-- {
		coords[d], r = r%psizes[d], r/psizes[d]
	}
	// The dimensions from the fastest varying to the slowest, and the
	// bytes between neighbours along each.
	dims := make([]int, n)
	for i := range n {
		if order == OrderC {
			dims[i] = n - 1 - i
		} else {
			dims[i] = i
		}
	}
	// Built from the fastest dimension out: each level is the owned runs
	// of its dimension, each run of copies of the level inside, spaced by
	// the dimension's stride.
	inner, stride := old, ext
	for i, d := range dims {
		lens, starts := ownedRuns(gsizes[d], distribs[d], dargs[d], psizes[d], coords[d])
		displs := make([]int64, len(starts))
		for k, s := range starts {
			displs[k] = int64(s) * stride // within whole: cannot overflow
		}
		elem := inner
		if i > 0 {
			var err error
			if elem, err = Resized(inner, 0, stride); err != nil {
				return nil, err
			}
		}
		var err error
		if inner, err = Hindexed(lens, displs, elem); err != nil {
			return nil, err
		}
		stride *= int64(gsizes[d])
	}
	ints := []int{size, rank, n}
	ints = append(ints, gsizes...)
	for _, v := range distribs {
		ints = append(ints, int(v))
	}
	ints = append(ints, dargs...)
	ints = append(ints, psizes...)
	ints = append(ints, int(order))
	t := &Type{comb: CombinerDarray, ints: ints, types: []*Type{old}, inner: inner}
	if _, err := build(t, call); err != nil {
		return nil, err
	}
	// As if resized to [0, whole): markers (MPI 4.1 §5.1.4).
	t.lb, t.ub, t.hasLB, t.hasUB = 0, whole, true, true
	return t, nil
}

// ownedRuns is the runs of indices along one dimension of gsize elements
// that the process at coordinate c of psize holds: their lengths and first
// indices, in increasing order.
func ownedRuns(gsize int, dist Distrib, darg, psize, c int) (lens, starts []int) {
	switch dist {
	case DistributeNone:
		return []int{gsize}, []int{0}
	case DistributeBlock:
		b := darg
		if b == DefaultDarg {
			b = (gsize + psize - 1) / psize
		}
		lo := min(c*b, gsize)
		hi := min(lo+b, gsize)
		if hi > lo {
			return []int{hi - lo}, []int{lo}
		}
		return nil, nil
	}
	k := darg
	if k == DefaultDarg {
		k = 1
	}
	for s := c * k; s < gsize; s += psize * k {
		lens, starts = append(lens, min(k, gsize-s)), append(starts, s)
	}
	return lens, starts
}
