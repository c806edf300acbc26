package raw

// The asymmetric fence: a waker that publishes a word and then reads a
// sleepers count needs a full fence between the two (store, then load: the
// one reordering x86 allows), or a sleeper that counted itself and then read
// the old word sleeps while the waker reads a count of zero. The fence costs
// the waker a locked instruction and the drain of its store buffer in every
// call. membarrier(2)'s global expedited command moves that cost to the
// sleeper, which is about to block anyway: when it returns, every CPU that
// runs a thread of a process registered for it has passed a full barrier
// (and a thread not running has been switched out, which is one). So a
// sleeper that counts itself, calls HeavyFence, then reads the word, and a
// waker of a registered process that stores the word and then loads the
// count, in program order, cannot both miss: if the waker's barrier comes
// before its load, the load sees the count; if after its store, the
// sleeper's read sees the word.

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Commands of linux/membarrier.h (x/sys/unix does not define them).
const (
	membarrierQuery                   = 0
	membarrierGlobalExpedited         = 1 << 1
	membarrierRegisterGlobalExpedited = 1 << 2
)

var (
	heavyOnce, lightOnce sync.Once
	heavy                bool        // the kernel offers the global expedited command
	light                atomic.Bool // this process is registered for it
)

func probeHeavy() {
	heavyOnce.Do(func() {
		cmds, _, errno := unix.RawSyscall(unix.SYS_MEMBARRIER, membarrierQuery, 0, 0)
		heavy = errno == 0 && cmds&membarrierGlobalExpedited != 0 && cmds&membarrierRegisterGlobalExpedited != 0
	})
}

// RegisterLightFence registers this process for the global expedited
// membarrier command (the first call tries; later ones report its outcome)
// and reports whether it is registered: then, and only then, may its
// wakers skip the full fence between a store and the load of a sleepers
// count (LightFence). It fails (false) where the kernel has no such
// command or a seccomp filter refuses it; the wakers then keep their
// fence, which is always correct.
func RegisterLightFence() bool {
	lightOnce.Do(func() {
		probeHeavy()
		if !heavy {
			return
		}
		if _, _, errno := unix.RawSyscall(unix.SYS_MEMBARRIER, membarrierRegisterGlobalExpedited, 0, 0); errno == 0 {
			light.Store(true)
		}
	})
	return light.Load()
}

// LightFence reports whether this process is registered (RegisterLightFence):
// a waker may then order its store before its load of the sleepers count
// by program order alone (no reordering by the compiler: the store is an
// atomic or assembly call), since every sleeper calls HeavyFence.
func LightFence() bool { return light.Load() }

// HeavyFence is the sleeper's side: after counting itself among a word's
// sleepers and before reading the word, a full barrier on every CPU that
// runs a registered process. Every sleeper on a word whose wakers may
// skip their fence calls it, registered or not, whenever the kernel
// offers the command (a waker in another process may be registered). It
// costs a system call and an interrupt to each such CPU (0.1-0.2 µs here);
// callers are about to sleep. It reports false if the kernel has the
// command and it failed: a fence-less waker may then miss the sleeper,
// which should sleep briefly. (Where the kernel lacks the command, no
// process is registered and every waker fences: true.)
func HeavyFence() bool {
	probeHeavy()
	if !heavy {
		return true
	}
	_, _, errno := unix.Syscall(unix.SYS_MEMBARRIER, membarrierGlobalExpedited, 0, 0)
	return errno == 0
}
