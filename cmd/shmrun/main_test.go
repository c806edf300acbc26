package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/launcher"
	"github.com/shmrun/shmrun/shm"
)

// envAsCLI makes the test binary act as the shmrun command itself, so a test
// can start (and SIGKILL) a real shmrun process without building one.
const envAsCLI = "SHMRUN_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(envAsCLI) != "" && !ranktest.IsRank() {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	ranktest.Main(m)
}

func init() {
	// hang: every rank says "ready <pid>" once all have started, then
	// sleeps: rank 0 outside any barrier, the others in one.
	ranktest.Register("hang", func(c *comm.Comm) error {
		if err := c.Barrier(); err != nil {
			return err
		}
		fmt.Printf("ready %d\n", os.Getpid())
		if c.Rank() == 0 {
			time.Sleep(time.Hour)
		}
		return c.Barrier()
	})
	// env: prints NAME=value for each NAME in its arguments.
	ranktest.Register("env", func(c *comm.Comm) error {
		for _, name := range ranktest.BodyArgs() {
			fmt.Printf("rank %d %s=%s\n", c.Rank(), name, os.Getenv(name))
		}
		return nil
	})
	// part: prints its rank and arguments.
	ranktest.Register("part", func(c *comm.Comm) error {
		fmt.Printf("rank %d of %d part %s\n", c.Rank(), c.Size(), strings.Join(ranktest.BodyArgs(), " "))
		return nil
	})
}

// shmDir returns a fresh directory on the shm tmpfs (t.TempDir if there is
// none); the test fails if a shmrun.* object is left in it.
func shmDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp(shm.DefaultDir, "shmrun-cli-test-")
	if err != nil {
		dir = t.TempDir()
	}
	t.Cleanup(func() {
		if left := ranktest.Objects(t, dir); len(left) > 0 {
			t.Errorf("left in %s: %q", dir, left)
		}
		os.RemoveAll(dir)
	})
	return dir
}

// body returns the arguments that run the registered body as a program:
// env(1) sets the variable that selects it (the launcher passes no
// SHMRUN_* variable of its own environment on to ranks, and -x refuses to).
func body(name string, args ...string) []string {
	return append([]string{"env", ranktest.EnvBody + "=" + name, ranktest.Program()}, args...)
}

