package rmacheck

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/internal/raw"
)

// RingLen is how many of a target's latest accesses its ring keeps.
const RingLen = 256

// A record of the ring: word0 is id<<32 | the origin's clock at the
// access's completion (0: not complete yet); the id is written last and
// re-read after the fields, so a record being rewritten is skipped.
// The call and the site are numbers in the origin's names (Name).
const (
	recWord0   = 0  // uint64
	recOrigin  = 8  // uint32 world rank
	recTeam    = 12 // uint16 window rank
	recKind    = 14 // uint8
	recOp      = 15 // uint8
	recTyp     = 16 // uint8
	recLocal   = 17 // uint8
	recEpoch   = 18 // uint8
	recCall    = 20 // uint32
	recLo      = 24 // uint64
	recHi      = 32 // uint64
	recSite    = 40 // uint32
	recDone    = 48 // uint64: id<<32 | the entry whose clock word0 holds
	recIssue   = 56 // uint32: the origin entry's clock when the call was made
	recLen     = 64
	headLen    = 64
	clockAlign = 64
)

// targetLen is the bytes of one target's part of a window's area in a
// world of n ranks: its ring's head (and, in the same line, the counts of
// releases into its atomics clocks: relWord), its locks' clocks and its
// atomics clocks (one per bucket of locations: atomic.go), its ring.
func targetLen(n int) int64 {
	c := (int64(n)*Threads*4 + clockAlign - 1) / clockAlign * clockAlign
	return headLen + (2+atomicBuckets)*c + RingLen*recLen
}

// ringOff is where target t's ring starts in the area.
func (l *Log) ringOff(t int) int64 {
	return l.base(t) + headLen + (2+atomicBuckets)*l.clen
}

// Slots of a window's clocks (Log.Clocks).
const (
	SlotFence    = 0 // and 1: alternate fences
	SlotPost     = 2 // a target's Post, to its origins' Start
	SlotComplete = 3 // an origin's Complete, to its targets' Wait
	winSlots     = 4
)

// LogAreaLen is the size of the area of a window of m ranks in a world of
// n: the targets' parts, the window's clocks, then a line holding the
// window's number (InitLog).
func LogAreaLen(m, n int) int64 { return numberOff(m, n) + headLen }

// numberOff is where a window's area holds the window's number.
func numberOff(m, n int) int64 { return int64(m)*targetLen(n) + ClockAreaLen(winSlots, m, n) }

// InitLog numbers the area of a window of m ranks, on the rank that makes
// it (team.Area's init): the job's next window number, from a counter in
// the world's message area. Every rank of the window reads it there
// (NewLog), so a report names a window by one number on every rank and
// two windows by two, whichever processes made them on whichever
// communicators (two windows made at once take the numbers in either
// order).
func (p *Proc) InitLog(mem []byte, m int) error {
	if p == nil {
		return nil
	}
	id := atomic.AddUint32(p.wins, 1) - 1
	atomic.StoreUint32(raw.Word32(mem, numberOff(m, p.n)), id)
	return nil
}

// Log is this rank's view of a window's area.
type Log struct {
	p       *Proc
	mem     []byte
	world   []int // window rank → world rank
	me      int   // window rank
	id      int   // the window's number, for reports: the same on every rank (InitLog)
	sameOp  bool  // accumulate_ops=same_op
	addrs   bool  // accesses are at addresses (a dynamic window): SetAddresses
	tlen    int64
	clen    int64
	pending [][]pend // per target: this rank's accesses not complete yet
	from    []uint32 // per target and thread: records before this id happened before the thread, or were dropped
	clocks  *Clocks  // the window's fence and PSCW clocks
	tg      []tstate // per target: the repeat path's state (repeat.go)
	joined  []uint32 // per target and bucket: its relWord when this rank last joined that atomics clock (atomic.go)
	anyDup  uint32   // 1 when a repeat may be outstanding (relaxed)
	reps    []*memo  // the memos of the records settle made pending (pend.rep; nil when done)
	live    int      // reps not nil

	// unordered has a bit per order of accumulate_ordering the window
	// does not keep (ordRAR...): 0, the default, keeps all four.
	unordered uint8
}

type pend struct {
	off   int64 // the record's offset in mem
	id    uint32
	entry int    // the thread (clock entry) that made the call
	issue uint32 // its clock then
	rep   uint32 // 1 + the index in Log.reps of the memo whose repeats settle made it pending for, or 0
}

