package raw

// Futex wait and wake on 32-bit words of shared memory.
//
// Contract (as in the Go runtime's lock_futex.go): FutexWait sleeps only if
// *addr == val when the kernel looks, and may return early for any reason — a
// wake, a changed value, a signal, the timeout, or spuriously. Callers always
// re-check their condition in a loop. The words live in MAP_SHARED memory
// mapped by several processes, so the private flag must never be used: the
// kernel would key the wait by this process's address space and a waker in
// another process would never find it.

import (
	"math"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Op codes from linux/futex.h (x/sys/unix does not define them).
const (
	futexWaitOp = 0 // FUTEX_WAIT
	futexWakeOp = 1 // FUTEX_WAKE
)

// FutexWait sleeps while *addr == val, for at most timeout. It goes through
// Syscall6, not RawSyscall, so the Go scheduler can hand this thread's P to
// other goroutines while it sleeps.
//
// Invariant: addr points into memory that stays mapped for the call.
func FutexWait(addr *uint32, val uint32, timeout time.Duration) {
	ts := unix.NsecToTimespec(int64(timeout))
	// EINTR, EAGAIN (value changed) and ETIMEDOUT all mean "look again".
	_, _, _ = unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWaitOp,
		uintptr(val), uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// FutexWake wakes up to n processes sleeping on addr.
//
// Invariant: as FutexWait.
func FutexWake(addr *uint32, n int) {
	_, _, _ = unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWakeOp,
		uintptr(n), 0, 0, 0)
}

// WakeAll wakes every process sleeping on the futex word w.
func WakeAll(w *uint32) { FutexWake(w, math.MaxInt32) }

// YieldThread gives the calling thread's CPU to another runnable thread
// (sched_yield): for a loop that polls work another thread of the process
// does, where CPUs are fewer than the busy threads. A system call (under
// a µs) when nothing else is runnable.
func YieldThread() { unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }
