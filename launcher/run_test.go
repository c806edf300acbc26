package launcher_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/internal/topo"
	"github.com/shmrun/shmrun/launcher"
)

func TestRanksStartAndPassBarriers(t *testing.T) {
	const rounds = 1000
	for _, n := range []int{1, 2, 4, 16, 64} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			res := ranktest.Run(t, n, "barriers", ranktest.Args(strconv.Itoa(rounds)))
			got := slices.Clone(res.Lines())
			slices.Sort(got)
			var want []string
			for r := range n {
				want = append(want, fmt.Sprintf("rank %d of %d env %d/%d", r, n, r, n))
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("ranks said\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestRankFailure: the first failing rank decides the exit code, the reason
// names it, and the job ends within the grace period (plus a second) of the
// failure even though the other ranks ignore SIGTERM.
func TestRankFailure(t *testing.T) {
	const grace = 500 * time.Millisecond
	tests := []struct {
		name      string
		args      []string
		code      int
		reason    []string
		timeBound bool
	}{
		{"exit 3", []string{"1", "exit", "3"}, 3, []string{"rank 1 ", "exited with status 3"}, true},
		{"SIGSEGV", []string{"2", "segv"}, 128 + int(syscall.SIGSEGV), []string{"rank 2 ", "SIGSEGV"}, true},
		{"Abort(7)", []string{"1", "abort", "7"}, 7, []string{"rank 1 ", "Abort(7)", "exit code 7"}, true},
		// An exit status is one byte and an abort is never a success.
		{"Abort(256)", []string{"1", "abort", "256"}, 1, []string{"rank 1 ", "Abort(256)", "exit code 1"}, true},
		{"Abort(0)", []string{"2", "abort", "0"}, 1, []string{"rank 2 ", "Abort(0)", "exit code 1"}, true},
		{"Abort(300)", []string{"0", "abort", "300"}, 44, []string{"rank 0 ", "Abort(300)", "exit code 44"}, true},
		{"Abort(-1)", []string{"1", "abort", "-1"}, 255, []string{"rank 1 ", "Abort(-1)", "exit code 255"}, true},
		{"exit 0 without Finalize", []string{"0", "nofinalize"}, 1, []string{"rank 0 ", "without comm.Finalize"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			res := ranktest.Run(t, 3, "fail", ranktest.Args(tt.args...), ranktest.ExitCode(tt.code),
				ranktest.Configure(func(c *launcher.Config) { c.Grace = grace }))
			end := time.Now()
			for _, want := range tt.reason {
				if !strings.Contains(res.Reason, want) {
					t.Errorf("reason %q does not say %q", res.Reason, want)
				}
			}
			if !strings.Contains(res.Stderr, "shmrun: "+res.Reason) {
				t.Errorf("the reason is not on stderr:\n%s", res.Stderr)
			}
			failedAt := failTime(t, res.Stdout)
			if failedAt.Before(start) || failedAt.After(end) {
				t.Fatalf("failure time %v outside the run [%v, %v]", failedAt, start, end)
			}
			if d := end.Sub(failedAt); d > grace+time.Second {
				t.Errorf("Run returned %v after the rank failed; want at most grace (%v) + 1s", d, grace)
			}
		})
	}
}

func failTime(t *testing.T, stdout string) time.Time {
	t.Helper()
	for _, l := range strings.Split(stdout, "\n") {
		if ns, ok := strings.CutPrefix(l, "failing at "); ok {
			v, err := strconv.ParseInt(ns, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return time.Unix(0, v)
		}
	}
	t.Fatalf("the failing rank did not report:\n%s", stdout)
	return time.Time{}
}

// readyWatcher counts "ready <pid>" lines in the job's output and closes
// ready when it has seen n.
type readyWatcher struct {
	mu    sync.Mutex
	n     int
	buf   bytes.Buffer
	pids  []int
	ready chan struct{}
}

func newReadyWatcher(n int) *readyWatcher { return &readyWatcher{n: n, ready: make(chan struct{})} }

func (w *readyWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		line, err := w.buf.ReadString('\n')
		if err != nil {
			w.buf.Reset()
			w.buf.WriteString(line)
			break
		}
		if s, ok := strings.CutPrefix(strings.TrimSpace(line), "ready "); ok {
			pid, _ := strconv.Atoi(s)
			w.pids = append(w.pids, pid)
			if len(w.pids) == w.n {
				close(w.ready)
			}
		}
	}
	return len(p), nil
}

func (w *readyWatcher) Pids() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.pids)
}

// TestSignalEndsJob: SIGINT or SIGTERM to the launcher ends the job with
// 128+signal, and every rank is gone when Run returns.
func TestSignalEndsJob(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(unix.SignalName(sig), func(t *testing.T) {
			const n = 3
			w := newReadyWatcher(n)
			sigs := make(chan os.Signal, 1)
			go func() {
				<-w.ready
				sigs <- sig
			}()
			res := ranktest.Run(t, n, "hang", ranktest.ExitCode(128+int(sig)),
				ranktest.Configure(func(c *launcher.Config) {
					c.Signals = sigs
					c.Stdout = teeWriter{c.Stdout, w}
				}))
			if !strings.Contains(res.Reason, unix.SignalName(sig)) {
				t.Errorf("reason %q does not name %s", res.Reason, unix.SignalName(sig))
			}
			pids := w.Pids()
			if len(pids) != n {
				t.Fatalf("%d ranks were ready, want %d", len(pids), n)
			}
			for _, pid := range pids {
				if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
					t.Errorf("rank pid %d still exists after Run returned (kill 0: %v)", pid, err)
				}
			}
		})
	}
}

