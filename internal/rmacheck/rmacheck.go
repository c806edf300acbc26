// Package rmacheck is shmrun --check: it finds conflicting accesses to
// window memory — two RMA calls, or an RMA call and a checked load or store
// (win.Checked), that touch overlapping bytes, are not both reads or
// compatible atomics, and are not ordered by the synchronization the MPI
// standard counts.
//
// Order is happens-before over vector clocks, one entry per thread of
// each world rank (Threads):
// every synchronization that orders ranks carries the releasing rank's
// clock to the acquiring one — a collective or Barrier (every member's to
// every member), a window's Fence (likewise; not a Fence with both
// ModeNoPrecede and ModeNoSucceed, which ends no epoch, opens none and
// waits for no rank: it orders nothing), Post to Start and Complete to
// Wait (two releases, kept apart: a Start learns what its targets did
// before their Post, not before a Complete of theirs made since), an
// Unlock to the next Lock (an exclusive lock's to every later
// lock of the target, a shared lock's to later exclusive ones), a message
// from its send to its receive, and an atomic update of a target's window
// memory to later atomic reads there. An RMA call is complete at the next
// Flush, Unlock, UnlockAll, Fence or Complete of its origin (RMA completes
// there; before that, even a second call of the same origin may overtake
// it, except the accumulates, which MPI orders); a load or store at once.
// Access a happens before access b when a is complete and b's origin has
// learned a's origin's clock at a's completion.
//
// Each window has an area of shared memory (one more collective object
// made at its creation) holding, per target, a ring of the latest
// accesses and the locks' and atomics' clocks. Each access is recorded in
// its target's ring and checked against the records there; of two
// conflicting accesses the one recorded second finds the other. A record
// the ring has dropped (more than RingLen accesses later) is not checked
// again: races that far apart go unseen.
//
// A report names the window by its number, drawn at the window's
// creation by the rank that makes its area from a counter the world
// shares (InitLog) and read there by every rank of the window: the same
// number on every rank, a different one for every window of the job
// (made on whichever communicator, in whichever order). Reports go to a
// file per rank in the directory the launcher names (format.EnvCheck);
// the launcher prints each distinct pair of call sites once.
package rmacheck

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/raw"
)

var (
	dir = os.Getenv(format.EnvCheck)
	on  = dir != ""
)

// On reports whether this process checks.
func On() bool { return on }

// Kind is what an access does to the bytes.
type Kind uint8

const (
	Read   Kind = 1 + iota // Get, a load
	Write                  // Put, a store
	Atomic                 // the accumulate family, FetchAndOp, CompareAndSwap: Op and Typ say which
)

// The ops of an Access: package atomics' (NoOp is an atomic read), and
// OpCAS for CompareAndSwap.
const (
	OpNoOp    = uint8(atomics.NoOp)
	OpReplace = uint8(atomics.Replace)
	OpCAS     = 0xfe
)

// Access is one access to check.
type Access struct {
	Target int    // the memory's owner, a rank of the window
	Lo, Hi uint64 // bytes [Lo, Hi) of the target's part (dynamic windows: addresses)
	Kind   Kind
	Op     uint8  // Atomic: the op (OpNoOp: an atomic read; OpCAS)
	Typ    uint8  // Atomic: the element type
	Local  bool   // a load or store (win.Checked), not an RMA call
	Epoch  Epoch  // what epoch it is in, for the report
	Call   uint32 // the call's Name
	Site   uint32 // where the call is, a Name (0: the calling goroutine's line, found by siteOf)
	Thread int    // the accessing thread's number + 1 (0: the calling thread; see Threads)
	issue  uint32 // a record's: its origin's clock when it was made
	split  bool   // an atomic access recorded after its operation, its release made before (AtomicBefore, ReleaseAtomic)
}

// Epoch is the kind of epoch an access is made in, for reports.
type Epoch uint8

const (
	NoEpoch Epoch = iota
	EpochLockAll
	EpochExclusive
	EpochShared
	EpochPSCW // access and exposure
	EpochPSCWAccess
	EpochPSCWExposure
	EpochFence
	nEpochs
)

var epochNames = [nEpochs]string{"no epoch", "lock_all epoch", "exclusive lock epoch", "shared lock epoch",
	"PSCW access and exposure epochs", "PSCW access epoch", "PSCW exposure epoch", "fence epoch"}

