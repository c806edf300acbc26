//go:build !mpi && cgo

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The C library end to end: installed by cmd/shmrun-install into a
// temporary directory once per test binary, C programs built with its
// shmcc and run under its shmrun, their output held against golden files
// (and against Open MPI's output for the same source, where it is
// installed).

var inst struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if inst.dir != "" {
		os.RemoveAll(inst.dir)
	}
	os.Exit(code)
}

// install returns the installation's directory, making it on first use.
func install(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler (cc): the C interface is not built")
	}
	inst.once.Do(func() {
		if inst.dir, inst.err = os.MkdirTemp("", "shmrun-capi-test-"); inst.err != nil {
			return
		}
		cmd := exec.Command("go", "run", "./cmd/shmrun-install", inst.dir)
		cmd.Dir = ".."
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			inst.err = &installError{err, out.String()}
		}
	})
	if inst.err != nil {
		t.Fatalf("installing: %v", inst.err)
	}
	return inst.dir
}

type installError struct {
	err error
	out string
}

func (e *installError) Error() string { return e.err.Error() + "\n" + e.out }

var (
	ranksRE  = regexp.MustCompile(`(?m)^/\* ranks: (\d+)`)
	cflagsRE = regexp.MustCompile(`(?m)^ \* cflags: (.*)$`)
	oscRE    = regexp.MustCompile(`(?m)^ \* openmpi osc: (\w+)$`)
)

// openMPIOsc is the one-sided component a program runs with under Open
// MPI: sm unless a " * openmpi osc: NAME" line says otherwise (Open MPI
// 4.1's sm has no dynamic windows, its default rdma crashes in
// MPI_Compare_and_swap over btl/vader here).
func openMPIOsc(t *testing.T, name string) string {
	src, err := os.ReadFile(filepath.Join("testdata", "c", name+".c"))
	if err != nil {
		t.Fatal(err)
	}
	if m := oscRE.FindSubmatch(src); m != nil {
		return string(m[1])
	}
	return "sm"
}

// cflags is a program's extra compiler flags (a " * cflags: ..." line).
func cflags(t *testing.T, name string) []string {
	src, err := os.ReadFile(filepath.Join("testdata", "c", name+".c"))
	if err != nil {
		t.Fatal(err)
	}
	if m := cflagsRE.FindSubmatch(src); m != nil {
		return strings.Fields(string(m[1]))
	}
	return nil
}

// programs are testdata/c's programs with their rank counts (mixed.c has
// its own test).
func programs(t *testing.T) map[string]int {
	files, err := filepath.Glob("testdata/c/*.c")
	if err != nil || len(files) == 0 {
		t.Fatalf("no C test programs: %v", err)
	}
	out := map[string]int{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".c")
		if name == "mixed" {
			continue
		}
		m := ranksRE.FindSubmatch(src)
		if m == nil {
			t.Fatalf("%s: no /* ranks: N */ line", f)
		}
		n, _ := strconv.Atoi(string(m[1]))
		out[name] = n
	}
	return out
}

// build compiles testdata/c/NAME.c with cc (a wrapper) into dir; libs
// come after the source.
func build(t *testing.T, cc []string, name, dir string, libs ...string) string {
	t.Helper()
	exe := filepath.Join(dir, name)
	args := append(append(cc[1:], cflags(t, name)...), "-O2", "-Wall", "-Wextra", "-Werror", "-o", exe, filepath.Join("testdata", "c", name+".c"))
	args = append(args, libs...)
	if out, err := exec.Command(cc[0], args...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cc, " "), err, out)
	}
	return exe
}

// shmccBuild writes the C program prog to src and builds it to exe with
// the installed shmcc (in dir) and flags.
func shmccBuild(t *testing.T, dir, src, exe, prog string, flags ...string) {
	t.Helper()
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(append(flags, "-o", exe), src)
	if out, err := exec.Command(filepath.Join(dir, "bin", "shmcc"), args...).CombinedOutput(); err != nil {
		t.Fatalf("shmcc: %v\n%s", err, out)
	}
}

