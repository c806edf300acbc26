package faults

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
)

// TestAbortWhileOthersBlock: rank 3 holds a lock on rank 0 and calls
// Abort(42) while rank 0 waits in a barrier, rank 1 for that lock, and
// rank 2 in Wait for an access epoch rank 1 never starts. The job exits 42 naming rank 3, within
// endBound; the blocked ranks see the abort with their data intact, and the
// shm directory is left empty.
func TestAbortWhileOthersBlock(t *testing.T) {
	dir := jobDir(t)
	res := ranktest.Run(t, stuckRanks, "stuck", ranktest.Args("abort"), ranktest.ShmDir(dir),
		ranktest.Timeout(40*time.Second), ranktest.ExitCode(abortCode))
	end := time.Now()
	want := fmt.Sprintf("rank 3 called Abort(%d)", abortCode)
	if !strings.Contains(res.Reason, want) || !strings.Contains(res.Stderr, want) {
		t.Errorf("reason %q (stderr below) does not say %q\n%s", res.Reason, want, res.Stderr)
	}
	var at time.Time
	for _, l := range res.Lines() {
		if ns, ok := strings.CutPrefix(l, "aborting at "); ok {
			v, _ := strconv.ParseInt(ns, 10, 64)
			at = time.Unix(0, v)
		}
	}
	if at.IsZero() {
		t.Fatalf("rank 3 did not say when it aborted:\n%s", res.Stdout)
	}
	t.Logf("job ended %v after Abort: %s", end.Sub(at).Round(time.Millisecond), res.Reason)
	if d := end.Sub(at); d > endBound {
		t.Errorf("the job ended %v after Abort; want at most %v", d, endBound)
	}
	checkWaiters(t, res, []int{0, 1, 2})
	checkNoSIGBUS(t, res)
	checkEmpty(t, dir)
}

func init() {
	// abort-code: args code. After a barrier rank 1 calls Abort(code);
	// the others wait in a barrier.
	ranktest.Register("abort-code", func(c *comm.Comm) error {
		code, err := strconv.Atoi(ranktest.BodyArgs()[0])
		if err != nil {
			return err
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		if c.Rank() == 1 {
			c.Abort(code)
		}
		return c.Barrier()
	})
}

// TestAbortCodeStatus: the shmrun command's exit status after Abort(code)
// is the status a process exiting with code would have (code mod 256),
// except that an abort never looks like success: a code whose low byte is
// 0 gives 1 (comm.Abort's rule for the rank's own status).
func TestAbortCodeStatus(t *testing.T) {
	bin := buildCLI(t)
	for _, tt := range []struct{ code, status int }{
		{42, 42}, {255, 255}, {257, 1}, {0, 1}, {256, 1}, {-1, 255},
	} {
		t.Run(strconv.Itoa(tt.code), func(t *testing.T) {
			dir := jobDir(t)
			cmd := exec.Command(bin, "-n", "3", "--oversubscribe", "--shm-dir", dir, "--timeout", "60s",
				"env", ranktest.EnvBody+"=abort-code", ranktest.Program(), strconv.Itoa(tt.code))
			out, _ := cmd.CombinedOutput()
			status := cmd.ProcessState.ExitCode()
			if status != tt.status {
				t.Errorf("shmrun exited %d after Abort(%d); want %d\n%s", status, tt.code, tt.status, out)
			}
			if want := fmt.Sprintf("rank 1 called Abort(%d)", tt.code); !strings.Contains(string(out), want) {
				t.Errorf("the output does not say %q:\n%s", want, out)
			}
			checkEmpty(t, dir)
		})
	}
}
