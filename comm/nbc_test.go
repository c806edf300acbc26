//go:build !mpi

package comm_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/launcher"
)

// TestNonblockingCollOversubscribed runs the backends' nonblocking and
// persistent collective bodies with 16 ranks on this machine's cores:
// each rank's worker and its main goroutine compete for the CPU the other
// ranks need.
func TestNonblockingCollOversubscribed(t *testing.T) {
	if testing.Short() {
		t.Skip("16 processes")
	}
	ranktest.RunEach(t, []string{"be_nbc", "be_pcoll"}, []int{16})
}

func init() {
	// jobwake: Waitany and Waitsome over a receive that stays pending and
	// a nonblocking (or persistent) collective whose peer comes 3 ms late.
	// The waiter sleeps on its engine's doorbell (a one-poll spin, no
	// yield phase, 1 s futex sleeps), and the job's end must ring it: a
	// lost ring costs the whole second, which no collective whose peer is
	// 3 ms late comes near.
	ranktest.Register("jobwake", func(c *comm.Comm) error {
		peer := 1 - c.Rank()
		never := make([]byte, 8)
		pending, err := c.Irecv(never, peer, 99) // cancelled at the end
		if err != nil {
			return err
		}
		pbuf := []int64{0}
		pers, err := comm.AllreduceInitInPlace(c, pbuf, atomics.Sum)
		if err != nil {
			return err
		}
		for i := range 24 {
			late := c.Rank() == i%2
			if late {
				time.Sleep(3 * time.Millisecond)
			}
			x := []int64{int64(i + c.Rank())}
			var q *comm.Request
			if i%3 == 2 {
				pbuf[0] = x[0]
				err, q = pers.Start(), pers
			} else {
				q, err = comm.IallreduceInPlace(c, x, atomics.Sum)
			}
			if err != nil {
				return err
			}
			t0 := time.Now()
			reqs := []*comm.Request{pending, q}
			if i%2 == 0 {
				var k int
				k, _, err = comm.Waitany(reqs)
				if err == nil && k != 1 {
					err = fmt.Errorf("Waitany returned request %d, want the collective's (1)", k)
				}
			} else {
				var ks []int
				ks, _, err = comm.Waitsome(reqs)
				if err == nil && (len(ks) != 1 || ks[0] != 1) {
					err = fmt.Errorf("Waitsome returned requests %v, want the collective's [1]", ks)
				}
			}
			if err != nil {
				return fmt.Errorf("round %d: %w", i, err)
			}
			if d := time.Since(t0); !late && d > 500*time.Millisecond {
				return fmt.Errorf("round %d: rank %d waited %v for a collective whose peer was 3 ms late: the job's end did not wake it", i, c.Rank(), d)
			}
			got, want := x[0], int64(2*i+1)
			if i%3 == 2 {
				got = pbuf[0]
			}
			if got != want {
				return fmt.Errorf("round %d: the sum is %d, want %d", i, got, want)
			}
		}
		if err := pers.Free(); err != nil {
			return err
		}
		if err := pending.Cancel(); err != nil {
			return err
		}
		st, err := pending.Wait()
		if err == nil && !st.Cancelled {
			err = fmt.Errorf("the pending receive was not cancelled: %+v", st)
		}
		return err
	})
}

// TestJobEndWakesWaitany: a nonblocking collective's end wakes a Waitany
// or Waitsome asleep on the point-to-point doorbell (see "jobwake").
func TestJobEndWakesWaitany(t *testing.T) {
	ranktest.Run(t, 2, "jobwake", ranktest.Configure(func(cfg *launcher.Config) {
		cfg.Env = append(cfg.Env, launcher.EnvWait+"=spin=1,yield=0,sleep=1s")
	}))
}

func init() {
	// parked: ranks that share cores (SHMRUN_WAIT=oversubscribed) start
	// no worker when they queue a nonblocking collective (nbc.go); the
	// job must still run whenever the rank waits or tests in the runtime.
	// Each case has rank 1 wait for rank 0's job while rank 0 is in some
	// other call that blocks, or tests, or queues more.
	ranktest.Register("parked", func(c *comm.Comm) error {
		me, peer := c.Rank(), 1-c.Rank()
		d, err := c.Dup()
		if err != nil {
			return err
		}
		sum := func(i int) int64 { return int64(2*i + 1) }
		for i := range 20 {
			// A blocking receive: rank 1 sends only once its Iallreduce,
			// which needs rank 0's job, is done.
			x := []int64{int64(i + me)}
			q, err := comm.IallreduceInPlace(c, x, atomics.Sum)
			if err != nil {
				return err
			}
			m := []int64{0}
			if me == 0 {
				if _, err := comm.RecvT(c, m, peer, 7); err != nil {
					return err
				}
			}
			if _, err := q.Wait(); err != nil || x[0] != sum(i) {
				return fmt.Errorf("round %d, after a receive: %d, %v", i, x[0], err)
			}
			if me == 1 {
				if err := comm.SendT(c, m, peer, 7); err != nil {
					return err
				}
			}
			// A blocking collective on another communicator.
			x[0] = int64(i + me)
			if q, err = comm.IallreduceInPlace(c, x, atomics.Sum); err != nil {
				return err
			}
			if me == 0 {
				if err := d.Barrier(); err != nil {
					return err
				}
			}
			if _, err := q.Wait(); err != nil || x[0] != sum(i) {
				return fmt.Errorf("round %d, after a Barrier elsewhere: %d, %v", i, x[0], err)
			}
			if me == 1 {
				if err := d.Barrier(); err != nil {
					return err
				}
			}
			// Tests alone.
			x[0] = int64(i + me)
			if q, err = comm.IallreduceInPlace(c, x, atomics.Sum); err != nil {
				return err
			}
			if me == 1 {
				time.Sleep(100 * time.Microsecond)
			}
			for ok := false; !ok; {
				if _, ok, err = q.Test(); err != nil {
					return err
				}
			}
			if x[0] != sum(i) {
				return fmt.Errorf("round %d, by tests: %d", i, x[0])
			}
			// Several queued, then a blocking collective on the same
			// communicator (which runs them first, in order), then
			// Waitany over the rest.
			ys := [][]int64{{int64(i + me)}, {int64(10*i + me)}, {int64(100*i + me)}}
			var qs []*comm.Request
			for _, y := range ys {
				q, err := comm.IallreduceInPlace(c, y, atomics.Sum)
				if err != nil {
					return err
				}
				qs = append(qs, q)
			}
			z := []int64{int64(me)}
			if err := comm.AllreduceInPlace(c, z, atomics.Max); err != nil || z[0] != 1 {
				return fmt.Errorf("round %d, Allreduce after three queued: %d, %v", i, z[0], err)
			}
			for range qs {
				if _, _, err := comm.Waitany(qs); err != nil {
					return err
				}
			}
			if ys[0][0] != sum(i) || ys[1][0] != 20*int64(i)+1 || ys[2][0] != 200*int64(i)+1 {
				return fmt.Errorf("round %d, queued three: %v", i, ys)
			}
		}
		return d.Free()
	})
}

