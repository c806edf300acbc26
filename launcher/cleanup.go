package launcher

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
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

// Cleanup removes the objects in dir of jobs whose launcher is gone, and
// returns the names it removed. A job is gone when its lock file can be
// flocked (and is older than LockSettle): the launcher holds the lock for the
// job's life and the kernel drops it when the launcher dies, so there is no
// pid-reuse race. A live job's objects are never touched. Only regular files
// owned by this user are removed; symbolic links are never followed.
func Cleanup(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("cleanup: %w", err)
	}
	jobs := map[string][]string{}
	for _, e := range ents {
		if job, _, ok := format.SplitName(e.Name()); ok {
			jobs[job] = append(jobs[job], e.Name())
		}
	}
	var removed []string
	for job, names := range jobs {
		lockPath := jobLockPath(dir, job)
		f, err := os.OpenFile(lockPath, os.O_RDWR|unix.O_NOFOLLOW, 0)
		switch {
		case err == nil:
			dead := ownedRegular(f, LockSettle) && unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil
			if dead {
				for _, n := range names {
					if filepath.Join(dir, n) != lockPath && removeOwned(dir, n, 0) {
						removed = append(removed, n)
					}
				}
				if os.Remove(lockPath) == nil {
					removed = append(removed, filepath.Base(lockPath))
				}
			}
			f.Close()
		case os.IsNotExist(err):
			for _, n := range names {
				if removeOwned(dir, n, orphanAge) {
					removed = append(removed, n)
				}
			}
		}
	}
	sort.Strings(removed)
	return removed, nil
}

// ownedRegular reports whether f is a regular file of ours last modified at
// least minAge ago.
func ownedRegular(f *os.File, minAge time.Duration) bool {
	var st unix.Stat_t
	return unix.Fstat(int(f.Fd()), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Uid == uint32(os.Geteuid()) &&
		time.Since(time.Unix(st.Mtim.Unix())) >= minAge
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
