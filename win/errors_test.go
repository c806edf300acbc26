//go:build !mpi

package win_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/win"
)

// epochCase is one misuse: setup opens some state, call makes the wrong
// call, and the error must be of class and mention every string of has.
type epochCase struct {
	name  string
	setup func(w *win.Win, c *comm.Comm) error
	call  func(w *win.Win, c *comm.Comm) error
	class error
	has   []string
}

func none(*win.Win, *comm.Comm) error { return nil }

func TestEpochErrors(t *testing.T) {
	put := func(target, disp, n int) func(w *win.Win, c *comm.Comm) error {
		return func(w *win.Win, c *comm.Comm) error { return w.Put(make([]byte, n), target, disp) }
	}
	lockAll := func(w *win.Win, c *comm.Comm) error { return w.LockAll(0) }
	lock1 := func(w *win.Win, c *comm.Comm) error { return w.Lock(win.Exclusive, 1, 0) }
	fenceAndPut := func(w *win.Win, c *comm.Comm) error {
		if err := w.Fence(0); err != nil {
			return err
		}
		// Each rank its own byte: conflicting puts in one epoch are erroneous.
		return w.Put([]byte{1}, 1, c.Rank())
	}
	startSelf := func(w *win.Win, c *comm.Comm) error {
		g, _ := c.Group().Incl(c.Rank())
		if err := w.Post(g, 0); err != nil {
			return err
		}
		return w.Start(g, 0)
	}
	cases := []epochCase{
		{"put outside any epoch", none, put(1, 0, 8), win.ErrRMASync, []string{"Put", "rank 1"}},
		{"get outside any epoch", none, func(w *win.Win, c *comm.Comm) error { return w.Get(make([]byte, 8), 1, 0) }, win.ErrRMASync, nil},
		{"put to ProcNull outside any epoch", none, put(win.ProcNull, 0, 8), win.ErrRMASync, []string{"ProcNull"}},
		{"put to unlocked target", lock1, put(0, 0, 8), win.ErrRMASync, []string{"rank 0"}},
		{"accumulate outside any epoch", none, func(w *win.Win, c *comm.Comm) error {
			return win.Accumulate(w, []int64{1}, 1, 0, atomics.Sum)
		}, win.ErrRMASync, nil},
		{"unlock without lock", none, func(w *win.Win, c *comm.Comm) error { return w.Unlock(1) }, win.ErrRMASync, []string{"Unlock without Lock"}},
		{"lock twice", lock1, lock1, win.ErrRMASync, []string{"locked by this rank already"}},
		{"lock during lockall", lockAll, lock1, win.ErrRMASync, []string{"LockAll"}},
		{"lockall twice", lockAll, lockAll, win.ErrRMASync, nil},
		{"lockall during lock", lock1, lockAll, win.ErrRMASync, nil},
		{"unlockall without lockall", none, func(w *win.Win, c *comm.Comm) error { return w.UnlockAll() }, win.ErrRMASync, nil},
		{"complete without start", none, func(w *win.Win, c *comm.Comm) error { return w.Complete() }, win.ErrRMASync, []string{"Complete without Start"}},
		{"wait without post", none, func(w *win.Win, c *comm.Comm) error { return w.Wait() }, win.ErrRMASync, []string{"Wait without Post"}},
		{"test without post", none, func(w *win.Win, c *comm.Comm) error { _, err := w.Test(); return err }, win.ErrRMASync, nil},
		{"flush outside passive epoch", none, func(w *win.Win, c *comm.Comm) error { return w.Flush(1) }, win.ErrRMASync, []string{"Flush"}},
		{"flush to unlocked target", lock1, func(w *win.Win, c *comm.Comm) error { return w.Flush(0) }, win.ErrRMASync, nil},
		{"flush to a bad rank in LockAll", lockAll, func(w *win.Win, c *comm.Comm) error { return w.Flush(2) }, win.ErrRank, []string{"target 2"}},
		{"flush to rank -1 in LockAll", lockAll, func(w *win.Win, c *comm.Comm) error { return w.Flush(-1) }, win.ErrRank, []string{"target -1"}},
		{"flushlocal to rank -1 in LockAll", lockAll, func(w *win.Win, c *comm.Comm) error { return w.FlushLocal(-1) }, win.ErrRank, []string{"target -1"}},
		{"flush to a negative rank in LockAll", lockAll, func(w *win.Win, c *comm.Comm) error { return w.Flush(-7) }, win.ErrRank, []string{"target -7"}},
		{"flush after UnlockAll", func(w *win.Win, c *comm.Comm) error {
			if err := w.LockAll(0); err != nil {
				return err
			}
			return w.UnlockAll()
		}, func(w *win.Win, c *comm.Comm) error { return w.Flush(1) }, win.ErrRMASync, nil},
		{"flushall outside passive epoch", none, func(w *win.Win, c *comm.Comm) error { return w.FlushAll() }, win.ErrRMASync, nil},
		{"flushlocal outside passive epoch", none, func(w *win.Win, c *comm.Comm) error { return w.FlushLocal(0) }, win.ErrRMASync, nil},
		{"flushlocalall outside passive epoch", none, func(w *win.Win, c *comm.Comm) error { return w.FlushLocalAll() }, win.ErrRMASync, nil},
		{"sync outside passive epoch", none, func(w *win.Win, c *comm.Comm) error { return w.Sync() }, win.ErrRMASync, []string{"Sync"}},
		{"flush in a fence epoch", func(w *win.Win, c *comm.Comm) error { return w.Fence(0) }, func(w *win.Win, c *comm.Comm) error { return w.FlushAll() }, win.ErrRMASync, nil},
		{"post while locked", lockAll, func(w *win.Win, c *comm.Comm) error { return w.Post(c.Group(), 0) }, win.ErrRMASync, nil},
		{"post twice", func(w *win.Win, c *comm.Comm) error {
			g, _ := c.Group().Incl(c.Rank())
			return w.Post(g, 0)
		}, func(w *win.Win, c *comm.Comm) error {
			g, _ := c.Group().Incl(c.Rank())
			return w.Post(g, 0)
		}, win.ErrRMASync, []string{"Post without Wait"}},
		{"start twice", startSelf, func(w *win.Win, c *comm.Comm) error {
			g, _ := c.Group().Incl(c.Rank())
			return w.Start(g, 0)
		}, win.ErrRMASync, nil},
		{"lock after fence with RMA", fenceAndPut, lock1, win.ErrRMASync, []string{"fence epoch"}},
		{"lockall after fence with RMA", fenceAndPut, lockAll, win.ErrRMASync, []string{"fence epoch"}},
		{"lock during start", startSelf, lock1, win.ErrRMASync, []string{"Start without Complete"}},
		{"lockall during start", startSelf, lockAll, win.ErrRMASync, nil},
		{"rput in a fence epoch", func(w *win.Win, c *comm.Comm) error { return w.Fence(0) }, func(w *win.Win, c *comm.Comm) error {
			_, err := w.Rput([]byte{1}, 1, 0)
			return err
		}, win.ErrRMASync, []string{"passive-target"}},
		{"put past the segment", lockAll, put(1, 60, 8), win.ErrRMARange, []string{"disp 60", "8 bytes", "64-byte segment", "rank 1"}},
		{"put one byte past", lockAll, put(1, 57, 8), win.ErrRMARange, nil},
		{"put with huge disp (no overflow)", lockAll, put(1, 1<<62, 8), win.ErrRMARange, nil},
		{"get past the segment", lockAll, func(w *win.Win, c *comm.Comm) error { return w.Get(make([]byte, 65), 1, 0) }, win.ErrRMARange, nil},
		{"fetch past the segment", lockAll, func(w *win.Win, c *comm.Comm) error {
			_, err := win.FetchAndOp(w, int64(1), 1, 8, atomics.Sum)
			return err
		}, win.ErrRMARange, nil},
		{"negative disp", lockAll, put(1, -1, 8), win.ErrDisp, nil},
		{"bad target rank", lockAll, put(7, 0, 8), win.ErrRank, []string{"target 7"}},
		{"bad lock type", none, func(w *win.Win, c *comm.Comm) error { return w.Lock(9, 1, 0) }, win.ErrLockType, nil},
		{"bad lock assert", none, func(w *win.Win, c *comm.Comm) error { return w.Lock(win.Shared, 1, win.ModeNoPut) }, win.ErrAssert, nil},
		{"bad fence assert (collective)", none, func(w *win.Win, c *comm.Comm) error {
			// Only rank 0 passes a bad assert; both must fail alike.
			return w.Fence(map[bool]int{true: 1 << 20, false: 0}[c.Rank() == 0])
		}, win.ErrAssert, nil},
		{"free with an epoch open (collective)", lockAll, func(w *win.Win, c *comm.Comm) error { return w.Free() }, win.ErrRMASync, []string{"LockAll"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Rank 0 misbehaves; rank 1 only allocates and frees. A case
			// whose misuse is collective (Free) runs on both.
			runLocal(t, 2, func(c *comm.Comm) error {
				w, err := win.AllocateShared(c, 64, 8, nil)
				if err != nil {
					return err
				}
				collective := strings.HasSuffix(tc.name, "(collective)")
				// A setup that fences is collective: both ranks run it.
				if c.Rank() == 0 || collective || strings.Contains(tc.name, "fence") {
					if err := tc.setup(w, c); err != nil {
						return fmt.Errorf("setup: %w", err)
					}
				}
				if c.Rank() == 0 || collective {
					err := tc.call(w, c)
					if !errors.Is(err, tc.class) {
						return fmt.Errorf("rank %d: got %v, want class %v", c.Rank(), err, tc.class)
					}
					for _, s := range tc.has {
						if c.Rank() == 0 && !strings.Contains(err.Error(), s) {
							return fmt.Errorf("error %q does not mention %q", err, s)
						}
					}
					// Nothing was lost: the window still works for a clean epoch.
					w.UnlockAll()
					w.Unlock(1)
					if tc.name == "start twice" || strings.HasSuffix(tc.name, "during start") {
						w.Complete()
						w.Wait()
					}
					if tc.name == "post twice" {
						g, _ := c.Group().Incl(c.Rank())
						w.Start(g, 0)
						w.Complete()
						w.Wait()
					}
				}
				if err := w.Fence(0); err != nil {
					return err
				}
				return w.Fence(win.ModeNoSucceed)
			})
		})
	}
}

