package win

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/internal/team"
	"github.com/shmrun/shmrun/shm"
)

// ProcNull is a valid target of every RMA call (MPI_PROC_NULL): the call is
// a no-op that still checks the epoch. SharedQuery(ProcNull) returns the
// segment of the lowest rank with a nonzero size.
const ProcNull = comm.ProcNull

// Flavor is how a window's memory was made (MPI_WIN_FLAVOR).
type Flavor uint32

// Window flavors. Create and Dynamic come with their own issue.
const (
	FlavorShared   Flavor = format.FlavorShared   // AllocateShared (MPI_WIN_FLAVOR_SHARED)
	FlavorAllocate Flavor = format.FlavorAllocate // Allocate (MPI_WIN_FLAVOR_ALLOCATE)
)

func (f Flavor) String() string {
	switch f {
	case FlavorShared:
		return "MPI_WIN_FLAVOR_SHARED"
	case FlavorAllocate:
		return "MPI_WIN_FLAVOR_ALLOCATE"
	}
	return fmt.Sprintf("Flavor(%d)", uint32(f))
}

// Model is the memory model of a window (MPI_WIN_MODEL).
type Model uint32

// Unified is the only model: one copy of the memory (MPI_WIN_UNIFIED).
const Unified Model = 1

func (m Model) String() string { return "MPI_WIN_UNIFIED" }

// Segment is one rank's part of a window as seen from the calling process
// (what MPI_Win_shared_query returns): its size in bytes, its disp unit, and
// its bytes in this process's mapping.
type Segment struct {
	Size     int
	DispUnit int
	Bytes    []byte
}

// Attr holds a window's attributes (MPI_WIN_BASE, MPI_WIN_SIZE,
// MPI_WIN_DISP_UNIT, MPI_WIN_CREATE_FLAVOR, MPI_WIN_MODEL) for the caller.
type Attr struct {
	Base     []byte
	Size     int
	DispUnit int
	Flavor   Flavor
	Model    Model
}

// part is a rank's data as the RMA paths use it.
type part struct {
	data     []byte // the rank's bytes in this mapping (cap-limited)
	off      int64  // offset of data in the segment (for lock stripes)
	dispUnit int64
	maxDisp  uint // len(data) / dispUnit: the largest disp that can be in range
}

// Win is a window (MPI_Win): one shared segment mapped by every member, this
// rank's epoch state, and pointers to the sync block's words.
type Win struct {
	c      *comm.Comm
	t      *team.Team
	rank   int
	size   int
	flavor Flavor
	cfg    config
	mem    []byte // the whole segment in this process
	mapped bool   // mem is an mmap (false: heap, local mode)
	layout shm.WindowLayout
	sl     format.SyncLayout
	parts  []part

	fence    *barrier.Barrier
	global   *uint64
	globalEv barrier.Event
	locks    []lockLine
	bells    []barrier.Event
	stripes  *atomics.Stripes

	ep         epochState
	groupCache [2]groupRanks // last groups given to Post and Start
	freed      atomic.Bool

	// fenceWord is a rank-private word on a line of its own: a locked add on
	// it is the cheapest full fence on amd64 (sync/atomic has no bare fence).
	_         [format.Line]byte
	fenceWord uint64
	_         [format.Line]byte
}

type lockLine struct {
	word *uint64
	ev   barrier.Event // Seq is the low half of word
}

// AllocateShared allocates a shared window (MPI_Win_allocate_shared):
// collective over c; each rank contributes size bytes (sizes may differ, 0 is
// legal) with disp unit dispUnit (> 0). By default rank i's data directly
// follows rank i-1's last byte, as the standard requires; with
// info alloc_shared_noncontig=true each rank's part starts on its own page.
// Every rank reserves its own part from its own process, so a full tmpfs is
// ErrNoMem on every rank now rather than SIGBUS later. The segment is unlinked
// as soon as every rank has mapped it; new windows are zeroed.
func AllocateShared(c *comm.Comm, size int, dispUnit int, info Info) (*Win, error) {
	return allocate(c, int64(size), dispUnit, info, FlavorShared)
}

// Allocate allocates a window (MPI_Win_allocate): the same as AllocateShared,
// since on one node the memory is shared anyway; its flavor is Allocate, and
// SharedQuery works on it too (as MPI 4.1 allows).
func Allocate(c *comm.Comm, size int, dispUnit int, info Info) (*Win, error) {
	return allocate(c, int64(size), dispUnit, info, FlavorAllocate)
}

