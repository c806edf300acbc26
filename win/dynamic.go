//go:build !mpi

package win

import (
	"cmp"
	"encoding/binary"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/heap"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/shm"
)

// CreateDynamic makes a window with no memory (MPI_Win_create_dynamic):
// collective over c. Each rank then exposes memory with Attach and
// withdraws it with Detach, at any time, without the others. An RMA call's
// displacement is an absolute address in the target, as comm.Address gives
// it (the program sends addresses to the origins itself, by a message or
// through another window); the disp unit is 1.
//
// An origin checks every call against the target's table of attached
// regions, which lives in the window's shared segment, with no help from
// the target: bytes not all inside one attached region are ErrRMARange.
// Regions from comm.AllocMem (or inside another window) are mapped by the
// origins and reached by load/store and lock-free atomics; other memory
// by process_vm_readv/writev, with accumulates under a lock, as for Create.
// A Detach waits for the RMA calls already inside the region to end, so a
// Detach racing a Put makes that Put an error or a write into memory the
// target still owns, never into memory the runtime has given to something
// else. An origin maps a target's shared object on first use and unmaps it
// once the target no longer lists it (checked when it maps another).
//
// Info keys as for Create, and shmrun_max_attach: the most regions this
// rank may have attached at once (default 1024; its table costs 64 bytes
// a region). SharedQuery is ErrRMAFlavor; Attr reports FlavorDynamic, no
// base, size 0 and disp unit 1.
func CreateDynamic(c *comm.Comm, info Info) (*Win, error) {
	max := format.DefaultMaxAttach
	if cfg, err := parseInfo(info); err == nil {
		max = cfg.maxAttach
	} // else allocate fails alike on every rank
	w, err := allocate(c, format.AttachTableLen(max), 1, info, FlavorDynamic)
	if err != nil {
		return nil, err
	}
	if err := w.makeDynamic(); err != nil {
		w.dispose()
		return nil, err
	}
	return w, nil
}

// accessSlots is the number of access words of each rank: goroutines of
// one rank making dynamic RMA calls at once take one each. The first
// pinSlots belong to the processors (the runtime's Ps) of the same ids:
// a Put or Get on the hot path pinned to processor i claims slot i by a
// plain store, where a claim by compare-and-swap (a locked instruction,
// and a drain of the store buffer) cost a dynamic Put + Flush 14 ns
// against 7.5 on a shared window. That store may still sit in the store
// buffer when the claimer reads the target's table sequence, which the
// compare-and-swap's full fence forbade; the ranks that read the slots
// (Detach's quiesce, prune) make up for it with membarrier's global
// expedited command (raw.HeavyFence) before they read, which puts a full
// barrier into every thread of every registered process: a claim made
// before that barrier is visible to their reads, and a claimer past it
// reads the sequence they saw changed. So the plain store is taken only
// by a process registered for the command (raw.LightFence). Every other
// claim (the slow path, processors past pinSlots, an unregistered
// process) takes the slots from pinSlots on by compare-and-swap.
const (
	accessSlots = format.Line / 8
	pinSlots    = accessSlots / 2
	// pinMax is the largest copy made pinned: a pinned goroutine holds up
	// the collector's stop-the-world, so large copies claim by
	// compare-and-swap, whose cost they hide.
	pinMax = 4096
)

type dynamic struct {
	tables [][]byte // each rank's attach table, in the window's segment
	maxes  []int    // entries each table holds
	pids   []int
	cma    bool // this process may read and write every other's memory
	local  bool // goroutine ranks: one process

	mu  sync.Mutex // Attach, Detach (held while Detach waits for accesses)
	own []attached // this rank's regions, sorted by base: its table's truth
	seq uint64     // this rank's table edits so far (its sequence word is 2·seq)
	// mine is this rank's table as its last edit wrote it: its RMA calls
	// to itself look up regions there, not in the shared copy, whose
	// addresses they would otherwise dereference on a peer's word.
	mine atomic.Pointer[ownTable]
	// mapMu guards new mappings, prune and stale. It is never held while
	// waiting for another rank: an access that holds a slot may take it.
	mapMu sync.Mutex
	abort *uint32 // the job's abort word

	cache []atomic.Pointer[[]peerMap] // per target: its objects mapped here
	stale []staleMap                  // dropped from cache, not yet unmapped
	hot   []atomic.Pointer[hotRegion] // per target: the last mapped region reached
	seqs  []*uint64                   // per target: its table's sequence word
	slots [accessSlots]*uint64        // this rank's access slots
	plain bool                        // this process is registered for membarrier: hot claims may be plain stores (pinSlots)
}

