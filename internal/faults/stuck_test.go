package faults

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/shm"
	"github.com/shmrun/shmrun/win"
)

// stuckRanks is the size of every job of the stuck body.
const stuckRanks = 4

// partLen is each rank's part of the window every stuck job makes first;
// its pattern is what the survivors check after the fault.
const partLen = 64 << 10

// bigPart is the part of the rank killed in the middle of AllocateShared:
// large enough that its reservation takes a while, so that the test can see
// it under way and kill the rank inside it.
const bigPart = 1 << 30

// role is what one rank of a stuck job does: setup runs before a barrier of
// all ranks, block after it. block returns the error of the call that was
// blocked when the fault came (nil if it returned by itself).
type role struct {
	setup func(s *stuck) error
	block func(s *stuck) error
	// waits says the rank is blocked in a call of shmrun's that must return
	// ErrAborted when the job fails: it then checks the window and says so.
	// Other ranks (a lock holder, a rank kept out of a collective) sleep,
	// and the launcher's SIGTERM ends them.
	waits bool
}

// stuck is one rank of a stuck job.
type stuck struct {
	c     *comm.Comm
	w     *win.Win
	flags []byte // one word per rank: 1 once it is about to block
}

// announce says, on stdout and in the shared flags, that this rank is about
// to enter point: "at <point> <rank> <pid>".
func (s *stuck) announce(point string) {
	fmt.Printf("at %s %d %d\n", point, s.c.Rank(), os.Getpid())
	atomic.StoreUint64(raw.Uint64At(s.flags, int64(s.c.Rank())*shm.CacheLine), 1)
}

func (s *stuck) flagged(r int) bool {
	return atomic.LoadUint64(raw.Uint64At(s.flags, int64(r)*shm.CacheLine)) == 1
}

func group(s *stuck, ranks ...int) *comm.Group {
	g, err := s.c.Group().Incl(ranks...)
	if err != nil {
		panic(err) // the tables below name valid ranks
	}
	return g
}

func holdForever(s *stuck) error {
	s.announce("hold")
	time.Sleep(time.Hour)
	return errors.New("slept an hour")
}

func blockBarrier(s *stuck) error { s.announce("barrier"); return s.c.Barrier() }
func blockFence(s *stuck) error   { s.announce("fence"); return s.w.Fence(0) }

// blockAllreduce and blockBcast wait in a collective's first round (the
// sleeping rank never joins). The Allreduce is big enough to go by single
// copy (its buffers pinned and published when the victim dies); the Bcast
// stays below the single-copy size, in the staging buffers, and its root
// is the sleeping rank: the others wait for its data (a root of a Bcast
// of one round does not wait: it returns once its data is staged).
func blockAllreduce(s *stuck) error {
	s.announce("allreduce")
	x := make([]float64, 100_000)
	return comm.Allreduce(s.c, x, make([]float64, len(x)), atomics.Sum)
}

func blockBcast(s *stuck) error {
	s.announce("bcast")
	return comm.Bcast(s.c, make([]byte, format.SingleBcast-1000), stuckRanks-1)
}
func lockExcl0(s *stuck) error { return s.w.Lock(win.Exclusive, 0, 0) }

func blockLock(lt win.LockType, target int) func(*stuck) error {
	return func(s *stuck) error { s.announce("lock"); return s.w.Lock(lt, target, 0) }
}

func blockFree(s *stuck) error { s.announce("free"); return s.w.Free() }

func blockLockAll(s *stuck) error { s.announce("lockall"); return s.w.LockAll(0) }

func blockStart(target int) func(*stuck) error {
	return func(s *stuck) error { s.announce("start"); return s.w.Start(group(s, target), 0) }
}

func blockWait(origin int) func(*stuck) error {
	return func(s *stuck) error {
		s.announce("wait")
		if err := s.w.Post(group(s, origin), 0); err != nil {
			return fmt.Errorf("Post: %w", err)
		}
		return s.w.Wait()
	}
}

