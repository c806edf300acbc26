//go:build !mpi

package comm_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/internal/raw"
)

// The pair types in the data-movement collectives: MPI matches types by
// signature, and a pair's is its two halves, so the generic forms of a
// pair type meet the typed forms of its equivalents: 2 int32 for a
// TwoInt, a struct of a float64 and an int32 for a DoubleInt (whose Go
// struct has padding, which a typed form packs away), the pair's own
// basic datatype. Even ranks call the generic forms, odd ranks the typed
// ones, at sizes that ride inline, take one staged round and several.

// pairView is how the odd ranks see one T: k instances of u over the same
// memory.
type pairView struct {
	u *dtype.Type
	k int
}

func pairsBody[T atomics.Elem](mk func(q, i int) T, v pairView) func(c *comm.Comm) error {
	return func(c *comm.Comm) error {
		n, me := c.Size(), c.Rank()
		typed := me%2 == 1
		u, k := v.u, v.k
		for _, per := range []int{3, 300, 5000} {
			fail := func(call string, err error, got []T, want func(j int) T) error {
				if err != nil {
					return fmt.Errorf("%s, %d pairs: %w", call, per, err)
				}
				for j, g := range got {
					if w := want(j); g != w {
						return fmt.Errorf("%s, %d pairs: element %d is %+v, want %+v", call, per, j, g, w)
					}
				}
				return nil
			}
			block := func(q int) []T {
				b := make([]T, per)
				for i := range b {
					b[i] = mk(q, i)
				}
				return b
			}
			blocks := func(of func(q int) int) []T {
				var all []T
				for q := range n {
					all = append(all, block(of(q))...)
				}
				return all
			}
			from := func(j int) T { return mk(j/per, j%per) }

			// Bcast from the last rank.
			root := n - 1
			buf := make([]T, per)
			if me == root {
				buf = block(root)
			}
			var err error
			if typed {
				err = comm.BcastType(c, raw.Bytes(buf), per*k, u, root)
			} else {
				err = comm.Bcast(c, buf, root)
			}
			if e := fail("Bcast", err, buf, func(i int) T { return mk(root, i) }); e != nil {
				return e
			}

			// Gather and Allgather of every rank's block.
			all := make([]T, n*per)
			if typed {
				err = comm.GatherType(c, raw.Bytes(block(me)), per*k, u, raw.Bytes(all), per*k, u, 0)
			} else {
				err = comm.Gather(c, block(me), all, 0)
			}
			if me != 0 {
				all = nil
			}
			if e := fail("Gather", err, all, from); e != nil {
				return e
			}
			all = make([]T, n*per)
			if typed {
				err = comm.AllgatherType(c, raw.Bytes(block(me)), per*k, u, raw.Bytes(all), per*k, u)
			} else {
				err = comm.Allgather(c, block(me), all)
			}
			if e := fail("Allgather", err, all, from); e != nil {
				return e
			}
			all = make([]T, n*per)
			copy(all[me*per:], block(me))
			if typed {
				err = comm.AllgatherTypeInPlace(c, raw.Bytes(all), per*k, u)
			} else {
				err = comm.AllgatherInPlace(c, all)
			}
			if e := fail("AllgatherInPlace", err, all, from); e != nil {
				return e
			}

			// The v forms, rank q's block at (n-1-q)·per.
			counts, displs, ucounts, udispls := make([]int, n), make([]int, n), make([]int, n), make([]int, n)
			for q := range n {
				counts[q], displs[q] = per, (n-1-q)*per
				ucounts[q], udispls[q] = per*k, (n-1-q)*per*k
			}
			rev := func(j int) T { return mk(n-1-j/per, j%per) }
			all = make([]T, n*per)
			if typed {
				err = comm.AllgathervType(c, raw.Bytes(block(me)), per*k, u, raw.Bytes(all), ucounts, udispls, u)
			} else {
				err = comm.Allgatherv(c, block(me), all, counts, displs)
			}
			if e := fail("Allgatherv", err, all, rev); e != nil {
				return e
			}
			all = make([]T, n*per)
			if typed {
				err = comm.GathervType(c, raw.Bytes(block(me)), per*k, u, raw.Bytes(all), ucounts, udispls, u, 0)
			} else {
				err = comm.Gatherv(c, block(me), all, counts, displs, 0)
			}
			if me != 0 {
				all = nil
			}
			if e := fail("Gatherv", err, all, rev); e != nil {
				return e
			}

			// Scatter and Scatterv from rank 0 of blocks made for each rank.
			var send []T
			if me == 0 {
				send = blocks(func(q int) int { return q })
			}
			mine := make([]T, per)
			if typed {
				err = comm.ScatterType(c, raw.Bytes(send), per*k, u, raw.Bytes(mine), per*k, u, 0)
			} else {
				err = comm.Scatter(c, send, mine, 0)
			}
			if e := fail("Scatter", err, mine, func(i int) T { return mk(me, i) }); e != nil {
				return e
			}
			if me == 0 {
				send = blocks(func(q int) int { return n - 1 - q })
			}
			mine = make([]T, per)
			if typed {
				err = comm.ScattervType(c, raw.Bytes(send), ucounts, udispls, u, raw.Bytes(mine), per*k, u, 0)
			} else {
				err = comm.Scatterv(c, send, counts, displs, mine, 0)
			}
			if e := fail("Scatterv", err, mine, func(i int) T { return mk(me, i) }); e != nil {
				return e
			}

			// Alltoall: block j of rank q's send is mk(q·n+j, ·).
			send = blocks(func(j int) int { return me*n + j })
			all = make([]T, n*per)
			if typed {
				err = comm.AlltoallType(c, raw.Bytes(send), per*k, u, raw.Bytes(all), per*k, u)
			} else {
				err = comm.Alltoall(c, send, all)
			}
			if e := fail("Alltoall", err, all, func(j int) T { return mk(j/per*n+me, j%per) }); e != nil {
				return e
			}
			all = slices.Clone(send)
			if typed {
				err = comm.AlltoallvType(c, raw.Bytes(send), ucounts, udispls, u, raw.Bytes(all), ucounts, udispls, u)
			} else {
				err = comm.Alltoallv(c, send, counts, displs, all, counts, displs)
			}
			// Rank q's block for me sits at (n-1-me)·per of its send and
			// lands at (n-1-q)·per of mine.
			if e := fail("Alltoallv", err, all, func(j int) T { return mk((n-1-j/per)*n+n-1-me, j%per) }); e != nil {
				return e
			}
		}
		return c.Barrier()
	}
}

