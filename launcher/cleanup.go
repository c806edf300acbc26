package launcher

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/shmrun/shmrun/internal/format"
	"golang.org/x/sys/unix"
)

// orphanAge is how old an object of a job without a lock file must be before
// Cleanup removes it. Only a singleton (a program run without shmrun) makes
// objects without a lock file, and it unlinks each within its allocation
// call, so an object this old has lost its process.
const orphanAge = time.Minute

// LockSettle is how old an unlocked lock file must be before Cleanup takes
// its job for dead: a launcher creates its lock file and locks it a moment
// later, and a Cleanup in between must not remove a job that is starting.
const LockSettle = 10 * time.Second

// Reasons Cleanup gives for leaving a job's objects alone (Skipped.Reason).
const (
	SkipRunning    = "job is running"         // its launcher holds the lock
	SkipStarting   = "job started < 10 s ago" // an unlocked lock file younger than LockSettle
	SkipPermission = "permission denied"      // the lock file cannot be opened (another user's job)
	SkipNotOurs    = "lock file is not a regular file of this user"
	SkipRecent     = "no lock file; modified < 1 min ago" // objects of a singleton, perhaps still in use
)

// CleanupReport is what Cleanup did in a directory.
type CleanupReport struct {
	Removed []string  // names in the directory, and paths of build directories, that were removed
	Skipped []Skipped // jobs whose objects were left alone, by job id
}

// Skipped is a job whose objects Cleanup left alone, and why.
type Skipped struct {
	Job    string   // the job id
	Names  []string // its objects in the directory, lock file included
	Reason string   // one of the Skip* reasons, or the error that stopped Cleanup
}

// Cleanup removes the objects in dir of jobs whose launcher is gone, and the
// build directory their lock file names, and reports what it removed and
// which jobs it left alone and why. A job is gone when its lock file can be
// flocked (and is older than LockSettle): the launcher holds the lock for the
// job's life and the kernel drops it when the launcher dies, so there is no
// pid-reuse race. A live job's objects are never touched. Only regular files
// (and build directories) owned by this user are removed; symbolic links are
// never followed.
func Cleanup(dir string) (CleanupReport, error) {
	var rep CleanupReport
	ents, err := os.ReadDir(dir)
	if err != nil {
		return rep, fmt.Errorf("cleanup: %w", err)
	}
	jobs := map[string][]string{}
	for _, e := range ents {
		if job, _, ok := format.SplitName(e.Name()); ok {
			jobs[job] = append(jobs[job], e.Name())
		}
	}
	for job, names := range jobs {
		sort.Strings(names)
		removed, reason := cleanJob(dir, job, names)
		rep.Removed = append(rep.Removed, removed...)
		if reason != "" {
			rep.Skipped = append(rep.Skipped, Skipped{Job: job, Names: names, Reason: reason})
		}
	}
	sort.Strings(rep.Removed)
	sort.Slice(rep.Skipped, func(a, b int) bool { return rep.Skipped[a].Job < rep.Skipped[b].Job })
	return rep, nil
}

// cleanJob removes the objects of job (names, in dir) if its launcher is
// gone, and otherwise says why not.
func cleanJob(dir, job string, names []string) (removed []string, skipped string) {
	lockPath := jobLockPath(dir, job)
	// Read-only is enough to flock, and spares a lock file whose mode lost
	// its write bit.
	f, err := os.OpenFile(lockPath, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	switch {
	case os.IsNotExist(err):
		for _, n := range names {
			if removeOwned(dir, n, orphanAge) {
				removed = append(removed, n)
			}
		}
		if len(removed) < len(names) {
			return removed, SkipRecent
		}
		return removed, ""
	case errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM):
		return nil, SkipPermission
	case err != nil:
		return nil, err.Error()
	}
	defer f.Close()
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Uid != uint32(os.Geteuid()) {
		return nil, SkipNotOurs
	}
	// Checked before any flock: a launcher between creating and locking its
	// file holds no lock yet, and our lock would make its own fail.
	if time.Since(time.Unix(st.Mtim.Unix())) < LockSettle {
		return nil, SkipStarting
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, SkipRunning
		}
		return nil, fmt.Sprintf("flock %s: %v", filepath.Base(lockPath), err)
	}
	if b := buildDirOf(f, job); b != "" {
		removed = append(removed, b)
	}
	for _, n := range names {
		if filepath.Join(dir, n) != lockPath && removeOwned(dir, n, 0) {
			removed = append(removed, n)
		}
	}
	if os.Remove(lockPath) == nil {
		removed = append(removed, filepath.Base(lockPath))
	}
	return removed, ""
}

// buildDirOf removes the build directory that job's lock file f names, if
// it is one (an absolute path named format.BuildDirName(job), a directory of
// this user, not a link), and returns its path; "" if there is none.
func buildDirOf(f *os.File, job string) string {
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return ""
	}
	path, _, _ := strings.Cut(string(b), "\n")
	if !filepath.IsAbs(path) || filepath.Base(path) != format.BuildDirName(job) || filepath.Clean(path) != path {
		return ""
	}
	var st unix.Stat_t
	if unix.Lstat(path, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Uid != uint32(os.Geteuid()) {
		return ""
	}
	if os.RemoveAll(path) != nil {
		return ""
	}
	return path
}

// removeOwned removes dir/name if it is a regular file of ours (never
// following a link) last modified at least minAge ago.
func removeOwned(dir, name string, minAge time.Duration) bool {
	path := filepath.Join(dir, name)
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Uid != uint32(os.Geteuid()) {
		return false
	}
	if time.Since(time.Unix(st.Mtim.Unix())) < minAge {
		return false
	}
	return os.Remove(path) == nil
}
