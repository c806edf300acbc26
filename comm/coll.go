//go:build !mpi

package comm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/internal/rmacheck"
	"github.com/shmrun/shmrun/internal/winc"
	"github.com/shmrun/shmrun/shm"
)

// The collective engine. Every collective call of a communicator runs in
// rounds over its collective area (internal/format's CollLayout; the
// protocol is written there): a rank fills its staging buffer or the
// inline bytes of its flag line, publishes the round number, waits for the
// ranks whose data it needs and reads it. The first round of a call carries
// every rank's signature. A rank checks the signatures of the ranks it
// reads before it reads them; in a call of more than one round every rank
// waits for every rank's signature and checks them all, so all reach the
// same verdict on a mismatch before any data moves; in a call of one round
// a rank that reads only some ranks (a Bcast's reader), or none (its root),
// checks the others' when a later call opens a round (settle): the call is
// done once its data is in or out, and a loop of such calls runs ahead,
// as the MPIs' do. Later rounds move the rest of a large payload a chunk
// at a time, two chunks in flight (the staging parities), each rank
// copying or reducing its share.
//
// A rank writes its line of round r (parity r%P, P = format.CollParities)
// once the ranks that read its line of round r-P are done with it
// (lineFree), and its staging buffer of round r once every rank has
// published round r-1 (open). With two ranks, each reads every line of
// round r, its pending signature checks included, before it publishes
// round r+P/2 (so a line is free once every rank has published r-P/2);
// with more, rank 0 compares every round's signatures for all (the
// checker, coll_check.go), and a line is free once its data's readers
// have read it and rank 0 has compared it: a rank that reads nothing
// runs up to P rounds ahead of the slowest. A call of one round whose
// staged data fits an S-th of a buffer (S = format.CollSlots) puts it in
// slot (r/2)%S of the buffer (format.CollSlot), last used by round r-2S,
// and writes it once every rank has published round r-2S+1 (and under the
// lines' rule), unless the rank wrote more of that buffer within the last
// 2S rounds.
//
// The own-line rule: a rank never loads back a word of its own flag line
// once it has published into it. The others poll that line, and the load
// waits for it: 35-50 ns a load on a two-rank round of ~150 (bench/NOTES.md).
// So its own round counts as reached (wait), its own signature is compared
// from registers (alike, pendSig), its own data comes from its own buffers,
// and its lines' sleepers words live in its Ibarrier block
// (format.IbarFlagSleepers).

// collArea is one rank's view of a communicator's collective area.
type collArea struct {
	mem   []byte
	l     format.CollLayout
	n, me int
	// h holds the rounds this rank has published (Round), the round
	// through which every rank has (Seen) and the parities published
	// without their wake-up (Pending, see post). It is mapped outside the
	// Go heap: the C interface's MPI_Barrier advances it too.
	h        *winc.Coll
	releaseH func() // gives h back (Free)
	par      uint32 // line parities: format.CollParities(n), a power of two
	slots    uint32 // staging slots a buffer: format.CollSlots(n), a power of two
	slotLen  int    // a staging slot's bytes: Chunk / slots
	fullAt   uint32 // the last round that wrote a staging buffer beyond its slot
	// flags is the flag lines, rank-major (format.CollLayout.FlagOff):
	// rank q's line of parity p at (q·P+p)·Line, reached by offset
	// (seq, meta), not through a table of pointers: a table's entries
	// are a cache line more to miss a call, and a loop of calls walks
	// every parity (8 ranks on 2 cores, bench/NOTES.md). mySleepers is
	// this rank's lines' sleepers words (format.IbarFlagSleepers).
	flags      []byte
	mySleepers []byte
	stage      [][2][]byte
	ibar       []barrier.Event
	freed      atomic.Bool // the communicator was freed: its requests fail
	abort      *uint32
	policy     barrier.Policy
	fence      *uint64 // a word on a line of this rank's own (see post)
	single     bool    // large payloads move by single copy (single.go)
	scratch    []byte  // private working memory of single-copy calls
	evenBl     blocks  // equal blocks of evenSize bytes (even)
	evenSize   int
	// pend holds the first rounds of the calls whose signatures this rank
	// has not yet compared with every rank's (offer, agreeFrom), oldest
	// first from pend[pend0]: a ring, npend long. settle compares them
	// once every rank has published them. They are rounds this rank
	// published after the last one every rank has (Seen): with two ranks
	// at most P/2 of them (the rule for writing a line), on rank 0 of more
	// at most P-1; the other ranks of more drop the oldest when the ring
	// is full (rank 0 compares it: coll_check.go).
	pend  [maxParities]pending
	pend0 int
	npend int
	// stale is the mismatch settle found, returned by the next collective
	// call that moves data (end), after that call has run.
	stale error
	fastN uint64 // rounds run by the fast path (coll_fast.go), for the tests
	// The checker (coll_check.go), in an area of more than two ranks
	// (star): its record; the round through which rank 0 has compared
	// every signature, as this rank last saw it (or, on rank 0, said
	// it); the record's mismatch count this rank last read; the last
	// round whose mismatch this rank found itself; who reads this rank's
	// line of each parity.
	star     bool
	lost     bool // settle left rounds to the record
	holdDone bool // rank 0 names a mismatch of its current round (settleFirst)
	chk      *checkRec
	cseen    uint32
	vseen    uint32
	reported uint32
	rd       [maxParities]lineReaders
	// A nonblocking collective's step (nbc_shm.go): try is the goroutine
	// (raw.Goroutine) whose call runs in try mode (its waits stop:
	// errTry), 0 for none; tried what stopped it (triedWait,
	// triedGeneral); resume that this rank's last round is a fast call's
	// that a step published and left (fastRound goes on from there). try
	// is read by any goroutine's prepare and waits (a program's erroneous
	// collective beside the step's must not stop), the rest by the job's
	// runner alone.
	try    atomic.Uintptr
	tried  uint8
	resume bool
}