// slot encoding for the allocation exchange.
const (
	slotSize     = 0
	slotDispUnit = 8
	slotFlags    = 16
	slotClass    = 20
	slotMsg      = 24
)

func allocate(c *comm.Comm, size int64, dispUnit int, info Info, flavor Flavor) (*Win, error) {
	call := "AllocateShared"
	if flavor == FlavorAllocate {
		call = "Allocate"
	}
	t, err := team.OfComm(c, call)
	if err != nil {
		return nil, fmt.Errorf("win: %w", err)
	}
	cfg, err := parseInfo(info)
	if err == nil && size < 0 {
		err = errorf(ErrSize, "%s on rank %d: size %d is negative", call, t.Rank(), size)
	}
	if err == nil && dispUnit <= 0 {
		err = errorf(ErrArg, "%s on rank %d: disp unit %d must be positive", call, t.Rank(), dispUnit)
	}
	// Round 1: sizes, disp units and hints.
	var flags uint32
	if cfg.noncontig {
		flags |= format.FlagNoncontig
	}
	if cfg.hugePages {
		flags |= format.FlagHuge
	}
	if cfg.noReserve {
		flags |= format.FlagNoReserve
	}
	slots, err := exchange(t, err, func(b []byte) {
		binary.LittleEndian.PutUint64(b[slotSize:], uint64(size))
		binary.LittleEndian.PutUint64(b[slotDispUnit:], uint64(dispUnit))
		binary.LittleEndian.PutUint32(b[slotFlags:], flags)
	})
	if err != nil {
		return nil, err
	}
	n := t.Size()
	sizes, units := make([]int64, n), make([]int64, n)
	flags = 0
	for r := range n {
		s := slots[r*format.SlotLen:]
		sizes[r] = int64(binary.LittleEndian.Uint64(s[slotSize:]))
		units[r] = int64(binary.LittleEndian.Uint64(s[slotDispUnit:]))
		flags |= binary.LittleEndian.Uint32(s[slotFlags:])
	}
	cfg.noncontig = flags&format.FlagNoncontig != 0
	cfg.hugePages = flags&format.FlagHuge != 0
	cfg.noReserve = flags&format.FlagNoReserve != 0
	// Every rank computes the same layout from the same inputs, so every rank
	// fails (or not) alike here without another round.
	align := shm.PageSize
	if cfg.hugePages {
		align = shm.HugePageSize
	}
	sl := format.NewSyncLayout(n)
	layout, lerr := shm.NewWindowLayout(sizes, format.WinHeaderLen(n), sl.Total, cfg.noncontig, align)
	if lerr != nil {
		return nil, errorf(ErrSize, "%s: %v", call, lerr)
	}
	if err := checkSame(cfg, sizes, units, call); err != nil {
		return nil, err
	}
	sp := segmentSpec{flavor: flavor, flags: flags, layout: layout, dispUnits: units}
	w := &Win{c: c, t: t, rank: t.Rank(), size: n, flavor: flavor, cfg: cfg, layout: layout, sl: sl}
	if t.Local() {
		err = w.mapLocal(sp)
	} else {
		err = w.mapShared(sp, call)
	}
	if err != nil {
		return nil, err
	}
	w.bind(units)
	return w, nil
}

// checkSame enforces the same_size and same_disp_unit assertions: a window
// whose ranks break them is erroneous, and we say so on every rank.
func checkSame(cfg config, sizes, units []int64, call string) error {
	for r := range sizes {
		if cfg.sameSize && sizes[r] != sizes[0] {
			return errorf(ErrSize, "%s: info same_size=true but rank %d asks %d bytes and rank 0 %d", call, r, sizes[r], sizes[0])
		}
		if cfg.sameDispUnit && units[r] != units[0] {
			return errorf(ErrArg, "%s: info same_disp_unit=true but rank %d has disp unit %d and rank 0 %d", call, r, units[r], units[0])
		}
	}
	return nil
}

