//go:build !mpi

package win_test

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/win"
)

func init() {
	ranktest.Register("fence", fenceBody)
	ranktest.Register("pscw", pscwBody)
	ranktest.Register("lock-count", lockCountBody)
	ranktest.Register("lock-threads", lockThreadsBody)
	ranktest.Register("shared-together", sharedTogetherBody)
	ranktest.Register("lockall-sync", lockAllSyncBody)
	ranktest.Register("lock-vs-lockall", lockVsLockAllBody)
}

// fenceBody is the standard's fence pattern: each rank puts its rank into
// slot rank of every other rank's window, gets a slot back, and sees
// everything after the closing fence.
func fenceBody(c *comm.Comm) error {
	n, me := c.Size(), c.Rank()
	w, err := win.AllocateShared(c, 8*n, 8, nil)
	if err != nil {
		return err
	}
	defer w.Free()
	for round := range 50 {
		if err := w.Fence(0); err != nil {
			return err
		}
		for t := range n {
			if err := win.PutT(w, []int64{int64(me*1000 + round)}, t, me); err != nil {
				return err
			}
		}
		if err := w.Fence(0); err != nil {
			return err
		}
		got := make([]int64, n)
		if err := win.GetT(w, got, (me+1)%n, 0); err != nil {
			return err
		}
		local, _ := win.View[int64](w.Local())
		for r := range n {
			if local[r] != int64(r*1000+round) || got[r] != int64(r*1000+round) {
				return fmt.Errorf("round %d: slot %d holds %d locally and %d at rank %d", round, r, local[r], got[r], (me+1)%n)
			}
		}
	}
	return w.Fence(win.ModeNoSucceed)
}

func TestFence(t *testing.T)          { ranktest.Run(t, 4, "fence") }
func TestFenceLocal(t *testing.T)     { runLocal(t, 6, fenceBody) }
func TestFenceSingleton(t *testing.T) { runLocal(t, 1, fenceBody) }

// Two ranks fence on their fence words, not the fence barrier
// (format.FlagFenceRanks).
func TestFencePair(t *testing.T)      { ranktest.Run(t, 2, "fence") }
func TestFencePairLocal(t *testing.T) { runLocal(t, 2, fenceBody) }

// TestFencePairSleeping: fences where one rank arrives late, in turn, so
// that the other waits past its spins, in the futex phase, and is woken.
func TestFencePairSleeping(t *testing.T) {
	runLocal(t, 2, func(c *comm.Comm) error {
		w, err := win.AllocateShared(c, 8, 8, nil)
		if err != nil {
			return err
		}
		defer w.Free()
		if err := w.Fence(0); err != nil {
			return err
		}
		for round := range 6 {
			if c.Rank() == round%2 {
				time.Sleep(20 * time.Millisecond)
				if err := win.PutT(w, []int64{int64(round)}, 1-c.Rank(), 0); err != nil {
					return err
				}
			}
			if err := w.Fence(0); err != nil {
				return err
			}
			local, _ := win.View[int64](w.Local())
			if c.Rank() != round%2 && local[0] != int64(round) {
				return fmt.Errorf("round %d: rank %d holds %d after the fence", round, c.Rank(), local[0])
			}
			if err := w.Fence(0); err != nil {
				return err
			}
		}
		return w.Fence(win.ModeNoSucceed)
	})
}

// pscwBody: overlapping groups and back-to-back epochs. Every rank exposes
// to all others and accesses a different subset each round (sometimes
// everybody, sometimes only its right neighbour), putting the round number;
// after Wait each rank checks what every origin of its group put.
func pscwBody(c *comm.Comm) error {
	n, me := c.Size(), c.Rank()
	w, err := win.AllocateShared(c, 8*n, 8, nil)
	if err != nil {
		return err
	}
	defer w.Free()
	all := c.Group()
	local, _ := win.View[int64](w.Local())
	for round := range 300 {
		// Who accesses whom this round: all-to-all on even rounds, a ring on odd.
		var targets, origins []int
		for r := range n {
			if round%2 == 0 || r == (me+1)%n {
				targets = append(targets, r)
			}
			if round%2 == 0 || me == (r+1)%n {
				origins = append(origins, r)
			}
		}
		og, _ := all.Incl(origins...)
		tg, _ := all.Incl(targets...)
		if err := w.Post(og, 0); err != nil {
			return err
		}
		if err := w.Start(tg, 0); err != nil {
			return err
		}
		for _, t := range targets {
			if err := win.PutT(w, []int64{int64(round)}, t, me); err != nil {
				return err
			}
		}
		if err := w.Complete(); err != nil {
			return err
		}
		if err := w.Wait(); err != nil {
			return err
		}
		for _, o := range origins {
			if got := atomic.LoadInt64(&local[o]); got != int64(round) {
				return fmt.Errorf("round %d: origin %d's put reads %d after Wait", round, o, got)
			}
		}
	}
	return nil
}

