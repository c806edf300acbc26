// Command counts makes every call shmrun --stats and --trace record a known
// number of times, for internal/obs's end-to-end test (run as 2 ranks).
// Rank 0 sleeps before the first Barrier, so rank 1 waits there at least
// that long.
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/win"
)

// Sleep is how long rank 0 sleeps before the first Barrier.
const Sleep = 30 * time.Millisecond

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "counts:", err)
		os.Exit(1)
	}
}

func run() error {
	world, err := comm.Init()
	if err != nil {
		return err
	}
	me, n := world.Rank(), world.Size()
	peer := (me + 1) % n
	w, err := win.Allocate(world, 64*8, 8, nil)
	if err != nil {
		return err
	}
	steps := []func() error{func() error { return w.Fence(0) }}
	for i := range 10 { // Put ×10, 80 B
		steps = append(steps, func() error { return win.PutT(w, []int64{int64(i)}, peer, me) })
	}
	steps = append(steps, func() error { return w.Fence(0) })
	for range 5 { // Get ×5, 40 B
		steps = append(steps, func() error { return win.GetT(w, make([]int64, 1), peer, 0) })
	}
	steps = append(steps, func() error { return w.Fence(win.ModeNoSucceed) })
	for range 7 { // Lock, Unlock, Accumulate, FetchAndOp, CompareAndSwap ×7
		steps = append(steps,
			func() error { return w.Lock(win.Exclusive, 0, 0) },
			func() error { return win.Accumulate(w, []int64{1}, 0, 1, atomics.Sum) },
			func() error { _, err := win.FetchAndOp(w, int64(1), 0, 2, atomics.Sum); return err },
			func() error { _, err := win.CompareAndSwap(w, int64(1), 0, 0, 3); return err },
			func() error { return w.Unlock(0) })
	}
	steps = append(steps, func() error { return w.LockAll(0) })
	for range 3 { // GetAccumulate ×3, 24 B
		steps = append(steps, func() error {
			return win.GetAccumulate(w, []int64{1}, make([]int64, 1), peer, 4, atomics.Sum)
		})
	}
	steps = append(steps, w.UnlockAll)
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	if me == 0 {
		time.Sleep(Sleep)
	}
	for range 4 { // Barrier ×4
		if err := world.Barrier(); err != nil {
			return err
		}
	}
	for range 6 { // Allreduce ×6
		if err := comm.Allreduce(world, []float64{1}, make([]float64, 1), atomics.Sum); err != nil {
			return err
		}
	}
	msg := make([]byte, 16)
	for range 9 { // 9 messages of 16 B from rank 0 to rank 1
		switch me {
		case 0:
			err = world.Send(msg, 1, 7)
		case 1:
			_, err = world.Recv(msg, 0, 7)
		}
		if err != nil {
			return err
		}
	}
	if err := w.Free(); err != nil {
		return err
	}
	// A window over the ranks' own memory: its parts are known only once
	// the ranks have told each other (256 and 512 bytes, disp unit 4).
	cw, err := win.Create(world, make([]byte, 256*(me+1)), 4, nil)
	if err != nil {
		return err
	}
	if err := cw.Free(); err != nil {
		return err
	}
	return comm.Finalize()
}
