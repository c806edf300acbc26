package comm_test

import (
	"errors"
	"fmt"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
)

func init() { ranktest.Register("be_pcoll", bePersistentColl) }

// bePersistentColl: persistent collectives started together by Startall
// round after round, their buffers refilled between rounds, completed by
// WaitallInto, Waitany, Testsome and Wait in turn, with a blocking and a
// nonblocking collective between the rounds; then the request's life:
// inactive Waits, Start of an active one, Free of an active one, Free,
// Start after Free.
func bePersistentColl(c *comm.Comm) error {
	r, n := c.Rank(), c.Size()
	sum := []int64{0}
	total := []int64{0}
	scan := []int64{0}
	root := n - 1
	bc := []int32{0, 0}
	gath := []int64{0} // rank r sends r%2 elements; the root gathers them
	counts, displs := make([]int, n), make([]int, n)
	at := 0
	for q := range n {
		counts[q], displs[q] = q%2, at
		at += q % 2
	}
	gathered := make([]int64, at)
	all := make([]float64, n)
	a2aSend, a2aRecv := make([]int32, n), make([]int32, n)
	rsb := make([]int64, n)

	var reqs []*comm.Request
	add := func(q *comm.Request, err error) error {
		reqs = append(reqs, q)
		return err
	}
	var sendG []int64
	if r%2 == 1 {
		sendG = gath
	} else {
		sendG = gath[:0]
	}
	for _, err := range []error{
		add(comm.AllreduceInit(c, sum, total, atomics.Sum)),
		add(comm.ScanInit(c, sum, scan, atomics.Sum)),
		add(comm.BcastInit(c, bc, root)),
		add(comm.GathervInit(c, sendG, gathered, counts, displs, root)),
		add(c.BarrierInit()),
		add(comm.AllgatherInitInPlace(c, all)),
		add(comm.AlltoallInit(c, a2aSend, a2aRecv)),
		add(comm.ReduceScatterBlockInitInPlace(c, rsb, atomics.Sum)),
	} {
		if err != nil {
			return err
		}
	}
	sts := make([]comm.Status, len(reqs))
	for round := range 6 {
		sum[0] = int64(r + round)
		if r == root {
			bc[0], bc[1] = int32(round), int32(-round)
		}
		gath[0] = int64(100*round + r)
		all[r] = float64(r*round) + 0.5
		for j := range n {
			a2aSend[j] = int32(1000*r + 10*j + round)
			rsb[j] = int64(j + round)
		}
		if err := comm.Startall(reqs); err != nil {
			return err
		}
		switch round % 4 {
		case 0:
			if err := comm.WaitallInto(reqs, sts); err != nil {
				return err
			}
		case 1:
			for range reqs {
				if _, _, err := comm.Waitany(reqs); err != nil {
					return err
				}
			}
			if i, _, err := comm.Waitany(reqs); err != nil || i != comm.Undefined {
				return fmt.Errorf("Waitany over inactive persistent collectives: %d, %v", i, err)
			}
		case 2:
			for left := len(reqs); left > 0; {
				idx, _, err := comm.Testsome(reqs)
				if err != nil {
					return err
				}
				left -= len(idx)
			}
		case 3:
			for _, q := range reqs {
				if _, err := q.Wait(); err != nil {
					return err
				}
			}
		}
		for i, q := range reqs {
			if q == nil {
				return fmt.Errorf("round %d: persistent request %d was set to nil", round, i)
			}
		}
		// The sequential answers.
		var wantTotal, wantScan int64
		for q := range n {
			wantTotal += int64(q + round)
			if q <= r {
				wantScan += int64(q + round)
			}
		}
		wantAll := make([]float64, n)
		wantA2A := make([]int32, n)
		for q := range n {
			wantAll[q] = float64(q*round) + 0.5
			wantA2A[q] = int32(1000*q + 10*r + round)
		}
		checks := []struct {
			what      string
			got, want any
		}{
			{"AllreduceInit", total[0], wantTotal},
			{"ScanInit", scan[0], wantScan},
			{"BcastInit", bc, []int32{int32(round), int32(-round)}},
			{"AllgatherInitInPlace", all, wantAll},
			{"AlltoallInit", a2aRecv, wantA2A},
			{"ReduceScatterBlockInitInPlace", rsb[0], int64(n * (r + round))},
		}
		if r == root {
			var want []int64
			for q := range n {
				if q%2 == 1 {
					want = append(want, int64(100*round+q))
				}
			}
			checks = append(checks, struct {
				what      string
				got, want any
			}{"GathervInit", gathered, want})
		}
		for _, k := range checks {
			if err := ranktest.Want(fmt.Sprintf("round %d: %s", round, k.what), fmt.Sprint(k.got), fmt.Sprint(k.want)); err != nil {
				return err
			}
		}
		// Other collectives between the rounds, in the same order on every
		// rank: a blocking one and a nonblocking one.
		if err := c.Barrier(); err != nil {
			return err
		}
		x := []int64{1}
		q, err := comm.IallreduceInPlace(c, x, atomics.Sum)
		if err != nil {
			return err
		}
		if _, err := q.Wait(); err != nil || x[0] != int64(n) {
			return fmt.Errorf("Iallreduce between rounds: %d, %v", x[0], err)
		}
	}

	// An inactive request: Wait and Test return at once, empty.
	q := reqs[0]
	if st, err := q.Wait(); err != nil || st != (comm.Status{Source: comm.AnySource, Tag: comm.AnyTag}) {
		return fmt.Errorf("Wait of an inactive persistent collective: %+v, %v", st, err)
	}
	if _, ok, err := q.Test(); err != nil || !ok {
		return fmt.Errorf("Test of an inactive persistent collective: %v, %v", ok, err)
	}
	// Start of an active one and Free of an active one are refused; the
	// operation goes on.
	sum[0] = 1
	if err := q.Start(); err != nil {
		return err
	}
	if err := q.Start(); !errors.Is(err, comm.ErrRequest) {
		return fmt.Errorf("Start of an active persistent collective: %v, want ErrRequest", err)
	}
	if err := q.Free(); !errors.Is(err, comm.ErrRequest) {
		return fmt.Errorf("Free of an active persistent collective: %v, want ErrRequest", err)
	}
	if _, err := q.Wait(); err != nil || total[0] != int64(n) {
		return fmt.Errorf("the last Allreduce: %d, %v", total[0], err)
	}
	for i, q := range reqs {
		if err := q.Free(); err != nil {
			return fmt.Errorf("Free of inactive request %d: %v", i, err)
		}
	}
	if err := q.Start(); !errors.Is(err, comm.ErrRequest) {
		return fmt.Errorf("Start after Free: %v, want ErrRequest", err)
	}
	fmt.Printf("rank %d ok\n", r)
	return nil
}