// What stopped a call in try mode (collArea.tried).
const (
	triedWait    = 1 // a wait of the fast path (wait, waitChecked)
	triedGeneral = 2 // the general path, before it began (prepare)
)

// errTry is a call's in try mode where it would wait: the step that ran
// it leaves its job to the next (nbc_shm.go). Never a program's.
var errTry = winc.ErrTry

// maxParities bounds format.CollParities.
const maxParities = 64

// pending is a call's first round whose signatures are still to check.
type pending struct {
	name string
	r    uint32
	same sameFields
	s    sig
}

// fenceLine is a private word alone on its cache lines.
type fenceLine struct {
	_ [64]byte
	w uint64
	_ [56]byte
}

// flagLine is one rank's flag line of one parity, as a wait needs it.
type flagLine struct {
	ev   barrier.Event // Seq: the round; Sleepers: its waiters
	meta []byte        // the signature words and inline bytes (line[8:])
}

// line returns rank q's flag line of parity p.
func (a *collArea) line(q, p int) flagLine {
	return flagLine{
		ev:   barrier.Event{Seq: a.seq(q, p), Sleepers: raw.Uint32At(a.mem, a.l.SleepersOff(q, p)), Light: true},
		meta: a.meta(q, p),
	}
}

// seq returns the round word of rank q's flag line of parity p.
func (a *collArea) seq(q, p int) *uint32 {
	return raw.Uint32At(a.flags, int64(q*int(a.par)+p)*format.Line+format.FlagSeq)
}

// meta returns rank q's flag line of parity p but its first 8 bytes: the
// signature words and the inline bytes.
func (a *collArea) meta(q, p int) []byte {
	o := (q*int(a.par) + p) * format.Line
	return a.flags[o+8 : o+format.Line : o+format.Line]
}

// sig is what a rank says about its call in the call's first round, as
// the two little-endian words of its line (FlagKind..FlagRoot, then
// FlagCount). A signature is built, written, read and compared a word at a
// time, never a byte at a time: byte fields stored and read back as a word
// stall the store-to-load forwarding, a measurable part of a small call.
type sig struct{ w0, w1 uint64 }

// mkSig is the signature of a call: its kind, element type, op, root and
// count (failed is added by publishSig).
func mkSig(kind, typ, op uint8, root int32, count uint64) sig {
	return sig{uint64(kind) | uint64(typ)<<8 | uint64(op)<<16 | uint64(uint32(root))<<32, count}
}

// Masks of the first signature word.
const (
	sigKindType = 0xffff
	sigOp       = 0xff << 16
	sigFailed   = 0xff << 24
	sigRoot     = 0xffffffff << 32
)

// sigFields is a signature decoded, for naming a mismatch.
type sigFields struct {
	kind, typ, op, failed uint8
	root                  int32
	count                 uint64
}

func getSig(b []byte) sigFields {
	w0, w1 := loadSig(b)
	return sigFields{kind: uint8(w0), typ: uint8(w0 >> 8), op: uint8(w0 >> 16), failed: uint8(w0 >> 24),
		root: int32(w0 >> 32), count: w1}
}

// Offsets into flagLine.meta (the line minus its first 8 bytes).
const (
	metaSig    = format.FlagKind - 8
	metaInline = format.FlagInline - 8
)

// area returns c's collective area, making it on the first collective call
// (which every rank makes: it is collective).
func (c *Comm) area(call string) (*collArea, error) {
	if a := c.coll.Load(); a != nil {
		return a, nil
	}
	// A nonblocking collective's job and Ibarrier may both be first.
	c.areaMu.Lock()
	defer c.areaMu.Unlock()
	if a := c.coll.Load(); a != nil {
		return a, nil
	}
	l := format.NewCollLayout(c.Size(), shm.PageSize)
	init := func(mem []byte) error {
		binary.LittleEndian.PutUint32(mem[format.CollRanks:], uint32(l.N))
		binary.LittleEndian.PutUint32(mem[format.CollChunk:], uint32(l.Chunk))
		return shm.WriteHeader(mem, shm.Header{Version: shm.FormatVersion, Kind: shm.KindCollective,
			HeaderLen: format.CollChunk + 4, TotalSize: uint64(l.Total)})
	}
	check := func(mem []byte) error { return checkCollHeader(mem, l) }
	mem, err := c.t.Area(l.Total, "shmrun-collective", init, check)
	if err != nil {
		if errors.Is(err, barrier.ErrAborted) {
			return nil, c.wrapWait(call, err)
		}
		class := ErrOther
		if errors.Is(err, shm.ErrNoSpace) {
			class = ErrNoMem
		}
		return nil, fmt.Errorf("comm: %s on rank %d: making the communicator's collective area: %v: %w", call, c.Rank(), err, class)
	}
	a, err := newCollArea(mem, l, c.Rank(), c.t.Abort(), c.t.Policy())
	if err != nil {
		return nil, fmt.Errorf("comm: %s on rank %d: %v: %w", call, c.Rank(), err, ErrOther)
	}
	if a.single, err = c.probeSingle(); err != nil {
		return nil, c.wrapWait(call, err)
	}
	if !c.t.Local() && c.world != c {
		c.t.OnRelease(func() { shm.Unmap(mem) })
	}
	if chk != nil {
		// shmrun --check: the members' clocks, one more collective area.
		cm, err := c.t.Area(rmacheck.ClockAreaLen(clockSlots, c.Size(), c.world.Size()), "shmrun-check-clocks", func([]byte) error { return nil }, func([]byte) error { return nil })
		if err != nil {
			return nil, fmt.Errorf("comm: %s on rank %d: shmrun --check's clocks: %v: %w", call, c.Rank(), err, ErrOther)
		}
		if !c.t.Local() && c.world != c {
			c.t.OnRelease(func() { shm.Unmap(cm) })
		}
		c.clocks = chk.NewClocks(cm, clockSlots, c.members, c.Rank())
	}
	c.coll.Store(a)
	return a, nil
}

