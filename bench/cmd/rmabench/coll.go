package main

import (
	"sync/atomic"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/win"
)

// coll gives the benchmark the few small collectives the C version takes
// from MPI (Bcast, Reduce, Gather), built on a shared window: each rank owns
// two words of its part; a root writes, a barrier orders, the others read.
type coll struct {
	c *comm.Comm
	w *win.Win
	v [][]int64
}

func newColl(c *comm.Comm) (*coll, error) {
	w, err := win.AllocateShared(c, 16, 8, nil)
	if err != nil {
		return nil, err
	}
	k := &coll{c: c, w: w, v: make([][]int64, c.Size())}
	for r := range k.v {
		seg, err := w.SharedQuery(r)
		if err != nil {
			return nil, err
		}
		if k.v[r], err = win.View[int64](seg.Bytes); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// bcast returns root's x on every rank.
func (k *coll) bcast(root int, x int64) (int64, error) {
	if k.c.Rank() == root {
		atomic.StoreInt64(&k.v[root][0], x)
	}
	if err := k.c.Barrier(); err != nil {
		return 0, err
	}
	x = atomic.LoadInt64(&k.v[root][0])
	return x, k.c.Barrier()
}

// minMax returns, on rank 0, the smallest a and the largest b of all ranks.
func (k *coll) minMax(a, b int64) (int64, int64, error) {
	me := k.c.Rank()
	atomic.StoreInt64(&k.v[me][0], a)
	atomic.StoreInt64(&k.v[me][1], b)
	if err := k.c.Barrier(); err != nil {
		return 0, 0, err
	}
	lo, hi := a, b
	if me == 0 {
		for r := range k.v {
			lo = min(lo, atomic.LoadInt64(&k.v[r][0]))
			hi = max(hi, atomic.LoadInt64(&k.v[r][1]))
		}
	}
	return lo, hi, k.c.Barrier()
}

// gather returns every rank's x on rank 0.
func (k *coll) gather(x int64) ([]int64, error) {
	me := k.c.Rank()
	atomic.StoreInt64(&k.v[me][0], x)
	if err := k.c.Barrier(); err != nil {
		return nil, err
	}
	out := make([]int64, len(k.v))
	for r := range k.v {
		out[r] = atomic.LoadInt64(&k.v[r][0])
	}
	return out, k.c.Barrier()
}
