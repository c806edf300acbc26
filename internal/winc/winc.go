// Package winc is what packages win and comm share with the C interface
// (capi) in one process: the layout of a rank's epoch state on a window and
// of its round counters on a communicator, which the Go and the C calls
// both read and write, and the slow paths the C side hands to Go.
//
// capi.h declares the same struct (shmrun_epoch) and the same bits; capi's
// tests hold them to the constants here. The state lives outside the Go
// heap (New maps it), so C code may keep pointers to it; it holds no Go
// pointers.
package winc

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/raw"
)

// Epoch is a rank's view of its open epochs on one window, the part the
// hot paths read: Lock, Unlock, LockAll, UnlockAll, the flushes, Sync and
// the RMA calls' epoch check. It is written only by synchronization calls
// (ordered by the program) and read by RMA calls, which may run on several
// threads inside an epoch. The byte per target (Tgt* bits) follows it in
// the same mapping, at offset TgtOff.
type Epoch struct {
	// Gate is zero when Lock and LockAll may take their fast paths: its
	// Gate* bits mirror a LockAll, Start or fence epoch being open,
	// no_locks, a freed window and the check mode, so those paths test one
	// byte, not five fields.
	Gate uint8
	// AccessAll: RMA to every target is allowed (a fence epoch or LockAll).
	AccessAll bool
	LockAll   bool
	// AllCheck: the LockAll took the window's LockAll count (no
	// ModeNoCheck), so UnlockAll gives it back.
	AllCheck bool
	// FenceOpen: a Fence opened a (possible) epoch.
	FenceOpen bool
	// PostOpen: an exposure epoch (Post without Wait) is open.
	PostOpen bool
	_        [2]uint8
	// FenceUsed: an RMA call was made since that Fence.
	FenceUsed atomic.Bool
	// FenceGen is the generation of this rank's last Fence on the fence
	// words of a window of one or two ranks (win's flagFence): kept here,
	// not read back from the words, whose line the other rank polls
	// (loading it right after a store there stalls; bench/NOTES.md).
	// Which targets are locked is in their bytes alone (no count beside
	// them), so that threads may lock and unlock different targets at
	// once (MPI_THREAD_MULTIPLE): each writes only its target's byte.
	FenceGen uint32
	// FlushAny is the number of targets while LockAll, else 0: Flush's
	// fast path is the one test uint(rank) < FlushAny.
	FlushAny uint
	// StartN and PostN are the sizes of the open Start and Post groups,
	// whose window ranks are in the mapping's StartGroup and PostGroup
	// arrays (Layout); -1: no such epoch.
	StartN int32
	PostN  int32
}

// Layout of the mapping New makes; capi.h's shmrun_epoch has the same
// offsets (capi's tests compare them).
const (
	OffGate      = 0
	OffAccessAll = 1
	OffLockAll   = 2
	OffAllCheck  = 3
	OffFenceOpen = 4
	OffPostOpen  = 5
	OffFenceUsed = 8  // uint32
	OffFenceGen  = 12 // uint32
	OffFlushAny  = 16 // uint64
	OffStartN    = 24 // int32
	OffPostN     = 28 // int32
	TgtOff       = 64 // the bytes per target start here
)

// Arrays is where the per-target arrays of a state of n ranks start in
// its mapping, after the bytes per target: PSCW's counters (startsFrom[t],
// the Starts this rank made toward t; postsTo[o], its Posts to o) and the
// window ranks of the open Start and Post groups, each n 32-bit words.
type Arrays struct{ StartsFrom, PostsTo, StartGroup, PostGroup int }

// Layout returns the arrays' offsets and the mapping's length for n ranks.
func Layout(n int) (Arrays, int) {
	off := (TgtOff + n + 3) &^ 3
	a := Arrays{StartsFrom: off, PostsTo: off + 4*n, StartGroup: off + 8*n, PostGroup: off + 12*n}
	return a, off + 16*n
}

// Mapped is a rank's epoch state on one window as New maps it.
type Mapped struct {
	Epoch                 *Epoch
	Tgt                   []uint8
	StartsFrom, PostsTo   []uint32
	StartGroup, PostGroup []int32
	Release               func() // unmaps it; nothing may use it after
}