// checkCollHeader checks a collective area made by another rank: the
// common header, then that the ranks and chunk are the ones this rank
// computes (every rank derives the layout from n alone).
func checkCollHeader(mem []byte, l format.CollLayout) error {
	if _, err := shm.ReadHeader(mem, shm.KindCollective, int64(len(mem))); err != nil {
		return err
	}
	if n := binary.LittleEndian.Uint32(mem[format.CollRanks:]); n != uint32(l.N) {
		return fmt.Errorf("collective area for %d ranks, want %d: %w", n, l.N, shm.ErrMismatch)
	}
	if ch := binary.LittleEndian.Uint32(mem[format.CollChunk:]); ch != uint32(l.Chunk) {
		return fmt.Errorf("collective area with %d-byte chunks, want %d: %w", ch, l.Chunk, shm.ErrMismatch)
	}
	return nil
}

func newCollArea(mem []byte, l format.CollLayout, me int, abort *uint32, p barrier.Policy) (*collArea, error) {
	raw.RegisterLightFence() // flush's wake-ups then need no fence of their own
	h, release, err := winc.NewColl()
	if err != nil {
		return nil, err
	}
	if l.Parities > maxParities || l.Parities&(l.Parities-1) != 0 || l.Slots < 1 || l.Slots&(l.Slots-1) != 0 {
		return nil, fmt.Errorf("collective area with %d round parities, %d slots", l.Parities, l.Slots)
	}
	a := &collArea{mem: mem, l: l, n: l.N, me: me, abort: abort, policy: p, fence: &new(fenceLine).w, h: h, releaseH: release,
		par: uint32(l.Parities), slots: uint32(l.Slots), slotLen: int(l.SlotLen()),
		stage: make([][2][]byte, l.N), ibar: make([]barrier.Event, l.N), star: l.N > 2}
	if a.star {
		a.chk = newCheckRec(mem)
	}
	fe := l.FlagOff(l.N-1, l.Parities-1) + format.Line
	a.flags = mem[l.FlagsOff:fe:fe]
	so := l.SleepersOff(me, 0)
	a.mySleepers = mem[so : so+4*int64(l.Parities) : so+4*int64(l.Parities)]
	for q := range l.N {
		for p := range 2 {
			so := l.StagingOff(q, p)
			a.stage[q][p] = mem[so : so+l.Chunk : so+l.Chunk]
		}
		off := l.IbarLineOff(q)
		a.ibar[q] = barrier.Event{Seq: raw.Uint32At(mem, off+format.IbarSeq), Sleepers: raw.Uint32At(mem, off+format.IbarSleepers)}
	}
	return a, nil
}

// A communicator's clock slots (shmrun --check): two that alternate
// between collective calls, one for Ibarrier (monotone: a rank may start
// several before another starts the first; that only over-synchronizes).
const (
	clockIbarrier = 2
	clockSlots    = 3
)

// deadColl stands in for a freed communicator's round counters, which
// another communicator may reuse: no call of a freed communicator gets
// as far as them, but a stray one must not touch another's.
var deadColl winc.Coll

// release gives the round counters back (the communicator is freed).
func (a *collArea) release() {
	if a.releaseH != nil {
		a.releaseH()
		a.releaseH, a.h = nil, &deadColl
	}
}

// scratchFor returns at least size bytes of this rank's private working
// memory, kept for the next call.
func (a *collArea) scratchFor(size int) []byte {
	if len(a.scratch) < size {
		a.scratch = make([]byte, size)
	}
	return a.scratch[:size]
}

// atLeast reports whether round v is round x or later, both at most
// this rank's last round (h.Round): Seen, rank 0's compared round as this
// rank saw it, the round it last reported. Measured back from h.Round,
// unsigned, so that a word left behind by 2^31 rounds or more still
// compares right: with more than two ranks a rank that never waits for
// every rank (a Gather's sender), or runs the C interface's rounds,
// updates them seldom.
func (a *collArea) atLeast(v, x uint32) bool { return a.h.Round-v <= a.h.Round-x }

// reached reports whether a sequence word shows round r (or later).
func reached(seq *uint32, r uint32) bool { return int32(atomic.LoadUint32(seq)-r) >= 0 }

// stageUse is what of its staging buffer a round writes.
type stageUse uint8

const (
	stageNone stageUse = iota // nothing: the line only
	stageSlot                 // the round's slot (call.inSlot)
	stageFull                 // any of the buffer
)

// open starts this rank's next round r and returns it with its line
// parity. Before the round may reuse its line, the ranks that read the
// line's previous round must be done with it (lineFree); before it may
// write its staging buffer, every rank must have published round r-1
// (its slot alone: r-2S+1, S the slots, unless a round of the last 2S
// wrote more).
func (a *collArea) open(use stageUse) (uint32, int, error) {
	r := a.h.Round + 1
	if err := a.lineFree(r); err != nil {
		return 0, 0, err
	}
	var need uint32
	switch {
	case use == stageNone:
		need = a.h.Seen
	case use == stageFull:
		need, a.fullAt = r-1, r
	case use == stageSlot && int32(r-a.fullAt) < int32(2*a.slots):
		need = r - 1
	default:
		need = r - 2*a.slots + 1
	}
	if !a.atLeast(a.h.Seen, need) {
		if err := a.waitRange(need, 0, a.n); err != nil {
			return 0, 0, err
		}
	}
	if a.star {
		if a.me == 0 {
			a.publishChecked()
		}
		a.busy(r)
	}
	return r, int(r & (a.par - 1)), nil
}

