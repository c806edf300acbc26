//go:build !mpi

package comm_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
)

// nbcSteps: small nonblocking collectives polled by Test progress in the
// tests themselves (steps, nbc_shm.go), whoever comes late: 300 rounds,
// each one call of the eleven with a fast path (root and late rank
// moving round to round), its results checked against a reference; every
// seventh round two calls out at once, tested in reverse order; every
// fifth, a few tests and then Wait (which runs the rest). No worker may
// start (nothing here waits in the runtime with a job queued), so every
// job ran in steps; every rank both stopped and ended steps. Then a
// mismatch polled by Test (an error on every rank, the communicator
// still usable), and jobs left stepped at Free and at the end.
func nbcSteps(c *comm.Comm) error {
	me, n := c.Rank(), c.Size()
	if err := c.Barrier(); err != nil { // makes the area: the first call that may step
		return err
	}
	w0, _, _ := comm.NBCCounts()
	poll := func(what string, q *comm.Request) error {
		for {
			_, ok, err := q.Test()
			if err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			if ok {
				return nil
			}
		}
	}
	for i := range 300 {
		root, late := i%n, (i/3)%n
		if me == late {
			time.Sleep(time.Duration(50+(i%4)*100) * time.Microsecond)
		}
		v := int64(i*100 + me)
		name, q, check, err := nbcStepCall(c, i%11, root, v)
		if err != nil {
			return fmt.Errorf("round %d: %s: %w", i, name, err)
		}
		what := fmt.Sprintf("round %d: %s", i, name)
		switch {
		case i%7 == 0:
			name2, q2, check2, err := nbcStepCall(c, (i+3)%11, (root+1)%n, v+7)
			if err != nil {
				return fmt.Errorf("%s, then %s: %w", what, name2, err)
			}
			if err := poll(what+", second call "+name2, q2); err != nil {
				return err
			}
			if err := poll(what, q); err != nil {
				return err
			}
			if err := check2(); err != nil {
				return fmt.Errorf("%s, second call: %w", what, err)
			}
		case i%5 == 0:
			for range 3 {
				if _, _, err := q.Test(); err != nil {
					return fmt.Errorf("%s: %w", what, err)
				}
			}
			if _, err := q.Wait(); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
		default:
			if err := poll(what, q); err != nil {
				return err
			}
		}
		if err := check(); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	w1, ends, stops := comm.NBCCounts()
	if w1 != w0 {
		return fmt.Errorf("%d workers started: the tests should have run every job", w1-w0)
	}
	if ends == 0 || stops == 0 && n > 1 {
		return fmt.Errorf("steps: %d ran a job to its end, %d stopped; want both", ends, stops)
	}

	// A mismatch polled by Test: rank 0 reduces one element, the others
	// two. An error on every rank, from its test; then the communicator
	// works.
	m := 2
	if me == 0 {
		m = 1
	}
	out := make([]int64, m)
	q, err := comm.Iallreduce(c, make([]int64, m), out, atomics.Sum)
	if err != nil {
		return err
	}
	err = poll("mismatched Iallreduce", q)
	if n > 1 && (err == nil || !errors.Is(err, comm.ErrCount)) {
		return fmt.Errorf("mismatched Iallreduce: %v, want an ErrCount", err)
	}
	x := []int64{int64(me)}
	if q, err = comm.IallreduceInPlace(c, x, atomics.Sum); err != nil {
		return err
	}
	if err := poll("Iallreduce after the mismatch", q); err != nil {
		return err
	}
	if err := ranktest.Want("Iallreduce after the mismatch", x, []int64{int64(n * (n - 1) / 2)}); err != nil {
		return err
	}

	// A job left stepped at Free: the rank that frees first has
	// published, and its Free runs the rest (the others come late).
	d, err := c.Dup()
	if err != nil {
		return err
	}
	if err := d.Barrier(); err != nil {
		return err
	}
	if me != 0 {
		time.Sleep(2 * time.Millisecond)
	}
	y := []int64{1}
	q, err = comm.IallreduceInPlace(d, y, atomics.Sum)
	if err != nil {
		return err
	}
	if _, _, err := q.Test(); err != nil {
		return err
	}
	if err := d.Free(); err != nil {
		return err
	}
	if _, err := q.Wait(); err != nil {
		return fmt.Errorf("Iallreduce on a communicator freed before its end: %w", err)
	}
	if y[0] != int64(n) {
		return fmt.Errorf("Iallreduce on a communicator freed before its end: %d, want %d", y[0], n)
	}

	// One left stepped to the end of the job (Finalize runs it).
	if me != 0 {
		time.Sleep(2 * time.Millisecond)
	}
	_, err = comm.IallreduceInPlace(c, []int64{1}, atomics.Sum)
	return err
}

// nbcStepCall starts call k (of 11) of nbcSteps with root and this rank's
// value v, and returns its name, request and the check of its results.
func nbcStepCall(c *comm.Comm, k, root int, v int64) (string, *comm.Request, func() error, error) {
	me, n := c.Rank(), c.Size()
	val := func(q int) int64 { return v - int64(me) + int64(q) } // rank q's v
	sum := int64(0)
	for q := range n {
		sum += val(q)
	}
	prefix := func(upto int) int64 { // ranks [0, upto)
		s := int64(0)
		for q := range upto {
			s += val(q)
		}
		return s
	}
	block := func(q, j int) int64 { return val(q)*10 + int64(j) } // rank q's block for rank j
	each := func(f func(q int) int64) []int64 {                   // f of every rank
		w := make([]int64, n)
		for q := range n {
			w[q] = f(q)
		}
		return w
	}
	var q *comm.Request
	var err error
	var check func() error
	var name string
	switch k {
	case 0:
		name = "Iallreduce"
		out := []int64{0}
		q, err = comm.Iallreduce(c, []int64{v}, out, atomics.Sum)
		check = func() error { return ranktest.Want(name, out, []int64{sum}) }
	case 1:
		name = "Ibcast"
		buf := []int64{v}
		q, err = comm.Ibcast(c, buf, root)
		check = func() error { return ranktest.Want(name, buf, []int64{val(root)}) }
	case 2:
		name = "Ireduce"
		out := []int64{-1}
		q, err = comm.Ireduce(c, []int64{v}, out, atomics.Sum, root)
		check = func() error {
			if me != root {
				return ranktest.Want(name+" off the root", out, []int64{-1})
			}
			return ranktest.Want(name, out, []int64{sum})
		}
	case 3:
		name = "Igather"
		out := make([]int64, n)
		q, err = comm.Igather(c, []int64{v}, out, root)
		check = func() error {
			if me != root {
				return nil
			}
			return ranktest.Want(name, out, each(val))
		}
	case 4:
		name = "Iscatter"
		var send []int64
		if me == root {
			for j := range n {
				send = append(send, block(me, j))
			}
		}
		out := []int64{0}
		q, err = comm.Iscatter(c, send, out, root)
		check = func() error { return ranktest.Want(name, out, []int64{block(root, me)}) }
	case 5:
		name = "Iallgather"
		out := make([]int64, n)
		q, err = comm.Iallgather(c, []int64{v}, out)
		check = func() error { return ranktest.Want(name, out, each(val)) }
	case 6:
		name = "Ialltoall"
		send, out := make([]int64, n), make([]int64, n)
		for j := range n {
			send[j] = block(me, j)
		}
		q, err = comm.Ialltoall(c, send, out)
		check = func() error { return ranktest.Want(name, out, each(func(r int) int64 { return block(r, me) })) }
	case 7:
		name = "Iscan"
		out := []int64{0}
		q, err = comm.Iscan(c, []int64{v}, out, atomics.Sum)
		check = func() error { return ranktest.Want(name, out, []int64{prefix(me + 1)}) }
	case 8:
		name = "Iexscan"
		out := []int64{-3}
		q, err = comm.Iexscan(c, []int64{v}, out, atomics.Sum)
		check = func() error {
			if me == 0 {
				return nil // undefined there
			}
			return ranktest.Want(name, out, []int64{prefix(me)})
		}
	case 9:
		name = "IreduceScatterBlock"
		send, out := make([]int64, n), []int64{0}
		for j := range n {
			send[j] = block(me, j)
		}
		q, err = comm.IreduceScatterBlock(c, send, out, atomics.Sum)
		check = func() error {
			s := int64(0)
			for r := range n {
				s += block(r, me)
			}
			return ranktest.Want(name, out, []int64{s})
		}
	default:
		name = "IallreduceInPlace(Max)"
		buf := []int64{v}
		q, err = comm.IallreduceInPlace(c, buf, atomics.Max)
		check = func() error { return ranktest.Want(name, buf, []int64{val(n - 1)}) }
	}
	return name, q, check, err
}

func init() { ranktest.Register("nbc-steps", nbcSteps) }

// TestNBCSteps runs nbcSteps at 1, 2, 3 (a checker rank) and 7 ranks;
// the last two share this machine's cores, as does an 8-rank run
// under the oversubscribed wait policy (no worker until a kick).
func TestNBCSteps(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { ranktest.Run(t, n, "nbc-steps") })
	}
	t.Run("oversubscribed", func(t *testing.T) {
		ranktest.Run(t, 8, "nbc-steps", ranktest.Env("SHMRUN_WAIT=oversubscribed"), ranktest.Timeout(120*time.Second))
	})
}