// TestSignalForwarded: SIGUSR1 to the launcher reaches every rank, and the
// job goes on.
func TestSignalForwarded(t *testing.T) {
	const n = 3
	w := newReadyWatcher(n)
	sigs := make(chan os.Signal, 1)
	go func() {
		<-w.ready
		sigs <- syscall.SIGUSR1
	}()
	res := ranktest.Run(t, n, "usr1", ranktest.Configure(func(c *launcher.Config) {
		c.Signals = sigs
		c.Stdout = teeWriter{c.Stdout, w}
	}))
	for r := range n {
		if want := fmt.Sprintf("rank %d got SIGUSR1", r); !slices.Contains(res.Lines(), want) {
			t.Errorf("no %q in\n%s", want, res.Stdout)
		}
	}
}

type teeWriter [2]interface{ Write([]byte) (int, error) }

func (w teeWriter) Write(p []byte) (int, error) {
	w[1].Write(p)
	return w[0].Write(p)
}

func TestTimeout(t *testing.T) {
	res := ranktest.Run(t, 2, "hang", ranktest.Timeout(time.Second), ranktest.ExitCode(launcher.TimeoutExitCode))
	if !strings.Contains(res.Reason, "timed out") {
		t.Errorf("reason %q does not say the job timed out", res.Reason)
	}
}

func TestPlainProgram(t *testing.T) {
	res := ranktest.Run(t, 2, "plain")
	got := res.Lines()
	slices.Sort(got)
	if want := []string{"plain rank 0", "plain rank 1"}; !slices.Equal(got, want) {
		t.Errorf("output %q, want %q", got, want)
	}
}

func TestTagOutputNeverTearsLines(t *testing.T) {
	const n, count, length = 8, 200, 3000
	res := ranktest.Run(t, n, "lines", ranktest.Args(strconv.Itoa(count), strconv.Itoa(length)),
		ranktest.Configure(func(c *launcher.Config) { c.TagOutput = true }))
	next := make([]int, n) // next line expected from each rank
	for i, l := range res.Lines() {
		var r int
		if _, err := fmt.Sscanf(l, "[%d] ", &r); err != nil || r < 0 || r >= n {
			t.Fatalf("line %d has no rank tag: %.80q", i, l)
		}
		if want := fmt.Sprintf("[%d] %s", r, tagLine(r, next[r], length)); l != want {
			t.Fatalf("line %d is torn or out of order:\n got %.100q...\nwant %.100q...", i, l, want)
		}
		next[r]++
	}
	for r, k := range next {
		if k != count {
			t.Errorf("rank %d: %d lines, want %d", r, k, count)
		}
	}
}

func TestEnvReachesRanks(t *testing.T) {
	res := ranktest.Run(t, 2, "env", ranktest.Args("SHMRUN_TEST_EXTRA", "SHMRUN_CONTROL_FD", "SHMRUN_LOCAL_RANK", "SHMRUN_APPNUM"),
		ranktest.Env("SHMRUN_TEST_EXTRA=a b=c"))
	for r := range 2 {
		for _, want := range []string{
			fmt.Sprintf("rank %d SHMRUN_TEST_EXTRA=a b=c set=true", r),
			fmt.Sprintf("rank %d SHMRUN_CONTROL_FD=3 set=true", r),
			fmt.Sprintf("rank %d SHMRUN_LOCAL_RANK=%d set=true", r, r),
			fmt.Sprintf("rank %d SHMRUN_APPNUM=0 set=true", r), // one program: the first
		} {
			if !slices.Contains(res.Lines(), want) {
				t.Errorf("no line %q in\n%s", want, res.Stdout)
			}
		}
	}
}

