package main

import (
	"fmt"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/win"
)

// stencil_4k: one sweep of a 1-D three-point Jacobi over 4096 float64s
// per rank in a shared window, each rank reading its neighbours' edge
// values by load from their parts (SharedQuery), then Sync, Barrier, Sync
// under a LockAll epoch: the textbook shape of a shared-memory program,
// the Go twin of bench/c/rmabench.c's row of the same name.
const stencilN = 4096

// stencil is the row's state: the window, this rank's two halves (the
// sweep's input and output alternate) and the neighbours' parts (nil at
// the ends).
type stencil struct {
	w      *win.Win
	a      []float64
	sl, sr []float64
	sweeps int64
}

func init() {
	table = append(table, meas{name: "stencil_4k", kind: all, setup: stencilSetup, body: stencilSweeps, teardown: stencilTeardown})
}

func stencilSetup(c *ctx, _ *meas) error {
	w, err := win.AllocateShared(c.c, 2*stencilN*8, 8, nil)
	if err != nil {
		return err
	}
	part := func(r int) ([]float64, error) {
		seg, err := w.SharedQuery(r)
		if err != nil {
			return nil, err
		}
		return win.View[float64](seg)
	}
	st := &stencil{w: w}
	c.stencil = st
	if st.a, err = part(c.rank); err != nil {
		return err
	}
	for i := range st.a {
		st.a[i] = float64(c.rank + i%7)
	}
	if c.rank > 0 {
		if st.sl, err = part(c.rank - 1); err != nil {
			return err
		}
	}
	if c.rank < c.size-1 {
		if st.sr, err = part(c.rank + 1); err != nil {
			return err
		}
	}
	if err := w.LockAll(win.ModeNoCheck); err != nil {
		return err
	}
	return c.c.Barrier()
}

func stencilSweeps(c *ctx, _ *meas, k int64) error {
	st := c.stencil
	for range k {
		cur := int(st.sweeps&1) * stencilN
		a, b := st.a[cur:cur+stencilN], st.a[stencilN-cur:][:stencilN]
		lv, rv := a[0], a[stencilN-1]
		if st.sl != nil {
			lv = st.sl[cur+stencilN-1]
		}
		if st.sr != nil {
			rv = st.sr[cur]
		}
		b[0] = (lv + a[0] + a[1]) / 3
		for i := 1; i < stencilN-1; i++ {
			b[i] = (a[i-1] + a[i] + a[i+1]) / 3
		}
		b[stencilN-1] = (a[stencilN-2] + a[stencilN-1] + rv) / 3
		st.w.Sync()
		c.c.Barrier()
		st.w.Sync()
		st.sweeps++
	}
	return nil
}

// stencilTeardown checks the last sweep: every rank computes its part again
// from its input, with the neighbours' edge values taken from messages
// instead of loads of their parts, and compares every element.
func stencilTeardown(c *ctx, m *meas) error {
	st := c.stencil
	cur := int((st.sweeps-1)&1) * stencilN
	a, b := st.a[cur:cur+stencilN], st.a[stencilN-cur:][:stencilN]
	left, right := c.rank-1, c.rank+1
	if left < 0 {
		left = comm.ProcNull
	}
	if right == c.size {
		right = comm.ProcNull
	}
	lv, rv := []float64{a[0]}, []float64{a[stencilN-1]}
	if _, err := comm.SendrecvT(c.c, a[stencilN-1:], right, 11, lv, left, 11); err != nil {
		return err
	}
	if _, err := comm.SendrecvT(c.c, a[:1], left, 12, rv, right, 12); err != nil {
		return err
	}
	var wrong int64
	for i := range stencilN {
		l, r := lv[0], rv[0]
		if i > 0 {
			l = a[i-1]
		}
		if i < stencilN-1 {
			r = a[i+1]
		}
		if want := (l + a[i] + r) / 3; b[i] != want {
			if wrong == 0 {
				fmt.Printf("INFO check %s WRONG on rank %d: element %d of sweep %d is %.17g, want %.17g\n", m.name, c.rank, i, st.sweeps, b[i], want)
			}
			wrong++
		}
	}
	if err := st.w.UnlockAll(); err != nil {
		return err
	}
	if err := st.w.Free(); err != nil {
		return err
	}
	c.stencil = nil
	return reportCheck(c, m.name, wrong)
}
