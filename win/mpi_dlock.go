//go:build mpi

package win

import (
	"sync/atomic"

	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/internal/format"
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
// L is the ticket reader-writer lock word of the shmrun backend
// (lockword.go, docs/FORMAT.md): FIFO per target, so neither writers nor
// readers starve. Exclusive Lock: one add draws a ticket and raises X;
// wait for the turn (W), then for A to drain. Shared Lock: one add draws
// a ticket; wait until R reaches it, then admit the next reader. Unlocks
// are one add each.
//
// LockAll is a shared lock on every target: one add to A, then a scan of
// every L's X. Each side writes (a locked instruction, a full fence)
// before it reads the other's word, so of an exclusive Lock and a LockAll
// that race at least one sees the other; the exclusive locker keeps X
// raised while it waits for A, so LockAll cannot starve it. A LockAll
// that sees X raised gives A back, counts itself in Q (the high half of
// A's word) and waits for that target's X to drop; an exclusive locker
// holding no other lock waits for Q to reach 0 before it draws (or until
// another goroutine of its rank is granted one), so the writers drain and
// a stream of them cannot starve LockAll, while one already holding a lock
// draws at once (the LockAll may wait for it; a rank that always holds
// one, locking hand over hand, can still keep LockAll out).
// LockAll holds nothing while it waits, so a rank holding exclusive locks
// on two targets and another in LockAll cannot deadlock.

// Every change is followed by the doorbell's Notify (a load of the
// sleepers count, a wake only if there are sleepers); waiters spin, yield,
// then sleep on the futex of the doorbell they wait on (package barrier's
// Event and policy).

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
	// nheld counts the locks of held: a goroutine held back behind a
	// LockAll goes once another goroutine of this rank holds a lock.
	nheld  atomic.Int32
	policy barrier.Policy
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

// lock takes target's lock, exclusive or shared; holding says this rank
// holds (or is taking, in another goroutine) a lock on another target.
func (d *dlocks) lock(target int, exclusive, holding bool) {
	if !exclusive {
		d.lockShared(target)
		d.held[target] = lockShared
		d.granted()
		return
	}
	if atomic.LoadUint64(d.all.word)>>32 != 0 && !holding {
		// A LockAll waits for the writers to drain: hold back, until
		// another goroutine of this rank is granted a lock (the LockAll
		// may then wait for it, and it for this one).
		d.await(&d.all, func() bool { return atomic.LoadUint64(d.all.word)>>32 == 0 || d.nheld.Load() > 0 })
	}
	l := &d.targets[target]
	t := ticketOf(addLock(l.word, format.LockExclusive))
	if lwW(atomic.LoadUint64(l.word)) != t {
		d.await(l, func() bool { return lwW(atomic.LoadUint64(l.word)) == t })
	}
	d.held[target] = lockExclusive
	// LockAll holders, who may not have seen X: wait them out.
	if atomic.LoadUint64(d.all.word)&format.LockAllHolders != 0 {
		d.await(&d.all, func() bool { return atomic.LoadUint64(d.all.word)&format.LockAllHolders == 0 })
	}
	d.granted()
}

// granted counts a lock taken and wakes goroutines of this rank held back
// behind a LockAll.
func (d *dlocks) granted() {
	d.nheld.Add(1)
	if atomic.LoadUint64(d.all.word)>>32 != 0 {
		d.all.ev.Notify()
	}
}

// lockShared waits for a shared turn on target and admits the next reader.
func (d *dlocks) lockShared(target int) {
	l := &d.targets[target]
	if t := ticketOf(addLock(l.word, format.LockShared)); lwR(atomic.LoadUint64(l.word)) != t {
		d.await(l, func() bool { return lwR(atomic.LoadUint64(l.word)) == t })
	}
	addLock(l.word, format.LockOneR)
	l.ev.Notify() // a reader queued behind may enter now
}

// unlock releases target's lock as lock took it.
func (d *dlocks) unlock(target int) {
	l := &d.targets[target]
	switch d.held[target] {
	case lockShared:
		addLock(l.word, format.LockSharedUnlock)
	case lockExclusive:
		addLock(l.word, format.LockExclusiveUnlock)
	default:
		return // ModeNoCheck: nothing was taken
	}
	d.held[target] = 0
	d.nheld.Add(-1)
	l.ev.Notify()
}

// lockAll takes the LockAll count once no writer holds or waits anywhere,
// counting itself in Q meanwhile.
func (d *dlocks) lockAll() {
	waiting := false
	for {
		atomic.AddUint64(d.all.word, 1)
		w := -1
		for r := range d.targets {
			if lwX(atomic.LoadUint64(d.targets[r].word)) != 0 {
				w = r
				break
			}
		}
		if w < 0 {
			break
		}
		// A writer holds or waits for target w: step back for it.
		atomic.AddUint64(d.all.word, ^uint64(0))
		if !waiting {
			atomic.AddUint64(d.all.word, format.LockAllWaiter)
			waiting = true
		}
		d.all.ev.Notify()
		l := &d.targets[w]
		d.await(l, func() bool { return lwX(atomic.LoadUint64(l.word)) == 0 })
	}
	if waiting {
		atomic.AddUint64(d.all.word, ^uint64(format.LockAllWaiter-1))
		d.all.ev.Notify()
	}
	d.heldAll = true
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
