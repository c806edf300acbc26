//go:build !mpi

package ranktest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shmrun/shmrun/internal/format"
	"golang.org/x/sys/unix"
)

// TestSweepJobDirs: the job directories a killed test run left go (a dead
// job's lock file and object removed, then the directory), while a live
// job's (its lock held), a young one and a non-ranktest directory stay.
func TestSweepJobDirs(t *testing.T) {
	base := t.TempDir()
	long := time.Now().Add(-time.Hour)
	mk := func(name string, files ...string) string {
		d := filepath.Join(base, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			p := filepath.Join(d, f)
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, long, long); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	age := func(d string) {
		if err := os.Chtimes(d, long, long); err != nil {
			t.Fatal(err)
		}
	}
	const dead, live = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"
	deadDir := mk("ranktest-1", format.ObjectName(dead, "lock"), format.ObjectName(dead, "win0"))
	age(deadDir)
	liveDir := mk("ranktest-2", format.ObjectName(live, "lock"))
	age(liveDir)
	f, err := os.Open(filepath.Join(liveDir, format.ObjectName(live, "lock")))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	youngDir := mk("ranktest-3")
	otherDir := mk("other-4")
	age(otherDir)

	sweepJobDirs(base, time.Minute)

	for _, c := range []struct {
		dir  string
		want bool
	}{{deadDir, false}, {liveDir, true}, {youngDir, true}, {otherDir, true}} {
		if _, err := os.Stat(c.dir); (err == nil) != c.want {
			t.Errorf("%s: exists %v after the sweep, want %v", filepath.Base(c.dir), err == nil, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(liveDir, format.ObjectName(live, "lock"))); err != nil {
		t.Errorf("the live job's lock file: %v", err)
	}
}
