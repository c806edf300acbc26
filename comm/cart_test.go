package comm_test

// Cartesian topologies. The bodies use only the API both backends provide,
// so they run under the MPI backend too (go test -tags mpi -run Cart).

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
)

func init() {
	ranktest.Register("cart", cartBody)
	ranktest.Register("cart_errors", cartErrors)
}

// TestCart runs the Cartesian bodies on 1, 2, 6 and 12 ranks (12 on 2
// cores: oversubscribed); 12 ranks make a 3x4 grid.
func TestCart(t *testing.T) {
	ranktest.RunEach(t, []string{"cart", "cart_errors"}, []int{1, 2, 6, 12})
}

func TestDimsCreate(t *testing.T) {
	for _, tc := range []struct {
		nnodes   int
		dims     []int
		want     []int
		wantErr  bool
		wantSame bool // on error: dims left as they were
	}{
		{12, []int{0, 0}, []int{4, 3}, false, false},
		{7, []int{0, 0}, []int{7, 1}, false, false},
		{6, []int{0, 3, 0}, []int{2, 3, 1}, false, false},
		{6, []int{0, 0}, []int{3, 2}, false, false},
		{1, []int{0, 0, 0}, []int{1, 1, 1}, false, false},
		{16, []int{0, 0, 0}, []int{4, 2, 2}, false, false},
		{36, []int{0, 0}, []int{6, 6}, false, false},
		{64, []int{0, 0, 0}, []int{4, 4, 4}, false, false},
		{24, []int{0, 0, 0}, []int{4, 3, 2}, false, false},
		{30, []int{0, 0, 0}, []int{5, 3, 2}, false, false},
		{12, []int{0, 0, 0, 0}, []int{3, 2, 2, 1}, false, false},
		{18, []int{0, 0}, []int{6, 3}, false, false},
		{1000, []int{0, 0, 0}, []int{10, 10, 10}, false, false},
		{8, []int{2, 0, 0}, []int{2, 2, 2}, false, false},
		{12, []int{3, 4}, []int{3, 4}, false, false},
		{5, []int{0}, []int{5}, false, false},
		{1, []int{}, []int{}, false, false},
		{97 * 89, []int{0, 0}, []int{97, 89}, false, false},
		{7, []int{2, 0}, nil, true, true},                               // 2 does not divide 7
		{12, []int{3, 5}, nil, true, true},                              // no zero entry and 15 != 12
		{6, []int{0, -1}, nil, true, true},                              // negative
		{0, []int{0, 0}, nil, true, true},                               // nnodes not positive
		{-4, []int{0}, nil, true, true},                                 // nnodes negative
		{2, []int{}, nil, true, true},                                   // no dims, product 1 != 2
		{4, []int{8, 0}, nil, true, true},                               // 8 > 4
		{1 << 40, []int{1 << 30, 1 << 30, 1 << 30, 0}, nil, true, true}, // overflow
	} {
		dims := slices.Clone(tc.dims)
		err := comm.DimsCreate(tc.nnodes, dims)
		if tc.wantErr {
			if !errors.Is(err, comm.ErrArg) {
				t.Errorf("DimsCreate(%d, %v): error %v, want ErrArg", tc.nnodes, tc.dims, err)
			}
			if !slices.Equal(dims, tc.dims) {
				t.Errorf("DimsCreate(%d, %v) failed but changed dims to %v", tc.nnodes, tc.dims, dims)
			}
			continue
		}
		if err != nil || !slices.Equal(dims, tc.want) {
			t.Errorf("DimsCreate(%d, %v) = %v, %v; want %v", tc.nnodes, tc.dims, dims, err, tc.want)
		}
	}
}

// TestDimsCreateProperties checks every nnodes up to 400 in 1 to 4
// dimensions against a brute force over all factorizations: the product,
// the order, and that no factorization is more balanced.
func TestDimsCreateProperties(t *testing.T) {
	for n := 1; n <= 400; n++ {
		for k := 1; k <= 4; k++ {
			dims := make([]int, k)
			if err := comm.DimsCreate(n, dims); err != nil {
				t.Fatalf("DimsCreate(%d, %d zeros): %v", n, k, err)
			}
			p := 1
			for i, d := range dims {
				p *= d
				if i > 0 && d > dims[i-1] {
					t.Fatalf("DimsCreate(%d, %d zeros) = %v: not non-increasing", n, k, dims)
				}
			}
			if p != n {
				t.Fatalf("DimsCreate(%d, %d zeros) = %v: product %d", n, k, dims, p)
			}
			if best := bestSpread(n, k); dims[0]-dims[k-1] != best {
				t.Fatalf("DimsCreate(%d, %d zeros) = %v: spread %d, a factorization has %d", n, k, dims, dims[0]-dims[k-1], best)
			}
		}
	}
}

