package main

import (
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/win"
)

// reduceSum adds every rank's value at rank 0: each rank stores its value in
// its own 8 bytes of a shared window; after a fence rank 0 reads them all.
func reduceSum(world *comm.Comm, v float64) (float64, error) {
	w, err := win.AllocateShared(world, 8, 8, nil)
	if err != nil {
		return 0, err
	}
	defer w.Free()
	if err := w.Fence(0); err != nil {
		return 0, err
	}
	mine, err := win.View[float64](w.Local())
	if err != nil {
		return 0, err
	}
	mine[0] = v
	if err := w.Fence(0); err != nil {
		return 0, err
	}
	total := 0.0
	if world.Rank() == 0 {
		for r := range world.Size() {
			seg, err := w.SharedQuery(r)
			if err != nil {
				return 0, err
			}
			vals, err := win.View[float64](seg.Bytes)
			if err != nil {
				return 0, err
			}
			total += vals[0]
		}
	}
	return total, w.Fence(0)
}