// post publishes round r (its line and buffer filled). The round goes out
// by a plain release store, not a locked exchange: the peers are polling
// that line, and a locked instruction on it costs a line transfer more per
// round (bench/NOTES.md). Waking the line's sleepers needs a full fence
// between that store and the load of the sleepers word (a waiter
// increments the word, then checks the round again), unless this process
// is registered for the sleepers' heavy fence (internal/raw's LightFence);
// a fence right here would stall until the store's line arrives, so the
// wake-up is left pending until flush: before this rank blocks for long
// and when its call returns. A peer sleeps only after its spin phase, so
// it is woken at the latest when this rank stops spinning or finishes its
// call.
func (a *collArea) post(r uint32) {
	p := r & (a.par - 1)
	a.readAll(r)
	atomics.StoreRelease32(a.seq(a.me, int(p)), r)
	a.h.Round = r
	a.h.Pending |= 1 << p
}

// flush wakes the sleepers of the rounds this rank published since the
// last flush: a full fence first, unless every sleeper's heavy fence
// stands for it (raw.LightFence).
func (a *collArea) flush() {
	if a.h.Pending == 0 {
		return
	}
	if !raw.LightFence() {
		a.fullFence()
	}
	a.wake()
}

// wake is flush after a locked instruction that followed the stores.
func (a *collArea) wake() {
	for m := a.h.Pending; m != 0; m &= m - 1 {
		// Event.Wake: the round is the futex word.
		p := bits.TrailingZeros64(m)
		if atomic.LoadUint32(raw.Uint32At(a.mySleepers, int64(4*p))) != 0 {
			raw.WakeAll(a.seq(a.me, p))
		}
	}
	a.h.Pending = 0
}

// fullFence orders this rank's earlier stores before its later loads.
func (a *collArea) fullFence() { atomic.AddUint64(a.fence, 1) }

// inline returns rank q's inline bytes of line parity p.
func (a *collArea) inline(q, p int) []byte { return a.meta(q, p)[metaInline:] }

// tryOf reports whether the calling goroutine's calls on a run in try
// mode (a step's: collArea.try).
func tryOf(a *collArea) bool {
	t := a.try.Load()
	return t != 0 && t == raw.Goroutine()
}

// stops reports whether a wait stops here instead of waiting: the
// calling goroutine's calls run in try mode (tryOf), and the job is not
// ending (the wait returns that). It says so in tried.
func (a *collArea) stops() bool {
	if !tryOf(a) || a.abort != nil && atomic.LoadUint32(a.abort) != 0 {
		return false
	}
	a.tried = triedWait
	return true
}

// wait blocks until rank q has published round r.
func (a *collArea) wait(q int, r uint32) error {
	if q == a.me && int32(a.h.Round-r) >= 0 {
		return nil // its own round (the own-line rule)
	}
	seq := a.seq(q, int(r&(a.par-1)))
	if reached(seq, r) {
		return nil
	}
	if a.stops() {
		return errTry
	}
	pause := a.policy.Spin >= barrier.PauseFrom
	for range a.policy.Spin {
		if reached(seq, r) {
			return nil
		}
		if pause {
			raw.Pause()
		}
	}
	a.flush()
	p := a.policy
	p.Spin = 0 // spun above
	return a.line(q, int(r&(a.par-1))).ev.Await(a.abort, p, func() bool { return reached(seq, r) })
}

// waitRange waits for ranks [lo, hi) to publish round r; with the whole
// communicator, it records that round r is complete.
func (a *collArea) waitRange(r uint32, lo, hi int) error {
	for q := lo; q < hi; q++ {
		if err := a.wait(q, r); err != nil {
			return err
		}
	}
	if lo != 0 || hi != a.n {
		return nil
	}
	// Every rank has published round r, and those that have published
	// more on that line have published every round before: record the
	// least of them (and of this rank's own), so that the next calls of a
	// rank that runs ahead need not read every line again.
	seen := a.h.Round
	for q := range a.n {
		if q != a.me {
			if v := atomic.LoadUint32(a.seq(q, int(r&(a.par-1)))); int32(v-seen) < 0 {
				seen = v
			}
		}
	}
	if a.h.Round-seen < a.h.Round-a.h.Seen {
		a.h.Seen = seen
	}
	return nil
}

// collClasses are the error classes a rank's argument error can carry to
// the others (FlagFailed holds 1 + the index).
var collClasses = []error{ErrArg, ErrCount, ErrType, ErrOp, ErrRoot, ErrBuffer, ErrRank, ErrTruncate}

func classIndex(err error) uint8 {
	for i, c := range collClasses {
		if errors.Is(err, c) {
			return uint8(i + 1)
		}
	}
	// A dtype error a rank refused its arguments with (winc.RefuseColl:
	// the C interface's span of a count that overflows) carries the class
	// typeError gives it.
	if c := typeClass(err); c != nil {
		return classIndex(c)
	}
	return 1
}

// refuse is collective call kind on a rank whose arguments were refused
// before the call could begin (winc.RefuseColl): its first round,
// published as failed with bad, which every rank's verdict names. Its
// error is bad (with an earlier call's mismatch found late, as any call's),
// not what the round ends with (the verdict naming this rank, an abort).
func (c *Comm) refuse(name string, kind uint8, bad error) (err error) {
	k := call{light: true}
	if c.begin(&k, name) != nil {
		return bad
	}
	k.bad = bad
	defer k.end(&err)
	_ = k.agree(mkSig(kind, 0, 0, -1, 0), 0)
	return bad
}

