package shm

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// OpenPeer opens the object that process pid holds as descriptor fd (a
// memfd, typically: it has no name to open by) through /proc/pid/fd/fd, and
// checks it as Open does (a regular file of this user, at least minSize
// bytes). The kernel allows it for a process of the same user that it
// would let this one read (ptrace read access; Yama's ptrace_scope does not
// restrict it). The holder must keep fd open until the call returns.
func OpenPeer(pid, fd int, minSize int64) (*Object, error) {
	path := fmt.Sprintf("/proc/%d/fd/%d", pid, fd)
	nfd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("shm: open %s: %w", path, err)
	}
	o := &Object{fd: nfd}
	if err := o.check(minSize); err != nil {
		o.Close()
		return nil, fmt.Errorf("%w (opened as %s)", err, path)
	}
	return o, nil
}
