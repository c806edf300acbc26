package faults

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

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