// call is one collective call in progress on one rank.
type call struct {
	c    *Comm
	a    *collArea
	name string
	r    uint32    // the current round
	p    int       // its line parity (its staging parity is r&1)
	err  error     // this rank's own argument error (published as failed)
	bad  error     // an argument error found before the call began (typed forms)
	t0   time.Time // when the call began (only with --stats or --trace)
	slot int       // shmrun --check: the call's clock slot
	// light says that the call's first round writes no staging buffer
	// (set before begin: its data rides inline, or it has none).
	light bool
	// small, set before begin, is the bytes the call stages per rank when
	// it has one round and its data does not ride inline, the same on
	// every rank (0: none, or more rounds); inSlot, set by begin, says they
	// fit the round's staging slot, where staging then points.
	small  int
	inSlot bool
}

// end is a call's deferred last step: wake the sleepers of the rounds it
// published, and record its time (--stats, --trace) under its MPI name.
// Then the mismatch of an earlier call that this rank could only find
// now (settle) becomes the call's error, joined to its own if it has one.
func (k *call) end(err *error) {
	k.endQuiet()
	if s := k.a.stale; s != nil {
		k.a.stale = nil
		*err = withLate(s, *err)
	}
}

// withLate is a call's error own with an earlier call's mismatch found
// late: that one alone (still ErrEarlierCall: the call completed), or
// both joined, the late one no longer ErrEarlierCall (this call failed),
// this call's own first: the C interface reports the first one's class.
func withLate(late, own error) error {
	switch {
	case late == nil:
		return own
	case own == nil:
		return late
	}
	if le, ok := late.(*lateError); ok {
		late = le.error
	}
	return errors.Join(own, late)
}

// endQuiet is end for the calls that leave a mismatch found by settle to
// the next call that moves data (agreeCall: Free and Finalize report it
// themselves once done, the others make something the other ranks made).
func (k *call) endQuiet() {
	a := k.a
	if a.npend > 0 && a.h.Seen == a.h.Round {
		// Every rank has published every round this rank has: check
		// them now, before the C interface's small calls (which take
		// their fast path only then) move on past them.
		k.settle()
	}
	if a.star && a.me == 0 {
		a.publishChecked()
	}
	k.a.flush()
	if k.c.clocks != nil {
		k.c.clocks.Acquire(k.slot, nil) // shmrun --check: what every member did before it
	}
	if rec != nil {
		rec.Wait(statName(k.name), k.t0)
	}
}

// statName is a call's name in the statistics: the typed and in-place
// forms count as the call they are.
func statName(name string) string {
	return strings.TrimSuffix(strings.TrimSuffix(name, "InPlace"), "Type")
}

// agreeCall is the first thing a collective call over c that is not one of
// the collectives above does (Free, Dup, Split, Create, SplitType, a
// window's creation): a round with its signature, in which every rank
// checks that all made the same call. Without it, a rank in Split while
// another is in Bcast would wait in the control segment's exchange while
// the other waits on the flag lines, forever; with it, both get an error
// naming the calls, and c stays usable. It makes c's collective area if
// no collective has yet.
func (c *Comm) agreeCall(name string, kind uint8) error {
	var k call
	if err := c.begin(&k, name); err != nil {
		return err
	}
	defer k.endQuiet()
	if err := k.agree(mkSig(kind, 0, 0, -1, 0), 0); err != nil || !k.a.star {
		return err
	}
	return k.checkedRound()
}

// checkedRound is a round that agreeCall adds in an area of more than two
// ranks, so that every rank learns of the mismatches rank 0 found in the
// calls before (Free and Finalize report them; coll_check.go): rank 0
// compares every round before it publishes this one (every rank has
// published the round before, agree saw to it), and the others wait for
// its round.
func (k *call) checkedRound() error {
	a := k.a
	if a.me == 0 {
		k.settle()
	}
	if err := k.next(); err != nil {
		return err
	}
	k.post()
	if a.me == 0 {
		return nil
	}
	if err := a.wait(0, k.r); err != nil {
		return k.c.wrapWait(k.name, err)
	}
	if !a.loadChecked(k.r - 1) {
		return k.errorf(ErrOther, "rank 0 had not compared round %d's signatures by its round %d", k.r-1, k.r)
	}
	return nil
}

// takeStale returns (and forgets) the mismatch of an earlier call that
// settle found and no call has reported yet (Free and Finalize report it
// once they are done).
func (c *Comm) takeStale() error {
	if c.coll.Load() == nil {
		return nil
	}
	s := c.coll.Load().stale
	c.coll.Load().stale = nil
	return s
}

// begin checks c and opens the call's first round into k (filled in
// place: a call copied by value costs a store-forwarding stall per word
// pair). The caller fills its staging buffer or inline bytes (only when
// k.err is nil), then calls agree. A nil or freed c fails here, on this
// rank alone, like every other call on a bad handle.
func (c *Comm) begin(k *call, name string) error {
	a, err := c.prepare(name)
	if err != nil {
		return err
	}
	k.c, k.a, k.name = c, a, name
	if rec != nil {
		k.t0 = time.Now()
	}
	if c.clocks != nil {
		// shmrun --check: what this rank did before the call.
		k.slot = int(c.calls & 1)
		c.calls++
		c.clocks.Release(k.slot)
	}
	k.inSlot = k.small > 0 && k.small <= a.slotLen
	use := stageFull
	switch {
	case k.light:
		use = stageNone
	case k.inSlot:
		use = stageSlot
	}
	if k.r, k.p, err = a.open(use); err != nil {
		return c.wrapWait(name, err)
	}
	if a.npend > 0 {
		k.settle() // before this round may reuse a pending round's line
	}
	return nil
}

// prepare checks c and returns its collective area, made if need be,
// once the nonblocking collectives queued on c before this call have run
// (nbc.go): they use the same area.
func (c *Comm) prepare(name string) (*collArea, error) {
	if err := c.check(name); err != nil {
		return nil, err
	}
	if a := c.coll.Load(); a != nil && tryOf(a) {
		// A step's call (nbc_shm.go) is not to run here.
		a.tried = triedGeneral
		return nil, errTry
	}
	c.nbc.Load().drain()
	return c.area(name)
}