// exchange runs one round of the team's exchange in which a rank may report a
// local error. If any rank failed, every rank returns the first failure's
// class and message; otherwise the slots.
func exchange(t *team.Team, localErr error, fill func([]byte)) ([]byte, error) {
	var mine [format.SlotLen]byte
	if localErr != nil {
		mine[slotClass] = classCode(localErr) + 1
		copy(mine[slotMsg:], localErr.Error())
	} else if fill != nil {
		fill(mine[:])
	}
	slots, first, err := t.Exchange(mine[:], localErr != nil)
	if err != nil {
		return nil, errorf(ErrAborted, "rank %d: %v", t.Rank(), err)
	}
	if first < 0 {
		return slots, nil
	}
	if first == t.Rank() && localErr != nil {
		return nil, localErr
	}
	s := slots[first*format.SlotLen : (first+1)*format.SlotLen]
	msg := s[slotMsg:]
	for i, b := range msg {
		if b == 0 {
			msg = msg[:i]
			break
		}
	}
	class := classes[int(s[slotClass]-1)%len(classes)]
	return nil, &remoteError{msg: fmt.Sprintf("%s (failed on rank %d; seen from rank %d)", msg, first, t.Rank()), class: class}
}

// agree is exchange without payload: a collective yes/no on localErr.
func agree(t *team.Team, localErr error) error {
	_, err := exchange(t, localErr, nil)
	return err
}

// mapShared makes, maps and reserves the segment in the shm directory.
func (w *Win) mapShared(sp segmentSpec, call string) error {
	t := w.t
	var obj *shm.Object
	var mem []byte
	fail := func(err error) error {
		if mem != nil {
			shm.Unmap(mem)
		}
		if obj != nil {
			if t.Rank() == 0 {
				obj.Unlink()
			}
			obj.Close()
		}
		return err
	}
	// Round 2: rank 0 creates the object and publishes its name.
	var err error
	name := ""
	if t.Rank() == 0 {
		name = shm.ObjectName(t.Job(), shm.NewObjectID())
		obj, err = shm.Create(t.Dir(), name, sp.layout.Total)
		if err == nil {
			mem, err = obj.Map(sp.layout.Total)
		}
		if err == nil {
			err = writeWindowHeader(mem, sp)
		}
		if err != nil {
			err = errorf(classOf(err), "%s on rank 0: %v", call, err)
		}
	}
	slots, err := exchange(t, err, func(b []byte) { copy(b[slotMsg:], name) })
	if err != nil {
		return fail(err)
	}
	// Round 3: the others open and check it; everyone reserves its part.
	if t.Rank() != 0 {
		msg := slots[slotMsg:format.SlotLen]
		for i, b := range msg {
			if b == 0 {
				msg = msg[:i]
				break
			}
		}
		obj, err = shm.Open(t.Dir(), string(msg), sp.layout.Total)
		if err == nil {
			mem, err = obj.Map(sp.layout.Total)
		}
		if err == nil {
			err = checkWindowHeader(mem, sp.layout.Total, sp)
		}
		if err != nil {
			err = errorf(ErrWin, "%s on rank %d: %v", call, t.Rank(), err)
		}
		name = string(msg)
	}
	if err == nil && testHookMapped != nil {
		// Before the agreement below: the name is unlinked right after it.
		testHookMapped(t.Dir(), name)
	}
	if err == nil && sp.flags&format.FlagHuge != 0 {
		_ = shm.AdviseHuge(mem) // a hint: tmpfs without huge= ignores it
	}
	if err == nil && sp.flags&format.FlagNoReserve == 0 {
		// Each rank backs its own part, from its own process: pages on its
		// NUMA node, no SIGBUS later, and already mapped for its first touch.
		off, length := sp.layout.Reservation(t.Rank())
		if length > 0 {
			if rerr := obj.Populate(t.Dir(), mem, off, length); rerr != nil {
				err = errorf(classOf(rerr), "%s on rank %d: %v", call, t.Rank(), rerr)
			}
		}
	}
	err = agree(t, err)
	// Everyone has mapped (or failed): the name is no longer needed.
	if t.Rank() == 0 && obj != nil {
		obj.Unlink()
	}
	if obj != nil {
		obj.Close()
		obj = nil
	}
	if err != nil {
		return fail(err)
	}
	w.mem, w.mapped = mem, true
	return nil
}

// testHookMapped, when set (by a test, in one rank process, before any
// window is made), is called with the segment's directory and name once this
// rank has mapped it and before it is unlinked: the C interop test opens the
// segment there to hand it to a C program. Nil in every real program.
var testHookMapped func(dir, name string)

func isNoSpace(err error) bool { return errors.Is(err, shm.ErrNoSpace) }

func classOf(err error) error {
	if c := classCode(err); c != 0 {
		return classes[c]
	}
	if isNoSpace(err) {
		return ErrNoMem
	}
	return ErrOther
}