// runCLI calls run with args and returns its exit code and output.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "started")
	prog := filepath.Join(dir, "prog")
	script := "#!/bin/sh\ntouch " + marker + "\n"
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	noexec := filepath.Join(dir, "noexec")
	if err := os.WriteFile(noexec, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SHMRUN_TEST_UNSET_VAR", "")
	os.Unsetenv("SHMRUN_TEST_UNSET_VAR")

	tests := []struct {
		name string
		args []string
	}{
		{"-n 0", []string{"-n", "0", prog}},
		{"-n -1", []string{"-n", "-1", prog}},
		{"-n abc", []string{"-n", "abc", prog}},
		{"--np=", []string{"--np=", prog}},
		{"unknown flag", []string{"--no-such-flag", prog}},
		{"unknown shorthand", []string{"-z", prog}},
		{"-n without value", []string{"-n"}},
		{"no program", []string{}},
		{"flags but no program", []string{"-n", "1"}},
		{"missing program", []string{"-n", "1", filepath.Join(dir, "nope")}},
		{"program not in PATH", []string{"-n", "1", "no-such-program-for-shmrun"}},
		{"not executable", []string{"-n", "1", noexec}},
		{"directory without Go files", []string{"-n", "1", dir}},
		{"empty last MPMD part", []string{"-n", "1", prog, ":"}},
		{"empty first MPMD part", []string{":", "-n", "1", prog}},
		{"empty middle MPMD part", []string{"-n", "1", prog, ":", ":", "-n", "1", prog}},
		{"MPMD part without program", []string{"-n", "1", prog, ":", "-n", "2"}},
		{"MPMD part -n 0", []string{"-n", "1", prog, ":", "-n", "0", prog}},
		{"MPMD part -n abc", []string{"-n", "1", prog, ":", "-n", "abc", prog}},
		{"MPMD part unknown flag", []string{"-n", "1", prog, ":", "--tag-output", prog}},
		{"bad duration", []string{"--timeout", "soon", "-n", "1", prog}},
		{"zero duration", []string{"--timeout", "0", "-n", "1", prog}},
		{"negative duration", []string{"--timeout", "-5s", "-n", "1", prog}},
		{"deadlock watch: bad duration", []string{"--deadlock-after", "soon", "-n", "1", prog}},
		{"deadlock watch: negative", []string{"--deadlock-after", "-1s", "-n", "1", prog}},
		{"env: single copy", []string{"-x", "SHMRUN_SINGLE_COPY=off", "-n", "1", prog}},
		{"env: bad name", []string{"-x", "1BAD=v", "-n", "1", prog}},
		{"env: empty name", []string{"-x", "=v", "-n", "1", prog}},
		{"env: shmrun's own", []string{"-x", "SHMRUN_RANK=3", "-n", "1", prog}},
		{"env: unset", []string{"-x", "SHMRUN_TEST_UNSET_VAR", "-n", "1", prog}},
		{"bind-to", []string{"--bind-to", "socket", "-n", "1", prog}},
		{"shm backing", []string{"--shm", "tmpfs", "-n", "1", prog}},
		{"env: backing", []string{"-x", "SHMRUN_SHM=memfd", "-n", "1", prog}},
		{"stdin", []string{"--stdin", "all", "-n", "1", prog}},
		{"more ranks than CPUs", []string{"-n", strconv.Itoa(len(launcher.CPUs()) + 1), prog}},
		{"missing shm dir", []string{"--shm-dir", filepath.Join(dir, "nope"), "-n", "1", prog}},
		{"empty --bind-to", []string{"--bind-to=", "-n", "1", prog}},
		{"empty --stdin", []string{"--stdin=", "-n", "1", prog}},
		{"empty --check", []string{"--check=", "-n", "1", prog}},
		{"empty --shm-dir", []string{"--shm-dir=", "-n", "1", prog}},
		{"empty --timeout", []string{"--timeout=", "-n", "1", prog}},
		{"--cleanup with a program", []string{"--cleanup", prog}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sd := shmDir(t) // a later --shm-dir in tt.args wins
			code, stdout, stderr := runCLI(t, append([]string{"--shm-dir", sd}, tt.args...)...)
			if code != 2 {
				t.Errorf("exit code %d, want 2 (stderr %q)", code, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if !strings.HasPrefix(stderr, "shmrun: ") || strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
				t.Errorf("stderr %q, want one line starting with \"shmrun: \"", stderr)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the program was started")
				os.Remove(marker)
			}
			if ents, _ := os.ReadDir(sd); len(ents) > 0 {
				t.Errorf("%d file(s) created in the shm directory", len(ents))
			}
		})
	}
}

// TestRankLimit: one more rank than the control segment holds is a usage
// error (exit 2) that names the limit, for one part and for MPMD parts
// together; nothing is created. (Issue 12: -n 65536 passed the launcher's
// check and failed later, with exit 1, at the control segment.)
func TestRankLimit(t *testing.T) {
	limit := strconv.Itoa(launcher.MaxRanks)
	for _, args := range [][]string{
		{"-n", strconv.Itoa(launcher.MaxRanks + 1), "sh"},
		{"-n", limit, "sh", ":", "-n", "1", "sh"},
		{"-n", "9223372036854775807", "sh", ":", "-n", "9223372036854775807", "sh", ":", "-n", "2", "sh"},
	} {
		sd := shmDir(t)
		code, stdout, stderr := runCLI(t, append([]string{"--shm-dir", sd, "--oversubscribe"}, args...)...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, "at most "+limit+" ranks") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("shmrun %q: exit %d, stdout %q, stderr %q; want exit 2 and one line naming the limit %s", args, code, stdout, stderr, limit)
		}
		if ents, _ := os.ReadDir(sd); len(ents) > 0 {
			t.Errorf("%d file(s) created in the shm directory", len(ents))
		}
	}
}

