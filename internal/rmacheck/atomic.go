package rmacheck

import (
	"math/bits"
	"sync/atomic"

	"github.com/shmrun/shmrun/internal/raw"
)

// Atomic accesses. An accumulate, FetchAndOp or CompareAndSwap joins its
// target's atomics clocks of the locations it touches and, unless it only
// reads (NoOp), releases the thread's clock into them and ticks: a rank
// whose atomic call reads what this one wrote learns everything this
// one's rank did before. The locations of a target are hashed into
// atomicBuckets buckets, each with its clock, so that an atomic call
// learns only from the atomic writes of its own locations (and of those
// that share their buckets): a counter bumped by every rank does not
// order the ranks' other accesses. The
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

// atomicBuckets is how many buckets a target's locations are hashed into,
// each with an atomics clock (a bit of a uint8 mask each).
const atomicBuckets = 8

// allBuckets is the mask of every bucket.
const allBuckets = 1<<atomicBuckets - 1

// buckets is the mask of the buckets of bytes [lo, hi) (hi > lo): the
// 8-byte words they touch, by Fibonacci hashing (words a power of two
// apart, the same field of adjacent structs, spread over the buckets).
func buckets(lo, hi uint64) uint8 {
	first, last := lo>>3, (hi-1)>>3
	if first == last {
		return 1 << ((first * 0x9E3779B97F4A7C15) >> 61) // one word: the common case
	}
	if last-first >= 4*atomicBuckets {
		return allBuckets
	}
	var m uint8
	for w := first; w <= last; w++ {
		m |= 1 << ((w * 0x9E3779B97F4A7C15) >> 61)
	}
	return m
}

// quiet reports whether a repeat of atomic memo m's access to target t
// may skip the join and the release (above): the thread's clock has not
// moved, nor learned anything, since m's access, and nothing was released
// into the atomics clocks of t it touches since this rank last joined
// them.
func (l *Log) quiet(t int, m *memo) bool {
	return loadRelaxed(&l.p.clock0) == m.clock && loadRelaxed(&l.p.news) == m.news && !l.released(t, buckets(m.lo, m.hi))
}

// released reports whether a release was counted into one of target t's
// atomics clocks of mask since this rank last joined it.
func (l *Log) released(t int, mask uint8) bool {
	for ; mask != 0; mask &= mask - 1 {
		b := bits.TrailingZeros8(mask)
		if atomic.LoadUint32(l.relWord(t, b)) != atomic.LoadUint32(&l.joined[t*atomicBuckets+b]) {
			return true
		}
	}
	return false
}

// relWord is target t's count of releases into its atomics clock of
// bucket b, in the line of its ring's head (bytes 32..63; a count that
// wraps is compared for equality only). A release is counted after it is
// made, and an atomic write's memory operation comes after both
// (AtomicBefore): a rank whose atomic call read that write, reading the
// count after its own operation, sees the release counted.
func (l *Log) relWord(t, b int) *uint32 {
	return raw.Word32(l.mem, l.base(t)+relOff+int64(b)*4)
}

// relOff is where a target's head line holds the release counts.
const relOff = 32

// joinAtomic joins target t's atomics clocks of mask and notes the
// releases counted before each. p.mu is held.
func (l *Log) joinAtomic(t int, mask uint8) {
	for ; mask != 0; mask &= mask - 1 {
		b := bits.TrailingZeros8(mask)
		v := atomic.LoadUint32(l.relWord(t, b))
		l.p.acquireFrom(l.clock(t, 2+b))
		atomic.StoreUint32(&l.joined[t*atomicBuckets+b], v)
	}
}

// releaseAtomic releases the thread's clock into target t's atomics
// clocks of mask and counts each release; when no other release was
// counted into a clock since this rank's join, its own needs no join.
// p.mu is held.
func (l *Log) releaseAtomic(t int, mask uint8) {
	for ; mask != 0; mask &= mask - 1 {
		b := bits.TrailingZeros8(mask)
		l.p.releaseIntoNoTick(l.clock(t, 2+b))
		j := &l.joined[t*atomicBuckets+b]
		if v := atomic.AddUint32(l.relWord(t, b), 1); v == atomic.LoadUint32(j)+1 {
			atomic.StoreUint32(j, v)
		}
	}
	l.p.tick()
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
		l.releaseAtomicLocked(target, buckets(lo, hi))
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
		if mask := buckets(lo, hi); l.released(target, mask) {
			beforeClock()
			p := l.p
			p.mu.Lock()
			p.use(0)
			l.joinAtomic(target, mask)
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
// operation, then AccessAfter for each run of its target bytes), into the
// atomics clocks of the locations of bytes [lo, hi), which hold its runs.
func (l *Log) ReleaseAtomic(target int, lo, hi uint64) {
	if l == nil || uint(target) >= uint(len(l.world)) || hi <= lo {
		return
	}
	l.releaseAtomicLocked(target, buckets(lo, hi))
}

// releaseAtomicLocked is releaseAtomic with the lock taken.
func (l *Log) releaseAtomicLocked(target int, mask uint8) {
	beforeClock()
	p := l.p
	p.mu.Lock()
	p.use(0)
	l.releaseAtomic(target, mask)
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