// stage is this rank's staging buffer and inline bytes of the current round.
func (k *call) stage() ([]byte, []byte) {
	return k.staging(k.a.me), k.inline(k.a.me)
}

// agree publishes the first round with this rank's signature, waits for
// every rank and checks the signatures: every rank that agrees returns the
// same verdict: a rank whose own arguments were wrong returns its own
// error, the others one naming the lowest such rank; else the first
// mismatch against rank 0's signature, in rank order. same says which
// fields must match (kind and type always do).
func (k *call) agree(s sig, same sameFields) error {
	w0, w1 := k.publishSig(s)
	return k.checkAll(w0, w1, same)
}

// checkAll is agree once the signature (words w0, w1) is published.
func (k *call) checkAll(w0, w1 uint64, same sameFields) error {
	if err := k.a.waitRange(k.r, 0, k.a.n); err != nil {
		return k.c.wrapWait(k.name, err)
	}
	if k.err != nil {
		switch {
		case k.a.star && k.a.me == 0:
			k.settleFirst()
			k.verdict(same) // for the record: the others may not look
		case k.a.star:
			k.a.report(k.r) // its own error is the round's report here
		}
		return k.err
	}
	if k.alike(w0, w1, same, 0, k.a.n) {
		return nil
	}
	if k.a.star && k.a.me == 0 {
		k.settleFirst()
	}
	return k.verdict(same)
}

// settleFirst is rank 0's settle before it names a mismatch of the
// current round: the pending rounds' verdicts go into the record first,
// so that its round only grows (recordVerdict); and done stays below the
// current round, which is compared but not yet recorded (a rank that
// finds a line of it moved on reads the record for it).
func (k *call) settleFirst() {
	k.a.holdDone = true
	defer func() { k.a.holdDone = false }()
	k.settle()
}

// offer is agree for a call of one round in which this rank reads no
// other rank's data (a Bcast's or a Scatter's root, a Reduce's or a
// Gather's sender, Scan's rank 0: out). It publishes the round and
// returns without waiting: the call is done once its data is out, and a
// loop of such calls runs ahead of the other ranks, as the MPIs' do. The
// ranks that read its data compare its signature with theirs in this same
// call (agreeFrom); this rank compares every rank's once every rank has
// published the round (settle): with two ranks at the latest when it
// opens its round r+P/2, which the reuse rule makes safe (no rank can
// publish over its round-r line before this rank has published round
// r+P/2); with more, when a call of its waits for every rank, unless a
// line has moved on by then, and rank 0 in any case (coll_check.go), whose
// verdict the others read. A mismatch is
// then the error of that later call (end), which still runs: failing it
// unpublished would shift every later call by one round. With its own
// argument error, or under shmrun --check (every call's clocks are
// acquired from every member), it is agree.
func (k *call) offer(s sig, same sameFields, out bool) error {
	if !out || k.a.n < 2 || k.err != nil || k.bad != nil || k.c.clocks != nil {
		return k.agree(s, same)
	}
	k.publishSig(s)
	k.pendOn(s, same)
	return nil
}

// agreeFrom is agree for a call of one round in which this rank reads the
// data of ranks [lo, hi) only (this rank not among them: a Bcast's or a
// Scatter's reader, Scan's ranks): it waits for those and compares their
// signatures with its own before it reads them, and the others' later, as
// offer does, unless they are all the others. A difference, or its own
// argument error, makes it agree: wait for every rank and name the
// mismatch as they do (a rank that reads some ranks' data waits only for
// ranks that publish on arrival, whatever call they are in: a mismatch
// never leaves it waiting).
func (k *call) agreeFrom(s sig, same sameFields, lo, hi int) error {
	a := k.a
	w0, w1 := k.publishSig(s)
	if k.err != nil || k.c.clocks != nil || hi-lo >= a.n-1 {
		return k.checkAll(w0, w1, same)
	}
	if err := a.waitRange(k.r, lo, hi); err != nil {
		return k.c.wrapWait(k.name, err)
	}
	if !k.alike(w0, w1, same, lo, hi) {
		return k.checkAll(w0, w1, same)
	}
	k.pendOn(s, same)
	return nil
}

// pendOn leaves the current round's signature check to settle. Field by
// field: a pending built and then copied whole is loaded back in wider
// moves than it was stored in, which stalls the store forwarding (~10 ns
// of a two-rank Scatter's root).
func (k *call) pendOn(s sig, same sameFields) { k.a.pendOn(k.name, k.r, s.w0, s.w1, same) }

// pendOn is call.pendOn for the call named name whose round is r.
func (a *collArea) pendOn(name string, r uint32, w0, w1 uint64, same sameFields) {
	if a.npend == maxParities {
		// A rank of more than two that runs ahead of the next call that
		// waits for every rank (coll_check.go): the oldest is rank 0's
		// to compare; this rank learns its verdict from the record.
		a.pend0, a.npend = (a.pend0+1)&(maxParities-1), a.npend-1
		a.lost = true
	}
	pd := &a.pend[(a.pend0+a.npend)&(maxParities-1)]
	pd.name = name
	pd.r, pd.same = r, same
	pd.s.w0, pd.s.w1 = w0, w1
	a.npend++
}