// NewLog is a window's log over mem (a collective area of LogAreaLen
// bytes, zeroed, then numbered by InitLog: the window's number in
// reports); world maps window ranks to world ranks; me is this rank's
// window rank; sameOp is its accumulate_ops=same_op info. nil when not
// checking.
func (p *Proc) NewLog(mem []byte, world []int, me int, sameOp bool) *Log {
	if p == nil {
		return nil
	}
	n, m := p.n, len(world)
	id := int(atomic.LoadUint32(raw.Word32(mem, numberOff(m, n))))
	l := &Log{p: p, mem: mem[:LogAreaLen(m, n)], world: world, me: me, id: id, sameOp: sameOp,
		tlen: targetLen(n), clen: (int64(n)*Threads*4 + clockAlign - 1) / clockAlign * clockAlign, pending: make([][]pend, m), from: make([]uint32, m*Threads),
		clocks: p.NewClocks(mem[int64(m)*targetLen(n):], winSlots, world, me), tg: make([]tstate, m), joined: make([]uint32, m*atomicBuckets)}
	p.mu.Lock()
	p.logs = append(p.logs, l)
	p.mu.Unlock()
	return l
}

// The orders of accumulate_ordering, bits of Log.unordered.
const (
	ordRAR = 1 << iota
	ordRAW
	ordWAR
	ordWAW
)

// SetOrdering is the window's accumulate_ordering info ("": the default,
// "none", or a comma-separated subset of rar, raw, war, waw): which of
// one origin's accumulates to the same bytes MPI applies in the order
// they were made, and so do not conflict with each other (conflict).
func (l *Log) SetOrdering(ord string) {
	if l == nil || ord == "" {
		return
	}
	l.unordered = 0
	for i, o := range [...]string{"rar", "raw", "war", "waw"} {
		if !strings.Contains(ord, o) {
			l.unordered |= 1 << i
		}
	}
}

// ordered reports whether the window keeps one origin's atomic access a
// before its later b in order: accumulate_ordering holds the order of
// a's kind (a write, unless NoOp) before b's.
func (l *Log) ordered(a, b Access) bool {
	bit := uint8(ordRAR)
	switch aw, bw := a.Op != OpNoOp, b.Op != OpNoOp; {
	case aw && bw:
		bit = ordWAW
	case aw:
		bit = ordRAW
	case bw:
		bit = ordWAR
	}
	return l.unordered&bit == 0
}

// ID is the window's number in reports.
func (l *Log) ID() int {
	if l == nil {
		return -1
	}
	return l.id
}

// Clocks is the window's clocks: slots SlotFence, SlotFence+1,
// SlotPost and SlotComplete.
func (l *Log) Clocks() *Clocks {
	if l == nil {
		return nil
	}
	return l.clocks
}

func (l *Log) base(t int) int64 { return int64(t) * l.tlen }

// clock is target t's clock k: 0 exclusive locks' releases, 1 shared
// locks', 2+b atomic updates' of locations in bucket b.
func (l *Log) clock(t, k int) []uint32 {
	off := l.base(t) + headLen + int64(k)*l.clen
	return raw.Elems[uint32](l.mem[off : off+int64(l.p.ne)*4])
}

// Access records a and checks it against target a.Target's ring. A
// repeat of the target's latest access takes the lock-free path (repeat.go).
//
// Its frames are counted (memoFrames, siteOf): it is never inlined.
//
//go:noinline
func (l *Log) Access(a *Access) {
	if l == nil || uint(a.Target) >= uint(len(l.world)) || a.Hi <= a.Lo {
		return
	}
	if m := l.tg[a.Target].memo.Load(); m != nil && a.Thread == 0 && goOnly() {
		var rets [memoFrames + 1]uintptr // rets[0] is in Access
		n := 0
		if a.Site == 0 && m.depth > 0 {
			n = raw.FrameReturns(rets[:m.depth+1]) // as deep as the memo's site
		}
		if m.same(a, rets[min(n, 1):n], a.Site != 0) && l.repeat(a, m) {
			return
		}
	}
	l.access(a, 0)
}

