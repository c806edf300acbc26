//go:build !mpi

package win

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/shmrun/shmrun/internal/winc"
)

// epochState is one rank's view of its open epochs. It is written only by
// synchronization calls (ordered by the program) and read by RMA calls, which
// may run on several goroutines inside an epoch. It all lives outside the Go
// heap, where the C interface's fast path of the same process reads and
// writes it too (internal/winc).
type epochState struct {
	h *winc.Epoch
	// tgt[t]: this rank's epoch to target t, tgt* bits. One byte per
	// target keeps the hot paths (RMA, Lock, Unlock, Flush) to one load.
	tgt     []uint8
	release func() // unmaps the state

	// The window ranks of the open Start and Post groups: the first
	// h.StartN and h.PostN words (startList, postList).
	startG, postG []int32
	startsFrom    []uint32 // per target: the Starts this rank made toward it
	postsTo       []uint32 // per origin: the Posts this rank made to it
}

// Bits of epochState.tgt (internal/winc has their meaning).
const (
	tgtAccess    = winc.TgtAccess
	tgtExclusive = winc.TgtExclusive
	tgtShared    = winc.TgtShared
	tgtNoCheck   = winc.TgtNoCheck
	tgtCheck     = winc.TgtCheck
	tgtLocked    = winc.TgtLocked
)

// Bits of epochState.h.Gate.
const (
	gateLockAll = winc.GateLockAll
	gateStart   = winc.GateStart
	gateFence   = winc.GateFence
	gateNoLocks = winc.GateNoLocks
	gateFreed   = winc.GateFreed
	gateCheck   = winc.GateCheck
	gateObserve = winc.GateObserve
)

// setGate sets or clears gate bits.
func (e *epochState) setGate(bits uint8, on bool) {
	if on {
		e.h.Gate |= bits
	} else {
		e.h.Gate &^= bits
	}
}

// setFence opens or closes a fence epoch in the epoch state.
func (e *epochState) setFence(open bool) {
	e.h.FenceOpen, e.h.AccessAll = open, open
	e.setGate(gateFence, open)
}

// setPost records the group of an open Post epoch (nil: none).
func (e *epochState) setPost(group []int) {
	e.h.PostN = setGroup(e.postG, group)
	e.h.PostOpen = group != nil
}

// setStart records the group of an open Start epoch (nil: none).
func (e *epochState) setStart(group []int) {
	e.h.StartN = setGroup(e.startG, group)
	e.setGate(gateStart, group != nil)
}

// freedEpoch is the epoch state of every freed window: its gate sends
// every fast path to the slow one, which names the freed window, and its
// empty target bytes fail their bounds checks. Nothing writes it.
var freedEpoch = winc.Epoch{Gate: gateFreed, StartN: -1, PostN: -1}

// drop unmaps the state (at Free) and leaves freedEpoch in its place, so
// that the next window's state can reuse the address: a window made and
// freed in a loop maps nothing new (which the race detector's shadow
// memory of each new address would make RSS grow by).
func (e *epochState) drop() {
	if e.release != nil {
		e.release()
	}
	*e = epochState{h: &freedEpoch}
}

// setGroup copies group into dst and returns its size, -1 for nil.
func setGroup(dst []int32, group []int) int32 {
	if group == nil {
		return -1
	}
	for i, r := range group {
		dst[i] = int32(r)
	}
	return int32(len(group))
}

// startOpen and postOpen report an open Start and Post epoch; startList
// and postList are their groups' window ranks (nil: none).
func (e *epochState) startOpen() bool { return e.h.StartN >= 0 }
func (e *epochState) postOpen() bool  { return e.h.PostN >= 0 }
func (e *epochState) startList() []int32 {
	if e.h.StartN < 0 {
		return nil
	}
	return e.startG[:e.h.StartN]
}
func (e *epochState) postList() []int32 {
	if e.h.PostN < 0 {
		return nil
	}
	return e.postG[:e.h.PostN]
}

func (e *epochState) init(n int, check bool) error {
	m, err := winc.New(n)
	if err != nil {
		return err
	}
	e.h, e.tgt, e.release = m.Epoch, m.Tgt, m.Release
	e.startG, e.postG, e.startsFrom, e.postsTo = m.StartGroup, m.PostGroup, m.StartsFrom, m.PostsTo
	if check {
		e.setGate(gateCheck, true)
		for t := range e.tgt {
			e.tgt[t] = tgtCheck
		}
	}
	return nil
}

// observe sends every fast path of the window to its slow path, which
// records the call (shmrun --stats, --trace).
func (e *epochState) observe() {
	e.setGate(gateObserve, true)
	for t := range e.tgt {
		e.tgt[t] |= tgtCheck
	}
}

