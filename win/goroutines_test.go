//go:build !mpi

package win_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/win"
)

// TestGoroutinesInOneEpoch: inside one rank, several goroutines make RMA
// calls in the same epoch (allowed, as under MPI_THREAD_MULTIPLE); the
// synchronization calls stay on the rank's main goroutine. Run under -race
// with ranks as goroutines over heap memory, every access is visible to the
// race detector.
func TestGoroutinesInOneEpoch(t *testing.T) {
	const workers, k = 4, 500
	runLocal(t, 3, func(c *comm.Comm) error {
		n := c.Size()
		// Per rank: one counter, then workers*n slots for puts.
		w, err := win.AllocateShared(c, 8*(1+workers*n), 8, nil)
		if err != nil {
			return err
		}
		defer w.Free()
		for _, passive := range []bool{true, false} {
			if passive {
				if err := w.LockAll(0); err != nil {
					return err
				}
			} else if err := w.Fence(0); err != nil {
				return err
			}
			var wg sync.WaitGroup
			errs := make([]error, workers)
			for g := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range k {
						t := (c.Rank() + i) % n
						if _, err := win.FetchAndOp(w, int64(1), t, 0, atomics.Sum); err != nil {
							errs[g] = err
							return
						}
						slot := 1 + g*n + c.Rank()
						if err := win.PutT(w, []int64{int64(i)}, t, slot); err != nil {
							errs[g] = err
							return
						}
					}
				}()
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				return err
			}
			if passive {
				if err := w.UnlockAll(); err != nil {
					return err
				}
				if err := c.Barrier(); err != nil {
					return err
				}
			} else if err := w.Fence(0); err != nil {
				return err
			}
		}
		if err := w.Fence(win.ModeNoSucceed); err != nil {
			return err
		}
		mine, _ := win.View[int64](w.Local())
		// Two epochs, each: every rank's workers add k times spread over n targets.
		if want := int64(2 * workers * k); mine[0] != want {
			return fmt.Errorf("rank %d: counter %d, want %d", c.Rank(), mine[0], want)
		}
		return nil
	})
}