// access is Access past the lock-free path.
//
//go:noinline
func (l *Log) access(a *Access, pc uintptr) {
	depth := 0 // a.Site given, or found from pc
	var frames [memoFrames + 2]uintptr
	var rets []uintptr // the frames above Access
	if a.Site == 0 && pc != 0 && !fromC.Load() {
		if _, id, ok := firstSite([]uintptr{pc}); ok {
			a.Site = id
		} else {
			pc = 0 // a call of shmrun's own: walk
		}
	}
	if a.Site == 0 {
		if !fromC.Load() {
			n := raw.FrameReturns(frames[:])
			rets = frames[min(n, 2):n] // frames[:2]: access, Access
		}
		a.Site, depth = siteOf(rets)
	}
	if a.Kind == Atomic {
		beforeClock() // an atomic access joins or ticks the clock
	}
	p := l.p
	p.mu.Lock()
	p.use(a.Thread)
	if l.live > 0 {
		l.settled(a.Target)
	}
	// An atomic access joins what the target's atomic writers released,
	// and a write releases: both here, or (split: AtomicBefore or
	// ReleaseAtomic, then AtomicAfter or AccessAfter) the release before
	// the memory operation and the join after.
	write := a.Kind == Atomic && a.Op != OpNoOp && !a.split
	var bk uint8
	if a.Kind == Atomic {
		bk = buckets(a.Lo, a.Hi)
		l.joinAtomic(a.Target, bk)
	}
	if a.Kind != Atomic && l.reuse(a, l.tg[a.Target].memo.Load(), rets, depth == 0) {
		p.mu.Unlock()
		return
	}
	head := raw.Word64(l.mem, l.base(a.Target))
	var id uint32
	for id == 0 {
		id = uint32(atomic.AddUint64(head, 1))
	}
	off := l.recOff(a.Target, id)
	rec := l.mem[off : off+recLen : off+recLen]
	w0 := raw.Word64(rec, recWord0)
	atomic.StoreUint64(w0, 0)
	local := byte(0)
	if a.Local {
		local = 1
	}
	binary.LittleEndian.PutUint64(rec[recOrigin:], uint64(p.self)|uint64(l.me)<<32|uint64(a.Kind)<<48|uint64(a.Op)<<56)
	binary.LittleEndian.PutUint64(rec[recTyp:], uint64(a.Typ)|uint64(local)<<8|uint64(a.Epoch)<<16|uint64(a.Call)<<32)
	binary.LittleEndian.PutUint64(rec[recLo:], a.Lo)
	binary.LittleEndian.PutUint64(rec[recHi:], a.Hi)
	binary.LittleEndian.PutUint32(rec[recSite:], a.Site)
	binary.LittleEndian.PutUint64(rec[recDone:], uint64(id)<<32|uint64(p.self))
	binary.LittleEndian.PutUint32(rec[recIssue:], p.vc[p.self])
	var c uint32
	if a.Local {
		c = p.vc[p.self] // a load or store is complete at once
		p.bump()
	} else {
		l.addPending(a.Target, off, id, p.self, p.vc[p.self], 0)
	}
	atomic.StoreUint64(w0, uint64(id)<<32|uint64(c))
	if write {
		l.releaseAtomic(a.Target, bk)
	}
	if a.Kind == Atomic {
		// Repeats of an atomic access are atomic.go's.
		l.rememberAtomic(a, rets, depth, id, l.scan(a, id), pc)
		p.mu.Unlock()
		return
	}
	after := id
	if m := l.tg[a.Target].memo.Load(); m == nil || m.entry != p.self || m.outstanding() || !m.same(a, rets, depth == 0) {
		after = l.scan(a, id)
	} else if mid, h := m.rec(); h != id-1 || a.Kind == Write && !a.Local && atomic.LoadUint64(raw.Word64(l.mem, l.recOff(a.Target, mid)+recWord0)) == uint64(mid)<<32 {
		after = l.scan(a, id)
	}
	// Else a new record of the memo's access with nothing recorded there
	// since it was checked: every record there was checked against the
	// same access (repeat.go) — but for the memo's own record when that
	// is a Put not complete yet, which conflicts with this one (the
	// condition above).
	l.remember(a, rets, depth, id, after, pc)
	p.mu.Unlock()
}