// Bits of a target's byte.
const (
	TgtAccess    = 1 << iota // RMA to the target is allowed (locked, or in the Start group)
	TgtExclusive             // an exclusive lock is held
	TgtShared                // a shared lock is held
	TgtNoCheck               // locked with ModeNoCheck: no lock word was taken
	// TgtCheck is set on every target of a window that checks its epoch
	// invariants (the goroutine test mode): the Lock and Unlock fast paths
	// compare the whole byte, so they take the slow paths, which check.
	TgtCheck

	TgtLocked = TgtExclusive | TgtShared
)

// Bits of Epoch.Gate.
const (
	GateLockAll = 1 << iota // LockAll
	GateStart               // a Start epoch is open
	GateFence               // FenceOpen
	GateNoLocks             // the window has info no_locks=true
	GateFreed               // the window is freed
	GateCheck               // the window checks its epoch invariants (see TgtCheck)
	// GateObserve is set on a window that records its calls (shmrun
	// --stats, --trace): every fast path takes the slow one, which
	// records (its targets carry TgtCheck for the same reason).
	GateObserve
)

// New maps the epoch state of a window of n ranks, with no epoch open.
func New(n int) (Mapped, error) {
	a, size := Layout(n)
	size = (size + unix.Getpagesize() - 1) &^ (unix.Getpagesize() - 1)
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return Mapped{}, fmt.Errorf("mapping the epoch state of %d ranks: %w", n, err)
	}
	words := func(off int) []uint32 { return raw.Elems[uint32](mem[off : off+4*n : off+4*n]) }
	ranks := func(off int) []int32 { return raw.Elems[int32](mem[off : off+4*n : off+4*n]) }
	m := Mapped{
		Epoch:      &raw.Elems[Epoch](mem[:TgtOff])[0],
		Tgt:        mem[TgtOff : TgtOff+n : TgtOff+n],
		StartsFrom: words(a.StartsFrom), PostsTo: words(a.PostsTo),
		StartGroup: ranks(a.StartGroup), PostGroup: ranks(a.PostGroup),
		Release: func() { _ = unix.Munmap(mem) },
	}
	m.Epoch.StartN, m.Epoch.PostN = -1, -1
	return m, nil
}

// State is what the C fast path of one window needs: the epoch state, the
// lock words it takes, and the Go slow paths it hands a call to. Package
// win makes it (Of); the closures are bound to the window.
type State struct {
	Epoch *Epoch
	Tgt   []uint8
	// LockWords[r] is target r's lock word in the segment and
	// LockSleepers[r] the count of its sleepers (FORMAT.md's lock line);
	// Global is the window's LockAll count and GlobalSleepers its event's
	// sleepers.
	LockWords      []*uint64
	LockSleepers   []*uint32
	Global         *uint64
	GlobalSleepers *uint32

	// LockAfter finishes an exclusive Lock of rank whose add (done in C)
	// left v in the lock word: it waits for the turn and records the epoch.
	LockAfter func(rank int, v uint64) error
	// SharedAfter finishes a shared Lock of rank whose first add left v (a
	// carry guard it set cleared already): it waits for the turn, admits the
	// next reader and records the epoch.
	SharedAfter func(rank int, v uint64) error
	// UnlockAfter clears a carry guard an add that left v set
	// and wakes the lock word's sleepers (after an unlock, or the add that
	// admits the next reader).
	UnlockAfter func(rank int, v uint64)
	// LockAllRetry gives back the LockAll count the C fast path took when it
	// found an exclusive locker, and runs the slow LockAll.
	LockAllRetry func() error
	// NotifyAll wakes the waiters of the LockAll count after UnlockAll gave
	// it back.
	NotifyAll func()

	// The window's fence barrier (package barrier's protocol): its state,
	// sleepers and failure words, its ranks and the spins before the
	// futex phase.
	FenceState    *uint64
	FenceSleepers *uint32
	FenceFail     [2]*uint32
	FenceN        uint32
	Spin          int
	// FenceWait waits, after the spin phase, until the barrier's
	// generation moves past old, and returns the new one.
	FenceWait func(old uint32) (uint32, error)
	// FenceWake wakes the barrier's sleepers after a release.
	FenceWake func()
	// FenceFailed is the error of a Fence whose round ended with
	// generation gen, which has its failure bit: another rank's Fence
	// failed.
	FenceFailed func(gen uint32) error

	// A window of up to format.FlagFenceRanks ranks fences on its fence
	// words instead (FORMAT.md, "Fence"; nil FenceWord otherwise): this
	// rank's two words and their sleepers, the other rank's two (nil
	// alone). FlagFenceWait wakes the sleepers of this rank's word of
	// parity g&1, then waits, after the spin phase, until the other
	// rank's word of that parity holds generation g; FlagFenceWake wakes
	// the sleepers of this rank's word of parity p; FenceCode is the error
	// of a Fence the other rank arrived at with failure code code.
	FenceWord, FencePeer [2]*uint64
	FenceWordSleepers    [2]*uint32
	FlagFenceWait        func(g uint32) error
	FlagFenceWake        func(p uint32)
	FenceCode            func(code uint32) error

	// PSCW (FORMAT.md): per rank r, PostWord[r] is post[r][me] (this
	// rank's Posts to origin r), CompleteWord[r] complete[r][me] (its
	// Completes toward target r), StartWord[r] post[me][r] (r's Posts to
	// this rank) and WaitWord[r] complete[me][r] (r's Completes toward
	// it); BellSleepers[r] is r's doorbell's sleepers and BellNotify(r)
	// rings it. The counters and groups are the mapping's.
	PostWord, CompleteWord, StartWord, WaitWord []*uint32
	BellSleepers                                []*uint32
	BellNotify                                  func(r int)
	StartsFrom, PostsTo                         []uint32
	StartGroup, PostGroup                       []int32
}

