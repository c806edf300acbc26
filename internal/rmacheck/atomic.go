package rmacheck

import (
	"sync/atomic"

	"github.com/shmrun/shmrun/internal/raw"
)

// Atomic accesses. An accumulate, FetchAndOp or CompareAndSwap joins its
// target's atomics clock and, unless it only reads (NoOp), releases the
// thread's clock into it and ticks: a rank whose atomic call reads what
// this one wrote learns everything this one's rank did before. The
// release must come before the memory operation and the join after it
// (else a reader can see a write whose release it has not joined: a false
// report on the flag-spinning loop of every lock built on atomics), so
// package win calls AtomicBefore before the operation and AtomicAfter
// after it, which joins, then records and checks the access (a datatype
// form: ReleaseAtomic, then AccessAfter for each run). Each release is
// counted in the target's relWord after it is made; a rank joins again
// when the count moved since its last join.
//
// Repeats. The clock moves on every atomic write, so no record would ever
// be complete at the current clock, which repeat.go's lock-free path
// needs. A repeat may skip the join and the release when they would
// change nothing anyone could observe:
//
//   - The join adds nothing when no release was counted since this
//     rank's last join (read after the operation: above).
//   - The release adds, besides what it added at the memo's access (the
//     atomics clock then held the thread's whole clock), only the
//     thread's own entry's new value c, when the thread learned nothing
//     since (no join raised its clock: Proc.news) — and c has not moved
//     since the memo's access ticked it (memo.clock). What c makes known
//     is what the thread completed at c: by the news count, nothing but
//     the memo's record (and its repeats). The record stands for this
//     repeat too, and this repeat is not complete yet: to another rank
//     that learned c the record would read complete and this repeat as
//     done, which it is not. Not releasing c, it reads not complete — as
//     it reads for the repeat the release would have covered in the full
//     model (a release precedes its own call's completion): every later
//     conflicting access of another rank is reported against the same
//     pair of calls either way.
//
// Completion then works as for a Put's repeats: a Complete counts them
// done, and a release first makes the record pending again when some are
// outstanding (settle). Proc.news counts every completed record but the
// latest atomic memo's (amemo), and a new atomic memo counts as news: two
// atomic streams that alternate take the locked path.

// quiet reports whether a repeat of atomic memo m's access to target t
// may skip the join and the release (above): the thread's clock has not
// moved, nor learned anything, since m's access, and nothing was released
// into t's atomics clock since this rank last joined it.
func (l *Log) quiet(t int, m *memo) bool {
	return loadRelaxed(&l.p.clock0) == m.clock && loadRelaxed(&l.p.news) == m.news &&
		atomic.LoadUint64(l.relWord(t)) == atomic.LoadUint64(&l.joined[t])
}

// relWord is target t's count of releases into its atomics clock, in the
// line of its ring's head. A release is counted after it is made, and an
// atomic write's memory operation comes after both (AtomicBefore): a rank
// whose atomic call read that write, reading the count after its own
// operation, sees the release counted.
func (l *Log) relWord(t int) *uint64 { return raw.Word64(l.mem, l.base(t)+8) }

// joinAtomic joins target t's atomics clock and notes the releases counted
// before it. p.mu is held.
func (l *Log) joinAtomic(t int) {
	v := atomic.LoadUint64(l.relWord(t))
	l.p.acquireFrom(l.clock(t, 2))
	atomic.StoreUint64(&l.joined[t], v)
}

// releaseAtomic releases the thread's clock into target t's atomics clock
// and counts it; when no other release was counted since this rank's
// join, its own needs no join. p.mu is held.
func (l *Log) releaseAtomic(t int) {
	l.p.releaseInto(l.clock(t, 2))
	if v := atomic.AddUint64(l.relWord(t), 1); v == atomic.LoadUint64(&l.joined[t])+1 {
		atomic.StoreUint64(&l.joined[t], v)
	}
}