// run runs a job and returns its standard output, failing on a non-zero
// exit.
func run(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v after %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, time.Since(start), stdout.String(), stderr.String())
	}
	return stdout.String()
}

func golden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "c", name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCPrograms runs each C test program under shmrun.
func TestCPrograms(t *testing.T) {
	dir := install(t)
	shmcc, shmrun := filepath.Join(dir, "bin", "shmcc"), filepath.Join(dir, "bin", "shmrun")
	tmp := t.TempDir()
	for name, n := range programs(t) {
		t.Run(name, func(t *testing.T) {
			exe := build(t, []string{shmcc}, name, tmp)
			got := run(t, nil, shmrun, "-n", strconv.Itoa(n), "--oversubscribe", "--timeout", "120s", exe)
			if want := golden(t, name); got != want {
				t.Errorf("%s under shmrun printed\n%s\nwant\n%s", name, got, want)
			}
		})
	}
}

// TestCProgramsOpenMPI builds the same sources against Open MPI and checks
// they print the same (where Open MPI is installed: CI installs it).
func TestCProgramsOpenMPI(t *testing.T) {
	if _, err := exec.LookPath("mpicc.openmpi"); err != nil {
		t.Skip("Open MPI (mpicc.openmpi) not installed")
	}
	tmp := t.TempDir()
	env := []string{"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_rmaps_base_oversubscribe=1"}
	for name, n := range programs(t) {
		t.Run(name, func(t *testing.T) {
			exe := build(t, []string{"mpicc.openmpi"}, name, tmp)
			got := run(t, env, "timeout", "120", "mpirun.openmpi", "--mca", "osc", openMPIOsc(t, name), "-n", strconv.Itoa(n), exe)
			if want := golden(t, name); got != want {
				t.Errorf("%s under Open MPI printed\n%s\nwant\n%s", name, got, want)
			}
		})
	}
}

// TestCProgramsStubsHeader builds the programs against the MPI Forum's
// published ABI header (testdata/abi-stubs/mpi.h, from
// mpi-forum/mpi-abi-stubs) instead of ours, links them with this library as
// any ABI library would be linked, and runs them under shmrun: a binary
// built for the standard ABI elsewhere runs here.
func TestCProgramsStubsHeader(t *testing.T) {
	dir := install(t)
	lib := filepath.Join(dir, "lib")
	cc := []string{"cc", "-std=c11", "-I", filepath.Join("testdata", "abi-stubs"), "-L", lib, "-Wl,-rpath," + lib}
	tmp := t.TempDir()
	for name, n := range programs(t) {
		t.Run(name, func(t *testing.T) {
			exe := build(t, cc, name, tmp, "-lmpi_abi")
			if out, err := exec.Command("sh", "-c", `ldd "$1" | grep -q libmpi_abi`, "sh", exe).CombinedOutput(); err != nil {
				t.Fatalf("%s does not link libmpi_abi: %v\n%s", exe, err, out)
			}
			got := run(t, nil, filepath.Join(dir, "bin", "shmrun"), "-n", strconv.Itoa(n), "--oversubscribe", "--timeout", "120s", exe)
			if want := golden(t, name); got != want {
				t.Errorf("%s built against mpi-abi-stubs' mpi.h printed\n%s\nwant\n%s", name, got, want)
			}
		})
	}
}

