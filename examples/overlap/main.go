// Command overlap runs a 1D heat smoother whose convergence test is
// overlapped with the work: each sweep starts comm.IallreduceInPlace on
// the sweep's largest change and waits for it only after the next sweep,
// so the reduction runs (on the communicator's worker) while the rank
// computes. The test thus lags one sweep: the loop stops one sweep after
// the one that converged. Ghost points move by c.Sendrecv with the left
// and right neighbours (comm.ProcNull at the ends). Every rank checks its
// block against the same smoother run serially for as many sweeps.
//
//	go run ./cmd/shmrun -n 4 --oversubscribe ./examples/overlap
package main

import (
	"fmt"
	"log"
	"math"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/shm"
)

const (
	n     = 256  // points in all
	tol   = 5e-3 // stop once no point changes by more than this
	limit = 100000
)

func main() {
	world, err := comm.Init()
	if err != nil {
		log.Fatal(err)
	}
	if err := run(world); err != nil {
		log.Fatal(err)
	}
	if err := comm.Finalize(); err != nil {
		log.Fatal(err)
	}
}

// initial is the starting value at global point i: a hot left end.
func initial(i int) float64 {
	if i == 0 {
		return 100
	}
	return 0
}

// sweep updates u's points [1, len(u)-1) whose global index g(i) is
// inside (0, n-1) into next and returns the largest change.
func sweep(u, next []float64, g func(i int) int) float64 {
	copy(next, u)
	most := 0.0
	for i := 1; i < len(u)-1; i++ {
		if gi := g(i); gi > 0 && gi < n-1 {
			next[i] = 0.5*u[i] + 0.25*(u[i-1]+u[i+1])
			most = math.Max(most, math.Abs(next[i]-u[i]))
		}
	}
	return most
}

func run(c *comm.Comm) error {
	rank, size := c.Rank(), c.Size()
	if n%size != 0 {
		return fmt.Errorf("%d ranks do not divide %d points", size, n)
	}
	m := n / size
	lo := rank * m
	g := func(i int) int { return lo + i - 1 }
	u, next := make([]float64, m+2), make([]float64, m+2)
	for i := range u {
		if gi := g(i); gi >= 0 && gi < n {
			u[i] = initial(gi)
		}
	}
	left, right := rank-1, rank+1
	if left < 0 {
		left = comm.ProcNull
	}
	if right >= size {
		right = comm.ProcNull
	}
	exchange := func(u []float64) error {
		if _, err := c.Sendrecv(shm.Bytes(u[m:m+1]), right, 0, shm.Bytes(u[0:1]), left, 0); err != nil {
			return err
		}
		_, err := c.Sendrecv(shm.Bytes(u[1:2]), left, 1, shm.Bytes(u[m+1:m+2]), right, 1)
		return err
	}

	// change[k%2] is sweep k's largest change, reduced while sweep k+1
	// runs: it must not be written until that reduction completes.
	change := [2][]float64{{0}, {0}}
	var pending *comm.Request
	sweeps := 0
	for k := 0; ; k++ {
		if err := exchange(u); err != nil {
			return err
		}
		change[k%2][0] = sweep(u, next, g)
		u, next = next, u
		q, err := comm.IallreduceInPlace(c, change[k%2], atomics.Max)
		if err != nil {
			return err
		}
		if pending != nil {
			// Sweep k-1's reduction, overlapped with sweep k.
			if _, err := pending.Wait(); err != nil {
				return err
			}
			if change[(k-1)%2][0] < tol || k == limit {
				sweeps = k + 1
				if _, err := q.Wait(); err != nil {
					return err
				}
				break
			}
		}
		pending = q
	}

	// The serial run, as many sweeps.
	s, sn := make([]float64, n+2), make([]float64, n+2)
	for i := range s {
		if gi := i - 1; gi >= 0 && gi < n {
			s[i] = initial(gi)
		}
	}
	for range sweeps {
		sweep(s, sn, func(i int) int { return i - 1 })
		s, sn = sn, s
	}
	diff := []float64{0}
	for i := 1; i <= m; i++ {
		diff[0] = math.Max(diff[0], math.Abs(u[i]-s[lo+i]))
	}
	if err := comm.AllreduceInPlace(c, diff, atomics.Max); err != nil {
		return err
	}
	if rank == 0 {
		fmt.Printf("%d ranks, %d points, %d sweeps with the convergence test overlapped, largest difference from the serial run %g\n",
			size, n, sweeps, diff[0])
	}
	if diff[0] != 0 {
		return fmt.Errorf("rank %d: the overlapped run differs from the serial one by %g", rank, diff[0])
	}
	return nil
}
