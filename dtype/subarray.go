package dtype

// Order is the storage order of Subarray's array (MPI_ORDER_C,
// MPI_ORDER_FORTRAN).
type Order uint8

// Orders.
const (
	OrderC       Order = iota + 1 // the last dimension varies fastest
	OrderFortran                  // the first dimension varies fastest
)

// Subarray is the subsizes block at starts of an array of sizes elements of
// old in the given order (MPI_Type_create_subarray). Its extent is the
// whole array's, its lower bound 0, so count instances are count whole
// arrays. Local. Every size must be ≥ 1, every subsize ≥ 1 and every
// start ≥ 0 with start+subsize ≤ size (ErrArg otherwise).
func Subarray(sizes, subsizes, starts []int, order Order, old *Type) (*Type, error) {
	const call = "Subarray"
	if err := olds(call, old); err != nil {
		return nil, err
	}
	n := len(sizes)
	if n == 0 || len(subsizes) != n || len(starts) != n {
		return nil, errorf(ErrArg, "%s: %d sizes, %d subsizes and %d starts: want the same number ≥ 1", call, len(sizes), len(subsizes), len(starts))
	}
	if order != OrderC && order != OrderFortran {
		return nil, errorf(ErrArg, "%s: order %d is neither OrderC nor OrderFortran", call, order)
	}
	elems := int64(1)
	for d := range n {
		if sizes[d] < 1 || subsizes[d] < 1 || starts[d] < 0 || starts[d] > sizes[d]-subsizes[d] {
			return nil, errorf(ErrArg, "%s: dimension %d: size %d, subsize %d, start %d", call, d, sizes[d], subsizes[d], starts[d])
		}
		var ok bool
		if elems, ok = mul(elems, int64(sizes[d])); !ok {
			return nil, errorf(ErrArg, "%s: the array's size overflows", call)
		}
	}
	ext := old.ub - old.lb
	whole, ok := mul(elems, ext)
	if !ok {
		return nil, errorf(ErrArg, "%s: the array's extent overflows", call)
	}
	ints := append(append(append([]int{int(order)}, sizes...), subsizes...), starts...)
	t := &Type{comb: CombinerSubarray, ints: ints, types: []*Type{old}}
	if _, err := build(t, call); err != nil {
		return nil, err
	}
	// As if resized to [0, whole): markers (MPI 4.1 §5.1.3).
	t.lb, t.ub, t.hasLB, t.hasUB = 0, whole, true, true
	return t, nil
}

// subarrayGeom is the shape of a Subarray's block: its sizes, subsizes
// and starts, its dimensions from the slowest to the fastest, and the
// bytes between neighbours in each dimension.
func (t *Type) subarrayGeom() (sizes, subsizes, starts, dims []int, stride []int64) {
	o := t.types[0]
	order := Order(t.ints[0])
	n := (len(t.ints) - 1) / 3
	sizes, subsizes, starts = t.ints[1:1+n], t.ints[1+n:1+2*n], t.ints[1+2*n:]
	dims = make([]int, n)
	for i := range n {
		if order == OrderC {
			dims[i] = i
		} else {
			dims[i] = n - 1 - i
		}
	}
	stride = make([]int64, n)
	s := o.ub - o.lb
	for i := n - 1; i >= 0; i-- {
		stride[dims[i]] = s
		s *= int64(sizes[dims[i]])
	}
	return sizes, subsizes, starts, dims, stride
}

// subarrayShape is shape for a Subarray: its first row, counted once per
// row, and the rows nearest the array's start and its end (bounds only).
// The rows are one row shifted by a sum over the dimensions, so the
// extremes are at the block's corners.
func (t *Type) subarrayShape(yield func(piece, int64) bool) {
	o := t.types[0]
	_, subsizes, starts, dims, stride := t.subarrayGeom()
	fast := dims[len(dims)-1]
	rows, first, lo, hi := int64(1), int64(0), int64(0), int64(0)
	for d := range dims {
		a := int64(starts[d]) * stride[d]
		first += a
		if d == fast {
			lo, hi = lo+a, hi+a
			continue
		}
		rows *= int64(subsizes[d])
		b := int64(starts[d]+subsizes[d]-1) * stride[d]
		lo, hi = lo+min(a, b), hi+max(a, b)
	}
	row := int64(subsizes[fast])
	if yield(piece{o, first, row}, rows) && yield(piece{o, lo, row}, 0) {
		yield(piece{o, hi, row}, 0)
	}
}

// subarrayPieces yields one piece per row of the block: subsizes[fastest]
// consecutive elements.
func (t *Type) subarrayPieces(yield func(piece) bool) {
	o := t.types[0]
	_, subsizes, starts, dims, stride := t.subarrayGeom()
	n := len(dims)
	fast := dims[n-1]
	idx := make([]int, n)
	for {
		off := int64(0)
		for d := range n {
			off += int64(starts[d]+idx[d]) * stride[d]
		}
		if !yield(piece{o, off, int64(subsizes[fast])}) {
			return
		}
		// next row: odometer over every dimension but the fastest
		i := n - 2
		for ; i >= 0; i-- {
			d := dims[i]
			idx[d]++
			if idx[d] < subsizes[d] {
				break
			}
			idx[d] = 0
		}
		if i < 0 {
			return
		}
	}
}
