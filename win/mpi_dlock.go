//go:build mpi

package win

import (
	"sync/atomic"

	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/internal/raw"
)

// Passive-target locks of a direct window. Every rank of a direct window
// takes the direct path, so its locks need not be the MPI's: they are
// words in the region after the last rank's part, after the lock stripes:
// one line for the window (the LockAll count A) and one line per target
// (its lock word L, then a doorbell: a wake count and a sleepers count).
// An exclusive Lock and its Unlock are then two atomic instructions, not
// two MPI calls (Open MPI's MPI_Win_lock and MPI_Win_unlock at
// MPI_THREAD_MULTIPLE take 32 ns together here, and the cgo calls around
// them ~46 more).
//
// L holds the readers (bits 0-31), the writers waiting (32-47) and the
// writer holding it (bit 48). Shared Lock: when no writer holds or waits,
// one compare-and-swap adds a reader; Shared Unlock removes it. Exclusive
// Lock: one compare-and-swap from 0 to the holder bit; else it counts
// itself waiting (so that new readers hold back and cannot starve it) and
// takes the holder bit once the readers and the holder are gone; then it
// waits for A to drain. Exclusive Unlock clears the bit.
//
// LockAll is a shared lock on every target: one add to A, then a scan of
// every L; a held or awaited writer bit sends it back to wait for
// that target. Each side writes (a locked instruction, a full fence)
// before it reads the other's word, so of an exclusive Lock and a LockAll
// that race at least one sees the other; the exclusive locker keeps its
// bit while it waits for A, so LockAll cannot starve it, and LockAll holds
// nothing while it waits, so a rank holding exclusive locks on two
// targets and another in LockAll cannot deadlock.
//
// Every change is followed by the doorbell's Notify (a load of the
// sleepers count, a wake only if there are sleepers); waiters spin, yield,
// then sleep on the futex of the doorbell they wait on (package barrier's
// Event and policy).

const (
	dlReader  = 1
	dlReaders = 1<<32 - 1
	dlWaiter  = 1 << 32
	dlWaiters = (1<<16 - 1) << 32
	dlHolder  = 1 << 48
)

// dlock is one lock line: the word and its doorbell.
type dlock struct {
	word *uint64
	ev   barrier.Event
}

// dlocks are a direct window's locks, as this process sees them.
type dlocks struct {
	all     dlock   // A: the LockAll holders
	targets []dlock // L per target
	// held is this rank's lock on each target as taken here (0 none,
	// lockShared, lockExclusive): with ModeNoCheck a Lock takes none.
	held    []uint8
	heldAll bool
	policy  barrier.Policy
}

const (
	lockShared    = 1
	lockExclusive = 2
)

// directLockLines is the lines the locks of a window of n ranks take.
func directLockLines(n int) int { return 1 + n }

// newDLocks lays the locks of n targets over mem (directLockLines(n)
// lines of line bytes each, zeroed by the last rank before the window's
// creation returns anywhere).
func newDLocks(mem []byte, n, line int) *dlocks {
	at := func(i int) dlock {
		o := int64(i * line)
		return dlock{word: raw.Uint64At(mem, o), ev: barrier.Event{Seq: raw.Uint32At(mem, o+8), Sleepers: raw.Uint32At(mem, o+12)}}
	}
	d := &dlocks{all: at(0), targets: make([]dlock, n), held: make([]uint8, n), policy: barrier.DefaultPolicy}
	for r := range n {
		d.targets[r] = at(1 + r)
	}
	return d
}

// await waits on l's doorbell until ok holds.
func (d *dlocks) await(l *dlock, ok func() bool) {
	// No abort word: an MPI job that ends kills its processes.
	_ = l.ev.Await(nil, d.policy, ok)
}

// lock takes target's lock, exclusive or shared.
func (d *dlocks) lock(target int, exclusive bool) {
	l := &d.targets[target]
	if !exclusive {
		for {
			v := atomic.LoadUint64(l.word)
			if v&(dlHolder|dlWaiters) == 0 {
				if atomic.CompareAndSwapUint64(l.word, v, v+dlReader) {
					d.held[target] = lockShared
					return
				}
				continue
			}
			d.await(l, func() bool { return atomic.LoadUint64(l.word)&(dlHolder|dlWaiters) == 0 })
		}
	}
	if !atomic.CompareAndSwapUint64(l.word, 0, dlHolder) {
		atomic.AddUint64(l.word, dlWaiter)
		for {
			v := atomic.LoadUint64(l.word)
			if v&(dlHolder|dlReaders) == 0 {
				if atomic.CompareAndSwapUint64(l.word, v, v-dlWaiter+dlHolder) {
					break
				}
				continue
			}
			d.await(l, func() bool { return atomic.LoadUint64(l.word)&(dlHolder|dlReaders) == 0 })
		}
	}
	d.held[target] = lockExclusive
	// LockAll holders, who may not have seen the bit: wait them out.
	if atomic.LoadUint64(d.all.word) != 0 {
		d.await(&d.all, func() bool { return atomic.LoadUint64(d.all.word) == 0 })
	}
}

// unlock releases target's lock as lock took it.
func (d *dlocks) unlock(target int) {
	l := &d.targets[target]
	switch d.held[target] {
	case lockShared:
		atomic.AddUint64(l.word, ^uint64(dlReader-1))
	case lockExclusive:
		atomic.AddUint64(l.word, ^uint64(dlHolder-1))
	default:
		return // ModeNoCheck: nothing was taken
	}
	d.held[target] = 0
	l.ev.Notify()
}

// lockAll takes a shared lock on every target.
func (d *dlocks) lockAll() {
	for {
		atomic.AddUint64(d.all.word, 1)
		w := -1
		for r := range d.targets {
			if atomic.LoadUint64(d.targets[r].word)&(dlHolder|dlWaiters) != 0 {
				w = r
				break
			}
		}
		if w < 0 {
			d.heldAll = true
			return
		}
		// A writer holds or waits for target w: step back for it.
		atomic.AddUint64(d.all.word, ^uint64(0))
		d.all.ev.Notify()
		l := &d.targets[w]
		d.await(l, func() bool { return atomic.LoadUint64(l.word)&(dlHolder|dlWaiters) == 0 })
	}
}

// unlockAll releases lockAll's locks.
func (d *dlocks) unlockAll() {
	if !d.heldAll {
		return // ModeNoCheck
	}
	d.heldAll = false
	atomic.AddUint64(d.all.word, ^uint64(0))
	d.all.ev.Notify()
}
