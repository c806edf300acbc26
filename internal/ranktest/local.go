//go:build !mpi

package ranktest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/shmrun/shmrun/comm"
)

// LocalTimeout bounds RunLocal unless the test's own deadline is nearer.
const LocalTimeout = 2 * time.Minute

// localGrace is how long RunLocal waits at most, after aborting a hung
// world, for its ranks to see the abort word and return.
const localGrace = 10 * time.Second

// RunLocal runs body as the n goroutine ranks of a comm.NewLocalWorld: the
// mode in which the race detector sees every shared access. It fails the
// test with every rank's error, each prefixed with the rank. A world that
// does not finish within LocalTimeout (or 9/10 of the time the test has
// left) is aborted, so that ranks blocked in shmrun's waits return
// ErrAborted, and the test fails saying which ranks hung instead of
// running into go test's own timeout. A rank whose body returns an error
// ends the world at once, as a failing rank process ends a shmrun job: the
// others, blocked on it, return ErrAborted and the test fails with the
// first rank's error, not after the timeout. It returns the world's ranks.
func RunLocal(t testing.TB, n int, body func(c *comm.Comm) error) []*comm.Comm {
	t.Helper()
	cs, err := comm.NewLocalWorld(n)
	if err != nil {
		t.Fatal(err)
	}
	limit := LocalTimeout
	if dl, ok := deadline(t); ok {
		limit = min(limit, max(time.Until(dl)*9/10, time.Second))
	}
	errs := make([]error, n)
	done := make(chan int, n)
	for i, c := range cs {
		go func() {
			defer func() { done <- i }()
			if err := body(c); err != nil {
				errs[i] = fmt.Errorf("rank %d: %w", i, err)
			}
		}()
	}
	finished := make([]bool, n)
	first := -1 // the first rank that returned an error
	// wait collects up to want finished ranks within d and returns how
	// many; with stopOnError, it returns early once a rank has failed.
	wait := func(d time.Duration, want int, stopOnError bool) int {
		timer := time.NewTimer(d)
		defer timer.Stop()
		for got := 0; got < want; got++ {
			select {
			case i := <-done:
				finished[i] = true
				if errs[i] != nil && first < 0 {
					first = i
					if stopOnError {
						return got + 1
					}
				}
			case <-timer.C:
				return got
			}
		}
		return want
	}
	got := wait(limit, n, true)
	if got < n && first >= 0 {
		// A rank failed: end the world so that the ranks waiting on it
		// return, and report the failure first.
		cs[0].Abort(1)
		wait(min(localGrace, limit), n-got, false)
		others := make([]error, 0, n)
		for i, e := range errs {
			if i != first && finished[i] && e != nil {
				others = append(others, e)
			}
		}
		if len(others) == 0 {
			t.Fatal(errs[first])
		}
		t.Fatalf("%v\n(the world was then aborted; the other ranks said: %v)", errs[first], errors.Join(others...))
	}
	if got < n {
		cs[0].Abort(1) // NewLocalWorld: marks the job aborted and returns
		grace := min(localGrace, limit)
		wait(grace, n-got, false)
		var hung []int
		for i, f := range finished {
			if !f {
				hung = append(hung, i)
			}
		}
		if len(hung) > 0 {
			t.Fatalf("ranks %v hung for %v and were still running %v after the job was aborted; the other ranks said: %v",
				hung, limit, grace, joinDone(errs, finished))
		}
		t.Fatalf("ranks hung for %v; after the job was aborted they returned: %v", limit, errors.Join(errs...))
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return cs
}

// joinDone joins the errors of the ranks that finished (the others may
// still be writing theirs).
func joinDone(errs []error, finished []bool) error {
	var done []error
	for i, f := range finished {
		if f {
			done = append(done, errs[i])
		}
	}
	return errors.Join(done...)
}