// TestNotMainPackage: a Go package or file that is not package main is a
// usage error naming the package, not a build of an archive that then fails
// at exec with "permission denied" (issue 12).
func TestNotMainPackage(t *testing.T) {
	dir := t.TempDir()
	pkg := filepath.Join(dir, "lib")
	if err := os.Mkdir(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	src := "package mylib\n\nfunc F() int { return 1 }\n"
	for _, f := range []string{filepath.Join(pkg, "lib.go"), filepath.Join(dir, "single.go")} {
		if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct{ prog, pkg string }{
		{pkg, "mylib"},
		{filepath.Join(dir, "single.go"), "mylib"},
		{filepath.Join("..", "..", "barrier"), "barrier"}, // in this module: go build makes an archive
	} {
		prog := tt.prog
		sd := shmDir(t)
		code, stdout, stderr := runCLI(t, "--shm-dir", sd, "-n", "1", prog)
		want := "program " + prog + ": package " + tt.pkg + " is not a main package"
		if code != 2 || stdout != "" || !strings.Contains(stderr, want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("shmrun -n 1 %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", prog, code, stdout, stderr, want)
		}
		if ents, _ := os.ReadDir(sd); len(ents) > 0 {
			t.Errorf("%d file(s) created in the shm directory", len(ents))
		}
	}
}

func TestHelpAndVersion(t *testing.T) {
	code, stdout, _ := runCLI(t, "--help")
	if code != 0 || !strings.Contains(stdout, "Usage:") || !strings.Contains(stdout, "Examples:") || !strings.Contains(stdout, "--oversubscribe") {
		t.Errorf("--help: exit %d, output:\n%s", code, stdout)
	}
	code, stdout, _ = runCLI(t, "--version")
	if want := fmt.Sprintf("shmrun %s (segment format %d)\n", Version, shm.FormatVersion); code != 0 || stdout != want {
		t.Errorf("--version: exit %d, %q, want %q", code, stdout, want)
	}
}

func TestEnvFlag(t *testing.T) {
	t.Setenv("CLI_TEST_INHERITED", "inherited value")
	args := []string{"--shm-dir", shmDir(t), "--timeout", "60s", "-n", "2", "--oversubscribe",
		"-x", "A=1", "-x", "B=x=y", "-x", "CLI_TEST_INHERITED"}
	code, stdout, stderr := runCLI(t, append(args, body("env", "A", "B", "CLI_TEST_INHERITED")...)...)
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	for r := range 2 {
		for _, want := range []string{"A=1", "B=x=y", "CLI_TEST_INHERITED=inherited value"} {
			if line := fmt.Sprintf("rank %d %s\n", r, want); !strings.Contains(stdout, line) {
				t.Errorf("no %q in output:\n%s", line, stdout)
			}
		}
	}
}

func TestMPMD(t *testing.T) {
	args := []string{"--shm-dir", shmDir(t), "--timeout", "60s", "--oversubscribe", "--tag-output", "-n", "1"}
	args = append(args, body("part", "A")...)
	args = append(args, ":", "-n", "2")
	args = append(args, body("part", "B")...)
	code, stdout, stderr := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	got := strings.Split(strings.TrimSpace(stdout), "\n")
	slices.Sort(got)
	want := []string{"[0] rank 0 of 3 part A", "[1] rank 1 of 3 part B", "[2] rank 2 of 3 part B"}
	if !slices.Equal(got, want) {
		t.Errorf("output %q, want %q", got, want)
	}
}

func TestExitStatus(t *testing.T) {
	tests := []struct {
		script string
		code   int
		says   string
	}{
		{"exit 0", 0, ""},
		{"exit 3", 3, "exited with status 3"},
		{"kill -SEGV $$", 139, "SIGSEGV"},
		{"sleep 60", launcher.TimeoutExitCode, "timed out"},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			code, _, stderr := runCLI(t, "--shm-dir", shmDir(t), "--timeout", "1s", "-n", "2", "--oversubscribe", "sh", "-c", tt.script)
			if code != tt.code || !strings.Contains(stderr, tt.says) {
				t.Errorf("exit %d, stderr %q; want %d saying %q", code, stderr, tt.code, tt.says)
			}
		})
	}
}