// AtomicBefore is the part of an atomic RMA call of bytes [lo, hi) of
// target made before its memory operation (key and pc as for RMA): a call
// that writes (any op but NoOp) releases, so that a rank whose atomic call
// reads what it writes learns what this rank did before. It reports
// whether the call is a repeat the memo's record stands for (above):
// counted, with no release. AtomicAfter, after the operation, gets that
// answer.
//
// Its frames are counted (sameFrames): it is never inlined.
//
//go:noinline
func (l *Log) AtomicBefore(target int, lo, hi uint64, key uint64, pc uintptr) (repeat bool) {
	if l == nil || uint(target) >= uint(len(l.world)) || hi <= lo {
		return false
	}
	if m := l.tg[target].memo.Load(); m != nil && m.lo == lo && m.hi == hi && m.key == key && goOnly() &&
		(pc != 0 && m.pc == pc || m.pc == 0 && m.depth > 0 && l.sameFrames(m)) && l.quiet(target, m) && l.standsFor(target, m) {
		l.count(m)
		return true
	}
	if uint8(key>>8) != OpNoOp {
		l.ReleaseAtomic(target)
	}
	return false
}

// AtomicAfter is the part after the memory operation: it joins what was
// released into the target's atomics clock (by the writes this call may
// have read), then records and checks the call — or, for a repeat
// (AtomicBefore's answer), joins only if a release was counted since this
// rank last joined.
//
//go:noinline
func (l *Log) AtomicAfter(target int, lo, hi uint64, key uint64, pc uintptr, repeat bool) {
	if l == nil || uint(target) >= uint(len(l.world)) || hi <= lo {
		return
	}
	if repeat {
		if atomic.LoadUint64(l.relWord(target)) != atomic.LoadUint64(&l.joined[target]) {
			beforeClock()
			p := l.p
			p.mu.Lock()
			p.use(0)
			l.joinAtomic(target)
			p.mu.Unlock()
		}
		return
	}
	a := keyAccess(key, target, lo, hi)
	a.split = true
	l.access(&a, pc)
}

// ReleaseAtomic is the release of an atomic call that writes and is
// recorded apart (a datatype form: one release before its memory
// operation, then AccessAfter for each run of its target bytes).
func (l *Log) ReleaseAtomic(target int) {
	if l == nil || uint(target) >= uint(len(l.world)) {
		return
	}
	beforeClock()
	p := l.p
	p.mu.Lock()
	p.use(0)
	l.releaseAtomic(target)
	p.mu.Unlock()
}

// AccessAfter is Access for an atomic access made after its memory
// operation, whose release (if it writes) ReleaseAtomic made before: it
// joins, then records and checks a.
//
//go:noinline
func (l *Log) AccessAfter(a *Access) {
	a.split = true
	l.Access(a)
}

// rememberAtomic makes record id, which holds atomic access a, its
// target's memo: as remember, with what quiet compares. p.mu is held,
// and a's join and release are made.
func (l *Log) rememberAtomic(a *Access, rets []uintptr, depth int, id, head uint32, pc uintptr) {
	p, t := l.p, a.Target
	if p.amemo != nil {
		// The older memo's record is no longer the one whose completion
		// is not news: it must not stay quiet past this one's completion.
		p.bump()
	}
	if depth < 0 || depth > memoFrames || p.self != p.me*Threads {
		l.setMemo(t, nil)
		return
	}
	m := &memo{lo: a.Lo, hi: a.Hi, key: accessKey(a), site: a.Site, depth: depth, entry: p.self, pc: pc,
		atomic: true, clock: p.vc[p.self], news: p.news}
	m.at.Store(uint64(id)<<32 | uint64(head))
	copy(m.rets[:], rets[:depth])
	l.setMemo(t, m)
	p.amemo, p.aLog, p.aT = m, l, t
}

// isAtomicMemo reports whether record id of target t is the latest atomic
// memo's. p.mu is held.
func (p *Proc) isAtomicMemo(l *Log, t int, id uint32) bool {
	if p.amemo == nil || p.aLog != l || p.aT != t {
		return false
	}
	mid, _ := p.amemo.rec()
	return mid == id
}
