package rmacheck

import (
	"sync/atomic"

	"github.com/shmrun/shmrun/internal/raw"
)

// Repeats. A loop that makes the same access again and again — Put +
// Flush to one place from one line — would claim a record, fill it and
// scan its target's ring on every call. Little of that is new on a repeat.
// Each target keeps a memo of the latest record this process made there
// (the access, its site, the record's id and the ring's head after it was
// checked):
//
//   - When the ring's head has not moved since, every record there was
//     checked against an access identical to this one (same bytes, kind,
//     op, type, call and line): the same verdicts, any conflict reported
//     already.
//   - When, besides, the record is complete at the calling thread's
//     current clock, no release has happened since it completed (every
//     release ticks the clock), so no other rank knows that clock yet: to
//     every other rank "complete at c" reads exactly as "not complete".
//     The repeat needs no record of its own: it is counted (memo.made),
//     and a Complete counts the repeats made so far done (memo.done). A
//     release, before it makes the clock known, turns a record with
//     repeats outstanding back into a pending one, which a Complete then
//     completes as any other (settle); until then this rank's own scans,
//     which may have passed the record as known, check the memo's access
//     explicitly (checkRepeat).
//   - Otherwise a repeat gets a new record, but when nothing was recorded
//     there since the memo's, no scan (access). A record is never made
//     pending again in place: other ranks that know the clock it completed
//     at may have moved their scans past it.
//
// The second case, for Go callers (thread 0), is the lock-free path
// (Log.RMA for Put and Get, Log.Access and repeat for the rest): a Put or Get + Flush costs a frame walk, a few
// loads and plain stores, and the Complete's compare-and-swap. The count
// of repeats made is relaxed: goroutines of one rank racing a repeat
// against a release made by another may have the release miss a repeat
// made at that moment and publish its clock as if it were complete: a race
// of that access may go unseen. None is invented: done only grows, and a
// record a release made pending while a Complete raced it is completed
// before this rank's next access there or its next release (settled).
// The accumulates' repeats need more conditions (atomic.go): each would
// release the target's atomics clock and tick the thread's.

// memoFrames is how many frames above Log.Access a repeat's call site may
// be for the lock-free path to recognize it.
const memoFrames = 4

// memo is a target's latest record made by this process, the access it
// holds, and the target's ring head after that access was checked; but
// for its counters, immutable once published (tstate.memo).
type memo struct {
	lo, hi uint64
	key    uint64 // accessKey
	site   uint32 // given (depth 0), or found from rets
	rets   [memoFrames]uintptr
	depth  int     // the site is the first of rets[:depth] that is a site; 0: given
	pc     uintptr // Log.RMA's: the return address the site was found from (0: none)
	entry  int     // the clock entry that made it
	// An atomic access's (atomic.go): the thread's clock and the
	// process's news when it was made.
	atomic bool
	clock  uint32
	news   uint32
	// Mutable: the record's id << 32 | the ring's head after it was
	// checked (a new record of the same access moves it, under p.mu);
	// the repeats of the access made (relaxed), made as of the latest
	// Complete (relaxed), and whether settle made the record pending for
	// repeats outstanding at a release (p.mu).
	at         atomic.Uint64
	made, done uint32
	conv       bool
}

// rec is m's record and the ring head after it.
func (m *memo) rec() (id, head uint32) {
	v := m.at.Load()
	return uint32(v >> 32), uint32(v)
}

// recOff is the offset of target t's record id in l.mem.
func (l *Log) recOff(t int, id uint32) int64 {
	return l.ringOff(t) + int64((id-1)%RingLen)*recLen
}

// completed counts the repeats made so far done (a Complete). done only
// grows: a Complete that raced another's and stores later must not undo
// the count of the repeats the other completed after its own began.
// fenced reports that a compare-and-swap of it succeeded: a full fence
// (a failed one writes nothing, so it orders no earlier store).
func (m *memo) completed() (fenced bool) {
	for {
		d, mk := atomic.LoadUint32(&m.done), loadRelaxed(&m.made)
		if int32(mk-d) <= 0 {
			return false
		}
		if atomic.CompareAndSwapUint32(&m.done, d, mk) {
			return true
		}
	}
}

// outstanding reports whether m's access has repeats not complete yet:
// counted (made != done) or made pending by settle.
func (m *memo) outstanding() bool {
	return m.conv || loadRelaxed(&m.made) != atomic.LoadUint32(&m.done)
}

