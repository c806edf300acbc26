//go:build !mpi

package comm_test

import (
	"sync"
	"testing"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
)

// benchLocal runs body b.N times on each of n goroutine ranks.
func benchLocal(b *testing.B, n int, body func(c *comm.Comm) error) {
	cs, err := comm.NewLocalWorld(n)
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	b.ResetTimer()
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range b.N {
				if err := body(c); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkBarrier1 is the call overhead of a collective alone: one rank,
// nothing to wait for.
func BenchmarkBarrier1(b *testing.B) { benchLocal(b, 1, (*comm.Comm).Barrier) }

func BenchmarkAllreduce8x1(b *testing.B) {
	x, y := []float64{1}, []float64{0}
	benchLocal(b, 1, func(c *comm.Comm) error { return comm.Allreduce(c, x, y, atomics.Sum) })
}

func BenchmarkBcast8x1(b *testing.B) {
	x := []float64{1}
	benchLocal(b, 1, func(c *comm.Comm) error { return comm.Bcast(c, x, 0) })
}

func BenchmarkAllgather8x1(b *testing.B) {
	x, y := []float64{1}, []float64{0}
	benchLocal(b, 1, func(c *comm.Comm) error { return comm.Allgather(c, x, y) })
}

func BenchmarkAlltoall8x1(b *testing.B) {
	x, y := []float64{1}, []float64{0}
	benchLocal(b, 1, func(c *comm.Comm) error { return comm.Alltoall(c, x, y) })
}

func BenchmarkScatter8x1(b *testing.B) {
	x, y := []float64{1}, []float64{0}
	benchLocal(b, 1, func(c *comm.Comm) error { return comm.Scatter(c, x, y, 0) })
}

// BenchmarkIallreduce8x1 is Allreduce8x1 as Iallreduce then Wait: what
// the queue costs a call waited for at once.
func BenchmarkIallreduce8x1(b *testing.B) {
	s, r := []float64{1}, []float64{0}
	benchLocal(b, 1, func(c *comm.Comm) error {
		q, err := comm.Iallreduce(c, s, r, atomics.Sum)
		if err != nil {
			return err
		}
		_, err = q.Wait()
		return err
	})
}

// BenchmarkIallreduceWaitany8x1 starts two Iallreduce and completes them
// with Waitany: the wait for several requests with no point-to-point
// engine to sleep on, woken by the jobs' ends.
func BenchmarkIallreduceWaitany8x1(b *testing.B) {
	s, r1, r2 := []float64{1}, []float64{0}, []float64{0}
	reqs := make([]*comm.Request, 2)
	benchLocal(b, 1, func(c *comm.Comm) error {
		var err error
		if reqs[0], err = comm.Iallreduce(c, s, r1, atomics.Sum); err != nil {
			return err
		}
		if reqs[1], err = comm.Iallreduce(c, s, r2, atomics.Sum); err != nil {
			return err
		}
		for range reqs {
			if _, _, err := comm.Waitany(reqs); err != nil {
				return err
			}
		}
		return nil
	})
}

// BenchmarkIallreduceTest8x2 is an Iallreduce polled by Test until it
// completes, two goroutine ranks: what a step costs a test.
func BenchmarkIallreduceTest8x2(b *testing.B) {
	benchLocal(b, 2, func(c *comm.Comm) error {
		s, r := []float64{1}, []float64{0}
		q, err := comm.Iallreduce(c, s, r, atomics.Sum)
		if err != nil {
			return err
		}
		for {
			_, ok, err := q.Test()
			if ok || err != nil {
				return err
			}
		}
	})
}