// blockAlloc allocates a second window in which rank big asks bigPart
// bytes and the others a page.
func blockAlloc(big int) func(*stuck) error {
	return func(s *stuck) error {
		size := shm.PageSize
		if s.c.Rank() == big {
			size = bigPart
		}
		s.announce("alloc")
		w, err := win.AllocateShared(s.c, int(size), 1, nil)
		if err == nil {
			w.Free()
		}
		return err
	}
}

// abortWhenBlocked waits until every rank in ranks has announced, gives
// them a moment to enter their calls, and aborts the job with code.
func abortWhenBlocked(code int, ranks ...int) func(*stuck) error {
	return func(s *stuck) error {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			all := true
			for _, r := range ranks {
				all = all && s.flagged(r)
			}
			if all {
				time.Sleep(50 * time.Millisecond)
				fmt.Printf("aborting at %d\n", time.Now().UnixNano())
				s.c.Abort(code)
			}
		}
		return errors.New("the other ranks never blocked")
	}
}

// ignoreTERM keeps the launcher's SIGTERM from ending a waiting rank
// before it has seen the abort and checked the data (SIGKILL still does);
// the other ranks end at the SIGTERM.
func (r role) ignoreTERM() {
	if r.waits {
		signal.Ignore(syscall.SIGTERM)
	}
}

var (
	waitIn = func(f func(*stuck) error) role { return role{block: f, waits: true} }
	asleep = role{block: holdForever}
)

// plans lists the stuck scenarios: each rank's role.
var plans = map[string][stuckRanks]role{
	// Rank 3 stays out of the collective, so it can never complete.
	"barrier": {waitIn(blockBarrier), waitIn(blockBarrier), waitIn(blockBarrier), asleep},
	"fence":   {waitIn(blockFence), waitIn(blockFence), waitIn(blockFence), asleep},
	// The same for collectives with data.
	"allreduce": {waitIn(blockAllreduce), waitIn(blockAllreduce), waitIn(blockAllreduce), asleep},
	"bcast":     {waitIn(blockBcast), waitIn(blockBcast), waitIn(blockBcast), asleep},
	// Rank 1 holds an exclusive lock on rank 0; ranks 2 and 3 queue on it.
	"lock-holder": {waitIn(blockBarrier), {setup: lockExcl0, block: holdForever},
		waitIn(blockLock(win.Exclusive, 0)), waitIn(blockLock(win.Shared, 0))},
	// Rank 1 holds; rank 2 waits first, rank 3 after it.
	"lock-waiter": {waitIn(blockBarrier), {setup: lockExcl0, block: holdForever},
		waitIn(blockLock(win.Exclusive, 0)), waitIn(blockLock(win.Exclusive, 0))},
	// Rank 2 holds an exclusive lock, so LockAll waits.
	"lockall-waiter": {waitIn(blockBarrier), waitIn(blockLockAll), {setup: lockExcl0, block: holdForever}, waitIn(blockLockAll)},
	// Rank 1 holds LockAll, so exclusive locks wait.
	"lockall-holder": {waitIn(blockBarrier), {setup: func(s *stuck) error { return s.w.LockAll(0) }, block: holdForever},
		waitIn(blockLock(win.Exclusive, 0)), waitIn(blockLock(win.Exclusive, 3))},
	// Rank 0 never posts.
	"start": {waitIn(blockBarrier), waitIn(blockStart(0)), waitIn(blockStart(0)), waitIn(blockBarrier)},
	// Ranks 2 and 3 never start an access epoch.
	"wait": {waitIn(blockWait(3)), waitIn(blockWait(2)), waitIn(blockBarrier), waitIn(blockBarrier)},
	// Everyone allocates; rank 2 reserves a large part (rank 0, which made
	// the segment, in "alloc-creator").
	"alloc":         {waitIn(blockAlloc(2)), waitIn(blockAlloc(2)), waitIn(blockAlloc(2)), waitIn(blockAlloc(2))},
	"alloc-creator": {waitIn(blockAlloc(0)), waitIn(blockAlloc(0)), waitIn(blockAlloc(0)), waitIn(blockAlloc(0))},
	// Ranks 0, 2 and 3 wait in Free for rank 1.
	"free": {waitIn(blockFree), asleep, waitIn(blockFree), waitIn(blockFree)},
	// Ranks 0, 2 and 3 wait in AllocateShared's first exchange for rank 1,
	// which never comes.
	"alloc-peers": {waitIn(blockAlloc(-1)), asleep, waitIn(blockAlloc(-1)), waitIn(blockAlloc(-1))},
	// Rank 3 holds a lock on rank 0 and aborts while rank 0 waits in a
	// barrier, rank 1 for that lock, and rank 2 in Wait for an access
	// epoch of rank 1's.
	"abort": {waitIn(blockBarrier), waitIn(blockLock(win.Exclusive, 0)), waitIn(blockWait(1)),
		{setup: lockExcl0, block: abortWhenBlocked(abortCode, 0, 1, 2)}},
}