// unordered reports whether a repeat of m's access would conflict with
// an earlier one not complete yet: a Put's (MPI orders no two RMA calls
// of one origin before the first completes; a rank's stores are in
// program order, its accumulates ordered, its Gets only read), whose
// repeats are outstanding. Such a repeat must get a record of its own and
// be checked, not counted: the one record would stand for two conflicting
// calls and be checked against neither. It reads the counters only (it
// is on the lock-free path; conv is p.mu's): a record settle made pending
// reads pending, which stands for no repeat (reuse, standsFor).
func (m *memo) unordered() bool {
	return Kind(m.key) == Write && m.key>>24&1 == 0 && loadRelaxed(&m.made) != atomic.LoadUint32(&m.done)
}

// accessKey packs what, besides the bytes and the site, makes two accesses
// the same: KeyOf's fields, and bit 24 for a load or store.
func accessKey(a *Access) uint64 {
	k := KeyOf(a.Kind, a.Op, a.Typ, a.Call, a.Epoch)
	if a.Local {
		k |= 1 << 24
	}
	return k
}

// keyAccess is the access key packs (accessKey's inverse) to target's
// bytes [lo, hi).
func keyAccess(key uint64, target int, lo, hi uint64) Access {
	return Access{Target: target, Lo: lo, Hi: hi, Kind: Kind(key), Op: uint8(key >> 8), Typ: uint8(key >> 16),
		Local: key>>24&1 != 0, Epoch: Epoch(key >> 25 & 0x7f), Call: uint32(key >> 32)}
}

// same reports whether a, made from the frames rets (above Log.Access),
// is the access m holds; given says that a.Site was given, not found from
// rets.
func (m *memo) same(a *Access, rets []uintptr, given bool) bool {
	if m.lo != a.Lo || m.hi != a.Hi || m.key != accessKey(a) {
		return false
	}
	if given {
		return m.depth == 0 && m.site == a.Site
	}
	if m.depth == 0 || len(rets) < m.depth {
		return false
	}
	for i := range m.depth {
		if rets[i] != m.rets[i] {
			return false
		}
	}
	return true
}

// goOnly reports whether every call of this process is a Go caller's on
// thread 0: the lock-free path's callers.
func goOnly() bool { return ThreadOf == nil && !fromC.Load() }

// tstate is a target's repeat state, one cache line.
type tstate struct {
	memo  atomic.Pointer[memo] // the target's latest record made here
	npend uint32               // len(Log.pending[t]) (relaxed: a Complete need not complete another goroutine's call made meanwhile)
	_     [64 - 8 - 4]byte
}

// repeat is the lock-free path for a (by thread 0 of a Go process, no
// clock to join or release): true when m's record stands for it.
func (l *Log) repeat(a *Access, m *memo) bool {
	if a.Local { // a load or store is complete at once, as the record says
		return l.standsFor(a.Target, m)
	}
	if m.atomic && !l.quiet(a.Target, m) {
		return false
	}
	return l.repeatAt(a.Target, m)
}

// repeatAt is repeat for an RMA call to target t: the record stands for
// it, and it is counted.
func (l *Log) repeatAt(t int, m *memo) bool {
	if m.unordered() || !l.standsFor(t, m) {
		return false
	}
	l.count(m)
	return true
}

// standsFor reports whether m's record stands for a repeat of its access
// to target t: nothing recorded there since, and the record complete at
// thread 0's current clock.
func (l *Log) standsFor(t int, m *memo) bool {
	id, head := m.rec()
	if uint32(atomic.LoadUint64(raw.Word64(l.mem, l.base(t)))) != head ||
		atomic.LoadUint64(raw.Word64(l.mem, l.recOff(t, id)+recWord0)) != uint64(id)<<32|uint64(loadRelaxed(&l.p.clock0)) {
		return false
	}
	return true
}

// count counts a repeat of m made, and marks the log and the process as
// having one that may be outstanding.
func (l *Log) count(m *memo) {
	storeRelaxed(&m.made, loadRelaxed(&m.made)+1)
	if loadRelaxed(&l.anyDup) == 0 {
		storeRelaxed(&l.anyDup, 1)
	}
	if loadRelaxed(&l.p.anyDup) == 0 {
		storeRelaxed(&l.p.anyDup, 1)
	}
}