// bestSpread is the least max-min over all ordered factorizations of n
// into k factors (brute force).
func bestSpread(n, k int) int {
	best := n
	var rec func(rest, k, lo, hi int)
	rec = func(rest, k, lo, hi int) {
		if k == 0 {
			if rest == 1 && hi-lo < best {
				best = hi - lo
			}
			return
		}
		for d := 1; d <= rest; d++ {
			if rest%d == 0 {
				rec(rest/d, k-1, min(lo, d), max(hi, d))
			}
		}
	}
	rec(n, k, n, 1)
	return best
}

// refCart is the test's own model of a row-major Cartesian grid.
type refCart struct {
	dims    []int
	periods []bool
}

func (g refCart) coords(r int) []int {
	co := make([]int, len(g.dims))
	stride := 1
	for _, d := range g.dims {
		stride *= d
	}
	for i, d := range g.dims {
		stride /= d
		co[i] = r / stride
		r %= stride
	}
	return co
}

// rankAt is the rank at co, or ProcNull out of a non-periodic range.
func (g refCart) rankAt(co []int) int {
	r := 0
	for i, d := range g.dims {
		x := co[i]
		if g.periods[i] {
			for x < 0 {
				x += d
			}
			x %= d
		} else if x < 0 || x >= d {
			return comm.ProcNull
		}
		r = r*d + x
	}
	return r
}

// checkCart checks c's topology against g, on every rank of c, and moves
// data along every dimension's shifts.
func checkCart(c *comm.Comm, g refCart) error {
	r, n := c.Rank(), c.Size()
	if err := ranktest.Want("Topology", c.Topology(), comm.TopoCart); err != nil {
		return err
	}
	dims, periods, coords, err := c.CartGet()
	if err != nil {
		return err
	}
	if err := ranktest.Want("CartGet", fmt.Sprint(dims, periods, coords), fmt.Sprint(g.dims, g.periods, g.coords(r))); err != nil {
		return err
	}
	for q := range n {
		co, err := c.CartCoords(q)
		if err != nil {
			return err
		}
		if err := ranktest.Want(fmt.Sprint("CartCoords(", q, ")"), co, g.coords(q)); err != nil {
			return err
		}
		back, err := c.CartRank(co)
		if err != nil {
			return err
		}
		if err := ranktest.Want(fmt.Sprint("CartRank(", co, ")"), back, q); err != nil {
			return err
		}
	}
	if _, err := c.CartCoords(n); !errors.Is(err, comm.ErrRank) {
		return fmt.Errorf("CartCoords(%d): %v, want ErrRank", n, err)
	}
	for i := range g.dims {
		// Coordinates out of range: wrapped when periodic, else an error.
		co := g.coords(r)
		co[i] += 2 * g.dims[i]
		got, err := c.CartRank(co)
		if g.periods[i] {
			if err != nil || got != r {
				return fmt.Errorf("CartRank(%v) periodic = %d, %v; want %d", co, got, err, r)
			}
		} else if !errors.Is(err, comm.ErrArg) {
			return fmt.Errorf("CartRank(%v) non-periodic: %d, %v; want ErrArg", co, got, err)
		}
		for disp := -3; disp <= 3; disp++ {
			src, dst, err := c.CartShift(i, disp)
			if err != nil {
				return err
			}
			up, down := g.coords(r), g.coords(r)
			up[i] += disp
			down[i] -= disp
			if err := ranktest.Want(fmt.Sprint("CartShift(", i, ",", disp, ")"), []int{src, dst}, []int{g.rankAt(down), g.rankAt(up)}); err != nil {
				return err
			}
			// Shift data up by disp: receive the source's rank.
			got := []int64{-7}
			if _, err := comm.SendrecvT(c, []int64{int64(r)}, dst, 5, got, src, 5); err != nil {
				return err
			}
			want := int64(src)
			if src == comm.ProcNull {
				want = -7
			}
			if got[0] != want {
				return fmt.Errorf("shift %d along %d: got %d from source %d", disp, i, got[0], src)
			}
		}
	}
	if _, _, err := c.CartShift(len(g.dims), 1); !errors.Is(err, comm.ErrArg) {
		return fmt.Errorf("CartShift past the dimensions: %v, want ErrArg", err)
	}
	if _, err := c.CartRank(make([]int, len(g.dims)+1)); !errors.Is(err, comm.ErrArg) {
		return fmt.Errorf("CartRank with too many coordinates: %v, want ErrArg", err)
	}
	return nil
}

