package win

import (
	"fmt"
	"slices"
	"sync/atomic"
)

// Assert flags for synchronization calls (MPI_MODE_*).
const (
	ModeNoCheck   = 1 << iota // Start, Post, Lock, LockAll: the matching sync is known to be done
	ModeNoStore               // Fence, Post: no local stores since the last sync
	ModeNoPut                 // Fence, Post: no puts or accumulates into this window until the next sync
	ModeNoPrecede             // Fence: the fence closes no epoch
	ModeNoSucceed             // Fence: the fence opens no epoch
)

// LockType selects the lock of Lock (MPI_LOCK_EXCLUSIVE, MPI_LOCK_SHARED).
type LockType int

// Lock types.
const (
	Exclusive LockType = 1
	Shared    LockType = 2
)

func (l LockType) String() string {
	switch l {
	case Exclusive:
		return "exclusive"
	case Shared:
		return "shared"
	}
	return fmt.Sprintf("LockType(%d)", int(l))
}

// epochState is one rank's view of its open epochs. It is written only by
// synchronization calls (ordered by the program) and read by RMA calls, which
// may run on several goroutines inside an epoch.
type epochState struct {
	// accessAll: RMA to every target is allowed (a fence epoch or LockAll).
	accessAll bool
	// tgt[t]: this rank's epoch to target t, tgt* bits. One byte per
	// target keeps the hot paths (RMA, Lock, Unlock, Flush) to one load.
	tgt []uint8

	fenceOpen bool        // a Fence opened a (possible) epoch
	fenceUsed atomic.Bool // an RMA call was made since that Fence

	lockAll bool
	// flushAny is the number of targets while lockAll, else 0: Flush's
	// inlined fast path is the one test uint(rank) < flushAny.
	flushAny uint
	nLocks   int  // targets with tgtLocked set
	allCheck bool // LockAll took the lock word (no ModeNoCheck)

	// gate is zero when Lock and LockAll may take their fast paths: its
	// bits mirror a LockAll, Start or fence epoch being open, no_locks and
	// a freed window, so those paths test one byte, not five fields. Only
	// the setters below (and init, Free) write it.
	gate uint8

	startGroup []int // window ranks of the open access epoch (nil: none)
	postGroup  []int // window ranks of the open exposure epoch (nil: none)
	startsFrom []uint32
	postsTo    []uint32
}

// Bits of epochState.tgt.
const (
	tgtAccess    = 1 << iota // RMA to the target is allowed (locked, or in the Start group)
	tgtExclusive             // an exclusive lock is held
	tgtShared                // a shared lock is held
	tgtNoCheck               // locked with ModeNoCheck: no lock word was taken
	// tgtCheck is set on every target of a window that checks its epoch
	// invariants (the goroutine test mode): the Lock and Unlock fast paths
	// compare the whole byte, so they take the slow paths, which check.
	tgtCheck

	tgtLocked = tgtExclusive | tgtShared
)

// Bits of epochState.gate.
const (
	gateLockAll = 1 << iota // lockAll
	gateStart               // startGroup != nil
	gateFence               // fenceOpen
	gateNoLocks             // the window has info no_locks=true
	gateFreed               // the window is freed
	gateCheck               // the window checks its epoch invariants (see tgtCheck)
)

// setGate sets or clears gate bits.
func (e *epochState) setGate(bits uint8, on bool) {
	if on {
		e.gate |= bits
	} else {
		e.gate &^= bits
	}
}

// setFence opens or closes a fence epoch in the epoch state.
func (e *epochState) setFence(open bool) {
	e.fenceOpen, e.accessAll = open, open
	e.setGate(gateFence, open)
}

// setStart records the group of an open Start epoch (nil: none).
func (e *epochState) setStart(group []int) {
	e.startGroup = group
	e.setGate(gateStart, group != nil)
}

func (e *epochState) init(n int, check bool) {
	e.tgt = make([]uint8, n)
	e.startsFrom = make([]uint32, n)
	e.postsTo = make([]uint32, n)
	if check {
		e.setGate(gateCheck, true)
		for t := range e.tgt {
			e.tgt[t] = tgtCheck
		}
	}
}

// setTgt sets target t's epoch bits, keeping tgtCheck.
func (e *epochState) setTgt(t int, bits uint8) { e.tgt[t] = bits | e.tgt[t]&tgtCheck }

