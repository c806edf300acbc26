package shm

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// ReadProcess copies len(dst) bytes at address src of process pid into dst
// (process_vm_readv), resuming after a partial read. The kernel allows it
// when this process may ptrace pid (same user, and Yama's ptrace_scope 0,
// or 1 with pid's PR_SET_PTRACER): an error wraps EPERM otherwise, and
// EFAULT for an address pid has not mapped.
func ReadProcess(pid int, dst []byte, src uint64) error {
	return vmCopy(pid, dst, src, false)
}

// WriteProcess copies src to address dst of process pid
// (process_vm_writev), as ReadProcess.
func WriteProcess(pid int, dst uint64, src []byte) error {
	return vmCopy(pid, src, dst, true)
}

func vmCopy(pid int, local []byte, remote uint64, write bool) error {
	verb := "reading"
	if write {
		verb = "writing"
	}
	for len(local) > 0 {
		iov := []unix.Iovec{{Base: &local[0]}}
		iov[0].SetLen(len(local))
		riov := []unix.RemoteIovec{{Base: uintptr(remote), Len: len(local)}}
		var n int
		var err error
		if write {
			n, err = unix.ProcessVMWritev(pid, iov, riov, 0)
		} else {
			n, err = unix.ProcessVMReadv(pid, iov, riov, 0)
		}
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return fmt.Errorf("%s %d bytes at %#x of process %d: %w", verb, len(local), remote, pid, err)
		case n == 0:
			return fmt.Errorf("%s %d bytes at %#x of process %d: no progress", verb, len(local), remote, pid)
		}
		local, remote = local[n:], remote+uint64(n)
	}
	return nil
}
