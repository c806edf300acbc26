//go:build !mpi

package comm

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/shmrun/shmrun/atomics"
)

// TestStepLeftToWorker: a worker whose claim fails because a step holds
// the first job, and that takes q.mu only after the step has left the
// job (leave, which saw the worker running), must claim it rather than
// exit: else the job stays stepped with the queue neither running nor
// parked, and nobody runs it: a goroutine already blocked in Wait (its
// addWaiter found the worker running) hangs, and kicks (barrier.Idle's
// kickParked) do nothing. workHook pauses the worker between its failed
// claim and its lock (what a preemption of its thread there does); the
// review of the steps found it so.
func TestStepLeftToWorker(t *testing.T) {
	cs, err := NewLocalWorld(2)
	if err != nil {
		t.Fatal(err)
	}
	c0, c1 := cs[0], cs[1]
	arrive1 := make(chan struct{})
	done1 := make(chan error, 1)
	go func() {
		done1 <- func() error {
			if err := c1.Barrier(); err != nil {
				return err
			}
			<-arrive1
			x := []int64{1}
			r, err := IallreduceInPlace(c1, x, atomics.Sum)
			if err != nil {
				return err
			}
			_, err = r.Wait()
			return err
		}()
	}()
	if err := c0.Barrier(); err != nil { // the area exists
		t.Fatal(err)
	}
	x := []int64{1}
	r1, err := IallreduceInPlace(c0, x, atomics.Sum) // steps: publishes, stops (rank 1 not there)
	if err != nil {
		t.Fatal(err)
	}
	q := c0.nbc.Load()
	if st := q.jobs[0].state.Load(); st != jobStepped {
		t.Fatalf("first job state %d, want stepped", st)
	}

	// A test's step holds the job (stepHook: after the claim).
	claimed, release := make(chan struct{}), make(chan struct{})
	stepHook = func() {
		if q.runner.Load() == 0 { // (any step on rank 0's queue)
			select {
			case claimed <- struct{}{}:
				<-release
			default:
			}
		}
	}
	defer func() { stepHook = nil }()
	tested := make(chan struct{})
	go func() {
		r1.Test()
		close(tested)
	}()
	<-claimed

	// A worker starts meanwhile (a job that does not step queued: an
	// Idup's, or Ibarrier's area-making one); its claim fails.
	failed, goOn := make(chan struct{}), make(chan struct{})
	workHook = func() {
		close(failed)
		<-goOn
	}
	defer func() { workHook = nil }()
	rNop, err := c0.startJob("Nop", func(*Comm) error { return nil }, false)
	if err != nil {
		t.Fatal(err)
	}
	<-failed

	// A Wait (of the job behind) comes now: runFirst finds the first
	// job claimed, and the worker runs, so addWaiter starts none.
	waited := make(chan error, 1)
	go func() {
		_, err := rNop.Wait()
		waited <- err
	}()
	for {
		q.mu.Lock()
		w := q.waiters
		q.mu.Unlock()
		if w == 1 {
			break
		}
		time.Sleep(100 * time.Microsecond)
	}

	// The step goes on and stops again (rank 1 still away): leave sees
	// the worker running. Then the worker takes the lock and exits.
	close(release)
	<-tested
	close(goOn)
	for {
		q.mu.Lock()
		running := q.running
		taken := len(q.jobs) > 0 && q.jobs[0].state.Load() == jobClaimed // (fixed code: the worker runs it)
		q.mu.Unlock()
		if !running || taken {
			break
		}
		time.Sleep(100 * time.Microsecond)
	}
	q.mu.Lock()
	state := fmt.Sprintf("running %v parked %v wanted %v waiters %d head state %d, nbcParked %d",
		q.running, q.parked, q.wanted, q.waiters, q.jobs[0].state.Load(), nbcParked.Load())
	q.mu.Unlock()
	t.Logf("after the race: %s", state)

	// Rank 1 arrives and completes; rank 0's Wait should end too. Kicks
	// as a runtime wait makes them (barrier.Idle) meanwhile.
	close(arrive1)
	if err := <-done1; err != nil {
		t.Fatal(err)
	}
	deadline := time.After(2 * time.Second)
	hung := false
loop:
	for {
		select {
		case err := <-waited:
			if err != nil {
				t.Fatal(err)
			}
			break loop
		case <-deadline:
			hung = true
			break loop
		default:
			idle(false) // kickParked
			time.Sleep(time.Millisecond)
		}
	}
	if hung {
		// Unstick it to end the test cleanly: a test steps it.
		stepHook = nil
		r1.Test()
		select {
		case <-waited:
		case <-time.After(5 * time.Second):
		}
		t.Fatal(errors.New("rank 0's Wait still blocked 2 s after rank 1 completed: the job was left stepped with no worker and the queue not parked (" + state + ")"))
	}
	r1.Wait()
}