// Of returns the C fast path's state of w, a *win.Win, or nil where the
// fast path does not apply (a freed window, or an observed one: shmrun
// --stats or --trace records its calls on the Go paths). Package win sets
// it at init.
var Of func(w any) *State

// AccumulateUnits is an accumulate (MPI_Accumulate; with rtype,
// MPI_Get_accumulate and MPI_Fetch_and_op) on w, a *win.Win, of a type the
// runtime moves as opaque bytes (long double and its kin), whose
// elements are units of unit bytes: each target unit is read and, unless
// op is atomics.NoOp, combined in place by combine(target unit, origin
// unit), atomically against the window's other accumulates (under its
// lock stripes). The checks and errors are win.GetAccumulateType's.
// Package win sets it at init.
var AccumulateUnits func(w any, call string, origin []byte, ocount int, otype *dtype.Type, result []byte, rcount int, rtype *dtype.Type,
	target, disp, tcount int, ttype *dtype.Type, unit int, op atomics.Op, combine func(dst, src []byte)) error

// Coll is a rank's round counters of one communicator's collective area
// (package comm's collArea), which the C interface's MPI_Barrier advances
// too. Written only by this rank's collective calls, which the program
// orders.
type Coll struct {
	// Round is the rounds this rank has published.
	Round uint32
	// Seen: every rank has published through this round.
	Seen uint32
	// Pending has bit p set when a round of parity p was published
	// without waking its line's sleepers.
	Pending uint64
}

// Offsets of Coll's fields (capi.h's shmrun_coll repeats them).
const (
	OffRound   = 0
	OffSeen    = 4
	OffPending = 8
)

// NewColl returns a communicator's round counters, zeroed, and the
// function that gives them back (when the communicator is freed; nothing
// may use them after). They come from process-wide mappings of many
// counters each, reused once given back, so communicators made and freed
// in a loop map nothing new.
func NewColl() (*Coll, func(), error) {
	colls.Lock()
	defer colls.Unlock()
	if len(colls.free) == 0 {
		const chunk = 1 << 16
		mem, err := unix.Mmap(-1, 0, chunk, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			return nil, nil, fmt.Errorf("mapping communicators' round counters: %w", err)
		}
		all := raw.Elems[Coll](mem)
		for i := range all {
			colls.free = append(colls.free, &all[i])
		}
	}
	k := colls.free[len(colls.free)-1]
	colls.free = colls.free[:len(colls.free)-1]
	*k = Coll{}
	return k, func() {
		colls.Lock()
		defer colls.Unlock()
		colls.free = append(colls.free, k)
	}, nil
}

// colls is NewColl's pool: counters not in use (pointers into mappings
// that are never unmapped).
var colls struct {
	sync.Mutex
	free []*Coll
}

