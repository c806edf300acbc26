//go:build !mpi

package win

import (
	"sync/atomic"
	"time"

	"github.com/shmrun/shmrun/internal/format"
)

// Passive-target locks (docs/FORMAT.md has the same text for C code).
//
// Each target r has a 64-bit ticket reader-writer lock word L[r] (FIFO, so a
// writer is never starved by readers) with the fields W, R, X and T whose
// bits and adds are defined in package format (internal/format).
//
// Exclusive lock: one add of 1<<49 + 1<<32 draws ticket t = T and raises X;
// wait until W == t. Exclusive unlock: one add that does W++, R++ and X--.
// Shared lock: one add of 1<<49 draws t; wait until R == t; then R++ (admits
// the next reader). Shared unlock: W++.
// Counters compare modulo 2^15; an add that carries out of W or R sets its
// guard bit, and whoever sees a set guard in an add's result clears it with
// an atomic AND, long before a second carry could reach the next field.
// Every step is one atomic add: an exclusive Lock+Unlock is two locked
// instructions. Waiters sleep on the low 32-bit half of L[r] (W and R, which
// every unlock changes) with the sleepers word after it.
//
// LockAll is a shared lock on every target: one add to the window-wide
// LockAll count A (word G), then a read-only scan of the X fields. An
// exclusive locker, once its turn comes, checks A. Each side writes (a locked
// add, a full fence) before it reads the other's word, so of an exclusive
// locker and a LockAll that race at least one sees the other: the LockAll,
// seeing X > 0 anywhere, takes its add back and waits for that target's X to
// drop; the exclusive locker, seeing A > 0, waits (holding its turn) for A to
// reach 0. Since X stays raised while a writer waits, new LockAll calls back
// off and cannot starve it. LockAll costs two locked adds and n plain loads;
// no lock word is written.
//
// Nor can writers that hold no other lock starve LockAll: one that backed
// off counts itself in Q, the high half of the word A lives in, until it
// is in; an exclusive locker that holds no other lock of the window waits
// for Q to reach 0 before it draws its ticket, so X drains and the LockAll
// gets in. A locker already holding a lock draws at once: it may hold the
// target the LockAll waits for, and holding back would deadlock. So does
// one held back once another goroutine of its rank is granted a lock
// (granted): the rank then holds one. (A rank that always holds some
// exclusive lock, taking the next before it releases the last, still
// keeps LockAll out: it cannot be held back without deadlock.) LockAll
// holds nothing while it waits, so a rank holding exclusive locks on two
// targets and another in LockAll cannot deadlock either.

func (l *lockLine) wake() { l.ev.Wake() }

// lockExclusiveAfter finishes an exclusive Lock whose add drew the ticket
// in v: it clears a carry guard the add set, waits for the turn and then for
// LockAll holders to leave, and records the epoch.
func (w *Win) lockExclusiveAfter(rank int, v uint64) error {
	l := &w.locks[rank]
	if v&format.LockGuards != 0 {
		atomic.AndUint64(l.word, ^uint64(format.LockGuards))
	}
	t := ticketOf(v)
	if lwW(atomic.LoadUint64(l.word)) != t {
		atomic.AddInt64(&w.lockWaits, 1)
		if err := l.ev.Await(w.t.Abort(), w.t.Policy(), func() bool { return lwW(atomic.LoadUint64(l.word)) == t }); err != nil {
			return w.lockAborted(err) // the job is ending; the lock word no longer matters
		}
	}
	if holders(atomic.LoadUint64(w.global)) != 0 {
		atomic.AddInt64(&w.lockWaits, 1)
		if err := w.globalEv.Await(w.t.Abort(), w.t.Policy(), func() bool { return holders(atomic.LoadUint64(w.global)) == 0 }); err != nil {
			return w.lockAborted(err)
		}
	}
	w.ep.setTgt(rank, tgtAccess|tgtExclusive)
	w.granted()
	return nil
}

