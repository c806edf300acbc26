package comm

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/shmrun/shmrun/atomics"
)

// Cartesian process topologies (MPI 4.1 chapter 8), written once over
// methods both backends' Comm have (Rank, Size, Split, Allreduce): a
// communicator's topology is a local annotation, cart, set when CartCreate
// or CartSub makes it and copied by Dup. Graph and distributed-graph
// topologies and the neighborhood collectives are not provided.

// Topology is the kind of virtual topology a communicator has, as
// MPI_Topo_test reports it.
type Topology int

// Topology kinds, with the MPI 5.0 ABI's values.
const (
	// TopoUndefined: no virtual topology (MPI_UNDEFINED).
	TopoUndefined Topology = Undefined
	// TopoCart: a Cartesian topology from CartCreate or CartSub, or a Dup
	// of such a communicator (MPI_CART).
	TopoCart Topology = 211
)

// cartTopo is a communicator's Cartesian topology: the extent and the
// periodicity of each dimension, ranks laid out in row-major order (the
// last dimension varies fastest), as MPI_Cart_create lays them out. It is
// never changed after it is made, so a Dup shares it.
type cartTopo struct {
	dims    []int
	periods []bool
}

// Topology returns the kind of c's virtual topology (MPI_Topo_test):
// TopoCart or TopoUndefined. Local; never blocks. A nil, freed or
// finalized communicator has none.
func (c *Comm) Topology() Topology {
	if c.valid("Topology") != nil || c.cart == nil {
		return TopoUndefined
	}
	return TopoCart
}

// cartOf is c's Cartesian topology for call, or an error naming call: c
// unusable, or without one (ErrTopology).
func (c *Comm) cartOf(call string) (*cartTopo, error) {
	if err := c.valid(call); err != nil {
		return nil, err
	}
	if c.cart == nil {
		return nil, fmt.Errorf("comm: %s on rank %d: the communicator has no Cartesian topology: %w", call, c.Rank(), ErrTopology)
	}
	return c.cart, nil
}

// DimsCreate fills the zero entries of dims with a balanced factorization
// of nnodes (MPI_Dims_create): afterwards the product of dims is nnodes,
// positive entries are kept, and the filled ones are the factorization of
// nnodes / (the product of the positive entries) whose largest and
// smallest factors differ least, in non-increasing order. Local; never
// blocks. nnodes < 1, a negative entry, or an nnodes that the positive
// entries' product does not divide (or, with no zero entry, does not
// equal) is ErrArg, and dims is left as it was.
func DimsCreate(nnodes int, dims []int) error {
	if nnodes < 1 {
		return fmt.Errorf("comm: DimsCreate: nnodes %d is not positive: %w", nnodes, ErrArg)
	}
	fixed, free := 1, 0
	for i, d := range dims {
		switch {
		case d < 0:
			return fmt.Errorf("comm: DimsCreate: dims[%d] = %d is negative: %w", i, d, ErrArg)
		case d == 0:
			free++
		default:
			if fixed > nnodes/d { // fixed*d > nnodes, without overflow
				return fmt.Errorf("comm: DimsCreate: the positive entries of dims %v multiply past nnodes %d: %w", dims, nnodes, ErrArg)
			}
			fixed *= d
		}
	}
	if nnodes%fixed != 0 || (free == 0 && fixed != nnodes) {
		return fmt.Errorf("comm: DimsCreate: nnodes %d is not a multiple of %d, the product of dims %v: %w", nnodes, fixed, dims, ErrArg)
	}
	if free == 0 {
		return nil
	}
	f := balanced(nnodes/fixed, free)
	for i := range dims {
		if dims[i] == 0 {
			dims[i], f = f[0], f[1:]
		}
	}
	return nil
}

// balanced returns the k factors of m (m, k >= 1), non-increasing, whose
// largest and smallest differ least; of those with the same difference,
// the one with the smallest largest factor. It searches every
// non-increasing factorization, pruning those whose first factor is below
// the k-th root of what is left (it could not be the largest).
func balanced(m, k int) []int {
	best := make([]int, k)
	for i := range best {
		best[i] = 1
	}
	best[0] = m
	cur := make([]int, 0, k)
	var search func(rest, k, max int)
	search = func(rest, k, max int) {
		if k == 0 {
			if rest != 1 {
				return
			}
			d, bd := cur[0]-cur[len(cur)-1], best[0]-best[len(best)-1]
			if d < bd || (d == bd && cur[0] < best[0]) {
				copy(best, cur)
			}
			return
		}
		if k == 1 {
			if rest <= max {
				cur = append(cur, rest)
				search(1, 0, rest)
				cur = cur[:len(cur)-1]
			}
			return
		}
		for d := min(rest, max); d >= 1; d-- {
			if rest%d != 0 {
				continue
			}
			if !powAtLeast(d, k, rest) {
				break // smaller d cannot be the largest of k factors of rest
			}
			cur = append(cur, d)
			search(rest/d, k-1, d)
			cur = cur[:len(cur)-1]
		}
	}
	search(m, k, m)
	return best
}

