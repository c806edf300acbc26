package faults

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/launcher"
)

// TestChecksCatchFaults: the checks the fault tests end with report what
// they are for. Each is given an outcome that is wrong in one way.
func TestChecksCatchFaults(t *testing.T) {
	good := ranktest.Result{
		Result: launcher.Result{ExitCode: 137, Reason: "rank 1 (pid 42) was killed by SIGKILL (killed)"},
		Stdout: "rank 0 aborted; data intact (x)\nrank 2 aborted; data intact (x)\n",
		Stderr: "shmrun: rank 1 (pid 42) was killed by SIGKILL (killed)\n",
	}
	if p := killProblems(good, 1, 42, syscall.SIGKILL); len(p) > 0 {
		t.Errorf("a right outcome: %q", p)
	}
	if p := waiterProblems(good, []int{0, 2}); len(p) > 0 {
		t.Errorf("a right outcome: %q", p)
	}
	if p := sigbusProblems(good); len(p) > 0 {
		t.Errorf("a right outcome: %q", p)
	}

	wrongCode, wrongRank, silent, hung, bus := good, good, good, good, good
	wrongCode.ExitCode = 1
	wrongRank.Reason = "rank 2 (pid 42) was killed by SIGKILL (killed)"
	silent.Stderr = ""
	hung.Stdout = "rank 0 aborted; data intact (x)\nrank 2: the blocked call returned without an abort\n"
	bus.Stderr += "unexpected fault address 0x7f0000001000\nfatal error: fault\n[signal SIGBUS: bus error code=0x2]\n"
	for name, p := range map[string][]string{
		"exit code":          killProblems(wrongCode, 1, 42, syscall.SIGKILL),
		"rank named":         killProblems(wrongRank, 1, 42, syscall.SIGKILL),
		"pid named":          killProblems(good, 1, 43, syscall.SIGKILL),
		"reason on stderr":   killProblems(silent, 1, 42, syscall.SIGKILL),
		"waiter not aborted": waiterProblems(hung, []int{0, 2}),
		"SIGBUS":             sigbusProblems(bus),
	} {
		if len(p) == 0 {
			t.Errorf("%s: a wrong outcome passed", name)
		}
	}

	dir := t.TempDir()
	if p := emptyProblems(dir); len(p) > 0 {
		t.Errorf("an empty directory: %q", p)
	}
	if err := os.WriteFile(filepath.Join(dir, "shmrun.0123.lock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if p := emptyProblems(dir); len(p) == 0 {
		t.Error("a directory with an object left passed")
	}
}