// settle checks the signatures of the first rounds this rank published
// without comparing every rank's (offer, agreeFrom) that every rank has
// now published: a mismatch is kept for end, named after that call.
func (k *call) settle() {
	a := k.a
	for ; a.npend > 0 && a.atLeast(a.h.Seen, a.pend[a.pend0].r); a.pend0, a.npend = (a.pend0+1)&(maxParities-1), a.npend-1 {
		pd := &a.pend[a.pend0]
		if a.star && a.me != 0 {
			if a.reportedBefore(pd.r) {
				continue // reported already, or a later one (report)
			}
			if a.atLeast(a.cseen, pd.r) {
				// Rank 0 has compared it: its record says the
				// verdict (loadChecked, below), and the lines may
				// be moving on.
				a.lost = true
				continue
			}
		}
		p := int(pd.r & (a.par - 1))
		if a.sigsAlike(p, pd.r, pd.s.w0, pd.s.w1, pd.same, 0, a.n, false) {
			continue
		}
		pk := call{c: k.c, a: a, name: pd.name, r: pd.r, p: p}
		if !a.intact(pk.p, pd.r) {
			// Moved on: rank 0 has compared the round (coll_check.go).
			a.lost = true
			continue
		}
		if err := pk.verdict(pd.same); err != nil && a.stale == nil {
			a.stale = &lateError{fmt.Errorf("%w (rank %d found it in a later collective call here, %s)", err, a.me, k.name)}
		}
	}
	switch {
	case a.star && a.me == 0:
		a.publishChecked()
	case a.star && a.lost:
		// Rounds this rank could not compare: rank 0's record has their
		// verdict, once rank 0 has compared them.
		a.lost = false
		a.loadChecked(0)
	}
}

// lateError is the mismatch of an earlier call that settle found, as the
// error of the call that returns it: that call itself ran and delivered
// its data.
type lateError struct{ error }

func (e *lateError) Unwrap() error { return e.error }

// Is makes a late error ErrEarlierCall too.
func (e *lateError) Is(target error) bool { return target == ErrEarlierCall }

// ran reports whether a call whose error is err moved its data: it
// returned no error, or only an earlier call's mismatch (lateError). The
// typed forms unpack their results then.
func ran(err error) bool {
	_, late := err.(*lateError)
	return err == nil || late
}

// alike reports whether the signatures of ranks [lo, hi) of the current
// round equal w0, w1 in the fields same names (kind and type always), word
// by word: the common case, checked before any field is decoded.
func (k *call) alike(w0, w1 uint64, same sameFields, lo, hi int) bool {
	return k.a.sigsAlike(k.p, k.r, w0, w1, same, lo, hi, k.err != nil) // its own line carries its error
}

// sigMask is the bits of a signature's first word that the fields same
// names (kind and type always) cover; the count, the second word, is
// compared where same names it.
func sigMask(same sameFields) uint64 {
	mask := uint64(sigKindType | sigFailed)
	if same&sameOp != 0 {
		mask |= sigOp
	}
	if same&sameRoot != 0 {
		mask |= sigRoot
	}
	return mask
}

// sigsAlike is alike over the lines of parity p, round r, of ranks [lo,
// hi): this rank's own skipped (its words are w0, w1: the own-line rule)
// unless own says its line carries more (its argument error).
func (a *collArea) sigsAlike(p int, r uint32, w0, w1 uint64, same sameFields, lo, hi int, own bool) bool {
	mask := sigMask(same)
	for q := lo; q < hi; q++ {
		if q == a.me && !own {
			continue
		}
		m0, m1 := loadSig(a.meta(q, p)[metaSig : metaSig+16])
		if (m0^w0)&mask != 0 || same&sameCount != 0 && m1 != w1 || !a.lineAt(q, p, r) {
			return false
		}
	}
	return true
}

// publishSig writes this rank's signature (with its own argument error, if
// any) into its flag line and publishes the call's first round; it returns
// the signature's words without the error.
func (k *call) publishSig(s sig) (uint64, uint64) {
	a := k.a
	w0, w1 := s.w0, s.w1 // failed is 0 here
	if k.bad != nil {
		k.err = k.bad // the caller's, found first and more precise than the call's own checks
	}
	own := w0
	if k.err != nil {
		own |= uint64(classIndex(k.err)) << 24
	}
	storeSig(a.meta(a.me, k.p)[metaSig:metaSig+16], own, w1)
	a.post(k.r)
	return w0, w1
}

// barrier is Barrier's first and only round: publish the signature, then
// wait for every rank's on the flag lines (a one-round call with no data:
// each rank reads the others' lines, in parallel).
func (k *call) barrier() error { return k.agree(barrierSig, 0) }

// barrierSig is every Barrier's signature.
var barrierSig = mkSig(format.CollBarrier, 0, 0, -1, 0)

// verdict names the first failure or mismatch of the current round, read
// from every rank's signature: the lowest rank whose own arguments failed,
// else the first rank whose signature differs from rank 0's in a field
// that must match. Where a line has moved on past the round (a rank of
// more than two that is not rank 0: coll_check.go), rank 0 has compared
// the round, and the verdict is its record's: the round's mismatch, or
// none if the record's last is older (the line's owner did not count this
// rank among its readers, as a Bcast's reader does not count the C
// interface's, which compares every line). Rank 0 records what it finds;
// the others remember the round, so as not to report it again from the
// record.
func (k *call) verdict(same sameFields) error {
	a := k.a
	v, found, intact := a.findVerdict(k.p, k.r, same)
	if !intact {
		rv, ok := a.readVerdict()
		for i := 0; !ok && i < 1000; i++ {
			runtime.Gosched() // rank 0 writing a later round's: it cannot be
			rv, ok = a.readVerdict()
		}
		if !ok {
			return k.errorf(ErrOther, "rank 0's record of round %d stayed locked", k.r)
		}
		v, found = rv, rv.r == k.r
		if !found {
			// The record has moved on past round r, or rank 0 has not
			// got to it: the next load of done reads it again.
			a.lost = true
		}
	}
	if !found {
		return nil
	}
	if a.star {
		if a.me == 0 {
			a.recordVerdict(v)
		} else {
			a.report(k.r)
		}
	}
	return a.verdictError(k.name, v)
}

