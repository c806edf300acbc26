//go:build mpi

package win

import (
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/mpi"
	"github.com/shmrun/shmrun/internal/raw"
)

// Win is a window (MPI_Win). Under the MPI backend (-tags mpi) it is a
// window of the system's MPI, with this rank's epoch state kept in Go so
// that a misuse is ErrRMASync before the MPI sees it, and a twin window
// over the same memory, always in a passive-target epoch, through which
// the calls that return data (Get, GetAccumulate, FetchAndOp,
// CompareAndSwap) complete before they return inside fence and
// post-start-complete-wait epochs, where MPI itself has no call to
// complete one operation; Accumulate takes the twin there too, so that
// the accumulates to one location stay atomic with each other (route). An AllocateShared window in the unified model
// has no twin: its RMA calls are loads and stores (mpi_direct.go).
type Win struct {
	c      *comm.Comm
	h      mpi.Win // the window
	twin   mpi.Win // passive-target twin (MPI_Win_create over the same memory)
	hc     mpi.Comm
	rank   int
	size   int
	flavor Flavor
	mem    []byte
	sizes  []int // every rank's size in bytes
	units  []int // every rank's disp unit
	// leads and twinLeads are every rank's mpi.Lead of the window's and
	// the twin's memory, added to the displacements of RMA calls to it.
	leads, twinLeads []int
	info             Info
	keep             runtime.Pinner // Create's memory, pinned for the MPI
	// attached: a dynamic window's regions, by their first byte's address.
	attached map[uintptr]*attachment

	mu sync.Mutex // the epoch state and the pins
	ep mpiEpoch
	// The origin data of Puts and Accumulates that may not be complete,
	// which the MPI reads by address until the call that completes them:
	// small ones copied into stage (C memory; staged bytes used), larger
	// ones pinned in pins. open[t] says whether calls to target t are
	// outstanding (nopen of them); when none is, both are released.
	stage  []byte
	staged int
	pins   runtime.Pinner
	pinned bool
	open   []bool
	nopen  int
	// issued counts the origins handed to the MPI: a flush, which waits in
	// the MPI without mu, releases them (done) only if no call was made
	// meanwhile, which it may not have completed.
	issued uint64

	// groups are the MPI groups of the last few groups given to Post and
	// Start, made once each (under mu; freed with the window); pendGroup
	// is the group of a Start in progress, which stays.
	groups    []pscwGroup
	pendGroup *comm.Group

	noLocks bool // info no_locks=true: Lock and LockAll are ErrRMASync

	// twinOps says whether Accumulates went through the twin in the open
	// fence or PSCW epoch (route), for its closing call to complete.
	twinOps bool

	// d is the direct path of a shared window in the unified model
	// (mpi_direct.go), which needs no twin; nil otherwise.
	d     *direct
	model Model

	freed atomic.Bool
}

// pscwGroup is a group given to Post or Start: its members' ranks in the
// window and the MPI group of them.
type pscwGroup struct {
	g     *comm.Group
	ranks []int
	h     mpi.Group
}

// maxPSCWGroups bounds the groups a window keeps for Post and Start.
const maxPSCWGroups = 8

// pscwGroupOf returns g's ranks in the window and MPI group, made on the
// first use of g and kept (the last maxPSCWGroups of them): a program
// posts and starts to the same few groups epoch after epoch, and making
// an MPI group costs more than the epoch's own calls. Called with w.mu
// held.
func (w *Win) pscwGroupOf(call string, g *comm.Group) (pscwGroup, error) {
	for _, c := range w.groups {
		if c.g == g {
			return c, nil
		}
	}
	ranks, err := w.groupRanks(call, g)
	if err != nil {
		return pscwGroup{}, err
	}
	h, err := w.hc.Group(ranks)
	if err != nil {
		return pscwGroup{}, w.mpiErr(call, err)
	}
	c := pscwGroup{g: g, ranks: ranks, h: h}
	if len(w.groups) == maxPSCWGroups {
		// The oldest, but not the group a pending Start (which runs
		// without the mutex) is passing to the MPI.
		i := 0
		if w.groups[0].g == w.pendGroup {
			i = 1
		}
		_ = w.groups[i].h.Free()
		w.groups = append(w.groups[:i], w.groups[i+1:]...)
	}
	w.groups = append(w.groups, c)
	return c, nil
}

// mpiEpoch is one rank's open epochs on a window.
//
// Lock, LockAll, Start and Complete may block in the MPI (or the direct
// path) until another rank acts, so they do not hold the window's mutex
// meanwhile: a goroutine's Post or Wait that the other rank waits for
// must get through (two ranks each with one goroutine in Start and one
// about to Post would otherwise deadlock). Such a call claims its epoch
// under the mutex first, marked pending: the epoch counts as open for the
// checks that keep epochs from overlapping, but not for RMA calls or the
// calls that close it, which another goroutine making them before it
// returns gets ErrRMASync for, as a call it did not order after it.
type mpiEpoch struct {
	fence    bool // a Fence opened an epoch (no ModeNoSucceed)
	fenceRMA bool // an RMA call was made in it
	start    []int
	post     bool
	lockAll  bool
	locks    []LockType // per target: the lock this rank holds, 0 if none
	nlocks   int        // targets locked
	// The pending calls: a Lock per target, LockAll, Start, Complete,
	// an Unlock per target (closing), UnlockAll (allClosing), and the
	// calls in the MPI without the mutex (busy: Unlocks and flushes; Free
	// waits for none of them, it refuses while there are any).
	lockPend   []bool
	closing    []bool
	npend      int // Locks and Unlocks pending
	allPend    bool
	allClosing bool
	startPend  bool
	completing bool
	busy       int
}

// locked says whether target is locked by this rank, its Lock returned.
func (e *mpiEpoch) locked(target int) bool {
	return e.locks[target] != 0 && !e.lockPend[target] && !e.closing[target]
}

// lockedAll says whether LockAll's epoch is open, its LockAll returned
// and no UnlockAll begun.
func (e *mpiEpoch) lockedAll() bool { return e.lockAll && !e.allPend && !e.allClosing }

// started says whether Start's epoch is open, Start returned and
// Complete not called.
func (e *mpiEpoch) started() bool { return e.start != nil && !e.startPend && !e.completing }

func (e *mpiEpoch) describe() string {
	switch {
	case e.allPend:
		return "a LockAll is in progress in another goroutine"
	case e.allClosing:
		return "an UnlockAll is in progress in another goroutine"
	case e.lockAll:
		return "a LockAll epoch is open"
	case e.nlocks > 0:
		return fmt.Sprintf("a Lock epoch is open (%d ranks locked)", e.nlocks)
	case e.startPend:
		return "a Start is in progress in another goroutine"
	case e.completing:
		return "a Complete is in progress in another goroutine"
	case e.start != nil:
		return "a Start epoch is open"
	case e.post:
		return "a Post epoch is open"
	case e.fenceRMA:
		return "a fence epoch with RMA calls is open (end it with Fence(ModeNoSucceed))"
	}
	return "no epoch is open"
}

