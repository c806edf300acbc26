//go:build !mpi

package comm

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/raw"
)

// The checker. In an area of more than two ranks (collArea.star), rank 0
// compares every round's signatures for all: in the round itself where
// its call reads every rank, else when every rank has published the
// round (settle); it says in the checker's record (format.CollCheck) the
// round through which it has (done), and the last mismatch it found.
// The other ranks compare only the signatures of the ranks whose data
// they read, in the call, and learn of the rest from the record.
//
// So a line is read by the ranks that read its data and by rank 0, and
// that is whom its writer waits for before it writes the line again:
// rank q writes its line of round r once the ranks that read its line of
// round r-P (recorded then, lineReaders) have published round r-P+1 (the
// readers of a call of one round) or r-P/2 (any other call's: every
// rank), and rank 0 has compared round r-P. A Bcast's reader then waits
// for its root alone, its root for the readers, as the C limit's do
// (bench/NOTES.md); before, every rank waited for every rank's round
// r-P/2, so each waited for the slowest. Rank 0 writes its line of round
// r once every rank has published round r-P+1, and compares first what
// that allows: before it publishes round r it has compared round r-P+1,
// so a rank that has seen rank 0's round r-1 may write its round r (the
// C interface's one-round calls, which wait for every rank's previous
// round, rely on it).
//
// A rank that does not read a line may still look at it: a rank whose
// call differs from its owner's (a mismatch: it reads a line its owner
// does not count it among the readers of). Its owner may be writing the
// line over then. So a rank that is not rank 0 trusts what it read of a
// line's signature only if the line's round word still says the round
// afterwards, and a writer stores round r-1 into its line's round word
// before it writes the line's signature and data for round r (busy):
// reached for round r-1, which the line never carries, and for nobody
// waiting for round r. A line found moved on means rank 0 has compared
// the round (the writer waited for that): the verdict is then the
// record's, which holds the round's mismatch, if any, until this rank
// publishes the next (rank 0 cannot compare a later round before). The
// line of a rank whose data this rank reads moves on only in a mismatch;
// another's may move on anyway (the C interface's one-round calls compare
// every line, a Bcast's reader's too).

// lineReaders is who reads a rank's line of one round: the ranks [lo, hi)
// (this rank, if among them, aside), once they have published the round
// plus lag.
type lineReaders struct {
	lo, hi int32
	lag    uint32
	r      uint32 // the round they read
}

// checkRec is the checker's record of an area of more than two ranks.
type checkRec struct {
	done  *uint32 // format.CheckDone
	count *uint32 // format.CheckCount
	rec   []byte  // the record's two lines
}

func newCheckRec(mem []byte) *checkRec {
	off := int64(format.CollCheck)
	return &checkRec{done: raw.Uint32At(mem, off+format.CheckDone), count: raw.Uint32At(mem, off+format.CheckCount),
		rec: mem[off : off+2*format.Line : off+2*format.Line]}
}

// readAll records that the line of the round just published is read by
// every rank, as a call of more than one round reads it (post's default).
func (a *collArea) readAll(r uint32) {
	a.rd[r&(a.par-1)] = lineReaders{0, int32(a.n), a.par / 2, r}
}

// readBy records that the line of round r, the one round of a call, is
// read by ranks [lo, hi) only.
func (a *collArea) readBy(r uint32, lo, hi int) {
	a.rd[r&(a.par-1)] = lineReaders{int32(lo), int32(hi), 1, r}
}

// busy marks this rank's line of round r as being written (the checker's
// comment above): round word r-1, stored before the line's other words.
// Only non-x86 machines reorder stores; they get a full fence between.
// Every time: a rank that compares round r-P late (settle) may be reading
// the line whoever has published what (and a Barrier or an Allreduce of 8
// ranks on 2 cores measured the same with it and without).
func (a *collArea) busy(r uint32) {
	atomics.StoreRelease32(a.seq(a.me, int(r&(a.par-1))), r-1)
	if storesReorder {
		a.fullFence()
	}
}

