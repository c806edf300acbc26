package heap

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/shm"
)

// The shared heap. Small blocks come from arenas: memfds of ArenaSize
// bytes, reserved when made, carved first-fit with neighbours coalesced on
// free; blocks of BigBlock bytes or more get a memfd of their own, which
// FreeMem gives back to the kernel. Every block is a multiple of 64 bytes
// and starts on a cache line (or the alignment asked for), so blocks of two
// allocations never share a line. Memory is zeroed when handed out, as
// Go's make gives it.
const (
	ArenaSize = 1 << 20
	BigBlock  = 256 << 10
	grain     = 64
)

// ErrNotAllocated is FreeMem of memory that AllocMem did not return (or
// that was freed already); ErrInUse is FreeMem of a block a window still
// exposes. ErrNoSpace wraps shm's, for a reservation the kernel refused.
var (
	ErrNotAllocated = errors.New("heap: not a block from AllocMem")
	ErrInUse        = errors.New("heap: block still exposed by a window")
)

// block is one allocation: the user's bytes at addr, len bytes, inside the
// span [start, start+span) of its mapping (padding for alignment included).
type block struct {
	addr  uintptr
	len   int
	start int64
	span  int64
	users int // windows exposing it (Acquire)
	own   bool
	m     *mapping
}

// span is a free range of an arena.
type span struct{ off, n int64 }

type arena struct {
	m    *mapping
	free []span // sorted by offset, coalesced
}

var hp struct {
	arenas []*arena
	blocks map[uintptr]*block // by the user's address
}

// blockOf returns the block holding [a, a+n) in m, or nil. reg.mu is held.
func (m *mapping) blockOf(a uintptr, n int) *block {
	for _, b := range m.blocks {
		if a >= b.addr && a-b.addr+uintptr(n) <= uintptr(b.len) {
			return b
		}
	}
	return nil
}

// Alloc returns size zeroed bytes of the shared heap, whose first byte is
// aligned to align (a power of two; at least 64 is used), with length and
// capacity size. Size 0 gives nil. The reservation is made now, from this
// process: a full memory is an error wrapping shm.ErrNoSpace here, never a
// SIGBUS later.
func Alloc(size int, align int) ([]byte, error) {
	if size < 0 {
		return nil, fmt.Errorf("heap: size %d is negative", size)
	}
	if align <= 0 || align&(align-1) != 0 {
		return nil, fmt.Errorf("heap: alignment %d is not a power of two", align)
	}
	if size == 0 {
		return nil, nil
	}
	align = max(align, grain)
	n, ok := shm.AlignUp(int64(size), grain)
	if !ok {
		return nil, fmt.Errorf("heap: size %d is too large", size)
	}
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if hp.blocks == nil {
		hp.blocks = map[uintptr]*block{}
	}
	if n >= BigBlock || int64(align) > shm.PageSize {
		return allocOwn(size, n, int64(align))
	}
	for _, a := range hp.arenas {
		if b := a.carve(size, n, int64(align)); b != nil {
			return b, nil
		}
	}
	a, err := newArena()
	if err != nil {
		return nil, err
	}
	return a.carve(size, n, int64(align)), nil
}

// newMapped makes and maps a memfd of n bytes, reserves the pages of
// [off, off+length) and registers it. reg.mu is held.
func newMapped(label string, n, off, length int64) (*mapping, error) {
	obj, err := shm.NewMemfd(label, n, false)
	if err != nil {
		return nil, err
	}
	mem, err := obj.Map(n)
	if err == nil {
		err = obj.Populate("", mem, off, length)
		if err != nil {
			shm.Unmap(mem)
		}
	}
	if err != nil {
		obj.Close()
		return nil, err
	}
	ino, err := obj.Ino()
	if err != nil {
		shm.Unmap(mem)
		obj.Close()
		return nil, err
	}
	reg.next++
	m := &mapping{mem: mem, obj: obj, ino: ino, id: reg.next, blocks: map[uintptr]*block{}}
	insertLocked(m)
	return m, nil
}

// cgroupCheck refuses to reserve n more bytes of memfd pages past the
// memory cgroup's room: a charge there is an OOM kill, not an error.
func cgroupCheck(n int64) error {
	if room := shm.CgroupRoom(); room >= 0 && n > room {
		return fmt.Errorf("heap: %d bytes: the memory cgroup has room for %d more bytes (memory.max): %w", n, room, shm.ErrNoSpace)
	}
	return nil
}

func newArena() (*arena, error) {
	if err := cgroupCheck(ArenaSize); err != nil {
		return nil, err
	}
	m, err := newMapped("shmrun-heap", ArenaSize, 0, ArenaSize)
	if err != nil {
		return nil, err
	}
	a := &arena{m: m, free: []span{{0, ArenaSize}}}
	hp.arenas = append(hp.arenas, a)
	return a, nil
}

