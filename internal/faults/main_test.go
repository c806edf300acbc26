package faults

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/shm"
)

// envSoak turns on the long versions of the tests: its value is the soak's
// duration (e.g. 60s).
const envSoak = "SHMRUN_SOAK"

func TestMain(m *testing.M) {
	ranktest.Main(m)
}

// soak returns the soak duration when the long versions are asked for.
func soak(t testing.TB) (time.Duration, bool) {
	t.Helper()
	v := os.Getenv(envSoak)
	if v == "" {
		return 0, false
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: want a positive duration such as 60s", envSoak, v)
	}
	return d, true
}

// jobDir makes an empty directory on the shm tmpfs for one job, removed
// when the test ends. Tests run their jobs in it (ranktest.ShmDir) so that
// they can check that it is left empty: not one entry, of any name.
func jobDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp(shm.DefaultDir, "faults-")
	if err != nil {
		dir = t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// checkEmpty fails the test if dir holds anything.
func checkEmpty(t testing.TB, dir string) {
	t.Helper()
	for _, p := range emptyProblems(dir) {
		t.Error(p)
	}
}

func emptyProblems(dir string) []string {
	if _, err := os.Stat(dir); err != nil {
		return []string{err.Error()}
	}
	if left := entriesOf(dir); len(left) > 0 {
		return []string{fmt.Sprintf("left in the shm directory %s: %q", dir, left)}
	}
	return nil
}

func entries(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("listing %s: %v", dir, err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// checkNoSIGBUS fails the test if the job's output shows a bus error.
func checkNoSIGBUS(t testing.TB, res ranktest.Result) {
	t.Helper()
	for _, p := range sigbusProblems(res) {
		t.Error(p)
	}
}

func sigbusProblems(res ranktest.Result) []string {
	var out []string
	for _, s := range []string{res.Reason, res.Stderr, res.Stdout} {
		if strings.Contains(s, "SIGBUS") || strings.Contains(s, "unexpected fault address") {
			out = append(out, fmt.Sprintf("the job saw a bus error:\n%s", s))
		}
	}
	return out
}

// lineWatcher sees a job's output line by line, for tests that act when a
// rank says it reached a point. Write may be called concurrently.
type lineWatcher struct {
	mu      sync.Mutex
	partial []byte
	lines   []string
	changed chan struct{} // closed and replaced on every new line
}

func newLineWatcher() *lineWatcher { return &lineWatcher{changed: make(chan struct{})} }

func (w *lineWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	added := false
	for {
		i := strings.IndexByte(string(w.partial), '\n')
		if i < 0 {
			break
		}
		w.lines = append(w.lines, string(w.partial[:i]))
		w.partial = w.partial[i+1:]
		added = true
	}
	if added {
		close(w.changed)
		w.changed = make(chan struct{})
	}
	return len(p), nil
}

// copyFrom feeds w from r until r ends (for a process's output pipe).
func (w *lineWatcher) copyFrom(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		w.Write([]byte(sc.Text() + "\n"))
	}
}

// await waits until a line starting with prefix appears and returns its
// fields after the prefix, or nil after d.
func (w *lineWatcher) await(prefix string, d time.Duration) []string {
	deadline := time.After(d)
	for {
		w.mu.Lock()
		for _, l := range w.lines {
			if rest, ok := strings.CutPrefix(l, prefix); ok {
				w.mu.Unlock()
				return strings.Fields(rest)
			}
		}
		ch := w.changed
		w.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			return nil
		}
	}
}

func (w *lineWatcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.lines, "\n")
}

type teeWriter [2]io.Writer

func (w teeWriter) Write(p []byte) (int, error) {
	w[1].Write(p)
	return w[0].Write(p)
}

// rssShmem reads a process's resident shared memory (RssShmem) in bytes.
func rssShmem(pid int) (int64, bool) {
	return statusField(pid, "RssShmem:")
}

// statusField reads a "kB" field of /proc/<pid>/status, in bytes.
func statusField(pid int, field string) (int64, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, field); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return 0, false
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}

// gone reports whether pid no longer runs: absent, or a zombie waiting for
// its (new) parent to reap it.
func gone(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return true
	}
	st := s[i+2]
	return st == 'Z' || st == 'X'
}

func entriesOf(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}