// reuse records a (by the thread in use) in m's record when m holds the
// same access, the ring has not moved since, and the record stands for
// a: pending still (complete when it completes), or complete at the
// current clock (a repeat, counted). given is as for same. An atomic
// access has joined the target's atomics clock already. p.mu is held.
//
// A record complete at an earlier clock is not reused: other ranks that
// know that clock may have moved their scans past it.
func (l *Log) reuse(a *Access, m *memo, rets []uintptr, given bool) bool {
	p, t := l.p, a.Target
	if m == nil || m.entry != p.self || !m.same(a, rets, given) {
		return false
	}
	id, head := m.rec()
	v := atomic.LoadUint64(raw.Word64(l.mem, l.recOff(t, id)+recWord0))
	if uint32(atomic.LoadUint64(raw.Word64(l.mem, l.base(t)))) != head || uint32(v>>32) != id {
		return false
	}
	switch {
	case uint32(v) == 0:
		// A Put not complete yet cannot stand for a second one: the two
		// conflict (access checks the new record against it).
		return a.Kind != Write || a.Local
	case uint32(v) == p.vc[p.self] && a.Kind != Atomic && goOnly() && !m.unordered():
		if !a.Local {
			l.count(m)
		}
		return true
	}
	return false
}

// remember makes record id, which holds a, target's memo, head the ring's
// head after a was checked: site is a's, found in rets[:depth] (depth 0:
// a.Site was given, or found from pc, the return address Log.RMA was
// given; -1: not in rets, nothing to remember). When the memo
// holds a already (a new record of the same access), it moves to the new
// one. p.mu is held.
func (l *Log) remember(a *Access, rets []uintptr, depth int, id, head uint32, pc uintptr) {
	if depth < 0 || depth > memoFrames {
		l.setMemo(a.Target, nil)
		return
	}
	if m := l.tg[a.Target].memo.Load(); m != nil && m.entry == l.p.self && !m.outstanding() && m.same(a, rets, depth == 0) && m.pc == pc {
		m.at.Store(uint64(id)<<32 | uint64(head))
		return
	}
	m := &memo{lo: a.Lo, hi: a.Hi, key: accessKey(a), site: a.Site, depth: depth, entry: l.p.self, pc: pc}
	m.at.Store(uint64(id)<<32 | uint64(head))
	copy(m.rets[:], rets[:depth])
	l.setMemo(a.Target, m)
}

// setMemo makes m target t's memo. The memo it replaces, no longer seen
// by a release or a lock-free Complete, first has its record made pending
// when repeats of it are outstanding. p.mu is held.
func (l *Log) setMemo(t int, m *memo) {
	p := l.p
	if old := l.tg[t].memo.Load(); old != nil && old != m && old.entry == p.me*Threads {
		l.pendRepeats(t, old, p.vcs[0][old.entry])
	}
	l.tg[t].memo.Store(m)
}

// addPending adds a record of this rank's not complete yet. p.mu is held.
// Its fields are stored in place: a pend built on the stack and then
// copied is read back by 16-byte loads from narrower stores, which the
// store buffer cannot forward (a stall on every call, measured).
func (l *Log) addPending(t int, off int64, id uint32, entry int, issue, rep uint32) {
	ps := append(l.pending[t], pend{})
	pd := &ps[len(ps)-1]
	pd.off, pd.id, pd.entry, pd.issue, pd.rep = off, id, entry, issue, rep
	l.pending[t] = ps
	storeRelaxed(&l.tg[t].npend, uint32(len(ps)))
}

// settle, before a release by thread 0 makes its clock known, makes each
// record with repeats outstanding a pending one, and completes those it
// made pending before whose repeats a lock-free Complete has counted done
// since. p.mu is held.
func (p *Proc) settle() {
	if p.self != p.me*Threads || loadRelaxed(&p.anyDup) == 0 {
		return // only thread 0 repeats
	}
	storeRelaxed(&p.anyDup, 0)
	c := p.vc[p.self]
	for _, l := range p.logs {
		if loadRelaxed(&l.anyDup) == 0 {
			continue
		}
		storeRelaxed(&l.anyDup, 0)
		for t := range l.tg {
			if m := l.tg[t].memo.Load(); m != nil {
				l.pendRepeats(t, m, c)
			}
			l.settled(t)
		}
		if l.live > 0 { // records made pending here: to look at again
			storeRelaxed(&l.anyDup, 1)
			storeRelaxed(&p.anyDup, 1)
		}
	}
}

// pendRepeats makes m's record (of target t) pending when repeats of it
// are outstanding and it reads complete at c, the thread's clock: before
// a release makes c known, or before m stops being the target's memo
// (after which neither a release nor a lock-free Complete looks at it).
// p.mu is held.
func (l *Log) pendRepeats(t int, m *memo, c uint32) {
	id, _ := m.rec()
	off := l.recOff(t, id)
	if !m.conv && loadRelaxed(&m.made) != atomic.LoadUint32(&m.done) &&
		atomic.CompareAndSwapUint64(raw.Word64(l.mem, off+recWord0), uint64(id)<<32|uint64(c), uint64(id)<<32) {
		m.conv = true
		l.reps = append(l.reps, m)
		l.live++
		l.addPending(t, off, id, m.entry, c, uint32(len(l.reps)))
		storeRelaxed(&l.anyDup, 1)
		storeRelaxed(&l.p.anyDup, 1)
	}
}

