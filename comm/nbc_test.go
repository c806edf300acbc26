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
