package faults

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/launcher"
	"github.com/shmrun/shmrun/shm"
)

// endBound is how long a job may take to end after a fault. Typical is a
// few hundred milliseconds (see the logged times); the bound is generous
// for a loaded CI machine and still far from a hang.
const endBound = 10 * time.Second

// settle is how long a test waits after a rank said it is about to block
// before it kills it: the rank cannot leave the call anyway (the scenario
// keeps a peer away), so this only makes it likely that the kill finds it
// asleep inside the call rather than just before it.
const settle = 30 * time.Millisecond

// killCase is one row of the kill matrix.
type killCase struct {
	scenario string
	victim   int
	point    string // what the victim announces before it blocks
}

var killCases = []killCase{
	{"barrier", 1, "barrier"},
	{"fence", 1, "fence"},
	{"allreduce", 1, "allreduce"},
	{"bcast", 0, "bcast"},
	{"lock-holder", 1, "hold"},
	{"lock-waiter", 2, "lock"},
	{"lockall-waiter", 1, "lockall"},
	{"lockall-holder", 1, "hold"},
	{"start", 1, "start"},
	{"wait", 1, "wait"},
	{"alloc", 2, "alloc"},
	{"alloc-creator", 0, "alloc"},
	{"alloc-peers", 1, "hold"},
	{"free", 1, "hold"},
}

// reserving reports whether the scenario kills its victim in the middle
// of a reservation.
func reserving(scenario string) bool { return scenario == "alloc" || scenario == "alloc-creator" }

// needShm skips the test when dir's tmpfs has less than n bytes free.
func needShm(t *testing.T, dir string, n int64) {
	t.Helper()
	if free := shm.FreeBytes(dir); free < n {
		t.Skipf("%s has %d bytes free; the test needs %d", dir, free, n)
	}
}

// waiters lists the ranks of scenario that must see the abort in their
// blocked call, apart from victim.
func waiters(scenario string, victim int) []int {
	var rs []int
	for r, role := range plans[scenario] {
		if role.waits && r != victim {
			rs = append(rs, r)
		}
	}
	return rs
}

// TestKillRank: SIGKILL of a rank blocked in each synchronization call (or
// holding a lock, or in the middle of AllocateShared) ends the job with
// 128+9 and a message naming the rank, pid and signal, within endBound;
// every rank blocked in a call of shmrun's sees the abort and finds all
// data intact, and nothing is left in the shm directory.
//
// With SHMRUN_SOAK every case runs 20 times.
func TestKillRank(t *testing.T) {
	reps := 1
	if _, ok := soak(t); ok {
		reps = 20
	}
	for i := range reps * len(killCases) {
		kc := killCases[i%len(killCases)]
		t.Run(kc.scenario, func(t *testing.T) {
			dir := jobDir(t)
			if reserving(kc.scenario) {
				needShm(t, dir, 2*bigPart)
			}
			watch := newLineWatcher()
			type kill struct {
				pid     int
				at      time.Time
				objects []string // the shm directory when the kill was sent
				err     error
			}
			killed := make(chan kill, 1)
			go func() {
				f := watch.await(fmt.Sprintf("at %s %d ", kc.point, kc.victim), 30*time.Second)
				if f == nil {
					killed <- kill{err: fmt.Errorf("rank %d never reached %s", kc.victim, kc.point)}
					return
				}
				pid, _ := strconv.Atoi(f[0])
				if reserving(kc.scenario) {
					if err := awaitReserving(pid); err != nil {
						killed <- kill{pid: pid, err: err}
						return
					}
				} else {
					time.Sleep(settle)
				}
				objs := windowObjects(dir)
				at := time.Now()
				err := syscall.Kill(pid, syscall.SIGKILL)
				killed <- kill{pid: pid, at: at, objects: objs, err: err}
			}()
			res := ranktest.Run(t, stuckRanks, "stuck", ranktest.Args(kc.scenario), ranktest.ShmDir(dir),
				ranktest.Timeout(40*time.Second), ranktest.AnyExitCode(),
				ranktest.Configure(func(c *launcher.Config) { c.Stdout = teeWriter{c.Stdout, watch} }))
			end := time.Now()
			k := <-killed
			if k.err != nil {
				t.Fatalf("placing the kill: %v\nstdout:\n%s\nstderr:\n%s", k.err, res.Stdout, res.Stderr)
			}
			took := end.Sub(k.at)
			t.Logf("job ended %v after the kill; %s; segments at the kill: %d", took.Round(time.Millisecond), res.Reason, len(k.objects))
			checkKilled(t, res, kc.victim, k.pid, syscall.SIGKILL)
			if took > endBound {
				t.Errorf("the job ended %v after the kill; want at most %v", took, endBound)
			}
			if reserving(kc.scenario) && len(k.objects) == 0 {
				t.Errorf("no window segment was in the shm directory when rank %d was killed: the kill missed the allocation", kc.victim)
			}
			checkWaiters(t, res, waiters(kc.scenario, kc.victim))
			checkNoSIGBUS(t, res)
			checkEmpty(t, dir)
		})
	}
}