// powAtLeast reports whether d^k >= n (d >= 1), without overflow.
func powAtLeast(d, k, n int) bool {
	p := 1
	for range k {
		if p >= (n+d-1)/d { // p*d >= n
			return true
		}
		p *= d
	}
	return p >= n
}

// product is the product of dims, or -1 past limit.
func product(dims []int, limit int) int {
	p := 1
	for _, d := range dims {
		if d <= 0 || p > limit/d {
			return -1
		}
		p *= d
	}
	return p
}

// agreeArgs makes the argument check of a collective topology call every
// rank's: each rank passes its own argument error (nil if none) and a hash
// of the arguments that must be the same on every rank; a rank's error,
// or ranks passing different arguments, is an error on every rank. One
// Allreduce over c.
func (c *Comm) agreeArgs(call string, lerr error, h uint64) error {
	v := []int64{0, int64(h >> 1), -int64(h >> 1)}
	if lerr != nil {
		v[0] = int64(c.Rank() + 1)
	}
	if err := AllreduceInPlace(c, v, atomics.Max); err != nil {
		return fmt.Errorf("comm: %s on rank %d: %w", call, c.Rank(), err)
	}
	switch {
	case lerr != nil:
		return lerr
	case v[0] != 0:
		return fmt.Errorf("comm: %s on rank %d: rank %d passed a bad argument: %w", call, c.Rank(), v[0]-1, ErrArg)
	case v[1] != -v[2]:
		return fmt.Errorf("comm: %s on rank %d: the ranks passed different arguments: %w", call, c.Rank(), ErrArg)
	}
	return nil
}

// argHash hashes ints and bools, for agreeArgs.
func argHash(ints []int, bools []bool) uint64 {
	h := fnv.New64a()
	_ = binary.Write(h, binary.LittleEndian, int64(len(ints)))
	for _, x := range ints {
		_ = binary.Write(h, binary.LittleEndian, int64(x))
	}
	for _, b := range bools {
		_ = binary.Write(h, binary.LittleEndian, b)
	}
	return h.Sum64()
}

// CartCreate makes a communicator with a Cartesian topology
// (MPI_Cart_create): len(dims) dimensions of dims[i] ranks each, periodic
// (wrapping around) where periods[i] is true. Collective over c; it blocks
// until every rank of c has called it. Every rank passes the same dims and
// periods. The first product(dims) ranks of c form the new communicator,
// in c's order: reorder is accepted but this implementation always keeps
// that identity ordering, as the standard allows. Ranks of c beyond the
// product get nil and no error (MPI_COMM_NULL). No dimensions (len(dims)
// == 0) make a zero-dimensional topology of c's rank 0 alone. Lengths of
// dims and periods that differ, a dimension below 1, a product above
// c.Size(), or ranks passing different arguments are ErrArg on every rank.
func (c *Comm) CartCreate(dims []int, periods []bool, reorder bool) (*Comm, error) {
	const call = "CartCreate"
	if err := c.valid(call); err != nil {
		return nil, err
	}
	var lerr error
	n := product(dims, c.Size())
	switch {
	case len(dims) != len(periods):
		lerr = fmt.Errorf("comm: %s on rank %d: %d dims but %d periods: %w", call, c.Rank(), len(dims), len(periods), ErrArg)
	case slices.ContainsFunc(dims, func(d int) bool { return d < 1 }):
		lerr = fmt.Errorf("comm: %s on rank %d: dims %v has an entry below 1: %w", call, c.Rank(), dims, ErrArg)
	case n < 0:
		lerr = fmt.Errorf("comm: %s on rank %d: dims %v hold more ranks than the communicator's %d: %w", call, c.Rank(), dims, c.Size(), ErrArg)
	}
	if err := c.agreeArgs(call, lerr, argHash(dims, periods)); err != nil {
		return nil, err
	}
	color := 0
	if c.Rank() >= n {
		color = Undefined
	}
	nc, err := c.Split(color, c.Rank())
	if err != nil || nc == nil {
		return nil, err
	}
	nc.cart = &cartTopo{dims: slices.Clone(dims), periods: slices.Clone(periods)}
	return nc, nil
}

// CartGet returns c's Cartesian topology (MPI_Cart_get): the extent and
// periodicity of each dimension and this rank's coordinates, in fresh
// slices. Local; never blocks. ErrTopology if c has no Cartesian topology.
func (c *Comm) CartGet() (dims []int, periods []bool, coords []int, err error) {
	t, err := c.cartOf("CartGet")
	if err != nil {
		return nil, nil, nil, err
	}
	return slices.Clone(t.dims), slices.Clone(t.periods), t.coords(c.Rank()), nil
}

// coords are rank's coordinates in t (row-major).
func (t *cartTopo) coords(rank int) []int {
	co := make([]int, len(t.dims))
	for i := len(t.dims) - 1; i >= 0; i-- {
		co[i] = rank % t.dims[i]
		rank /= t.dims[i]
	}
	return co
}