func TestBindToCoreFlag(t *testing.T) {
	cpus := launcher.CPUs()
	code, _, stderr := runCLI(t, "--shm-dir", shmDir(t), "--timeout", "60s", "--bind-to", "core", "--report-bindings",
		"-n", strconv.Itoa(len(cpus)), "true")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for r, cpu := range cpus {
		if want := fmt.Sprintf("shmrun: rank %d bound to CPUs %d (", r, cpu); !strings.Contains(stderr, want) {
			t.Errorf("no %q in\n%s", want, stderr)
		}
	}
}

// TestRanksDieWithShmrun: when the shmrun process is SIGKILLed (it can do
// nothing about it) its ranks die too (PR_SET_PDEATHSIG), and the dead job's
// lock file is then removed by --cleanup, which says so.
func TestRanksDieWithShmrun(t *testing.T) {
	const n = 3
	dir := shmDir(t)
	cmd, stderr, pids := startCLI(t, "true", nil,
		append([]string{"--shm-dir", dir, "--timeout", "120s", "-n", strconv.Itoa(n), "--oversubscribe"}, body("hang")...)...)
	fds := waitReady(t, n, pids, stderr)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	waitGone(t, fds)

	// Its launcher is gone, so the job's lock file is garbage now.
	left := ranktest.Objects(t, dir)
	if len(left) != 1 || !strings.HasSuffix(left[0], ".lock") {
		t.Fatalf("the killed job left %q, want its lock file", left)
	}
	job, _, _ := format.SplitName(left[0])
	code, stdout, errOut := runCLI(t, "--cleanup", "--shm-dir", dir)
	if code != 0 || stdout != "skipped job "+job+" (1 object(s)): "+launcher.SkipStarting+"\n"+
		"shmrun: removed 0 object(s) of finished jobs from "+dir+"; skipped 1 job(s)\n" {
		t.Errorf("--cleanup right after the job died (its lock file may be a job starting): exit %d, stdout %q, stderr %q", code, stdout, errOut)
	}
	then := time.Now().Add(-2 * launcher.LockSettle)
	if err := os.Chtimes(filepath.Join(dir, left[0]), then, then); err != nil {
		t.Fatal(err)
	}
	code, stdout, errOut = runCLI(t, "--cleanup", "--shm-dir", dir)
	if code != 0 || !strings.Contains(stdout, "removed "+left[0]+"\n") || !strings.Contains(stdout, "removed 1 object(s)") {
		t.Errorf("--cleanup: exit %d, stdout %q, stderr %q", code, stdout, errOut)
	}
}