// scan checks access b (record id) against the other records of its
// target's ring that may not have happened before this rank: those from
// l.from[target] on. The records before it are known to happen before
// this rank's clock, which only grows, so they cannot conflict with any
// later access of this rank either; scan moves l.from past the leading
// records that are known now (complete, and their origin's clock at
// completion joined here) or dropped from the ring. In a loop of RMA
// calls each followed by its Flush, that leaves one or two records to
// look at instead of the ring's RingLen. p.mu is held.
func (l *Log) scan(b *Access, id uint32) (head uint32) {
	p := l.p
	if m := l.tg[b.Target].memo.Load(); m != nil && m.entry == p.self && m.outstanding() {
		if mid, _ := m.rec(); mid != id {
			l.checkRepeat(b, m)
		}
	}
	ring := l.ringOff(b.Target)
	head = uint32(atomic.LoadUint64(raw.Word64(l.mem, l.base(b.Target))))
	wm := &l.from[b.Target*Threads+p.self%Threads]
	from := *wm
	switch {
	case head < RingLen:
		from = max(from, 1)
		if from > head+1 {
			// The head went back below the watermark, which only a
			// stray store into the area does: scan what the ring says
			// it holds rather than round the 2^32 ids to it.
			from = 1
		}
	case from == 0 || head-from >= RingLen:
		from = head - RingLen + 1 // older ids are gone from the ring
	}
	advance := true
	for aid := from; aid != head+1; aid++ {
		if aid == 0 {
			continue // ids skip 0
		}
		rec := l.mem[ring+int64((aid-1)%RingLen)*recLen:][:recLen:recLen]
		w0 := raw.Word64(rec, recWord0)
		v1 := atomic.LoadUint64(w0)
		switch got := uint32(v1 >> 32); {
		case got == aid:
		case got != 0 && int32(got-aid) > 0:
			if advance {
				*wm = aid + 1 // dropped: overwritten by a later record
			}
			continue
		default:
			advance = false // not written yet: its writer checks it against this one
			continue
		}
		origin := int(binary.LittleEndian.Uint32(rec[recOrigin:]))
		if origin < 0 || origin >= p.ne {
			advance = false
			continue
		}
		if c := uint32(v1); c != 0 && p.vc[l.doneBy(rec, aid, origin)] >= c {
			if advance {
				*wm = aid + 1
			}
			continue // a is complete and this rank knows it: a happened before b
		}
		advance = false
		if aid == id {
			continue
		}
		a := Access{Target: b.Target, Lo: binary.LittleEndian.Uint64(rec[recLo:]), Hi: binary.LittleEndian.Uint64(rec[recHi:])}
		if a.Hi <= b.Lo || b.Hi <= a.Lo {
			continue // the common case: elsewhere
		}
		a.Kind, a.Op, a.Typ, a.Local = Kind(rec[recKind]), rec[recOp], rec[recTyp], rec[recLocal] != 0
		a.issue = binary.LittleEndian.Uint32(rec[recIssue:])
		if !l.conflict(a, *b, origin) {
			continue
		}
		team := int(binary.LittleEndian.Uint16(rec[recTeam:]))
		a.Epoch, a.Call, a.Site = Epoch(rec[recEpoch]), binary.LittleEndian.Uint32(rec[recCall:]), binary.LittleEndian.Uint32(rec[recSite:])
		v2 := atomic.LoadUint64(w0)
		if uint32(v2>>32) != aid || uint32(v2) != uint32(v1) && uint32(v2) != 0 && p.vc[l.doneBy(rec, aid, origin)] >= uint32(v2) {
			continue // rewritten meanwhile, or completed and known now
		}
		l.conflictFound(a, *b, origin, team)
	}
	return head
}

// checkRepeat checks access b against m's, which has repeats not complete
// yet while its record (which the scan may pass as known) reads complete.
// p.mu is held.
func (l *Log) checkRepeat(b *Access, m *memo) {
	if m.hi <= b.Lo || b.Hi <= m.lo {
		return
	}
	a := keyAccess(m.key, b.Target, m.lo, m.hi)
	a.Site = m.site
	if l.conflict(a, *b, l.p.self) {
		l.conflictFound(a, *b, l.p.self, l.me)
	}
}

// doneBy is the entry whose clock record aid's word0 holds: its origin's
// (an access complete at once), or the thread's that completed it (a
// flush by another thread of the origin's process); the origin's when
// the record no longer says.
func (l *Log) doneBy(rec []byte, aid uint32, origin int) int {
	d := atomic.LoadUint64(raw.Word64(rec, recDone))
	if e := int(uint32(d)); uint32(d>>32) == aid && e < l.p.ne && e/Threads == origin/Threads {
		return e
	}
	return origin
}