// TestMixedJob runs Go and C ranks in one world, in both orders.
func TestMixedJob(t *testing.T) {
	dir := install(t)
	tmp := t.TempDir()
	cexe := build(t, []string{filepath.Join(dir, "bin", "shmcc")}, "mixed", tmp)
	goexe := filepath.Join(tmp, "mixgo")
	cmd := exec.Command("go", "build", "-o", goexe, "./testdata/mixgo")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	shmrun := filepath.Join(dir, "bin", "shmrun")
	want := golden(t, "mixed")
	// The ranks share the cores, so their wait policy is the
	// oversubscribed one, under which C's rooted calls and scans take the
	// Go path (mpi_fast.h's shmrun_partial_dear); with a long spin they
	// run in C, beside the Go ranks' run-ahead.
	for _, env := range [][]string{nil, {"SHMRUN_WAIT=spin=10000,yield=1ms,sleep=50ms"}} {
		for _, order := range [][2]string{{goexe, cexe}, {cexe, goexe}} {
			got := run(t, env, shmrun, "--oversubscribe", "--timeout", "120s", "-n", "2", order[0], ":", "-n", "2", order[1])
			if got != want {
				t.Errorf("%s first, %v: printed\n%s\nwant\n%s", filepath.Base(order[0]), env, got, want)
			}
		}
	}
}

// TestCAppNum: MPI_APPNUM is the number of the rank's program on
// shmrun's command line (MPI 4.1 §12.10.3): in an MPMD job of two C
// programs, 0 for the first part's ranks and 1 for the second's; in a job
// of one program, 0; a singleton has none. MPI_INFO_ENV's command is each
// program's own.
func TestCAppNum(t *testing.T) {
	dir := install(t)
	tmp := t.TempDir()
	prog := `#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
	int rank, *app = NULL, flag = -1, len = 0, cflag = 0;
	char cmd[MPI_MAX_INFO_VAL] = "";
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &app, &flag);
	len = sizeof cmd;
	MPI_Info_get_string(MPI_INFO_ENV, "command", &len, cmd, &cflag);
	if (flag)
		printf("rank %d: %s appnum %d\n", rank, cmd, *app);
	else
		printf("rank %d: %s no appnum\n", rank, cmd);
	MPI_Finalize();
	return 0;
}
`
	a, b := filepath.Join(tmp, "appa"), filepath.Join(tmp, "appb")
	shmccBuild(t, dir, filepath.Join(tmp, "app.c"), a, prog, "-O2")
	shmccBuild(t, dir, filepath.Join(tmp, "app.c"), b, prog, "-O2")
	shmrun := filepath.Join(dir, "bin", "shmrun")
	lines := func(out string) []string {
		l := strings.Split(strings.TrimSpace(out), "\n")
		slices.Sort(l)
		return l
	}
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"MPMD", []string{"-n", "2", a, ":", "-n", "1", b},
			[]string{"rank 0: " + a + " appnum 0", "rank 1: " + a + " appnum 0", "rank 2: " + b + " appnum 1"}},
		{"three parts", []string{"-n", "1", b, ":", "-n", "1", a, ":", "-n", "1", a},
			[]string{"rank 0: " + b + " appnum 0", "rank 1: " + a + " appnum 1", "rank 2: " + a + " appnum 2"}},
		{"one program", []string{"-n", "2", a}, []string{"rank 0: " + a + " appnum 0", "rank 1: " + a + " appnum 0"}},
	} {
		args := append([]string{shmrun, "--oversubscribe", "--timeout", "60s"}, c.args...)
		if got := lines(run(t, nil, args...)); !slices.Equal(got, c.want) {
			t.Errorf("%s: ranks printed\n%s\nwant\n%s", c.name, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
		}
	}
	if got := lines(run(t, nil, a)); !slices.Equal(got, []string{"rank 0: " + a + " no appnum"}) {
		t.Errorf("a singleton printed %q, want no MPI_APPNUM", got)
	}
}

