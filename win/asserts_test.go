//go:build !mpi

package win_test

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/win"
)

// TestAssertsAndHints: the documented paths of ModeNoCheck, no_locks,
// ModeNoPrecede and Test, each with an outcome that would differ if the
// path were wrong.
func TestAssertsAndHints(t *testing.T) {
	runLocal(t, 2, func(c *comm.Comm) error {
		me, other := c.Rank(), 1-c.Rank()
		w, err := win.AllocateShared(c, 16, 8, nil)
		if err != nil {
			return err
		}
		defer w.Free()
		mine, _ := win.View[int64](w.Local())

		// ModeNoCheck locks take no lock word: both ranks hold an
		// "exclusive" NoCheck lock on rank 0 at once without blocking, and
		// their puts still land (the memory ordering is kept).
		if err := w.Lock(win.Exclusive, 0, win.ModeNoCheck); err != nil {
			return err
		}
		if err := c.Barrier(); err != nil { // both inside: a real lock would deadlock here
			return err
		}
		if err := win.PutT(w, []int64{int64(10 + me)}, 0, me); err != nil {
			return err
		}
		if err := w.Unlock(0); err != nil {
			return err
		}
		if err := w.LockAll(win.ModeNoCheck); err != nil {
			return err
		}
		if err := w.UnlockAll(); err != nil {
			return err
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		if me == 0 && (atomic.LoadInt64(&mine[0]) != 10 || atomic.LoadInt64(&mine[1]) != 11) {
			return fmt.Errorf("NoCheck puts: rank 0 holds %v", mine[:2])
		}

		// Start with ModeNoCheck does not wait for the Post, but the
		// epochs still pair up: the later Wait returns once Complete ran.
		g, _ := c.Group().Incl(other)
		if err := w.Post(g, 0); err != nil {
			return err
		}
		if err := c.Barrier(); err != nil { // the promise ModeNoCheck asks for: the Post is done
			return err
		}
		if err := w.Start(g, win.ModeNoCheck); err != nil {
			return err
		}
		if err := win.PutT(w, []int64{int64(20 + me)}, other, 0); err != nil {
			return err
		}
		if err := w.Complete(); err != nil {
			return err
		}
		for {
			done, err := w.Test() // Test closes the exposure epoch once it reports true
			if err != nil {
				return err
			}
			if done {
				break
			}
		}
		if _, err := w.Test(); !errors.Is(err, win.ErrRMASync) {
			return fmt.Errorf("Test after a successful Test: %v, want ErrRMASync", err)
		}
		if got := atomic.LoadInt64(&mine[0]); got != int64(20+other) {
			return fmt.Errorf("after Test: %d, want %d", got, 20+other)
		}

		// ModeNoPrecede after RMA since the last Fence is a broken promise:
		// ErrAssert, agreed by both ranks.
		if err := w.Fence(0); err != nil {
			return err
		}
		if err := w.Put([]byte{1}, other, 1); err != nil { // disp in 8-byte units: byte 8
			return err
		}
		if err := w.Fence(win.ModeNoPrecede); !errors.Is(err, win.ErrAssert) {
			return fmt.Errorf("ModeNoPrecede after a Put: %v, want ErrAssert", err)
		}
		if err := w.Fence(win.ModeNoSucceed); err != nil {
			return err
		}

		// no_locks=true: Lock and LockAll are erroneous, fences still work.
		nl, err := win.AllocateShared(c, 8, 8, win.Info{"no_locks": "true"})
		if err != nil {
			return err
		}
		defer nl.Free()
		if err := nl.Lock(win.Shared, 0, 0); !errors.Is(err, win.ErrRMASync) {
			return fmt.Errorf("Lock with no_locks: %v", err)
		}
		if err := nl.Lock(win.Exclusive, 0, 0); !errors.Is(err, win.ErrRMASync) {
			return fmt.Errorf("exclusive Lock with no_locks: %v", err)
		}
		if err := nl.LockAll(0); !errors.Is(err, win.ErrRMASync) {
			return fmt.Errorf("LockAll with no_locks: %v", err)
		}
		if nl.Info()["no_locks"] != "true" {
			return fmt.Errorf("info no_locks=%s", nl.Info()["no_locks"])
		}
		return nl.Fence(win.ModeNoPrecede | win.ModeNoSucceed)
	})
}