type attached struct {
	base uintptr
	n    int
	id   uint64 // the object's id in the registry, 0 for private memory
	e    entry  // its row of the table
	hold *heap.Hold
	pin  *pinned
}

// ownTable is a rank's table rows and the sequence word's value after the
// edit that wrote them.
type ownTable struct {
	seq  uint64
	rows []entry
}

// hotRegion is a mapped region of a target as the last lookup found it,
// valid while the target's table sequence is still seq.
type hotRegion struct {
	seq       uint64
	base, end uint64 // addresses in the target
	data      []byte // its bytes in this process
}

type peerMap struct {
	id  uint64
	mem []byte
	own bool // the owner's own mapping (the heap registry's): never unmapped here
}

// staleMap is a mapping dropped from a target's cache, to unmap once no
// access of this rank to that target may still use it.
type staleMap struct {
	target int
	mem    []byte
}

func (w *Win) makeDynamic() error {
	d := &dynamic{local: w.t.Local(), abort: w.t.Abort(), tables: make([][]byte, w.size), maxes: make([]int, w.size), pids: make([]int, w.size),
		cache: make([]atomic.Pointer[[]peerMap], w.size), hot: make([]atomic.Pointer[hotRegion], w.size)}
	for r := range w.size {
		d.tables[r] = w.parts[r].data
		d.maxes[r] = int((int64(len(d.tables[r])) - format.AttachEntries) / format.AttachEntryLen)
		w.parts[r] = part{dispUnit: 1} // nothing is reachable but through the tables
	}
	for r := range w.size {
		d.seqs = append(d.seqs, d.word(r, format.AttachSeq))
	}
	for i := range accessSlots {
		d.slots[i] = d.word(w.rank, format.AttachAccess+8*int64(i))
	}
	d.plain = raw.RegisterLightFence() // the hot path's plain claims need it
	w.dyn = d
	// Can every process read every other's memory? Each publishes its pid
	// and a pinned word; each reads all the others'.
	word := []uint64{uint64(os.Getpid())}
	var pin runtime.Pinner
	pin.Pin(&word[0])
	defer pin.Unpin()
	slots, err := exchange(w.t, nil, func(b []byte) {
		binary.LittleEndian.PutUint32(b[cPID:], uint32(os.Getpid()))
		binary.LittleEndian.PutUint64(b[cAddr:], uint64(raw.Addr(raw.Bytes(word))))
	})
	if err != nil {
		return err
	}
	failed := false
	for r := range w.size {
		s := slots[r*format.SlotLen:]
		d.pids[r] = int(binary.LittleEndian.Uint32(s[cPID:]))
		if r == w.rank || d.local {
			continue
		}
		var got [8]byte
		if shm.ReadProcess(d.pids[r], got[:], binary.LittleEndian.Uint64(s[cAddr:])) != nil || binary.LittleEndian.Uint64(got[:]) != uint64(d.pids[r]) {
			failed = true
		}
	}
	first, err := w.t.Agree(failed)
	if err != nil {
		return errorf(ErrAborted, "CreateDynamic on rank %d: %v", w.rank, err)
	}
	runtime.KeepAlive(word)
	d.cma = first < 0 || d.local
	return nil
}

func (d *dynamic) word(r int, off int64) *uint64 { return raw.Uint64At(d.tables[r], off) }

func (d *dynamic) entryWord(r, i int, field int64) *uint64 {
	return raw.Uint64At(d.tables[r], format.AttachEntries+int64(i)*format.AttachEntryLen+field)
}

