package win_test

// Rank bodies that run under both backends: shmrun's (the default build)
// and the MPI backend (-tags mpi, started by the MPI's launcher). They use
// only the API both provide.

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/win"
)

func init() {
	ranktest.Register("be_fence", beFence)
	ranktest.Register("be_lock", beLock)
	ranktest.Register("be_pscw", bePSCW)
	ranktest.Register("be_shared", beShared)
	ranktest.Register("be_errors", beErrors)
	ranktest.Register("be_dynamic", beDynamic)
	ranktest.Register("be_types", beTypes)
	ranktest.Register("be_rreq", beRequests)
	ranktest.Register("be_local", beLocal)
	ranktest.Register("be_longwait", beLongWait)
	ranktest.Register("be_epochs", beEpochs)
	ranktest.Register("be_pscw_goroutines", bePSCWGoroutines)
	ranktest.Register("be_lock_goroutines", beLockGoroutines)
	ranktest.Register("be_fair_locks", beFairLocks)
	ranktest.Register("be_lockall_nodeadlock", beLockAllNoDeadlock)
	ranktest.Register("be_flush_goroutines", beFlushGoroutines)
	ranktest.Register("be_lockall_goroutines", beLockAllGoroutines)
	ranktest.Register("be_acc_mix", beAccMix)
	ranktest.Register("be_nolocks", beNoLocks)
}

// TestBackends runs the bodies above at rank counts that include odd ones
// and more ranks than cores.
func TestBackends(t *testing.T) {
	ranktest.RunEach(t, []string{"be_fence", "be_lock", "be_pscw", "be_shared", "be_errors", "be_dynamic", "be_types", "be_rreq", "be_local", "be_longwait", "be_epochs", "be_pscw_goroutines", "be_lock_goroutines", "be_acc_mix", "be_nolocks", "be_fair_locks", "be_lockall_nodeadlock", "be_flush_goroutines", "be_lockall_goroutines"}, []int{1, 2, 3, 5})
}

// newWin makes a window of each flavor the backends share, by index:
// Allocate, AllocateShared, Create over comm.AllocMem memory (freed with
// the window by done), and Create over Go memory that starts 8 bytes past
// a 16-byte boundary (MPICH 4.0.2 misplaces accumulates into such windows
// unless the backend aligns them).
func newWin(c *comm.Comm, flavor, size int) (*win.Win, error) {
	switch flavor {
	case 0:
		return win.Allocate(c, size, 8, nil)
	case 1:
		return win.AllocateShared(c, size, 8, nil)
	case 2:
		mem, err := comm.AllocMem(size, nil)
		if err != nil {
			return nil, err
		}
		allocMem = mem
		return win.Create(c, mem, 8, nil)
	}
	buf := make([]byte, size+16)
	skip := (24 - int(uintptr(unsafe.Pointer(&buf[0]))%16)) % 16
	return win.Create(c, buf[skip:skip+size:skip+size], 8, nil)
}

// allocMem is the memory of newWin's AllocMem window.
var allocMem []byte

// beFence: a fence epoch of Puts around the ring, Gets and accumulates of
// every rank to every rank, checked after the closing Fence; fetching
// calls inside a fence epoch, which return their data at once.
func beFence(c *comm.Comm) error {
	r, n := c.Rank(), c.Size()
	for flavor := range 4 {
		if flavor == 1 && !oneNode(c) {
			continue
		}
		w, err := newWin(c, flavor, 8*(n+2))
		if err != nil {
			return err
		}
		for i, v := range w.Local() {
			if v != 0 {
				return fmt.Errorf("flavor %d: byte %d of a new window is %d", flavor, i, v)
			}
		}
		if err := w.Fence(0); err != nil {
			return err
		}
		for t := range n {
			if err := win.PutT(w, []int64{int64(100*r + t)}, t, r); err != nil {
				return err
			}
			if err := win.Accumulate(w, []int64{int64(r + 1)}, t, n, atomics.Sum); err != nil {
				return err
			}
		}
		if err := w.Fence(0); err != nil {
			return err
		}
		mine, err := win.View[int64](w.Local())
		if err != nil {
			return err
		}
		for q := range n {
			if mine[q] != int64(100*q+r) {
				return fmt.Errorf("flavor %d: element %d = %d after the fence, want %d", flavor, q, mine[q], 100*q+r)
			}
		}
		if err := ranktest.Want("accumulated", mine[n], n*(n+1)/2); err != nil {
			return err
		}
		// In the next epoch: Get, FetchAndOp, CompareAndSwap and
		// GetAccumulate return their data before the Fence.
		next := (r + 1) % n
		got := make([]int64, n)
		if err := win.GetT(w, got, next, 0); err != nil {
			return err
		}
		for q := range n {
			if got[q] != int64(100*q+next) {
				return fmt.Errorf("flavor %d: Get in a fence epoch: %v", flavor, got)
			}
		}
		if err := w.Fence(0); err != nil {
			return err
		}
		if err := fenceAtomics(w, flavor, n); err != nil {
			return err
		}
		if err := w.Free(); err != nil {
			return err
		}
		if flavor == 2 {
			if err := comm.FreeMem(allocMem[1:]); !errors.Is(err, comm.ErrArg) {
				return fmt.Errorf("FreeMem of a sub-slice: %v", err)
			}
			if err := comm.FreeMem(allocMem); err != nil {
				return err
			}
		}
	}
	fmt.Printf("rank %d ok\n", r)
	return nil
}

// fenceAtomics: FetchAndOp, CompareAndSwap and GetAccumulate inside fence
// epochs return their data at once; the last Fence closes the window's
// epochs.
func fenceAtomics(w *win.Win, flavor, n int) error {
	r := w.Rank()
	next := (r + 1) % n
	mine, err := win.View[int64](w.Local())
	if err != nil {
		return err
	}
	old, err := win.FetchAndOp(w, int64(0), next, n, atomics.NoOp)
	if err != nil {
		return err
	}
	if err := ranktest.Want("FetchAndOp NoOp", old, n*(n+1)/2); err != nil {
		return err
	}
	if err := w.Fence(0); err != nil {
		return err
	}
	// Only rank 0 swaps element n+1 of every rank.
	if r == 0 {
		for t := range n {
			v, err := win.CompareAndSwap(w, int64(7), int64(0), t, n+1)
			if err != nil {
				return err
			}
			if v != 0 {
				return fmt.Errorf("flavor %d: CompareAndSwap read %d", flavor, v)
			}
		}
	}
	if err := w.Fence(0); err != nil {
		return err
	}
	res := make([]int64, 1)
	if err := win.GetAccumulate(w, []int64{1}, res, next, n+1, atomics.Sum); err != nil {
		return err
	}
	if res[0] < 7 || res[0] > int64(7+n) {
		return fmt.Errorf("flavor %d: GetAccumulate read %d", flavor, res[0])
	}
	if err := w.Fence(win.ModeNoSucceed); err != nil {
		return err
	}
	if err := ranktest.Want("after every GetAccumulate", mine[n+1], 7+1); err != nil {
		return err
	}
	return nil
}