// nbcStepsThreads: a goroutine blocked until the jobs end (a Wait on a
// later request, a blocking collective's drain) while another tests an
// earlier one now and then: a job left stepped must not wait for the
// next test. Rank 1 comes 5 ms late; rank 0's tester stops testing for
// 2 s, and its waiter must be done long before. Each of rank 0's steps
// holds its job 2 ms (comm.SetStepHook), so that the waiter comes while
// a step runs the job.
func nbcStepsThreads(c *comm.Comm) error {
	if err := c.Barrier(); err != nil {
		return err
	}
	if c.Rank() == 0 {
		comm.SetStepHook(func() { time.Sleep(2 * time.Millisecond) })
		defer comm.SetStepHook(nil)
	}
	for _, blocking := range []bool{false, true} {
		if c.Rank() == 1 {
			time.Sleep(5 * time.Millisecond)
		}
		x, y := []int64{1}, []int64{2}
		q1, err := comm.IallreduceInPlace(c, x, atomics.Sum)
		if err != nil {
			return err
		}
		var q2 *comm.Request
		if !blocking {
			if q2, err = comm.IallreduceInPlace(c, y, atomics.Sum); err != nil {
				return err
			}
		}
		if c.Rank() == 1 {
			if err := comm.WaitallInto([]*comm.Request{q1, q2}, nil); err != nil {
				return err
			}
			if blocking {
				if err := c.Barrier(); err != nil {
					return err
				}
			}
			continue
		}
		waited := make(chan error, 1)
		go func() {
			if blocking {
				waited <- c.Barrier()
			} else {
				_, err := q2.Wait()
				waited <- err
			}
		}()
		for range 2 {
			if _, _, err := q1.Test(); err != nil {
				return err
			}
		}
		select {
		case err := <-waited:
			if err != nil {
				return err
			}
		case <-time.After(2 * time.Second):
			return fmt.Errorf("blocking %v: the waiter still waits 2 s after the tests stopped", blocking)
		}
		if _, err := q1.Wait(); err != nil {
			return err
		}
		if x[0] != 2 || !blocking && y[0] != 4 {
			return fmt.Errorf("blocking %v: %d %d, want 2 4", blocking, x[0], y[0])
		}
	}
	return nil
}