// A Fence that fails on one rank fails on every rank, with the same class,
// and strands nobody.
func init() {
	ranktest.Register("fence-agree", func(c *comm.Comm) error {
		w, err := win.AllocateShared(c, 8, 8, nil)
		if err != nil {
			return err
		}
		if c.Rank() == 1 {
			if err := w.Lock(win.Shared, 0, 0); err != nil {
				return err
			}
		}
		err = w.Fence(0)
		if !errors.Is(err, win.ErrRMASync) || !strings.Contains(err.Error(), "rank 1") {
			return fmt.Errorf("rank %d: Fence returned %v, want ErrRMASync naming rank 1", c.Rank(), err)
		}
		if c.Rank() == 1 {
			if err := w.Unlock(0); err != nil {
				return err
			}
		}
		if err := w.Fence(0); err != nil {
			return err
		}
		return w.Free()
	})
}

func TestFenceFailureAgreed(t *testing.T)     { ranktest.Run(t, 4, "fence-agree") }
func TestFenceFailureAgreedPair(t *testing.T) { ranktest.Run(t, 2, "fence-agree") }

// ProcNull is a valid target of every RMA communication call inside any
// open access epoch, where the call is a no-op; Lock, Unlock, Flush and
// FlushLocal take a rank of the window, so ProcNull is ErrRank there, in
// every epoch (issue 12, defect 2).
func TestProcNull(t *testing.T) {
	rma := []struct {
		name    string
		passive bool // a request form: passive-target epochs only
		call    func(w *win.Win) error
	}{
		{"Put", false, func(w *win.Win) error { return w.Put([]byte{1}, win.ProcNull, 1<<40) }},
		{"Get", false, func(w *win.Win) error { return w.Get(make([]byte, 4), win.ProcNull, 0) }},
		{"PutT", false, func(w *win.Win) error { return win.PutT(w, []int64{1}, win.ProcNull, -5) }},
		{"GetT", false, func(w *win.Win) error { return win.GetT(w, make([]int64, 3), win.ProcNull, 0) }},
		{"Accumulate", false, func(w *win.Win) error { return win.Accumulate(w, []int32{1}, win.ProcNull, 0, atomics.Sum) }},
		{"GetAccumulate", false, func(w *win.Win) error {
			return win.GetAccumulate(w, []int64{1}, make([]int64, 1), win.ProcNull, 0, atomics.Sum)
		}},
		{"FetchAndOp", false, func(w *win.Win) error {
			_, err := win.FetchAndOp(w, 1.5, win.ProcNull, 0, atomics.Sum)
			return err
		}},
		{"CompareAndSwap", false, func(w *win.Win) error {
			_, err := win.CompareAndSwap(w, int64(1), 0, win.ProcNull, 0)
			return err
		}},
		{"Rput", true, func(w *win.Win) error { _, err := w.Rput([]byte{1}, win.ProcNull, 0); return err }},
		{"Rget", true, func(w *win.Win) error { _, err := w.Rget([]byte{1}, win.ProcNull, 0); return err }},
		{"Raccumulate", true, func(w *win.Win) error {
			_, err := win.Raccumulate(w, []int64{1}, win.ProcNull, 0, atomics.Sum)
			return err
		}},
		{"RgetAccumulate", true, func(w *win.Win) error {
			_, err := win.RgetAccumulate(w, nil, make([]int64, 1), win.ProcNull, 0, atomics.NoOp)
			return err
		}},
	}
	sync := []struct {
		name string
		call func(w *win.Win) error
	}{
		{"Lock(Exclusive)", func(w *win.Win) error { return w.Lock(win.Exclusive, win.ProcNull, 0) }},
		{"Lock(Shared)", func(w *win.Win) error { return w.Lock(win.Shared, win.ProcNull, 0) }},
		{"Lock(NoCheck)", func(w *win.Win) error { return w.Lock(win.Shared, win.ProcNull, win.ModeNoCheck) }},
		{"Unlock", func(w *win.Win) error { return w.Unlock(win.ProcNull) }},
		{"Flush", func(w *win.Win) error { return w.Flush(win.ProcNull) }},
		{"FlushLocal", func(w *win.Win) error { return w.FlushLocal(win.ProcNull) }},
	}
	epochs := []struct {
		name          string
		passive       bool
		open, close   func(w *win.Win, c *comm.Comm) error
		closeOnFailed bool
	}{
		{"no epoch", false, func(*win.Win, *comm.Comm) error { return nil }, func(*win.Win, *comm.Comm) error { return nil }, false},
		{"Lock on the other rank", true,
			func(w *win.Win, c *comm.Comm) error { return w.Lock(win.Exclusive, 1-c.Rank(), 0) },
			func(w *win.Win, c *comm.Comm) error { return w.Unlock(1 - c.Rank()) }, false},
		{"LockAll", true, func(w *win.Win, c *comm.Comm) error { return w.LockAll(0) },
			func(w *win.Win, c *comm.Comm) error { return w.UnlockAll() }, false},
		{"Fence", false, func(w *win.Win, c *comm.Comm) error { return w.Fence(0) },
			func(w *win.Win, c *comm.Comm) error { return w.Fence(win.ModeNoSucceed) }, false},
		{"Start", false, func(w *win.Win, c *comm.Comm) error {
			g, _ := c.Group().Incl(c.Rank())
			if err := w.Post(g, 0); err != nil {
				return err
			}
			return w.Start(g, 0)
		}, func(w *win.Win, c *comm.Comm) error { return errors.Join(w.Complete(), w.Wait()) }, false},
	}
	for _, ep := range epochs {
		t.Run(ep.name, func(t *testing.T) {
			runLocal(t, 2, func(c *comm.Comm) error {
				w, err := win.AllocateShared(c, 8, 8, nil)
				if err != nil {
					return err
				}
				defer w.Free()
				if err := ep.open(w, c); err != nil {
					return err
				}
				var errs []error
				for _, r := range rma {
					err := r.call(w)
					open := ep.name != "no epoch" && (ep.passive || !r.passive)
					switch {
					case open && err != nil:
						errs = append(errs, fmt.Errorf("%s to ProcNull in %s: %v, want a no-op", r.name, ep.name, err))
					case !open && !isClass(err, win.ErrRMASync):
						errs = append(errs, fmt.Errorf("%s to ProcNull in %s: %v, want ErrRMASync", r.name, ep.name, err))
					}
				}
				for _, s := range sync {
					if err := s.call(w); !isClass(err, win.ErrRank) || !strings.Contains(err.Error(), "ProcNull") {
						errs = append(errs, fmt.Errorf("%s(ProcNull) in %s: %v, want ErrRank naming ProcNull", s.name, ep.name, err))
					}
				}
				errs = append(errs, ep.close(w, c))
				return errors.Join(errs...)
			})
		})
	}
}