// TestCInfoEnvBeforeInit: MPI_INFO_ENV is the execution environment MPI
// initialization records (MPI 4.1 §12.2.1: "after MPI is initialized, the
// application can access [it]"); before MPI_Init it is no info object yet,
// though the info calls themselves may be made then (§12.4.1): a call on
// it is an error of the initial handler (MPI_ERRORS_ARE_FATAL), class
// MPI_ERR_INFO, naming MPI_Info_create_env as the call that gives those
// keys before MPI_Init. The info calls on an info object the program made
// work before MPI_Init.
func TestCInfoEnvBeforeInit(t *testing.T) {
	dir := install(t)
	tmp := t.TempDir()
	for _, c := range []struct{ name, call string }{
		{"get_string", "len = sizeof v; MPI_Info_get_string(MPI_INFO_ENV, \"command\", &len, v, &flag);"},
		{"get_nkeys", "MPI_Info_get_nkeys(MPI_INFO_ENV, &n);"},
		{"dup", "MPI_Info d; MPI_Info_dup(MPI_INFO_ENV, &d);"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src, exe := filepath.Join(tmp, c.name+".c"), filepath.Join(tmp, c.name)
			prog := `#include <mpi.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
	char v[64] = "";
	int flag = 0, n = 0;
	MPI_Info info;
	/* The info calls work before MPI_Init on an object the program made. */
	MPI_Info_create(&info);
	MPI_Info_set(info, "k", "v");
	MPI_Info_get_nkeys(info, &n);
	int len = sizeof v;
	MPI_Info_get_string(info, "k", &len, v, &flag);
	if (n != 1 || !flag || strcmp(v, "v") != 0) {
		printf("info calls before MPI_Init: %d keys, flag %d, %s\n", n, flag, v);
		return 3;
	}
	MPI_Info_free(&info);
	` + c.call + `
	printf("the call on MPI_INFO_ENV before MPI_Init returned\n");
	MPI_Init(&argc, &argv);
	MPI_Finalize();
	return 0;
}
`
			shmccBuild(t, dir, src, exe, prog, "-O2")
			out, err := exec.Command(filepath.Join(dir, "bin", "shmrun"), "-n", "1", "--timeout", "60s", exe).CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 34 || !regexp.MustCompile(`MPI_Info_\w+: MPI_INFO_ENV before MPI_Init.*MPI_Info_create_env`).Match(out) {
				t.Fatalf("shmrun exited %v, want status 34 (MPI_ERR_INFO) naming MPI_INFO_ENV before MPI_Init\n%s", err, out)
			}
		})
	}
}

// TestCRankCrash: a C rank that dies of a signal ends the job like a Go
// rank: shmrun exits with 128+signal, and the other ranks are ended, not
// left hanging: waiting in a barrier (which C arrives at, Go sleeps in),
// or for an exclusive lock the dead rank took in C and holds.
func TestCRankCrash(t *testing.T) {
	dir := install(t)
	tmp := t.TempDir()
	for _, c := range []struct{ name, body string }{
		{"barrier", `
	if (rank == 1)
		raise(SIGSEGV);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);`},
		{"lock-holder", `
	MPI_Win w;
	char *base;
	MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD); /* the second one runs in C */
	if (rank == 1) {
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w);
		MPI_Barrier(MPI_COMM_WORLD);
		raise(SIGSEGV);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w); /* rank 1 holds it */
	MPI_Win_unlock(0, w);`},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := filepath.Join(tmp, c.name+".c")
			prog := "#include <mpi.h>\n#include <signal.h>\nint main(int argc, char **argv) {\n\tint rank;\n" +
				"\tMPI_Init(&argc, &argv);\n\tMPI_Comm_rank(MPI_COMM_WORLD, &rank);" + c.body + "\n\tMPI_Finalize();\n\treturn 0;\n}\n"
			exe := filepath.Join(tmp, c.name)
			shmccBuild(t, dir, src, exe, prog, "-g")
			start := time.Now()
			cmd := exec.Command(filepath.Join(dir, "bin", "shmrun"), "-n", "3", "--oversubscribe", "--timeout", "60s", exe)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 128+11 {
				t.Fatalf("shmrun exited %v after %v, want status %d (SIGSEGV)\n%s", err, time.Since(start), 128+11, out)
			}
			if took := time.Since(start); took > 30*time.Second {
				t.Errorf("the job took %v to end", took)
			}
		})
	}
}