const abortCode = 42

// pattern is byte i of rank r's part.
func pattern(r, i int) byte { return byte(r*31 + i*7 + i>>8) }

func init() {
	// stuck: args scenario. Every rank makes a window and fills its part,
	// then plays its role in the scenario; a rank whose blocked call returns
	// ErrAborted checks every rank's part of the window (the killed rank's
	// too: the memory lives while anyone maps it) and says "rank R aborted
	// in POINT; data intact".
	ranktest.Register("stuck", func(c *comm.Comm) error {
		name := ranktest.BodyArgs()[0]
		plan, ok := plans[name]
		if !ok || c.Size() != stuckRanks {
			return fmt.Errorf("no scenario %q for %d ranks", name, c.Size())
		}
		me := c.Rank()
		plan[me].ignoreTERM()
		flags, unmap, err := ranktest.MapShared(c, "flags", stuckRanks*shm.CacheLine)
		if err != nil {
			return err
		}
		defer unmap()
		w, err := win.AllocateShared(c, partLen, 1, nil)
		if err != nil {
			return err
		}
		for i, b := 0, w.Local(); i < len(b); i++ {
			b[i] = pattern(me, i)
		}
		s := &stuck{c: c, w: w, flags: flags}
		r := plan[me]
		if r.setup != nil {
			if err := r.setup(s); err != nil {
				return fmt.Errorf("setup: %w", err)
			}
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		err = r.block(s)
		switch {
		case !r.waits:
			return fmt.Errorf("returned: %v", err)
		case err == nil:
			fmt.Printf("rank %d: the blocked call returned without an abort\n", me)
			os.Exit(1)
		case !errors.Is(err, comm.ErrAborted):
			fmt.Printf("rank %d: the blocked call returned %v, want ErrAborted\n", me, err)
			os.Exit(1)
		}
		if bad := checkParts(w); bad != "" {
			fmt.Printf("rank %d aborted; data corrupted: %s\n", me, bad)
			os.Exit(1)
		}
		fmt.Printf("rank %d aborted; data intact (%v)\n", me, err)
		os.Exit(0) // the job has failed already: nothing to finalize
		return nil
	})
}

// checkParts checks every rank's part of w against pattern.
func checkParts(w *win.Win) string {
	for r := range stuckRanks {
		seg, err := w.SharedQuery(r)
		if err != nil {
			return err.Error()
		}
		if len(seg.Bytes) != partLen {
			return "rank " + strconv.Itoa(r) + "'s part has " + strconv.Itoa(len(seg.Bytes)) + " bytes"
		}
		for i, b := range seg.Bytes {
			if b != pattern(r, i) {
				return fmt.Sprintf("rank %d's byte %d is %#x, want %#x", r, i, b, pattern(r, i))
			}
		}
	}
	return ""
}
