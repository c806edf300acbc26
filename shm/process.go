package shm

import (
	"errors"
	"fmt"

	"github.com/shmrun/shmrun/internal/raw"
	"golang.org/x/sys/unix"
)

// ReadProcess copies len(dst) bytes at address src of process pid into dst
// (process_vm_readv, a MiB a call), resuming after a partial read. The
// kernel allows it when this process may ptrace pid (same user, and Yama's
// ptrace_scope 0, or 1 with pid's PR_SET_PTRACER): an error wraps EPERM
// otherwise, and EFAULT for an address pid has not mapped.
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
		// A MiB a call, unseen by the Go scheduler (raw.ProcessVM).
		n, err := raw.ProcessVM(pid, local, remote, write)
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

// maxIov is the most iovecs one process_vm_readv/writev takes (UIO_MAXIOV).
const maxIov = 1024

// Piece is n bytes at address Addr of another process.
type Piece struct {
	Addr uint64
	Len  int
}

// WriteProcessPieces copies src, in order, into the pieces of process pid
// (their lengths must add up to len(src)): one process_vm_writev per 1024
// pieces, resuming after a partial write. As WriteProcess for errors.
func WriteProcessPieces(pid int, pieces []Piece, src []byte) error {
	return vmCopyPieces(pid, src, pieces, true)
}

// ReadProcessPieces copies the pieces of process pid, in order, into dst.
func ReadProcessPieces(pid int, dst []byte, pieces []Piece) error {
	return vmCopyPieces(pid, dst, pieces, false)
}

func vmCopyPieces(pid int, local []byte, pieces []Piece, write bool) error {
	// Only positive pieces reach the kernel, which copies their sum into
	// local: a negative length (or a sum that wraps) that still adds up to
	// len(local) would let it write past the end of local.
	total := 0
	for _, p := range pieces {
		if p.Len < 0 || p.Len > len(local)-total {
			return fmt.Errorf("process memory copy: %d bytes for a piece of %d after %d: %w", len(local), p.Len, total, unix.EINVAL)
		}
		total += p.Len
	}
	if total != len(local) {
		return fmt.Errorf("process memory copy: %d bytes for pieces of %d", len(local), total)
	}
	riov := make([]unix.RemoteIovec, 0, min(len(pieces), maxIov))
	for len(pieces) > 0 {
		riov = riov[:0]
		n := 0
		for _, p := range pieces[:min(len(pieces), maxIov)] {
			if p.Len > 0 {
				riov = append(riov, unix.RemoteIovec{Base: uintptr(p.Addr), Len: p.Len})
				n += p.Len
			}
		}
		k := min(len(pieces), maxIov)
		if n > 0 {
			iov := []unix.Iovec{{Base: &local[0]}}
			iov[0].SetLen(n)
			var got int
			var err error
			if write {
				got, err = unix.ProcessVMWritev(pid, iov, riov, 0)
			} else {
				got, err = unix.ProcessVMReadv(pid, iov, riov, 0)
			}
			switch {
			case errors.Is(err, unix.EINTR):
				continue
			case err != nil:
				return fmt.Errorf("%d pieces of process %d: %w", len(riov), pid, err)
			case got < n:
				// Partial: skip the pieces done, shorten the one cut.
				done := got
				i := 0
				for done >= pieces[i].Len {
					done -= pieces[i].Len
					i++
				}
				if got == 0 {
					return fmt.Errorf("%d pieces of process %d: no progress", len(riov), pid)
				}
				rest := append([]Piece{{pieces[i].Addr + uint64(done), pieces[i].Len - done}}, pieces[i+1:]...)
				pieces, local = rest, local[got:]
				continue
			}
			local = local[n:]
		}
		pieces = pieces[k:]
	}
	return nil
}
