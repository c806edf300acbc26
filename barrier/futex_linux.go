package barrier

// Futex wait and wake on 32-bit words of shared memory.
//
// Contract (as in the Go runtime's lock_futex.go): futexWait sleeps only if
// *addr == val when the kernel looks, and may return early for any reason — a
// wake, a changed value, a signal, the timeout, or spuriously. Callers always
// re-check their condition in a loop. The words live in MAP_SHARED memory
// mapped by several processes, so the private flag must never be used: the
// kernel would key the wait by this process's address space and a waker in
// another process would never find it.

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Op codes from linux/futex.h (x/sys/unix does not define them).
const (
	futexWaitOp = 0 // FUTEX_WAIT
	futexWakeOp = 1 // FUTEX_WAKE
)

// futexWait sleeps while *addr == val, for at most timeout. It goes through
// Syscall6, not RawSyscall, so the Go scheduler can hand this thread's P to
// other goroutines while it sleeps.
func futexWait(addr *uint32, val uint32, timeout time.Duration) {
	ts := unix.NsecToTimespec(int64(timeout))
	// EINTR, EAGAIN (value changed) and ETIMEDOUT all mean "look again".
	_, _, _ = unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWaitOp,
		uintptr(val), uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// futexWake wakes up to n processes sleeping on addr.
func futexWake(addr *uint32, n int) {
	_, _, _ = unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWakeOp,
		uintptr(n), 0, 0, 0)
}

// yieldCPU gives the CPU to another runnable thread, possibly of another
// process (runtime.Gosched would only switch goroutines). Unlike the futex
// wait it never blocks, so it goes through RawSyscall: Syscall's scheduler
// bookkeeping lets sysmon hand this thread's P to a new thread whenever the
// yield takes a while (it does when ranks outnumber cores), and those extra
// threads then compete with the ranks for the cores (bench/NOTES.md: an
// oversubscribed barrier several times slower through Syscall).
func yieldCPU() { _, _, _ = unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }
