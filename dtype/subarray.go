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
	t.lb, t.ub = 0, whole
	return t, nil
}

// subarrayPieces yields one piece per row of the block: subsizes[fastest]
// consecutive elements.
func (t *Type) subarrayPieces(yield func(piece) bool) {
	o := t.types[0]
	order := Order(t.ints[0])
	n := (len(t.ints) - 1) / 3
	sizes, subsizes, starts := t.ints[1:1+n], t.ints[1+n:1+2*n], t.ints[1+2*n:]
	// dims from slowest to fastest
	dims := make([]int, n)
	for i := range n {
		if order == OrderC {
			dims[i] = i
		} else {
			dims[i] = n - 1 - i
		}
	}
	ext := o.ub - o.lb
	stride := make([]int64, n) // bytes between neighbours in each dimension
	s := ext
	for i := n - 1; i >= 0; i-- {
		stride[dims[i]] = s
		s *= int64(sizes[dims[i]])
	}
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