// An empty SHMRUN_WAIT is no policy: an oversubscribed job's ranks get
// the oversubscribed one (not DefaultPolicy's long spin, which an empty
// string parses to), the others none.
func TestEmptyWaitIsUnset(t *testing.T) {
	n := len(launcher.CPUs()) + 1
	for _, over := range []bool{true, false} {
		if !over {
			n = 1
		}
		res := ranktest.Run(t, n, "env", ranktest.Args(launcher.EnvWait), ranktest.Env(launcher.EnvWait+"="),
			ranktest.Configure(func(c *launcher.Config) { c.Oversubscribe = over }))
		for r := range n {
			want := fmt.Sprintf("rank %d %s= set=false", r, launcher.EnvWait)
			if over {
				want = fmt.Sprintf("rank %d %s=oversubscribed set=true", r, launcher.EnvWait)
			}
			if !slices.Contains(res.Lines(), want) {
				t.Errorf("no line %q in\n%s", want, res.Stdout)
			}
		}
	}
}

func TestBindToCore(t *testing.T) {
	cpus := launcher.CPUs()
	n := 2 * len(cpus)
	res := ranktest.Run(t, n, "affinity", ranktest.Configure(func(c *launcher.Config) {
		c.BindTo = "core"
		c.ReportBindings = true
	}))
	for r := range n {
		want := fmt.Sprintf("rank %d cpus %d", r, cpus[r%len(cpus)])
		if !slices.Contains(res.Lines(), want) {
			t.Errorf("no line %q in\n%s", want, res.Stdout)
		}
		if bound := fmt.Sprintf("rank %d bound to CPUs %d (", r, cpus[r%len(cpus)]); !strings.Contains(res.Stderr, bound) {
			t.Errorf("--report-bindings did not say %q:\n%s", bound, res.Stderr)
		}
	}
}

func TestBindToNone(t *testing.T) {
	cpus := launcher.CPUs()
	var all []string
	for _, c := range cpus {
		all = append(all, strconv.Itoa(c))
	}
	res := ranktest.Run(t, 2, "affinity")
	for r := range 2 {
		if want := fmt.Sprintf("rank %d cpus %s", r, strings.Join(all, ",")); !slices.Contains(res.Lines(), want) {
			t.Errorf("no line %q in\n%s", want, res.Stdout)
		}
	}
}