var (
	twoIntPairs = pairsBody(func(q, i int) atomics.TwoInt { return atomics.TwoInt{V: int32(q), I: int32(i)} },
		pairView{dtype.Basic(atomics.Int32), 2})
	floatIntPairs = pairsBody(func(q, i int) atomics.FloatInt { return atomics.FloatInt{V: float32(q) + 0.5, I: int32(i)} },
		pairView{mustType(dtype.Of[struct {
			V float32
			I int32
		}]()), 1})
	doubleIntPairs = pairsBody(func(q, i int) atomics.DoubleInt { return atomics.DoubleInt{V: float64(q) + 0.25, I: int32(i)} },
		pairView{mustType(dtype.Of[struct {
			V float64
			I int32
		}]()), 1})
	doubleIntBasic = pairsBody(func(q, i int) atomics.DoubleInt { return atomics.DoubleInt{V: -float64(q), I: int32(-i)} },
		pairView{dtype.Basic(atomics.DoubleIntT), 1})
	shortIntPairs = pairsBody(func(q, i int) atomics.ShortInt { return atomics.ShortInt{V: int16(q), I: int32(i) << 8} },
		pairView{mustType(dtype.Of[struct {
			V int16
			I int32
		}]()), 1})
)

// pairArgsBody: the generic forms of a padded pair type keep the
// generic forms' argument rules: a recv longer than the call needs is
// fine (Alltoall, here on one rank only), and send and receive buffers
// that overlap are ErrBuffer on every rank, as for float64.
func pairArgsBody(c *comm.Comm) error {
	n, me := c.Size(), c.Rank()
	send := make([]atomics.DoubleInt, n)
	for j := range send {
		send[j] = atomics.DoubleInt{V: float64(me), I: int32(j)}
	}
	recv := make([]atomics.DoubleInt, n+me) // longer on some ranks
	if err := comm.Alltoall(c, send, recv); err != nil {
		return fmt.Errorf("Alltoall into a longer recv: %w", err)
	}
	for q := range n {
		if want := (atomics.DoubleInt{V: float64(q), I: int32(me)}); recv[q] != want {
			return fmt.Errorf("Alltoall into a longer recv: from rank %d %+v, want %+v", q, recv[q], want)
		}
	}
	buf := make([]atomics.DoubleInt, 2*n)
	if err := comm.Alltoall(c, buf[:n], buf[n/2:n/2+n]); !errors.Is(err, comm.ErrBuffer) {
		return fmt.Errorf("Alltoall of overlapping DoubleInt buffers: %v, want ErrBuffer", err)
	}
	// The senders of a Gather may learn of the root's error in their next
	// call (reported).
	err := reported(c, comm.Gather(c, buf[:1], buf[:n], 0))
	if n > 1 && !errors.Is(err, comm.ErrBuffer) {
		return fmt.Errorf("Gather of overlapping DoubleInt buffers at the root: %v, want ErrBuffer", err)
	}
	if err := comm.Allgather(c, buf[n-1:n], buf[:n]); !errors.Is(err, comm.ErrBuffer) {
		return fmt.Errorf("Allgather of overlapping DoubleInt buffers: %v, want ErrBuffer", err)
	}
	// A nil communicator is ErrComm, not a panic (the routing divided by
	// its size).
	var none *comm.Comm
	for name, f := range map[string]func() error{
		"Alltoall":        func() error { return comm.Alltoall(none, send, recv) },
		"AlltoallInPlace": func() error { return comm.AlltoallInPlace(none, send) },
		"GatherInPlace":   func() error { return comm.GatherInPlace(none, send, 0) },
		"ScatterInPlace":  func() error { return comm.ScatterInPlace(none, send, 0) },
		"Gather":          func() error { return comm.Gather(none, send, recv, 0) },
		"Bcast":           func() error { return comm.Bcast(none, send, 0) },
	} {
		if err := f(); !errors.Is(err, comm.ErrComm) {
			return fmt.Errorf("%s[DoubleInt] on a nil communicator: %v, want ErrComm", name, err)
		}
	}
	return c.Barrier()
}

func init() {
	ranktest.Register("collpairs", func(c *comm.Comm) error {
		for _, body := range []func(*comm.Comm) error{twoIntPairs, floatIntPairs, doubleIntPairs, doubleIntBasic, shortIntPairs} {
			if err := body(c); err != nil {
				return err
			}
		}
		return nil
	})
	ranktest.Register("collpairs-args", pairArgsBody)
}

func TestCollPairsLocal(t *testing.T) {
	for name, body := range map[string]func(*comm.Comm) error{"TwoInt": twoIntPairs, "FloatInt": floatIntPairs,
		"DoubleInt": doubleIntPairs, "DoubleIntBasic": doubleIntBasic, "ShortInt": shortIntPairs, "Args": pairArgsBody} {
		for _, n := range []int{1, 2, 3, 4} {
			t.Run(fmt.Sprint(name, "/", n), func(t *testing.T) { ranktest.RunLocal(t, n, body) })
		}
	}
}

func TestCollPairsProcs(t *testing.T) {
	ranktest.Run(t, 3, "collpairs")
	ranktest.Run(t, 3, "collpairs-args")
}
