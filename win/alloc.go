//go:build !mpi

package win

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"syscall"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/heap"
	"github.com/shmrun/shmrun/internal/obs"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/internal/rmacheck"
	"github.com/shmrun/shmrun/internal/team"
	"github.com/shmrun/shmrun/shm"
)

// AllocateShared allocates a shared window (MPI_Win_allocate_shared):
// collective over c; each rank contributes size bytes (sizes may differ, 0 is
// legal) with disp unit dispUnit (> 0). By default rank i's data directly
// follows rank i-1's last byte, as the standard requires; with
// info alloc_shared_noncontig=true each rank's part starts on its own page.
// Every rank reserves its own part from its own process, so a full tmpfs is
// ErrNoMem on every rank now rather than SIGBUS later; a window larger than
// the shm directory's free space fails at once (statfs), before anything is
// reserved, and a reservation that fails midway gives its pages back. The segment is unlinked
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
	slotMsgLen   = 0 // on failure: uint32 length of the whole message
)

// maxRemoteMsg bounds the message a failed collective call carries to the
// other ranks (the rounds it takes: 64 KiB is 256 rounds of 256 bytes).
const maxRemoteMsg = 64 << 10

// Assertion bits of the exchange's flags word, above format's Flag* bits:
// they travel between ranks only and never reach the segment header.
const (
	slotSameSize     = 1 << 16
	slotSameDispUnit = 1 << 17
	// Bits 24-28: log2 of the rank's mpi_minimum_memory_alignment (0:
	// none); the largest asked for holds for every part.
	slotAlignShift = 24
	slotAlignMask  = 0x1f << slotAlignShift
	slotOnly       = slotSameSize | slotSameDispUnit | slotAlignMask
)

func allocate(c *comm.Comm, size int64, dispUnit int, info Info, flavor Flavor) (w *Win, err error) {
	call := map[Flavor]string{FlavorShared: "AllocateShared", FlavorAllocate: "Allocate", FlavorCreate: "Create", FlavorDynamic: "CreateDynamic"}[flavor]
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
	if err == nil && t.Size() > format.LockCounterMask {
		// A lock word's tickets count modulo 2^15: with more ranks
		// queued on one target, two would hold the same ticket.
		err = errorf(ErrOther, "%s on rank %d: a window spans at most %d ranks, not %d (its locks' tickets)", call, t.Rank(), format.LockCounterMask, t.Size())
	}
	// The epoch state is mapped before round 1, so that a failure is agreed
	// on like any other; Free unmaps it (dispose), a failed creation here.
	var ep epochState
	if err == nil {
		if err = ep.init(t.Size(), t.Check()); err != nil {
			err = errorf(ErrNoMem, "%s on rank %d: %v", call, t.Rank(), err)
		}
	}
	defer func() {
		if w == nil {
			ep.drop()
		}
	}()
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
	if cfg.sameSize {
		flags |= slotSameSize
	}
	if cfg.sameDispUnit {
		flags |= slotSameDispUnit
	}
	flags |= uint32(bits.TrailingZeros64(uint64(cfg.minAlign))) << slotAlignShift
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
		f := binary.LittleEndian.Uint32(s[slotFlags:])
		cfg.minAlign = max(cfg.minAlign, int64(1)<<((f&slotAlignMask)>>slotAlignShift))
		flags |= f &^ slotAlignMask
	}
	cfg.noncontig = flags&format.FlagNoncontig != 0
	cfg.hugePages = flags&format.FlagHuge != 0
	cfg.noReserve = flags&format.FlagNoReserve != 0
	// An assertion given on some ranks only is erroneous (the standard asks
	// every rank for the same value); taking it from any rank makes every
	// rank check the same thing below and fail, or not, alike.
	cfg.sameSize = flags&slotSameSize != 0
	cfg.sameDispUnit = flags&slotSameDispUnit != 0
	flags &^= slotOnly
	// Every rank computes the same layout from the same inputs, so every rank
	// fails (or not) alike here without another round.
	align := shm.PageSize
	if cfg.hugePages {
		align = shm.HugePageSize
	}
	sl := format.NewSyncLayout(n)
	layout, lerr := format.NewWindowLayout(sizes, format.WinHeaderLen(n), sl.Total, cfg.noncontig, align, cfg.minAlign)
	if lerr != nil {
		return nil, errorf(ErrSize, "%s: %v", call, lerr)
	}
	if err := checkSame(cfg, sizes, units, call); err != nil {
		return nil, err
	}
	sp := segmentSpec{flavor: flavor, flags: flags, layout: layout, dispUnits: units}
	w = &Win{c: c, t: t, rank: t.Rank(), size: n, flavor: flavor, cfg: cfg, layout: layout, sl: sl, ep: ep, hot: ep.h}
	if t.Local() {
		err = w.mapLocal(sp)
	} else {
		err = w.mapShared(sp, call)
	}
	if err != nil {
		return nil, err
	}
	w.bind(units)
	t.Hold() // the window keeps its communicator's team until its own Free
	if err := w.observe(call, sizes); err != nil {
		_ = w.dispose()
		return nil, err
	}
	return w, nil
}

