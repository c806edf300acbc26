//go:build !mpi

package main

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/win"
)

// Rows on the other window flavors (issue 16): Create over AllocMem memory,
// Create over private memory (a Go slice), and a dynamic window with an
// AllocMem region attached. Each row makes its own window in setup, like
// rmabench.c's flavorrows.h, and checks in teardown that a Put and a Get
// of a known word reach rank 1's memory; the FetchAndOp rows check the
// values fetched and the count of operations on their word, as the atomic
// rows do (atomicTeardown).

const (
	xmemAlloc = iota
	xmemPrivate
	xmemDynamic
	xBytes = 4096
	xFop   = 128 // the FetchAndOp word; Put and Get use word 0
	xCheck = 64  // the teardown's check word
)

var flavorRows = []struct {
	name string
	mem  int
	body func(*ctx, *meas, int64) error
}{
	{"create_mem_put8_flush", xmemAlloc, xPut8}, {"create_mem_get8_flush", xmemAlloc, xGet8}, {"create_mem_fop_flush", xmemAlloc, xFop8},
	{"create_priv_put8_flush", xmemPrivate, xPut8}, {"create_priv_get8_flush", xmemPrivate, xGet8}, {"create_priv_fop_flush", xmemPrivate, xFop8},
	{"dynamic_put8_flush", xmemDynamic, xPut8}, {"dynamic_get8_flush", xmemDynamic, xGet8},
}

func init() {
	for _, r := range flavorRows {
		table = append(table, meas{name: r.name, kind: origin, need2: true, arg: r.mem, setup: xSetup, body: r.body, teardown: xTeardown})
	}
}

func xSetup(c *ctx, m *meas) error {
	var err error
	if m.arg == xmemPrivate {
		c.xmem = make([]byte, xBytes)
	} else if c.xmem, err = comm.AllocMem(xBytes, nil); err != nil {
		return err
	}
	clear(c.xmem)
	c.xdisp = 0
	if m.arg == xmemDynamic {
		if c.xw, err = win.CreateDynamic(c.c, nil); err != nil {
			return err
		}
		if err := c.xw.Attach(c.xmem); err != nil {
			return err
		}
		addrs := make([]uint64, c.size)
		if err := comm.Allgather(c.c, []uint64{uint64(comm.Address(c.xmem))}, addrs); err != nil {
			return err
		}
		c.xdisp = int(addrs[1])
	} else if c.xw, err = win.Create(c.c, c.xmem, 1, nil); err != nil {
		return err
	}
	if c.rank == 0 {
		return c.xw.LockAll(0)
	}
	return nil
}

func xTeardown(c *ctx, m *meas) error {
	magic := uint64(0x5eed0000 + m.arg)
	wrong := int64(0)
	fop := strings.HasSuffix(m.name, "_fop_flush")
	if c.rank == 0 && fop {
		for i := range int64(atomicCheckOps) {
			got, err := win.FetchAndOp(c.xw, int64(1), 1, c.xdisp+xFop, atomics.Sum)
			if err == nil {
				err = c.xw.Flush(1)
			}
			if err != nil {
				return err
			}
			if got != c.ops+i {
				if wrong == 0 {
					fmt.Printf("INFO check %s WRONG on rank 0: call %d of %d fetched %d, want %d\n", m.name, i+1, atomicCheckOps, got, c.ops+i)
				}
				wrong++
			}
		}
		c.ops += atomicCheckOps
	}
	if c.rank == 0 {
		var b, got [8]byte
		binary.LittleEndian.PutUint64(b[:], magic)
		if err := c.xw.Put(b[:], 1, c.xdisp+xCheck); err != nil {
			return err
		}
		if err := c.xw.Flush(1); err != nil {
			return err
		}
		if err := c.xw.Get(got[:], 1, c.xdisp+xCheck); err != nil {
			return err
		}
		if err := c.xw.UnlockAll(); err != nil {
			return err
		}
		if binary.LittleEndian.Uint64(got[:]) != magic {
			wrong++
		}
	}
	if err := c.c.Barrier(); err != nil {
		return err
	}
	if c.rank == 1 && binary.LittleEndian.Uint64(c.xmem[xCheck:]) != magic {
		wrong++
	}
	if fop {
		ops := []int64{c.ops}
		if err := comm.Bcast(c.c, ops, 0); err != nil {
			return err
		}
		if c.rank == 1 {
			if w := int64(binary.LittleEndian.Uint64(c.xmem[xFop:])); w != ops[0] {
				fmt.Printf("INFO check %s WRONG on rank 1: the FetchAndOp word is %d, want %d\n", m.name, w, ops[0])
				wrong++
			}
		}
	}
	if err := reportCheck(c, m.name, wrong); err != nil {
		return err
	}
	if m.arg == xmemDynamic {
		if err := c.xw.Detach(c.xmem); err != nil {
			return err
		}
	}
	if err := c.xw.Free(); err != nil {
		return err
	}
	c.xw = nil
	if m.arg != xmemPrivate {
		return comm.FreeMem(c.xmem)
	}
	return nil
}

func xPut8(c *ctx, _ *meas, k int64) error {
	src := c.src[:8]
	for range k {
		c.xw.Put(src, 1, c.xdisp)
		c.xw.Flush(1)
	}
	return nil
}

func xGet8(c *ctx, _ *meas, k int64) error {
	dst := c.src[:8]
	for range k {
		c.xw.Get(dst, 1, c.xdisp)
		c.xw.Flush(1)
	}
	return nil
}

func xFop8(c *ctx, _ *meas, k int64) error {
	for range k {
		win.FetchAndOp(c.xw, int64(1), 1, c.xdisp+xFop, atomics.Sum)
		c.xw.Flush(1)
	}
	return nil
}
