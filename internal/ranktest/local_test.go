//go:build !mpi

package ranktest_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
)

// fatalTB records the first Fatal of a RunLocal and ends its goroutine, as
// testing.T does; its Deadline is near, so RunLocal's limit is short.
type fatalTB struct {
	testing.TB
	deadline time.Time
	msg      string
}

func (f *fatalTB) Helper()                     {}
func (f *fatalTB) Deadline() (time.Time, bool) { return f.deadline, true }
func (f *fatalTB) Fatal(args ...any)           { f.msg = fmt.Sprint(args...); runtime.Goexit() }
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// runFatal runs RunLocal with a one-second limit and returns its Fatal
// message ("" if it returned).
func runFatal(n int, body func(c *comm.Comm) error) string {
	f := &fatalTB{deadline: time.Now().Add(time.Second)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		ranktest.RunLocal(f, n, body)
	}()
	<-done
	return f.msg
}

func TestRunLocal(t *testing.T) {
	ranks := make([]int, 3)
	cs := ranktest.RunLocal(t, 3, func(c *comm.Comm) error {
		ranks[c.Rank()]++
		return c.Barrier()
	})
	if len(cs) != 3 || ranks[0]+ranks[1]+ranks[2] != 3 {
		t.Errorf("RunLocal returned %d ranks, ran %v", len(cs), ranks)
	}

	msg := runFatal(2, func(c *comm.Comm) error {
		if c.Rank() == 1 {
			return errors.New("boom")
		}
		return nil
	})
	if msg != "rank 1: boom" {
		t.Errorf("a failing rank: Fatal %q, want %q", msg, "rank 1: boom")
	}

	// Rank 1 fails while rank 0 waits for it in a barrier: the world ends
	// at once (not after the time limit), rank 1's error first.
	msg = runFatal(2, func(c *comm.Comm) error {
		if c.Rank() == 1 {
			return errors.New("boom")
		}
		return c.Barrier()
	})
	if !strings.HasPrefix(msg, "rank 1: boom\n(the world was then aborted") || !strings.Contains(msg, "rank 0:") || strings.Contains(msg, "hung") {
		t.Errorf("a failing rank beside a waiting one: Fatal %q", msg)
	}

	// Rank 1 never enters the barrier: rank 0 hangs until RunLocal aborts
	// the job, and then returns ErrAborted.
	msg = runFatal(2, func(c *comm.Comm) error {
		if c.Rank() == 1 {
			return nil
		}
		return c.Barrier()
	})
	if !strings.Contains(msg, "ranks hung for 1s") || !strings.Contains(msg, "rank 0:") || !strings.Contains(msg, "abort") {
		t.Errorf("a hung barrier: Fatal %q", msg)
	}

	// A rank blocked outside shmrun's waits cannot be aborted: it is named.
	block := make(chan struct{})
	defer close(block)
	msg = runFatal(2, func(c *comm.Comm) error {
		if c.Rank() == 1 {
			<-block
		}
		return nil
	})
	if !strings.Contains(msg, "ranks [1] hung") {
		t.Errorf("a rank blocked on a channel: Fatal %q", msg)
	}
}