// cartBody: 2-D grids, periodic and not, with ranks left out; CartSub
// rows and columns reducing; Dup keeping the topology, Split not.
func cartBody(c *comm.Comm) error {
	r, n := c.Rank(), c.Size()
	if err := ranktest.Want("world Topology", c.Topology(), comm.TopoUndefined); err != nil {
		return err
	}
	full := []int{0, 0}
	if err := comm.DimsCreate(n, full); err != nil {
		return err
	}
	if n == 12 {
		full = []int{3, 4}
	}
	part := []int{0, 0} // all but the last rank, which is left out
	if err := comm.DimsCreate(max(n-1, 1), part); err != nil {
		return err
	}
	for _, dims := range [][]int{full, part} {
		for _, periods := range [][]bool{{true, true}, {false, false}, {true, false}} {
			g := refCart{dims, periods}
			cc, err := c.CartCreate(dims, periods, true)
			if err != nil {
				return err
			}
			inside := r < dims[0]*dims[1]
			if (cc != nil) != inside {
				return fmt.Errorf("CartCreate(%v) on rank %d of %d: got a communicator %v, want %v", dims, r, n, cc != nil, inside)
			}
			if cc == nil {
				continue
			}
			if err := ranktest.Want("CartCreate size", cc.Size(), dims[0]*dims[1]); err != nil {
				return err
			}
			if err := ranktest.Want("CartCreate rank", cc.Rank(), r); err != nil {
				return err
			}
			if err := checkCart(cc, g); err != nil {
				return fmt.Errorf("grid %v %v: %w", dims, periods, err)
			}
			if err := cartSubs(cc, g); err != nil {
				return fmt.Errorf("grid %v %v: %w", dims, periods, err)
			}
			d, err := cc.Dup()
			if err != nil {
				return err
			}
			if err := checkCart(d, g); err != nil {
				return fmt.Errorf("Dup of grid %v %v: %w", dims, periods, err)
			}
			s, err := cc.Split(0, r)
			if err != nil {
				return err
			}
			if err := ranktest.Want("Split's Topology", s.Topology(), comm.TopoUndefined); err != nil {
				return err
			}
			if _, _, _, err := s.CartGet(); !errors.Is(err, comm.ErrTopology) {
				return fmt.Errorf("CartGet after Split: %v, want ErrTopology", err)
			}
			for _, x := range []*comm.Comm{s, d, cc} {
				if err := x.Free(); err != nil {
					return err
				}
			}
		}
	}
	// Zero dimensions: rank 0 alone.
	z, err := c.CartCreate(nil, nil, false)
	if err != nil {
		return err
	}
	if (z != nil) != (r == 0) {
		return fmt.Errorf("CartCreate() on rank %d: communicator %v", r, z != nil)
	}
	if z != nil {
		if err := ranktest.Want("0-d size", z.Size(), 1); err != nil {
			return err
		}
		if err := checkCart(z, refCart{[]int{}, []bool{}}); err != nil {
			return fmt.Errorf("0-d grid: %w", err)
		}
		if err := z.Free(); err != nil {
			return err
		}
	}
	fmt.Printf("rank %d ok\n", r)
	return nil
}