// granted follows the record of a lock this rank was granted after a
// wait: another goroutine of the rank held back behind a LockAll
// (holdBack) decided so while the rank held no lock, and must go now that
// it holds one, or the LockAll may wait for this lock while this lock's
// holder waits for that goroutine. The fence orders the tgt store before
// the loads; a lock granted on a fast path (no wait, no fence) is seen by
// the held-back goroutine's next poll, at most its policy's Sleep later.
func (w *Win) granted() {
	w.fullFence()
	if waitingAll(atomic.LoadUint64(w.global)) != 0 {
		w.globalEv.Notify()
	}
}

// unlockAfter finishes an Unlock whose add left v in the lock word: it
// clears a carry guard the add set and wakes sleepers.
func (w *Win) unlockAfter(rank int, v uint64) {
	l := &w.locks[rank]
	if v&format.LockGuards != 0 {
		atomic.AndUint64(l.word, ^uint64(format.LockGuards))
	}
	l.wake()
}

func (w *Win) acquireShared(target int) error {
	return w.acquireSharedAfter(target, addLock(w.locks[target].word, format.LockShared))
}

// acquireSharedAfter finishes a shared lock whose first add (the carry
// guard it set already cleared) left v in the lock word: it waits for the
// turn, then admits the next reader.
func (w *Win) acquireSharedAfter(target int, v uint64) error {
	l := &w.locks[target]
	if t := ticketOf(v); lwR(v) != t {
		atomic.AddInt64(&w.lockWaits, 1)
		if err := l.ev.Await(w.t.Abort(), w.t.Policy(), func() bool { return lwR(atomic.LoadUint64(l.word)) == t }); err != nil {
			return err
		}
	}
	addLock(l.word, format.LockOneR)
	l.wake() // a reader queued behind us may enter now
	return nil
}

func (w *Win) releaseShared(target int) {
	l := &w.locks[target]
	addLock(l.word, format.LockSharedUnlock)
	l.wake()
}

// acquireAll takes the LockAll count; it returns once no target has an
// exclusive locker holding or waiting. Once it has backed off it counts
// itself in Q until it is in, which holds new writers back.
func (w *Win) acquireAll() error {
	waiting := false
	defer func() {
		if waiting {
			atomic.AddUint64(w.global, ^uint64(format.LockAllWaiter-1))
			w.globalEv.Notify()
		}
	}()
	for {
		atomic.AddUint64(w.global, 1)
		busy := w.exclusiveBusy()
		if busy < 0 {
			return nil
		}
		w.releaseAll() // back off: an exclusive locker of busy may wait for A == 0
		if !waiting {
			atomic.AddUint64(w.global, format.LockAllWaiter)
			waiting = true
		}
		atomic.AddInt64(&w.lockWaits, 1)
		l := &w.locks[busy]
		if err := l.ev.Await(w.t.Abort(), w.t.Policy(), func() bool { return lwX(atomic.LoadUint64(l.word)) == 0 }); err != nil {
			return err
		}
	}
}

// holders is A, the LockAll holders, of the global word g; waitingAll is
// Q, the LockAll calls waiting for writers to drain.
func holders(g uint64) uint64    { return g & format.LockAllHolders }
func waitingAll(g uint64) uint64 { return g >> 32 }

// holdBack waits, before an exclusive locker draws its ticket, while a
// LockAll waits for the writers to drain - unless this rank holds a lock
// of the window already (the LockAll may wait for it).
func (w *Win) holdBack() error {
	free := func() bool { return waitingAll(atomic.LoadUint64(w.global)) == 0 || w.ep.anyLocked() }
	if free() {
		return nil
	}
	atomic.AddInt64(&w.lockWaits, 1)
	// Another goroutine of this rank may be granted a lock meanwhile
	// (granted): then the LockAll may wait for it, and this one must not.
	return w.globalEv.Await(w.t.Abort(), w.t.Policy(), free)
}

// exclusiveBusy returns a target with an exclusive locker holding or
// waiting, or -1.
func (w *Win) exclusiveBusy() int {
	for t := range w.locks {
		if lwX(atomic.LoadUint64(w.locks[t].word)) != 0 {
			return t
		}
	}
	return -1
}

func (w *Win) releaseAll() {
	atomic.AddUint64(w.global, ^uint64(0))
	w.globalEv.Notify()
}

