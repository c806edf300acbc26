package rmacheck

// Repeats of an atomic access. An accumulate, FetchAndOp or
// CompareAndSwap joins its target's atomics clock and, unless it only
// reads (NoOp), releases the thread's clock into it and ticks: a later
// atomic access there learns everything this thread did before. So the
// clock moves on every call and no record is ever complete at the
// current clock, which repeat.go's lock-free path needs.
//
// A repeat may skip the join and the release when they would change
// nothing anyone could observe:
//
//   - The join adds nothing: the target's atomics clock is released into
//     only by an atomic access there that is not a repeat, which claims a
//     record in the target's ring first — and a repeat needs the ring's
//     head where it was when the memo's access was checked.
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
// latest atomic memo's (amemo): two atomic streams that alternate make
// each other's completions news and take the locked path.

// quiet reports whether a repeat of atomic memo m's access may skip the
// join and the release (above) as far as the thread's clock goes: it has
// not moved, nor learned anything, since m's access.
func (l *Log) quiet(m *memo) bool {
	return loadRelaxed(&l.p.clock0) == m.clock && loadRelaxed(&l.p.news) == m.news
}

// rememberAtomic makes record id, which holds atomic access a, its
// target's memo: as remember, with what quiet compares. p.mu is held,
// and a's join and release are made.
func (l *Log) rememberAtomic(a *Access, rets []uintptr, depth int, id, head uint32, pc uintptr) {
	p, t := l.p, a.Target
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