func TestCleanupFlag(t *testing.T) {
	dir := shmDir(t)
	code, stdout, stderr := runCLI(t, "--cleanup", "--shm-dir", dir)
	if code != 0 || stdout != "shmrun: removed 0 object(s) of finished jobs from "+dir+"; skipped 0 job(s)\n" {
		t.Errorf("--cleanup of an empty dir: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, _, stderr = runCLI(t, "--cleanup", "--shm-dir", filepath.Join(dir, "nope"))
	if code == 0 || !strings.HasPrefix(stderr, "shmrun: ") {
		t.Errorf("--cleanup of a missing dir: exit %d, stderr %q", code, stderr)
	}
}

// startCLI starts the test binary as a real shmrun process with args (and
// extra environment), and returns it with a channel of the pids that its
// ranks report in "ready <pid>" lines.
func startCLI(t *testing.T, shell string, env []string, args ...string) (*exec.Cmd, *bytes.Buffer, <-chan int) {
	t.Helper()
	cmd := exec.Command("sh", append([]string{"-c", shell + `; exec "$0" "$@"`, ranktest.Program()}, args...)...)
	cmd.Env = append(append(os.Environ(), envAsCLI+"=1"), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pids := make(chan int, 16)
	go func() {
		defer close(pids)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if s, ok := strings.CutPrefix(sc.Text(), "ready "); ok {
				pid, _ := strconv.Atoi(s)
				pids <- pid
			}
		}
	}()
	return cmd, &stderr, pids
}

// waitReady waits for n ready ranks and returns a pidfd of each (closed,
// after a SIGKILL to survivors, when the test ends).
func waitReady(t *testing.T, n int, pids <-chan int, stderr *bytes.Buffer) []int {
	t.Helper()
	var fds []int
	t.Cleanup(func() {
		for _, fd := range fds {
			_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
			unix.Close(fd)
		}
	})
	timeout := time.After(90 * time.Second)
	for len(fds) < n {
		select {
		case pid, ok := <-pids:
			if !ok {
				t.Fatalf("shmrun's output ended with %d of %d ranks ready; stderr:\n%s", len(fds), n, stderr.String())
			}
			fd, err := unix.PidfdOpen(pid, 0)
			if err != nil {
				t.Fatalf("pidfd_open(%d): %v", pid, err)
			}
			fds = append(fds, fd)
		case <-timeout:
			t.Fatalf("only %d of %d ranks became ready; stderr:\n%s", len(fds), n, stderr.String())
		}
	}
	return fds
}

// waitGone waits until every rank whose pidfd is in fds has exited: a
// pidfd becomes readable then. It fails the test if one outlives 30 s.
func waitGone(t *testing.T, fds []int) {
	t.Helper()
	for _, fd := range fds {
		set := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(set, 30_000)
			if err == unix.EINTR {
				continue
			}
			if err != nil || n != 1 {
				t.Fatalf("a rank outlived its SIGKILLed shmrun by 30s (poll: %d, %v)", n, err)
			}
			break
		}
	}
}

// TestLockFileModeUnderUmask: under umask 0277 the job's lock file is
// still mode 0600 (it was 0400, which --cleanup could not open for writing
// and so skipped silently for good).
func TestLockFileModeUnderUmask(t *testing.T) {
	dir := shmDir(t)
	cmd, stderr, pids := startCLI(t, "umask 0277", nil,
		append([]string{"--shm-dir", dir, "--timeout", "120s", "-n", "2", "--oversubscribe"}, body("hang")...)...)
	waitReady(t, 2, pids, stderr)
	left := ranktest.Objects(t, dir)
	if len(left) != 1 || !strings.HasSuffix(left[0], ".lock") {
		t.Fatalf("a running job has %q in its shm directory, want its lock file", left)
	}
	st, err := os.Stat(filepath.Join(dir, left[0]))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("lock file mode %v under umask 0277, want 0600", st.Mode().Perm())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); cmd.ProcessState.ExitCode() != 128+int(syscall.SIGTERM) {
		t.Errorf("after SIGTERM shmrun exited %v, stderr:\n%s", err, stderr.String())
	}
	// shmDir's cleanup checks that nothing is left.
}