func allocOwn(size int, n, align int64) ([]byte, error) {
	pad := int64(0)
	if align > shm.PageSize {
		pad = align - shm.PageSize
	}
	total, ok := shm.AlignUp(n+pad, shm.PageSize)
	if !ok || n > math.MaxInt64-pad {
		return nil, fmt.Errorf("heap: size %d is too large: %w", size, shm.ErrNoSpace)
	}
	if err := cgroupCheck(n); err != nil {
		return nil, err
	}
	// The padding before an aligned block costs address space only: the
	// mapping's address decides where the block starts, so only the
	// pages from there are reserved (the mapping is page-aligned, so at
	// most align-PageSize bytes are skipped and never touched).
	m, err := newMapped("shmrun-heap-block", total, 0, 0)
	if err != nil {
		return nil, err
	}
	skip := (align - int64(m.addr())%align) % align
	if err := m.obj.Populate("", m.mem, skip, n); err != nil {
		unregisterLocked(m)
		return nil, err
	}
	b := &block{addr: m.addr() + uintptr(skip), len: size, start: 0, span: total, own: true, m: m}
	m.blocks[b.addr] = b
	hp.blocks[b.addr] = b
	return m.mem[skip : skip+int64(size) : skip+int64(size)], nil
}

// carve takes n bytes aligned to align from the arena's first free span
// that fits, or returns nil.
func (a *arena) carve(size int, n, align int64) []byte {
	base := int64(a.m.addr())
	for i, s := range a.free {
		skip := (align - (base+s.off)%align) % align
		if skip+n > s.n {
			continue
		}
		start := s.off
		used := skip + n
		if used == s.n {
			a.free = slices.Delete(a.free, i, i+1)
		} else {
			a.free[i] = span{s.off + used, s.n - used}
		}
		mem := a.m.mem[start+skip : start+skip+int64(size) : start+skip+int64(size)]
		clear(a.m.mem[start+skip : start+skip+n])
		b := &block{addr: raw.Addr(mem), len: size, start: start, span: used, m: a.m}
		a.m.blocks[b.addr] = b
		hp.blocks[b.addr] = b
		return mem
	}
	return nil
}

// Free gives back a block that Alloc returned: the whole slice, as
// returned (ErrNotAllocated otherwise, and for a second Free), and not
// exposed by any window (ErrInUse: nothing is freed). Freeing nil or an
// empty slice does nothing.
func Free(mem []byte) error {
	if len(mem) == 0 {
		return nil
	}
	reg.mu.Lock()
	defer reg.mu.Unlock()
	b := hp.blocks[raw.Addr(mem)]
	if b == nil {
		return fmt.Errorf("%w: %d bytes at %#x", ErrNotAllocated, len(mem), raw.Addr(mem))
	}
	if len(mem) != b.len {
		return fmt.Errorf("%w: %d bytes at %#x is part of a %d-byte block: free the slice AllocMem returned", ErrNotAllocated, len(mem), raw.Addr(mem), b.len)
	}
	if b.users > 0 {
		return fmt.Errorf("%w: the %d bytes at %#x are exposed by %d window(s) (Create, or Attach to a dynamic window): free the window or detach them first", ErrInUse, b.len, b.addr, b.users)
	}
	delete(hp.blocks, b.addr)
	delete(b.m.blocks, b.addr)
	if b.own {
		return unregisterLocked(b.m)
	}
	for _, a := range hp.arenas {
		if a.m == b.m {
			a.give(span{b.start, b.span})
			if len(hp.arenas) > 1 && len(a.free) == 1 && a.free[0].n == ArenaSize {
				hp.arenas = slices.DeleteFunc(hp.arenas, func(x *arena) bool { return x == a })
				return unregisterLocked(a.m)
			}
			return nil
		}
	}
	return fmt.Errorf("heap: block at %#x has no arena", b.addr)
}

// give returns s to the free list, merging it with its neighbours.
func (a *arena) give(s span) {
	i, _ := slices.BinarySearchFunc(a.free, s.off, func(x span, off int64) int { return cmp.Compare(x.off, off) })
	a.free = slices.Insert(a.free, i, s)
	if i+1 < len(a.free) && a.free[i].off+a.free[i].n == a.free[i+1].off {
		a.free[i].n += a.free[i+1].n
		a.free = slices.Delete(a.free, i+1, i+2)
	}
	if i > 0 && a.free[i-1].off+a.free[i-1].n == a.free[i].off {
		a.free[i-1].n += a.free[i].n
		a.free = slices.Delete(a.free, i, i+1)
	}
}

func unregisterLocked(m *mapping) error {
	i := slices.Index(reg.maps, m)
	if i >= 0 {
		reg.maps = slices.Delete(reg.maps, i, i+1)
	}
	m.gone = true
	if m.holds > 0 {
		return nil
	}
	return m.drop()
}

// Stats reports the heap's blocks in use and its mappings (for tests).
func Stats() (blocks, mappings int) {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	return len(hp.blocks), len(reg.maps)
}
