//go:build !mpi

package comm_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/ranktest"
)

// fastIters is the calls of each kind TestFastPathCollectives makes in a
// row.
const fastIters = 24

// fastKind is one small collective of TestFastPathCollectives: call makes
// it in iteration it (data and root varying with it) and checks what it
// delivered; all says it reads every rank (no root that runs ahead, no
// reader of one rank), so that every call after a kind's first takes the
// fast path.
type fastKind struct {
	name string
	all  bool
	call func(c *comm.Comm, it int) error
}

// val is rank q's element j of iteration it.
func val(q, j, it int) int64 { return int64(1000*it + 10*q + j + 1) }

// sumVal is the sum of val over n ranks.
func sumVal(n, j, it int) int64 {
	var s int64
	for q := range n {
		s += val(q, j, it)
	}
	return s
}

func wantElems(what string, got, want []int64) error {
	if !slices.Equal(got, want) {
		return fmt.Errorf("%s: got %v, want %v", what, got, want)
	}
	return nil
}

var fastKinds = []fastKind{
	{"Barrier", true, func(c *comm.Comm, it int) error { return c.Barrier() }},
	{"Allreduce", true, func(c *comm.Comm, it int) error {
		m := 1 + it%5 // up to 40 bytes: inline
		send, recv, want := make([]int64, m), make([]int64, m), make([]int64, m)
		for j := range m {
			send[j], want[j] = val(c.Rank(), j, it), sumVal(c.Size(), j, it)
		}
		if err := comm.Allreduce(c, send, recv, atomics.Sum); err != nil {
			return err
		}
		return wantElems("Allreduce", recv, want)
	}},
	{"AllreduceInPlace", true, func(c *comm.Comm, it int) error {
		buf := []int64{val(c.Rank(), 0, it), val(c.Rank(), 1, it)}
		if err := comm.AllreduceInPlace(c, buf, atomics.Max); err != nil {
			return err
		}
		return wantElems("AllreduceInPlace", buf, []int64{val(c.Size()-1, 0, it), val(c.Size()-1, 1, it)})
	}},
	{"Reduce", false, func(c *comm.Comm, it int) error {
		root := it % c.Size()
		recv := []int64{-1, -1}
		if err := comm.Reduce(c, []int64{val(c.Rank(), 0, it), val(c.Rank(), 1, it)}, recv, atomics.Sum, root); err != nil {
			return err
		}
		if c.Rank() != root {
			return wantElems("Reduce's sender", recv, []int64{-1, -1})
		}
		return wantElems("Reduce", recv, []int64{sumVal(c.Size(), 0, it), sumVal(c.Size(), 1, it)})
	}},
	{"ReduceInPlace", false, func(c *comm.Comm, it int) error {
		root := (it + 1) % c.Size()
		buf := []int64{val(c.Rank(), 0, it)}
		if err := comm.ReduceInPlace(c, buf, atomics.Sum, root); err != nil {
			return err
		}
		if c.Rank() != root {
			return nil
		}
		return wantElems("ReduceInPlace", buf, []int64{sumVal(c.Size(), 0, it)})
	}},
	{"Bcast", false, func(c *comm.Comm, it int) error {
		root, m := it%c.Size(), 1+it%5
		buf := make([]int64, m)
		want := make([]int64, m)
		for j := range m {
			want[j] = val(root, j, it)
		}
		if c.Rank() == root {
			copy(buf, want)
		}
		if err := comm.Bcast(c, buf, root); err != nil {
			return err
		}
		return wantElems("Bcast", buf, want)
	}},
	{"Allgather", true, func(c *comm.Comm, it int) error {
		recv, want := make([]int64, c.Size()), make([]int64, c.Size())
		for q := range want {
			want[q] = val(q, 0, it)
		}
		if err := comm.Allgather(c, []int64{val(c.Rank(), 0, it)}, recv); err != nil {
			return err
		}
		return wantElems("Allgather", recv, want)
	}},
	{"AllgatherInPlace", true, func(c *comm.Comm, it int) error {
		buf, want := make([]int64, c.Size()), make([]int64, c.Size())
		for q := range want {
			want[q] = val(q, 0, it)
		}
		buf[c.Rank()] = want[c.Rank()]
		if err := comm.AllgatherInPlace(c, buf); err != nil {
			return err
		}
		return wantElems("AllgatherInPlace", buf, want)
	}},
	{"Gather", false, func(c *comm.Comm, it int) error {
		n, root := c.Size(), it%c.Size()
		var recv, want []int64
		if c.Rank() == root {
			recv, want = make([]int64, 2*n), make([]int64, 2*n)
			for q := range n {
				want[2*q], want[2*q+1] = val(q, 0, it), val(q, 1, it)
			}
		}
		if err := comm.Gather(c, []int64{val(c.Rank(), 0, it), val(c.Rank(), 1, it)}, recv, root); err != nil {
			return err
		}
		return wantElems("Gather", recv, want)
	}},
	{"GatherInPlace", false, func(c *comm.Comm, it int) error {
		n, root := c.Size(), (it+1)%c.Size()
		if c.Rank() != root {
			return comm.GatherInPlace(c, []int64{val(c.Rank(), 0, it)}, root)
		}
		buf, want := make([]int64, n), make([]int64, n)
		for q := range n {
			want[q] = val(q, 0, it)
		}
		buf[root] = want[root]
		if err := comm.GatherInPlace(c, buf, root); err != nil {
			return err
		}
		return wantElems("GatherInPlace", buf, want)
	}},
	{"Scan", false, func(c *comm.Comm, it int) error {
		recv := []int64{-1, -1}
		if err := comm.Scan(c, []int64{val(c.Rank(), 0, it), val(c.Rank(), 1, it)}, recv, atomics.Sum); err != nil {
			return err
		}
		return wantElems("Scan", recv, []int64{sumVal(c.Rank()+1, 0, it), sumVal(c.Rank()+1, 1, it)})
	}},
	{"ScanInPlace", false, func(c *comm.Comm, it int) error {
		buf := []int64{val(c.Rank(), 0, it)}
		if err := comm.ScanInPlace(c, buf, atomics.Sum); err != nil {
			return err
		}
		return wantElems("ScanInPlace", buf, []int64{sumVal(c.Rank()+1, 0, it)})
	}},
	{"Exscan", false, func(c *comm.Comm, it int) error {
		recv := []int64{-1}
		if err := comm.Exscan(c, []int64{val(c.Rank(), 0, it)}, recv, atomics.Sum); err != nil {
			return err
		}
		want := int64(-1) // rank 0's recv is left alone
		if c.Rank() > 0 {
			want = sumVal(c.Rank(), 0, it)
		}
		return wantElems("Exscan", recv, []int64{want})
	}},
	{"ExscanInPlace", false, func(c *comm.Comm, it int) error {
		buf := []int64{val(c.Rank(), 0, it), val(c.Rank(), 1, it)}
		if err := comm.ExscanInPlace(c, buf, atomics.Max); err != nil {
			return err
		}
		if c.Rank() == 0 {
			return nil
		}
		return wantElems("ExscanInPlace", buf, []int64{val(c.Rank()-1, 0, it), val(c.Rank()-1, 1, it)})
	}},
	{"Alltoall", true, func(c *comm.Comm, it int) error {
		n := c.Size()
		send, recv, want := make([]int64, n), make([]int64, n), make([]int64, n)
		for q := range n {
			send[q], want[q] = val(c.Rank(), q, it), val(q, c.Rank(), it)
		}
		if err := comm.Alltoall(c, send, recv); err != nil {
			return err
		}
		return wantElems("Alltoall", recv, want)
	}},
	{"AlltoallInPlace", true, func(c *comm.Comm, it int) error {
		n := c.Size()
		buf, want := make([]int64, n), make([]int64, n)
		for q := range n {
			buf[q], want[q] = val(c.Rank(), q, it), val(q, c.Rank(), it)
		}
		if err := comm.AlltoallInPlace(c, buf); err != nil {
			return err
		}
		return wantElems("AlltoallInPlace", buf, want)
	}},
	{"Scatter", false, func(c *comm.Comm, it int) error {
		n, root := c.Size(), it%c.Size()
		var send []int64
		if c.Rank() == root {
			for q := range n {
				send = append(send, val(root, q, it))
			}
		}
		recv := []int64{-1}
		if err := comm.Scatter(c, send, recv, root); err != nil {
			return err
		}
		return wantElems("Scatter", recv, []int64{val(root, c.Rank(), it)})
	}},
	{"ScatterInPlace", false, func(c *comm.Comm, it int) error {
		n, root := c.Size(), (it+1)%c.Size()
		if c.Rank() != root {
			recv := []int64{-1}
			if err := comm.Scatter(c, nil, recv, root); err != nil {
				return err
			}
			return wantElems("ScatterInPlace's reader", recv, []int64{val(root, c.Rank(), it)})
		}
		buf := make([]int64, n)
		for q := range n {
			buf[q] = val(root, q, it)
		}
		want := slices.Clone(buf)
		if err := comm.ScatterInPlace(c, buf, root); err != nil {
			return err
		}
		return wantElems("ScatterInPlace's root", buf, want)
	}},
	{"ReduceScatterBlock", true, func(c *comm.Comm, it int) error {
		n := c.Size()
		send := make([]int64, n)
		for q := range n {
			send[q] = val(c.Rank(), q, it)
		}
		var want int64
		for q := range n {
			want += val(q, c.Rank(), it)
		}
		recv := []int64{-1}
		if err := comm.ReduceScatterBlock(c, send, recv, atomics.Sum); err != nil {
			return err
		}
		return wantElems("ReduceScatterBlock", recv, []int64{want})
	}},
	{"ReduceScatterBlockInPlace", true, func(c *comm.Comm, it int) error {
		n := c.Size()
		buf := make([]int64, n)
		for q := range n {
			buf[q] = val(c.Rank(), q, it)
		}
		var want int64
		for q := range n {
			want = max(want, val(q, c.Rank(), it))
		}
		if err := comm.ReduceScatterBlockInPlace(c, buf, atomics.Max); err != nil {
			return err
		}
		return wantElems("ReduceScatterBlockInPlace", buf[:1], []int64{want})
	}},
}

