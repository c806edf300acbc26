//go:build !mpi

package comm_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/internal/team"
)

func TestMain(m *testing.M) { ranktest.Main(m) }

func init() {
	// world: checks Init's world against the launcher's environment, and
	// that Finalize ends the use of communicators.
	ranktest.Register("world", func(c *comm.Comm) error {
		if want := os.Getenv(comm.EnvSize); fmt.Sprint(c.Size()) != want {
			return fmt.Errorf("size %d, %s=%s", c.Size(), comm.EnvSize, want)
		}
		if want := os.Getenv(comm.EnvRank); fmt.Sprint(c.Rank()) != want {
			return fmt.Errorf("rank %d, %s=%s", c.Rank(), comm.EnvRank, want)
		}
		g := c.Group()
		if g.Size() != c.Size() || g.Rank() != c.Rank() {
			return fmt.Errorf("group: rank %d of %d", g.Rank(), g.Size())
		}
		if _, err := comm.Init(); !errors.Is(err, comm.ErrInit) {
			return fmt.Errorf("second Init = %v, want ErrInit", err)
		}
		for range 10 {
			if err := c.Barrier(); err != nil {
				return err
			}
		}
		if err := comm.Finalize(); err != nil {
			return err
		}
		if err := c.Barrier(); !errors.Is(err, comm.ErrFinalized) {
			return fmt.Errorf("Barrier after Finalize = %v, want ErrFinalized", err)
		}
		fmt.Printf("rank %d done\n", c.Rank())
		os.Exit(0) // Finalize was called; ranktest would call it again
		return nil
	})
	// abort: args [code]. The process calls Abort(code), 5 by default (a
	// singleton, here).
	ranktest.Register("abort", func(c *comm.Comm) error {
		code := 5
		if a := ranktest.BodyArgs(); len(a) > 0 {
			var err error
			if code, err = strconv.Atoi(a[0]); err != nil {
				return err
			}
		}
		c.Abort(code)
		return errors.New("Abort returned")
	})
}

func TestWorldUnderShmrun(t *testing.T) {
	res := ranktest.Run(t, 4, "world")
	got := res.Lines()
	slices.Sort(got)
	if want := []string{"rank 0 done", "rank 1 done", "rank 2 done", "rank 3 done"}; !slices.Equal(got, want) {
		t.Errorf("output %q, want %q", got, want)
	}
}

// TestSingleton: a program started without shmrun is a world of one. It is
// the only test here that uses the process-wide Init.
func TestSingleton(t *testing.T) {
	if os.Getenv(comm.EnvJob) != "" {
		t.Skip("running under shmrun")
	}
	w, err := comm.Init()
	if err != nil {
		t.Fatal(err)
	}
	if w.Rank() != 0 || w.Size() != 1 {
		t.Errorf("singleton is rank %d of %d", w.Rank(), w.Size())
	}
	if g := w.Group(); g.Size() != 1 || g.Rank() != 0 {
		t.Errorf("singleton group: rank %d of %d", g.Rank(), g.Size())
	}
	if tm, err := team.OfComm(w, "test"); err != nil || !shmJobIDValid(tm.Job()) {
		t.Errorf("singleton team %v, %v", tm, err)
	}
	for range 100 {
		if err := w.Barrier(); err != nil {
			t.Fatal(err)
		}
	}
	t0 := comm.Wtime()
	if t1 := comm.Wtime(); t1 < t0 {
		t.Errorf("Wtime went back: %v then %v", t0, t1)
	}
	if _, err := comm.Init(); !errors.Is(err, comm.ErrInit) {
		t.Errorf("second Init = %v, want ErrInit", err)
	}
	if err := comm.Finalize(); err != nil {
		t.Fatal(err)
	}
	if err := w.Barrier(); !errors.Is(err, comm.ErrFinalized) {
		t.Errorf("Barrier after Finalize = %v, want ErrFinalized", err)
	}
	if err := comm.Finalize(); !errors.Is(err, comm.ErrFinalized) {
		t.Errorf("second Finalize = %v, want ErrFinalized", err)
	}
	if _, err := comm.Init(); !errors.Is(err, comm.ErrInit) {
		t.Errorf("Init after Finalize = %v, want ErrInit", err)
	}
}

func shmJobIDValid(s string) bool { return len(s) == 32 && strings.Trim(s, "0123456789abcdef") == "" }

// TestSingletonAbort: Abort in a singleton ends the process with the
// code's exit status, which is never 0 (issue 12: Abort(256) exited 0).
func TestSingletonAbort(t *testing.T) {
	for _, tt := range []struct{ code, status int }{
		{5, 5}, {0, 1}, {256, 1}, {-256, 1}, {300, 44}, {-1, 255}, {255, 255}, {1 << 20, 1},
	} {
		cmd := exec.Command(ranktest.Program(), strconv.Itoa(tt.code))
		cmd.Env = append(os.Environ(), ranktest.EnvBody+"=abort")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != tt.status {
			t.Errorf("singleton Abort(%d): %v, want exit status %d; output %q", tt.code, err, tt.status, out)
		}
	}
}

