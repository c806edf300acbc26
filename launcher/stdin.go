package launcher

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// stdinRelay carries shmrun's terminal to rank 0. The ranks run in a
// process group of their own (so that the launcher can signal them all,
// and their children), which is never the terminal's foreground group: a
// rank reading the terminal itself is stopped by SIGTTIN at its first
// read, and the job hangs. So when shmrun's stdin is its controlling
// terminal and shmrun is in the foreground, shmrun reads it and rank 0
// gets the other end of a socket pair (not a pipe: a write to a pipe whose
// reader has exited raises SIGPIPE, which the CLI takes as a reason to end
// the job; a socket is written with MSG_NOSIGNAL).
type stdinRelay struct {
	tty   *os.File // the terminal, opened anew and non-blocking: Close ends a Read
	rank0 *os.File // rank 0's end, the launcher's copy of it
}

// newStdinRelay returns a relay for f when f is the controlling terminal
// of shmrun's foreground process group, and nil (rank 0 gets f itself)
// otherwise or when the relay cannot be set up.
func newStdinRelay(f *os.File) *stdinRelay {
	fd := int(f.Fd())
	if pg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP); err != nil || pg != unix.Getpgrp() {
		return nil
	}
	// A new open file description of the terminal, so that making it
	// non-blocking (for the poller, which lets Close end a pending Read
	// when the job ends) does not change the shell's.
	tty, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", fd), os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		tty.Close()
		return nil
	}
	r := &stdinRelay{tty: tty, rank0: os.NewFile(uintptr(fds[0]), "shmrun-stdin")}
	go r.copy(fds[1])
	return r
}

// copy sends what the terminal gives to rank 0 until the terminal's end of
// file, the relay's close, or rank 0's end of the socket closing.
func (r *stdinRelay) copy(out int) {
	defer unix.Close(out)
	defer unix.Shutdown(out, unix.SHUT_WR) // rank 0 sees its end of file
	buf := make([]byte, 32<<10)
	for {
		n, err := r.tty.Read(buf)
		for p := buf[:n]; len(p) > 0; {
			m, werr := unix.SendmsgN(out, p, nil, nil, unix.MSG_NOSIGNAL)
			if werr == unix.EINTR {
				continue
			}
			if werr != nil {
				return
			}
			p = p[m:]
		}
		if err != nil { // io.EOF included: the user typed the end of file
			return
		}
	}
}

// started closes the launcher's copy of rank 0's end once the ranks are
// started: kept open, it would let the relay go on filling a socket that
// nobody reads after rank 0 exits. Safe on nil.
func (r *stdinRelay) started() {
	if r != nil {
		r.rank0.Close()
	}
}

// close stops the relay once every rank is reaped; safe on nil.
func (r *stdinRelay) close() {
	if r == nil {
		return
	}
	r.rank0.Close() // when the ranks were never started
	r.tty.Close()
}