// Lock opens a passive-target access epoch to rank (MPI_Win_lock): it blocks
// until the lock is granted — Exclusive excludes every other lock on rank and
// every LockAll, Shared excludes Exclusive. Locks are granted in FIFO order
// per target, so no writer starves. assert is 0 or ModeNoCheck (the caller
// promises no conflicting lock: the lock word is skipped, the memory
// ordering kept). Lock acquires: the target's and earlier lock holders'
// completed puts are visible after it. rank must be a rank of the window:
// ProcNull is a target of the RMA communication calls only, so Lock(ProcNull)
// is ErrRank (to reach ProcNull, make the calls inside any open access
// epoch). Locking a target this rank holds, Lock during LockAll, Start or a
// fence epoch with RMA calls, and Lock on a window with no_locks=true are
// ErrRMASync.
func (w *Win) Lock(lt LockType, rank int, assert int) error {
	// The common case first, in this frame: an exclusive lock with no other
	// epoch open and no LockAll waiting, granted by the one add that draws
	// the ticket. Waiting is lockExclusiveAfter's; every other case and
	// every error is lockSlow's.
	if w != nil && lt == Exclusive && assert == 0 && uint(rank) < uint(len(w.ep.tgt)) && w.ep.tgt[rank]|w.ep.h.Gate == 0 &&
		waitingAll(atomic.LoadUint64(w.global)) == 0 {
		v := atomic.AddUint64(w.locks[rank].word, format.LockExclusive)
		if v&format.LockGuards == 0 && lwW(v) == ticketOf(v) && holders(atomic.LoadUint64(w.global)) == 0 {
			w.ep.tgt[rank] = tgtAccess | tgtExclusive
			return nil
		}
		return w.lockExclusiveAfter(rank, v)
	}
	return w.lockSlow(lt, rank, assert)
}

func (w *Win) lockAborted(err error) error {
	return errorf(ErrAborted, "Lock on rank %d: %v", w.rank, err)
}

// lockSlow is Lock's slow path, recording the call on an observed window.
func (w *Win) lockSlow(lt LockType, rank int, assert int) error {
	if w == nil || w.obs == nil && w.chk == nil {
		return w.lockChecked(lt, rank, assert)
	}
	t0, waits := time.Now(), atomic.LoadInt64(&w.lockWaits)
	err := w.lockChecked(lt, rank, assert)
	if w.obs != nil {
		w.obs.Sync("Lock", t0)
		if err == nil {
			w.obs.Lock(t0, atomic.LoadInt64(&w.lockWaits) != waits)
		}
	}
	if err == nil {
		w.chk.Lock(rank, lt == Exclusive)
	}
	return err
}

// lockChecked is Lock with every check: the slow path.
func (w *Win) lockChecked(lt LockType, rank int, assert int) error {
	w.checkEpoch("before Lock")
	defer w.checkEpoch("Lock")
	if err := w.live("Lock"); err != nil {
		return err
	}
	var bit uint8
	switch lt {
	case Exclusive:
		bit = tgtExclusive
	case Shared:
		bit = tgtShared
	default:
		return errorf(ErrLockType, "Lock on rank %d: lock type %d is neither Exclusive nor Shared", w.rank, int(lt))
	}
	if assert&^ModeNoCheck != 0 {
		return errorf(ErrAssert, "Lock on rank %d: assert %#x: only ModeNoCheck applies", w.rank, assert)
	}
	if rank == ProcNull {
		return errorf(ErrRank, "Lock on rank %d: ProcNull is a target of RMA calls only, not of Lock", w.rank)
	}
	if rank < 0 || rank >= w.size {
		return errorf(ErrRank, "Lock on rank %d: target %d outside a window of %d ranks", w.rank, rank, w.size)
	}
	switch {
	case w.cfg.noLocks:
		return errorf(ErrRMASync, "Lock on rank %d: the window was created with info no_locks=true", w.rank)
	case w.ep.lockOf(rank) != 0:
		return errorf(ErrRMASync, "Lock on rank %d: rank %d is locked by this rank already (%s)", w.rank, rank, w.ep.lockOf(rank))
	case w.ep.h.LockAll, w.ep.startOpen():
		return errorf(ErrRMASync, "Lock on rank %d: %s (access epochs must not overlap)", w.rank, w.ep.describeOpen())
	case w.ep.h.FenceOpen && w.ep.h.FenceUsed.Load():
		return errorf(ErrRMASync, "Lock on rank %d: a fence epoch with RMA calls is open (end it with Fence(ModeNoSucceed))", w.rank)
	}
	w.closeFenceEpoch()
	switch {
	case assert&ModeNoCheck != 0:
		w.fullFence()
		bit |= tgtNoCheck
	case lt == Exclusive:
		if err := w.holdBack(); err != nil {
			return w.lockAborted(err)
		}
		return w.lockExclusiveAfter(rank, atomic.AddUint64(w.locks[rank].word, format.LockExclusive))
	default:
		if err := w.acquireShared(rank); err != nil {
			return w.lockAborted(err)
		}
		w.ep.setTgt(rank, tgtAccess|bit)
		w.granted()
		return nil
	}
	w.ep.setTgt(rank, tgtAccess|bit)
	return nil
}