// TestSIGQUIT: SIGQUIT ends the job like the other signals, exit 128+3,
// and leaves nothing in the shm directory (it was the Go runtime's goroutine
// dump and exit 2, the usage-error code, with the lock file left behind).
func TestSIGQUIT(t *testing.T) {
	dir := shmDir(t)
	cmd, stderr, pids := startCLI(t, "true", nil,
		append([]string{"--shm-dir", dir, "--timeout", "120s", "-n", "2", "--oversubscribe"}, body("hang")...)...)
	waitReady(t, 2, pids, stderr)
	if err := cmd.Process.Signal(syscall.SIGQUIT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 128+int(syscall.SIGQUIT) || !strings.Contains(stderr.String(), "received SIGQUIT") {
		t.Errorf("after SIGQUIT shmrun exited %d (%v), stderr:\n%s\nwant %d naming SIGQUIT", code, err, stderr.String(), 128+int(syscall.SIGQUIT))
	}
	// shmDir's cleanup checks that nothing is left.
}

// TestIgnoredSignalStaysIgnored: a shmrun started with SIGHUP ignored
// (nohup) keeps it ignored, and so do its ranks; it used to catch it and
// end the job.
func TestIgnoredSignalStaysIgnored(t *testing.T) {
	dir := shmDir(t)
	cmd, stderr, pids := startCLI(t, `trap "" HUP`, nil,
		append([]string{"--shm-dir", dir, "--timeout", "120s", "-n", "2", "--oversubscribe"}, body("hang")...)...)
	ranks := waitReady(t, 2, pids, stderr)
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for _, fd := range ranks {
		_ = unix.PidfdSendSignal(fd, unix.SIGHUP, nil, 0)
	}
	time.Sleep(300 * time.Millisecond)
	// (stderr is read only once shmrun has exited: its copier writes it.)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("shmrun started with SIGHUP ignored ended on one: %v", err)
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 128+int(syscall.SIGTERM) || strings.Contains(stderr.String(), "SIGHUP") {
		t.Errorf("exit %d, stderr:\n%s\nwant %d, no rank killed by SIGHUP", code, stderr.String(), 128+int(syscall.SIGTERM))
	}
}

// TestSuspendAndContinue: ^Z (SIGTSTP to shmrun, the terminal's
// foreground process group) stops the ranks, which are a group of their
// own, and shmrun; SIGCONT (fg) continues them all (the ranks kept
// running over the shell's prompt).
func TestSuspendAndContinue(t *testing.T) {
	dir := shmDir(t)
	cmd, stderr, pids := startCLI(t, "true", nil,
		append([]string{"--shm-dir", dir, "--timeout", "120s", "-n", "2", "--oversubscribe"}, body("hang")...)...)
	fds := waitReady(t, 2, pids, stderr)
	ranks := make([]int, len(fds))
	for i, fd := range fds {
		ranks[i] = pidOfFd(t, fd)
	}
	shmrun := cmd.Process.Pid
	waitState := func(pid int, stopped bool) {
		t.Helper()
		for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(10 * time.Millisecond) {
			if (procState(pid) == 'T') == stopped {
				return
			}
		}
		t.Fatalf("pid %d (shmrun %d, ranks %v): state %c, want stopped %v; stderr:\n%s", pid, shmrun, ranks, procState(pid), stopped, stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGTSTP); err != nil {
		t.Fatal(err)
	}
	for _, pid := range append([]int{shmrun}, ranks...) {
		waitState(pid, true)
	}
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	for _, pid := range append([]int{shmrun}, ranks...) {
		waitState(pid, false)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit %d after SIGTERM, stderr:\n%s", code, stderr.String())
	}
}

// pidOfFd is the pid a pidfd refers to (its fdinfo's Pid line).
func pidOfFd(t *testing.T, fd int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", fd))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Pid:"); ok {
			pid, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
	}
	t.Fatalf("pidfd %d: no Pid in its fdinfo", fd)
	return 0
}

// procState is the state letter of process pid (/proc/pid/stat), or 0.
func procState(pid int) byte {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
		return b[i+2]
	}
	return 0
}