// mapLocal gives the goroutine ranks of a local world one heap segment.
func (w *Win) mapLocal(sp segmentSpec) error {
	key := w.t.NextSeq()
	if w.rank == 0 {
		heap := make([]byte, sp.layout.Total+shm.PageSize)
		skip := (shm.PageSize - int64(raw.Addr(heap))%shm.PageSize) % shm.PageSize
		mem := heap[skip : skip+sp.layout.Total : skip+sp.layout.Total]
		if err := writeWindowHeader(mem, sp); err != nil {
			return err
		}
		w.t.Publish(key, mem)
	}
	if err := agree(w.t, nil); err != nil {
		return err
	}
	w.mem = w.t.Lookup(key).([]byte)
	if err := agree(w.t, nil); err != nil {
		return err
	}
	if w.rank == 0 {
		w.t.Forget(key)
	}
	return nil
}

// bind sets up the pointers into the sync block and the per-rank parts.
func (w *Win) bind(units []int64) {
	sync := w.mem[w.layout.SyncOff : w.layout.SyncOff+w.layout.SyncLen]
	var err error
	w.fence, err = barrier.New(sync[w.sl.Fence:w.sl.Fence+barrier.LineLen], w.size, w.t.Abort(), w.t.Policy())
	if err != nil {
		panic("win: sync layout: " + err.Error()) // the layout code guarantees size and alignment
	}
	w.global = raw.Uint64At(sync, w.sl.Global+format.GlobalHolders)
	w.globalEv = barrier.Event{Seq: raw.Uint32At(sync, w.sl.Global+format.GlobalSeq), Sleepers: raw.Uint32At(sync, w.sl.Global+format.GlobalSleepers)}
	w.locks = make([]lockLine, w.size)
	w.bells = make([]barrier.Event, w.size)
	for r := range w.size {
		lo := w.sl.LockOff(r)
		w.locks[r] = lockLine{word: raw.Uint64At(sync, lo+format.LockWord), ev: barrier.Event{Seq: raw.Uint32At(sync, lo+format.LockWord), Sleepers: raw.Uint32At(sync, lo+format.LockSleepers)}}
		bo := w.sl.DoorbellOff(r)
		w.bells[r] = barrier.Event{Seq: raw.Uint32At(sync, bo+format.BellSeq), Sleepers: raw.Uint32At(sync, bo+format.BellSleepers)}
	}
	w.stripes, err = atomics.NewStripes(sync[w.sl.Stripes:w.sl.Stripes+format.NumStripes*atomics.StripeLen], w.t.Abort(), w.t.Policy())
	if err != nil {
		panic("win: stripes: " + err.Error())
	}
	w.parts = make([]part, w.size)
	for r := range w.size {
		off, size := w.layout.Part(r)
		end := off + size
		if size == 0 && off < int64(len(w.mem)) {
			// Go does not advance the pointer of a slice with capacity 0: a
			// capacity of 1 keeps an empty part positioned where its data
			// would start (in the contiguous layout, the next rank's first
			// byte; the length stays 0 and RMA never uses the capacity).
			end++
		}
		w.parts[r] = part{data: w.mem[off : off+size : end], off: off, dispUnit: units[r], maxDisp: uint(size / units[r])}
	}
	w.ep.init(w.size, w.t.Check())
	w.ep.setGate(gateNoLocks, w.cfg.noLocks)
}

// Local returns the calling rank's part of the window (its MPI_WIN_BASE and
// MPI_WIN_SIZE as a slice). Local. The slice is valid until Free.
func (w *Win) Local() []byte {
	if w == nil || w.freed.Load() {
		return nil
	}
	return w.parts[w.rank].data
}

// SharedQuery returns rank's part of the window as mapped in this process
// (MPI_Win_shared_query): any rank, or ProcNull for the lowest rank whose size
// is nonzero (all sizes zero: size 0 and an empty slice). Local. A rank of
// size 0 gets, in the contiguous layout, an empty slice positioned where its
// data would start, and in the noncontig layout nil. Works on both flavors
// (MPI 4.1 allows it for Allocate windows whose memory is shared).
func (w *Win) SharedQuery(rank int) (Segment, error) {
	if err := w.live("SharedQuery"); err != nil {
		return Segment{}, err
	}
	if rank == ProcNull {
		for r := range w.size {
			if len(w.parts[r].data) > 0 {
				rank = r
				break
			}
		}
		if rank == ProcNull {
			return Segment{Size: 0, DispUnit: int(w.parts[0].dispUnit), Bytes: []byte{}}, nil
		}
	}
	if rank < 0 || rank >= w.size {
		return Segment{}, errorf(ErrRank, "SharedQuery on rank %d: rank %d outside a window of %d ranks", w.rank, rank, w.size)
	}
	p := w.parts[rank]
	b := p.data
	if len(b) == 0 && w.layout.Noncontig {
		b = nil
	}
	return Segment{Size: len(p.data), DispUnit: int(p.dispUnit), Bytes: b}, nil
}