// Unlock closes the passive-target epoch to rank (MPI_Win_unlock): every RMA
// call of the epoch is complete at the target (a full fence), then the lock
// is released. Local: it does not wait. Unlock without Lock is ErrRMASync;
// Unlock(ProcNull) is ErrRank, as for Lock.
func (w *Win) Unlock(rank int) error {
	// The exclusive case in this frame: one add (a full fence) does W++,
	// R++ and X--; unlockAfter clears a carry guard or wakes sleepers.
	if w != nil && uint(rank) < uint(len(w.ep.tgt)) && w.ep.tgt[rank] == tgtAccess|tgtExclusive {
		w.ep.tgt[rank] = 0
		l := &w.locks[rank]
		if v := atomic.AddUint64(l.word, format.LockExclusiveUnlock); v&format.LockGuards != 0 || atomic.LoadUint32(l.ev.Sleepers) != 0 {
			w.unlockAfter(rank, v)
		}
		return nil
	}
	return w.unlockSlow(rank)
}

// unlockSlow is Unlock's slow path, recording the call on an observed
// window.
func (w *Win) unlockSlow(rank int) error {
	if w != nil && w.obs != nil {
		defer w.obs.Sync("Unlock", time.Now())
	}
	if w != nil && w.chk != nil && uint(rank) < uint(w.size) && !w.freed.Load() {
		if lt := w.ep.lockOf(rank); lt != 0 {
			// shmrun --check: the epoch's calls are complete, then released
			// to the target's later lockers.
			w.chk.Complete(rank)
			w.chk.Unlock(rank, lt == Exclusive)
		}
	}
	return w.unlockChecked(rank)
}

// unlockChecked is Unlock with every check: the slow path.
func (w *Win) unlockChecked(rank int) error {
	w.checkEpoch("before Unlock")
	defer w.checkEpoch("Unlock")
	if err := w.live("Unlock"); err != nil {
		return err
	}
	if rank == ProcNull {
		return errorf(ErrRank, "Unlock on rank %d: ProcNull is a target of RMA calls only, not of Unlock", w.rank)
	}
	if rank < 0 || rank >= w.size {
		return errorf(ErrRank, "Unlock on rank %d: target %d outside a window of %d ranks", w.rank, rank, w.size)
	}
	st := w.ep.tgt[rank] &^ tgtCheck
	if st&tgtLocked == 0 {
		return errorf(ErrRMASync, "Unlock on rank %d: rank %d is not locked by this rank (Unlock without Lock)", w.rank, rank)
	}
	w.ep.setTgt(rank, 0)
	switch {
	case st&tgtNoCheck != 0:
		w.fullFence()
	case st&tgtExclusive != 0:
		w.unlockAfter(rank, atomic.AddUint64(w.locks[rank].word, format.LockExclusiveUnlock))
	default:
		w.releaseShared(rank)
	}
	return nil
}