// cartSubs: rows and columns of a 2-D grid from CartSub, each reducing the
// sum of its members' ranks in the grid; dropping both dimensions leaves
// each rank alone with a 0-dimensional topology.
func cartSubs(cc *comm.Comm, g refCart) error {
	r := cc.Rank()
	co := g.coords(r)
	for keep := range 2 {
		remain := []bool{keep == 0, keep == 1}
		sub, err := cc.CartSub(remain)
		if err != nil {
			return err
		}
		if err := ranktest.Want(fmt.Sprint("CartSub(", remain, ") size"), sub.Size(), g.dims[keep]); err != nil {
			return err
		}
		if err := ranktest.Want(fmt.Sprint("CartSub(", remain, ") rank"), sub.Rank(), co[keep]); err != nil {
			return err
		}
		if err := checkCart(sub, refCart{[]int{g.dims[keep]}, []bool{g.periods[keep]}}); err != nil {
			return fmt.Errorf("CartSub(%v): %w", remain, err)
		}
		sum := []int64{0}
		if err := comm.Allreduce(sub, []int64{int64(r)}, sum, atomics.Sum); err != nil {
			return err
		}
		var want int64
		for x := range g.dims[keep] {
			at := slices.Clone(co)
			at[keep] = x
			want += int64(g.rankAt(at))
		}
		if err := ranktest.Want(fmt.Sprint("Allreduce over CartSub(", remain, ")"), sum[0], want); err != nil {
			return err
		}
		if err := sub.Free(); err != nil {
			return err
		}
	}
	alone, err := cc.CartSub([]bool{false, false})
	if err != nil {
		return err
	}
	if err := ranktest.Want("CartSub(none) size", alone.Size(), 1); err != nil {
		return err
	}
	if err := checkCart(alone, refCart{[]int{}, []bool{}}); err != nil {
		return fmt.Errorf("CartSub(none): %w", err)
	}
	return alone.Free()
}

// cartErrors: bad arguments are an error on every rank (also when one
// rank alone passes them), never a hang, and c stays usable.
func cartErrors(c *comm.Comm) error {
	r, n := c.Rank(), c.Size()
	for _, tc := range []struct {
		name    string
		dims    []int
		periods []bool
	}{
		{"too many ranks", []int{n + 1}, []bool{false}},
		{"length mismatch", []int{n}, []bool{false, true}},
		{"zero dim", []int{n, 0}, []bool{false, false}},
		{"negative dim", []int{-n}, []bool{false}},
		{"rank 0's dims differ", []int{n - (n-1)*boolInt(r == 0)}, []bool{false}}, // rank 0: [1]
		{"rank 0 alone passes a zero", []int{n * boolInt(r != 0)}, []bool{false}},
	} {
		if n == 1 && tc.name == "rank 0's dims differ" {
			continue // one rank cannot disagree
		}
		cc, err := c.CartCreate(tc.dims, tc.periods, false)
		if !errors.Is(err, comm.ErrArg) || cc != nil {
			return fmt.Errorf("CartCreate %s (%v %v) on rank %d: %v, %v; want ErrArg", tc.name, tc.dims, tc.periods, r, cc, err)
		}
		if err := c.Barrier(); err != nil {
			return err
		}
	}
	if n > 1 {
		// Same dims, other periods on rank 0.
		if _, err := c.CartCreate([]int{n}, []bool{r == 0}, false); !errors.Is(err, comm.ErrArg) {
			return fmt.Errorf("CartCreate with periods differing on rank 0: %v, want ErrArg", err)
		}
	}
	// No topology on the world.
	if _, _, _, err := c.CartGet(); !errors.Is(err, comm.ErrTopology) {
		return fmt.Errorf("CartGet on the world: %v, want ErrTopology", err)
	}
	if _, _, err := c.CartShift(0, 1); !errors.Is(err, comm.ErrTopology) {
		return fmt.Errorf("CartShift on the world: %v, want ErrTopology", err)
	}
	if _, err := c.CartRank([]int{0}); !errors.Is(err, comm.ErrTopology) {
		return fmt.Errorf("CartRank on the world: %v, want ErrTopology", err)
	}
	if _, err := c.CartCoords(0); !errors.Is(err, comm.ErrTopology) {
		return fmt.Errorf("CartCoords on the world: %v, want ErrTopology", err)
	}
	if _, err := c.CartSub([]bool{true}); !errors.Is(err, comm.ErrTopology) {
		return fmt.Errorf("CartSub on the world: %v, want ErrTopology", err)
	}
	// CartSub's arguments are checked on every rank.
	cc, err := c.CartCreate([]int{n}, []bool{true}, false)
	if err != nil {
		return err
	}
	if _, err := cc.CartSub([]bool{true, false}); !errors.Is(err, comm.ErrArg) {
		return fmt.Errorf("CartSub with 2 flags for 1 dimension: %v, want ErrArg", err)
	}
	if n > 1 {
		if _, err := cc.CartSub([]bool{r == 0}); !errors.Is(err, comm.ErrArg) {
			return fmt.Errorf("CartSub with remain differing on rank 0: %v, want ErrArg", err)
		}
	}
	// The communicators still work.
	if err := checkCart(cc, refCart{[]int{n}, []bool{true}}); err != nil {
		return err
	}
	if err := cc.Free(); err != nil {
		return err
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	fmt.Printf("rank %d ok\n", r)
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