// TestSingletonInitFails: a malformed environment is a clear error from
// Init, not a singleton.
func TestSingletonInitFails(t *testing.T) {
	cmd := exec.Command(ranktest.Program())
	cmd.Env = append(os.Environ(), ranktest.EnvBody+"=abort", comm.EnvRank+"=1")
	out, err := cmd.CombinedOutput()
	if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != ranktest.ExitFailed ||
		!strings.Contains(string(out), comm.EnvRank+" is set but "+comm.EnvJob+" is not") {
		t.Errorf("Init with only %s set: %v, output %q", comm.EnvRank, err, out)
	}
}

// runWorld runs body on every rank of a NewLocalWorld(n), each on its own
// goroutine, and fails the test with the ranks' errors or when they hang.
func runWorld(t *testing.T, n int, body func(c *comm.Comm) error) []*comm.Comm {
	t.Helper()
	return ranktest.RunLocal(t, n, body)
}

// TestLocalWorldBarrier: goroutine ranks over heap memory, where the race
// detector sees every shared access. Each rank writes its slot with plain
// stores before a barrier and reads all slots after it.
func TestLocalWorldBarrier(t *testing.T) {
	const n, rounds = 8, 300
	var slots [2][n]int
	var arrived [rounds]atomic.Int32
	runWorld(t, n, func(c *comm.Comm) error {
		if c.Size() != n {
			return fmt.Errorf("size %d", c.Size())
		}
		me := c.Rank()
		for k := range rounds {
			slots[k%2][me] = k
			arrived[k].Add(1)
			if err := c.Barrier(); err != nil {
				return err
			}
			if a := arrived[k].Load(); a != n {
				return fmt.Errorf("left barrier %d with %d of %d arrived", k, a, n)
			}
			for p, v := range slots[k%2] {
				if v != k {
					return fmt.Errorf("after barrier %d, rank %d's slot holds %d", k, p, v)
				}
			}
		}
		if err := c.Finalize(); err != nil {
			return err
		}
		if err := c.Barrier(); !errors.Is(err, comm.ErrFinalized) {
			return fmt.Errorf("Barrier after Finalize = %v", err)
		}
		return nil
	})
}

// TestLocalWorldAbort: Abort by one rank makes the others' waits return
// ErrAborted instead of hanging.
func TestLocalWorldAbort(t *testing.T) {
	const n = 5
	runWorld(t, n, func(c *comm.Comm) error {
		if err := c.Barrier(); err != nil {
			return err
		}
		if c.Rank() == 3 {
			c.Abort(9)
			return nil
		}
		if err := c.Barrier(); !errors.Is(err, comm.ErrAborted) {
			return fmt.Errorf("Barrier with an aborted peer = %v, want ErrAborted", err)
		}
		return nil
	})
}

// TestLocalWorldAbortCollectiveRequests: a rank's Abort ends the others'
// waits on a persistent collective (Wait), a nonblocking one (Waitany:
// the wait with no point-to-point engine) and an Isendrecv with
// ErrAborted, none hanging.
func TestLocalWorldAbortCollectiveRequests(t *testing.T) {
	const n = 4
	runWorld(t, n, func(c *comm.Comm) error {
		buf := []float64{1}
		p, err := comm.AllreduceInitInPlace(c, buf, atomics.Sum)
		if err != nil {
			return err
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		if c.Rank() == 2 {
			c.Abort(9)
			return nil
		}
		if err := p.Start(); err != nil {
			return err
		}
		if _, err := p.Wait(); !errors.Is(err, comm.ErrAborted) {
			return fmt.Errorf("Wait of a persistent Allreduce with an aborted peer = %v, want ErrAborted", err)
		}
		q, err := comm.Ibcast(c, buf, 2)
		if err != nil {
			if errors.Is(err, comm.ErrAborted) {
				return nil
			}
			return err
		}
		if _, _, err := comm.Waitany([]*comm.Request{q}); !errors.Is(err, comm.ErrAborted) {
			return fmt.Errorf("Waitany of an Ibcast from an aborted root = %v, want ErrAborted", err)
		}
		return nil
	})
}

func TestNewLocalWorldErrors(t *testing.T) {
	for _, n := range []int{0, -1, 1<<16 + 1} {
		if _, err := comm.NewLocalWorld(n); err == nil {
			t.Errorf("NewLocalWorld(%d) succeeded", n)
		}
	}
}