// storesReorder says that this machine may make a store visible before an
// earlier one (all but x86).
const storesReorder = runtime.GOARCH != "amd64" && runtime.GOARCH != "386"

// lineFree waits until this rank may write its line of round r: every
// rank that reads the line's previous round has done so, and rank 0 has
// compared it (the rules above); with two ranks, both have published
// round r-P/2. It leaves Seen and the settled checks for the caller.
func (a *collArea) lineFree(r uint32) error {
	if a.star && a.lineFreeNow(r) {
		return nil
	}
	return a.lineWait(r)
}

// lineFreeNow is lineFree's common case at a rank other than 0 of more
// than two (star), inlined where a call of one round starts (fastRound):
// the line's previous round is Go's, its readers (if any) have published
// what they must (as Seen says) and rank 0 has compared it (as cseen
// says): a Bcast's reader, a Gather's sender, nearly every call of a
// loop.
func (a *collArea) lineFreeNow(r uint32) bool {
	old := r - a.par
	rd := &a.rd[r&(a.par-1)]
	return a.me != 0 && rd.r == old && (rd.hi <= rd.lo || a.atLeast(a.h.Seen, old+rd.lag)) && a.atLeast(a.cseen, old)
}

// lineWait is lineFree's wait.
func (a *collArea) lineWait(r uint32) error {
	if !a.star {
		if need := r - a.par/2; !a.atLeast(a.h.Seen, need) {
			return a.waitRange(need, 0, a.n)
		}
		return nil
	}
	p := r & (a.par - 1)
	old := r - a.par
	rd := a.rd[p]
	if rd.r != old {
		// Round r-P was the C interface's (mpi_fast.h): a call of one
		// round in which every rank may read every line. Rounds ran
		// that Go did not see: look at rank 0's record now.
		rd = lineReaders{0, int32(a.n), 1, old}
		if a.me != 0 {
			// done now, whatever cseen says: after 2^32 rounds of C an
			// old cseen can look recent (atLeast measures back from
			// this rank's round), and done only ever moves on.
			a.cseen = atomic.LoadUint32(a.chk.done)
			a.loadChecked(old)
		}
	}
	need := old + rd.lag
	if a.me == 0 {
		// Rank 0 compares round r-P+1 before it publishes round r.
		if n := old + 1; rd.hi <= rd.lo || int32(n-need) > 0 {
			need = n
		}
		if !a.atLeast(a.h.Seen, need) {
			return a.waitRange(need, 0, a.n)
		}
		return nil
	}
	if rd.hi > rd.lo && !a.atLeast(a.h.Seen, need) {
		if rd.lo == 0 && int(rd.hi) == a.n {
			if err := a.waitRange(need, 0, a.n); err != nil {
				return err
			}
		} else {
			for q := int(rd.lo); q < int(rd.hi); q++ {
				if err := a.wait(q, need); err != nil {
					return err
				}
			}
		}
	}
	if !a.atLeast(a.cseen, old) {
		return a.waitChecked(old)
	}
	return nil
}

// waitChecked waits for rank 0 to have compared round x, which it has
// at the latest once it has published round x+P-1 (its rule above): the
// wait sleeps on that round of rank 0's line.
func (a *collArea) waitChecked(x uint32) error {
	if a.loadChecked(x) {
		return nil
	}
	r := x + a.par - 1
	l := a.line(0, int(r&(a.par-1)))
	seq := l.ev.Seq
	cond := func() bool { return a.atLeast(atomic.LoadUint32(a.chk.done), x) || reached(seq, r) }
	if !cond() {
		if a.stops() {
			return errTry
		}
		a.flush()
		if err := l.ev.Await(a.abort, a.policy, cond); err != nil {
			return err
		}
	}
	a.loadChecked(x)
	return nil
}

