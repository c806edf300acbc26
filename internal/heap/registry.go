// Package heap knows which of this process's memory other ranks can map:
// the registry of shared mappings (every window segment and every arena of
// the shared heap, each with the open descriptor through which a sibling
// process maps it by /proc/<pid>/fd), and the shared heap itself, the
// allocator behind comm.AllocMem.
//
// Mappings are a property of the process, not of a communicator, so the
// registry is the one piece of package-level state in the runtime. A
// mapping that windows still use outlives its owner's Unregister: it is
// unmapped when the last holder lets it go, so a window made by Create over
// another window's memory never points at unmapped pages.
package heap

import (
	"cmp"
	"fmt"
	"slices"
	"sync"

	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/shm"
)

// Loc is where bytes of this process are in a shared file: what another
// process needs to map them.
type Loc struct {
	ID   uint64 // the mapping's number in this process's registry
	FD   int    // its file's descriptor in this process
	Ino  uint64 // the file's inode, to check a descriptor opened elsewhere
	Size int64  // the file's size: it is mapped whole, from offset 0
	Off  int64  // offset of the located bytes in the file
	Mem  []byte // this process's mapping of the whole file
}

type mapping struct {
	mem    []byte
	obj    *shm.Object
	ino    uint64
	id     uint64
	holds  int  // windows using the mapping
	gone   bool // the owner unregistered it: unmap at the last Release
	blocks map[uintptr]*block
}

func (m *mapping) addr() uintptr { return raw.Addr(m.mem) }

var reg struct {
	mu   sync.Mutex
	maps []*mapping // sorted by address; never overlapping
	next uint64
}

// Register adds mem, a whole-file shared mapping of obj, to the registry
// and takes obj: its descriptor stays open until the mapping is unmapped.
// It returns the mapping's id for Unregister.
func Register(mem []byte, obj *shm.Object) (uint64, error) {
	ino, err := obj.Ino()
	if err != nil {
		return 0, err
	}
	reg.mu.Lock()
	defer reg.mu.Unlock()
	reg.next++
	m := &mapping{mem: mem, obj: obj, ino: ino, id: reg.next}
	insertLocked(m)
	return m.id, nil
}

// insertLocked adds m to the registry, kept sorted by address. reg.mu is held.
func insertLocked(m *mapping) {
	i, _ := slices.BinarySearchFunc(reg.maps, m.addr(), func(x *mapping, a uintptr) int { return cmp.Compare(x.addr(), a) })
	reg.maps = slices.Insert(reg.maps, i, m)
}

// Unregister says the owner is done with mapping id: it leaves the registry
// (Locate no longer finds it) and is unmapped and closed now, or at the
// last Release if windows still hold it.
func Unregister(id uint64) error {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	i := slices.IndexFunc(reg.maps, func(m *mapping) bool { return m.id == id })
	if i < 0 {
		return fmt.Errorf("heap: mapping %d is not registered", id)
	}
	return unregisterLocked(reg.maps[i])
}

func (m *mapping) drop() error {
	err := shm.Unmap(m.mem)
	if cerr := m.obj.Close(); err == nil {
		err = cerr
	}
	m.mem = nil
	return err
}

// find returns the registered mapping that holds all of b, or nil.
// reg.mu is held.
func find(b []byte) *mapping {
	a := raw.Addr(b)
	i, found := slices.BinarySearchFunc(reg.maps, a, func(x *mapping, a uintptr) int { return cmp.Compare(x.addr(), a) })
	if !found {
		i-- // the last mapping starting below a
	}
	if i < 0 {
		return nil
	}
	m := reg.maps[i]
	if a < m.addr() || a-m.addr()+uintptr(len(b)) > uintptr(len(m.mem)) {
		return nil
	}
	return m
}

// Hold is a window's claim on shared memory it exposes: while held, the
// mapping stays mapped and an AllocMem block under the memory cannot be
// freed. Release gives it back; it is safe to call once.
type Hold struct {
	m   *mapping
	blk *block
}

// Acquire locates the nonempty b in a registered mapping and holds it. ok
// is false when b is not all inside one (private memory).
func Acquire(b []byte) (Loc, *Hold, bool) {
	if len(b) == 0 {
		return Loc{}, nil, false
	}
	reg.mu.Lock()
	defer reg.mu.Unlock()
	m := find(b)
	if m == nil {
		return Loc{}, nil, false
	}
	h := &Hold{m: m}
	if blk := m.blockOf(raw.Addr(b), len(b)); blk != nil {
		blk.users++
		h.blk = blk
	}
	m.holds++
	off := int64(raw.Addr(b) - m.addr())
	return Loc{ID: m.id, FD: m.obj.FD(), Ino: m.ino, Size: int64(len(m.mem)), Off: off, Mem: m.mem}, h, true
}

// Release gives back a Hold; a nil or released Hold is a no-op.
func (h *Hold) Release() error {
	if h == nil {
		return nil
	}
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if h.m == nil {
		return nil
	}
	m := h.m
	h.m = nil
	if h.blk != nil {
		h.blk.users--
		h.blk = nil
	}
	m.holds--
	if m.holds == 0 && m.gone {
		return m.drop()
	}
	return nil
}