// rank is the rank at coords in t, periodic dimensions wrapped; ok is
// false when a coordinate of a non-periodic dimension is out of range.
func (t *cartTopo) rank(coords []int) (r int, ok bool) {
	for i, x := range coords {
		d := t.dims[i]
		if x < 0 || x >= d {
			if !t.periods[i] {
				return 0, false
			}
			x = ((x % d) + d) % d
		}
		r = r*d + x
	}
	return r, true
}

// CartRank returns the rank of the process at coords in c's Cartesian
// topology (MPI_Cart_rank). Local; never blocks. A coordinate out of range
// wraps around in a periodic dimension and is ErrArg in a non-periodic
// one, as is a len(coords) other than the number of dimensions.
// ErrTopology if c has no Cartesian topology.
func (c *Comm) CartRank(coords []int) (int, error) {
	const call = "CartRank"
	t, err := c.cartOf(call)
	if err != nil {
		return 0, err
	}
	if len(coords) != len(t.dims) {
		return 0, fmt.Errorf("comm: %s on rank %d: %d coordinates for %d dimensions: %w", call, c.Rank(), len(coords), len(t.dims), ErrArg)
	}
	r, ok := t.rank(coords)
	if !ok {
		return 0, fmt.Errorf("comm: %s on rank %d: coordinates %v out of range of the non-periodic dims %v: %w", call, c.Rank(), coords, t.dims, ErrArg)
	}
	return r, nil
}

// CartCoords returns the coordinates of rank in c's Cartesian topology
// (MPI_Cart_coords). Local; never blocks. ErrRank for a rank outside
// [0, c.Size()); ErrTopology if c has no Cartesian topology.
func (c *Comm) CartCoords(rank int) ([]int, error) {
	const call = "CartCoords"
	t, err := c.cartOf(call)
	if err != nil {
		return nil, err
	}
	if rank < 0 || rank >= c.Size() {
		return nil, fmt.Errorf("comm: %s on rank %d: rank %d outside [0, %d): %w", call, c.Rank(), rank, c.Size(), ErrRank)
	}
	return t.coords(rank), nil
}

// CartShift returns the neighbours of this rank disp steps along dimension
// dim of c's Cartesian topology (MPI_Cart_shift): dest is the rank disp
// steps up (towards higher coordinates), source the rank disp steps down,
// so that a Sendrecv to dest from source shifts data up. Past the edge of
// a non-periodic dimension the neighbour is ProcNull; a periodic one
// wraps around. Local; never blocks. ErrArg for dim outside [0, number of
// dimensions); ErrTopology if c has no Cartesian topology.
func (c *Comm) CartShift(dim, disp int) (source, dest int, err error) {
	const call = "CartShift"
	t, err := c.cartOf(call)
	if err != nil {
		return 0, 0, err
	}
	if dim < 0 || dim >= len(t.dims) {
		return 0, 0, fmt.Errorf("comm: %s on rank %d: dimension %d outside [0, %d): %w", call, c.Rank(), dim, len(t.dims), ErrArg)
	}
	co := t.coords(c.Rank())
	at := func(x int) int {
		co := slices.Clone(co)
		co[dim] = x
		r, ok := t.rank(co)
		if !ok {
			return ProcNull
		}
		return r
	}
	x := co[dim]
	return at(x - disp), at(x + disp), nil
}

// CartSub splits c's Cartesian grid into sub-grids (MPI_Cart_sub): the
// ranks whose coordinates agree in every dimension i with remain[i] false
// form a communicator with the Cartesian topology of the remaining
// dimensions (their extents and periodicity, in their order), ranked in
// row-major order of those coordinates. Collective over c; it blocks until
// every rank of c has called it. With every remain false each rank gets a
// communicator of itself alone, with a zero-dimensional topology. A
// len(remain) other than the number of dimensions, or ranks passing
// different remain, is ErrArg on every rank; ErrTopology (on every rank)
// if c has no Cartesian topology.
func (c *Comm) CartSub(remain []bool) (*Comm, error) {
	const call = "CartSub"
	if err := c.valid(call); err != nil {
		return nil, err
	}
	t := c.cart
	if t == nil {
		// The same on every rank of c: they share the topology.
		return nil, fmt.Errorf("comm: %s on rank %d: the communicator has no Cartesian topology: %w", call, c.Rank(), ErrTopology)
	}
	var lerr error
	if len(remain) != len(t.dims) {
		lerr = fmt.Errorf("comm: %s on rank %d: %d remain flags for %d dimensions: %w", call, c.Rank(), len(remain), len(t.dims), ErrArg)
	}
	if err := c.agreeArgs(call, lerr, argHash(nil, remain)); err != nil {
		return nil, err
	}
	co := t.coords(c.Rank())
	color, key := 0, 0
	sub := &cartTopo{dims: []int{}, periods: []bool{}}
	for i, keep := range remain {
		if keep {
			key = key*t.dims[i] + co[i]
			sub.dims = append(sub.dims, t.dims[i])
			sub.periods = append(sub.periods, t.periods[i])
		} else {
			color = color*t.dims[i] + co[i]
		}
	}
	nc, err := c.Split(color, key)
	if err != nil {
		return nil, err
	}
	nc.cart = sub
	return nc, nil
}