// loadChecked loads the round rank 0 has compared through, reads its
// record if it found a mismatch since this rank last looked, and reports
// whether round x is compared.
func (a *collArea) loadChecked(x uint32) bool {
	v := atomic.LoadUint32(a.chk.done) // at most this rank's round
	if a.h.Round-v < a.h.Round-a.cseen {
		a.cseen = v
	}
	if a.h.Round-a.cseen < a.h.Round-a.h.Seen {
		a.h.Seen = a.cseen // every rank has published what rank 0 compared
	}
	if a.h.Round-a.reported > 1<<30 {
		a.reported = a.h.Round - 1<<30 // within reach (reportedBefore)
	}
	if c := atomic.LoadUint32(a.chk.count); c != a.vseen && c&1 == 0 {
		if v, ok := a.readVerdict(); ok {
			a.vseen = c
			if !a.reportedBefore(v.r) {
				a.report(v.r)
				if a.stale == nil {
					err := a.verdictError(kindName(v.s0.kind), v)
					a.stale = &lateError{fmt.Errorf("%w (rank 0 found it; rank %d learned of it in a later collective call)", err, a.me)}
				}
			}
		}
	}
	return a.atLeast(a.cseen, x)
}

// report records that this rank has reported a mismatch of round r (in the
// call, or later): it does not report one of that round or an earlier one
// again, from its late checks (settle) or rank 0's record. One error tells
// the program its calls went wrong; the first of several mismatches close
// together may go unnamed on some ranks.
func (a *collArea) report(r uint32) {
	if !a.reportedBefore(r) {
		a.reported = r
	}
}

// reportedBefore reports whether a mismatch of round r is reported
// already (report), both rounds at most this rank's (atLeast). The round
// reported is kept within 2^30 of this rank's (here and in loadChecked,
// which every rank that runs ahead calls): a rank that has reported none
// for that long still reports what comes.
func (a *collArea) reportedBefore(r uint32) bool {
	if a.h.Round-a.reported > 1<<30 {
		a.reported = a.h.Round - 1<<30
	}
	return a.atLeast(a.reported, r)
}

// verdictRec is a mismatch: of round r, rank q's signature sq against
// rank 0's s0 in the fields same.
type verdictRec struct {
	r      uint32
	q      int
	s0, sq sigFields
	same   sameFields
}

// readVerdict reads the checker's record under its sequence lock; false
// if rank 0 is writing it.
func (a *collArea) readVerdict() (verdictRec, bool) {
	c := atomic.LoadUint32(a.chk.count)
	if c&1 != 0 {
		return verdictRec{}, false
	}
	b := a.chk.rec
	v := verdictRec{r: atomic.LoadUint32(raw.Uint32At(b, format.CheckRound)),
		q: int(int32(atomic.LoadUint32(raw.Uint32At(b, format.CheckRank)))), same: sameFields(atomic.LoadUint32(raw.Uint32At(b, format.CheckSame))),
		s0: getSig(b[format.CheckSig0:]), sq: getSig(b[format.CheckSigQ:])}
	if atomic.LoadUint32(a.chk.count) != c {
		return verdictRec{}, false
	}
	if c == 0 {
		v.r = a.h.Round + 1 // no mismatch yet: a round nobody is in
	}
	return v, true
}

// recordVerdict is rank 0 writing a mismatch into its record (before it
// publishes done past the round). Rank 0 compares the rounds in order (it
// settles the pending ones before it names a later round's mismatch), so
// the record's round only grows, and a rank that finds a line of its round
// moved on finds that round's mismatch there if it had one (verdict); a
// round's second verdict (a refused rank's) is not written again. (Only
// equal rounds are skipped: an ordering test would fail when the rounds
// wrap past 2^31.)
func (a *collArea) recordVerdict(v verdictRec) {
	b := a.chk.rec
	c := atomic.LoadUint32(a.chk.count)
	if c != 0 && v.r == atomic.LoadUint32(raw.Uint32At(b, format.CheckRound)) {
		return
	}
	atomic.StoreUint32(a.chk.count, c|1)
	atomic.StoreUint32(raw.Uint32At(b, format.CheckRound), v.r)
	atomic.StoreUint32(raw.Uint32At(b, format.CheckRank), uint32(int32(v.q)))
	atomic.StoreUint32(raw.Uint32At(b, format.CheckSame), uint32(v.same))
	putSig(b[format.CheckSig0:], v.s0)
	putSig(b[format.CheckSigQ:], v.sq)
	atomic.StoreUint32(a.chk.count, (c|1)+1)
}