// TestFastPathCollectives runs each small collective fastIters times in a
// row on 1, 2, 3 and 5 goroutine ranks, data and roots varying, every
// result checked: on a made collective area they take the fast path
// (coll_fast.go), each call of a kind that reads every rank after its
// first, and the rooted ones (whose root runs ahead, whose readers read
// one rank) on at least a quarter of their calls on every rank.
func TestFastPathCollectives(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			ranktest.RunLocal(t, n, func(c *comm.Comm) error {
				if err := c.Barrier(); err != nil {
					return err
				}
				for _, k := range fastKinds {
					n0 := comm.FastRounds(c)
					for it := range fastIters {
						if err := k.call(c, it); err != nil {
							return fmt.Errorf("rank %d, %s, call %d: %w", c.Rank(), k.name, it, err)
						}
					}
					fast := int(comm.FastRounds(c) - n0)
					if k.all && fast < fastIters-1 || fast < fastIters/4 {
						return fmt.Errorf("rank %d, %s: %d of %d calls took the fast path", c.Rank(), k.name, fast, fastIters)
					}
				}
				return stillWorks(c)
			})
		})
	}
}

// TestManyRanksParities: the collective areas whose line parities shrink
// with the ranks (format.CollParities: 32 from 65 ranks, 16 from 129)
// carry loops of one-round calls, whose roots run ahead as far as those
// allow, and an exchange, every result checked.
func TestManyRanksParities(t *testing.T) {
	if testing.Short() {
		t.Skip("129 ranks")
	}
	for _, n := range []int{65, 129} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			ranktest.RunLocal(t, n, func(c *comm.Comm) error {
				me := c.Rank()
				for i := range 80 {
					b := []int64{0}
					if me == i%3 {
						b[0] = int64(i)
					}
					if err := comm.Bcast(c, b, i%3); err != nil || b[0] != int64(i) {
						return fmt.Errorf("Bcast %d: %d, %v", i, b[0], err)
					}
					g := make([]int32, n)
					if err := comm.Gather(c, []int32{int32(i + me)}, g, 1); err != nil {
						return err
					}
					for q := range g {
						if me == 1 && g[q] != int32(i+q) {
							return fmt.Errorf("Gather %d: block %d is %d", i, q, g[q])
						}
					}
				}
				x := []int64{int64(me)}
				if err := comm.AllreduceInPlace(c, x, atomics.Sum); err != nil || x[0] != int64(n*(n-1)/2) {
					return fmt.Errorf("Allreduce: %d, %v", x[0], err)
				}
				if p := comm.LineParities(c); p != format.CollParities(n) || p >= 64 {
					return fmt.Errorf("%d line parities at %d ranks, want %d (< 64)", p, n, format.CollParities(n))
				}
				return nil
			})
		})
	}
}

