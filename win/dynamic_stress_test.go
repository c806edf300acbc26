//go:build !mpi

package win_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/win"
)

func init() { ranktest.Register("attach-churn", attachChurnBody) }

const (
	churnGens  = 12
	churnIters = 150
)

// attachChurnBody: every rank attaches a fresh counter, publishes its
// address, lets the others add to it for a while, then withdraws it
// (unpublish, Detach) and reads it, generation after generation; all the
// while every rank adds 1 to the counters it finds published, by
// FetchAndOp, and counts the adds that succeeded (the rest must be
// ErrRMARange). Counted invariant: for every counter, the adds that
// succeeded = its value right after Detach = its value at the end. An add
// lost, or one landing after Detach returned, breaks it.
func attachChurnBody(c *comm.Comm) error {
	n, me := c.Size(), c.Rank()
	dir, d, slots, err := publishBoard(c) // my slot: what I publish
	if err != nil {
		return err
	}
	succ := make([]int64, n*churnGens) // adds that succeeded, per owner and generation
	after := make([]int64, churnGens)  // my counters right after Detach
	var counters [][]byte
	rng := rand.New(rand.NewPCG(uint64(me), 7))
	for g := range churnGens {
		mem, err := comm.AllocMem(64, nil)
		if err != nil {
			return err
		}
		counters = append(counters, mem)
		if err := d.Attach(mem); err != nil {
			return err
		}
		atomics.StoreRelease64(slots[me], uint64(g)<<48|uint64(comm.Address(mem)))
		for range churnIters {
			t := rng.IntN(n)
			p := atomic.LoadUint64(slots[t])
			if p == 0 {
				continue
			}
			_, err := win.FetchAndOp(d, int64(1), t, int(p&(1<<48-1)), atomics.Sum)
			switch {
			case err == nil:
				succ[t*churnGens+int(p>>48)]++
			case !errors.Is(err, win.ErrRMARange):
				return err
			}
		}
		atomic.StoreUint64(slots[me], 0)
		if err := d.Detach(mem); err != nil {
			return err
		}
		after[g] = atomic.LoadInt64(counterWord(mem))
	}
	if err := d.UnlockAll(); err != nil {
		return err
	}
	total := make([]int64, len(succ))
	if err := comm.Allreduce(c, succ, total, atomics.Sum); err != nil {
		return err
	}
	var adds int64
	for g, mem := range counters {
		end := atomic.LoadInt64(counterWord(mem))
		if s := total[me*churnGens+g]; s != after[g] || end != after[g] {
			return fmt.Errorf("generation %d: %d adds succeeded, the counter held %d after Detach and %d at the end", g, s, after[g], end)
		}
		adds += end
		if err := comm.FreeMem(mem); err != nil {
			return err
		}
	}
	all := []int64{0}
	if err := comm.Allreduce(c, []int64{adds}, all, atomics.Sum); err != nil {
		return err
	}
	if me == 0 && all[0] == 0 {
		return errors.New("no add ever succeeded: the test tested nothing")
	}
	if err := d.Free(); err != nil {
		return err
	}
	return dir.Free()
}

func counterWord(mem []byte) *int64 {
	v, _ := win.View[int64](mem)
	return &v[0]
}

func TestAttachChurn(t *testing.T) {
	ranktest.Run(t, 12, "attach-churn") // oversubscribed on 2 cores
}

func TestAttachChurnLocal(t *testing.T) { runLocal(t, 6, attachChurnBody) }

func init() { ranktest.Register("detach-vs-map", detachVsMapBody) }

// detachVsMapBody: on every rank one goroutine attaches, publishes,
// withdraws, detaches and frees large blocks (an object each), while
// another puts into whatever the other ranks publish: each Put to a new
// block maps a new object while a Detach waits for accesses. It must end
// with every Put either done or ErrRMARange. (A Detach once held the lock
// that a first access to a new object takes, so two ranks could wait for
// each other; this stress did not hit that narrow cycle in three runs with
// the old locking: the argument at dynamic.mapMu is what rules it out.)
func detachVsMapBody(c *comm.Comm) error {
	const rounds, size = 60, 300 << 10
	n, me := c.Size(), c.Rank()
	dir, d, slots, err := publishBoard(c) // my slot: what I publish
	if err != nil {
		return err
	}
	var stop atomic.Bool
	putErr := make(chan error, 1)
	go func() {
		for i := 0; !stop.Load(); i++ {
			t := (me + 1 + i%(n-1)) % n
			p := atomic.LoadUint64(slots[t])
			if p == 0 {
				continue
			}
			if err := win.PutT(d, []int64{int64(i)}, t, int(p)+size-8); err != nil && !errors.Is(err, win.ErrRMARange) {
				putErr <- err
				return
			}
		}
		putErr <- nil
	}()
	for range rounds {
		blk, err := comm.AllocMem(size, nil)
		if err != nil {
			return err
		}
		if err := d.Attach(blk); err != nil {
			return err
		}
		atomics.StoreRelease64(slots[me], uint64(comm.Address(blk)))
		time.Sleep(200 * time.Microsecond) // the others put meanwhile
		atomic.StoreUint64(slots[me], 0)
		if err := d.Detach(blk); err != nil {
			return err
		}
		if err := comm.FreeMem(blk); err != nil {
			return err
		}
	}
	if err := c.Barrier(); err != nil { // everyone is done detaching
		return err
	}
	stop.Store(true)
	if err := <-putErr; err != nil {
		return err
	}
	if err := d.UnlockAll(); err != nil {
		return err
	}
	if err := d.Free(); err != nil {
		return err
	}
	return dir.Free()
}

func TestDetachVsMap(t *testing.T) {
	ranktest.Run(t, 3, "detach-vs-map", ranktest.Timeout(60*time.Second))
}

// publishBoard makes a word per rank in a shared window (where a rank
// publishes the address of what it attached), every rank's word as seen
// here, and a dynamic window with a LockAll epoch open.
func publishBoard(c *comm.Comm) (*win.Win, *win.Win, []*uint64, error) {
	dir, err := win.AllocateShared(c, 8, 8, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	d, err := win.CreateDynamic(c, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := d.LockAll(0); err != nil {
		return nil, nil, nil, err
	}
	slots := make([]*uint64, c.Size())
	for r := range slots {
		seg, err := dir.SharedQuery(r)
		if err != nil {
			return nil, nil, nil, err
		}
		v, err := win.View[uint64](seg)
		if err != nil {
			return nil, nil, nil, err
		}
		slots[r] = &v[0]
	}
	return dir, d, slots, nil
}
