package barrier

import "golang.org/x/sys/unix"

// yieldCPU gives the CPU to another runnable thread, possibly of another
// process (runtime.Gosched would only switch goroutines). Unlike the futex
// wait it never blocks, so it goes through RawSyscall: Syscall's scheduler
// bookkeeping lets sysmon hand this thread's P to a new thread whenever the
// yield takes a while (it does when ranks outnumber cores), and those extra
// threads then compete with the ranks for the cores (bench/NOTES.md: an
// oversubscribed barrier several times slower through Syscall).
func yieldCPU() { _, _, _ = unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }
