//go:build !mpi && cgo

package main

import (
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/rmacheck"
)

// TestCLocalCheck builds testdata/check/local.c with shmcc --check and
// runs each of its cases under shmrun --check=warn: a racy case must be
// reported naming exactly the two lines it marks (an RMA call and the
// program's own load or store, or two stores of two ranks), a race-free
// case not at all. Then the same binary runs without --check (no report,
// the hooks idle) and one racy case under --check (exit status 1).
func TestCLocalCheck(t *testing.T) {
	dir := install(t)
	shmcc, shmrun := filepath.Join(dir, "bin", "shmcc"), filepath.Join(dir, "bin", "shmrun")
	srcPath := filepath.Join("testdata", "check", "local.c")
	src, err := os.ReadFile(srcPath)
	if err != nil {
		t.Fatal(err)
	}
	cases := cCases(t, string(src))
	if len(cases) < 15 {
		t.Fatalf("%d cases parsed", len(cases))
	}
	tmp := t.TempDir()
	exe := filepath.Join(tmp, "local")
	if out, err := exec.Command(shmcc, "--check", "-O1", "-fopenmp", "-Wall", "-Werror", srcPath, "-o", exe).CombinedOutput(); err != nil {
		t.Fatalf("shmcc --check: %v\n%s", err, out)
	}
	env := append(os.Environ(), "OMP_NUM_THREADS=2")
	job := func(flag, name string) (string, int) {
		args := []string{"--oversubscribe", "--timeout", "60s", "-n", "2", exe, name}
		if flag != "" {
			args = append([]string{flag}, args...)
		}
		cmd := exec.Command(shmrun, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return string(out), ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return string(out), 0
	}
	for name, marked := range cases {
		t.Run(name, func(t *testing.T) {
			out, code := job("--check=warn", name)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, out)
			}
			if full := strings.Contains(out, "some loads and stores are not checked"); full != (name == "table_full") {
				t.Errorf("the table-full warning: %v\n%s", full, out)
			}
			if msg := rmacheck.Verdict(out, "check/local.c", marked); msg != "" {
				t.Error(msg)
			}
		})
	}
	if out, code := job("", "fence_origin"); code != 0 || strings.Contains(out, "conflicting") {
		t.Errorf("without --check: exit %d\n%s", code, out)
	}
	if out, code := job("--check", "omp_window"); code != 1 || !strings.Contains(out, "conflicting accesses") {
		t.Errorf("--check: exit %d\n%s", code, out)
	}
}

// cCases maps each case of local.c (a function c_NAME) to the sorted
// lines it marks with a race comment.
func cCases(t *testing.T, src string) map[string][]int {
	t.Helper()
	fn := regexp.MustCompile(`^static void (c_\w+|\w+)\(`)
	table := regexp.MustCompile(`^\s+\{"(\w+)", c_(\w+)\},$`)
	out := map[string][]int{}
	lines := strings.Split(src, "\n")
	for _, l := range lines {
		if m := table.FindStringSubmatch(l); m != nil {
			if m[1] != m[2] {
				t.Fatalf("case %s runs c_%s", m[1], m[2])
			}
			out[m[1]] = []int{}
		}
	}
	// A case's marks are in its function, or in the helper it calls with
	// an argument (pscw, lockall_barrier): those mark the racy variant,
	// which is the case whose function passes 0.
	cur := ""
	helper := map[string][]int{}
	for i, l := range lines {
		if m := fn.FindStringSubmatch(l); m != nil {
			cur = strings.TrimPrefix(m[1], "c_")
			if !strings.HasPrefix(m[1], "c_") {
				cur = "helper:" + m[1]
			}
		}
		if cur != "" && strings.HasSuffix(strings.TrimSpace(l), "/* race */") {
			if strings.HasPrefix(cur, "helper:") {
				helper[cur] = append(helper[cur], i+1)
			} else {
				out[cur] = append(out[cur], i+1)
			}
		}
	}
	call := regexp.MustCompile(`^static void c_(\w+)\(void\) \{ (\w+)\(0\); \}$`)
	for _, l := range lines {
		if m := call.FindStringSubmatch(l); m != nil {
			out[m[1]] = helper["helper:"+m[2]]
		}
	}
	return out
}

// TestCxxCheck: a C++ program (virtual calls, std::vector, std::atomic)
// built with SHMCC_CC=g++ shmcc --check links against the hooks, runs, and
// its race is reported with its two lines — g++ puts main in .text.startup,
// a second sequence of the line table, which the line lookup must find.
func TestCxxCheck(t *testing.T) {
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("no g++")
	}
	dir := install(t)
	tmp := t.TempDir()
	src, exe := filepath.Join(tmp, "race.cpp"), filepath.Join(tmp, "race")
	prog := `#include <mpi.h>
#include <atomic>
#include <vector>
struct B { virtual ~B() {} virtual long f() { return 1; } };
struct D : B { long f() override { return 2; } };
int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	long *base;
	MPI_Win win;
	MPI_Win_allocate_shared(8 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
	std::vector<long> v(4, rank);
	B *b = new D;
	std::atomic<long> a{0};
	a.fetch_add(b->f());
	MPI_Win_fence(0, win);
	if (rank == 1)
		MPI_Put(v.data(), 1, MPI_LONG, 0, 0, 1, MPI_LONG, win);
	else
		base[0] = a.load();
	MPI_Win_fence(0, win);
	delete b;
	MPI_Win_free(&win);
	MPI_Finalize();
	return 0;
}
`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	// A PIE (the default) and a non-PIE executable: their line tables
	// hold relative and absolute addresses.
	for _, pie := range [][]string{nil, {"-no-pie"}} {
		args := append(append([]string{"--check", "-O1"}, pie...), src, "-o", exe)
		cmd := exec.Command(filepath.Join(dir, "bin", "shmcc"), args...)
		cmd.Env = append(os.Environ(), "SHMCC_CC=g++")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("shmcc %v with g++: %v\n%s", args, err, out)
		}
		out, err := exec.Command(filepath.Join(dir, "bin", "shmrun"), "--check=warn", "--oversubscribe", "-n", "2", exe).CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if msg := rmacheck.Verdict(string(out), "race.cpp", []int{19, 21}); msg != "" {
			t.Errorf("%v: %s", pie, msg)
		}
	}
}

// TestCheckWrappers: the library defines __wrap_NAME for every function
// shmcc --check links through it (format.CheckWrapped); a missing one
// would fail the link of every program that calls NAME.
func TestCheckWrappers(t *testing.T) {
	dir := install(t)
	f, err := elf.Open(filepath.Join(dir, "lib", "libmpi_abi.so"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			defined[s.Name] = true
		}
	}
	for _, n := range format.CheckWrapped {
		if !defined["__wrap_"+n] {
			t.Errorf("libmpi_abi.so defines no __wrap_%s", n)
		}
	}
}