// LockAll opens a shared passive-target epoch to every rank of the window
// (MPI_Win_lock_all) in O(1) writes, whatever the number of ranks: one add
// to the window's LockAll count, then a read-only scan of the lock words.
// It waits while any rank holds or waits for an exclusive lock, holding
// new writers back meanwhile, so a steady stream of them cannot starve it
// (writers that keep holding another lock can: see the protocol above).
// assert: 0 or ModeNoCheck. LockAll while a lock, LockAll or Start epoch is open is
// ErrRMASync.
func (w *Win) LockAll(assert int) error {
	if w != nil && w.ep.h != nil && assert == 0 && w.ep.h.Gate == 0 && !w.ep.anyLocked() {
		atomic.AddUint64(w.global, 1)
		if w.exclusiveBusy() >= 0 {
			w.releaseAll()
			return w.lockAllSlow(assert)
		}
		w.ep.h.AllCheck = true
		w.ep.setLockAll(true)
		return nil
	}
	return w.lockAllSlow(assert)
}

// lockAllSlow is LockAll's slow path, recording the call on an observed
// window.
func (w *Win) lockAllSlow(assert int) error {
	if w == nil || w.obs == nil && w.chk == nil {
		return w.lockAllChecked(assert)
	}
	t0, waits := time.Now(), atomic.LoadInt64(&w.lockWaits)
	err := w.lockAllChecked(assert)
	if w.obs != nil {
		w.obs.Sync("LockAll", t0)
		if err == nil {
			w.obs.Lock(t0, atomic.LoadInt64(&w.lockWaits) != waits)
		}
	}
	if err == nil {
		w.chk.LockAll()
	}
	return err
}

// lockAllChecked is LockAll with every check: the slow path.
func (w *Win) lockAllChecked(assert int) error {
	w.checkEpoch("before LockAll")
	defer w.checkEpoch("LockAll")
	if err := w.live("LockAll"); err != nil {
		return err
	}
	if assert&^ModeNoCheck != 0 {
		return errorf(ErrAssert, "LockAll on rank %d: assert %#x: only ModeNoCheck applies", w.rank, assert)
	}
	switch {
	case w.cfg.noLocks:
		return errorf(ErrRMASync, "LockAll on rank %d: the window was created with info no_locks=true", w.rank)
	case w.ep.h.LockAll || w.ep.anyLocked() || w.ep.startOpen():
		return errorf(ErrRMASync, "LockAll on rank %d: %s (access epochs must not overlap)", w.rank, w.ep.describeOpen())
	case w.ep.h.FenceOpen && w.ep.h.FenceUsed.Load():
		return errorf(ErrRMASync, "LockAll on rank %d: a fence epoch with RMA calls is open (end it with Fence(ModeNoSucceed))", w.rank)
	}
	w.closeFenceEpoch()
	if assert&ModeNoCheck != 0 {
		w.fullFence()
	} else if err := w.acquireAll(); err != nil {
		return errorf(ErrAborted, "LockAll on rank %d: %v", w.rank, err)
	}
	w.ep.h.AllCheck = assert&ModeNoCheck == 0
	w.ep.setLockAll(true)
	return nil
}

// UnlockAll closes the LockAll epoch (MPI_Win_unlock_all): every RMA call of
// the epoch is complete at its target (the count's add is a full fence),
// then the shared locks are released. Local. UnlockAll without LockAll is
// ErrRMASync.
func (w *Win) UnlockAll() error {
	if w != nil && w.ep.h != nil && w.ep.h.LockAll && !w.freed.Load() {
		if w.obs != nil {
			defer w.obs.Sync("UnlockAll", time.Now())
		}
		if w.chk != nil {
			w.chk.Complete(-1) // shmrun --check: complete, then released
			w.chk.UnlockAll()
		}
		w.ep.setLockAll(false) // checked by the next call (checkEpoch)
		if w.ep.h.AllCheck {
			w.releaseAll()
		} else {
			w.fullFence()
		}
		return nil
	}
	if err := w.live("UnlockAll"); err != nil {
		return err
	}
	return errorf(ErrRMASync, "UnlockAll on rank %d: no LockAll epoch (UnlockAll without LockAll)", w.rank)
}