// TestCWinAfterFinalize: RMA calls on a window the program did not free,
// made after MPI_Finalize, are an error like every other call then, not
// calls the C fast paths complete as if MPI were still initialized.
func TestCWinAfterFinalize(t *testing.T) {
	dir := install(t)
	tmp := t.TempDir()
	src, exe := filepath.Join(tmp, "winfin.c"), filepath.Join(tmp, "winfin")
	prog := `#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
	MPI_Win w;
	int *base;
	MPI_Init(&argc, &argv);
	MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w);
	MPI_Win_lock_all(0, w);
	MPI_Win_unlock_all(w);
	MPI_Finalize();
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w);
	printf("MPI_Win_lock returned after MPI_Finalize\n");
	return 0;
}
`
	shmccBuild(t, dir, src, exe, prog, "-O2")
	wantFailure(t, dir, exe, 16, "MPI_Win_lock: called after MPI_Finalize") // MPI_ERR_OTHER
}

// wantFailure runs exe as a job of one rank under the installed shmrun
// in dir and fails the test unless the job ends with exit status code and
// its output says want.
func wantFailure(t *testing.T, dir, exe string, code int, want string) {
	t.Helper()
	out, err := exec.Command(filepath.Join(dir, "bin", "shmrun"), "-n", "1", "--timeout", "60s", exe).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != code || !strings.Contains(string(out), want) {
		t.Fatalf("shmrun exited %v, want status %d and %q in the output\n%s", err, code, want, out)
	}
}

// TestCInitThreadNullProvided: a NULL provided is an error of
// MPI_Init_thread before there is any MPI to return it through: the
// default handler's, which ends the job with MPI_ERR_ARG naming it.
func TestCInitThreadNullProvided(t *testing.T) {
	dir := install(t)
	tmp := t.TempDir()
	src, exe := filepath.Join(tmp, "initnull.c"), filepath.Join(tmp, "initnull")
	prog := `#include <mpi.h>
#include <stdio.h>
int main(void) {
	MPI_Init_thread(NULL, NULL, MPI_THREAD_SINGLE, NULL);
	printf("MPI_Init_thread returned\n");
	return 0;
}
`
	shmccBuild(t, dir, src, exe, prog, "-O2")
	wantFailure(t, dir, exe, 13, "MPI_Init_thread: provided is NULL") // MPI_ERR_ARG
}