// TestFastPathLateMismatch: a Bcast whose root runs ahead by the fast path
// while a reader passes a different count: the reader fails in the call,
// the root learns of it in a later call (ErrEarlierCall, named after the
// Bcast), and the calls after go on.
func TestFastPathLateMismatch(t *testing.T) {
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			ranktest.RunLocal(t, n, func(c *comm.Comm) error {
				if err := c.Barrier(); err != nil {
					return err
				}
				n0 := comm.FastRounds(c)
				var late error
				for it := range 12 {
					m := 2
					if it == 5 && c.Rank() == n-1 {
						m = 3
					}
					buf := make([]int64, m)
					if c.Rank() == 0 {
						buf[0], buf[1] = int64(it), int64(-it)
					}
					err := comm.Bcast(c, buf, 0)
					switch {
					case it == 5 && c.Rank() == n-1:
						if !errors.Is(err, comm.ErrCount) {
							return fmt.Errorf("rank %d: the mismatched Bcast: %v, want ErrCount", c.Rank(), err)
						}
						continue
					case errors.Is(err, comm.ErrEarlierCall) && late == nil && it > 5:
						late = err
					case err != nil && !(it == 5 && errors.Is(err, comm.ErrCount)):
						return fmt.Errorf("rank %d, call %d: %v", c.Rank(), it, err)
					}
					if buf[0] != int64(it) || buf[1] != int64(-it) {
						return fmt.Errorf("rank %d, call %d: %v", c.Rank(), it, buf)
					}
				}
				if err := c.Barrier(); errors.Is(err, comm.ErrEarlierCall) && late == nil {
					late = err
				} else if err != nil {
					return err
				}
				if c.Rank() == 0 && (late == nil || !strings.Contains(late.Error(), "Bcast")) {
					return fmt.Errorf("the root: no late report of the mismatch naming the Bcast: %v", late)
				}
				if comm.FastRounds(c) == n0 {
					return fmt.Errorf("rank %d: no call took the fast path", c.Rank())
				}
				return stillWorks(c)
			})
		})
	}
}
