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