// checkKilled checks the exit code and message of a job whose rank was
// killed by sig.
func checkKilled(t *testing.T, res ranktest.Result, rank, pid int, sig syscall.Signal) {
	t.Helper()
	for _, p := range killProblems(res, rank, pid, sig) {
		t.Error(p)
	}
}

func killProblems(res ranktest.Result, rank, pid int, sig syscall.Signal) []string {
	var out []string
	// The launcher says "was killed by SIGKILL (killed)".
	want := fmt.Sprintf("rank %d (pid %d) was killed by %s", rank, pid, unix.SignalName(sig))
	if res.ExitCode != 128+int(sig) || !strings.Contains(res.Reason, want) {
		out = append(out, fmt.Sprintf("job exited %d (%q); want %d and a reason saying %q\nstderr:\n%s", res.ExitCode, res.Reason, 128+int(sig), want, res.Stderr))
	}
	if !strings.Contains(res.Stderr, "shmrun: "+res.Reason) {
		out = append(out, fmt.Sprintf("the reason is not on stderr:\n%s", res.Stderr))
	}
	return out
}

// checkWaiters checks that each of ranks said it saw the abort with its
// data intact.
func checkWaiters(t *testing.T, res ranktest.Result, ranks []int) {
	t.Helper()
	for _, p := range waiterProblems(res, ranks) {
		t.Error(p)
	}
}

func waiterProblems(res ranktest.Result, ranks []int) []string {
	var out []string
	for _, r := range ranks {
		prefix := fmt.Sprintf("rank %d aborted; data intact", r)
		if !slices.ContainsFunc(res.Lines(), func(l string) bool { return strings.HasPrefix(l, prefix) }) {
			out = append(out, fmt.Sprintf("rank %d did not report the abort with its data intact\nstdout:\n%s\nstderr:\n%s", r, res.Stdout, res.Stderr))
		}
	}
	return out
}

// awaitReserving waits until pid has faulted in a good part of its large
// window part (but not all of it): it is then inside AllocateShared's
// reservation, after the exchange that published the segment and before
// the one that lets rank 0 unlink it.
func awaitReserving(pid int) error {
	base, ok := rssShmem(pid)
	if !ok {
		return fmt.Errorf("cannot read RssShmem of pid %d", pid)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		v, ok := rssShmem(pid)
		if !ok {
			return fmt.Errorf("pid %d is gone", pid)
		}
		grown := v - base
		if grown >= bigPart/16 {
			if grown > bigPart*3/4 {
				return fmt.Errorf("pid %d already reserved %d of %d bytes when seen: too late to kill it inside the reservation", pid, grown, bigPart)
			}
			return nil
		}
		time.Sleep(200 * time.Microsecond)
	}
	return fmt.Errorf("pid %d never started reserving", pid)
}

// windowObjects lists the window segments (shmrun.<job>.<id>, not the lock
// file) in dir.
func windowObjects(dir string) []string {
	var out []string
	for _, n := range entriesOf(dir) {
		if _, id, ok := format.SplitName(n); ok && id != "lock" {
			out = append(out, n)
		}
	}
	return out
}
