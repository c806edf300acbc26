package raw

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// ProcessVMMax is the most bytes ProcessVM copies in one call.
const ProcessVMMax = 1 << 20

// ProcessVM copies up to ProcessVMMax bytes between local and the same
// length at address remote of process pid, in one process_vm_readv (or,
// with write, process_vm_writev) of one range each side, and returns the
// bytes copied. It goes through RawSyscall6, so the Go runtime is not told
// of the call: a rank bound to one core has GOMAXPROCS 1, and the runtime's
// sysmon takes the only P from a system call that outlasts its 20 µs tick
// and hands it to another thread, which this one must then wait for on the
// same core when the copy returns (a 1 MiB Bcast between two bound ranks
// took 71-95 µs that way, 55-63 µs with the P kept: bench/NOTES.md). The
// price is that the P runs nothing else and cannot stop for the garbage
// collector during the copy, which ProcessVMMax bounds (~30 µs here).
//
// Invariant: local is not moved during the call (heap memory never is;
// the stack cannot grow while no Go code runs) and the range at remote is
// the caller's to read or write.
func ProcessVM(pid int, local []byte, remote uint64, write bool) (int, error) {
	n := min(len(local), ProcessVMMax)
	if n == 0 {
		return 0, nil
	}
	iov := unix.Iovec{Base: &local[0]}
	iov.SetLen(n)
	riov := unix.RemoteIovec{Base: uintptr(remote), Len: n}
	trap := uintptr(unix.SYS_PROCESS_VM_READV)
	if write {
		trap = unix.SYS_PROCESS_VM_WRITEV
	}
	got, _, e := unix.RawSyscall6(trap, uintptr(pid), uintptr(unsafe.Pointer(&iov)), 1, uintptr(unsafe.Pointer(&riov)), 1, 0)
	if e != 0 {
		return 0, e
	}
	return int(got), nil
}