// oneNode says whether every rank of c shares one node (AllocateShared
// works on c).
func oneNode(c *comm.Comm) bool {
	sh, err := c.SplitType(comm.TypeShared, 0, nil)
	if err != nil {
		return false
	}
	defer sh.Free()
	return sh.Size() == c.Size()
}

// beLock: a counter on rank 0 that every rank increments k times under an
// exclusive lock (Get, Flush, Put), and one that every rank increments
// with FetchAndOp under LockAll: both must end at n·k.
func beLock(c *comm.Comm) error {
	return onFlavors(c, 32, lockOn)
}

// onFlavors runs body on an Allocate window of size bytes a rank and, when
// every rank shares one node, an AllocateShared one (the MPI backend's
// load/store path), freeing each after; then says the rank is ok.
func onFlavors(c *comm.Comm, size int, body func(c *comm.Comm, w *win.Win) error) error {
	flavors := []int{0}
	if oneNode(c) {
		flavors = append(flavors, 1)
	}
	for _, f := range flavors {
		w, err := newWin(c, f, size)
		if err != nil {
			return err
		}
		if err := body(c, w); err != nil {
			return fmt.Errorf("%v window: %w", w.Attr().Flavor, err)
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		if err := w.Free(); err != nil {
			return err
		}
	}
	fmt.Printf("rank %d ok\n", c.Rank())
	return nil
}

func lockOn(c *comm.Comm, w *win.Win) error {
	r, n := c.Rank(), c.Size()
	const k = 50
	for range k {
		if err := w.Lock(win.Exclusive, 0, 0); err != nil {
			return err
		}
		v := make([]int64, 1)
		if err := win.GetT(w, v, 0, 0); err != nil {
			return err
		}
		if err := w.Flush(0); err != nil {
			return err
		}
		v[0]++
		if err := win.PutT(w, v, 0, 0); err != nil {
			return err
		}
		if err := w.Unlock(0); err != nil {
			return err
		}
	}
	if err := w.LockAll(0); err != nil {
		return err
	}
	seen := map[int64]bool{}
	for range k {
		old, err := win.FetchAndOp(w, int64(1), 0, 1, atomics.Sum)
		if err != nil {
			return err
		}
		if seen[old] {
			return fmt.Errorf("FetchAndOp returned %d twice", old)
		}
		seen[old] = true
	}
	if err := w.UnlockAll(); err != nil {
		return err
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	if r == 0 {
		if err := w.Lock(win.Shared, 0, 0); err != nil {
			return err
		}
		v := make([]int64, 2)
		if err := win.GetT(w, v, 0, 0); err != nil {
			return err
		}
		if err := w.Unlock(0); err != nil {
			return err
		}
		if err := ranktest.Want("counters", v, []int64{int64(n * k), int64(n * k)}); err != nil {
			return err
		}
	}
	return rwLockOn(c, w)
}

// rwLockOn: readers against writers. A writer moves words 2 and 3 of a
// target from x to x+1, a Put and a Flush apart, under an exclusive lock;
// a reader under a shared lock or LockAll must find them equal. Where the
// locks are shmrun's (its backend, and the MPI backend's shared windows),
// rank 0 also holds exclusive locks on two targets at once while others
// may be in LockAll: shmrun's LockAll holds nothing while it waits, so
// that cannot deadlock (MPICH's can: the standard leaves the order in
// which LockAll takes its locks open). At the end the words 2 add up to
// the writes.
func rwLockOn(c *comm.Comm, w *win.Win) error {
	r, n := c.Rank(), c.Size()
	pair := func(t int) ([]int64, error) {
		v := make([]int64, 2)
		if err := win.GetT(w, v, t, 2); err != nil {
			return nil, err
		}
		if v[0] != v[1] {
			return nil, fmt.Errorf("rank %d's words 2 and 3 read %d and %d under a lock: a writer was in", t, v[0], v[1])
		}
		return v, nil
	}
	bump := func(t int) error {
		v, err := pair(t)
		if err != nil {
			return err
		}
		if err := win.PutT(w, []int64{v[0] + 1}, t, 2); err != nil {
			return err
		}
		if err := w.Flush(t); err != nil {
			return err
		}
		return win.PutT(w, []int64{v[0] + 1}, t, 3)
	}
	ownLocks := !mpiBackend || w.Attr().Flavor == win.FlavorShared
	writes := int64(0)
	for i := range 60 {
		t := (r + i) % n
		var err error
		switch (r + i) % 3 {
		case 0:
			if err = w.Lock(win.Exclusive, t, 0); err == nil {
				err = firstErr(bump(t), w.Unlock(t))
				writes++
			}
		case 1:
			if err = w.Lock(win.Shared, t, 0); err == nil {
				_, err = pair(t)
				err = firstErr(err, w.Unlock(t))
			}
		default:
			if err = w.LockAll(0); err == nil {
				for q := range n {
					if _, err = pair(q); err != nil {
						break
					}
				}
				err = firstErr(err, w.UnlockAll())
			}
		}
		if err != nil {
			return err
		}
		if ownLocks && r == 0 && n > 1 && i%10 == 0 {
			if err := w.Lock(win.Exclusive, 0, 0); err != nil {
				return err
			}
			if err := w.Lock(win.Exclusive, 1, 0); err != nil {
				return err
			}
			if err := firstErr(bump(1), bump(0), w.Unlock(1), w.Unlock(0)); err != nil {
				return err
			}
			writes += 2
		}
	}
	total := []int64{writes}
	if err := comm.AllreduceInPlace(c, total, atomics.Sum); err != nil {
		return err
	}
	if err := w.LockAll(0); err != nil {
		return err
	}
	sum := int64(0)
	for q := range n {
		v, err := pair(q)
		if err != nil {
			return err
		}
		sum += v[0]
	}
	if err := w.UnlockAll(); err != nil {
		return err
	}
	if sum != total[0] {
		return fmt.Errorf("the writers' words add up to %d, %d writes were made", sum, total[0])
	}
	return c.Barrier()
}

// firstErr is the first non-nil error of errs.
func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// bePSCW: every rank exposes its window to its left neighbour and
// accesses its right one, round after round.
// beLongWait: waits long enough to pass the spin and yield phases into
// the futex sleep (the default policy spins ~10000 polls, yields 1 ms,
// then sleeps): an exclusive lock held while the others ask for it, and
// for LockAll; a Start before its Post; a Wait before the Completes. Each
// waiter must then see what the rank it waited for wrote.
func beLongWait(c *comm.Comm) error {
	return onFlavors(c, 16, longWaitOn)
}

// hold is how long a rank keeps the others waiting.
const hold = 5 * time.Millisecond

func longWaitOn(c *comm.Comm, w *win.Win) error {
	r := c.Rank()
	// Rank 0 holds target 0's exclusive lock, then writes and releases
	// it; the others wait for an exclusive lock, then for LockAll.
	for i, wait := range []struct {
		name         string
		lock, unlock func() error
	}{
		{"the exclusive lock", func() error { return w.Lock(win.Exclusive, 0, 0) }, func() error { return w.Unlock(0) }},
		{"LockAll", func() error { return w.LockAll(0) }, w.UnlockAll},
	} {
		want := int64(41 + i)
		if r == 0 {
			if err := w.Lock(win.Exclusive, 0, 0); err != nil {
				return err
			}
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		if r == 0 {
			time.Sleep(hold)
			if err := firstErr(win.PutT(w, []int64{want}, 0, 0), w.Unlock(0)); err != nil {
				return err
			}
		} else {
			got := []int64{0}
			if err := firstErr(wait.lock(), win.GetT(w, got, 0, 0), wait.unlock()); err != nil {
				return err
			}
			if got[0] != want {
				return fmt.Errorf("after a long wait for %s: %d, want %d", wait.name, got[0], want)
			}
		}
		if err := c.Barrier(); err != nil {
			return err
		}
	}
	// PSCW around the ring: the target posts late, the origin completes
	// late, so Start and Wait both sleep.
	next, prev, to, from, mine, err := ring(c, w)
	if err != nil {
		return err
	}
	if r%2 == 0 {
		time.Sleep(hold)
	}
	if err := w.Post(from, 0); err != nil {
		return err
	}
	if err := firstErr(w.Start(to, 0), win.PutT(w, []int64{int64(100 + r)}, next, 1)); err != nil {
		return err
	}
	if r%2 == 1 {
		time.Sleep(hold)
	}
	if err := firstErr(w.Complete(), w.Wait()); err != nil {
		return err
	}
	if mine[1] != int64(100+prev) {
		return fmt.Errorf("after long PSCW waits: %d, want %d", mine[1], 100+prev)
	}
	return c.Barrier()
}

func bePSCW(c *comm.Comm) error {
	return onFlavors(c, 8, pscwOn)
}

// ring is this rank's neighbours on the ring of c's ranks, the groups of
// each alone (a PSCW epoch's access and exposure groups), and its own
// part of w as int64s.
func ring(c *comm.Comm, w *win.Win) (next, prev int, to, from *comm.Group, mine []int64, err error) {
	r, n := c.Rank(), c.Size()
	next, prev = (r+1)%n, (r+n-1)%n
	world := c.Group()
	if to, err = world.Incl(next); err != nil {
		return
	}
	if from, err = world.Incl(prev); err != nil {
		return
	}
	mine, err = win.View[int64](w.Local())
	return
}

func pscwOn(c *comm.Comm, w *win.Win) error {
	r := c.Rank()
	next, prev, to, from, mine, err := ring(c, w)
	if err != nil {
		return err
	}
	for round := range 20 {
		if err := w.Post(from, 0); err != nil {
			return err
		}
		if err := w.Start(to, 0); err != nil {
			return err
		}
		if err := win.PutT(w, []int64{int64(1000*round + r)}, next, 0); err != nil {
			return err
		}
		if err := w.Complete(); err != nil {
			return err
		}
		if round%2 == 0 {
			if err := w.Wait(); err != nil {
				return err
			}
		} else {
			// Test until the epoch ends (MPI_Win_test).
			for done := false; !done; {
				var err error
				if done, err = w.Test(); err != nil {
					return err
				}
			}
		}
		if mine[0] != int64(1000*round+prev) {
			return fmt.Errorf("round %d: %d", round, mine[0])
		}
	}
	return nil
}

// bePSCWGoroutines: each rank's access epoch in one goroutine, its
// exposure epoch in another, the Start first. A Start or Complete that
// waits for the targets' Posts must let this rank's own Post through:
// every rank's Post is what the others wait for.
func bePSCWGoroutines(c *comm.Comm) error {
	return onFlavors(c, 8, func(c *comm.Comm, w *win.Win) error {
		r := c.Rank()
		next, prev, to, from, mine, err := ring(c, w)
		if err != nil {
			return err
		}
		for round := range 4 {
			access := make(chan error, 1)
			go func() {
				err := w.Start(to, 0)
				if err == nil {
					err = win.PutT(w, []int64{int64(1000*round + r)}, next, 0)
				}
				if err == nil {
					err = w.Complete()
				}
				access <- err
			}()
			// Let the Start begin (and wait, where it waits for Posts).
			time.Sleep(5 * time.Millisecond)
			if err := w.Post(from, 0); err != nil {
				return err
			}
			if err := w.Wait(); err != nil {
				return err
			}
			if err := <-access; err != nil {
				return fmt.Errorf("round %d: access epoch: %w", round, err)
			}
			if mine[0] != int64(1000*round+prev) {
				return fmt.Errorf("round %d: %d", round, mine[0])
			}
		}
		return nil
	})
}

// beLockGoroutines: rank 1 holds rank 0's lock until rank 0 sends it a
// message; rank 0 waits for that lock in one goroutine while another
// locks rank 1, reads from it and sends the message. The goroutine that
// waits for a lock (in Lock, or in the Unlock of an MPI that takes locks
// lazily) must not keep the other from the window.
func beLockGoroutines(c *comm.Comm) error {
	if c.Size() < 2 {
		fmt.Printf("rank %d ok\n", c.Rank())
		return nil
	}
	return onFlavors(c, 8, func(c *comm.Comm, w *win.Win) error {
		switch c.Rank() {
		case 0:
			if err := c.Barrier(); err != nil { // rank 1 holds the lock
				return err
			}
			first := make(chan error, 1)
			go func() {
				err := w.Lock(win.Exclusive, 0, 0)
				if err == nil {
					err = win.PutT(w, []int64{7}, 0, 0)
				}
				if err == nil {
					err = w.Unlock(0)
				}
				first <- err
			}()
			time.Sleep(5 * time.Millisecond)
			got := []int64{0}
			if err := w.Lock(win.Shared, 1, 0); err != nil {
				return err
			}
			if err := win.GetT(w, got, 1, 0); err != nil {
				return err
			}
			if err := w.Unlock(1); err != nil {
				return err
			}
			if got[0] != 0 {
				return fmt.Errorf("rank 1's word read %d, want 0", got[0])
			}
			if err := c.Send(nil, 1, 0); err != nil {
				return err
			}
			if err := <-first; err != nil {
				return fmt.Errorf("the goroutine waiting for the lock: %w", err)
			}
		case 1:
			if err := w.Lock(win.Exclusive, 0, 0); err != nil {
				return err
			}
			if err := win.PutT(w, []int64{3}, 0, 0); err != nil {
				return err
			}
			if err := w.Flush(0); err != nil {
				return err
			}
			if err := c.Barrier(); err != nil {
				return err
			}
			if _, err := c.Recv(nil, 0, 0); err != nil {
				return err
			}
			if err := w.Unlock(0); err != nil {
				return err
			}
		default:
			if err := c.Barrier(); err != nil {
				return err
			}
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		if c.Rank() == 0 {
			got := []int64{0}
			if err := w.Lock(win.Shared, 0, 0); err != nil {
				return err
			}
			if err := win.GetT(w, got, 0, 0); err != nil {
				return err
			}
			if err := w.Unlock(0); err != nil {
				return err
			}
			if got[0] != 7 {
				return fmt.Errorf("rank 0's word is %d, want 7 (rank 0's Put after rank 1's)", got[0])
			}
		}
		return nil
	})
}

// beAccMix: in fence and PSCW epochs, half the ranks Accumulate into
// one word of rank 0 while the others FetchAndOp and GetAccumulate it:
// accumulates to one location are atomic with each other whichever call
// makes them, so no update is lost.
func beAccMix(c *comm.Comm) error {
	r, n := c.Rank(), c.Size()
	const k = 2000
	for _, flavor := range []int{0, 2, 3} {
		w, err := newWin(c, flavor, 8)
		if err != nil {
			return err
		}
		add := func() error {
			for i := range k {
				var err error
				switch {
				case r%2 == 0:
					err = win.Accumulate(w, []int64{1}, 0, 0, atomics.Sum)
				case i%2 == 0:
					_, err = win.FetchAndOp(w, int64(1), 0, 0, atomics.Sum)
				default:
					err = win.GetAccumulate(w, []int64{1}, []int64{0}, 0, 0, atomics.Sum)
				}
				if err != nil {
					return err
				}
			}
			return nil
		}
		if err := w.Fence(0); err != nil {
			return err
		}
		if err := add(); err != nil {
			return fmt.Errorf("flavor %d: fence epoch: %w", flavor, err)
		}
		if err := w.Fence(0); err != nil {
			return err
		}
		// A PSCW epoch of every rank to rank 0.
		if r == 0 {
			if err := w.Post(c.Group(), 0); err != nil {
				return err
			}
		}
		zero, err := c.Group().Incl(0)
		if err != nil {
			return err
		}
		if err := w.Start(zero, 0); err != nil {
			return err
		}
		if err := add(); err != nil {
			return fmt.Errorf("flavor %d: PSCW epoch: %w", flavor, err)
		}
		if err := w.Complete(); err != nil {
			return err
		}
		if r == 0 {
			if err := w.Wait(); err != nil {
				return err
			}
			mine, err := win.View[int64](w.Local())
			if err != nil {
				return err
			}
			if mine[0] != int64(2*k*n) {
				return fmt.Errorf("flavor %d: the word is %d after %d increments: %d lost", flavor, mine[0], 2*k*n, int64(2*k*n)-mine[0])
			}
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		if err := w.Free(); err != nil {
			return err
		}
		if flavor == 2 {
			if err := comm.FreeMem(allocMem); err != nil {
				return err
			}
		}
	}
	fmt.Printf("rank %d ok\n", r)
	return nil
}

// beNoLocks: info no_locks=true is a promise both backends hold the
// program to (Lock and LockAll are ErrRMASync, fences work), and a
// malformed value on one rank is ErrInfo on every rank, not a hang of
// the others in the window's creation.
func beNoLocks(c *comm.Comm) error {
	w, err := win.Allocate(c, 8, 8, win.Info{"no_locks": "true"})
	if err != nil {
		return err
	}
	if err := ranktest.WantErr("Lock with no_locks", w.Lock(win.Shared, 0, 0), win.ErrRMASync); err != nil {
		return err
	}
	if err := ranktest.WantErr("LockAll with no_locks", w.LockAll(0), win.ErrRMASync); err != nil {
		return err
	}
	if err := w.Fence(0); err != nil {
		return err
	}
	if err := win.PutT(w, []int64{int64(c.Rank())}, (c.Rank()+1)%c.Size(), 0); err != nil {
		return err
	}
	if err := w.Fence(win.ModeNoSucceed); err != nil {
		return err
	}
	if err := w.Free(); err != nil {
		return err
	}
	info := win.Info{"no_locks": "false"}
	if c.Rank() == 0 {
		info["no_locks"] = "maybe"
	}
	if _, err := win.Allocate(c, 8, 8, info); !errors.Is(err, win.ErrInfo) {
		return fmt.Errorf("Allocate with rank 0's no_locks=maybe: %v, want ErrInfo", err)
	}
	fmt.Printf("rank %d ok\n", c.Rank())
	return nil
}

// beShared: a shared window of the node's ranks, written by load/store and
// read by the neighbours through SharedQuery.
func beShared(c *comm.Comm) error {
	sh, err := c.SplitType(comm.TypeShared, 0, nil)
	if err != nil {
		return err
	}
	r, n := sh.Rank(), sh.Size()
	w, err := win.AllocateShared(sh, 8*(r+1), 8, nil)
	if err != nil {
		return err
	}
	if err := w.LockAll(0); err != nil {
		return err
	}
	mine, err := win.View[int64](w.Local())
	if err != nil {
		return err
	}
	for i := range mine {
		mine[i] = int64(10*r + i)
	}
	if err := w.Sync(); err != nil {
		return err
	}
	if err := sh.Barrier(); err != nil {
		return err
	}
	if err := w.Sync(); err != nil {
		return err
	}
	off := 0
	for q := range n {
		s, err := w.SharedQuery(q)
		if err != nil {
			return err
		}
		if err := ranktest.Want(fmt.Sprintf("rank %d's segment", q), fmt.Sprint(s.Size, s.DispUnit, s.Offset), fmt.Sprint(8*(q+1), 8, off)); err != nil {
			return err
		}
		off += s.Size
		v, err := win.View[int64](s)
		if err != nil {
			return err
		}
		for i := range v {
			if v[i] != int64(10*q+i) {
				return fmt.Errorf("rank %d's element %d = %d", q, i, v[i])
			}
		}
	}
	if err := w.UnlockAll(); err != nil {
		return err
	}
	if err := w.Free(); err != nil {
		return err
	}
	if err := sh.Free(); err != nil {
		return err
	}
	fmt.Printf("rank %d ok\n", c.Rank())
	return nil
}

// beErrors: misuse is the same error class on both backends, found before
// the MPI sees it, and the window stays usable.
func beErrors(c *comm.Comm) error {
	r, n := c.Rank(), c.Size()
	w, err := win.Allocate(c, 16, 8, nil)
	if err != nil {
		return err
	}
	cases := []struct {
		what  string
		err   error
		class error
	}{
		{"Put outside an epoch", w.Put([]byte{1}, 0, 0), win.ErrRMASync},
		{"Get outside an epoch", win.GetT(w, []int64{0}, 0, 0), win.ErrRMASync},
		{"ProcNull outside an epoch", w.Put([]byte{1}, win.ProcNull, 0), win.ErrRMASync},
		{"Unlock without Lock", w.Unlock(0), win.ErrRMASync},
		{"UnlockAll without LockAll", w.UnlockAll(), win.ErrRMASync},
		{"Flush outside an epoch", w.Flush(0), win.ErrRMASync},
		{"Complete without Start", w.Complete(), win.ErrRMASync},
		{"Wait without Post", w.Wait(), win.ErrRMASync},
		{"Lock of rank n", w.Lock(win.Exclusive, n, 0), win.ErrRank},
		{"Lock of ProcNull", w.Lock(win.Exclusive, win.ProcNull, 0), win.ErrRank},
		{"Lock type 7", w.Lock(win.LockType(7), 0, 0), win.ErrLockType},
		{"Post to a nil group", w.Post(nil, 0), comm.ErrGroup},
		{"Start on a nil group", w.Start(nil, 0), comm.ErrGroup},
	}
	for _, tc := range cases {
		if err := ranktest.WantErr(tc.what, tc.err, tc.class); err != nil {
			return err
		}
	}
	if err := w.Lock(win.Shared, 0, 0); err != nil {
		return err
	}
	cases = []struct {
		what  string
		err   error
		class error
	}{
		{"Lock twice", w.Lock(win.Shared, 0, 0), win.ErrRMASync},
		{"LockAll in a Lock epoch", w.LockAll(0), win.ErrRMASync},
		{"Fence in a Lock epoch", w.Fence(0), win.ErrRMASync},
		{"Put past the part", w.Put(make([]byte, 9), 0, 1), win.ErrRMARange},
		{"Put at disp -1", w.Put([]byte{1}, 0, -1), win.ErrDisp},
		{"Put to rank n", w.Put([]byte{1}, n, 0), win.ErrRank},
		{"Put to an unlocked rank", w.Put([]byte{1}, min(1, n-1), 0), map[bool]error{true: nil, false: win.ErrRMASync}[n == 1]},
		{"Accumulate with NoOp", win.Accumulate(w, []float64{1}, 0, 0, atomics.NoOp), win.ErrOp},
		{"Free in a Lock epoch", w.Free(), win.ErrRMASync},
	}
	for _, tc := range cases {
		if tc.class == nil {
			continue
		}
		if err := ranktest.WantErr(tc.what, tc.err, tc.class); err != nil {
			return err
		}
	}
	if err := w.Put([]byte{1}, win.ProcNull, 0); err != nil {
		return fmt.Errorf("Put to ProcNull in a Lock epoch: %v", err)
	}
	// No data reaches no memory: a Put or Get of 0 bytes past the part
	// succeeds (as Open MPI and MPICH take it); a negative disp is still
	// ErrDisp.
	if err := w.Put(nil, 0, 1000); err != nil {
		return fmt.Errorf("Put of 0 bytes past the part: %v", err)
	}
	if err := w.Get(nil, 0, 1000); err != nil {
		return fmt.Errorf("Get of 0 bytes past the part: %v", err)
	}
	if err := ranktest.WantErr("Put of 0 bytes at disp -1", w.Put(nil, 0, -1), win.ErrDisp); err != nil {
		return err
	}
	if err := w.Unlock(0); err != nil {
		return err
	}
	// The window still works.
	if err := w.Fence(0); err != nil {
		return err
	}
	if err := win.PutT(w, []int64{int64(r)}, (r+1)%n, 1); err != nil {
		return err
	}
	if err := w.Fence(win.ModeNoSucceed); err != nil {
		return err
	}
	mine, err := win.View[int64](w.Local())
	if err != nil {
		return err
	}
	if err := ranktest.Want("after the errors", mine[1], (r+n-1)%n); err != nil {
		return err
	}
	if err := w.Free(); err != nil {
		return err
	}
	if err := ranktest.WantErr("Fence on a freed window", w.Fence(0), win.ErrWin); err != nil {
		return err
	}
	var nilWin *win.Win
	if err := ranktest.WantErr("Fence on a nil window", nilWin.Fence(0), win.ErrWin); err != nil {
		return err
	}
	fmt.Printf("rank %d ok\n", r)
	return nil
}

// beDynamic: a dynamic window over comm.AllocMem memory: addresses
// exchanged by Allgather, Put, Get, FetchAndOp and CompareAndSwap to the
// neighbour's region under LockAll, Detach and Free. An MPI whose dynamic
// windows are broken refuses CreateDynamic with ErrRMAFlavor, naming
// itself; the shmrun backend never does.
func beDynamic(c *comm.Comm) error {
	r, n := c.Rank(), c.Size()
	w, err := win.CreateDynamic(c, nil)
	if errors.Is(err, win.ErrRMAFlavor) && strings.Contains(err.Error(), "Open MPI") {
		fmt.Printf("rank %d ok (refused: %v)\n", r, err)
		return nil
	}
	if err != nil {
		return err
	}
	mem, err := comm.AllocMem(64, nil)
	if err != nil {
		return err
	}
	if err := w.Attach(mem); err != nil {
		return err
	}
	if err := ranktest.WantErr("Attach overlapping", w.Attach(mem[8:16]), win.ErrRMAAttach); err != nil {
		return err
	}
	addrs := make([]int64, n)
	if err := comm.Allgather(c, []int64{int64(comm.Address(mem))}, addrs); err != nil {
		return err
	}
	next := (r + 1) % n
	at := int(addrs[next])
	if err := w.LockAll(0); err != nil {
		return err
	}
	if err := win.PutT(w, []int64{int64(100 + r)}, next, at); err != nil {
		return err
	}
	if err := w.Flush(next); err != nil {
		return err
	}
	got := make([]int64, 1)
	if err := win.GetT(w, got, next, at); err != nil {
		return err
	}
	if err := ranktest.Want("Get after Put", got[0], 100+r); err != nil {
		return err
	}
	old, err := win.FetchAndOp(w, int64(5), next, at+8, atomics.Sum)
	if err != nil {
		return err
	}
	if err := ranktest.Want("FetchAndOp", old, 0); err != nil {
		return err
	}
	old, err = win.CompareAndSwap(w, int64(9), int64(5), next, at+8)
	if err != nil {
		return err
	}
	if err := ranktest.Want("CompareAndSwap", old, 5); err != nil {
		return err
	}
	if err := w.UnlockAll(); err != nil {
		return err
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	mine, err := win.View[int64](mem)
	if err != nil {
		return err
	}
	prev := (r + n - 1) % n
	if err := ranktest.Want("my region", mine[:2], []int64{int64(100 + prev), 9}); err != nil {
		return err
	}
	if err := w.Detach(mem); err != nil {
		return err
	}
	if err := ranktest.WantErr("Detach twice", w.Detach(mem), win.ErrRMAAttach); err != nil {
		return err
	}
	if err := w.Free(); err != nil {
		return err
	}
	if err := comm.FreeMem(mem); err != nil {
		return err
	}
	fmt.Printf("rank %d ok\n", r)
	return nil
}

// beTypes: the datatype forms of Put, Get, Accumulate and GetAccumulate
// with a column of a 4x4 int64 matrix (dtype.Vector) on both sides, in a
// fence epoch and under LockAll.
func beTypes(c *comm.Comm) error {
	return onFlavors(c, 16*8, typesOn)
}

func typesOn(c *comm.Comm, w *win.Win) error {
	r, n := c.Rank(), c.Size()
	next, prev := (r+1)%n, (r+n-1)%n
	i64 := dtype.Basic(atomics.Int64)
	col, err := dtype.Vector(4, 1, 4, i64)
	if err != nil {
		return err
	}
	if err := col.Commit(); err != nil {
		return err
	}
	mine, err := win.View[int64](w.Local())
	if err != nil {
		return err
	}
	src := make([]int64, 16)
	for i := range src {
		src[i] = int64(100*r + i)
	}
	srcb := unsafe.Slice((*byte)(unsafe.Pointer(&src[0])), 8*len(src))
	// Column 1 of my matrix into column 2 of the next rank's.
	if err := w.Fence(0); err != nil {
		return err
	}
	if err := win.PutType(w, srcb[8:], 1, col, next, 2, 1, col); err != nil {
		return err
	}
	if err := w.Fence(0); err != nil {
		return err
	}
	for i := range 4 {
		if mine[4*i+2] != int64(100*prev+4*i+1) {
			return fmt.Errorf("PutType: column 2 = %v", mine)
		}
	}
	// Back: the next rank's column 2 into my column 3 (a fence epoch: the
	// data must be there when GetType returns).
	got := make([]int64, 16)
	gotb := unsafe.Slice((*byte)(unsafe.Pointer(&got[0])), 8*len(got))
	if err := win.GetType(w, gotb[24:], 1, col, next, 2, 1, col); err != nil {
		return err
	}
	for i := range 4 {
		if got[4*i+3] != int64(100*r+4*i+1) {
			return fmt.Errorf("GetType: %v", got)
		}
	}
	if err := w.Fence(win.ModeNoSucceed); err != nil {
		return err
	}
	// Every rank adds 1 to column 0 of every rank, then reads it.
	if err := w.LockAll(0); err != nil {
		return err
	}
	ones := make([]int64, 16)
	for i := range ones {
		ones[i] = 1
	}
	onesb := unsafe.Slice((*byte)(unsafe.Pointer(&ones[0])), 8*len(ones))
	for t := range n {
		if err := win.AccumulateType(w, onesb, 1, col, t, 0, 1, col, atomics.Sum); err != nil {
			return err
		}
	}
	if err := w.FlushAll(); err != nil {
		return err
	}
	wide := make([]byte, 256)
	if err := ranktest.WantErr("PutType of 2 columns into 1", win.PutType(w, wide, 2, col, next, 0, 1, col), win.ErrType); err != nil {
		return err
	}
	if err := w.UnlockAll(); err != nil {
		return err
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	if err := w.LockAll(0); err != nil {
		return err
	}
	res := make([]int64, 16)
	resb := unsafe.Slice((*byte)(unsafe.Pointer(&res[0])), 8*len(res))
	if err := win.GetAccumulateType(w, nil, 0, col, resb, 1, col, prev, 0, 1, col, atomics.NoOp); err != nil {
		return err
	}
	if err := w.UnlockAll(); err != nil {
		return err
	}
	for i := range 4 {
		if res[4*i] != int64(n) {
			return fmt.Errorf("AccumulateType then GetAccumulateType: %v", res)
		}
	}
	// A pair type, whose elements' data are two runs (DoubleInt has 4
	// bytes of padding): MaxLoc from every rank into rank 0's first two
	// elements, zeroed first.
	if err := c.Barrier(); err != nil {
		return err
	}
	if r == 0 {
		clear(w.Local()[:32])
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	pairs := []atomics.DoubleInt{{V: float64(r), I: int32(r)}, {V: -float64(r), I: int32(r)}}
	pb := unsafe.Slice((*byte)(unsafe.Pointer(&pairs[0])), int(unsafe.Sizeof(pairs[0]))*len(pairs))
	di := dtype.Basic(atomics.DoubleIntT)
	if err := w.LockAll(0); err != nil {
		return err
	}
	if err := win.AccumulateType(w, pb, 2, di, 0, 0, 2, di, atomics.MaxLoc); err != nil {
		return err
	}
	if err := w.UnlockAll(); err != nil {
		return err
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	if r == 0 {
		got, err := win.View[atomics.DoubleInt](w.Local()[:32])
		if err != nil {
			return err
		}
		exp := []atomics.DoubleInt{{V: float64(n - 1), I: int32(n - 1)}, {V: 0, I: 0}}
		if err := ranktest.Want("MaxLoc of DoubleInt by AccumulateType", got, exp); err != nil {
			return err
		}
	}
	return nil
}

// beRequests: Rput, Rget, Raccumulate and RgetAccumulate under LockAll,
// their requests complete; outside a passive-target epoch ErrRMASync.
func beRequests(c *comm.Comm) error {
	r, n := c.Rank(), c.Size()
	next, prev := (r+1)%n, (r+n-1)%n
	w, err := win.Allocate(c, 32, 8, nil)
	if err != nil {
		return err
	}
	if err := w.Fence(0); err != nil {
		return err
	}
	if _, err := w.Rput([]byte{1}, next, 0); !errors.Is(err, win.ErrRMASync) {
		return fmt.Errorf("Rput in a fence epoch: %v", err)
	}
	if err := w.Fence(win.ModeNoSucceed); err != nil {
		return err
	}
	if err := w.LockAll(0); err != nil {
		return err
	}
	v := make([]byte, 8)
	v[0] = byte(10 + r)
	q, err := w.Rput(v, next, 0)
	if err != nil {
		return err
	}
	v[0] = 99 // the request is complete: the origin may change
	if err := q.Wait(); err != nil {
		return err
	}
	if err := w.Flush(next); err != nil {
		return err
	}
	got := make([]byte, 8)
	q, err = w.Rget(got, next, 0)
	if err != nil {
		return err
	}
	if done, err := q.Test(); err != nil || !done {
		return fmt.Errorf("Rget's request: %v %v", done, err)
	}
	if err := ranktest.Want("Rget after Rput", got[0], 10+r); err != nil {
		return err
	}
	if _, err := win.Raccumulate(w, []int64{int64(r + 1)}, next, 1, atomics.Sum); err != nil {
		return err
	}
	if err := w.Flush(next); err != nil {
		return err
	}
	res := make([]int64, 1)
	q, err = win.RgetAccumulate(w, nil, res, next, 1, atomics.NoOp)
	if err != nil {
		return err
	}
	if err := q.Wait(); err != nil {
		return err
	}
	if err := ranktest.Want("RgetAccumulate after Raccumulate", res[0], r+1); err != nil {
		return err
	}
	if _, err := w.Rput(nil, win.ProcNull, 0); err != nil {
		return fmt.Errorf("Rput to ProcNull under LockAll: %v", err)
	}
	if err := w.UnlockAll(); err != nil {
		return err
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	mine, err := win.View[int64](w.Local())
	if err != nil {
		return err
	}
	if err := ranktest.Want("my words", fmt.Sprint(mine[0]&0xff, mine[1]), fmt.Sprint(10+prev, prev+1)); err != nil {
		return err
	}
	if err := w.Free(); err != nil {
		return err
	}
	fmt.Printf("rank %d ok\n", r)
	return nil
}

// beLocal: Checked and Placement on each flavor. Every rank stores its
// part through Checked; on a shared window it reads its neighbour's part
// through Checked (after a barrier and Sync); Placement counts the pages
// of every part this process maps, its own all touched.
func beLocal(c *comm.Comm) error {
	const n8 = 1024 // int64s a rank: two pages
	return onFlavors(c, 8*n8, func(c *comm.Comm, w *win.Win) error {
		r, n := c.Rank(), c.Size()
		mine, err := win.NewChecked[int64](w, r)
		if err != nil {
			return err
		}
		if mine.Len() != n8 {
			return fmt.Errorf("Checked of my part: %d elements, want %d", mine.Len(), n8)
		}
		for i := range n8 {
			mine.Store(i, int64(r*n8+i))
		}
		buf := make([]int64, 3)
		mine.LoadSlice(buf, 5)
		if err := ranktest.Want("LoadSlice", buf, []int64{int64(r*n8 + 5), int64(r*n8 + 6), int64(r*n8 + 7)}); err != nil {
			return err
		}
		if err := w.LockAll(0); err != nil {
			return err
		}
		if err := w.Sync(); err != nil {
			return err
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		if err := w.Sync(); err != nil {
			return err
		}
		next := (r + 1) % n
		shared := w.Attr().Flavor == win.FlavorShared
		if shared {
			their, err := win.NewChecked[int64](w, next)
			if err != nil {
				return err
			}
			if v := their.Load(n8 - 1); v != int64(next*n8+n8-1) {
				return fmt.Errorf("Checked of rank %d's part: last element %d", next, v)
			}
		}
		if err := w.UnlockAll(); err != nil {
			return err
		}
		pl, err := win.Placement(w)
		if err != nil {
			return err
		}
		if len(pl) == 1 && pl[0].Rank == -1 {
			return nil // the numa_maps fallback: nothing per part to check
		}
		if len(pl) != n {
			return fmt.Errorf("Placement: %d parts for %d ranks", len(pl), n)
		}
		pages := 0
		for _, k := range pl[r].Nodes {
			pages += k
		}
		if pages < 2 {
			return fmt.Errorf("Placement of my part: %d pages on nodes, %d untouched (%v)", pages, pl[r].Untouched, pl[r].Nodes)
		}
		return nil
	})
}

// beEpochs: epoch and range rules both backends enforce alike. Sync outside a
// passive-target epoch and Post while this rank holds a lock are
// ErrRMASync; Free while a fence epoch with RMA calls is open on one rank
// is ErrRMASync on every rank (no rank waits in the free), and the window
// stays valid: ended with Fence(ModeNoSucceed), it frees.
func beEpochs(c *comm.Comm) error {
	w, err := win.Allocate(c, 64, 1, nil)
	if err != nil {
		return err
	}
	if err := w.Sync(); !errors.Is(err, win.ErrRMASync) {
		return fmt.Errorf("Sync outside an epoch: %v, want ErrRMASync", err)
	}
	if err := w.Lock(win.Shared, 0, 0); err != nil {
		return err
	}
	if err := w.Post(c.Group(), 0); !errors.Is(err, win.ErrRMASync) {
		return fmt.Errorf("Post while holding a lock: %v, want ErrRMASync", err)
	}
	if err := w.Unlock(0); err != nil {
		return err
	}
	// A displacement whose product with the unit wraps past 2^64 back to
	// 0 is outside the part, not at its start.
	w8, err := win.Allocate(c, 64, 8, nil)
	if err != nil {
		return err
	}
	if err := w8.LockAll(0); err != nil {
		return err
	}
	if err := w8.Put(make([]byte, 8), 0, 1<<61); !errors.Is(err, win.ErrRMARange) {
		return fmt.Errorf("Put at disp 2^61 of 8-byte units: %v, want ErrRMARange", err)
	}
	if err := w8.UnlockAll(); err != nil {
		return err
	}
	if err := w8.Free(); err != nil {
		return err
	}
	if err := w.Fence(0); err != nil {
		return err
	}
	if c.Rank() == 0 {
		if err := w.Put([]byte{1}, c.Size()-1, 0); err != nil {
			return err
		}
	}
	if err := w.Free(); !errors.Is(err, win.ErrRMASync) {
		return fmt.Errorf("Free inside a fence epoch with RMA calls on rank 0: %v, want ErrRMASync", err)
	}
	if err := w.Fence(win.ModeNoSucceed); err != nil {
		return err
	}
	if err := w.Free(); err != nil {
		return err
	}
	fmt.Printf("rank %d ok\n", c.Rank())
	return nil
}

// beFairLocks: LockAll is not starved by a stream of writers. Ranks 1..
// (two at least) keep exclusive locks on their own parts overlapping -
// each holds until another writer has got in, or 200 us - so a writer
// always holds or waits somewhere; rank 0 then opens LockAll three times.
// A LockAll that waits for a moment with no writer anywhere waits for
// ever (it did on both backends); the writers give up after 10 s, and
// rank 0 fails if it needed that long.
func beFairLocks(c *comm.Comm) error { return withOK(c, fairLocks) }

func fairLocks(c *comm.Comm) error {
	if c.Size() < 3 {
		return nil
	}
	w, done, acquired, err := wordsWin(c)
	if err != nil {
		return err
	}
	defer w.Free()
	if err := c.Barrier(); err != nil {
		return err
	}
	const giveUp = 10 * time.Second
	if c.Rank() == 0 {
		for atomic.LoadUint64(acquired) < 100 { // the writers are overlapping
			time.Sleep(10 * time.Microsecond)
		}
		t0 := time.Now()
		for range 3 {
			if err := w.LockAll(0); err != nil {
				return err
			}
			if err := w.UnlockAll(); err != nil {
				return err
			}
		}
		took := time.Since(t0)
		atomic.StoreUint64(done, 1)
		if err := c.Barrier(); err != nil {
			return err
		}
		if took >= giveUp/2 {
			return fmt.Errorf("LockAll starved: three LockAll epochs took %v, waiting for the writers to give up", took)
		}
		return nil
	}
	me := c.Rank()
	for start := time.Now(); atomic.LoadUint64(done) == 0 && time.Since(start) < giveUp; {
		if err := w.Lock(win.Exclusive, me, 0); err != nil {
			return err
		}
		n := atomic.AddUint64(acquired, 1)
		for t0 := time.Now(); atomic.LoadUint64(acquired) == n && atomic.LoadUint64(done) == 0 &&
			time.Since(t0) < 200*time.Microsecond; {
		}
		if err := w.Unlock(me); err != nil {
			return err
		}
	}
	return c.Barrier()
}

// beLockAllNoDeadlock: a rank holding an exclusive lock on one target that
// asks for another while a LockAll waits must get it. Rank 1 locks rank 2's
// part; rank 0 opens LockAll (which must wait for rank 1); then rank 1 locks
// rank 0's part too, and only then unlocks both. A LockAll that held shared
// locks on the targets before rank 2 while waiting for it would block rank
// 1's second Lock, which it waits for: deadlock.
func beLockAllNoDeadlock(c *comm.Comm) error { return withOK(c, lockAllNoDeadlock) }

func lockAllNoDeadlock(c *comm.Comm) error {
	if c.Size() < 3 {
		return nil
	}
	w, _, step, err := wordsWin(c)
	if err != nil {
		return err
	}
	defer w.Free()
	if err := c.Barrier(); err != nil {
		return err
	}
	switch c.Rank() {
	case 1:
		if err := w.Lock(win.Exclusive, 2, 0); err != nil {
			return err
		}
		atomic.StoreUint64(step, 1)
		time.Sleep(50 * time.Millisecond) // rank 0's LockAll waits meanwhile
		if err := w.Lock(win.Exclusive, 0, 0); err != nil {
			return err
		}
		if err := w.Unlock(0); err != nil {
			return err
		}
		if err := w.Unlock(2); err != nil {
			return err
		}
	case 0:
		for atomic.LoadUint64(step) == 0 {
			time.Sleep(10 * time.Microsecond)
		}
		if err := w.LockAll(0); err != nil {
			return err
		}
		if err := w.UnlockAll(); err != nil {
			return err
		}
	}
	return c.Barrier()
}

// beFlushGoroutines: in one LockAll epoch, four goroutines of each rank
// put to the next rank and flush at once, 300 times each, every Put with
// a value of its own into a slot of its own; then every slot holds its
// goroutine's last value. Flushes on the MPI backend wait in the MPI
// without the window's mutex, while other goroutines' Puts to the same
// target go on: a flush must not release (and let later Puts overwrite)
// the staged origins of those Puts, which it did not complete.
func beFlushGoroutines(c *comm.Comm) error {
	const g, iters = 4, 300
	n, r := c.Size(), c.Rank()
	return onFlavors(c, 8*g*n, func(c *comm.Comm, w *win.Win) error {
		if err := w.LockAll(0); err != nil {
			return err
		}
		to := (r + 1) % n
		errs := make(chan error, g)
		for k := range g {
			go func() {
				for i := range iters {
					if err := win.PutT(w, []int64{int64(r*1_000_000 + k*10_000 + i)}, to, r*g+k); err != nil {
						errs <- err
						return
					}
					if err := w.Flush(to); err != nil {
						errs <- err
						return
					}
				}
				errs <- nil
			}()
		}
		for range g {
			if err := <-errs; err != nil {
				return err
			}
		}
		if err := w.UnlockAll(); err != nil {
			return err
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		from := (r - 1 + n) % n
		got := make([]int64, g)
		if err := w.Lock(win.Shared, r, 0); err != nil {
			return err
		}
		if err := win.GetT(w, got, r, from*g); err != nil {
			return err
		}
		if err := w.Unlock(r); err != nil {
			return err
		}
		for k, v := range got {
			if want := int64(from*1_000_000 + k*10_000 + iters - 1); v != want {
				return fmt.Errorf("slot of rank %d's goroutine %d holds %d, want %d", from, k, v, want)
			}
		}
		return nil
	})
}

// beLockAllGoroutines: rank 0 has two goroutines, G1 locking
// target 0 and G2 locking target 1 (free), and G1, once it holds 0, waits
// for G2's lock before it unlocks. Rank 2 is in LockAll, backed off (Q >
// 0) behind rank 1's exclusive lock. G2 decided "this rank holds no lock:
// hold back" before G1's lock was granted and never looks again, so G2
// waits for Q = 0, the LockAll waits for X(0) = 0, and G1 waits for G2.
// Round 0 has G1 draw before the LockAll backs off (the shmrun backend's
// anyLocked is false for G2 until G1 is granted); round 1 has G2 ask
// first (the MPI backend's holding, nlocks > 1, counts G2's pending
// claim for G1, not G1's for G2).
// (Found by a second review of the LockAll hold-back.)
func beLockAllGoroutines(c *comm.Comm) error { return withOK(c, lockAllGoroutines) }

func lockAllGoroutines(c *comm.Comm) error {
	if c.Size() < 3 {
		return nil
	}
	w, step, _, err := wordsWin(c)
	if err != nil {
		return err
	}
	defer w.Free()
	await := func(s uint64) {
		for atomic.LoadUint64(step) < s {
			time.Sleep(100 * time.Microsecond)
		}
	}
	var failures []error
	for round := range 2 {
		if c.Rank() == 0 {
			atomic.StoreUint64(step, 0)
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		ts := 0 // the target rank 1 holds while the others line up
		if round == 1 {
			ts = 2
		}
		switch c.Rank() {
		case 1:
			if err := w.Lock(win.Exclusive, ts, 0); err != nil {
				return err
			}
			atomic.StoreUint64(step, 1)
			if round == 0 {
				await(2) // G1 queued on 0
			}
			time.Sleep(50 * time.Millisecond) // the LockAll backs off
			atomic.StoreUint64(step, 3)
			await(4)
			if err := w.Unlock(ts); err != nil {
				return err
			}
		case 2:
			await(uint64(2 - round))
			if err := w.LockAll(0); err != nil {
				return err
			}
			if err := w.UnlockAll(); err != nil {
				return err
			}
		case 0:
			g1 := func(got2 <-chan struct{}, res chan<- error) {
				if err := w.Lock(win.Exclusive, 0, 0); err != nil {
					res <- err
					return
				}
				var err error
				select {
				case <-got2:
				case <-time.After(2 * time.Second):
					err = fmt.Errorf("round %d: goroutine holding target 0 waited 2 s for the other's Lock of free target 1 (deadlock: held back behind a LockAll that waits for target 0)", round)
				}
				if uerr := w.Unlock(0); err == nil {
					err = uerr
				}
				res <- err
			}
			g2 := func(got2 chan<- struct{}, res chan<- error) {
				if err := w.Lock(win.Exclusive, 1, 0); err != nil {
					res <- err
					return
				}
				close(got2)
				res <- w.Unlock(1)
			}
			got2, res := make(chan struct{}), make(chan error, 2)
			if round == 0 {
				await(1)
				go g1(got2, res)
				time.Sleep(50 * time.Millisecond)
				atomic.StoreUint64(step, 2)
				await(3)
				go g2(got2, res)
			} else {
				await(3)
				go g2(got2, res)
				time.Sleep(50 * time.Millisecond)
				go g1(got2, res)
			}
			time.Sleep(50 * time.Millisecond)
			atomic.StoreUint64(step, 4)
			for range 2 {
				if err := <-res; err != nil {
					failures = append(failures, err)
				}
			}
		}
		if err := c.Barrier(); err != nil {
			return err
		}
	}
	return errors.Join(failures...)
}

// withOK runs body and then prints the line RunEach counts.
func withOK(c *comm.Comm, body func(*comm.Comm) error) error {
	if err := body(c); err != nil {
		return err
	}
	fmt.Printf("rank %d ok\n", c.Rank())
	return nil
}

// wordsWin is a 16-byte shared window and rank 0's two words in it, which
// the lock tests' ranks use as flags beside the locks under test (a
// window of its own, so every backend's AllocateShared serves).
func wordsWin(c *comm.Comm) (w *win.Win, a, b *uint64, err error) {
	if w, err = win.AllocateShared(c, 16, 8, nil); err != nil {
		return nil, nil, nil, err
	}
	seg0, err := w.SharedQuery(0)
	if err != nil {
		w.Free()
		return nil, nil, nil, err
	}
	return w, (*uint64)(unsafe.Pointer(&seg0.Bytes[0])), (*uint64)(unsafe.Pointer(&seg0.Bytes[8])), nil
}
