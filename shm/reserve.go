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

// NoSpaceError is returned by Reserve when the filesystem is full.
type NoSpaceError struct {
	Dir   string
	Asked int64 // bytes this reservation asked for
	Free  int64 // bytes free in Dir when it failed (-1 if unknown)
}

func (e *NoSpaceError) Error() string {
	return fmt.Sprintf("shm: cannot reserve %d bytes in %s: only %d bytes free (a small tmpfs, "+
		"e.g. Docker's 64 MiB /dev/shm? choose a larger directory with --shm-dir or SHMRUN_SHM_DIR)",
		e.Asked, e.Dir, e.Free)
}

func (e *NoSpaceError) Unwrap() error { return ErrNoSpace }

// reserveChunk bounds one fallocate call. tmpfs undoes a whole fallocate when a
// signal arrives (and the Go runtime sends signals for preemption), so a huge
// single call could retry forever; chunks keep the progress made.
const reserveChunk = 64 << 20

// Reserve allocates backing pages for [off, off+length) of the object, so that
// a full filesystem is an error now rather than a SIGBUS at first touch. It is
// called by each rank for its own part, from its own process, so under the
// default memory policy the pages land on that rank's NUMA node. It retries on
// EINTR. dir is only used in the error message.
func (o *Object) Reserve(dir string, off, length int64) error {
	end := off + length
	for off < end {
		n := min(end-off, reserveChunk)
		err := unix.Fallocate(o.fd, 0, off, n)
		switch {
		case err == nil:
			off += n
		case errors.Is(err, unix.EINTR):
			// retry the same chunk
		case errors.Is(err, unix.ENOSPC), errors.Is(err, unix.ENOMEM):
			return &NoSpaceError{Dir: dir, Asked: length, Free: FreeBytes(dir)}
		default:
			return fmt.Errorf("shm: reserve %d bytes at %d in %s: %w", n, off, o.describe(), err)
		}
	}
	return nil
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
// Reserve. It retries on EINTR and works in chunks, like Reserve.
func (o *Object) Populate(dir string, m []byte, off, length int64) error {
	start := off &^ (PageSize - 1)
	end, _ := AlignUp(off+length, PageSize)
	end = min(end, int64(len(m)))
	for at := start; at < end; {
		n := min(end-at, reserveChunk)
		err := unix.Madvise(m[at:at+n], madvPopulateWrite)
		switch {
		case err == nil:
			at += n
		case errors.Is(err, unix.EINTR):
		case errors.Is(err, unix.EINVAL):
			return o.Reserve(dir, at, end-at) // an older kernel
		case errors.Is(err, unix.EFAULT), errors.Is(err, unix.ENOMEM), errors.Is(err, unix.ENOSPC):
			// A page that cannot be allocated is SIGBUS to a fault: here
			// the madvise fails instead.
			return &NoSpaceError{Dir: dir, Asked: length, Free: FreeBytes(dir)}
		default:
			return fmt.Errorf("shm: populate %d bytes at %d of %s: %w", n, at, o.describe(), err)
		}
	}
	return nil
}