// TestParkedJobsProgress: with the oversubscribed wait policy, queued
// jobs start only when their rank tests or waits, and every way of doing
// so runs them (see "parked"). Without the waits' kick (barrier.Idle) the
// first case deadlocks, which the deadlock watch ends.
func TestParkedJobsProgress(t *testing.T) {
	ranktest.Run(t, 2, "parked", ranktest.Configure(func(cfg *launcher.Config) {
		cfg.Env = append(cfg.Env, launcher.EnvWait+"=oversubscribed")
	}))
}

// TestTestanyYieldsOnce: a test of several nonblocking collectives not yet
// complete gives the processor to their worker once (Test of each one
// does, a loop of Tests must let the worker run), not once for each.
func TestTestanyYieldsOnce(t *testing.T) {
	checked := make(chan struct{}) // rank 0's calls wait for rank 1's, which wait for this
	ranktest.RunLocal(t, 2, func(c *comm.Comm) error {
		const k = 8
		if c.Rank() == 1 {
			<-checked
		}
		reqs := make([]*comm.Request, k)
		outs := make([][]int64, k)
		for i := range reqs {
			outs[i] = make([]int64, 1)
			var err error
			if reqs[i], err = comm.Iallreduce(c, []int64{int64(i)}, outs[i], atomics.Sum); err != nil {
				return err
			}
		}
		if c.Rank() == 0 {
			err := func() error {
				before := comm.YieldsOfTests()
				if _, _, ok, err := comm.Testany(reqs); ok || err != nil {
					return fmt.Errorf("Testany before the other rank started: %v %v", ok, err)
				}
				if got := comm.YieldsOfTests() - before; got != 1 {
					return fmt.Errorf("Testany of %d pending collectives yielded %d times, want 1", k, got)
				}
				before = comm.YieldsOfTests()
				if idx, _, err := comm.Testsome(reqs); len(idx) != 0 || err != nil {
					return fmt.Errorf("Testsome before the other rank started: %v %v", idx, err)
				}
				if got := comm.YieldsOfTests() - before; got != 1 {
					return fmt.Errorf("Testsome of %d pending collectives yielded %d times, want 1", k, got)
				}
				return nil
			}()
			close(checked)
			if err != nil {
				return err
			}
		}
		if _, err := comm.Waitall(reqs); err != nil {
			return err
		}
		for i, o := range outs {
			if o[0] != int64(2*i) {
				return fmt.Errorf("Iallreduce %d: %d, want %d", i, o[0], 2*i)
			}
		}
		return nil
	})
}

// testallKicksBody: in an oversubscribed job a rank's nonblocking
// collectives wait for a test or a wait before their worker starts
// (nbcLazy). Rank 0 loops Testall over a receive, first, and an
// Iallreduce; rank 1 waits for its Iallreduce, then sends. Testall once
// stopped at the first incomplete request, so rank 0's job never started
// and both waited for good.
func testallKicksBody(c *comm.Comm) error {
	out := []int64{0}
	ia, err := comm.Iallreduce(c, []int64{int64(c.Rank() + 1)}, out, atomics.Sum)
	if err != nil {
		return err
	}
	if c.Rank() == 1 {
		if _, err := ia.Wait(); err != nil {
			return err
		}
		return comm.SendT(c, []int64{42}, 0, 5)
	}
	buf := []int64{0}
	ir, err := comm.IrecvT(c, buf, 1, 5)
	if err != nil {
		return err
	}
	reqs := []*comm.Request{ir, ia}
	for {
		_, ok, err := comm.Testall(reqs)
		if err != nil {
			return err
		}
		if ok {
			break
		}
	}
	if buf[0] != 42 || out[0] != 3 {
		return fmt.Errorf("received %d, reduced %d; want 42, 3", buf[0], out[0])
	}
	return nil
}

func init() { ranktest.Register("testall-kicks", testallKicksBody) }

func TestTestallKicksParkedJobs(t *testing.T) {
	ranktest.Run(t, 2, "testall-kicks", ranktest.Env("SHMRUN_WAIT=oversubscribed"), ranktest.Timeout(60*time.Second))
}