// Barrier is what the C interface's MPI_Barrier and small collectives
// need of one communicator: its round counters, the flag lines, and the
// slow paths. Package comm makes it (BarrierOf), once the communicator has
// its collective area.
type Barrier struct {
	Coll *Coll
	// Sig is the signature words Barrier publishes; Sleepers points to
	// the sleepers words of this rank's lines, [Parities]uint32 (parity
	// 0, 1, ...: format.IbarFlagSleepers).
	Sig      [2]uint64
	Sleepers *uint32
	// N is the ranks, Parities the line parities (format.CollParities),
	// Spin the polls before a wait goes to WaitRound.
	N, Parities uint32
	Spin        int
	// WakeLines wakes the sleepers of this rank's lines published without
	// a wake-up (Coll.Pending) and clears Pending.
	WakeLines func()

	// The one-round calls (Barrier, and a call whose data rides in the
	// flag lines): Lines is rank 0's round word of parity 0, where the
	// flag lines begin (rank q's line of parity p is Parities·q+p lines
	// on); Me is this rank.
	Lines *uint32
	Me    uint32
	// Checked is the checker's done word (format.CheckDone) on rank 0 of
	// more than two ranks, which advances it past each one-round call it
	// has compared every signature of; nil on the others.
	Checked *uint32
	// WaitRound waits past the spin phase for every rank to publish round
	// r of call kind (a format.Coll* kind, for the error's name) and
	// records the round as seen.
	WaitRound func(r uint32, kind uint8) error
	// Mismatch is the error of round r of call kind whose signatures
	// differ in the fields same says must match (package comm's
	// sameFields): every rank reaches the same one.
	Mismatch func(r uint32, kind, same uint8) error
}

// RefuseColl makes collective call kind (a format.Coll* value, named
// call) on communicator c (a *comm.Comm) for a rank that refused its own
// arguments before it could make the call (a handle, an array or a buffer
// the C interface found wrong): the rank takes part in the call's first
// round with err as its own, so that every rank fails, as when package
// comm refuses arguments itself, rather than wait for it. It returns err
// (joined with an earlier call's mismatch found late, as any call's).
// Package comm sets it.
var RefuseColl func(c any, call string, kind uint8, err error) error

// ErrTry is the error of a collective call that a nonblocking
// collective's step ran in try mode and that stopped where it would wait
// (StartNBC): never a program's.
var ErrTry = errors.New("a step of a nonblocking collective stopped where it would wait")

// BarrierOf returns c's Barrier (c a *comm.Comm), or nil when c has no
// collective area yet or cannot take the fast path (the job is observed:
// shmrun --stats or --trace). Package comm sets it.
var BarrierOf func(c any) *Barrier

// The C interface's nonblocking collectives (package comm's nbc.go), set
// by package comm; c is a *comm.Comm.
var (
	// StartNBC queues run, a collective call of the C interface's
	// blocking form, as the nonblocking collective call on c, and returns
	// its request (a *comm.Request): complete once run has run, with its
	// error. If step, run is one collective call, which a step may run
	// (comm's nbc_shm.go): in try mode, its call stops where it would
	// wait, with ErrTry, and Stopped(c) says so once it has returned; run
	// must then keep what a later run of it needs (its arguments), to
	// run again from its start. InitColl's runs may step.
	StartNBC func(c any, call string, run func() error, step bool) (any, error)
	// Stopped reports whether the call run by a step of a job on c (a
	// *comm.Comm) stopped, as StartNBC says.
	Stopped func(c any) bool
	// InitColl makes the persistent collective call on c (a
	// *comm.Request, inactive): each start calls start for the run to
	// queue, as StartNBC's, and undo if it cannot be queued.
	InitColl func(c any, call string, start func() (run func() error, undo func())) (any, error)
	// NBCPending reports whether c has a nonblocking collective queued or
	// running (its C fast paths must leave the area to it then).
	NBCPending func(c any) bool
	// NBCDrain waits until c's queued collectives have run (MPI_Comm_free,
	// before its descriptor goes); NBCDrainAll, every communicator's
	// (MPI_Finalize).
	NBCDrain    func(c any)
	NBCDrainAll func()
	// KeptComm is the communicator on which the persistent requests of
	// c, freed by the program, go on (a *comm.Comm), or nil when c was
	// released with none left.
	KeptComm func(c any) any
	// TestQuiet is Test of request r (a *comm.Request) into *st (st a
	// *comm.Status), but a collective's job not yet run does not yield
	// to its worker: the C interface's tests yield as a C thread should,
	// once a call. JobPending reports whether r (a *comm.Request) has a
	// collective's job not yet run that a test should yield for, after a
	// test's turn at the jobs if turn (it steps them, or starts a parked
	// one: for a request the caller did not test). Waitany is comm.Waitany over rs (*comm.Request), its
	// status into *st, its polls yielding by yield.
	TestQuiet  func(r, st any) (bool, error)
	JobPending func(r any, turn bool) bool
	Waitany    func(rs []any, st any, yield func()) (int, error)
)