// observe starts the window's record when the job records (shmrun
// --stats, --trace): its calls then all take the slow paths, which record
// them (and check them under --check too). Otherwise the fast paths get
// the parts.
func (w *Win) observe(call string, sizes []int64) error {
	if p := rmacheck.Self(); p != nil {
		if err := w.checkLog(p, call); err != nil {
			return err
		}
	}
	rec := obs.Self()
	if rec == nil {
		// A checked window keeps its fast paths, which check (one branch
		// when not checking); its synchronization calls take the slow
		// paths, which carry the checker's clocks.
		w.fast = w.parts
		if w.chk != nil {
			w.ep.observe()
		}
		return nil
	}
	var total int64
	for _, s := range sizes {
		total += s
	}
	layout := "contiguous"
	switch {
	case w.flavor == FlavorCreate:
		layout = "own memory"
	case w.flavor == FlavorDynamic:
		layout = "dynamic"
	case w.cfg.noncontig:
		layout = "noncontig"
	}
	flavor := strings.ToLower(strings.TrimPrefix(w.flavor.String(), "MPI_WIN_FLAVOR_"))
	w.obs = rec.NewWin(obs.WinDesc{Flavor: flavor, Ranks: w.size, Size: sizes[w.rank], Total: total,
		DispUnit: w.parts[w.rank].dispUnit, Layout: layout})
	w.ep.observe()
	return nil
}

// checkLog makes the window's log for shmrun --check: a collective area
// of every rank's latest accesses (rmacheck), numbered by the rank that
// makes it, so that every rank's reports name the window alike.
func (w *Win) checkLog(p *rmacheck.Proc, call string) error {
	world := rmacheck.WorldOf(w.c)
	if len(world) != w.size {
		return errorf(ErrOther, "%s on rank %d: shmrun --check: the communicator's world ranks are unknown", call, w.rank)
	}
	number := func(mem []byte) error { return p.InitLog(mem, w.size) }
	nop := func([]byte) error { return nil }
	mem, err := w.t.Area(rmacheck.LogAreaLen(w.size, p.WorldSize()), "shmrun-check", number, nop)
	if err != nil {
		return errorf(ErrNoMem, "%s on rank %d: shmrun --check's log: %v", call, w.rank, err)
	}
	w.chkMem = mem
	w.chk = p.NewLog(mem, world, w.rank, w.cfg.sameOp)
	w.chk.SetOrdering(w.cfg.ordering)
	if w.flavor == FlavorDynamic {
		w.chk.SetAddresses()
	}
	w.clocks = w.chk.Clocks()
	return nil
}

