package shm

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// ErrNoSpace is the class of a reservation that the shm directory cannot
// hold. The error that wraps it names the directory, the bytes asked and the
// bytes free.
var ErrNoSpace = errors.New("not enough shared memory")

// NoSpaceError is returned by Reserve and Populate when the filesystem
// cannot hold the reservation.
type NoSpaceError struct {
	Dir   string
	Asked int64 // bytes this reservation asked for
	Free  int64 // bytes free in Dir just before the reservation began (-1 if unknown)
}

func (e *NoSpaceError) Error() string {
	free := fmt.Sprintf("only %d bytes free", e.Free)
	if e.Free < 0 {
		free = "free space unknown"
	}
	if e.Dir == "" { // a memfd: in no directory, limited by memory alone
		return fmt.Sprintf("shm: cannot reserve %d bytes of memory for a memfd: %s (the machine, or this process's memory cgroup, has no more)", e.Asked, free)
	}
	return fmt.Sprintf("shm: cannot reserve %d bytes in %s: %s (a small tmpfs, e.g. Docker's 64 MiB "+
		"/dev/shm? choose a larger directory with --shm-dir, or run shmrun with --shm=memfd)",
		e.Asked, e.Dir, free)
}

func (e *NoSpaceError) Unwrap() error { return ErrNoSpace }

// CheckFree returns a *NoSpaceError if dir has fewer than length bytes free
// now (nil when statfs fails: the reservation itself will tell). A check is
// not a promise, since others may take the space meanwhile, but it turns a
// request far beyond the filesystem into an error at once, with the numbers
// as they were, instead of filling the filesystem first.
func CheckFree(dir string, length int64) error {
	if free := FreeBytes(dir); free >= 0 && length > free {
		return &NoSpaceError{Dir: dir, Asked: length, Free: free}
	}
	return nil
}

// reserveChunk bounds one fallocate call. tmpfs undoes a whole fallocate when a
// signal arrives (and the Go runtime sends signals for preemption), so a huge
// single call could retry forever; chunks keep the progress made.
const reserveChunk = 64 << 20

// Reserve allocates backing pages for [off, off+length) of the object, so that
// a full filesystem is an error now rather than a SIGBUS at first touch. It is
// called by each rank for its own part, from its own process, so under the
// default memory policy the pages land on that rank's NUMA node. It retries on
// EINTR. Its filesystem's free space is checked first (fstatfs: a request
// beyond it fails at once); dir names where the object lives in the error. A
// reservation that fails midway gives back the pages it took (a punched
// hole) before it returns.
func (o *Object) Reserve(dir string, off, length int64) error {
	free := o.freeBytes()
	if free >= 0 && length > free {
		return &NoSpaceError{Dir: dir, Asked: length, Free: free}
	}
	return o.reserve(dir, off, length, free)
}

// reserve is Reserve after the statfs check; free is what it found.
func (o *Object) reserve(dir string, off, length, free int64) error {
	start, end := off, off+length
	for off < end {
		n := min(end-off, reserveChunk)
		err := unix.Fallocate(o.fd, 0, off, n)
		switch {
		case err == nil:
			off += n
		case errors.Is(err, unix.EINTR):
			// retry the same chunk
		case errors.Is(err, unix.ENOSPC), errors.Is(err, unix.ENOMEM):
			o.punch(start, off)
			return &NoSpaceError{Dir: dir, Asked: length, Free: free}
		default:
			o.punch(start, off)
			return fmt.Errorf("shm: reserve %d bytes at %d in %s: %w", n, off, o.describe(), err)
		}
	}
	return nil
}

// punch gives back the pages of [from, to) that a failed reservation took.
// Best effort: the object is about to be dropped anyway; this only frees the
// filesystem now rather than when the last rank lets go of it.
func (o *Object) punch(from, to int64) {
	for to > from {
		err := unix.Fallocate(o.fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, from, to-from)
		if !errors.Is(err, unix.EINTR) {
			return
		}
	}
}

// freeBytes reports the bytes available in the object's own filesystem
// (its tmpfs; for a memfd, the kernel's internal one), or -1 if fstatfs
// fails. It asks the descriptor, not a directory: a memfd lives in no
// directory, and a named object's directory could be another mount.
func (o *Object) freeBytes() int64 {
	var st unix.Statfs_t
	if err := unix.Fstatfs(o.fd, &st); err != nil || st.Blocks == 0 {
		// A tmpfs without a size limit (the kernel's own, behind every
		// memfd) reports no blocks at all: no limit to check here.
		return -1
	}
	return int64(st.Bavail) * st.Bsize
}

// FreeBytes reports the bytes available in dir, or -1 if statfs fails.
func FreeBytes(dir string) int64 {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return -1
	}
	return int64(st.Bavail) * st.Bsize
}

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14): fault in, writable,
// every page of a range, allocating it if needed.
const madvPopulateWrite = 23

// Populate reserves [off, off+length) of the object through this process's
// mapping m of it: the kernel allocates, zeroes and maps every page in one
// pass, from this process (so under the default memory policy the pages land
// on this rank's NUMA node, as with first touch). Compared with Reserve
// (fallocate) it is what a window's owner wants: ranks populating their parts
// of one file do not serialize on the file's inode lock, and the owner's
// later first touches cost nothing. A full filesystem is a *NoSpaceError now,
// never a SIGBUS later. Kernels without MADV_POPULATE_WRITE fall back to
// Reserve. It retries on EINTR and works in chunks, like Reserve; like
// Reserve it checks its filesystem's free space first and gives back what it took when
// it fails midway (MADV_REMOVE).
func (o *Object) Populate(dir string, m []byte, off, length int64) error {
	if off < 0 || length < 0 {
		// A negative offset would round down to a page before m.
		return fmt.Errorf("shm: populate %d bytes at %d of %s: %w", length, off, o.describe(), ErrSize)
	}
	start := off &^ (PageSize - 1)
	end, _ := AlignUp(off+length, PageSize)
	end = min(end, int64(len(m)))
	free := o.freeBytes()
	if free >= 0 && end-start > free {
		return &NoSpaceError{Dir: dir, Asked: length, Free: free}
	}
	return o.populate(dir, m, off, length, free)
}

// populate is Populate after the statfs check; free is what it found.
func (o *Object) populate(dir string, m []byte, off, length, free int64) error {
	start := off &^ (PageSize - 1)
	end, _ := AlignUp(off+length, PageSize)
	end = min(end, int64(len(m)))
	giveBack := func(at int64) {
		if at > start {
			_ = unix.Madvise(m[start:at], unix.MADV_REMOVE)
		}
	}
	for at := start; at < end; {
		n := min(end-at, reserveChunk)
		err := unix.Madvise(m[at:at+n], madvPopulateWrite)
		switch {
		case err == nil:
			at += n
		case errors.Is(err, unix.EINTR):
		case errors.Is(err, unix.EINVAL):
			if err := o.reserve(dir, at, end-at, free); err != nil { // an older kernel
				giveBack(at)
				return err
			}
			return nil
		case errors.Is(err, unix.EFAULT), errors.Is(err, unix.ENOMEM), errors.Is(err, unix.ENOSPC):
			// A page that cannot be allocated is SIGBUS to a fault: here
			// the madvise fails instead.
			giveBack(at + n) // the failed chunk may have kept some pages
			return &NoSpaceError{Dir: dir, Asked: length, Free: free}
		default:
			giveBack(at + n)
			return fmt.Errorf("shm: populate %d bytes at %d of %s: %w", n, at, o.describe(), err)
		}
	}
	return nil
}