// View returns memory of a window as a slice of T: a Segment from
// SharedQuery, or bytes (from Local, or a sub-slice). It checks that the
// address is aligned for T, that the length is a multiple of T's size, and
// that T holds no Go pointers (ErrType otherwise). Local. The view aliases the
// window's memory and must not be used after Free.
func View[T any, M Segment | []byte](mem M) ([]T, error) {
	var b []byte
	switch m := any(mem).(type) {
	case Segment:
		b = m.Bytes
	case []byte:
		b = m
	}
	v, err := shm.View[T](b)
	if err != nil {
		return nil, fmt.Errorf("win: %v: %w", err, ErrType)
	}
	return v, nil
}

// Attr returns the calling rank's window attributes. Local. A nil or freed
// window gives the zero Attr.
func (w *Win) Attr() Attr {
	if w == nil || w.freed.Load() {
		return Attr{}
	}
	p := w.parts[w.rank]
	return Attr{Base: w.Local(), Size: len(p.data), DispUnit: int(p.dispUnit), Flavor: w.flavor, Model: Unified}
}

// Info returns the hints in effect, defaults included (MPI_Win_get_info).
// Local. A nil or freed window gives nil.
func (w *Win) Info() Info {
	if w == nil || w.freed.Load() {
		return nil
	}
	return w.cfg.info()
}

// Size is the number of ranks of the window's group. Local. A nil or freed
// window gives 0.
func (w *Win) Size() int {
	if w == nil || w.freed.Load() {
		return 0
	}
	return w.size
}

// Rank is the calling rank in the window's group. Local. A nil or freed
// window gives 0 (its calls with an error result say ErrWin).
func (w *Win) Rank() int {
	if w == nil || w.freed.Load() {
		return 0
	}
	return w.rank
}

// Group returns the window's group (MPI_Win_get_group). Local. A nil or
// freed window gives nil.
func (w *Win) Group() *comm.Group {
	if w == nil || w.freed.Load() {
		return nil
	}
	return w.c.Group()
}

// Free frees the window (MPI_Win_free): collective. It fails with ErrRMASync
// on every rank if any rank has an epoch open (the window then stays valid),
// and with ErrWin if the window was freed already. After it returns, slices
// from Local, SharedQuery and View must not be used: the memory is unmapped.
func (w *Win) Free() error {
	if err := w.live("Free"); err != nil {
		return err
	}
	var err error
	if open := w.ep.describeOpen(); open != "" {
		err = errorf(ErrRMASync, "Free on rank %d: %s is still open", w.rank, open)
	}
	if err = agree(w.t, err); err != nil {
		return err
	}
	w.freed.Store(true)
	w.ep.setGate(gateFreed, true)
	if w.mapped {
		if uerr := shm.Unmap(w.mem); uerr != nil {
			return errorf(ErrOther, "Free on rank %d: unmap: %v", w.rank, uerr)
		}
	}
	w.mem, w.parts = nil, nil
	w.checkEpoch("Free")
	return nil
}

func (w *Win) live(call string) error {
	if w == nil {
		return errorf(ErrWin, "%s: nil window", call)
	}
	if w.freed.Load() {
		return errorf(ErrWin, "%s on rank %d: window was freed", call, w.rank)
	}
	return nil
}

// checkEpoch is the invariant check of the goroutine test mode (gateCheck):
// it panics naming the call and the broken invariant, a bug of this package.
// The synchronization calls run it on their way out (the fast paths of
// UnlockAll, Flush and the RMA calls do not: the next call's check sees
// what they left).
func (w *Win) checkEpoch(call string) {
	if w == nil || w.ep.gate&gateCheck == 0 {
		return
	}
	if err := w.ep.check(w.freed.Load(), w.cfg.noLocks); err != nil {
		panic(fmt.Sprintf("win: %s on rank %d: broken epoch state: %v", call, w.rank, err))
	}
}

// fullFence orders every earlier load and store of this process before every
// later one (a locked add on a private line).
func (w *Win) fullFence() { atomic.AddUint64(&w.fenceWord, 1) }