// check returns the first invariant of the epoch state that does not hold:
// the fields that mirror one fact (accessAll, flushAny, nLocks, the gate
// bits, the tgt bytes) must agree. freed and noLocks are the window's.
func (e *epochState) check(freed, noLocks bool) error {
	bit := func(b uint8) bool { return e.gate&b != 0 }
	locks, check := 0, bit(gateCheck)
	for t, b := range e.tgt {
		locked := b&tgtLocked != 0
		if locked {
			locks++
		}
		switch {
		case b&tgtLocked == tgtLocked:
			return fmt.Errorf("target %d: both an exclusive and a shared lock", t)
		case b&tgtNoCheck != 0 && !locked:
			return fmt.Errorf("target %d: ModeNoCheck without a lock", t)
		case (b&tgtCheck != 0) != check:
			return fmt.Errorf("target %d: check bit %v, gate's %v", t, b&tgtCheck != 0, check)
		case (b&tgtAccess != 0) != (locked || slices.Contains(e.startGroup, t)):
			return fmt.Errorf("target %d: access bit %v, but locked %v and in the Start group %v", t, b&tgtAccess != 0, locked, slices.Contains(e.startGroup, t))
		}
	}
	want := uint(0)
	if e.lockAll {
		want = uint(len(e.tgt))
	}
	switch {
	case locks != e.nLocks:
		return fmt.Errorf("nLocks %d, but %d targets locked", e.nLocks, locks)
	case e.accessAll != (e.lockAll || e.fenceOpen):
		return fmt.Errorf("accessAll %v, lockAll %v, fenceOpen %v", e.accessAll, e.lockAll, e.fenceOpen)
	case e.flushAny != want:
		return fmt.Errorf("flushAny %d, want %d (lockAll %v)", e.flushAny, want, e.lockAll)
	case e.lockAll && (e.nLocks > 0 || e.startGroup != nil):
		return fmt.Errorf("LockAll with %d locks and Start group %v", e.nLocks, e.startGroup)
	case bit(gateLockAll) != e.lockAll, bit(gateStart) != (e.startGroup != nil), bit(gateFence) != e.fenceOpen,
		bit(gateNoLocks) != noLocks, bit(gateFreed) != freed:
		return fmt.Errorf("gate %#x disagrees: lockAll %v, Start group %v, fenceOpen %v, no_locks %v, freed %v",
			e.gate, e.lockAll, e.startGroup != nil, e.fenceOpen, noLocks, freed)
	}
	return nil
}

// canAccess is the RMA epoch check: one load in a LockAll epoch, two in a
// fence epoch (which must remember that RMA happened), two otherwise.
func (e *epochState) canAccess(target int) bool {
	if e.accessAll {
		if e.fenceOpen && !e.fenceUsed.Load() {
			e.fenceUsed.Store(true)
		}
		return true
	}
	return e.tgt[target]&tgtAccess != 0
}

// setLockAll opens or closes a LockAll epoch in the epoch state.
func (e *epochState) setLockAll(on bool) {
	e.lockAll, e.accessAll, e.flushAny = on, on, 0
	if on {
		e.flushAny = uint(len(e.tgt))
	}
	e.setGate(gateLockAll, on)
}

// lockOf returns the lock this rank holds on target (0: none).
func (e *epochState) lockOf(target int) LockType {
	switch e.tgt[target] & tgtLocked {
	case tgtExclusive:
		return Exclusive
	case tgtShared:
		return Shared
	}
	return 0
}

// lockedTo reports a Lock epoch to target; target may be out of range.
func (e *epochState) lockedTo(target int) bool {
	return uint(target) < uint(len(e.tgt)) && e.tgt[target]&tgtLocked != 0
}

// passive reports a passive-target epoch to target (-1: to any target).
func (e *epochState) passive(target int) bool {
	if e.lockAll {
		return true
	}
	if target < 0 {
		return e.nLocks > 0
	}
	return e.tgt[target]&tgtLocked != 0
}

// describeOpen names an open epoch, or returns "".
func (e *epochState) describeOpen() string {
	switch {
	case e.lockAll:
		return "a LockAll epoch"
	case e.nLocks > 0:
		for t := range e.tgt {
			if l := e.lockOf(t); l != 0 {
				return fmt.Sprintf("a %s lock on rank %d", l, t)
			}
		}
	case e.startGroup != nil:
		return "an access epoch (Start without Complete)"
	case e.postGroup != nil:
		return "an exposure epoch (Post without Wait)"
	case e.fenceOpen && e.fenceUsed.Load():
		return "a fence epoch with RMA calls (end it with Fence(ModeNoSucceed))"
	}
	return ""
}
