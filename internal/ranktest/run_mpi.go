//go:build mpi

package ranktest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shmrun/shmrun/internal/mpi"
)

// EnvLauncher replaces the MPI's own launcher command under the MPI
// backend with a hydra (MPICH) command line, split at spaces, to which
// Run appends "-n N" and a "-genv NAME VALUE" for each variable, e.g.
// "mpiexec.mpich -launcher ssh -launcher-exec /path/to/fake-ssh -hosts
// nodeA:2,nodeB:2" for two pseudo-nodes.
const EnvLauncher = "SHMRUN_TEST_MPIEXEC"

// Result is how a job started by Run ended under the MPI backend: the
// launcher's exit code and everything the job printed.
type Result struct {
	ExitCode       int
	Stdout, Stderr string
}

// Lines returns the job's standard output split into lines.
func (r Result) Lines() []string {
	s := strings.TrimSuffix(r.Stdout, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

type options struct{ common }

// Run starts the test binary as n ranks of a job of the linked MPI (its
// launcher, or EnvLauncher's command), running the body registered as
// body, and returns how the job ended. It fails the test as the shmrun
// backend's Run does.
func Run(t testing.TB, n int, body string, opts ...Option) Result {
	t.Helper()
	o := optionsOf(t, opts)
	env := append([]string{EnvBody + "=" + body, raceOptions()}, o.env...)
	argv := mpi.Launcher(n, env)
	if l := os.Getenv(EnvLauncher); l != "" {
		argv = append(strings.Fields(l), "-n", strconv.Itoa(n))
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			argv = append(argv, "-genv", k, v)
		}
	}
	argv = append(argv, Program())
	argv = append(argv, o.args...)
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Env = append(cmd.Env, "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	// Each job's launcher gets a temporary directory of its own: Open MPI
	// 4.1's mpirun makes its session directory under TMPDIR, and two
	// started at once (go test runs packages in parallel) can race on
	// creating the same one ("mkdir ... /tmp/ompi.<host>.<uid>: File
	// exists", orte_init failed). A short path: the directory holds
	// Unix sockets, whose paths are limited to 108 bytes.
	if dir, err := os.MkdirTemp("", "rt"); err == nil {
		defer os.RemoveAll(dir)
		cmd.Env = append(cmd.Env, "TMPDIR="+dir)
	}
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
	case err != nil:
		t.Fatalf("ranktest: launching %d rank(s) of %s with %v: %v\nstderr:\n%s", n, body, argv, err, tail(res.Stderr))
	}
	if ctx.Err() != nil {
		t.Fatalf("ranktest: job %s of %d rank(s) timed out after %v\nstdout:\n%s\nstderr:\n%s", body, n, o.timeout, tail(res.Stdout), tail(res.Stderr))
	}
	if !o.anyExit && res.ExitCode != o.exitCode {
		t.Fatalf("ranktest: job %s of %d rank(s) exited %d, want %d\nstdout:\n%s\nstderr:\n%s",
			body, n, res.ExitCode, o.exitCode, tail(res.Stdout), tail(res.Stderr))
	}
	return res
}