// String names the epoch as reports do.
func (e Epoch) String() string {
	if e < nEpochs {
		return epochNames[e]
	}
	return fmt.Sprintf("epoch kind %d", uint8(e))
}

// Threads is how many threads of a process have a clock of their own:
// a vector clock has Threads entries per world rank, entry
// rank*Threads+thread. Go programs use thread 0 (goroutines are not told
// apart); a C program's threads (shmcc --check) get the next free one
// each, the main thread 0, and share the last when there are more (more
// order than there was: a race between them can go unseen, none is
// invented).
const Threads = 8

// ThreadOf, when set (package capi), returns the calling thread's number
// (below Threads). Unset, every caller is thread 0.
var ThreadOf func() int

// Proc is this process's clocks and reports.
type Proc struct {
	mu    sync.Mutex
	me, n int // world rank, world size
	ne    int // entries of a vector clock: n*Threads
	vcs   [Threads][]uint32
	vc    []uint32             // the calling thread's clock (use)
	self  int                  // the calling thread's entry (use)
	used  int                  // threads of this process seen by use
	width *uint32              // the world's threads in use (loadWidth)
	wins  *uint32              // the job's windows made so far (InitLog)
	msg   []uint32             // messages: rank s's threads' clocks at their latest sends, at s*ne
	objs  map[uintptr][]uint32 // the process's own synchronization objects (Sync)
	out   *os.File
	seen  map[string]bool
	// seenIDs is seen by numbers (window, ranks, calls and sites), so that
	// a racy loop finds its pair reported without building the text.
	seenIDs map[pairIDs]bool
	others  map[int]map[uint32]string // other ranks' names (nameOf)
	// The repeat path's (repeat.go): the windows' logs, and thread 0's
	// own clock entry, mirrored for the lock-free path.
	logs   []*Log
	anyDup uint32 // 1 when a log's anyDup may be
	clock0 uint32 // relaxed
	// news counts what a release by thread 0 would make known besides its
	// own clock entry and the latest atomic memo's record (amemo, of
	// aLog's target aT): joins that raised the clock, and records
	// completed. Written under mu, read relaxed (Log.quiet).
	news  uint32
	amemo *memo
	aLog  *Log
	aT    int
}

type pairIDs struct {
	win, a, b int
	ac, as    uint32
	bc, bs    uint32
}

var (
	selfMu sync.Mutex
	self   *Proc
)

// MsgAreaLen is the size of the world's message clocks for n ranks: one
// row per sender, not per pair (n² words, not n³: a receiver joins the
// sender's clock at its latest send, to anyone, which may be later than
// the message it received — more order than there was, so a race can go
// unseen, never one invented), then a line of the world's counters: the
// thread width (loadWidth) and the windows made so far (InitLog).
func MsgAreaLen(n int) int64 { return int64(n)*int64(n)*Threads*4 + 64 }

// The world's counters, in the line after the message clocks.
const (
	msgWidth   = 0
	msgWindows = 4
)

// Start begins this rank's checking (comm.Init): me of n world ranks, with
// the world's message clocks in msg (a collective area). nil when off.
func Start(me, n int, msg []byte) (*Proc, error) {
	if !on {
		return nil, nil
	}
	selfMu.Lock()
	defer selfMu.Unlock()
	if self != nil {
		return self, nil
	}
	f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("rank-%d.txt", me)), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("rmacheck: %v", err)
	}
	if err := startNames(me); err != nil {
		f.Close()
		return nil, err
	}
	self = newProc(me, n, msg, f)
	return self, nil
}

// newProc is world rank me's Proc in a world of n, with the world's
// message clocks in msg, writing reports to out.
func newProc(me, n int, msg []byte, out *os.File) *Proc {
	rows := int64(n) * int64(n) * Threads * 4
	p := &Proc{me: me, n: n, ne: n * Threads, msg: raw.Elems[uint32](msg[:rows]), out: out, seen: map[string]bool{},
		width: raw.Word32(msg, rows+msgWidth), wins: raw.Word32(msg, rows+msgWindows)}
	for t := range p.vcs {
		p.vcs[t] = make([]uint32, p.ne)
		p.vcs[t][me*Threads+t] = 1
	}
	p.clock0 = 1
	p.use(1)
	return p
}

// Self is this process's Proc, or nil.
func Self() *Proc {
	if !on {
		return nil
	}
	selfMu.Lock()
	defer selfMu.Unlock()
	return self
}