// anyLocked reports whether this rank holds a lock on some target: a scan
// of the bytes per target, eight at a time. They are the only record of
// which targets are locked (no count beside them), so that goroutines may
// lock and unlock different targets at once, each writing only its
// target's byte; a scan costs a load per eight ranks.
func (e *epochState) anyLocked() bool {
	const mask = tgtLocked * 0x0101010101010101
	t, i := e.tgt, 0
	for ; i+8 <= len(t); i += 8 {
		if binary.LittleEndian.Uint64(t[i:])&mask != 0 {
			return true
		}
	}
	for ; i < len(t); i++ {
		if t[i]&tgtLocked != 0 {
			return true
		}
	}
	return false
}

// setTgt sets target t's epoch bits, keeping tgtCheck.
func (e *epochState) setTgt(t int, bits uint8) { e.tgt[t] = bits | e.tgt[t]&tgtCheck }

// check returns the first invariant of the epoch state that does not hold:
// the fields that mirror one fact (accessAll, flushAny, the gate
// bits, the tgt bytes) must agree. freed and noLocks are the window's.
func (e *epochState) check(freed, noLocks bool) error {
	bit := func(b uint8) bool { return e.h.Gate&b != 0 }
	locks, check := 0, bit(gateCheck) || bit(gateObserve)
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
		case (b&tgtAccess != 0) != (locked || slices.Contains(e.startList(), int32(t))):
			return fmt.Errorf("target %d: access bit %v, but locked %v and in the Start group %v", t, b&tgtAccess != 0, locked, slices.Contains(e.startList(), int32(t)))
		}
	}
	want := uint(0)
	if e.h.LockAll && e.h.Gate&gateObserve == 0 {
		want = uint(len(e.tgt))
	}
	switch {
	case e.h.AccessAll != (e.h.LockAll || e.h.FenceOpen):
		return fmt.Errorf("accessAll %v, lockAll %v, fenceOpen %v", e.h.AccessAll, e.h.LockAll, e.h.FenceOpen)
	case e.h.FlushAny != want:
		return fmt.Errorf("flushAny %d, want %d (lockAll %v)", e.h.FlushAny, want, e.h.LockAll)
	case e.h.PostOpen != e.postOpen():
		return fmt.Errorf("PostOpen %v, Post group %v", e.h.PostOpen, e.postList())
	case e.h.LockAll && (locks > 0 || e.startOpen()):
		return fmt.Errorf("LockAll with %d locks and Start group %v", locks, e.startList())
	case bit(gateLockAll) != e.h.LockAll, bit(gateStart) != e.startOpen(), bit(gateFence) != e.h.FenceOpen,
		bit(gateNoLocks) != noLocks, bit(gateFreed) != freed:
		return fmt.Errorf("gate %#x disagrees: lockAll %v, Start group %v, fenceOpen %v, no_locks %v, freed %v",
			e.h.Gate, e.h.LockAll, e.startList(), e.h.FenceOpen, noLocks, freed)
	}
	return nil
}

// canAccess is the RMA epoch check: one load in a LockAll epoch, two in a
// fence epoch (which must remember that RMA happened), two otherwise.
func (e *epochState) canAccess(target int) bool {
	if e.h.AccessAll {
		if e.h.FenceOpen && !e.h.FenceUsed.Load() {
			e.h.FenceUsed.Store(true)
		}
		return true
	}
	return e.tgt[target]&tgtAccess != 0
}

// setLockAll opens or closes a LockAll epoch in the epoch state.
func (e *epochState) setLockAll(on bool) {
	e.h.LockAll, e.h.AccessAll, e.h.FlushAny = on, on, 0
	if on && e.h.Gate&gateObserve == 0 {
		e.h.FlushAny = uint(len(e.tgt))
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
	if e.h.LockAll {
		return true
	}
	if target < 0 {
		return e.anyLocked()
	}
	return e.tgt[target]&tgtLocked != 0
}

// describeOpen names an open epoch, or returns "".
func (e *epochState) describeOpen() string {
	switch {
	case e.h.LockAll:
		return "a LockAll epoch"
	case e.anyLocked():
		for t := range e.tgt {
			if l := e.lockOf(t); l != 0 {
				return fmt.Sprintf("a %s lock on rank %d", l, t)
			}
		}
	case e.startOpen():
		return "an access epoch (Start without Complete)"
	case e.postOpen():
		return "an exposure epoch (Post without Wait)"
	case e.h.FenceOpen && e.h.FenceUsed.Load():
		return "a fence epoch with RMA calls (end it with Fence(ModeNoSucceed))"
	}
	return ""
}
