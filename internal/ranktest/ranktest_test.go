//go:build !mpi

package ranktest_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/launcher"
	"github.com/shmrun/shmrun/shm"
)

func TestMain(m *testing.M) { ranktest.Main(m) }

func init() {
	ranktest.Register("hello", func(c *comm.Comm) error {
		fmt.Printf("hello %d/%d %s\n", c.Rank(), c.Size(), strings.Join(ranktest.BodyArgs(), ","))
		fmt.Fprintf(os.Stderr, "to stderr %d\n", c.Rank())
		return nil
	})
	ranktest.Register("fails", func(c *comm.Comm) error {
		if c.Rank() == 1 {
			return errors.New("something went wrong")
		}
		return c.Barrier() // ends with ErrAborted when rank 1 fails
	})
	ranktest.Register("shared", func(c *comm.Comm) error {
		mem, unmap, err := ranktest.MapShared(c, "scratch", c.Size()*8)
		if err != nil {
			return err
		}
		defer unmap()
		atomic.StoreUint64(raw.Uint64At(mem, int64(c.Rank())*8), uint64(c.Rank())+100)
		if err := c.Barrier(); err != nil {
			return err
		}
		for r := range c.Size() {
			if got := atomic.LoadUint64(raw.Uint64At(mem, int64(r)*8)); got != uint64(r)+100 {
				return fmt.Errorf("rank %d's word holds %d", r, got)
			}
		}
		return nil
	})
	// leaks: rank 0 leaves an object that the launcher does not know of
	// (another job's name) in the job's directory.
	ranktest.Register("leaks", func(c *comm.Comm) error {
		if c.Rank() == 0 {
			o, err := shm.Create(os.Getenv(comm.EnvShmDir), format.ObjectName("dead", "leak"), 1)
			if err != nil {
				return err
			}
			o.Close()
		}
		return nil
	})
	ranktest.RegisterMain("exit4", func() int { return 4 })
	ranktest.RegisterMain("sleep", func() int { time.Sleep(time.Hour); return 0 })
}

func TestRun(t *testing.T) {
	res := ranktest.Run(t, 3, "hello", ranktest.Args("a", "b"))
	got := res.Lines()
	slices.Sort(got)
	if want := []string{"hello 0/3 a,b", "hello 1/3 a,b", "hello 2/3 a,b"}; !slices.Equal(got, want) {
		t.Errorf("stdout %q, want %q", got, want)
	}
	for r := range 3 {
		if !strings.Contains(res.Stderr, fmt.Sprintf("to stderr %d\n", r)) {
			t.Errorf("stderr %q lacks rank %d", res.Stderr, r)
		}
	}
	if res.ExitCode != 0 || res.Reason != "" {
		t.Errorf("result %+v", res.Result)
	}
	if _, err := os.Stat(res.ShmDir); !os.IsNotExist(err) {
		t.Errorf("the job's shm directory %s was not removed: %v", res.ShmDir, err)
	}
}

func TestRunBodyError(t *testing.T) {
	res := ranktest.Run(t, 3, "fails", ranktest.ExitCode(ranktest.ExitFailed))
	if !strings.Contains(res.Stderr, "ranktest: body fails: rank 1: something went wrong") || !strings.Contains(res.Reason, "rank 1 ") {
		t.Errorf("reason %q, stderr:\n%s", res.Reason, res.Stderr)
	}
}

func TestMapShared(t *testing.T) {
	ranktest.Run(t, 4, "shared")
}

func TestRegisterMain(t *testing.T) {
	res := ranktest.Run(t, 2, "exit4", ranktest.AnyExitCode())
	if res.ExitCode != 4 {
		t.Errorf("exit code %d, want 4", res.ExitCode)
	}
}

func TestTimeoutOption(t *testing.T) {
	ranktest.Run(t, 1, "sleep", ranktest.Timeout(500*time.Millisecond), ranktest.ExitCode(launcher.TimeoutExitCode))
}

func TestUnknownBody(t *testing.T) {
	res := ranktest.Run(t, 1, "no such body", ranktest.ExitCode(ranktest.ExitFailed))
	if !strings.Contains(res.Stderr, `no body registered as "no such body"`) {
		t.Errorf("stderr %q", res.Stderr)
	}
}

func TestShmDirOption(t *testing.T) {
	dir := t.TempDir()
	touch := filepath.Join(dir, format.ObjectName("0", "before"))
	if err := os.WriteFile(touch, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	res := ranktest.Run(t, 2, "shared", ranktest.ShmDir(dir))
	if res.ShmDir != dir {
		t.Errorf("ran in %s, want %s", res.ShmDir, dir)
	}
	if _, err := os.Stat(touch); err != nil {
		t.Errorf("an object that was there before the job is gone: %v", err)
	}
}

// recorder is a testing.TB that records failures instead of failing; its
// Fatal ends the calling goroutine as testing's does.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
	fatal  bool
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.mu.Lock()
	r.fatal = true
	r.mu.Unlock()
	runtime.Goexit()
}

// runRecorded calls ranktest.Run with a recorder and returns it.
func runRecorded(t *testing.T, n int, body string, opts ...ranktest.Option) *recorder {
	rec := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		ranktest.Run(rec, n, body, opts...)
	}()
	<-done
	return rec
}

func TestRunFailsTheTest(t *testing.T) {
	t.Run("leak", func(t *testing.T) {
		rec := runRecorded(t, 2, "leaks")
		if rec.fatal || len(rec.errors) != 1 || !strings.Contains(rec.errors[0], format.ObjectName("dead", "leak")) {
			t.Errorf("a leaked object: fatal %v, errors %q", rec.fatal, rec.errors)
		}
	})
	t.Run("exit code", func(t *testing.T) {
		rec := runRecorded(t, 2, "exit4")
		if !rec.fatal || len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "exited 4, want 0") {
			t.Errorf("an unexpected exit code: fatal %v, errors %q", rec.fatal, rec.errors)
		}
	})
	t.Run("launch", func(t *testing.T) {
		rec := runRecorded(t, 0, "hello")
		if !rec.fatal || len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "launching 0 rank(s)") {
			t.Errorf("a job that cannot start: fatal %v, errors %q", rec.fatal, rec.errors)
		}
	})
}