// use makes thread t's clock the one p's methods work on: t is as
// Access.Thread (0: the calling thread's, else the thread's number + 1).
// p.mu is held.
func (p *Proc) use(t int) {
	if t == 0 {
		if f := ThreadOf; f != nil {
			t = f() + 1
		} else {
			t = 1
		}
	}
	t = min(max(t-1, 0), Threads-1)
	p.vc, p.self = p.vcs[t], p.me*Threads+t
	if t >= p.used {
		// Before the thread's clock is anywhere: see loadWidth.
		p.used = t + 1
		atomicMax(p.width, uint32(t+1))
	}
}

// loadWidth is how many threads of a rank the world's clocks may hold
// entries of: every entry of a thread t >= the width is 0, so the loops
// over another clock stop there (a job of Go programs loops over n
// entries, not n*Threads). A process raises it before its thread t's
// clock is released anywhere; a loop that read the width before another
// process raised it may have missed that thread's entries, so it reads
// the width again after, and goes over the clock again if it grew.
func (p *Proc) loadWidth() int { return int(atomic.LoadUint32(p.width)) }

// atomicMax raises *p to v.
func atomicMax(p *uint32, v uint32) {
	for {
		old := atomic.LoadUint32(p)
		if old >= v || atomic.CompareAndSwapUint32(p, old, v) {
			return
		}
	}
}

// releaseInto raises dst to the thread's clock, then ticks the clock:
// what the thread does next is not covered by the release. p.mu is held
// (and p.use done).
func (p *Proc) releaseInto(dst []uint32) {
	p.releaseIntoNoTick(dst)
	p.tick()
}

// releaseIntoNoTick is releaseInto without the tick, for a release into
// several clocks at once (the caller ticks once after). p.mu is held.
func (p *Proc) releaseIntoNoTick(dst []uint32) {
	p.settle()
	// The thread's clock has no entry at or beyond the width now.
	w := p.loadWidth()
	for r := range p.n {
		for i := r * Threads; i < r*Threads+w; i++ {
			if v := p.vc[i]; v != 0 {
				atomicMax(&dst[i], v)
			}
		}
	}
}

// tick advances the thread's own entry: what it does next is not covered
// by the release just made (call settle before the release). p.mu is
// held.
func (p *Proc) tick() {
	p.vc[p.self]++
	if p.self == p.me*Threads {
		storeRelaxed(&p.clock0, p.vc[p.self])
	}
}

// acquireFrom joins src into the thread's clock. p.mu is held.
func (p *Proc) acquireFrom(src []uint32) {
	for w := 0; ; {
		nw := p.loadWidth()
		if nw == w {
			return
		}
		w = nw
		raised := false
		for r := range p.n {
			for i := r * Threads; i < r*Threads+w; i++ {
				if v := atomic.LoadUint32(&src[i]); v > p.vc[i] {
					p.vc[i] = v
					raised = true
				}
			}
		}
		if raised {
			p.bump()
		}
	}
}

// bump counts news (Proc.news). p.mu is held.
func (p *Proc) bump() { storeRelaxed(&p.news, p.news+1) }

// Send is a message's release (to any world rank).
func (p *Proc) Send() {
	if p == nil {
		return
	}
	beforeClock()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.use(0)
	p.releaseInto(p.msg[p.me*p.ne : (p.me+1)*p.ne])
}

// Recv is a message's acquire from world rank from.
func (p *Proc) Recv(from int) {
	if p == nil || from < 0 || from >= p.n {
		return
	}
	beforeClock()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.use(0)
	p.acquireFrom(p.msg[from*p.ne : (from+1)*p.ne])
}

// Snap is Recv in two steps, for a receive completed by a later call
// than the one that delivered it: Snap copies what world rank from's
// sends have made known so far (the message clock Recv would join), and
// RecvSnap joins that copy into the clock of the thread that completes
// the receive. nil when off or from is not a rank.
func (p *Proc) Snap(from int) []uint32 {
	if p == nil || from < 0 || from >= p.n {
		return nil
	}
	src := p.msg[from*p.ne : (from+1)*p.ne]
	s := make([]uint32, len(src))
	for i := range src {
		s[i] = atomic.LoadUint32(&src[i])
	}
	return s
}

