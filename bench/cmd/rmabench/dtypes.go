//go:build !mpi

package main

import (
	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/win"
)

// Rows of issue 17: a Put with derived datatypes on both sides into rank
// 1's 1024×1024 float64 matrix (an AllocateShared window of 8 MiB a rank)
// from the same place of rank 0's private matrix: one column (a Vector of
// 1024 blocks of 8 B, stride 8 KiB), a 64×64 sub-block (a Subarray), and
// 64 KiB as a Contiguous type (to set beside put_bw_65536). The teardown
// puts a known matrix and checks every byte the type covers at rank 1.

const matN = 1024

var dtypeRows = []struct {
	name string
	make func() (*dtype.Type, error)
}{
	{"put_type_column", func() (*dtype.Type, error) { return dtype.Vector(matN, 1, matN, dtype.Basic(atomics.Float64)) }},
	{"put_type_subarray_64", func() (*dtype.Type, error) {
		return dtype.Subarray([]int{matN, matN}, []int{64, 64}, []int{100, 200}, dtype.OrderC, dtype.Basic(atomics.Float64))
	}},
	{"put_type_contig_64k", func() (*dtype.Type, error) { return dtype.Contiguous(8192, dtype.Basic(atomics.Float64)) }},
}

func init() {
	for i, r := range dtypeRows {
		table = append(table, meas{name: r.name, kind: origin, need2: true, arg: i, setup: dtSetup, body: dtPut, teardown: dtTeardown})
	}
}

func dtSetup(c *ctx, m *meas) error {
	t, err := dtypeRows[m.arg].make()
	if err == nil {
		err = t.Commit()
	}
	if err != nil {
		return err
	}
	c.dt = t
	if c.xw, err = win.AllocateShared(c.c, 8*matN*matN, 8, nil); err != nil {
		return err
	}
	c.dmat = make([]float64, matN*matN)
	for i := range c.dmat {
		c.dmat[i] = float64(i)
	}
	if c.rank == 0 {
		return c.xw.LockAll(0)
	}
	return nil
}

func dtPut(c *ctx, _ *meas, k int64) error {
	src := raw.Bytes(c.dmat)
	for range k {
		win.PutType(c.xw, src, 1, c.dt, 1, 0, 1, c.dt)
		c.xw.Flush(1)
	}
	return nil
}

func dtTeardown(c *ctx, m *meas) error {
	wrong := int64(0)
	if c.rank == 0 {
		for i := range c.dmat {
			c.dmat[i] = -float64(i)
		}
		if err := win.PutType(c.xw, raw.Bytes(c.dmat), 1, c.dt, 1, 0, 1, c.dt); err != nil {
			return err
		}
		if err := c.xw.UnlockAll(); err != nil {
			return err
		}
	}
	if err := c.c.Barrier(); err != nil {
		return err
	}
	if c.rank == 1 {
		got, err := win.View[float64](c.xw.Local())
		if err != nil {
			return err
		}
		c.dt.Each(1, func(off, n int64) bool {
			for b := off; b < off+n; b += 8 {
				if got[b/8] != -float64(b/8) {
					wrong++
					return false
				}
			}
			return true
		})
	}
	if err := reportCheck(c, m.name, wrong); err != nil {
		return err
	}
	err := c.xw.Free()
	c.xw, c.dmat, c.dt = nil, nil, nil
	return err
}

// pingpong_type_column: rank 0 sends a column of its private matrix (the
// Vector above) to rank 1, which receives it into the same column of its
// own and sends it back: a round trip of SendType/RecvType. The teardown
// sends a known column once more and checks rank 1's whole matrix.
func init() {
	table = append(table, meas{name: "pingpong_type_column", kind: all, need2: true, setup: dtMsgSetup, body: dtPingpong, teardown: dtMsgTeardown})
}

func dtMsgSetup(c *ctx, _ *meas) error {
	t, err := dtypeRows[0].make()
	if err == nil {
		err = t.Commit()
	}
	if err != nil {
		return err
	}
	c.dt = t
	c.dmat = make([]float64, matN*matN)
	if c.rank == 0 {
		for i := range c.dmat {
			c.dmat[i] = float64(i)
		}
	}
	return nil
}

func dtPingpong(c *ctx, _ *meas, k int64) error {
	buf := raw.Bytes(c.dmat)
	for range k {
		switch c.rank {
		case 0:
			c.c.SendType(buf, 1, c.dt, 1, 7)
			c.c.RecvType(buf, 1, c.dt, 1, 7)
		case 1:
			c.c.RecvType(buf, 1, c.dt, 0, 7)
			c.c.SendType(buf, 1, c.dt, 0, 7)
		}
	}
	return nil
}

func dtMsgTeardown(c *ctx, m *meas) error {
	wrong := int64(0)
	buf := raw.Bytes(c.dmat)
	switch c.rank {
	case 0:
		for i := range c.dmat {
			c.dmat[i] = -float64(i)
		}
		if err := c.c.SendType(buf, 1, c.dt, 1, 8); err != nil {
			return err
		}
	case 1:
		for i := range c.dmat {
			c.dmat[i] = 1
		}
		if _, err := c.c.RecvType(buf, 1, c.dt, 0, 8); err != nil {
			return err
		}
		for i, v := range c.dmat {
			want := 1.0
			if i%matN == 0 {
				want = -float64(i)
			}
			if v != want {
				wrong++
			}
		}
	}
	if err := reportCheck(c, m.name, wrong); err != nil {
		return err
	}
	c.dmat, c.dt = nil, nil
	return nil
}