// enter claims one of this rank's compare-and-swap access slots for
// target (a full fence: the table is read after it).
func (d *dynamic) enter(target int) (*uint64, uint64) {
	s := d.slots[pinSlots] // the common case: one goroutine in RMA calls
	if v := atomic.LoadUint64(s); uint32(v) == 0 {
		nv := (v>>32+1)<<32 | uint64(target+1)
		if atomic.CompareAndSwapUint64(s, v, nv) {
			return s, nv
		}
	}
	return d.enterSlow(target)
}

func (d *dynamic) enterSlow(target int) (*uint64, uint64) {
	for {
		if atomic.LoadUint32(d.abort) != 0 {
			return nil, 0
		}
		for _, s := range d.slots[pinSlots:] {
			v := atomic.LoadUint64(s)
			if uint32(v) != 0 {
				continue
			}
			nv := (v>>32+1)<<32 | uint64(target+1)
			if atomic.CompareAndSwapUint64(s, v, nv) {
				return s, nv
			}
		}
		runtime.Gosched() // more goroutines in dynamic RMA calls than slots
	}
}

// errNoSlot is resolve's error when enter gave up: the job is aborting.
func errNoSlot(w *Win, call string) error {
	return errorf(ErrAborted, "%s on rank %d: job aborted while waiting for an access slot", call, w.rank)
}

func (d *dynamic) leave(wh *where) {
	leaveSlot(wh.slot, wh.sv)
	wh.slot = nil
}

// entry is one row of an attach table.
type entry struct {
	base, n, mapID, fileOff, fileSize, ino uint64
	fd                                     int
}

