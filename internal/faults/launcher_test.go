package faults

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/internal/team"
	"github.com/shmrun/shmrun/launcher"
	"github.com/shmrun/shmrun/shm"
	"github.com/shmrun/shmrun/win"
)

// pdeathBound is how soon the ranks of a SIGKILLed launcher must be gone.
const pdeathBound = time.Second

const keepLen = 8192

func init() {
	// linger: every rank says "ready <rank> <pid> <job>", then all allocate
	// a window in which rank 1 reserves bigPart bytes; the test kills the
	// launcher while rank 1 reserves, so the segment is still linked.
	ranktest.Register("linger", func(c *comm.Comm) error {
		t, err := team.OfComm(c, "linger")
		if err != nil {
			return err
		}
		fmt.Printf("ready %d %d %s\n", c.Rank(), os.Getpid(), t.Job())
		if err := c.Barrier(); err != nil {
			return err
		}
		size := shm.PageSize
		if c.Rank() == 1 {
			size = bigPart
		}
		if _, err := win.AllocateShared(c, int(size), 1, nil); err != nil {
			return err
		}
		fmt.Printf("rank %d allocated: the launcher was not killed in time\n", c.Rank())
		time.Sleep(time.Hour)
		return nil
	})

	// live: args gofile. Rank 0 makes an object of the job's own in the shm
	// directory (as a window is while it is being allocated) and fills it;
	// every rank fills its part of a window; all say "ready <rank> <pid>
	// <job>" and wait for gofile to exist. Then rank 0 reads its object
	// back through its name, everyone checks every part of the window, and
	// rank 0 removes the object: "rank R live intact".
	ranktest.Register("live", func(c *comm.Comm) error {
		t, err := team.OfComm(c, "live")
		if err != nil {
			return err
		}
		me, n := c.Rank(), c.Size()
		keep := format.ObjectName(t.Job(), "keep")
		if me == 0 {
			obj, err := shm.Create(t.Dir(), keep, keepLen)
			if err != nil {
				return err
			}
			m, err := obj.Map(keepLen)
			obj.Close()
			if err != nil {
				return err
			}
			for i := range m {
				m[i] = pattern(7, i)
			}
			shm.Unmap(m)
		}
		w, err := win.AllocateShared(c, partLen, 1, nil)
		if err != nil {
			return err
		}
		defer w.Free()
		for i, b := 0, w.Local(); i < len(b); i++ {
			b[i] = pattern(me, i)
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		fmt.Printf("ready %d %d %s\n", me, os.Getpid(), t.Job())
		gofile := ranktest.BodyArgs()[0]
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat(gofile); err == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("no %s within a minute", gofile)
			}
		}
		if me == 0 {
			obj, err := shm.Open(t.Dir(), keep, keepLen)
			if err != nil {
				return fmt.Errorf("the live job's object is gone: %w", err)
			}
			m, err := obj.Map(keepLen)
			obj.Close()
			if err != nil {
				return err
			}
			for i, b := range m {
				if b != pattern(7, i) {
					return fmt.Errorf("the live job's object changed at byte %d", i)
				}
			}
			shm.Unmap(m)
			if err := os.Remove(filepath.Join(t.Dir(), keep)); err != nil {
				return err
			}
		}
		for r := range n {
			seg, err := w.SharedQuery(r)
			if err != nil {
				return err
			}
			for i, b := range seg.Bytes {
				if b != pattern(r, i) {
					return fmt.Errorf("rank %d's part changed at byte %d", r, i)
				}
			}
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		fmt.Printf("rank %d live intact\n", me)
		return nil
	})
}

// buildCLI builds the shmrun command into a temporary directory.
func buildCLI(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "shmrun")
	out, err := exec.Command(gobin, "build", "-o", bin, "github.com/shmrun/shmrun/cmd/shmrun").CombinedOutput()
	if err != nil {
		t.Skipf("cannot build the shmrun command: %v\n%s", err, out)
	}
	return bin
}

// cliJob is a job started by the real shmrun command.
type cliJob struct {
	cmd    *exec.Cmd
	out    *lineWatcher
	stderr bytes.Buffer
	pids   []int
	job    string
}