// TestCStats runs a C program under shmrun --stats-json: calls that run in
// C otherwise (the RMA calls, Lock, Barrier, a small Allreduce) take the Go
// paths of an observed job and are all counted.
func TestCStats(t *testing.T) {
	dir := install(t)
	tmp := t.TempDir()
	src, exe, stats := filepath.Join(tmp, "stats.c"), filepath.Join(tmp, "stats"), filepath.Join(tmp, "stats.json")
	prog := `#include <mpi.h>
int main(int argc, char **argv) {
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Win w;
	long *base, v = 1, r = 0;
	MPI_Win_allocate_shared(8 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w);
	for (int i = 0; i < 3; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock_all(0, w);
	for (int i = 0; i < 12; i++) {
		MPI_Put(&v, 1, MPI_LONG, (rank + 1) % size, 0, 1, MPI_LONG, w);
		MPI_Win_flush((rank + 1) % size, w);
	}
	MPI_Fetch_and_op(&v, &r, MPI_LONG, 0, 1, MPI_SUM, w);
	MPI_Win_unlock_all(w);
	for (int i = 0; i < 5; i++) {
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w);
		MPI_Get(&r, 1, MPI_LONG, 0, 1, 1, MPI_LONG, w);
		MPI_Win_unlock(0, w);
	}
	for (int i = 0; i < 2; i++)
		MPI_Allreduce(&v, &r, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	MPI_Win_free(&w);
	MPI_Finalize();
	return 0;
}
`
	shmccBuild(t, dir, src, exe, prog, "-O2")
	run(t, nil, filepath.Join(dir, "bin", "shmrun"), "-n", "2", "--oversubscribe", "--stats-json", stats, exe)
	b, err := os.ReadFile(stats)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Ranks []struct {
			Windows []struct {
				Calls map[string]struct{ Count, Bytes int64 }
				Sync  map[string]struct{ Count int64 }
			}
			Waits map[string]struct{ Count int64 }
		}
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Ranks) != 2 {
		t.Fatalf("%d ranks in %s", len(s.Ranks), b)
	}
	for i, r := range s.Ranks {
		if len(r.Windows) != 1 {
			t.Fatalf("rank %d: %d windows", i, len(r.Windows))
		}
		w := r.Windows[0]
		// MPI_Fetch_and_op counts as FetchAndOp, not as the one-element
		// Get_accumulate it also is.
		if c, ok := w.Calls["GetAccumulate"]; ok {
			t.Errorf("rank %d: GetAccumulate %+v counted", i, c)
		}
		for name, want := range map[string]int64{"Put": 12, "Get": 5, "FetchAndOp": 1} {
			if c := w.Calls[name]; c.Count != want || c.Bytes != 8*want {
				t.Errorf("rank %d: %s %+v, want %d calls", i, name, c, want)
			}
		}
		for name, want := range map[string]int64{"Lock": 5, "Unlock": 5, "LockAll": 1} {
			if c := w.Sync[name]; c.Count != want {
				t.Errorf("rank %d: %s %d, want %d", i, name, c.Count, want)
			}
		}
		for name, want := range map[string]int64{"Barrier": 3, "Allreduce": 2} {
			if c := r.Waits[name]; c.Count != want {
				t.Errorf("rank %d: %s %d, want %d", i, name, c.Count, want)
			}
		}
	}
}

// TestCCheck runs a racy C program and a race-free one under shmrun
// --check: the C calls go through the checker as Go's do, and the report
// names the C line of each (the program is compiled with -g).
func TestCCheck(t *testing.T) {
	dir := install(t)
	tmp := t.TempDir()
	for _, c := range []struct {
		name, body string
		racy       bool
	}{
		{"racy", "MPI_Put(&v, 1, MPI_LONG, 0, 2, 1, MPI_LONG, w);", true},
		{"disjoint", "MPI_Put(&v, 1, MPI_LONG, 0, rank, 1, MPI_LONG, w);\n\tMPI_Accumulate(&v, 1, MPI_LONG, 0, 3, 1, MPI_LONG, MPI_SUM, w);", false},
	} {
		src, exe := filepath.Join(tmp, c.name+".c"), filepath.Join(tmp, c.name)
		prog := `#include <mpi.h>
int main(int argc, char **argv) {
	int rank;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Win w;
	long *base, v = rank;
	MPI_Win_allocate_shared(8 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w);
	MPI_Win_fence(0, w);
	` + c.body + `
	MPI_Win_fence(0, w);
	MPI_Win_free(&w);
	MPI_Finalize();
	return 0;
}
`
		shmccBuild(t, dir, src, exe, prog, "-g")
		out, err := exec.Command(filepath.Join(dir, "bin", "shmrun"), "--check", "-n", "2", "--oversubscribe", exe).CombinedOutput()
		var ee *exec.ExitError
		switch {
		case c.racy && (!errors.As(err, &ee) || ee.ExitCode() != 1 || !regexp.MustCompile(`Put at [^ ]*racy\.c:10 `).Match(out)):
			t.Errorf("%s: %v\n%s", c.name, err, out)
		case !c.racy && err != nil:
			t.Errorf("%s: %v\n%s", c.name, err, out)
		}
	}
}
