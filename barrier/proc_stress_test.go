package barrier_test

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/internal/raw"
)

func init() {
	// barrierstress: args rounds policy. Every rank builds a barrier over
	// one line of memory shared by real processes and agrees rounds back
	// to back; rank r fails in round k when (k+r)%5 == 0 and n > r. Counted:
	// each rank bumps round k's arrival word before arriving and finds all
	// n after; every rank is told the same failure.
	ranktest.Register("barrierstress", func(c *comm.Comm) error {
		rounds, err := strconv.Atoi(ranktest.BodyArgs()[0])
		if err != nil {
			return err
		}
		p := barrier.OversubscribedPolicy
		if ranktest.BodyArgs()[1] == "futex" {
			p = barrier.Policy{Sleep: 20 * time.Millisecond}
		}
		n, r := c.Size(), c.Rank()
		mem, unmap, err := ranktest.MapShared(c, "barrierstress", barrier.LineLen+8*rounds+4*n*rounds)
		if err != nil {
			return err
		}
		defer unmap()
		b, err := barrier.New(mem[:barrier.LineLen], n, nil, p)
		if err != nil {
			return err
		}
		told := func(k, q int) *uint32 { return raw.Uint32At(mem, int64(barrier.LineLen+8*rounds+4*(k*n+q))) }
		for k := range rounds {
			arrived := raw.Uint64At(mem, int64(barrier.LineLen+8*k))
			atomic.AddUint64(arrived, 1)
			failed := -1
			if (k+r)%5 == 0 && r%2 == 0 {
				failed = r
			}
			got, err := b.Agree(failed)
			if err != nil {
				return err
			}
			if a := atomic.LoadUint64(arrived); a != uint64(n) {
				return fmt.Errorf("left barrier %d with %d of %d arrived", k, a, n)
			}
			atomic.StoreUint32(told(k, r), uint32(got+1))
		}
		if err := b.Wait(); err != nil {
			return err
		}
		for k := range rounds {
			want := uint32(0)
			for q := 0; q < n; q += 2 {
				if (k+q)%5 == 0 {
					want = 1 // someone failed; which one is told below
				}
			}
			first := atomic.LoadUint32(told(k, 0))
			if (first != 0) != (want != 0) {
				return fmt.Errorf("round %d: told %d, a failure expected: %v", k, int(first)-1, want != 0)
			}
			for q := range n {
				if g := atomic.LoadUint32(told(k, q)); g != first {
					return fmt.Errorf("round %d: rank 0 was told %d, rank %d %d", k, int(first)-1, q, int(g)-1)
				}
			}
		}
		return nil
	})
}

// TestBarrierStressProcesses: more ranks than cores, real processes, the
// barrier reused back to back with failures in some rounds.
func TestBarrierStressProcesses(t *testing.T) {
	for _, pol := range []string{"oversubscribed", "futex"} {
		t.Run(pol, func(t *testing.T) {
			ranktest.Run(t, 8, "barrierstress", ranktest.Args("1500", pol))
		})
	}
}
