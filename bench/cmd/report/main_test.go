package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// report reads a synthetic results.txt and returns the RESULTS.md written
// from it.
func report(t *testing.T, results string) string {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "results.txt")
	if err := os.WriteFile(in, []byte(results), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := read(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := write(r, dir, "bench/run"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "RESULTS.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lineOf is the first line of md that starts with prefix.
func lineOf(t *testing.T, md, prefix string) string {
	t.Helper()
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	t.Fatalf("no line starts with %q in:\n%s", prefix, md)
	return ""
}

// A row whose answers were checked wrong must not be timed: its cell says
// so, and no ratio or target uses its time.
func TestWrongAnswerNotTimed(t *testing.T) {
	md := report(t, `# openmpi: check allreduce_8 WRONG
# openmpi: check allreduce_8 WRONG on rank 1: element 0 is 1, want 1003
# shmrun: check allreduce_8 ok
# climit: check allreduce_8 ok
shmrun allreduce_8 100 90 110 1000
openmpi allreduce_8 50 40 60 1000
climit allreduce_8 80 70 90 1000
# mpich_n8: check bcast_8 WRONG
mpich bcast_8_n8 10 9 11 1000
shmrun bcast_8_n8 100 90 110 1000
# shmrunc: check reduce_8 WRONG
shmrunc reduce_8 100 90 110 1000
shmrun reduce_8 100 90 110 1000
`)
	row := lineOf(t, md, "| Allreduce 8 B (sum of one double), 2 ranks, loop |")
	if !strings.Contains(row, "| WRONG |") || strings.Contains(row, "2.00×") {
		t.Errorf("Open MPI's wrong allreduce_8 is timed:\n%s", row)
	}
	tg := lineOf(t, md, "| Allreduce 8 B, 2 ranks, loop ≤ 0.6× Open MPI (issue 14)")
	if strings.Contains(tg, "| no |") || strings.Contains(tg, "| yes |") {
		t.Errorf("a target is judged against a wrong answer's time:\n%s", tg)
	}
	row = lineOf(t, md, "| Bcast 8 B, 8 ranks on 2 cores, loop |")
	if !strings.Contains(row, "| WRONG |") {
		t.Errorf("MPICH's wrong bcast_8 at 8 ranks is timed:\n%s", row)
	}
	// The C twin's run (shmrunc) is not the Go API's (shmrun).
	row = lineOf(t, md, "| Reduce 8 B, 2 ranks, loop |")
	if strings.Contains(row, "WRONG") {
		t.Errorf("the C twin's wrong reduce_8 marks the Go API's row:\n%s", row)
	}
}

// The C-limit rule holds for every target with a C limit: where the limit
// scores above 0.8× the goal, the goal is within 1.25× of the limit.
func TestCLimitRuleEveryTarget(t *testing.T) {
	md := report(t, `shmrun lock_unlock_excl 55 50 60 1000
openmpi lock_unlock_excl 100 90 110 1000
climit lock_unlock_excl 45 40 50 1000
shmrun barrier_n8 700 600 800 1000
openmpi barrier_n8 1000 900 1100 1000
climit flag_barrier_n8 600 500 700 1000
`)
	for _, p := range []string{"| Lock(exclusive) + Unlock ≤ 0.5× Open MPI (issue 3)", "| Barrier, 8 ranks on 2 cores ≤ 0.6× Open MPI (issue 2)"} {
		tg := lineOf(t, md, p)
		if !strings.Contains(tg, "within 1.25× of the C limit") || !strings.Contains(tg, "| yes |") {
			t.Errorf("the C-limit rule is not applied:\n%s", tg)
		}
	}
}

// A measurement that failed in some repetitions keeps the median of the
// others but must say that it failed.
func TestPartialFailureShown(t *testing.T) {
	md := report(t, `shmrun put8_flush 10 9 11 1000
shmrun put8_flush TIMEOUT
shmrun put8_flush 12 11 13 1000
openmpi put8_flush 20 19 21 1000
openmpi put8_flush 22 21 23 1000
openmpi put8_flush 24 23 25 1000
`)
	row := lineOf(t, md, "| Put 8 B + Flush (origin side, target idle)")
	if !strings.Contains(row, "TIMEOUT") {
		t.Errorf("a repetition's TIMEOUT is hidden:\n%s", row)
	}
	if !strings.Contains(row, "11.0 ns") {
		t.Errorf("the median of the two numeric repetitions is not 11:\n%s", row)
	}
}