// Flush completes every RMA call of this rank to rank, at the origin and at
// the target (MPI_Win_flush): a full memory fence. Local. Only inside a
// passive-target epoch to rank (ErrRMASync otherwise). rank must be a rank of
// the window: Flush is a synchronization call, not an RMA communication call,
// so ProcNull is not a valid rank for it (ErrRank, in any epoch; FlushLocal
// likewise). RMA calls to ProcNull complete at once and need no flush.
func (w *Win) Flush(rank int) error {
	// Inlined into the caller, at the inlining budget exactly
	// (TestIntendedInlining guards it): inside LockAll, the nil check, one
	// compare, then the fence, so X + Flush makes one call, not two.
	if w != nil && uint(rank) < w.hot.FlushAny {
		atomic.AddUint64(&w.fenceWord, 1) // w.fullFence(), spelled out for the inline budget
		return nil
	}
	return w.flushTarget(rank)
}

// flushTarget is Flush outside LockAll: a Lock epoch to rank, or an error.
func (w *Win) flushTarget(rank int) error {
	// An observed window (shmrun --stats, --check) leaves FlushAny 0, so
	// its flushes come here, LockAll's too.
	if w != nil && w.ep.h != nil && (w.ep.lockedTo(rank) || w.ep.h.LockAll && uint(rank) < uint(w.size)) {
		if w.chk != nil && w.chk.Complete(rank) {
			return nil // its compare-and-swap was the full fence
		}
		w.fullFence()
		return nil
	}
	return w.flushSlow("Flush", rank, false)
}

// FlushAll completes every RMA call of this rank to every target
// (MPI_Win_flush_all). Local. Only inside a passive-target epoch.
func (w *Win) FlushAll() error {
	if w != nil && w.ep.h != nil && (w.ep.h.LockAll || w.ep.anyLocked()) {
		if w.chk != nil {
			w.chk.Complete(-1)
		}
		w.fullFence()
		return nil
	}
	return w.flushSlow("FlushAll", -1, true)
}

// FlushLocal completes this rank's RMA calls to rank at the origin
// (MPI_Win_flush_local): their buffers may be reused. RMA completes eagerly,
// so it only checks the epoch. Local.
func (w *Win) FlushLocal(rank int) error {
	if w != nil && w.ep.h != nil && (uint(rank) < w.ep.h.FlushAny || w.ep.lockedTo(rank) || w.ep.h.LockAll && uint(rank) < uint(w.size)) {
		return nil
	}
	return w.flushSlow("FlushLocal", rank, false)
}

// FlushLocalAll is FlushLocal to every target (MPI_Win_flush_local_all).
// Local.
func (w *Win) FlushLocalAll() error {
	if w != nil && w.ep.h != nil && (w.ep.h.LockAll || w.ep.anyLocked()) {
		return nil
	}
	return w.flushSlow("FlushLocalAll", -1, true)
}

// Sync synchronizes this rank's view of the window's memory (MPI_Win_sync):
// a full memory fence, so loads after it see what other ranks stored before
// their own Sync or a synchronization that ordered them. Local. Only inside a
// passive-target epoch, as the standard says of every flush and sync call.
func (w *Win) Sync() error {
	if w != nil && w.ep.h != nil && (w.ep.h.LockAll || w.ep.anyLocked()) {
		w.fullFence()
		return nil
	}
	return w.flushSlow("Sync", -1, true)
}

// flushSlow is the error of a flush or sync call outside its epoch, or to
// a rank outside the window; all: a call without a rank (FlushAll,
// FlushLocalAll, Sync), whose rank is ignored.
func (w *Win) flushSlow(call string, rank int, all bool) error {
	if err := w.live(call); err != nil {
		return err
	}
	if !all && rank == ProcNull {
		return errorf(ErrRank, "%s on rank %d: ProcNull is a target of RMA calls only, not of %s", call, w.rank, call)
	} else if !all && (rank < 0 || rank >= w.size) {
		return errorf(ErrRank, "%s on rank %d: target %d outside a window of %d ranks", call, w.rank, rank, w.size)
	}
	if !all {
		return errorf(ErrRMASync, "%s on rank %d: no passive-target epoch to rank %d (Lock it or LockAll first)", call, w.rank, rank)
	}
	return errorf(ErrRMASync, "%s on rank %d: not inside a passive-target epoch (Lock or LockAll first)", call, w.rank)
}