// conflictFound reports a (by clock entry origin, window rank team) and b
// (by this rank), once per pair of calls and sites. p.mu is held.
func (l *Log) conflictFound(a, b Access, origin, team int) {
	p := l.p
	k := pairIDs{win: l.id, a: origin, b: p.self, ac: a.Call, as: a.Site, bc: b.Call, bs: b.Site}
	if p.seenIDs[k] {
		return
	}
	if p.seenIDs == nil {
		p.seenIDs = map[pairIDs]bool{}
	}
	p.seenIDs[k] = true
	adesc := p.nameOf(origin/Threads, a.Call) + " at " + p.nameOf(origin/Threads, a.Site)
	bdesc := p.nameOf(p.me, b.Call) + " at " + p.nameOf(p.me, b.Site)
	lo, hi := max(a.Lo, b.Lo), min(a.Hi, b.Hi)
	pair := []string{adesc, bdesc}
	sort.Strings(pair)
	key := fmt.Sprintf("%d|%s|%s", l.id, pair[0], pair[1])
	bytes := fmt.Sprintf("[%d, %d)", lo, hi)
	if l.addrs {
		bytes = fmt.Sprintf("at [%#x, %#x)", lo, hi)
	}
	owner := fmt.Sprintf("rank %d's", b.Target)
	if w := l.worldOf(b.Target); w >= 0 {
		owner += fmt.Sprintf(" (world rank %d's)", w)
	}
	p.report(key, fmt.Sprintf("window %d, %s bytes %s: %s by %s%s (%s) and %s by %s%s (%s) are not ordered by any synchronization",
		l.id, owner, bytes, adesc, l.rankName(team), thread(origin), a.Epoch, bdesc, l.rankName(l.me), thread(p.self), b.Epoch))
}

// worldOf is window rank r's world rank when that differs from r (a
// window of a communicator other than the world), else -1.
func (l *Log) worldOf(r int) int {
	if r >= 0 && r < len(l.world) && l.world[r] != r {
		return l.world[r]
	}
	return -1
}

// rankName names window rank r in a report: "rank r", and its world rank
// when that differs.
func (l *Log) rankName(r int) string {
	if w := l.worldOf(r); w >= 0 {
		return fmt.Sprintf("rank %d (world rank %d)", r, w)
	}
	return fmt.Sprintf("rank %d", r)
}

// SetAddresses says the window's accesses are at addresses, not offsets
// in the target's part (a dynamic window): reports print them in hex.
func (l *Log) SetAddresses() {
	if l != nil {
		l.addrs = true
	}
}

// thread names a clock entry's thread in a report: "" for thread 0.
func thread(entry int) string {
	if t := entry % Threads; t != 0 {
		return fmt.Sprintf(" thread %d", t)
	}
	return ""
}

// conflict reports whether a (by clock entry origin) and b (by this thread)
// may not run concurrently: one of them writes, and they are not both
// atomics the window's accumulate_ops lets run together, nor two atomics
// or two loads and stores of one rank (MPI orders a rank's accumulates to
// one target; a rank's loads and stores are in program order).
func (l *Log) conflict(a, b Access, origin int) bool {
	same := origin == l.p.self
	switch {
	case a.Kind == Read && b.Kind == Read:
		return false
	case same && a.Local && b.Local:
		return false
	case a.Kind == Atomic && b.Kind == Atomic:
		// Atomicity and a rank's ordering of its accumulates hold per
		// basic datatype and element: two types, or one type over
		// elements that straddle each other (disp_unit 1), conflict even
		// from one origin.
		if a.Typ != b.Typ || !sameGrid(a, b) {
			return true
		}
		// MPI applies a process's accumulates in the order they were
		// made: another thread's made before this one (its making known
		// here) is ordered — as far as the window's accumulate_ordering
		// keeps that order; where it does not, the two are concurrent,
		// and the ops decide as for two origins' (below).
		if (same || origin/Threads == l.p.self/Threads && l.p.vc[origin] >= a.issue) && l.ordered(a, b) {
			return false
		}
		if a.Op == b.Op {
			return false
		}
		if !l.sameOp && (a.Op == OpNoOp || b.Op == OpNoOp) {
			return false
		}
		swap := func(op uint8) bool { return op == OpCAS || op == OpReplace }
		return l.sameOp || !swap(a.Op) || !swap(b.Op)
	case a.Kind == Atomic && a.Op == OpNoOp && b.Kind == Read, b.Kind == Atomic && b.Op == OpNoOp && a.Kind == Read:
		return false
	}
	return true
}