// RecvSnap is the acquire of a receive whose sender's clock Snap took.
func (p *Proc) RecvSnap(s []uint32) {
	if p == nil || len(s) != p.ne {
		return
	}
	beforeClock()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.use(0)
	p.acquireFrom(s)
}

// WorldOf returns a communicator's world ranks (c a *comm.Comm), for
// windows; package comm sets it.
var WorldOf func(c any) []int

// Clocks is a team's published clocks: for each of a few slots, a row
// per member written by that member only. A member joins its clock into
// its row of a slot when it releases through it, so the row holds what
// that member's every release through the slot made known: a release by
// one thread of a process does not take back what another thread of it
// released (two threads of a rank, one in a PSCW exposure epoch and the
// other in an access epoch). What a slot holds grows with each release,
// so a slot must not be released into again before every member has
// acquired from it, or a member learns a later release early (more order
// than there was: a race can go unseen): comm alternates two slots
// between consecutive collectives (a member can be one collective ahead
// of another, never two: each collective waits for every member); a
// window has two for alternate fences (those that synchronize: see
// win.Fence) and one per PSCW release: Post's, read by the origins'
// Start (a target posts again only after its Wait, which follows the
// origins' Start), and Complete's, read by the targets' Wait (an origin
// completes toward a target again only after that target's next Post,
// which follows its Wait; a Complete toward other targets meanwhile can
// reach a slow target's Wait early). Sharing one between Post and
// Complete would let an origin's Start learn what a target that is an
// origin too did before a Complete of its own made after its Post.
type Clocks struct {
	p     *Proc
	rows  []uint32
	n     int   // a row's length: a vector clock's entries
	world []int // team rank → world rank
	me    int
}

// ClockAreaLen is the size of slots slots of clocks of a team of m members
// in a world of n ranks.
func ClockAreaLen(slots, m, n int) int64 { return int64(slots) * int64(m) * int64(n) * Threads * 4 }

// NewClocks is the team's clocks over mem (a collective area of
// ClockAreaLen bytes); world maps team ranks to world ranks; me is this
// rank's team rank.
func (p *Proc) NewClocks(mem []byte, slots int, world []int, me int) *Clocks {
	if p == nil {
		return nil
	}
	return &Clocks{p: p, rows: raw.Elems[uint32](mem[:ClockAreaLen(slots, len(world), p.n)]), n: p.ne, world: world, me: me}
}

// Rank is this process's world rank.
func (p *Proc) Rank() int { return p.me }

// WorldSize is the number of world ranks.
func (p *Proc) WorldSize() int { return p.n }

func (c *Clocks) row(slot, q int) []uint32 {
	o := (slot*len(c.world) + q) * c.n
	return c.rows[o : o+c.n]
}

// Release joins the calling thread's clock into this rank's row of slot
// (before a collective, a Fence, a Post or a Complete), then ticks it.
// Only this process writes the row, under p.mu.
func (c *Clocks) Release(slot int) {
	if c == nil {
		return
	}
	beforeClock()
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	c.p.use(0)
	c.p.settle()
	row := c.row(slot, c.me)
	w := c.p.loadWidth()
	for r := range c.p.n {
		for i := r * Threads; i < r*Threads+w; i++ {
			if v := c.p.vc[i]; v > row[i] {
				atomic.StoreUint32(&row[i], v)
			}
		}
	}
	c.p.tick()
}

// Held is Release in two steps, for a release whose slot is not there yet
// (a communicator's first Ibarrier, whose clocks its queued job makes):
// Held copies what Release would publish, the calling thread's clock, and
// ticks; ReleaseHeld later joins that copy into the member's row. nil when
// off.
func (p *Proc) Held() []uint32 {
	if p == nil {
		return nil
	}
	beforeClock()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.use(0)
	p.settle()
	h := slices.Clone(p.vc)
	p.tick()
	return h
}

// ReleaseHeld joins h, a clock Held copied, into this member's row of
// slot.
func (c *Clocks) ReleaseHeld(slot int, h []uint32) {
	if c == nil || len(h) == 0 {
		return
	}
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	row := c.row(slot, c.me)
	for i := range min(len(h), len(row)) {
		if v := h[i]; v > atomic.LoadUint32(&row[i]) {
			atomic.StoreUint32(&row[i], v)
		}
	}
}

