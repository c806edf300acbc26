//go:build !mpi

package ranktest

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/launcher"
	"github.com/shmrun/shmrun/shm"
)

// Result is how a job started by Run ended, with everything it printed.
type Result struct {
	launcher.Result
	Stdout, Stderr string
	ShmDir         string // the job's shm directory (removed when Run returns, unless chosen with the ShmDir option)
}

// Lines returns the job's standard output split into lines.
func (r Result) Lines() []string {
	s := strings.TrimSuffix(r.Stdout, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

type options struct {
	common
	stdin     io.Reader
	shmDir    string
	configure []func(*launcher.Config)
}

// Stdin is what rank 0 reads on its standard input (default: nothing).
func Stdin(r io.Reader) Option { return func(o *options) { o.stdin = r } }

// ShmDir runs the job in dir instead of a fresh directory under /dev/shm.
// Run then checks that the job leaves no shmrun.* object in dir that was not
// there before it started.
func ShmDir(dir string) Option { return func(o *options) { o.shmDir = dir } }

// Configure edits the launcher configuration last, after Run has filled it
// in: for MPMD parts, TagOutput, BindTo, Signals, Grace, or to wrap Stdout.
func Configure(f func(*launcher.Config)) Option {
	return func(o *options) { o.configure = append(o.configure, f) }
}

// Run starts the test binary as n ranks running the body registered as
// body, waits for the job to end, and returns how it ended. It fails the
// test (t.Fatal: call it from the test's goroutine) if the job cannot be
// launched or ends with another exit code than expected (0 unless
// ExitCode or AnyExitCode say otherwise), showing the job's output; it marks
// the test failed (t.Error) if the job left a shmrun.* object behind, and
// removes it.
func Run(t testing.TB, n int, body string, opts ...Option) Result {
	t.Helper()
	o := optionsOf(t, opts)
	var stdout, stderr syncBuffer
	cfg := launcher.Config{
		Parts:         []launcher.Part{{N: n, Prog: Program(), Args: o.args}},
		Oversubscribe: true,
		Timeout:       o.timeout,
		Env:           append([]string{EnvBody + "=" + body, raceOptions()}, o.env...),
		Stdin:         o.stdin,
		Stdout:        &stdout,
		Stderr:        &stderr,
	}
	if cfg.Stdin == nil {
		cfg.Stdin = strings.NewReader("")
	}
	if o.shmDir != "" {
		cfg.ShmDir = o.shmDir
	} else {
		cfg.ShmDir = jobDir(t)
		defer os.RemoveAll(cfg.ShmDir) // after the checks below
	}
	for _, f := range o.configure {
		f(&cfg)
	}
	before := objects(t, cfg.ShmDir)

	// A backstop in case the launcher itself hangs past its own timeout.
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout+cfg.Grace+launcher.DefaultGrace+30*time.Second)
	defer cancel()
	lres, err := launcher.Run(ctx, cfg)
	res := Result{Result: lres, Stdout: stdout.String(), Stderr: stderr.String(), ShmDir: cfg.ShmDir}
	if err != nil {
		t.Fatalf("ranktest: launching %d rank(s) of %s: %v\nstderr:\n%s", n, body, err, tail(res.Stderr))
	}

	var left []string
	for _, name := range objects(t, cfg.ShmDir) {
		if !slices.Contains(before, name) {
			left = append(left, name)
			_ = os.Remove(filepath.Join(cfg.ShmDir, name))
		}
	}
	if len(left) > 0 {
		t.Errorf("ranktest: job %s left %d object(s) in %s: %v", body, len(left), cfg.ShmDir, left)
	}
	if !o.anyExit && res.ExitCode != o.exitCode {
		t.Fatalf("ranktest: job %s of %d rank(s) exited %d, want %d (%s)\nstdout:\n%s\nstderr:\n%s",
			body, n, res.ExitCode, o.exitCode, res.Reason, tail(res.Stdout), tail(res.Stderr))
	}
	return res
}

// jobDir makes a directory of the job's own on the shm tmpfs, so that what
// the job leaves behind is told apart from what concurrent tests of other
// packages create. Without a usable /dev/shm it falls back to t.TempDir.
func jobDir(t testing.TB) string {
	t.Helper()
	sweepOnce.Do(func() { sweepJobDirs(shm.DefaultDir, staleDirAge) })
	dir, err := os.MkdirTemp(shm.DefaultDir, "ranktest-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// staleDirAge is how long a job directory must have gone unchanged before
// sweepJobDirs removes it once it is empty: a directory just made by a
// test of another package, whose job has yet to create its lock file, is
// younger.
const staleDirAge = 10 * time.Minute

var sweepOnce sync.Once

// sweepJobDirs removes what killed test runs left in base: jobDir's
// cleanup runs at a test's end, which a test binary killed by a signal
// (go test's timeout) never reaches, and its job directory keeps the
// launcher's lock file, and whatever objects its ranks had made, for good.
// In each ranktest-* directory of this user, launcher.Cleanup removes the
// objects of jobs whose launcher is gone (a live job's lock is held: they
// stay); the directory goes if that left it empty and it had gone
// unchanged for minAge.
func sweepJobDirs(base string, minAge time.Duration) {
	dirs, _ := filepath.Glob(filepath.Join(base, "ranktest-*"))
	for _, d := range dirs {
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Uid != uint32(os.Geteuid()) {
			continue
		}
		// Aged before the cleanup, which changes it: a directory left alone
		// that long is no starting job's.
		old := time.Since(fi.ModTime()) >= minAge
		_, _ = launcher.Cleanup(d)
		if old {
			_ = os.Remove(d) // fails unless empty
		}
	}
}

// objects lists the shmrun.* names in dir.
func objects(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("ranktest: listing the shm directory: %v", err)
	}
	var names []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), format.Prefix) {
			names = append(names, e.Name())
		}
	}
	return names
}

// Objects lists the shmrun.* names in dir, for tests that check cleanup
// themselves.
func Objects(t testing.TB, dir string) []string {
	t.Helper()
	return objects(t, dir)
}
