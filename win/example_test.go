//go:build !mpi

package win_test

import (
	"fmt"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/win"
)

// A program run on its own is a singleton world of one rank; under
// `shmrun -n N` the same code runs on N ranks.
func ExampleAllocateShared() {
	world, err := comm.Init()
	if err != nil {
		panic(err)
	}
	defer comm.Finalize()

	// 4 int64 per rank, disp unit 8: displacements count elements.
	w, err := win.AllocateShared(world, 4*8, 8, nil)
	if err != nil {
		panic(err)
	}
	defer w.Free()

	w.LockAll(0)
	win.PutT(w, []int64{10, 20}, 0, 1)                       // elements 1 and 2 of rank 0
	old, _ := win.FetchAndOp(w, int64(5), 0, 1, atomics.Sum) // atomic add
	w.Flush(0)
	w.UnlockAll()

	seg, _ := w.SharedQuery(0) // rank 0's part as mapped in this process
	xs, _ := win.View[int64](seg)
	fmt.Println(old, xs)
	// Output: 10 [0 15 20 0]
}

// Fence epochs: every rank's puts are visible everywhere after the Fence.
func ExampleWin_Fence() {
	ranks, _ := comm.NewLocalWorld(1) // a heap-backed world, as in tests
	w, _ := win.Allocate(ranks[0], 16, 1, nil)
	defer w.Free()

	w.Fence(win.ModeNoPrecede)
	w.Put([]byte("hello, window"), 0, 0)
	w.Fence(win.ModeNoSucceed)
	fmt.Printf("%s\n", w.Local()[:13])
	// Output: hello, window
}