// sameGrid reports whether two accesses of one basic type lay their
// elements on the same boundaries (their starts differ by whole elements).
func sameGrid(a, b Access) bool {
	size := uint64(atomics.Type(a.Typ).Size())
	if size <= 1 {
		return true
	}
	return (a.Lo%size+size-b.Lo%size)%size == 0
}

// Complete marks this rank's accesses to target (-1: every target) complete
// at its current clock (Flush, Unlock, UnlockAll, Fence, Complete). With
// nothing pending there but repeats (repeat.go), it only counts them done.
// fenced reports that it made an atomic read-modify-write (a full fence,
// as Flush needs one).
func (l *Log) Complete(target int) (fenced bool) {
	if l == nil {
		return false
	}
	if uint(target) < uint(len(l.tg)) {
		if s := &l.tg[target]; loadRelaxed(&s.npend) == 0 && goOnly() {
			// The repeats made so far are complete now (at this clock, as
			// their record says).
			if m := s.memo.Load(); m != nil {
				return m.completed()
			}
			return false
		}
	}
	l.complete(target)
	return false
}

func (l *Log) complete(target int) {
	p := l.p
	p.mu.Lock()
	p.use(0)
	for t := range l.pending {
		if target >= 0 && t != target {
			continue
		}
		// The repeats made so far are complete now: those outstanding at
		// a release are in pending (settle), the others' record says so.
		s := &l.tg[t]
		if m := s.memo.Load(); m != nil {
			m.completed()
			m.conv = false
		}
		ps := l.pending[t]
		keep := ps[:0]
		for i := range ps {
			pd := &ps[i] // not a copy: a 16-byte move then narrower loads stall
			if pd.entry != p.self && p.vc[pd.entry] < pd.issue {
				// Another thread's call this thread does not know was
				// made: not this flush's to complete (MPI completes the
				// process's calls made before it, and nothing orders
				// this one before it).
				keep = append(keep, *pd)
				continue
			}
			if pd.rep != 0 {
				l.dropRep(pd.rep)
			}
			w0 := raw.Word64(l.mem, pd.off+recWord0)
			if atomic.LoadUint64(w0) != uint64(pd.id)<<32 {
				continue // overwritten
			}
			if e := uint64(p.self); int(e) != pd.entry {
				// Completed by another thread than the one that made it
				// (compare-and-swap: the ring may have moved on).
				done := raw.Word64(l.mem, pd.off+recDone)
				if !atomic.CompareAndSwapUint64(done, uint64(pd.id)<<32|uint64(pd.entry), uint64(pd.id)<<32|e) {
					continue
				}
			}
			atomic.CompareAndSwapUint64(w0, uint64(pd.id)<<32, uint64(pd.id)<<32|uint64(p.vc[p.self]))
			if !p.isAtomicMemo(l, t, pd.id) {
				p.bump()
			}
		}
		l.pending[t] = keep
		storeRelaxed(&s.npend, uint32(len(keep)))
	}
	p.mu.Unlock()
}

// Lock joins what earlier holders of target's lock released: an exclusive
// lock every earlier holder's, a shared one the exclusive holders'.
func (l *Log) Lock(target int, exclusive bool) {
	if l == nil || target < 0 || target >= len(l.world) {
		return
	}
	beforeClock()
	l.p.mu.Lock()
	defer l.p.mu.Unlock()
	l.p.use(0)
	l.p.acquireFrom(l.clock(target, 0))
	if exclusive {
		l.p.acquireFrom(l.clock(target, 1))
	}
}

// Unlock releases this rank's clock to target's later lockers (call
// Complete first).
func (l *Log) Unlock(target int, exclusive bool) {
	if l == nil || target < 0 || target >= len(l.world) {
		return
	}
	beforeClock()
	l.p.mu.Lock()
	defer l.p.mu.Unlock()
	l.p.use(0)
	k := 1
	if exclusive {
		k = 0
	}
	l.p.releaseInto(l.clock(target, k))
}

// LockAll is a shared Lock of every target; UnlockAll its Unlock.
func (l *Log) LockAll() {
	if l == nil {
		return
	}
	for t := range l.pending {
		l.Lock(t, false)
	}
}

// UnlockAll is UnlockAll's release (call Complete(-1) first).
func (l *Log) UnlockAll() {
	if l == nil {
		return
	}
	for t := range l.pending {
		l.Unlock(t, false)
	}
}