func (e *mpiEpoch) passive() bool { return e.lockAll || e.nlocks > 0 }

// access says whether target may be reached, and whether through a
// passive-target epoch of the window itself.
func (e *mpiEpoch) access(target int) (ok, passive bool) {
	if e.lockedAll() {
		return true, true
	}
	if target >= 0 && e.locked(target) {
		return true, true
	}
	if e.fence {
		return true, false
	}
	if e.started() && (target == ProcNull || slices.Contains(e.start, target)) {
		return true, false
	}
	if target == ProcNull && e.nlocks > e.npend {
		return true, true
	}
	return false, false
}

// Allocate allocates a window of size bytes a rank in memory the MPI
// allocates (MPI_Win_allocate). Collective over c; new windows are zeroed.
func Allocate(c *comm.Comm, size int, dispUnit int, info Info) (*Win, error) {
	return allocate("Allocate", FlavorAllocate, c, size, dispUnit, info, nil)
}

// AllocateShared allocates a shared window (MPI_Win_allocate_shared) whose
// memory every rank can load and store after SharedQuery. Collective over
// c, which must be a communicator of one node (from
// SplitType(comm.TypeShared)): on one that spans nodes it is
// ErrRMAShared. New windows are zeroed.
func AllocateShared(c *comm.Comm, size int, dispUnit int, info Info) (*Win, error) {
	return allocate("AllocateShared", FlavorShared, c, size, dispUnit, info, nil)
}

// Create makes a window over mem, this rank's own memory (MPI_Win_create).
// Collective over c. mem stays pinned (runtime.Pinner) until Free, since
// the MPI reaches it by address; it is not zeroed.
func Create(c *comm.Comm, mem []byte, dispUnit int, info Info) (*Win, error) {
	return allocate("Create", FlavorCreate, c, len(mem), dispUnit, info, mem)
}

// CreateDynamic makes a window with no memory (MPI_Win_create_dynamic):
// collective over c. Each rank then exposes memory with Attach and
// withdraws it with Detach. An RMA call's displacement is an absolute
// address in the target, as comm.Address gives it; the disp unit is 1.
// Under the MPI backend the MPI checks that the bytes are attached (its
// error becomes ErrRMARange where it says so), and an MPI whose dynamic
// windows are known broken (Open MPI 4.1) refuses CreateDynamic with
// ErrRMAFlavor, saying why, rather than crash later. SharedQuery is
// ErrRMAFlavor; Attr reports FlavorDynamic, no base, size 0, disp unit 1.
func CreateDynamic(c *comm.Comm, info Info) (*Win, error) {
	if mpi.DynamicBroken != "" {
		return nil, errorf(ErrRMAFlavor, "CreateDynamic: not under this MPI: %s", mpi.DynamicBroken)
	}
	w, err := allocate("CreateDynamic", FlavorDynamic, c, 0, 1, info, nil)
	if w != nil {
		w.attached = map[uintptr]*attachment{}
	}
	return w, err
}

// attachment is a region Attach exposed: its memory, pinned.
type attachment struct {
	mem []byte
	pin runtime.Pinner
}