func TestPSCW(t *testing.T)               { ranktest.Run(t, 5, "pscw") }
func TestPSCWOversubscribed(t *testing.T) { ranktest.Run(t, 12, "pscw") }
func TestPSCWLocal(t *testing.T)          { runLocal(t, 5, pscwBody) }

// lockCountBody: K exclusive-lock epochs per rank on rank 0, each a
// non-atomic read-increment-write of a counter, and a shared counter of how
// many ranks are inside at once. Mutual exclusion means the count is exact
// and nobody ever sees another rank inside.
func lockCountBody(c *comm.Comm) error {
	const k = 300
	w, err := win.AllocateShared(c, 16, 8, nil)
	if err != nil {
		return err
	}
	defer w.Free()
	seg := mustQuery(w, 0)
	inside := raw.Uint64At(seg.Bytes, 8)
	for range k {
		if err := w.Lock(win.Exclusive, 0, 0); err != nil {
			return err
		}
		if v := atomic.AddUint64(inside, 1); v != 1 {
			return fmt.Errorf("rank %d: %d ranks inside an exclusive lock", c.Rank(), v)
		}
		var cnt [1]int64
		if err := win.GetT(w, cnt[:], 0, 0); err != nil {
			return err
		}
		cnt[0]++
		if err := win.PutT(w, cnt[:], 0, 0); err != nil {
			return err
		}
		atomic.AddUint64(inside, ^uint64(0))
		if err := w.Unlock(0); err != nil {
			return err
		}
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	var total [1]int64
	if err := w.Lock(win.Shared, 0, 0); err != nil {
		return err
	}
	if err := win.GetT(w, total[:], 0, 0); err != nil {
		return err
	}
	if err := w.Unlock(0); err != nil {
		return err
	}
	return check(total[0] == int64(k*c.Size()), "counter %d after %d ranks x %d locked increments", total[0], c.Size(), k)
}

func TestLockMutualExclusion16(t *testing.T)    { ranktest.Run(t, 16, "lock-count") }
func TestLockMutualExclusionLocal(t *testing.T) { runLocal(t, 8, lockCountBody) }

// lockThreadsBody: every rank runs one goroutine per target, and they lock
// and unlock their own targets at once (MPI_THREAD_MULTIPLE allows it:
// passive-target epochs to different targets may overlap). Each
// iteration is an exclusive lock around a non-atomic Get+Put increment
// of the target's first counter (watched by an atomic "inside" count),
// or a shared lock around a FetchAndOp on its second, with Flush,
// FlushAll, FlushLocalAll and Sync made inside the goroutine's own epoch.
// The counters come out exact, and afterwards no lock is left in this
// rank's epoch state: LockAll opens.
func lockThreadsBody(c *comm.Comm) error {
	const k = 150
	n, me := c.Size(), c.Rank()
	w, err := win.AllocateShared(c, 32, 8, nil)
	if err != nil {
		return err
	}
	defer w.Free()
	errs := make(chan error, n)
	for t := range n {
		go func() {
			errs <- func() error {
				inside := raw.Uint64At(mustQuery(w, t).Bytes, 16)
				for i := range k {
					lt := win.Exclusive
					if (i+me)%3 == 2 {
						lt = win.Shared
					}
					if err := w.Lock(lt, t, 0); err != nil {
						return err
					}
					if lt == win.Exclusive {
						if v := atomic.AddUint64(inside, 1); v != 1 {
							return fmt.Errorf("target %d: %d goroutines inside an exclusive lock", t, v)
						}
						var cnt [1]int64
						if err := win.GetT(w, cnt[:], t, 0); err != nil {
							return err
						}
						if err := w.Flush(t); err != nil {
							return err
						}
						cnt[0]++
						if err := win.PutT(w, cnt[:], t, 0); err != nil {
							return err
						}
						if err := w.FlushAll(); err != nil {
							return err
						}
						atomic.AddUint64(inside, ^uint64(0))
					} else {
						if _, err := win.FetchAndOp(w, int64(1), t, 1, atomics.Sum); err != nil {
							return err
						}
						if err := w.FlushLocalAll(); err != nil {
							return err
						}
						if err := w.Sync(); err != nil {
							return err
						}
					}
					if err := w.Unlock(t); err != nil {
						return err
					}
					if i%16 == 0 {
						runtime.Gosched()
					}
				}
				return nil
			}()
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			return fmt.Errorf("rank %d: %w", me, err)
		}
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	if err := w.LockAll(0); err != nil {
		return fmt.Errorf("rank %d: LockAll after every goroutine unlocked: %w", me, err)
	}
	var cnt [2]int64
	if err := win.GetT(w, cnt[:], me, 0); err != nil {
		return err
	}
	if err := w.UnlockAll(); err != nil {
		return err
	}
	excl, shared := 0, 0
	for r := range n {
		for i := range k {
			if (i+r)%3 == 2 {
				shared++
			} else {
				excl++
			}
		}
	}
	return check(cnt[0] == int64(excl) && cnt[1] == int64(shared), "rank %d: counters %d and %d, want %d exclusive increments and %d shared adds",
		me, cnt[0], cnt[1], excl, shared)
}

func TestLockThreads4(t *testing.T)     { ranktest.Run(t, 4, "lock-threads") }
func TestLockThreadsLocal(t *testing.T) { runLocal(t, 3, lockThreadsBody) }

// sharedTogetherBody: every rank takes a shared lock on rank 0 and waits,
// holding it, until all ranks hold it. If shared locks excluded each other
// this would hang (and the job timeout would fail the test).
func sharedTogetherBody(c *comm.Comm) error {
	w, err := win.AllocateShared(c, 8, 8, nil)
	if err != nil {
		return err
	}
	defer w.Free()
	for round := range 20 {
		if err := w.Lock(win.Shared, 0, 0); err != nil {
			return err
		}
		if _, err := win.FetchAndOp(w, int64(1), 0, 0, atomics.Sum); err != nil {
			return err
		}
		for {
			v, err := win.FetchAndOp(w, int64(0), 0, 0, atomics.NoOp)
			if err != nil {
				return err
			}
			if v >= int64((round+1)*c.Size()) {
				break
			}
		}
		if err := w.Unlock(0); err != nil {
			return err
		}
		if err := c.Barrier(); err != nil {
			return err
		}
	}
	return nil
}

func TestSharedLocksTogether(t *testing.T) { ranktest.Run(t, 4, "shared-together") }

// lockAllSyncBody is the standard's LockAll + Sync + Barrier pattern: rank r
// stores into its own memory, Syncs, and after a Barrier and Sync every rank
// reads every other rank's value by a plain load.
func lockAllSyncBody(c *comm.Comm) error {
	w, err := win.AllocateShared(c, 8, 8, nil)
	if err != nil {
		return err
	}
	defer w.Free()
	if err := w.LockAll(0); err != nil {
		return err
	}
	views := make([][]int64, c.Size())
	for r := range views {
		views[r], _ = win.View[int64](mustQuery(w, r).Bytes)
	}
	for round := int64(1); round <= 200; round++ {
		views[c.Rank()][0] = round*100 + int64(c.Rank())
		if err := w.Sync(); err != nil {
			return err
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		if err := w.Sync(); err != nil {
			return err
		}
		for r, v := range views {
			if v[0] != round*100+int64(r) {
				return fmt.Errorf("round %d: rank %d's value reads %d", round, r, v[0])
			}
		}
		if err := c.Barrier(); err != nil {
			return err
		}
	}
	return w.UnlockAll()
}

func TestLockAllSync(t *testing.T) { ranktest.Run(t, 4, "lockall-sync") }

// lockVsLockAllBody: even ranks take exclusive locks on random targets, odd
// ranks LockAll; a per-target "inside" word checks that no exclusive holder
// of a target ever coexists with a LockAll holder or another writer.
func lockVsLockAllBody(c *comm.Comm) error {
	n, me := c.Size(), c.Rank()
	// Word 0 of each rank's part: writers inside; word 1: LockAll holders.
	w, err := win.AllocateShared(c, 16, 8, nil)
	if err != nil {
		return err
	}
	defer w.Free()
	words := make([][]byte, n)
	for r := range n {
		words[r] = mustQuery(w, r).Bytes
	}
	allInside := raw.Uint64At(words[0], 8)
	for i := range 200 {
		if me%2 == 0 {
			t := (me + i) % n
			if err := w.Lock(win.Exclusive, t, 0); err != nil {
				return err
			}
			if v := atomic.AddUint64(raw.Uint64At(words[t], 0), 1); v != 1 {
				return fmt.Errorf("%d exclusive holders of rank %d", v, t)
			}
			if a := atomic.LoadUint64(allInside); a != 0 {
				return fmt.Errorf("exclusive lock on %d while %d LockAll holders are inside", t, a)
			}
			atomic.AddUint64(raw.Uint64At(words[t], 0), ^uint64(0))
			if err := w.Unlock(t); err != nil {
				return err
			}
		} else {
			if err := w.LockAll(0); err != nil {
				return err
			}
			atomic.AddUint64(allInside, 1)
			for r := range n {
				if v := atomic.LoadUint64(raw.Uint64At(words[r], 0)); v != 0 {
					return fmt.Errorf("LockAll holder sees %d exclusive holders of rank %d", v, r)
				}
			}
			atomic.AddUint64(allInside, ^uint64(0))
			if err := w.UnlockAll(); err != nil {
				return err
			}
		}
	}
	return c.Barrier()
}

func TestLockVersusLockAll(t *testing.T)      { ranktest.Run(t, 8, "lock-vs-lockall") }
func TestLockVersusLockAllLocal(t *testing.T) { runLocal(t, 6, lockVsLockAllBody) }

// pscwRingBody passes tokens around a ring with the same two groups in every
// epoch (the translation cache's common case), checking every value.
func pscwRingBody(c *comm.Comm) error {
	n, me := c.Size(), c.Rank()
	w, err := win.AllocateShared(c, 8, 8, nil)
	if err != nil {
		return err
	}
	defer w.Free()
	from, _ := c.Group().Incl((me + n - 1) % n)
	to, _ := c.Group().Incl((me + 1) % n)
	box, _ := win.View[int64](w.Local())
	for round := int64(1); round <= 300; round++ {
		if err := w.Post(from, 0); err != nil {
			return err
		}
		if err := w.Start(to, 0); err != nil {
			return err
		}
		if err := win.PutT(w, []int64{round*1000 + int64(me)}, (me+1)%n, 0); err != nil {
			return err
		}
		if err := w.Complete(); err != nil {
			return err
		}
		if err := w.Wait(); err != nil {
			return err
		}
		if want := round*1000 + int64((me+n-1)%n); box[0] != want {
			return fmt.Errorf("round %d: rank %d holds %d, want %d", round, me, box[0], want)
		}
	}
	return nil
}

func init() { ranktest.Register("pscw-ring", pscwRingBody) }

func TestPSCWRingSameGroups(t *testing.T)      { ranktest.Run(t, 4, "pscw-ring") }
func TestPSCWRingSameGroupsLocal(t *testing.T) { runLocal(t, 3, pscwRingBody) }

// writerNotStarvedBody: ranks 1.. keep rank 0's window read-locked with no
// gap — each holds its shared lock (or LockAll) until another reader has
// acquired one, or 200 us have passed — while rank 0 asks for an exclusive
// lock. Under a reader-preferring lock the readers would overlap forever and
// the writer would never get in: the job would hang until its timeout and
// fail. With FIFO tickets (and LockAll backing off from a waiting writer)
// later readers queue behind the writer, the holders let go, the writer gets
// in.
func writerNotStarvedBody(c *comm.Comm) error {
	w, err := win.AllocateShared(c, 16, 8, nil)
	if err != nil {
		return err
	}
	defer w.Free()
	seg0 := mustQuery(w, 0)
	done, acquired := raw.Uint64At(seg0.Bytes, 0), raw.Uint64At(seg0.Bytes, 8)
	if err := c.Barrier(); err != nil {
		return err
	}
	if c.Rank() == 0 {
		for atomic.LoadUint64(acquired) < 200 { // the readers are overlapping
			runtime.Gosched()
		}
		for range 3 {
			if err := w.Lock(win.Exclusive, 0, 0); err != nil {
				return err
			}
			if err := w.Unlock(0); err != nil {
				return err
			}
		}
		atomic.StoreUint64(done, 1)
		return c.Barrier()
	}
	for i := 0; atomic.LoadUint64(done) == 0; i++ {
		lockAll := i%2 == 1
		if lockAll {
			err = w.LockAll(0)
		} else {
			err = w.Lock(win.Shared, 0, 0)
		}
		if err != nil {
			return err
		}
		me := atomic.AddUint64(acquired, 1)
		for t0 := time.Now(); atomic.LoadUint64(acquired) == me && atomic.LoadUint64(done) == 0 &&
			time.Since(t0) < 200*time.Microsecond; {
		}
		if lockAll {
			err = w.UnlockAll()
		} else {
			err = w.Unlock(0)
		}
		if err != nil {
			return err
		}
	}
	return c.Barrier()
}

func init() { ranktest.Register("writer-not-starved", writerNotStarvedBody) }

func TestWriterNotStarved(t *testing.T) { ranktest.Run(t, 5, "writer-not-starved") }

// lockWrapBody runs enough lock epochs on rank 0 that the 15-bit counters of
// its lock word wrap around twice (docs/FORMAT.md: the carry guards), with
// every kind of lock mixed: rank 0 takes exclusive locks, the other ranks
// rotate through exclusive, shared and LockAll. A shared word counts the
// holders (exclusive 1000, shared and LockAll 1): an exclusive holder must
// see exactly 1000, a shared one less than 1000. The epochs of the counter
// must add up, and the lock must still work when all is done.
func lockWrapBody(c *comm.Comm) error {
	const total = 3 << 15 // lock epochs on rank 0 over all ranks
	k := total / c.Size()
	w, err := win.AllocateShared(c, 24, 8, nil)
	if err != nil {
		return err
	}
	defer w.Free()
	inside := raw.Uint64At(mustQuery(w, 0).Bytes, 8)
	var excl int64
	for i := range k {
		kind := 0 // exclusive
		if c.Rank() != 0 {
			kind = i % 3
		}
		var err error
		switch kind {
		case 0:
			err = w.Lock(win.Exclusive, 0, 0)
		case 1:
			err = w.Lock(win.Shared, 0, 0)
		default:
			err = w.LockAll(0)
		}
		if err != nil {
			return err
		}
		if kind == 0 {
			if v := atomic.AddUint64(inside, 1000); v != 1000 {
				return fmt.Errorf("rank %d, epoch %d: exclusive holder sees holders %d", c.Rank(), i, v)
			}
			var cnt [1]int64
			if err := win.GetT(w, cnt[:], 0, 0); err != nil {
				return err
			}
			cnt[0]++
			if err := win.PutT(w, cnt[:], 0, 0); err != nil {
				return err
			}
			excl++
			atomic.AddUint64(inside, ^uint64(999))
			err = w.Unlock(0)
		} else {
			if v := atomic.AddUint64(inside, 1); v >= 1000 {
				return fmt.Errorf("rank %d, epoch %d: shared holder sees holders %d", c.Rank(), i, v)
			}
			atomic.AddUint64(inside, ^uint64(0))
			if kind == 1 {
				err = w.Unlock(0)
			} else {
				err = w.UnlockAll()
			}
		}
		if err != nil {
			return err
		}
	}
	// Sum the ranks' exclusive epochs in word 2 of rank 0.
	if err := w.LockAll(0); err != nil {
		return err
	}
	if _, err := win.FetchAndOp(w, excl, 0, 2, atomics.Sum); err != nil {
		return err
	}
	if err := w.UnlockAll(); err != nil {
		return err
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	var got, want [1]int64
	if err := w.Lock(win.Exclusive, 0, 0); err != nil {
		return err
	}
	if err := win.GetT(w, got[:], 0, 0); err != nil {
		return err
	}
	if err := win.GetT(w, want[:], 0, 2); err != nil {
		return err
	}
	if err := w.Unlock(0); err != nil {
		return err
	}
	if got[0] != want[0] || want[0] < int64(k) {
		return fmt.Errorf("counter %d after %d exclusive epochs", got[0], want[0])
	}
	return nil
}

func init() { ranktest.Register("lock-wrap", lockWrapBody) }

func TestLockCountersWrap(t *testing.T)      { ranktest.Run(t, 3, "lock-wrap") }
func TestLockCountersWrapLocal(t *testing.T) { runLocal(t, 3, lockWrapBody) }