// TestEpochsAfterEmptyFence: a Fence opens an access epoch only if RMA calls
// follow it, so Lock, LockAll and Start right after a Fence with no RMA are
// legal, and after them the fence epoch is closed (no RMA without a lock).
func TestEpochsAfterEmptyFence(t *testing.T) {
	runLocal(t, 2, func(c *comm.Comm) error {
		w, err := win.AllocateShared(c, 8, 8, nil)
		if err != nil {
			return err
		}
		other := 1 - c.Rank()
		steps := []struct {
			name string
			do   func() error
		}{
			{"Fence", func() error { return w.Fence(0) }},
			{"exclusive Lock after an empty Fence", func() error { return w.Lock(win.Exclusive, other, 0) }},
			{"Unlock", func() error { return w.Unlock(other) }},
			{"Fence", func() error { return w.Fence(0) }},
			{"LockAll after an empty Fence", func() error { return w.LockAll(0) }},
			{"UnlockAll", func() error { return w.UnlockAll() }},
			{"Fence", func() error { return w.Fence(0) }},
			{"Post after an empty Fence", func() error { return w.Post(c.Group(), 0) }},
			{"Start after an empty Fence", func() error { return w.Start(c.Group(), 0) }},
			{"Complete", func() error { return w.Complete() }},
			{"Wait", func() error { return w.Wait() }},
		}
		for _, s := range steps {
			if err := s.do(); err != nil {
				return fmt.Errorf("%s: %v", s.name, err)
			}
		}
		if err := w.Put([]byte{1}, other, 0); !errors.Is(err, win.ErrRMASync) {
			return fmt.Errorf("Put after the epochs closed: %v, want ErrRMASync", err)
		}
		return w.Free()
	})
}