// TestDeadlockAfterZeroDuration: --deadlock-after 0s turns the watch off
// as 0 does (it was refused).
func TestDeadlockAfterZeroDuration(t *testing.T) {
	code, _, stderr := runCLI(t, "--shm-dir", shmDir(t), "--deadlock-after", "0s", "-n", "1", "true")
	if code != 0 {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestBuildDirOfKilledJob: when shmrun is SIGKILLed, the directory it
// built a Go program in stays (nothing can remove it then), but it belongs
// to the job: --cleanup removes it with the job's objects once the job's
// lock is free, and says so (issue 12: it stayed in $TMPDIR for good).
func TestBuildDirOfKilledJob(t *testing.T) {
	dir := shmDir(t)
	tmp := t.TempDir()
	cmd, stderr, pids := startCLI(t, "true", []string{"TMPDIR=" + tmp},
		"--shm-dir", dir, "--timeout", "120s", "-n", "2", "--oversubscribe", "testdata/gosleep")
	lock := killWhenReady(t, dir, cmd, stderr, pids)
	ents, err := os.ReadDir(tmp)
	if err != nil || len(ents) != 1 {
		t.Fatalf("$TMPDIR holds %v (%v), want the killed job's build directory", ents, err)
	}
	build := filepath.Join(tmp, ents[0].Name())
	code, stdout, errOut := runCLI(t, "--cleanup", "--shm-dir", dir)
	if code != 0 || !strings.Contains(stdout, "removed "+build+"\n") || !strings.Contains(stdout, "removed "+lock+"\n") {
		t.Errorf("--cleanup: exit %d, stdout %q, stderr %q; want it to remove %s and %s", code, stdout, errOut, build, lock)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("left in $TMPDIR after --cleanup: %v", ents)
	}
}

// TestBrokenPipe: when whoever reads shmrun's output goes away (shmrun ...
// | head), the launcher's next write gets SIGPIPE. It must end the job as
// for any other signal, exit 128+13, and leave nothing behind; left to the
// Go runtime, SIGPIPE killed the launcher and left its lock file.
func TestBrokenPipe(t *testing.T) {
	if _, err := exec.LookPath("yes"); err != nil {
		t.Skip("no yes(1) here")
	}
	dir := shmDir(t)
	cmd := exec.Command(ranktest.Program(), "--shm-dir", dir, "--timeout", "60s", "--tag-output", "-n", "1", "yes")
	cmd.Env = append(os.Environ(), envAsCLI+"=1")
	cmd.WaitDelay = time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "[0] y") {
		t.Fatalf("first line %q, %v", line, err)
	}
	out.Close()
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 128+int(syscall.SIGPIPE) {
		t.Errorf("shmrun exited %d (%v) after its reader went away; want %d", code, cmd.ProcessState, 128+int(syscall.SIGPIPE))
	}
	// shmDir's cleanup checks that nothing is left.
}

// openPTY returns the two ends of a new pseudo-terminal, or skips the test.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("ptsname: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("opening the pty's slave: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// TestStdinFromTerminal: run from an interactive shell, shmrun's stdin is
// its controlling terminal and shmrun is in the terminal's foreground
// process group, but its ranks are in a process group of their own. Rank
// 0 read the terminal directly, so its first read stopped it by SIGTTIN
// and the job hung for good (no rank had reached Init for the deadlock
// watch to see). Rank 0 must get what is typed.
func TestStdinFromTerminal(t *testing.T) {
	dir := shmDir(t)
	master, slave := openPTY(t)
	cmd := exec.Command(ranktest.Program(), "--shm-dir", dir, "--timeout", "15s", "-n", "1",
		"sh", "-c", `read line; echo "rank 0 read: $line"`)
	cmd.Env = append(os.Environ(), envAsCLI+"=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, &stdout, &stderr
	// A session of its own with the pty as its controlling terminal: shmrun
	// is then in the terminal's foreground process group, as under a shell.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, master) // the terminal's echo
	if _, err := master.WriteString("hello\n"); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 0 || stdout.String() != "rank 0 read: hello\n" {
		t.Errorf("shmrun on a terminal: exit %d (%v), stdout %q, stderr:\n%s\nwant exit 0 and rank 0 reading the line typed", code, err, stdout.String(), stderr.String())
	}
}

// TestTerminalTostop: with stty tostop, a write to the terminal from a
// background process group stops the writer (SIGTTOU), and the ranks are
// a process group of their own: their first line stopped them for good.
// They inherit SIGTTOU ignored from shmrun, so their writes go through.
func TestTerminalTostop(t *testing.T) {
	dir := shmDir(t)
	master, slave := openPTY(t)
	tio, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	if err != nil {
		t.Skipf("tcgetattr: %v", err)
	}
	tio.Lflag |= unix.TOSTOP
	if err := unix.IoctlSetTermios(int(slave.Fd()), unix.TCSETS, tio); err != nil {
		t.Skipf("tcsetattr: %v", err)
	}
	cmd := exec.Command(ranktest.Program(), "--shm-dir", dir, "--timeout", "10s", "-n", "2", "--oversubscribe",
		"sh", "-c", `echo rank output`)
	cmd.Env = append(os.Environ(), envAsCLI+"=1")
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	cmd.WaitDelay = time.Second
	var out bytes.Buffer
	done := make(chan struct{})
	go func() { io.Copy(&out, master); close(done) }()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	slave.Close()
	master.SetReadDeadline(time.Now().Add(time.Second))
	<-done
	if code := cmd.ProcessState.ExitCode(); code != 0 || strings.Count(out.String(), "rank output") != 2 {
		t.Errorf("shmrun on a terminal with tostop: exit %d (%v), terminal %q, stderr:\n%s\nwant exit 0 and both ranks' lines", code, err, out.String(), stderr.String())
	}
}

// TestObserverDirsOfKilledJob: the directories into which the ranks write
// their --stats, --trace and --check records are the job's, like its
// build directory: when shmrun is SIGKILLed, --cleanup must remove them
// once the job's lock is free. They stayed in $TMPDIR for good, since no
// lock file named them.
func TestObserverDirsOfKilledJob(t *testing.T) {
	dir := shmDir(t)
	tmp := t.TempDir()
	cmd, stderr, pids := startCLI(t, "true", []string{"TMPDIR=" + tmp},
		append([]string{"--shm-dir", dir, "--timeout", "120s", "-n", "2", "--oversubscribe", "--stats", "--trace", filepath.Join(t.TempDir(), "trace.json"), "--check"}, body("hang")...)...)
	killWhenReady(t, dir, cmd, stderr, pids)
	if code, stdout, errOut := runCLI(t, "--cleanup", "--shm-dir", dir); code != 0 {
		t.Errorf("--cleanup: exit %d, stdout %q, stderr %q", code, stdout, errOut)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("left in $TMPDIR after --cleanup of the killed job: %q", names)
	}
}

// killWhenReady SIGKILLs shmrun once its 2 ranks are ready and gone with
// it, checks that the job left its lock file alone in dir, and ages that
// file past launcher.LockSettle, so that --cleanup takes the job as dead;
// it returns the lock file's name.
func killWhenReady(t *testing.T, dir string, cmd *exec.Cmd, stderr *bytes.Buffer, pids <-chan int) string {
	t.Helper()
	fds := waitReady(t, 2, pids, stderr)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	waitGone(t, fds)
	left := ranktest.Objects(t, dir)
	if len(left) != 1 || !strings.HasSuffix(left[0], ".lock") {
		t.Fatalf("the killed job left %q, want its lock file", left)
	}
	then := time.Now().Add(-2 * launcher.LockSettle)
	if err := os.Chtimes(filepath.Join(dir, left[0]), then, then); err != nil {
		t.Fatal(err)
	}
	return left[0]
}