func TestMPMDRanksInOrder(t *testing.T) {
	res := ranktest.Run(t, 1, "part", ranktest.Configure(func(c *launcher.Config) {
		c.Parts = []launcher.Part{
			{N: 1, Prog: ranktest.Program(), Args: []string{"A"}},
			{N: 2, Prog: ranktest.Program(), Args: []string{"B", "x"}},
		}
	}))
	got := res.Lines()
	slices.Sort(got)
	want := []string{"rank 0 of 3 part A", "rank 1 of 3 part B x", "rank 2 of 3 part B x"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestDeadlockReportNamesFinalizeAndExits: rank 0 waits in Finalize for
// rank 1, a plain program that exited without Init: the watch's report
// says so (it said "a collective call or a window's synchronization", and
// nothing of rank 1).
func TestDeadlockReportNamesFinalizeAndExits(t *testing.T) {
	res := ranktest.Run(t, 1, "part", ranktest.ExitCode(launcher.DeadlockExitCode), ranktest.Configure(func(c *launcher.Config) {
		c.Parts = []launcher.Part{{N: 1, Prog: ranktest.Program(), Args: []string{"A"}}, {N: 1, Prog: "true"}}
		c.DeadlockAfter = 300 * time.Millisecond
	}))
	for _, want := range []string{"rank 0 waits in comm.Finalize (MPI_Finalize) for every rank to call it", "rank 1 has exited without calling comm.Init (MPI_Init)"} {
		if !strings.Contains(res.Stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, res.Stderr)
		}
	}
}

func TestStdinGoesToRank0Only(t *testing.T) {
	tests := []struct {
		stdinTo string
		rank0   string
	}{
		{"", `"hello, rank 0\n"`},
		{"rank0", `"hello, rank 0\n"`},
		{"none", `""`},
	}
	for _, tt := range tests {
		t.Run("stdin="+tt.stdinTo, func(t *testing.T) {
			res := ranktest.Run(t, 3, "stdin", ranktest.Stdin(strings.NewReader("hello, rank 0\n")),
				ranktest.Configure(func(c *launcher.Config) { c.StdinTo = tt.stdinTo }))
			got := res.Lines()
			slices.Sort(got)
			want := []string{"rank 0 stdin " + tt.rank0, `rank 1 stdin ""`, `rank 2 stdin ""`}
			if !slices.Equal(got, want) {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

func TestGoProgramIsBuilt(t *testing.T) {
	for _, prog := range []string{"testdata/gohello", "./testdata/gohello", "testdata/gohello/main.go"} {
		t.Run(prog, func(t *testing.T) {
			res := ranktest.Run(t, 2, "unused", ranktest.Configure(func(c *launcher.Config) {
				c.Parts = []launcher.Part{{N: 2, Prog: prog, Args: []string{"arg1"}}}
			}))
			if want := "hello from a built Go program [arg1]\n"; res.Stdout != want+want {
				t.Errorf("output %q, want twice %q", res.Stdout, want)
			}
		})
	}
}

// TestGoProgramOutsideModule: a Go package or file in a module of its
// own, away from the current directory's, is built in its module (go build
// ran in the current directory, which has no such module); "." names the
// current directory's package, and a plain name a program there when
// $PATH has none of that name, as mpirun finds them.
func TestGoProgramOutsideModule(t *testing.T) {
	mod := t.TempDir()
	for name, text := range map[string]string{
		"go.mod":  "module outside\n\ngo 1.26\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"outside\") }\n",
	} {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	elsewhere := t.TempDir()
	if err := os.WriteFile(filepath.Join(elsewhere, "localprog"), []byte("#!/bin/sh\necho outside\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dir, prog string }{
		{elsewhere, mod}, {elsewhere, filepath.Join(mod, "main.go")}, {mod, "."}, {elsewhere, "localprog"},
	} {
		t.Run(tc.prog, func(t *testing.T) {
			t.Chdir(tc.dir)
			res := ranktest.Run(t, 1, "unused", ranktest.Configure(func(c *launcher.Config) {
				c.Parts = []launcher.Part{{N: 1, Prog: tc.prog}}
			}))
			if res.Stdout != "outside\n" {
				t.Errorf("output %q, want %q", res.Stdout, "outside\n")
			}
		})
	}
}

// TestTagOutputRankChildHoldsPipes: with --tag-output a rank's output
// goes through pipes, which a child it leaves behind holds open; its exit
// still ends the job at once (it waited for the child, a minute).
func TestTagOutputRankChildHoldsPipes(t *testing.T) {
	start := time.Now()
	res := ranktest.Run(t, 2, "spawnexit", ranktest.ExitCode(7),
		ranktest.Configure(func(c *launcher.Config) { c.TagOutput = true }))
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the job took %v to end after rank 1 exited", d)
	}
	if !strings.Contains(res.Stdout, "[1] rank 1 leaves its child behind") {
		t.Errorf("stdout %q lacks rank 1's line", res.Stdout)
	}
}

// TestRelativeShmDir: ranks get an absolute SHMRUN_SHM_DIR even when the
// launcher was given a relative one (comm.Init refuses a relative one).
func TestRelativeShmDir(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.Mkdir("shm", 0o700); err != nil {
		t.Fatal(err)
	}
	res := ranktest.Run(t, 2, "barriers", ranktest.Args("10"), ranktest.ShmDir("shm"))
	if len(res.Lines()) != 2 {
		t.Errorf("output %q", res.Stdout)
	}
}

// TestControlSegmentDescriptor: every rank has the control memfd on fd 3 and
// nowhere else, also when the garbage collector runs between jobs (it used
// to finalize the previous job's *os.File and close a reused descriptor).
func TestControlSegmentDescriptor(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(1))
	const n = 32
	for i := range 4 {
		res := ranktest.Run(t, n, "fds")
		want := slices.Repeat([]string{"fd 3 memfd:shmrun-control"}, n)
		if got := res.Lines(); !slices.Equal(got, want) {
			t.Fatalf("job %d: ranks' memfds:\n%s\nwant each on fd 3 only", i, res.Stdout)
		}
	}
}

// TestBindLevels: every --bind-to level and --map-by level reaches the
// ranks' affinity (sched_getaffinity in each rank) as Place computed it.
func TestBindLevels(t *testing.T) {
	tp, err := topo.Current()
	if err != nil {
		t.Skipf("no topology here: %v", err)
	}
	n := min(len(launcher.CPUs()), 4)
	for _, tc := range []struct{ bind, mapBy string }{
		{"hwthread", ""}, {"core", ""}, {"l3cache", ""}, {"numa", ""}, {"package", ""},
		{"core", "package"}, {"core", "numa"}, {"core", "l3cache"},
	} {
		t.Run(tc.bind+"/"+tc.mapBy, func(t *testing.T) {
			cfg := launcher.Config{BindTo: tc.bind, MapBy: tc.mapBy}
			levels := map[string]topo.Level{"hwthread": topo.HWThread, "core": topo.Core, "l3cache": topo.L3Cache, "numa": topo.NUMANode, "package": topo.Package, "": topo.Core}
			want, err := tp.Place(n, topo.Options{Map: levels[tc.mapBy], Bind: levels[tc.bind]})
			if err != nil {
				t.Skipf("not possible on this machine: %v", err)
			}
			res := ranktest.Run(t, n, "affinity", ranktest.Configure(func(c *launcher.Config) {
				c.BindTo, c.MapBy, c.ReportBindings = cfg.BindTo, cfg.MapBy, true
			}))
			for r, b := range want {
				cpus := make([]string, 0, b.CPUs.Len())
				for _, c := range b.CPUs.CPUs() {
					cpus = append(cpus, strconv.Itoa(c))
				}
				if line := fmt.Sprintf("rank %d cpus %s", r, strings.Join(cpus, ",")); !slices.Contains(res.Lines(), line) {
					t.Errorf("no line %q in\n%s", line, res.Stdout)
				}
				if !strings.Contains(res.Stderr, tp.Report(b)) {
					t.Errorf("--report-bindings did not say %q:\n%s", tp.Report(b), res.Stderr)
				}
			}
		})
	}
}

func TestPlacementUsage(t *testing.T) {
	for _, cfg := range []launcher.Config{{BindTo: "socket"}, {MapBy: "hwthread"}, {MapBy: "board"}} {
		cfg.Parts = []launcher.Part{{N: 1, Prog: ranktest.Program()}}
		if err := cfg.Validate(len(launcher.CPUs())); !errors.Is(err, launcher.ErrUsage) {
			t.Errorf("%+v: Validate = %v, want ErrUsage", cfg, err)
		}
	}
}

// TestTinyDeadlockAfter: a watch period under 4 ns (--deadlock-after 3ns)
// made the watch's ticker period 0, and time.NewTicker panicked in the
// supervisor with the ranks running.
func TestTinyDeadlockAfter(t *testing.T) {
	for _, d := range []time.Duration{1, 3} {
		res := ranktest.Run(t, 2, "plain", ranktest.Configure(func(c *launcher.Config) { c.DeadlockAfter = d }))
		if got := len(res.Lines()); got != 2 {
			t.Errorf("DeadlockAfter %v: %d lines of output, want 2", d, got)
		}
	}
}

// TestSignalDuringBuild: a signal that ends the job, come while its Go
// program is built, ends it there: the build is cancelled and no rank is
// started only to be killed.
func TestSignalDuringBuild(t *testing.T) {
	sigs := make(chan os.Signal, 1)
	sigs <- syscall.SIGTERM
	var out, errOut strings.Builder
	res, err := launcher.Run(context.Background(), launcher.Config{
		Parts:   []launcher.Part{{N: 2, Prog: "testdata/gohello"}},
		Signals: sigs, Stdout: &out, Stderr: &errOut, Oversubscribe: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), "shmrun: received SIGTERM") {
		t.Errorf("stderr %q does not say why the job ended", errOut.String())
	}
	if res.ExitCode != 128+int(syscall.SIGTERM) || !strings.Contains(res.Reason, "during the build") || out.Len() != 0 {
		t.Errorf("exit %d, reason %q, stdout %q; want %d, a reason saying the build was stopped, no output",
			res.ExitCode, res.Reason, out.String(), 128+int(syscall.SIGTERM))
	}
}