// settled completes target t's records that settle made pending when a
// lock-free Complete has counted their repeats done since (one that raced
// the release), before this rank's next access there is checked against
// them or its clock is released. p.mu is held.
func (l *Log) settled(t int) {
	ps := l.pending[t]
	if len(ps) == 0 {
		return
	}
	keep := ps[:0]
	for i := range ps {
		pd := &ps[i]
		if pd.rep != 0 && l.reps[pd.rep-1] != nil && loadRelaxed(&l.reps[pd.rep-1].made) == atomic.LoadUint32(&l.reps[pd.rep-1].done) {
			l.dropRep(pd.rep)
			atomic.CompareAndSwapUint64(raw.Word64(l.mem, pd.off+recWord0), uint64(pd.id)<<32, uint64(pd.id)<<32|uint64(l.p.vcs[0][pd.entry]))
			l.p.bump()
			continue
		}
		keep = append(keep, *pd)
	}
	l.pending[t] = keep
	storeRelaxed(&l.tg[t].npend, uint32(len(keep)))
}

// dropRep forgets l.reps[rep-1], its record no longer pending for it.
// p.mu is held.
func (l *Log) dropRep(rep uint32) {
	if m := l.reps[rep-1]; m != nil {
		m.conv = false
		l.reps[rep-1] = nil
		if l.live--; l.live == 0 {
			clear(l.reps)
			l.reps = l.reps[:0] // no pend refers to one any more
		}
	}
}

// Close forgets the window's log (Free, before its area is unmapped).
func (l *Log) Close() {
	if l == nil {
		return
	}
	p := l.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.aLog == l {
		p.amemo, p.aLog = nil, nil
	}
	for i, o := range p.logs {
		if o == l {
			last := len(p.logs) - 1
			p.logs[i], p.logs[last] = p.logs[last], nil
			p.logs = p.logs[:last]
			return
		}
	}
}

// sameFrames reports whether the frames above Log.RMA's are m's (a call
// whose pc was shmrun's own, PutT's for one: the site is further up).
//
//go:noinline
func (l *Log) sameFrames(m *memo) bool {
	var rets [memoFrames + 2]uintptr        // rets[:2]: sameFrames, RMA
	n := raw.FrameReturns(rets[:m.depth+2]) // the memo's depth is at most memoFrames (remember)
	return n == m.depth+2 && [memoFrames]uintptr(rets[2:]) == m.rets
}

// KeyOf is the key of an access of kind by op on elements of typ made by
// call in epoch e, for Log.RMA.
func KeyOf(kind Kind, op, typ uint8, call uint32, e Epoch) uint64 {
	return uint64(kind) | uint64(op)<<8 | uint64(typ)<<16 | uint64(e)<<25 | uint64(call)<<32
}

// RMA is Access for an RMA call (not a load or store, a Thread 0 call)
// of bytes [lo, hi) of target, key its KeyOf, made by the function that
// calls RMA, which gives its own return address in pc (raw.ReturnPC; 0:
// none): the call's site is there unless that is a function of shmrun's
// own, so a repeat is recognized by pc, with no frame walk and no Access
// to build.
//
//go:noinline
func (l *Log) RMA(target int, lo, hi uint64, key uint64, pc uintptr) {
	if l == nil || uint(target) >= uint(len(l.world)) || hi <= lo {
		return
	}
	if m := l.tg[target].memo.Load(); m != nil && m.lo == lo && m.hi == hi && m.key == key && goOnly() &&
		(pc != 0 && m.pc == pc || m.pc == 0 && m.depth > 0 && l.sameFrames(m)) && (!m.atomic || l.quiet(target, m)) && !m.unordered() {
		// standsFor and count, spelled out: no calls on this path.
		v := m.at.Load()
		id, head := uint32(v>>32), uint32(v)
		if uint32(atomic.LoadUint64(raw.Word64(l.mem, l.base(target)))) == head &&
			atomic.LoadUint64(raw.Word64(l.mem, l.recOff(target, id)+recWord0)) == uint64(id)<<32|uint64(loadRelaxed(&l.p.clock0)) {
			l.count(m)
			return
		}
	}
	a := keyAccess(key, target, lo, hi)
	l.access(&a, pc)
}