// Acquire joins the clocks the members (team ranks; nil: all) published
// in slot (after a collective, a Fence, a Start or a Wait).
func (c *Clocks) Acquire(slot int, members []int) {
	if c == nil {
		return
	}
	beforeClock()
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	c.p.use(0)
	if members == nil {
		for q := range c.world {
			c.p.acquireFrom(c.row(slot, q))
		}
		return
	}
	for _, q := range members {
		if q >= 0 && q < len(c.world) {
			c.p.acquireFrom(c.row(slot, q))
		}
	}
}

// siteOf is the Name of the program's line that made the current call:
// the first frame outside shmrun's packages, or "a C program" for calls
// from C. rets are the return addresses of the frames above Log.Access,
// innermost first, memoFrames of them unless the chain ended; depth is
// the site's index in rets + 1, or -1 when it is not among them (deeper,
// or a call from C, located by its hook).
//
// It is on every checked access's path that is not a repeat, so it walks
// the goroutine's physical frames by their frame pointers
// (raw.FrameReturns: a few loads each) and classifies each return address
// once: a cache maps it to the Name of the line it is the site of, or to 0
// when every function inlined at it is shmrun's own (the walk goes on to
// its caller). A frame's classification depends on its return address
// only (the inlined calls there are fixed by the binary), so the first
// frame classified a site is the one runtime.Callers and frameSite would
// find, and the same return addresses make the same site (memo.same).
func siteOf(rets []uintptr) (id uint32, depth int) {
	if fromC.Load() {
		if f := cSiteOf.Load(); f != nil {
			return Name((*f)()), -1
		}
		return Name(cSite), -1
	}
	if i, id, ok := firstSite(rets); ok {
		return id, i + 1
	}
	if len(rets) < memoFrames {
		return Name(slowSite()), -1 // no frame pointers
	}
	return deepSite(), -1
}

// deepSite is siteOf for a stack whose first frames are all shmrun's.
//
//go:noinline
func deepSite() uint32 {
	var rets [64]uintptr
	n := raw.FrameReturns(rets[:])
	if _, id, ok := firstSite(rets[:n]); ok {
		return id
	}
	return Name(slowSite())
}

// firstSite is the Name of the first of rets (return addresses, innermost
// first) that is a site, by the cache, and its index.
func firstSite(rets []uintptr) (int, uint32, bool) {
	for i, r := range rets {
		slot := &pcSites[(r^r>>12)%uintptr(len(pcSites))]
		e := slot.Load()
		id := uint32(e & pcIDMask)
		if e>>pcIDBits != uint64(r) || e == 0 {
			id = classify(r)
			if uint64(r)>>(64-pcIDBits) == 0 && id < pcIDMask {
				slot.Store(uint64(r)<<pcIDBits | uint64(id))
			}
		}
		if id != 0 {
			return i, id, true
		}
	}
	return 0, 0, false
}

// pcSites caches classify: an entry is a return address above the Name of
// the site it is (0: a frame of shmrun's own), in one word so that a
// lookup is one load. Addresses that do not fit (none, on the 48-bit
// address spaces of amd64 and arm64) and Names that do not are classified
// every time.
var pcSites [4096]atomic.Uint64

const (
	pcIDBits = 16
	pcIDMask = 1<<pcIDBits - 1
)

// classify is siteID's classification of return address r.
func classify(r uintptr) uint32 {
	s, internal := frameSite(runtime.CallersFrames([]uintptr{r}))
	if internal {
		return 0
	}
	return Name(s)
}

var (
	fromC   atomic.Bool
	cSiteOf atomic.Pointer[func() string]
)

const cSite = "a C program (no line: C calls are not located)"

// CallsFromC says that this process's calls come from C (package capi's
// library): every site is where(), without looking at the Go stack.
func CallsFromC(where func() string) {
	cSiteOf.Store(&where)
	fromC.Store(true)
}

// Hooks package win sets, through which package capi checks a C
// program's own loads and stores (shmcc --check).
var (
	// LocalAccess checks a load (or a store: write) of n bytes at lo of
	// rank target's part of window w (a *win.Win; a dynamic window's lo
	// is the address) made at site by thread (as Access.Thread), as
	// win.Checked's are; call names it in reports ("": load or store).
	LocalAccess func(w any, target int, lo, n uint64, write bool, site string, thread int, call string)
	// WindowOf is window w's number in reports and the epoch its rank is
	// in towards target.
	WindowOf func(w any, target int) (id int, epoch string)
)