// publishChecked is rank 0 saying how far it has compared: every round
// it published but the pending ones (settle) and those after them, and no
// further than every rank has published (Seen: the later rounds of a call
// of several carry no signature, and rank 0 may be in them alone), so
// that done is also a round every rank has published, which the others
// take for their Seen (loadChecked). Its rule for writing a line keeps
// Seen at r-P+1 or more before its round r.
func (a *collArea) publishChecked() {
	if a.holdDone {
		return
	}
	v := a.h.Round
	if a.npend > 0 {
		v = a.pend[a.pend0].r - 1
	}
	if !a.atLeast(a.h.Seen, v) {
		v = a.h.Seen
	}
	if v != a.cseen {
		a.cseen = v
		atomics.StoreRelease32(a.chk.done, v)
	}
}

// lineAt reports whether rank q's line of parity p still holds round r:
// what a rank that is not rank 0 read there of round r is round r's.
func (a *collArea) lineAt(q, p int, r uint32) bool {
	return !a.star || a.me == 0 || q == a.me || atomic.LoadUint32(a.seq(q, p)) == r
}

// putSig stores a decoded signature as getSig reads it.
func putSig(b []byte, s sigFields) {
	storeSig(b, uint64(s.kind)|uint64(s.typ)<<8|uint64(s.op)<<16|uint64(s.failed)<<24|uint64(uint32(s.root))<<32, s.count)
}

// findVerdict is verdict's search over the lines of round r (parity p):
// the lowest rank whose own arguments failed, else the first whose
// signature differs from rank 0's in the fields same names (found), and
// whether every line still held round r afterwards (intact).
func (a *collArea) findVerdict(p int, r uint32, same sameFields) (v verdictRec, found, intact bool) {
	s0 := getSig(a.meta(0, p)[metaSig:])
	for q := range a.n {
		sq := getSig(a.meta(q, p)[metaSig:])
		if sq.failed != 0 || mismatch(s0, sq, q, same) != "" {
			v, found = verdictRec{r: r, q: q, s0: s0, sq: sq, same: same}, true
			break
		}
	}
	return v, found, a.intact(p, r)
}

// intact reports whether every line of parity p still holds round r, as
// far as this rank can tell (lineAt).
func (a *collArea) intact(p int, r uint32) bool {
	for q := range a.n {
		if !a.lineAt(q, p, r) {
			return false
		}
	}
	return true
}

// verdictError is the error of mismatch v in a call named name.
func (a *collArea) verdictError(name string, v verdictRec) error {
	if v.sq.failed != 0 {
		class := collClasses[int(v.sq.failed-1)%len(collClasses)]
		return collErrorf(name, a.me, class, "rank %d's arguments were refused there", v.q)
	}
	return collErrorf(name, a.me, mismatchClass(v.s0, v.sq, v.same), "%s", mismatch(v.s0, v.sq, v.q, v.same))
}

// collErrorf is the error of collective call name on rank me.
func collErrorf(name string, me int, class error, format string, args ...any) error {
	// A message from an error of the class already ends with the class's
	// text: said once.
	msg := strings.TrimSuffix(fmt.Sprintf(format, args...), ": "+class.Error())
	return fmt.Errorf("comm: %s on rank %d: %s: %w", name, me, msg, class)
}
