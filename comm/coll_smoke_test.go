package comm_test

import (
	"fmt"
	"testing"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
)

func TestCollSmoke(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7} {
		for _, m := range []int{0, 1, 5, 100, 3000, 70000} {
			t.Run(fmt.Sprintf("n%d/m%d", n, m), func(t *testing.T) {
				ranktest.RunLocal(t, n, func(c *comm.Comm) error { return collSmoke(c, m) })
			})
		}
	}
}

func init() {
	ranktest.Register("collsmoke", func(c *comm.Comm) error {
		for _, m := range []int{0, 1, 5, 100, 3000, 70000} {
			if err := collSmoke(c, m); err != nil {
				return fmt.Errorf("m=%d: %w", m, err)

			}
		}
		return nil
	})
}

func TestCollSmokeProcs(t *testing.T) {
	for _, n := range []int{2, 3, 5} {
		ranktest.Run(t, n, "collsmoke")
	}
}

func collSmoke(c *comm.Comm, m int) error {
	n := c.Size()
	{
		{
			{
				me := c.Rank()
				send := make([]int64, m)
				for i := range send {
					send[i] = int64(me*1000 + i)
				}
				recv := make([]int64, m)
				if err := comm.Allreduce(c, send, recv, atomics.Sum); err != nil {
					return err
				}
				for i := range recv {
					want := int64(n*i) + int64(1000*n*(n-1)/2)
					if recv[i] != want {
						return fmt.Errorf("allreduce[%d] = %d, want %d", i, recv[i], want)
					}
				}
				buf := make([]int64, m)
				if me == n-1 {
					copy(buf, send)
				}
				if err := comm.Bcast(c, buf, n-1); err != nil {
					return err
				}
				for i := range buf {
					if want := int64((n-1)*1000 + i); buf[i] != want {
						return fmt.Errorf("bcast[%d] = %d, want %d", i, buf[i], want)
					}
				}
				all := make([]int64, n*m)
				if err := comm.Allgather(c, send, all); err != nil {
					return err
				}
				for q := range n {
					for i := range m {
						if all[q*m+i] != int64(q*1000+i) {
							return fmt.Errorf("allgather[%d][%d] = %d", q, i, all[q*m+i])
						}
					}
				}
				a2a := make([]int64, n*m)
				for i := range a2a {
					a2a[i] = int64(me*1000000 + i)
				}
				got := make([]int64, n*m)
				if err := comm.Alltoall(c, a2a, got); err != nil {
					return err
				}
				for q := range n {
					for i := range m {
						if w := int64(q*1000000 + me*m + i); got[q*m+i] != w {
							return fmt.Errorf("alltoall from %d [%d] = %d, want %d", q, i, got[q*m+i], w)
						}
					}
				}
				sc := make([]int64, m)
				if err := comm.Scatter(c, a2a, sc, 0); err != nil {
					return err
				}
				for i := range m {
					if w := int64(me*m + i); sc[i] != w {
						return fmt.Errorf("scatter[%d] = %d, want %d", i, sc[i], w)
					}
				}
				if err := comm.Scan(c, send, recv, atomics.Sum); err != nil {
					return err
				}
				for i := range recv {
					want := int64((me+1)*i) + int64(1000*me*(me+1)/2)
					if recv[i] != want {
						return fmt.Errorf("scan[%d] = %d, want %d", i, recv[i], want)
					}
				}
				return c.Barrier()
			}
		}
	}
}