// sameFields says which signature fields all ranks must agree on.
type sameFields uint8

const (
	sameCount sameFields = format.SameCount
	sameRoot  sameFields = format.SameRoot
	sameOp    sameFields = format.SameOp
)

func mismatch(s0, sq sigFields, q int, same sameFields) string {
	switch {
	case sq.kind != s0.kind:
		return fmt.Sprintf("rank 0 called %s, rank %d called %s", kindName(s0.kind), q, kindName(sq.kind))
	case !typeCompat(sq.typ, s0.typ):
		return fmt.Sprintf("rank 0 passed %s elements, rank %d %s elements", typeName(s0.typ), q, typeName(sq.typ))
	case same&sameRoot != 0 && sq.root != s0.root:
		return fmt.Sprintf("rank 0 named root %d, rank %d root %d", s0.root, q, sq.root)
	case same&sameOp != 0 && sq.op != s0.op:
		return fmt.Sprintf("rank 0 reduces with %s, rank %d with %s", opName(s0.op), q, opName(sq.op))
	case same&sameCount != 0 && sq.typ == s0.typ && sq.count != s0.count:
		return fmt.Sprintf("rank 0 passed %d elements, rank %d passed %d", s0.count, q, sq.count)
	case same&sameCount != 0 && sq.count*uint64(typeUnit(sq.typ)) != s0.count*uint64(typeUnit(s0.typ)):
		return fmt.Sprintf("rank 0 passed %d bytes, rank %d passed %d", s0.count*uint64(typeUnit(s0.typ)), q, sq.count*uint64(typeUnit(sq.typ)))
	}
	return ""
}

// The type field of a typed form's signature (coll_type.go) names its
// type's basic type when it has one (as the generic forms do), else one
// of these, counting bytes.
const (
	typAny   uint8 = format.FlagTypeBytes // data made only of dtype.Byte: matches any type
	typMixed uint8 = format.FlagTypeMixed // data mixing basic types: matches itself, by size
)

// typeCompat reports whether two ranks' type fields may meet in one call.
func typeCompat(a, b uint8) bool {
	return a == b || a == typAny || b == typAny
}

// typeUnit is the bytes one counted element of a type field holds.
func typeUnit(t uint8) int {
	if t == typAny || t == typMixed {
		return 1
	}
	return max(1, atomics.Type(t).Size())
}

func mismatchClass(s0, sq sigFields, same sameFields) error {
	switch {
	case sq.kind != s0.kind:
		return ErrArg
	case !typeCompat(sq.typ, s0.typ):
		return ErrType
	case same&sameRoot != 0 && sq.root != s0.root:
		return ErrRoot
	case same&sameOp != 0 && sq.op != s0.op:
		return ErrOp
	}
	return ErrCount
}

// next opens the call's next round (after the first).
func (k *call) next() error {
	r, p, err := k.a.open(stageFull)
	if err != nil {
		return k.c.wrapWait(k.name, err)
	}
	k.r, k.p = r, p
	if k.a.npend > 0 {
		k.settle() // before this round may reuse a pending round's line
	}
	return nil
}

// post publishes the current round (after the first).
func (k *call) post() { k.a.post(k.r) }

// waitFor waits for ranks [lo, hi) to publish the current round.
func (k *call) waitFor(lo, hi int) error {
	if err := k.a.waitRange(k.r, lo, hi); err != nil {
		return k.c.wrapWait(k.name, err)
	}
	return nil
}

// waitAll waits for every rank to publish the current round.
func (k *call) waitAll() error { return k.waitFor(0, k.a.n) }

// staging is rank q's staging buffer of the current round, or its slot.
func (k *call) staging(q int) []byte {
	b := k.a.stage[q][k.r&1]
	if k.inSlot {
		i := int(format.CollSlot(k.r, int(k.a.slots))) * k.a.slotLen
		return b[i : i+k.a.slotLen : i+k.a.slotLen]
	}
	return b
}

// unslot is for a call whose first round turns out not to be its only
// one after all (begin gave it its slot): it waits as a round that writes
// its whole buffer must, and leaves the slot.
func (k *call) unslot() error {
	if !k.inSlot {
		return nil
	}
	k.inSlot = false
	k.a.fullAt = k.r
	if !k.a.atLeast(k.a.h.Seen, k.r-1) {
		return k.waitForRound(k.r - 1)
	}
	return nil
}

// waitForRound waits for every rank to publish round r.
func (k *call) waitForRound(r uint32) error {
	if err := k.a.waitRange(r, 0, k.a.n); err != nil {
		return k.c.wrapWait(k.name, err)
	}
	return nil
}

// inline is rank q's inline bytes of the current round.
func (k *call) inline(q int) []byte { return k.a.inline(q, k.p) }

func (k *call) errorf(class error, format string, args ...any) error {
	return collErrorf(k.name, k.c.Rank(), class, format, args...)
}

var kindNames = map[uint8]string{
	format.CollBarrier: "Barrier", format.CollBcast: "Bcast", format.CollReduce: "Reduce",
	format.CollAllreduce: "Allreduce", format.CollGather: "Gather", format.CollGatherv: "Gatherv",
	format.CollScatter: "Scatter", format.CollScatterv: "Scatterv", format.CollAllgather: "Allgather",
	format.CollAllgatherv: "Allgatherv", format.CollAlltoall: "Alltoall", format.CollAlltoallv: "Alltoallv",
	format.CollReduceScatterBlock: "ReduceScatterBlock", format.CollScan: "Scan", format.CollExscan: "Exscan",
	format.CollFree: "Free", format.CollDup: "Dup", format.CollSplit: "Split", format.CollCreate: "Create",
	format.CollSplitType: "SplitType", format.CollWinCreate: "a window's creation", format.CollFinalize: "Finalize",
}

func kindName(k uint8) string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("collective %d", k)
}