func init() { ranktest.Register("nbc-steps-threads", nbcStepsThreads) }

func TestNBCStepsThreads(t *testing.T) {
	ranktest.Run(t, 2, "nbc-steps-threads")
}

// TestNBCStepsAbort: a rank's Abort ends the others' loops of Tests of a
// stepped Iallreduce (one stepped before the abort, one started after)
// with ErrAborted: a step's waits stop only while the job is not ending.
func TestNBCStepsAbort(t *testing.T) {
	const n = 3
	stepped := make(chan struct{}, n)
	ranktest.RunLocal(t, n, func(c *comm.Comm) error {
		if err := c.Barrier(); err != nil {
			return err
		}
		if c.Rank() == n-1 {
			for range n - 1 {
				<-stepped
			}
			c.Abort(9)
			return nil
		}
		q, err := comm.Iallreduce(c, []int64{1}, []int64{0}, atomics.Sum)
		if err != nil {
			return err
		}
		if _, ok, err := q.Test(); ok || err != nil {
			return fmt.Errorf("Test before the last rank called: %v, %v", ok, err)
		}
		stepped <- struct{}{}
		for range 2 {
			for {
				_, ok, err := q.Test()
				if ok || err != nil {
					if !errors.Is(err, comm.ErrAborted) {
						return fmt.Errorf("Test of an Iallreduce whose peer aborted: %v, %v", ok, err)
					}
					break
				}
			}
			if q, err = comm.Iallreduce(c, []int64{1}, []int64{0}, atomics.Sum); err != nil {
				if errors.Is(err, comm.ErrAborted) {
					return nil
				}
				return err
			}
		}
		return nil
	})
}