// BeforeClock, when set (package capi, for the loads and stores a C
// program's hooks gather), runs before this process's clock changes —
// outside the checker's lock, so it may record accesses — so that what it
// records gets the clock the accesses were made at.
var BeforeClock func()

func beforeClock() {
	if f := BeforeClock; f != nil {
		f()
	}
}

// Report writes a conflict this package did not find itself (package
// capi's, about a pending call's buffer), once per key.
func Report(key, text string) {
	if p := Self(); p != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.report(key, text)
	}
}

// slowSite locates the current call by runtime.Callers.
func slowSite() string {
	var pcs [128]uintptr
	n := runtime.Callers(3, pcs[:])
	s, internal := frameSite(runtime.CallersFrames(pcs[:n]))
	if internal {
		return "?"
	}
	return s
}

// frameSite returns the first of frames outside shmrun's packages, as
// "dir/file.go:line"; internal when every frame is shmrun's own.
func frameSite(frames *runtime.Frames) (site string, internal bool) {
	for {
		f, more := frames.Next()
		fn := f.Function
		switch {
		case strings.HasPrefix(fn, "github.com/shmrun/shmrun/") && !strings.Contains(fn, "/testdata/") && !strings.Contains(fn, "/examples/"):
		case strings.HasPrefix(fn, "runtime."):
		case strings.HasPrefix(fn, "main.shm") || strings.HasPrefix(fn, "_cgoexp_"):
			return cSite, false
		default:
			if fn == "" {
				return "?", false
			}
			return fmt.Sprintf("%s:%d", filepath.Join(filepath.Base(filepath.Dir(f.File)), filepath.Base(f.File)), f.Line), false
		}
		if !more {
			return "", true
		}
	}
}

// report writes a conflict once per pair of (call, site).
func (p *Proc) report(key, text string) {
	if p.seen[key] {
		return
	}
	p.seen[key] = true
	fmt.Fprintf(p.out, "%s\t%s\n", key, text)
}

// SyncRelease is a release by thread (as Access.Thread) through the
// process's synchronization object key (package capi's OpenMP wrappers:
// a parallel region's fork and join, a team's barrier, a critical section,
// a lock, a task's creation and completion): the object's clock joins the
// thread's, whose clock then ticks.
func SyncRelease(key uintptr, thread int) {
	withThread(thread, true, func(p *Proc) {
		p.settle()
		o := p.objs[key]
		if o == nil {
			if p.objs == nil {
				p.objs = map[uintptr][]uint32{}
			}
			o = make([]uint32, p.ne)
			p.objs[key] = o
		}
		for i, v := range p.vc {
			o[i] = max(o[i], v)
		}
		p.tick()
	})
}

// SyncAcquire is an acquire by thread through object key: the thread's
// clock joins the object's (none yet: nothing to join).
func SyncAcquire(key uintptr, thread int) {
	withThread(thread, true, func(p *Proc) {
		for i, v := range p.objs[key] {
			if v > p.vc[i] {
				p.vc[i] = v
				p.bump()
			}
		}
	})
}

// SyncDrop forgets object key (a parallel region's fork and join once it
// ended, a task's creation once it ran).
func SyncDrop(key uintptr) {
	if p := Self(); p != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		delete(p.objs, key)
	}
}

// Now is the calling thread's clock entry and its clock (0, 0 when not
// checking): what Knows takes, to tell whether another thread has learned
// that this one did something by now.
func Now() (entry int, clock uint32) {
	withThread(0, false, func(p *Proc) { entry, clock = p.self, p.vc[p.self] })
	return entry, clock
}

// Knows reports whether the calling thread's clock holds entry's clock
// (from Now) or later: whether what that thread did by then happened
// before now. True when not checking.
func Knows(entry int, clock uint32) bool {
	known := true
	withThread(0, false, func(p *Proc) { known = entry == p.self || entry >= 0 && entry < p.ne && p.vc[entry] >= clock })
	return known
}

// withThread runs f with thread's clock in use (as Access.Thread: 0 is
// the calling thread's), under p.mu; not at all when not checking. When f
// changes the clock (changes), what BeforeClock gathers is recorded
// first, outside p.mu.
func withThread(thread int, changes bool, f func(p *Proc)) {
	p := Self()
	if p == nil {
		return
	}
	if changes {
		beforeClock()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.use(thread)
	f(p)
}