// checkSame enforces the same_size and same_disp_unit assertions, as agreed
// (set if any rank set them): a window whose ranks break them is erroneous,
// and every rank says so with the same error.
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
// class and its whole message (up to maxRemoteMsg bytes), naming the rank
// that failed; otherwise the slots.
//
// A failure's slot holds the message's length at slotMsgLen, its class at
// slotClass and its first bytes at slotMsg; when the message is longer than
// that, every rank runs the further rounds the length calls for, in which
// the failed rank publishes the rest, a slot at a time. Every rank reads the
// same length from the same slot, so all run the same number of rounds.
func exchange(t *team.Team, localErr error, fill func([]byte)) ([]byte, error) {
	var mine [format.SlotLen]byte
	var msg string
	if localErr != nil {
		msg = localErr.Error()
		if len(msg) > maxRemoteMsg {
			msg = msg[:maxRemoteMsg]
		}
		mine[slotClass] = classCode(localErr) + 1
		binary.LittleEndian.PutUint32(mine[slotMsgLen:], uint32(len(msg)))
		copy(mine[slotMsg:], msg)
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
	s := slots[first*format.SlotLen : (first+1)*format.SlotLen]
	total := min(int(binary.LittleEndian.Uint32(s[slotMsgLen:])), maxRemoteMsg)
	class := classes[int(s[slotClass]-1)%len(classes)]
	text := make([]byte, 0, total)
	text = append(text, s[slotMsg:slotMsg+min(total, format.SlotLen-slotMsg)]...)
	for len(text) < total {
		var piece [format.SlotLen]byte
		if first == t.Rank() {
			copy(piece[:], msg[len(text):])
		}
		slots, _, err := t.Exchange(piece[:], false)
		if err != nil {
			return nil, errorf(ErrAborted, "rank %d: %v", t.Rank(), err)
		}
		text = append(text, slots[first*format.SlotLen:][:min(format.SlotLen, total-len(text))]...)
	}
	if first == t.Rank() && localErr != nil {
		return nil, localErr
	}
	return nil, &remoteError{msg: fmt.Sprintf("%s (failed on rank %d; seen from rank %d)", text, first, t.Rank()), class: class}
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
	// Round 2: rank 0 creates the object and publishes where it is.
	var err error
	name := ""
	if t.Rank() == 0 {
		obj, name, err = t.MakeObject(sp.layout.Total, sp.layout.Reserved(), sp.flags&format.FlagNoReserve == 0, "shmrun-window")
		if err == nil {
			mem, err = obj.MapAligned(sp.layout.Total, sp.layout.MapAlign())
		}
		if err == nil {
			// The header and sync pages exist before rank 0 writes them, even
			// with shmrun_no_reserve: a full directory is ErrNoMem, not SIGBUS.
			err = obj.Populate(t.Dir(), mem, 0, sp.layout.HeaderLen+sp.layout.SyncLen)
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
		obj, err = team.OpenObject(t.Dir(), string(msg), sp.layout.Total)
		if err == nil {
			mem, err = obj.MapAligned(sp.layout.Total, sp.layout.MapAlign())
		}
		if err == nil {
			err = checkWindowHeader(mem, sp.layout.Total, sp)
		}
		if err != nil {
			class := ErrWin // a segment that is not the one agreed on
			if isNoMem(err) {
				class = ErrNoMem
			}
			err = errorf(class, "%s on rank %d: %v", call, t.Rank(), err)
		}
		name = string(msg)
	}
	if err == nil && testHookMapped != nil {
		// Before the agreement below: the name is unlinked right after it.
		testHookMapped(t.Dir(), name)
	}
	if err == nil {
		// The NUMA policy of this rank's part, before a page of it exists.
		off, size := sp.layout.Part(t.Rank())
		if perr := w.cfg.applyPolicy(pageRange(mem, mem[off:off+size])); perr != nil {
			err = fmt.Errorf("%w (rank %d)", perr, t.Rank())
		}
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
				switch {
				case errors.Is(rerr, shm.ErrNoSpace) && obj.Path == "":
					err = errorf(ErrNoMem, "%s on rank %d: reserving %d bytes of a memfd segment: out of memory (RAM, or the memory cgroup's limit)", call, t.Rank(), length)
				default:
					err = errorf(classOf(rerr), "%s on rank %d: %v", call, t.Rank(), rerr)
				}
			}
		}
	}
	err = agree(t, err)
	// Everyone has mapped (or failed): the name is no longer needed.
	if t.Rank() == 0 && obj != nil {
		obj.Unlink()
	}
	if err != nil {
		return fail(err)
	}
	// The descriptor stays open, in the registry of shared mappings: it is
	// how another process maps this memory for a window made by Create
	// over it (or a region of it attached to a dynamic window).
	if id, rerr := heap.Register(mem, obj); rerr == nil {
		w.regID = id
	} else {
		obj.Close()
	}
	w.mem, w.mapped = mem, true
	return nil
}

// testHookMapped, when set (by a test, in one rank process, before any
// window is made), is called with the segment's directory and name once this
// rank has mapped it and before it is unlinked: the C interop test opens the
// segment there to hand it to a C program. Nil in every real program.
var testHookMapped func(dir, name string)

// isNoMem reports a failure for lack of memory: a full shm directory, or a
// mapping the kernel refused (mmap's ENOMEM: address space, RLIMIT_AS,
// vm.max_map_count), both MPI_ERR_NO_MEM.
func isNoMem(err error) bool {
	// ENOSPC from creating the object: a directory out of inodes is full too.
	return errors.Is(err, shm.ErrNoSpace) || errors.Is(err, syscall.ENOMEM) || errors.Is(err, syscall.ENOSPC)
}

func classOf(err error) error {
	if c := classCode(err); c != 0 {
		return classes[c]
	}
	if isNoMem(err) {
		return ErrNoMem
	}
	return ErrOther
}

// mapLocal gives the goroutine ranks of a local world one heap segment.
func (w *Win) mapLocal(sp segmentSpec) error {
	// Heap memory: the policy is checked, not applied (the goroutine test
	// mode shares the Go heap's pages).
	if err := agree(w.t, w.cfg.applyPolicy(nil)); err != nil {
		return err
	}
	key := w.t.NextSeq()
	if w.rank == 0 {
		a := sp.layout.MapAlign()
		heap := make([]byte, sp.layout.Total+a)
		skip := (a - int64(raw.Addr(heap))%a) % a
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
	w.bindFlagFence(sync)
	w.stripes, err = atomics.NewStripes(sync[w.sl.Stripes:w.sl.Stripes+format.NumStripes*atomics.StripeLen], w.t.Abort(), w.t.Policy())
	if err != nil {
		panic("win: stripes: " + err.Error())
	}
	w.parts = make([]part, w.size)
	for r := range w.size {
		off, size := w.layout.Part(r)
		var data []byte // an empty part aliases nothing (Segment.Offset has its place)
		if size > 0 {
			data = w.mem[off : off+size : off+size]
		}
		w.parts[r] = part{data: data, amem: w.mem, off: off, dispUnit: units[r], maxDisp: uint(size / units[r])}
	}
	w.ep.setGate(gateNoLocks, w.cfg.noLocks)
}