// lookup finds the region of target's table holding [addr, addr+n) under
// the table's sequence lock.
// abort is the job's abort word: a table left odd by an owner that died
// mid-edit ends the wait when the job aborts.
func (d *dynamic) lookup(abort *uint32, target int, addr uint64, n int) (entry, bool, uint64, error) {
	seq, count := d.word(target, format.AttachSeq), d.word(target, format.AttachCount)
	for spins := 0; ; spins++ {
		s1 := atomic.LoadUint64(seq)
		if s1&1 != 0 {
			if spins%64 == 63 {
				if atomic.LoadUint32(abort) != 0 {
					return entry{}, false, 0, errorf(ErrAborted, "job aborted while rank %d's attach table was being edited", target)
				}
				runtime.Gosched()
			}
			continue
		}
		cnt := int(min(atomic.LoadUint64(count), uint64(d.maxes[target])))
		// The last region whose base is at most addr.
		lo, hi := 0, cnt
		for lo < hi {
			mid := (lo + hi) / 2
			if atomic.LoadUint64(d.entryWord(target, mid, format.AttachBase)) <= addr {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		i := lo - 1
		var e entry
		found := false
		if i >= 0 {
			e.base = atomic.LoadUint64(d.entryWord(target, i, format.AttachBase))
			e.n = atomic.LoadUint64(d.entryWord(target, i, format.AttachLen))
			if addr-e.base <= e.n && uint64(n) <= e.n-(addr-e.base) {
				found = true
				e.mapID = atomic.LoadUint64(d.entryWord(target, i, format.AttachMap))
				e.fileOff = atomic.LoadUint64(d.entryWord(target, i, format.AttachFileOff))
				e.fileSize = atomic.LoadUint64(d.entryWord(target, i, format.AttachFileSize))
				e.ino = atomic.LoadUint64(d.entryWord(target, i, format.AttachIno))
				e.fd = int(uint32(atomic.LoadUint64(d.entryWord(target, i, format.AttachFD))))
			}
		}
		if atomic.LoadUint64(seq) == s1 {
			return e, found, s1, nil
		}
	}
}

// lookupOwn is lookup in this rank's own table, as its last edit wrote it
// (d.mine; the access slot is held, so a Detach's edit is seen, or waits
// for this access, as with the shared table).
func (d *dynamic) lookupOwn(addr uint64, n int) (entry, bool, uint64) {
	t := d.mine.Load()
	if t == nil {
		return entry{}, false, 0
	}
	// The last region whose base is at most addr.
	i, _ := slices.BinarySearchFunc(t.rows, addr, func(e entry, a uint64) int { return cmp.Compare(e.base, a+1) })
	if i == 0 {
		return entry{}, false, t.seq
	}
	e := t.rows[i-1]
	return e, addr-e.base <= e.n && uint64(n) <= e.n-(addr-e.base), t.seq
}

// resolve is the dynamic window's part of resolve: addr is the
// displacement, an address in target.
func (d *dynamic) resolve(w *Win, call string, target int, addr uint64, n int) (where, error) {
	slot, sv := d.enter(target)
	if slot == nil {
		return where{}, errNoSlot(w, call)
	}
	wh := where{target: target, slot: slot, sv: sv}
	fail := func(err error) (where, error) {
		d.leave(&wh)
		return where{}, err
	}
	var e entry
	var found bool
	var seq uint64
	var err error
	if target == w.rank && !d.local {
		e, found, seq = d.lookupOwn(addr, n)
	} else {
		e, found, seq, err = d.lookup(w.t.Abort(), target, addr, n)
	}
	if err != nil {
		return fail(err)
	}
	if !found {
		return fail(errorf(ErrRMARange, "%s on rank %d to rank %d: address %#x + %d bytes is not inside a region rank %d has attached", call, w.rank, target, addr, n, target))
	}
	if e.mapID == 0 || d.local {
		wh.priv = true
		if d.local || target == w.rank {
			wh.data = raw.At(uintptr(addr), n) // this process's own memory, pinned while attached
		} else {
			wh.pid, wh.addr = d.pids[target], addr
		}
		return wh, nil
	}
	m, err := d.mapping(w, target, e, slot)
	if err != nil {
		return fail(errorf(ErrOther, "%s on rank %d to rank %d: mapping the region at %#x: %v", call, w.rank, target, e.base, err))
	}
	o := e.fileOff + (addr - e.base)
	if e.fileOff > e.fileSize || e.n > e.fileSize-e.fileOff || uint64(len(m)) != e.fileSize {
		return fail(errorf(ErrWin, "%s on rank %d to rank %d: attach table entry (%d bytes at %d of a %d-byte object) is corrupt", call, w.rank, target, e.n, e.fileOff, e.fileSize))
	}
	wh.data, wh.amem, wh.off = m[o:o+uint64(n)], m, int64(o)
	d.hot[target].Store(&hotRegion{seq: seq, base: e.base, end: e.base + e.n, data: m[e.fileOff : e.fileOff+e.n : e.fileOff+e.n]})
	return wh, nil
}

// copyPinned is the fast path of Put (put) and Get of up to pinMax bytes
// in a process registered for membarrier (d.plain): len(b) bytes at addr
// of target in the region the last lookup found there, copied from or to
// b while this goroutine holds its processor's access slot, claimed by a
// plain store (pinSlots). false: nothing done (not the hot region, the
// table changed, no slot of this processor): the caller goes on to
// hotData. The caller must not be observed (shmrun --check): its hooks
// may lock, which a pinned goroutine must not.
func (d *dynamic) copyPinned(target int, addr uint64, b []byte, put bool) bool {
	h := d.hot[target].Load()
	n := uint64(len(b))
	if !d.plain || n > pinMax || h == nil || addr < h.base || addr > h.end || n > h.end-addr {
		return false
	}
	p := raw.ProcPin()
	if p >= pinSlots {
		raw.ProcUnpin()
		return false
	}
	slot := d.slots[p]
	sv := (atomic.LoadUint64(slot)>>32+1)<<32 | uint64(target+1)
	atomics.StoreRelease64(slot, sv) // slot p is this processor's alone while pinned
	ok := atomic.LoadUint64(d.seqs[target]) == h.seq
	if ok {
		t := h.data[addr-h.base:][:n]
		switch {
		case n == 8 && put: // one move instead of a memmove call
			binary.LittleEndian.PutUint64(t, binary.LittleEndian.Uint64(b))
		case n == 8:
			binary.LittleEndian.PutUint64(b, binary.LittleEndian.Uint64(t))
		case put:
			shm.Copy(t, b)
		default:
			shm.Copy(b, t)
		}
	}
	leaveSlot(slot, sv)
	raw.ProcUnpin()
	return ok
}

// hotData is the fast path of Put and Get that copyPinned did not take: n
// bytes at addr of target in the region the last lookup found there, if
// the table has not changed since. On success the access slot is held:
// the caller copies, then calls leaveSlot.
func (d *dynamic) hotData(target int, addr uint64, n int) ([]byte, *uint64, uint64, bool) {
	h := d.hot[target].Load()
	if h == nil || addr < h.base || addr > h.end || uint64(n) > h.end-addr {
		return nil, nil, 0, false
	}
	// d.enter's common case, spelled out: a call costs a nanosecond here.
	slot := d.slots[pinSlots]
	v := atomic.LoadUint64(slot)
	sv := (v>>32+1)<<32 | uint64(target+1)
	if uint32(v) != 0 || !atomic.CompareAndSwapUint64(slot, v, sv) {
		if slot, sv = d.enterSlow(target); slot == nil {
			return nil, nil, 0, false // aborting: the slow path says so
		}
	}
	if atomic.LoadUint64(d.seqs[target]) != h.seq {
		leaveSlot(slot, sv)
		return nil, nil, 0, false
	}
	o := addr - h.base
	return h.data[o : o+uint64(n)], slot, sv, true
}

// leaveSlot ends an access: a release store (the copy is done before it;
// a Detach waiting on the slot needs no more).
func leaveSlot(slot *uint64, sv uint64) { atomics.StoreRelease64(slot, sv&^0xFFFFFFFF) }

// readSlotsFence is what a reader of access slots does before it reads
// them: membarrier's barrier in every registered process (pinSlots),
// reporting whether it was made. The kernel offers it wherever a process
// could register; where the command failed anyway, a plain claim may not
// be visible yet.
func readSlotsFence() bool { return raw.HeavyFence() }

// mapping returns this process's mapping of the shared object an entry of
// target's table names, mapping it the first time.
func (d *dynamic) mapping(w *Win, target int, e entry, slot *uint64) ([]byte, error) {
	if p := d.cache[target].Load(); p != nil {
		for _, m := range *p {
			if m.id == e.mapID {
				return m.mem, nil
			}
		}
	}
	d.mapMu.Lock()
	defer d.mapMu.Unlock()
	var old []peerMap
	if p := d.cache[target].Load(); p != nil {
		old = *p
		for _, m := range old {
			if m.id == e.mapID {
				return m.mem, nil
			}
		}
	}
	// Mappings of objects the target no longer lists go first: a target
	// that attaches and frees large blocks must not make this process
	// keep their pages.
	old = d.prune(target, old, slot)
	m, err := mapPeer(d.pids[target], e.fd, e.ino, int64(e.fileSize))
	if err != nil {
		return nil, err
	}
	next := append(slices.Clone(old), peerMap{id: e.mapID, mem: m})
	d.cache[target].Store(&next)
	return m, nil
}

// prune drops from target's cache (old) the mappings of objects its table
// no longer names, and unmaps them once no other goroutine of this rank
// may be using them; mine is the caller's own access slot. d.mapMu is held.
//
// Why it is safe: a goroutine uses a mapping only between claiming an
// access slot naming target and releasing it, and only one it found
// through the cache after reading the table (or through the hot region,
// whose sequence then still matches). A mapping dropped here is named by
// no entry of the table as read now; a goroutine that claims its slot
// after the check of the slots below reads that table or a later one, so
// it cannot find the mapping; one that claimed it before is seen, and the
// unmapping waits for a later prune (or Free). "Before" includes a claim by
// a plain store still in its thread's store buffer: the membarrier barrier
// ahead of the check (readSlotsFence) drains it, and a claim past that
// barrier reads the table's sequence as this prune saw it or later.
func (d *dynamic) prune(target int, old []peerMap, mine *uint64) []peerMap {
	if len(old) > 0 {
		named, seq, ok := d.tableMaps(target)
		if ok {
			var keep, drop []peerMap
			for _, m := range old {
				if slices.Contains(named, m.id) {
					keep = append(keep, m)
				} else {
					drop = append(drop, m)
				}
			}
			if len(drop) > 0 {
				d.cache[target].Store(&keep)
				d.hot[target].Store(nil)
				// The table must not have moved since it was read: a
				// goroutine that found a dropped object in a newer table
				// may have taken the old cache and be about to publish a
				// hot region into it. Then keep everything for now.
				if atomic.LoadUint64(d.seqs[target]) != seq {
					d.cache[target].Store(&old)
					return old
				}
				for _, m := range drop {
					if !m.own { // the owner's own mappings are the registry's
						d.stale = append(d.stale, staleMap{target: target, mem: m.mem})
					}
				}
				old = keep
			}
		}
	}
	if len(d.stale) > 0 && !readSlotsFence() {
		return old // a plain claim may be unseen: unmap at a later prune
	}
	busy := map[int]bool{}
	for _, s := range d.slots {
		if v := atomic.LoadUint64(s); s != mine && uint32(v) != 0 {
			busy[int(uint32(v))-1] = true
		}
	}
	d.stale = slices.DeleteFunc(d.stale, func(m staleMap) bool {
		if busy[m.target] {
			return false
		}
		_ = shm.Unmap(m.mem)
		return true
	})
	return old
}

// tableMaps returns the object ids target's table names and the sequence
// it read them at, under the sequence lock; false if the job aborted
// meanwhile.
func (d *dynamic) tableMaps(target int) ([]uint64, uint64, bool) {
	seq, count := d.seqs[target], d.word(target, format.AttachCount)
	for spins := 0; ; spins++ {
		s1 := atomic.LoadUint64(seq)
		if s1&1 != 0 {
			if spins%64 == 63 {
				if atomic.LoadUint32(d.abort) != 0 {
					return nil, 0, false
				}
				runtime.Gosched()
			}
			continue
		}
		cnt := int(min(atomic.LoadUint64(count), uint64(d.maxes[target])))
		ids := make([]uint64, 0, cnt)
		for i := range cnt {
			ids = append(ids, atomic.LoadUint64(d.entryWord(target, i, format.AttachMap)))
		}
		if atomic.LoadUint64(seq) == s1 {
			return ids, s1, true
		}
	}
}

// Attach exposes mem in the dynamic window (MPI_Win_attach): local, it
// needs nothing from the other ranks, which reach the region at the
// addresses comm.Address gives inside it as soon as Attach returns. The
// region must not overlap one attached already, and the table has room for
// shmrun_max_attach regions (ErrRMAAttach otherwise). Memory from
// comm.AllocMem (or inside another window) is mapped by the origins; other
// memory is reached by system calls, and where the kernel forbids that
// (see Create) Attach of it is ErrRMAAttach naming comm.AllocMem. The
// memory stays pinned, and a block of AllocMem cannot be freed, until
// Detach or Free. Attaching an empty slice does nothing. On a window of
// another flavor: ErrRMAFlavor.
func (w *Win) Attach(mem []byte) error {
	d, err := w.dynamicOf("Attach")
	if err != nil || len(mem) == 0 {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	base, n := raw.Addr(mem), len(mem)
	i, _ := slices.BinarySearchFunc(d.own, base, func(a attached, b uintptr) int { return cmp.Compare(a.base, b) })
	for _, j := range []int{i - 1, i} {
		if j >= 0 && j < len(d.own) && d.own[j].base < base+uintptr(n) && base < d.own[j].base+uintptr(d.own[j].n) {
			return errorf(ErrRMAAttach, "Attach on rank %d: %d bytes at %#x overlap the %d bytes at %#x attached already", w.rank, n, base, d.own[j].n, d.own[j].base)
		}
	}
	if len(d.own) >= d.maxes[w.rank] {
		return errorf(ErrRMAAttach, "Attach on rank %d: %d regions are attached, the most this window takes (info shmrun_max_attach)", w.rank, len(d.own))
	}
	a := attached{base: base, n: n}
	var e entry
	e.base, e.n = uint64(base), uint64(n)
	loc, h, shared := heap.Acquire(mem) // FreeMem refuses it until Detach
	switch {
	case shared && !d.local:
		a.hold, a.id = h, loc.ID
		e.mapID, e.fd, e.ino, e.fileOff, e.fileSize = loc.ID, loc.FD, loc.Ino, uint64(loc.Off), uint64(loc.Size)
		// This rank reaches its own shared regions through its own mapping.
		d.addOwnMap(w.rank, loc)
	case shared:
		a.hold = h
	case !d.cma:
		return errorf(ErrRMAAttach, "Attach on rank %d: %d bytes at %#x are private memory (not from comm.AllocMem), and the kernel forbids the other ranks to reach this process's memory here (Yama ptrace_scope, or shmrun --no-single-copy): allocate the region with comm.AllocMem", w.rank, n, base)
	}
	a.pin, a.e = pin(mem), e
	d.own = slices.Insert(d.own, i, a)
	d.edit(w.rank, i)
	return nil
}

// addOwnMap puts this process's mapping of an object in its own cache.
func (d *dynamic) addOwnMap(me int, loc heap.Loc) {
	d.mapMu.Lock()
	defer d.mapMu.Unlock()
	var old []peerMap
	if p := d.cache[me].Load(); p != nil {
		old = *p
		for _, m := range old {
			if m.id == loc.ID {
				return
			}
		}
	}
	next := append(slices.Clone(old), peerMap{id: loc.ID, mem: loc.Mem, own: true})
	d.cache[me].Store(&next)
}

// dropOwnMap removes this process's own object id from its cache. A
// mapping of it made through the registry's descriptor rather than
// addOwnMap (a lookup of this rank's own region that missed the cache
// between Attach's addOwnMap and its table edit, while another goroutine
// pruned the entry the table did not list yet) is this process's to
// unmap: it goes to stale, as prune's do.
func (d *dynamic) dropOwnMap(me int, id uint64) {
	d.mapMu.Lock()
	defer d.mapMu.Unlock()
	if p := d.cache[me].Load(); p != nil {
		next := slices.DeleteFunc(slices.Clone(*p), func(m peerMap) bool {
			if m.id == id && !m.own {
				d.stale = append(d.stale, staleMap{target: me, mem: m.mem})
			}
			return m.id == id
		})
		d.cache[me].Store(&next)
	}
}

// edit rewrites this rank's table from d.own, its rows from index from on
// and its count, under the table's sequence lock (d.mu is held). The table
// lives in the window's segment, which every process of the job can write;
// the owner writes it from its own state and never reads it back, so a
// count or sequence word gone bad there is overwritten at the next edit,
// never trusted (a count past the table would index outside it).
func (d *dynamic) edit(me, from int) {
	seq := d.word(me, format.AttachSeq)
	d.seq++
	atomic.StoreUint64(seq, 2*d.seq-1) // odd: readers retry
	for j := from; j < len(d.own); j++ {
		d.putEntry(me, j, d.own[j].e)
	}
	atomic.StoreUint64(d.word(me, format.AttachCount), uint64(len(d.own)))
	atomic.StoreUint64(seq, 2*d.seq)
	t := &ownTable{seq: 2 * d.seq, rows: make([]entry, len(d.own))}
	for j, a := range d.own {
		t.rows[j] = a.e
	}
	d.mine.Store(t) // before a Detach's quiesce, as the shared table
}

func (d *dynamic) putEntry(me, i int, e entry) {
	for _, f := range []struct {
		off int64
		v   uint64
	}{{format.AttachBase, e.base}, {format.AttachLen, e.n}, {format.AttachMap, e.mapID}, {format.AttachFileOff, e.fileOff},
		{format.AttachFileSize, e.fileSize}, {format.AttachIno, e.ino}, {format.AttachFD, uint64(uint32(e.fd))}} {
		atomic.StoreUint64(d.entryWord(me, i, f.off), f.v)
	}
}

// Detach withdraws the region that starts at mem's first byte (MPI_Win_detach;
// only the address counts, as in MPI). Local: once the table no longer
// lists the region, it waits for the RMA calls of other ranks already
// inside it to end (they are short: one copy or atomic each), so that when
// it returns nothing reaches the region any more and the memory may be
// freed or reused. No region attached there: ErrRMAAttach. Detaching an
// empty slice does nothing. On a window of another flavor: ErrRMAFlavor.
func (w *Win) Detach(mem []byte) error {
	d, err := w.dynamicOf("Detach")
	if err != nil || len(mem) == 0 {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	base := raw.Addr(mem)
	i, found := slices.BinarySearchFunc(d.own, base, func(a attached, b uintptr) int { return cmp.Compare(a.base, b) })
	if !found {
		return errorf(ErrRMAAttach, "Detach on rank %d: no region is attached at %#x", w.rank, base)
	}
	a := d.own[i]
	d.own = slices.Delete(d.own, i, i+1)
	d.edit(w.rank, i)
	qerr := d.quiesce(w)
	if a.id != 0 && !slices.ContainsFunc(d.own, func(b attached) bool { return b.id == a.id }) {
		d.dropOwnMap(w.rank, a.id) // no access can use it any more
	}
	a.pin.unpin()
	if err := a.hold.Release(); err != nil && qerr == nil {
		qerr = errorf(ErrOther, "Detach on rank %d: %v", w.rank, err)
	}
	return qerr
}

// quiesce waits until no rank is still inside an access to this rank that
// began before the table's last edit: each access slot naming this rank is
// waited on until it changes.
func (d *dynamic) quiesce(w *Win) error {
	me := uint32(w.rank + 1)
	if !readSlotsFence() {
		// Not expected once the kernel offered the command (only ENOMEM
		// or a seccomp filter could refuse it now): a heuristic, not a
		// guarantee, that a plain claim still in a store buffer drains
		// meanwhile (it takes well under a microsecond).
		time.Sleep(10 * time.Millisecond)
	}
	for r := range w.size {
		for i := range accessSlots {
			s := d.word(r, format.AttachAccess+8*int64(i))
			v := atomic.LoadUint64(s)
			for spins := 0; uint32(v) == me && atomic.LoadUint64(s) == v; spins++ {
				if spins%64 == 63 {
					if atomic.LoadUint32(w.t.Abort()) != 0 {
						return errorf(ErrAborted, "Detach on rank %d: job aborted while rank %d was inside an access", w.rank, r)
					}
					runtime.Gosched()
				}
			}
		}
	}
	return nil
}

func (w *Win) dynamicOf(call string) (*dynamic, error) {
	if err := w.live(call); err != nil {
		return nil, err
	}
	if w.dyn == nil {
		return nil, errorf(ErrRMAFlavor, "%s on rank %d: the window is %v; only a window made by CreateDynamic takes %s", call, w.rank, w.flavor, call)
	}
	return w.dyn, nil
}

// release lets go of every region still attached and every mapping.
func (d *dynamic) release() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.mapMu.Lock()
	defer d.mapMu.Unlock()
	var err error
	for _, a := range d.own {
		a.pin.unpin()
		if herr := a.hold.Release(); err == nil {
			err = herr
		}
	}
	for i := range d.cache {
		if p := d.cache[i].Load(); p != nil {
			for _, m := range *p {
				if !m.own {
					d.stale = append(d.stale, staleMap{target: i, mem: m.mem})
				}
			}
		}
		d.cache[i].Store(nil)
		d.hot[i].Store(nil)
	}
	for _, m := range d.stale {
		if uerr := shm.Unmap(m.mem); err == nil {
			err = uerr
		}
	}
	d.own, d.stale = nil, nil
	return err
}
