package launcher_test

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
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
	// A job whose launcher was killed while it ran: its lock file names its
	// build directory, which goes with the job.
	build := filepath.Join(t.TempDir(), format.BuildDirName(dead))
	if err := os.MkdirAll(filepath.Join(build, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	touch(t, build, "0-prog")
	// A lock file whose mode lost its write bit (a launcher under umask
	// 0277 before it set 0600 itself) is still a dead job's.
	if err := os.WriteFile(filepath.Join(dir, obj(dead, "lock")), []byte(build+"\n"), 0o400); err != nil {
		t.Fatal(err)
	}
	// A lock file naming a directory that is not its job's build directory
	// does not make Cleanup remove it.
	other := filepath.Join(t.TempDir(), format.BuildDirName(live))
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	stale := format.NewJobID()
	if err := os.WriteFile(filepath.Join(dir, obj(stale, "lock")), []byte(other+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	age(t, filepath.Join(dir, obj(stale, "lock")), 2*launcher.LockSettle)
	starting := format.NewJobID()
	touch(t, dir, obj(starting, "lock"))
	age(t, filepath.Join(dir, obj(dead, "lock")), 2*launcher.LockSettle)

	rep, err := launcher.Cleanup(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{build, obj(dead, "0123abcd"), obj(dead, "lock"), obj(dead, "win1"), obj(orphan, "0123abcd"), obj(stale, "lock")}
	slices.Sort(want)
	if !slices.Equal(rep.Removed, want) {
		t.Errorf("Cleanup removed\n%q\nwant\n%q", rep.Removed, want)
	}
	if _, err := os.Lstat(build); !os.IsNotExist(err) {
		t.Errorf("the dead job's build directory is still there: %v", err)
	}
	if _, err := os.Lstat(other); err != nil {
		t.Errorf("a directory that is not the job's build directory was removed: %v", err)
	}
	wantSkipped := []launcher.Skipped{
		{Job: live, Names: []string{obj(live, "0123abcd"), obj(live, "lock")}, Reason: launcher.SkipRunning},
		{Job: starting, Names: []string{obj(starting, "lock")}, Reason: launcher.SkipStarting},
		{Job: young, Names: []string{obj(young, "0123abcd")}, Reason: launcher.SkipRecent},
	}
	slices.SortFunc(wantSkipped, func(a, b launcher.Skipped) int { return strings.Compare(a.Job, b.Job) })
	if !reflect.DeepEqual(rep.Skipped, wantSkipped) {
		t.Errorf("Cleanup skipped\n%+v\nwant\n%+v", rep.Skipped, wantSkipped)
	}
	left := []string{obj(dead, "link"), obj(live, "0123abcd"), obj(live, "lock"), obj(young, "0123abcd"), obj(starting, "lock"), "shmrun.notajob", "unrelated"}
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
	rep, err := launcher.Cleanup(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{format.ObjectName(dead, "lock")}; !slices.Equal(rep.Removed, want) {
		t.Errorf("Cleanup removed %q, want %q", rep.Removed, want)
	}
}

// TestCleanupReportsLockItCannotTake: a job whose lock file Cleanup cannot
// open or must not trust is skipped, and the report says why (issue 12: it
// was skipped silently).
func TestCleanupReportsLockItCannotTake(t *testing.T) {
	dir := shmDir(t)
	job := format.NewJobID()
	lock := filepath.Join(dir, format.ObjectName(job, "lock"))
	touch(t, dir, format.ObjectName(job, "lock"))
	touch(t, dir, format.ObjectName(job, "win"))
	want := launcher.SkipPermission
	if os.Geteuid() == 0 {
		// Root opens any file: make it another user's instead.
		if err := os.Chown(lock, 65534, 65534); err != nil {
			t.Skipf("chown: %v", err)
		}
		want = launcher.SkipNotOurs
	} else if err := os.Chmod(lock, 0); err != nil {
		t.Fatal(err)
	}
	age(t, lock, 2*launcher.LockSettle)
	rep, err := launcher.Cleanup(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Removed) != 0 || len(rep.Skipped) != 1 || rep.Skipped[0].Job != job || rep.Skipped[0].Reason != want || len(rep.Skipped[0].Names) != 2 {
		t.Errorf("Cleanup = %+v, want job %s skipped: %s", rep, job, want)
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
	rep, err := launcher.Cleanup(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Removed) != 0 {
		t.Errorf("Cleanup removed %q of a job that is starting", rep.Removed)
	}
	if len(rep.Skipped) != 1 || rep.Skipped[0].Reason != launcher.SkipStarting {
		t.Errorf("Cleanup skipped %+v, want the job, %q", rep.Skipped, launcher.SkipStarting)
	}
}