func startCLI(t *testing.T, ctx context.Context, bin, dir string, n int, body string, args ...string) *cliJob {
	t.Helper()
	argv := append([]string{"-n", strconv.Itoa(n), "--oversubscribe", "--shm-dir", dir, "--timeout", "90s",
		"env", ranktest.EnvBody + "=" + body, ranktest.Program()}, args...)
	j := &cliJob{cmd: exec.CommandContext(ctx, bin, argv...), out: newLineWatcher()}
	j.cmd.Stderr = &j.stderr
	stdout, err := j.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := j.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go j.out.copyFrom(stdout)
	for r := range n {
		f := j.out.await(fmt.Sprintf("ready %d ", r), 30*time.Second)
		if len(f) != 2 {
			t.Fatalf("rank %d of %s never got ready; output:\n%s", r, body, j.out)
		}
		pid, _ := strconv.Atoi(f[0])
		j.pids = append(j.pids, pid)
		j.job = f[1]
	}
	return j
}

// TestKillLauncher: SIGKILL of the shmrun process ends its ranks within
// pdeathBound (PR_SET_PDEATHSIG), even one in the middle of a window
// reservation; what the dead job left (its lock file, a window segment not
// yet unlinked) is removed by `shmrun --cleanup`, which leaves alone the
// objects of a second, live job in the same directory (even with its lock
// file made old): that job then finds its object and window intact and
// ends normally, leaving the directory empty.
func TestKillLauncher(t *testing.T) {
	bin := buildCLI(t)
	dir := jobDir(t)
	needShm(t, dir, 2*bigPart)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	gofile := filepath.Join(t.TempDir(), "go")

	live := startCLI(t, ctx, bin, dir, 3, "live", gofile)
	defer live.cmd.Process.Kill()
	dead := startCLI(t, ctx, bin, dir, 3, "linger")
	defer dead.cmd.Process.Kill()
	if err := awaitReserving(dead.pids[1]); err != nil {
		t.Fatalf("%v\noutput:\n%s", err, dead.out)
	}
	if err := dead.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	var left []int
	for {
		left = slices.DeleteFunc(slices.Clone(dead.pids), gone)
		if len(left) == 0 || time.Since(killed) > pdeathBound {
			break
		}
		time.Sleep(time.Millisecond)
	}
	took := time.Since(killed)
	dead.cmd.Wait()
	if len(left) > 0 {
		t.Errorf("ranks %v of the killed launcher still run %v after the kill", left, took)
	}
	t.Logf("the killed launcher's ranks were gone %v after the kill", took.Round(time.Millisecond))

	var deadObjs, liveObjs []string
	for _, name := range entries(t, dir) {
		switch job, _, _ := format.SplitName(name); job {
		case dead.job:
			deadObjs = append(deadObjs, name)
		case live.job:
			liveObjs = append(liveObjs, name)
		default:
			t.Errorf("unexpected entry %s in the shm directory", name)
		}
	}
	if len(windowObjects(dir)) < 2 { // the dead job's segment and the live job's keep
		t.Errorf("the killed job left no window segment (%q): the kill missed the allocation", deadObjs)
	}
	// Cleanup spares a lock file younger than LockSettle (a job starting):
	// make every lock file old, so only the live job's flock protects it.
	for _, name := range append(slices.Clone(deadObjs), liveObjs...) {
		then := time.Now().Add(-2 * launcher.LockSettle)
		if err := os.Chtimes(filepath.Join(dir, name), then, then); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.CommandContext(ctx, bin, "--cleanup", "--shm-dir", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("shmrun --cleanup: %v\n%s", err, out)
	}
	var removed []string
	for _, l := range strings.Split(string(out), "\n") {
		if n, ok := strings.CutPrefix(l, "removed "); ok {
			removed = append(removed, n)
		}
	}
	slices.Sort(removed)
	slices.Sort(deadObjs)
	if !slices.Equal(removed, deadObjs) {
		t.Errorf("shmrun --cleanup removed %q; want the dead job's %q\n%s", removed, deadObjs, out)
	}
	if got := entries(t, dir); !sameSet(got, liveObjs) {
		t.Errorf("after the cleanup the directory holds %q; want the live job's %q", got, liveObjs)
	}

	if err := os.WriteFile(gofile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	err = live.cmd.Wait()
	if err != nil {
		t.Errorf("the live job failed after the cleanup: %v\nstdout:\n%s\nstderr:\n%s", err, live.out, live.stderr.String())
	}
	for r := range 3 {
		if live.out.await(fmt.Sprintf("rank %d live intact", r), time.Second) == nil {
			t.Errorf("rank %d of the live job did not find its data intact:\n%s\n%s", r, live.out, live.stderr.String())
		}
	}
	checkEmpty(t, dir)
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