// Attach exposes mem in the dynamic window (MPI_Win_attach): local. The
// region must not overlap one attached already (ErrRMAAttach). The memory
// stays pinned until Detach or Free. Attaching an empty slice does
// nothing. On a window of another flavor: ErrRMAFlavor.
func (w *Win) Attach(mem []byte) error {
	if err := w.usable("Attach"); err != nil {
		return err
	}
	if w.flavor != FlavorDynamic {
		return errorf(ErrRMAFlavor, "Attach on rank %d: a %v window", w.rank, w.flavor)
	}
	if len(mem) == 0 {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	lo, hi := raw.Addr(mem), raw.Addr(mem)+uintptr(len(mem))
	for a, r := range w.attached {
		if lo < a+uintptr(len(r.mem)) && a < hi {
			return errorf(ErrRMAAttach, "Attach on rank %d: [%#x, %#x) overlaps the region attached at %#x", w.rank, lo, hi, a)
		}
	}
	r := &attachment{mem: mem}
	r.pin.Pin(&mem[0])
	if err := w.h.Attach(mem); err != nil {
		r.pin.Unpin()
		return w.mpiErr("Attach", err)
	}
	if err := w.twin.Attach(mem); err != nil {
		_ = w.h.Detach(mem)
		r.pin.Unpin()
		return w.mpiErr("Attach", err)
	}
	w.attached[lo] = r
	return nil
}

// Detach withdraws the region that starts at mem's first byte
// (MPI_Win_detach): local. No region attached there: ErrRMAAttach.
// Detaching an empty slice does nothing. On a window of another flavor:
// ErrRMAFlavor.
func (w *Win) Detach(mem []byte) error {
	if err := w.usable("Detach"); err != nil {
		return err
	}
	if w.flavor != FlavorDynamic {
		return errorf(ErrRMAFlavor, "Detach on rank %d: a %v window", w.rank, w.flavor)
	}
	if len(mem) == 0 {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.attached[raw.Addr(mem)]
	if !ok {
		return errorf(ErrRMAAttach, "Detach on rank %d: no region attached at %#x", w.rank, raw.Addr(mem))
	}
	err := w.twin.Detach(r.mem)
	if e := w.h.Detach(r.mem); err == nil {
		err = e
	}
	delete(w.attached, raw.Addr(mem))
	r.pin.Unpin()
	if err != nil {
		return w.mpiErr("Detach", err)
	}
	return nil
}

func allocate(call string, flavor Flavor, c *comm.Comm, size, dispUnit int, info Info, mem []byte) (*Win, error) {
	hc, err := mpi.CommOf(c, call)
	if err != nil {
		return nil, errorf(ErrWin, "%s: %v", call, err)
	}
	w := &Win{c: c, hc: hc, rank: c.Rank(), size: c.Size(), flavor: flavor, info: maps.Clone(info)}
	// As on the shmrun backend, no_locks=true is checked: Lock and
	// LockAll are then ErrRMASync.
	var badInfo error
	if v, ok := info["no_locks"]; ok {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true":
			w.noLocks = true
		case "false":
		default:
			badInfo = errorf(ErrInfo, "%s on rank %d: info no_locks=%q: want true or false", call, w.rank, v)
		}
	}
	// mpi_minimum_memory_alignment goes to the MPI, which honors it as it
	// does (Open MPI 4.1 for a window of one process only); a malformed
	// value is ErrInfo here as on the shmrun backend.
	if v, ok := info["mpi_minimum_memory_alignment"]; ok && badInfo == nil {
		x, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || x <= 0 || x&(x-1) != 0 || x > 1<<30 {
			badInfo = errorf(ErrInfo, "%s on rank %d: info mpi_minimum_memory_alignment=%q: want a power of two up to %d", call, w.rank, v, 1<<30)
		}
	}
	// Every rank's arguments reach every rank first, so a bad one is an
	// error on every rank rather than inside the MPI.
	mine := []int64{int64(size), int64(dispUnit), 0}
	if badInfo != nil {
		mine[2] = 1
	}
	all := make([]int64, 3*w.size)
	if err := comm.Allgather(c, mine, all); err != nil {
		return nil, errorf(ErrOther, "%s: %v", call, err)
	}
	for r := range w.size {
		switch {
		case badInfo != nil:
			return nil, badInfo
		case all[3*r+2] != 0:
			return nil, errorf(ErrInfo, "%s on rank %d: rank %d gave a malformed info value", call, w.rank, r)
		}
	}
	w.sizes, w.units = make([]int, w.size), make([]int, w.size)
	w.open, w.ep.locks, w.ep.lockPend, w.ep.closing = make([]bool, w.size), make([]LockType, w.size), make([]bool, w.size), make([]bool, w.size)
	for r := range w.size {
		w.sizes[r], w.units[r] = int(all[3*r]), int(all[3*r+1])
		switch {
		case all[3*r] < 0:
			return nil, errorf(ErrSize, "%s on rank %d: rank %d gave size %d", call, w.rank, r, all[3*r])
		case all[3*r+1] <= 0:
			return nil, errorf(ErrDisp, "%s on rank %d: rank %d gave disp unit %d", call, w.rank, r, all[3*r+1])
		}
	}
	// An Allocate window whose ranks share a node is a shared window
	// inside, as Open MPI's osc/sm makes it too: the direct path then
	// serves it by load and store, and it needs no twin (whose progress
	// engine, osc/ucx's, Open MPI would otherwise poll in every call).
	shared := flavor == FlavorShared
	if flavor == FlavorAllocate {
		if shared, err = oneNode(c, hc); err != nil {
			return nil, errorf(ErrOther, "%s: %v", call, err)
		}
	}
	switch {
	case flavor == FlavorDynamic:
		w.h, err = hc.CreateDynamic()
	case flavor == FlavorCreate:
		if len(mem) > 0 {
			w.keep.Pin(&mem[0])
		}
		w.mem = mem
		w.h, err = hc.CreateWin(mem)
	case shared:
		// The last rank's part holds the direct path's lock stripes,
		// locks and active-target counters after the window's bytes.
		extra := 0
		if w.rank == w.size-1 {
			extra = directExtra(w.size)
		}
		w.h, w.mem, err = hc.AllocWin(size+extra, 1, true)
		clear(w.mem)
		w.mem = w.mem[:min(size, len(w.mem))]
	default:
		w.h, w.mem, err = hc.AllocWin(size, 1, false)
	}
	if err != nil {
		w.keep.Unpin()
		return nil, w.mpiErr(call, err)
	}
	if w.mem != nil {
		w.mem = w.mem[:len(w.mem):len(w.mem)]
	}
	if flavor == FlavorAllocate || flavor == FlavorDynamic {
		clear(w.mem) // (a shared window's part was cleared with its stripes)
	}
	lead := 0
	if flavor == FlavorCreate {
		lead = mpi.Lead(w.mem)
	}
	leads := make([]int64, 2*w.size)
	if err := comm.Allgather(c, []int64{int64(lead), int64(mpi.Lead(w.mem))}, leads); err != nil {
		_ = w.h.Free()
		w.keep.Unpin()
		return nil, errorf(ErrOther, "%s: %v", call, err)
	}
	w.leads, w.twinLeads = make([]int, w.size), make([]int, w.size)
	for r := range w.size {
		w.leads[r], w.twinLeads[r] = int(leads[2*r]), int(leads[2*r+1])
	}
	w.model = Separate
	if u, err := w.h.Unified(); err == nil && u {
		w.model = Unified
	}
	if shared {
		if err := w.setDirect(call); err != nil {
			_ = w.h.Free()
			return nil, err
		}
	}
	if w.d == nil {
		w.stage = mpi.CAlloc(stageSize)
	}
	switch {
	case w.d != nil:
		// No twin: every call completes by load and store.
		err = hc.Barrier()
		if err != nil {
			return nil, w.mpiErr(call, err)
		}
		return w, nil
	case flavor == FlavorDynamic:
		w.twin, err = hc.CreateDynamic()
	default:
		w.twin, err = hc.CreateWin(w.mem)
	}
	if err != nil {
		_ = w.h.Free()
		w.keep.Unpin()
		mpi.CFree(w.stage)
		return nil, w.mpiErr(call, err)
	}
	// The twin's epoch lasts as long as the window; the zeroing above is
	// done on every rank before anyone can reach the memory.
	if err = w.twin.LockAll(ModeNoCheck); err == nil {
		err = hc.Barrier()
	}
	if err != nil {
		return nil, w.mpiErr(call, err)
	}
	return w, nil
}

// mpiErr maps an error of the MPI to this package's class of it.
func (w *Win) mpiErr(call string, err error) error {
	var me *mpi.Error
	if !errors.As(err, &me) {
		return errorf(ErrOther, "%s on rank %d: %v", call, w.rank, err)
	}
	class := ErrOther
	switch me.Class {
	case mpi.ClassRMASync:
		class = ErrRMASync
	case mpi.ClassRMARange:
		class = ErrRMARange
	case mpi.ClassRank:
		class = ErrRank
	case mpi.ClassDisp:
		class = ErrDisp
	case mpi.ClassSize:
		class = ErrSize
	case mpi.ClassLockType:
		class = ErrLockType
	case mpi.ClassAssert:
		class = ErrAssert
	case mpi.ClassRMAFlavor:
		class = ErrRMAFlavor
	case mpi.ClassRMAShared:
		class = ErrRMAShared
	case mpi.ClassNoMem:
		class = ErrNoMem
	case mpi.ClassWin:
		class = ErrWin
	case mpi.ClassOp:
		class = ErrOp
	case mpi.ClassType:
		class = ErrType
	case mpi.ClassInfo:
		class = ErrInfo
	case mpi.ClassArg:
		class = ErrArg
	case mpi.ClassCount:
		class = ErrCount
	case mpi.ClassRMAAttach:
		class = ErrRMAAttach
	}
	return errorf(class, "%s on rank %d: %v", call, w.rank, err)
}

// usable checks that w may be used by call.
func (w *Win) usable(call string) error {
	if w == nil {
		return errorf(ErrWin, "%s on a nil window", call)
	}
	if w.c == nil {
		return errorf(ErrWin, "%s: a zero Win (not made by Allocate, AllocateShared, Create or CreateDynamic)", call)
	}
	if w.freed.Load() {
		return errorf(ErrWin, "%s on rank %d: the window was freed", call, w.rank)
	}
	return nil
}

// Free frees the window (MPI_Win_free): collective. An epoch open on any
// rank (a fence epoch with RMA calls too) is ErrRMASync on every rank,
// and the window stays valid, as with shmrun's backend.
func (w *Win) Free() error {
	if err := w.usable("Free"); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	open := w.ep.passive() || w.ep.start != nil || w.ep.post || w.ep.fenceRMA || w.ep.busy > 0
	// Agreed before MPI_Win_free, which the others would otherwise enter
	// and wait in for this rank.
	v := []int64{0}
	if open {
		v[0] = 1
	}
	if err := comm.AllreduceInPlace(w.c, v, atomics.Max); err != nil {
		return errorf(ErrOther, "Free on rank %d: agreeing on open epochs: %v", w.rank, err)
	}
	switch {
	case open:
		return errorf(ErrRMASync, "Free on rank %d: %s", w.rank, w.ep.describe())
	case v[0] != 0:
		return errorf(ErrRMASync, "Free on rank %d: another rank of the window has an epoch open", w.rank)
	}
	if !w.freed.CompareAndSwap(false, true) {
		return errorf(ErrWin, "Free on rank %d: the window was freed", w.rank)
	}
	var err error
	if w.d == nil {
		err = w.twin.UnlockAll()
		if err == nil {
			err = w.twin.Free()
		}
	}
	if err == nil {
		err = w.h.Free()
	}
	for i := range w.groups {
		if gerr := w.groups[i].h.Free(); err == nil && gerr != nil {
			err = gerr
		}
	}
	w.groups = nil
	w.keep.Unpin()
	w.pins.Unpin()
	for _, r := range w.attached {
		r.pin.Unpin()
	}
	mpi.CFree(w.stage)
	w.stage = nil
	if err != nil {
		return w.mpiErr("Free", err)
	}
	return nil
}

// Local returns the calling rank's part of the window (its MPI_WIN_BASE
// and MPI_WIN_SIZE as a slice), nil for size 0. Local. Valid until Free.
func (w *Win) Local() []byte {
	if w == nil || w.c == nil || w.freed.Load() {
		return nil
	}
	return w.mem
}

// Rank is the calling process's rank in the window's group. Local.
func (w *Win) Rank() int {
	if w == nil || w.freed.Load() {
		return 0
	}
	return w.rank
}

// Size is the number of ranks of the window's group. Local.
func (w *Win) Size() int {
	if w == nil || w.freed.Load() {
		return 0
	}
	return w.size
}

// Group returns the window's group (MPI_Win_get_group). Local.
func (w *Win) Group() *comm.Group {
	if w == nil || w.c == nil || w.freed.Load() {
		return nil
	}
	return w.c.Group()
}

// Info returns the hints the window was made with (MPI_Win_get_info).
func (w *Win) Info() Info {
	if w == nil || w.c == nil || w.freed.Load() {
		return nil
	}
	return maps.Clone(w.info)
}

// Attr returns the calling rank's window attributes. Local. A nil or freed
// window gives the zero Attr. Offset is 0 under the MPI backend.
func (w *Win) Attr() Attr {
	if w == nil || w.c == nil || w.freed.Load() {
		return Attr{}
	}
	return Attr{Base: w.mem, Size: len(w.mem), DispUnit: w.units[w.rank], Flavor: w.flavor, Model: w.model}
}

// SharedQuery returns rank's part of the window as mapped in this process
// (MPI_Win_shared_query), or for ProcNull the lowest rank's with a nonzero
// size. Local. Under the MPI backend it is AllocateShared windows' only
// (ErrRMAFlavor otherwise); Offset is the part's distance from rank 0's in
// this process's mapping.
func (w *Win) SharedQuery(rank int) (Segment, error) {
	if err := w.usable("SharedQuery"); err != nil {
		return Segment{}, err
	}
	if w.flavor != FlavorShared {
		return Segment{}, errorf(ErrRMAFlavor, "SharedQuery on rank %d: a %v window's memory is the MPI's to share; only AllocateShared windows are shared under the MPI backend", w.rank, w.flavor)
	}
	if rank != ProcNull && (rank < 0 || rank >= w.size) {
		return Segment{}, errorf(ErrRank, "SharedQuery on rank %d: rank %d outside a window of %d ranks", w.rank, rank, w.size)
	}
	q := rank
	if rank == ProcNull {
		q = max(0, slices.IndexFunc(w.sizes, func(s int) bool { return s > 0 }))
	}
	b, base, _, err := w.h.SharedQuery(q)
	if err != nil {
		return Segment{}, w.mpiErr("SharedQuery", err)
	}
	_, base0, _, err := w.h.SharedQuery(0)
	if err != nil {
		return Segment{}, w.mpiErr("SharedQuery", err)
	}
	b = b[:min(len(b), w.sizes[q])] // the last rank's part ends with the direct path's stripes
	s := Segment{Size: len(b), DispUnit: w.units[q], Offset: int(base - base0)}
	if len(b) > 0 {
		s.Bytes = b[:len(b):len(b)]
	}
	return s, nil
}

// Fence synchronizes the window's group (MPI_Win_fence): collective. It
// closes the fence epoch before it and opens the next unless
// ModeNoSucceed is given. A Fence while a Lock, LockAll, Start or Post
// epoch is open is ErrRMASync.
func (w *Win) Fence(assert int) error {
	if err := w.usable("Fence"); err != nil {
		return err
	}
	if assert&^(ModeNoStore|ModeNoPut|ModeNoPrecede|ModeNoSucceed) != 0 {
		return errorf(ErrAssert, "Fence on rank %d: assert %#x has bits Fence does not take", w.rank, assert)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ep.passive() || w.ep.start != nil || w.ep.post {
		return errorf(ErrRMASync, "Fence on rank %d: %s", w.rank, w.ep.describe())
	}
	if err := w.flushTwin(); err != nil {
		return w.mpiErr("Fence", err)
	}
	if err := w.h.Fence(assert); err != nil {
		return w.mpiErr("Fence", err)
	}
	w.ep.fence, w.ep.fenceRMA = assert&ModeNoSucceed == 0, false
	w.done(-1)
	return nil
}

// done records that the calls to target (all targets: -1) are complete,
// and releases the staged and pinned origins when no call is left.
func (w *Win) done(target int) {
	switch {
	case target < 0:
		clear(w.open)
		w.nopen = 0
	case w.open[target]:
		w.open[target] = false
		w.nopen--
	}
	if w.nopen == 0 {
		w.staged = 0
		if w.pinned {
			w.pins.Unpin()
			w.pinned = false
		}
	}
}

// stageLimit is the largest origin copied into the stage rather than
// pinned; stageSize the stage's size a window.
const (
	stageLimit = 256
	stageSize  = 64 << 10
)

// origin returns the memory a Put or Accumulate of b to target hands the
// MPI: a copy in the stage when b is small and the stage has room, else b
// itself, pinned. It stays valid until the call completes (done).
func (w *Win) origin(b []byte, target int) []byte {
	if len(b) == 0 {
		return b
	}
	w.issued++
	if !w.open[target] {
		w.open[target] = true
		w.nopen++
	}
	if len(b) <= stageLimit && w.staged+len(b) <= len(w.stage) {
		// Keep copies 8-byte aligned, as the MPI's datatypes may want.
		o := w.staged
		w.staged = (o + len(b) + 7) &^ 7
		return w.stage[o : o+copy(w.stage[o:], b)]
	}
	w.pins.Pin(&b[0])
	w.pinned = true
	return b
}

// openActive is the check of Lock, LockAll, Start and Post: no epoch of
// the kinds that may not overlap, and no fence epoch with RMA calls.
func (w *Win) openActive(call string) error {
	if w.ep.fenceRMA {
		return errorf(ErrRMASync, "%s on rank %d: a fence epoch with RMA calls is open (end it with Fence(ModeNoSucceed))", call, w.rank)
	}
	return nil
}

func (w *Win) target(call string, rank int) error {
	if rank == ProcNull {
		return errorf(ErrRank, "%s on rank %d: ProcNull is a target of RMA calls only, not of %s", call, w.rank, call)
	}
	if rank < 0 || rank >= w.size {
		return errorf(ErrRank, "%s on rank %d: target %d outside a window of %d ranks", call, w.rank, rank, w.size)
	}
	return nil
}

// Lock starts a passive-target epoch to rank (MPI_Win_lock). Exclusive
// waits for every other lock on rank; Shared only for exclusive ones.
func (w *Win) Lock(lt LockType, rank int, assert int) error {
	if err := w.usable("Lock"); err != nil {
		return err
	}
	if err := w.target("Lock", rank); err != nil {
		return err
	}
	if lt != Exclusive && lt != Shared {
		return errorf(ErrLockType, "Lock on rank %d: lock type %v", w.rank, lt)
	}
	if assert&^ModeNoCheck != 0 {
		return errorf(ErrAssert, "Lock on rank %d: assert %#x has bits Lock does not take", w.rank, assert)
	}
	if w.noLocks {
		return errorf(ErrRMASync, "Lock on rank %d: the window was created with info no_locks=true", w.rank)
	}
	w.mu.Lock()
	if l := w.ep.locks[rank]; l != 0 {
		defer w.mu.Unlock()
		if w.ep.lockPend[rank] {
			return errorf(ErrRMASync, "Lock on rank %d: rank %d is being locked by another goroutine of this rank", w.rank, rank)
		}
		if w.ep.closing[rank] {
			return errorf(ErrRMASync, "Lock on rank %d: rank %d is being unlocked by another goroutine of this rank", w.rank, rank)
		}
		return errorf(ErrRMASync, "Lock on rank %d: rank %d is locked by this rank already (%v)", w.rank, rank, l)
	}
	if w.ep.lockAll || w.ep.start != nil {
		defer w.mu.Unlock()
		return errorf(ErrRMASync, "Lock on rank %d: %s (access epochs must not overlap)", w.rank, w.ep.describe())
	}
	if err := w.openActive("Lock"); err != nil {
		w.mu.Unlock()
		return err
	}
	// Claimed, pending, then taken without the mutex (mpiEpoch).
	fence := w.ep.fence // restored if the lock fails
	w.ep.locks[rank], w.ep.lockPend[rank], w.ep.fence = lt, true, false
	w.ep.nlocks++
	w.ep.npend++
	holding := w.ep.nlocks > 1
	w.mu.Unlock()
	var err error
	if w.d != nil {
		if assert&ModeNoCheck == 0 {
			w.d.locks.lock(rank, lt == Exclusive, holding)
		}
	} else {
		err = w.h.Lock(lt == Exclusive, rank, assert)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ep.lockPend[rank] = false
	w.ep.npend--
	if err != nil {
		w.ep.locks[rank] = 0
		w.ep.nlocks--
		w.ep.fence = w.ep.fence || fence && w.ep.nlocks == 0
		return w.mpiErr("Lock", err)
	}
	return nil
}

// Unlock ends the passive-target epoch to rank (MPI_Win_unlock): every
// RMA call of it is complete at the origin and the target on return.
func (w *Win) Unlock(rank int) error {
	if err := w.usable("Unlock"); err != nil {
		return err
	}
	if err := w.target("Unlock", rank); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ep.locks[rank] == 0 {
		return errorf(ErrRMASync, "Unlock on rank %d: rank %d is not locked by this rank (Unlock without Lock)", w.rank, rank)
	}
	if w.ep.lockPend[rank] {
		return errorf(ErrRMASync, "Unlock on rank %d: the Lock of rank %d in another goroutine has not returned", w.rank, rank)
	}
	if w.ep.closing[rank] {
		return errorf(ErrRMASync, "Unlock on rank %d: rank %d is being unlocked by another goroutine of this rank", w.rank, rank)
	}
	if w.d != nil {
		w.d.locks.unlock(rank) // waits for nothing
	} else {
		// In the MPI without the mutex, as Lock: an MPI that takes its
		// locks lazily acquires at MPI_Win_unlock, which may wait for a
		// peer that waits for another goroutine's call on this window.
		// Meanwhile the epoch to rank is closing: RMA calls to it are
		// ErrRMASync.
		w.ep.closing[rank] = true
		w.ep.npend++
		w.ep.busy++
		w.mu.Unlock()
		err := w.h.Unlock(rank)
		w.mu.Lock()
		w.ep.closing[rank] = false
		w.ep.npend--
		w.ep.busy--
		if err != nil {
			return w.mpiErr("Unlock", err)
		}
	}
	w.ep.locks[rank] = 0
	w.ep.nlocks--
	w.done(rank)
	return nil
}

// LockAll starts a shared passive-target epoch to every rank
// (MPI_Win_lock_all).
func (w *Win) LockAll(assert int) error {
	if err := w.usable("LockAll"); err != nil {
		return err
	}
	if assert&^ModeNoCheck != 0 {
		return errorf(ErrAssert, "LockAll on rank %d: assert %#x has bits LockAll does not take", w.rank, assert)
	}
	if w.noLocks {
		return errorf(ErrRMASync, "LockAll on rank %d: the window was created with info no_locks=true", w.rank)
	}
	w.mu.Lock()
	if w.ep.passive() || w.ep.start != nil {
		defer w.mu.Unlock()
		return errorf(ErrRMASync, "LockAll on rank %d: %s (access epochs must not overlap)", w.rank, w.ep.describe())
	}
	if err := w.openActive("LockAll"); err != nil {
		w.mu.Unlock()
		return err
	}
	// Claimed, pending, then taken without the mutex (mpiEpoch).
	fence := w.ep.fence // restored if the lock fails
	w.ep.lockAll, w.ep.allPend, w.ep.fence = true, true, false
	w.mu.Unlock()
	var err error
	if w.d != nil {
		if assert&ModeNoCheck == 0 {
			w.d.locks.lockAll()
		}
	} else {
		err = w.h.LockAll(assert)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ep.allPend = false
	if err != nil {
		w.ep.lockAll, w.ep.fence = false, fence
		return w.mpiErr("LockAll", err)
	}
	return nil
}

// UnlockAll ends the LockAll epoch (MPI_Win_unlock_all).
func (w *Win) UnlockAll() error {
	if err := w.usable("UnlockAll"); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.ep.lockAll {
		return errorf(ErrRMASync, "UnlockAll on rank %d: no LockAll epoch (UnlockAll without LockAll)", w.rank)
	}
	if w.ep.allPend {
		return errorf(ErrRMASync, "UnlockAll on rank %d: the LockAll in another goroutine has not returned", w.rank)
	}
	if w.ep.allClosing {
		return errorf(ErrRMASync, "UnlockAll on rank %d: an UnlockAll in another goroutine has not returned", w.rank)
	}
	if w.d != nil {
		w.d.locks.unlockAll()
	} else {
		// In the MPI without the mutex, as Unlock.
		w.ep.allClosing = true
		w.ep.busy++
		w.mu.Unlock()
		err := w.h.UnlockAll()
		w.mu.Lock()
		w.ep.allClosing = false
		w.ep.busy--
		if err != nil {
			return w.mpiErr("UnlockAll", err)
		}
	}
	w.ep.lockAll = false
	w.done(-1)
	return nil
}

// flush is Flush, FlushLocal and their _all forms (rank -1).
func (w *Win) flush(call string, rank int, local bool) error {
	if err := w.usable(call); err != nil {
		return err
	}
	if rank >= 0 || rank == ProcNull {
		if err := w.target(call, rank); err != nil {
			return err
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if rank >= 0 {
		if !w.ep.locked(rank) && !w.ep.lockedAll() {
			return errorf(ErrRMASync, "%s on rank %d: no passive-target epoch to rank %d (Lock it or LockAll first)", call, w.rank, rank)
		}
	} else if !w.ep.lockedAll() && w.ep.nlocks == w.ep.npend {
		return errorf(ErrRMASync, "%s on rank %d: not inside a passive-target epoch (Lock or LockAll first)", call, w.rank)
	}
	if w.d != nil {
		// Every call on the direct path is complete: only order it.
		w.d.barrier()
		return nil
	}
	// In the MPI without the mutex: a flush may wait for a target's
	// progress, and other goroutines' calls on the window must go on.
	w.ep.busy++
	issued := w.issued
	w.mu.Unlock()
	err := w.h.Flush(rank, local)
	w.mu.Lock()
	w.ep.busy--
	if err != nil {
		return w.mpiErr(call, err)
	}
	if w.issued == issued {
		w.done(rank)
	}
	return nil
}

// Flush completes every RMA call of this rank to rank, at the origin and
// at the target (MPI_Win_flush). Local; inside a passive-target epoch to
// rank only (ErrRMASync otherwise).
func (w *Win) Flush(rank int) error { return w.flush("Flush", rank, false) }

// FlushAll is Flush to every rank (MPI_Win_flush_all).
func (w *Win) FlushAll() error { return w.flush("FlushAll", -1, false) }

// FlushLocal completes this rank's RMA calls to rank at the origin: their
// buffers may be reused (MPI_Win_flush_local).
func (w *Win) FlushLocal(rank int) error { return w.flush("FlushLocal", rank, true) }

// FlushLocalAll is FlushLocal to every rank (MPI_Win_flush_local_all).
func (w *Win) FlushLocalAll() error { return w.flush("FlushLocalAll", -1, true) }

// Sync synchronizes the private and public copies of this rank's window
// memory (MPI_Win_sync): a memory barrier between load/store and RMA.
func (w *Win) Sync() error {
	if err := w.usable("Sync"); err != nil {
		return err
	}
	w.mu.Lock()
	passive := w.ep.lockedAll() || w.ep.nlocks > w.ep.npend // a pending Lock is not open yet
	w.mu.Unlock()
	if !passive {
		// As shmrun's backend and the standard: only inside a
		// passive-target epoch (an MPI may let it pass).
		return errorf(ErrRMASync, "Sync on rank %d: not inside a passive-target epoch (Lock or LockAll first)", w.rank)
	}
	if w.d != nil {
		// A direct window's passive-target epoch is under its own locks,
		// which the MPI has not seen (MPICH's MPI_Win_sync refuses a
		// window it thinks unlocked); in the unified model the sync is a
		// memory barrier.
		w.d.barrier()
		return nil
	}
	if err := w.h.Sync(); err != nil {
		return w.mpiErr("Sync", err)
	}
	return nil
}

// groupRanks returns the window ranks of g's members.
func (w *Win) groupRanks(call string, g *comm.Group) ([]int, error) {
	if g == nil {
		return nil, errorf(comm.ErrGroup, "%s on rank %d: nil group", call, w.rank)
	}
	r, err := g.TranslateRanks(slices.Collect(func(yield func(int) bool) {
		for i := range g.Size() {
			if !yield(i) {
				return
			}
		}
	}), w.c.Group())
	if err != nil {
		return nil, errorf(comm.ErrGroup, "%s on rank %d: %v", call, w.rank, err)
	}
	for i, x := range r {
		if x == comm.Undefined {
			return nil, errorf(comm.ErrGroup, "%s on rank %d: member %d of the group is not in the window's group", call, w.rank, i)
		}
	}
	return r, nil
}

// Post opens an exposure epoch to the origins in g (MPI_Win_post). Local.
func (w *Win) Post(g *comm.Group, assert int) error {
	if err := w.usable("Post"); err != nil {
		return err
	}
	if g == nil {
		return errorf(comm.ErrGroup, "Post on rank %d: nil group", w.rank)
	}
	if assert&^(ModeNoCheck|ModeNoStore|ModeNoPut) != 0 {
		return errorf(ErrAssert, "Post on rank %d: assert %#x has bits Post does not take", w.rank, assert)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	pg, err := w.pscwGroupOf("Post", g)
	if err != nil {
		return err
	}
	if w.ep.post {
		return errorf(ErrRMASync, "Post on rank %d: an exposure epoch is open already (Post without Wait)", w.rank)
	}
	if w.ep.passive() {
		return errorf(ErrRMASync, "Post on rank %d: %s (a window cannot be exposed while this rank holds its locks)", w.rank, w.ep.describe())
	}
	if err := w.openActive("Post"); err != nil {
		return err
	}
	if w.d != nil {
		w.d.pscw.postTo(pg.ranks)
	} else if err := w.h.Post(pg.h, assert); err != nil {
		return w.mpiErr("Post", err)
	}
	w.ep.post, w.ep.fence = true, false
	return nil
}

// Start opens an access epoch to the targets in g (MPI_Win_start); it may
// wait for their Posts.
func (w *Win) Start(g *comm.Group, assert int) error {
	if err := w.usable("Start"); err != nil {
		return err
	}
	if g == nil {
		return errorf(comm.ErrGroup, "Start on rank %d: nil group", w.rank)
	}
	if assert&^ModeNoCheck != 0 {
		return errorf(ErrAssert, "Start on rank %d: assert %#x has bits Start does not take", w.rank, assert)
	}
	w.mu.Lock()
	pg, err := w.pscwGroupOf("Start", g)
	if err != nil {
		w.mu.Unlock()
		return err
	}
	if w.ep.start != nil || w.ep.passive() {
		defer w.mu.Unlock()
		return errorf(ErrRMASync, "Start on rank %d: %s (access epochs must not overlap)", w.rank, w.ep.describe())
	}
	if err := w.openActive("Start"); err != nil {
		w.mu.Unlock()
		return err
	}
	// Claimed, pending, then started without the mutex (mpiEpoch): it
	// may wait for the targets' Posts.
	fence := w.ep.fence // restored if the start fails
	w.ep.start, w.ep.startPend, w.ep.fence = pg.ranks, true, false
	w.pendGroup = g // not evicted from the groups while Start uses it
	w.mu.Unlock()
	if w.d != nil {
		w.d.pscw.startOn(pg.ranks)
	} else {
		err = w.h.Start(pg.h, assert)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ep.startPend, w.pendGroup = false, nil
	if err != nil {
		w.ep.start = nil
		w.ep.fence = w.ep.fence || fence && !w.ep.post
		return w.mpiErr("Start", err)
	}
	return nil
}

// Complete ends the Start epoch (MPI_Win_complete): its RMA calls are
// complete at the origin.
func (w *Win) Complete() error {
	if err := w.usable("Complete"); err != nil {
		return err
	}
	w.mu.Lock()
	if w.ep.start == nil {
		w.mu.Unlock()
		return errorf(ErrRMASync, "Complete on rank %d: no access epoch (Complete without Start)", w.rank)
	}
	if w.ep.startPend || w.ep.completing {
		defer w.mu.Unlock()
		return errorf(ErrRMASync, "Complete on rank %d: %s", w.rank, w.ep.describe())
	}
	if err := w.flushTwin(); err != nil {
		defer w.mu.Unlock()
		return w.mpiErr("Complete", err)
	}
	// Without the mutex (mpiEpoch): the MPI's Complete may wait for the
	// targets' Posts.
	w.ep.completing = true
	w.mu.Unlock()
	var err error
	if w.d != nil {
		w.d.pscw.completeAll()
	} else {
		err = w.h.Complete()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ep.completing = false
	if err != nil {
		return w.mpiErr("Complete", err)
	}
	w.ep.start = nil
	w.done(-1)
	return nil
}

// Wait ends the Post epoch once every origin of it has called Complete
// (MPI_Win_wait). Blocking.
func (w *Win) Wait() error {
	if err := w.usable("Wait"); err != nil {
		return err
	}
	w.mu.Lock()
	post := w.ep.post
	w.mu.Unlock()
	if !post {
		return errorf(ErrRMASync, "Wait on rank %d: no exposure epoch (Wait without Post)", w.rank)
	}
	if w.d != nil {
		w.d.pscw.waitAll()
	} else if err := w.h.Wait(); err != nil {
		return w.mpiErr("Wait", err)
	}
	w.mu.Lock()
	w.ep.post = false
	w.mu.Unlock()
	return nil
}

// Test is Wait that does not block (MPI_Win_test): done says whether the
// Post epoch has ended.
func (w *Win) Test() (bool, error) {
	if err := w.usable("Test"); err != nil {
		return false, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.ep.post {
		return false, errorf(ErrRMASync, "Test on rank %d: no exposure epoch (Test without Post)", w.rank)
	}
	var done bool
	var err error
	if w.d != nil {
		if done = w.d.pscw.done(); done {
			w.d.pscw.posted = nil
		}
	} else if done, err = w.h.Test(); err != nil {
		return false, w.mpiErr("Test", err)
	}
	if done {
		w.ep.post = false
	}
	return done, nil
}

// route says which window an RMA call goes through in a fence or PSCW
// epoch (in a passive-target epoch every call goes through the window
// itself): the window, or the twin, in whose passive-target epoch a call
// can be completed before it returns. Every call of the accumulate
// family takes the twin, the Accumulates that need no completion too:
// MPI makes accumulates to one location atomic with each other only on
// one window, and the MPIs serialize them per window (Open MPI's osc/sm
// and osc/rdma take a lock of the window for an accumulate they cannot
// do with one instruction), so an Accumulate on the window and a
// FetchAndOp on the twin could lose an update.
type route int

const (
	viaWin       route = iota
	viaTwinFetch       // completed before the call returns (flush_local)
	viaTwinAccum       // completed by the epoch's closing Fence or Complete
)

// flushTwin completes the Accumulates issued through the twin in the
// epoch that Fence or Complete is about to close (called with w.mu held).
func (w *Win) flushTwin() error {
	if !w.twinOps || w.d != nil { // a direct window has no twin
		w.twinOps = false
		return nil
	}
	if err := w.twin.Flush(-1, false); err != nil {
		return err
	}
	w.twinOps = false
	return nil
}

// rma checks an RMA call of n bytes at disp on target and returns the
// window to issue it on, the byte offset in target's memory, and whether
// it is a no-op (ProcNull); it holds w.mu on success, for the caller to
// release. The MPI's windows have disp unit 1: the backend scales disps
// itself (MPICH 4.0.2 misplaces data at disps of larger units).
func (w *Win) rma(call string, target, disp, n int, via route) (h mpi.Win, off int, noop bool, err error) {
	if err := w.usable(call); err != nil {
		return h, 0, false, err
	}
	if target != ProcNull && (target < 0 || target >= w.size) {
		return h, 0, false, errorf(ErrRank, "%s on rank %d: target %d outside a window of %d ranks", call, w.rank, target, w.size)
	}
	w.mu.Lock()
	ok, passive := w.ep.access(target)
	if !ok && target == ProcNull && (w.ep.fence || w.ep.start != nil) {
		ok = true
	}
	if !ok {
		w.mu.Unlock()
		if target == ProcNull {
			return h, 0, false, errorf(ErrRMASync, "%s on rank %d to ProcNull: no access epoch is open", call, w.rank)
		}
		return h, 0, false, errorf(ErrRMASync, "%s on rank %d to rank %d: no access epoch to rank %d is open (Fence, Start, Lock or LockAll first)", call, w.rank, target, target)
	}
	if target == ProcNull {
		w.mu.Unlock()
		return h, 0, true, nil
	}
	if disp < 0 {
		w.mu.Unlock()
		return h, 0, false, errorf(ErrDisp, "%s on rank %d to rank %d: disp %d is negative", call, w.rank, target, disp)
	}
	if n == 0 {
		w.mu.Unlock()
		return h, 0, true, nil // no data: nothing to reach, as the other backend's
	}
	if w.flavor == FlavorDynamic {
		// An absolute address in the target: its attached regions are the
		// MPI's to check.
		if w.ep.fence {
			w.ep.fenceRMA = true
		}
		h, off = w.h, disp
		if via != viaWin && !passive {
			h = w.twin
			w.twinOps = w.twinOps || via == viaTwinAccum
		}
		return h, off, false, nil
	}
	// disp is bounded before it is multiplied: a product past 2^63 could
	// wrap back inside the part.
	if u := w.units[target]; u <= 0 || disp > w.sizes[target]/u || disp*u+n > w.sizes[target] || disp*u+n < 0 {
		w.mu.Unlock()
		return h, 0, false, errorf(ErrRMARange, "%s on rank %d to rank %d: %d bytes at disp %d (units of %d bytes) are outside its part of %d bytes", call, w.rank, target, n, disp, w.units[target], w.sizes[target])
	}
	if w.ep.fence {
		w.ep.fenceRMA = true
	}
	h, off = w.h, disp*w.units[target]+w.leads[target]
	if via != viaWin && !passive {
		h, off = w.twin, disp*w.units[target]+w.twinLeads[target]
		w.twinOps = w.twinOps || via == viaTwinAccum
	}
	return h, off, false, nil
}

// Put copies src into target's part of the window at disp (MPI_Put).
// Local; src stays pinned until the epoch's completing call (Flush,
// Unlock, Fence, Complete). It needs an access epoch to target
// (ErrRMASync), a disp >= 0 (ErrDisp) and bytes inside the target's part
// (ErrRMARange). ProcNull is a no-op inside any open access epoch.
func (w *Win) Put(src []byte, target, disp int) error {
	h, off, noop, err := w.rma("Put", target, disp, len(src), viaWin)
	if err != nil || noop {
		return err
	}
	if w.d != nil {
		return w.directPut(src, target, disp)
	}
	defer w.mu.Unlock()
	if err := h.Put(w.origin(src, target), target, off); err != nil {
		return w.mpiErr("Put", err)
	}
	return nil
}

// Get copies len(dst) bytes from target's part at disp into dst (MPI_Get).
// As Put for epochs, ranges and ProcNull; dst may be read once Get
// returns.
func (w *Win) Get(dst []byte, target, disp int) error {
	h, off, noop, err := w.rma("Get", target, disp, len(dst), viaTwinFetch)
	if err != nil || noop {
		return err
	}
	if w.d != nil {
		return w.directGet(dst, target, disp)
	}
	defer w.mu.Unlock()
	if err := h.Get(dst, target, off); err != nil {
		return w.mpiErr("Get", err)
	}
	return nil
}

// PutT is Put of elements.
func PutT[T atomics.Elem](w *Win, src []T, target, disp int) error {
	return w.Put(raw.Bytes(src), target, disp)
}

// GetT is Get of elements.
func GetT[T atomics.Elem](w *Win, dst []T, target, disp int) error {
	return w.Get(raw.Bytes(dst), target, disp)
}

func accCheck[T atomics.Elem](call string, op atomics.Op, fetch bool) error {
	if err := atomics.Check(op, atomics.TypeOf[T](), fetch); err != nil {
		return errorf(ErrOp, "%s: %v", call, err)
	}
	return nil
}

// Accumulate combines src into target's elements at disp with op, element
// by element atomically (MPI_Accumulate). Local; as Put for epochs.
func Accumulate[T atomics.Elem](w *Win, src []T, target, disp int, op atomics.Op) error {
	if err := accCheck[T]("Accumulate", op, false); err != nil {
		return err
	}
	b := raw.Bytes(src)
	h, off, noop, err := w.rma("Accumulate", target, disp, len(b), viaTwinAccum)
	if err != nil || noop {
		return err
	}
	if w.d != nil {
		return directAccumulate(w, src, target, disp, op)
	}
	defer w.mu.Unlock()
	if err := h.Accumulate(w.origin(b, target), len(src), atomics.TypeOf[T](), target, off, op); err != nil {
		return w.mpiErr("Accumulate", err)
	}
	return nil
}

// GetAccumulate returns target's elements at disp in result and combines
// src into them with op, atomically (MPI_Get_accumulate); result may be
// read once it returns.
func GetAccumulate[T atomics.Elem](w *Win, src, result []T, target, disp int, op atomics.Op) error {
	if err := accCheck[T]("GetAccumulate", op, true); err != nil {
		return err
	}
	if op != atomics.NoOp && len(src) != len(result) {
		return errorf(ErrCount, "GetAccumulate on rank %d: %d origin elements, %d result elements", w.Rank(), len(src), len(result))
	}
	if len(result) > 1 && op != atomics.NoOp { // as the other backend's (accumulate.go)
		if err := aliased("GetAccumulate", w, raw.Bytes(src), raw.Bytes(result)); err != nil {
			return err
		}
	}
	b, rb := raw.Bytes(src), raw.Bytes(result)
	if op == atomics.NoOp {
		b = rb
	}
	h, off, noop, err := w.rma("GetAccumulate", target, disp, len(rb), viaTwinFetch)
	if err != nil || noop {
		return err
	}
	if w.d != nil {
		return directGetAccumulate(w, src, result, target, disp, op)
	}
	defer w.mu.Unlock()
	if err := h.GetAccumulate(b, rb, len(result), atomics.TypeOf[T](), target, off, op); err != nil {
		return w.mpiErr("GetAccumulate", err)
	}
	return nil
}

// FetchAndOp returns the element at disp on target and combines v into it
// with op, atomically (MPI_Fetch_and_op). op may be NoOp or Replace.
func FetchAndOp[T atomics.Elem](w *Win, v T, target, disp int, op atomics.Op) (T, error) {
	var old T
	if err := accCheck[T]("FetchAndOp", op, true); err != nil {
		return old, err
	}
	src := []T{v}
	res := []T{old}
	h, off, noop, err := w.rma("FetchAndOp", target, disp, atomics.SizeOf[T](), viaTwinFetch)
	if err != nil || noop {
		return old, err
	}
	if w.d != nil {
		return directFetchAndOp(w, v, target, disp, op)
	}
	defer w.mu.Unlock()
	if err := h.FetchAndOp(raw.Bytes(src), raw.Bytes(res), atomics.TypeOf[T](), target, off, op); err != nil {
		return old, w.mpiErr("FetchAndOp", err)
	}
	return res[0], nil
}

// CompareAndSwap replaces the element at disp on target with v if it
// equals compare, and returns its old value, atomically
// (MPI_Compare_and_swap).
func CompareAndSwap[T atomics.Integer](w *Win, v, compare T, target, disp int) (T, error) {
	var old T
	args := []T{v, compare, old}
	h, off, noop, err := w.rma("CompareAndSwap", target, disp, atomics.SizeOf[T](), viaTwinFetch)
	if err != nil || noop {
		return old, err
	}
	if w.d != nil {
		return directCAS(w, v, compare, target, disp)
	}
	defer w.mu.Unlock()
	if err := h.CompareAndSwap(raw.Bytes(args[0:1]), raw.Bytes(args[1:2]), raw.Bytes(args[2:3]), atomics.TypeOf[T](), target, off); err != nil {
		return old, w.mpiErr("CompareAndSwap", err)
	}
	return args[2], nil
}
