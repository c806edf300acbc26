package launcher_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/launcher"
	"github.com/shmrun/shmrun/shm"
)

// shmDir returns a fresh directory on the shm tmpfs (t.TempDir if there is
// none), removed when the test ends.
func shmDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp(shm.DefaultDir, "launcher-test-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func touch(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// age makes path look last modified d ago.
func age(t *testing.T, path string, d time.Duration) {
	t.Helper()
	then := time.Now().Add(-d)
	if err := os.Chtimes(path, then, then); err != nil {
		t.Fatal(err)
	}
}

// holdLock flocks path through an open file description of its own, as a
// live launcher does; the lock goes when the test ends.
func holdLock(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
}

func TestCleanup(t *testing.T) {
	dir := shmDir(t)
	dead, live, orphan, young := format.NewJobID(), format.NewJobID(), format.NewJobID(), format.NewJobID()
	obj := format.ObjectName
	for _, n := range []string{
		obj(dead, "lock"), obj(dead, "0123abcd"), obj(dead, "win1"),
		obj(live, "lock"), obj(live, "0123abcd"),
		obj(orphan, "0123abcd"), // no lock file, old: its singleton is gone
		obj(young, "0123abcd"),  // no lock file, new: its singleton may be allocating
		"unrelated", "shmrun.notajob",
	} {
		touch(t, dir, n)
	}
	age(t, filepath.Join(dir, obj(orphan, "0123abcd")), 2*launcher.OrphanAge)
	age(t, filepath.Join(dir, obj(dead, "lock")), 2*launcher.LockSettle)
	age(t, filepath.Join(dir, obj(live, "lock")), 2*launcher.LockSettle)
	// A link among a dead job's objects is neither followed nor removed.
	target := filepath.Join(t.TempDir(), "target")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, obj(dead, "link"))); err != nil {
		t.Fatal(err)
	}
	holdLock(t, filepath.Join(dir, obj(live, "lock")))

	removed, err := launcher.Cleanup(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{obj(dead, "0123abcd"), obj(dead, "lock"), obj(dead, "win1"), obj(orphan, "0123abcd")}
	slices.Sort(want)
	if !slices.Equal(removed, want) {
		t.Errorf("Cleanup removed\n%q\nwant\n%q", removed, want)
	}
	left := []string{obj(dead, "link"), obj(live, "0123abcd"), obj(live, "lock"), obj(young, "0123abcd"), "shmrun.notajob", "unrelated"}
	slices.Sort(left)
	if got := names(t, dir); !slices.Equal(got, left) {
		t.Errorf("left in the directory\n%q\nwant\n%q", got, left)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "keep" {
		t.Errorf("the link's target was touched: %q, %v", b, err)
	}
}

// TestCleanupSkipsOthersObjects: only objects of this user are removed.
func TestCleanupSkipsOthersObjects(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make an object owned by another user")
	}
	dir := shmDir(t)
	dead := format.NewJobID()
	touch(t, dir, format.ObjectName(dead, "lock"))
	age(t, filepath.Join(dir, format.ObjectName(dead, "lock")), 2*launcher.LockSettle)
	touch(t, dir, format.ObjectName(dead, "theirs"))
	if err := os.Chown(filepath.Join(dir, format.ObjectName(dead, "theirs")), 65534, 65534); err != nil {
		t.Skipf("chown: %v", err)
	}
	removed, err := launcher.Cleanup(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{format.ObjectName(dead, "lock")}; !slices.Equal(removed, want) {
		t.Errorf("Cleanup removed %q, want %q", removed, want)
	}
}

func TestCleanupMissingDir(t *testing.T) {
	if _, err := launcher.Cleanup(filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Error("Cleanup of a missing directory succeeded")
	}
}

func TestRemoveJobObjects(t *testing.T) {
	dir := shmDir(t)
	job, other := format.NewJobID(), format.NewJobID()
	for _, n := range []string{format.ObjectName(job, "lock"), format.ObjectName(job, "a"), format.ObjectName(job, "b"), format.ObjectName(other, "a")} {
		touch(t, dir, n)
	}
	got := launcher.RemoveJobObjects(dir, job)
	slices.Sort(got)
	if want := []string{format.ObjectName(job, "a"), format.ObjectName(job, "b")}; !slices.Equal(got, want) {
		t.Errorf("removed %q, want %q", got, want)
	}
	left := []string{format.ObjectName(job, "lock"), format.ObjectName(other, "a")}
	slices.Sort(left)
	if got := names(t, dir); !slices.Equal(got, left) {
		t.Errorf("left %q, want %q", got, left)
	}
}

// TestCleanupSparesStartingJob: a launcher creates its lock file and then
// locks it; a Cleanup in between finds a fresh lock file unlocked and must
// not take that job for dead.
func TestCleanupSparesStartingJob(t *testing.T) {
	dir := shmDir(t)
	job := format.NewJobID()
	touch(t, dir, format.ObjectName(job, "lock"))
	removed, err := launcher.Cleanup(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 0 {
		t.Errorf("Cleanup removed %q of a job that is starting", removed)
	}
}
