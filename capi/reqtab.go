//go:build !mpi && cgo

package main

import (
	"sync"
	"sync/atomic"
)

// Request handles. A message-rate loop makes and frees one per message, so
// they do not live in tab's maps (a write lock, a map insert and a delete
// and an allocation each) but in slots of a table that never moves: making
// a handle takes a slot from a queue under a short lock, looking one up
// takes no lock, and freeing one zeroes its slot and queues it again.
//
// A slot handle is reqSpace | gen<<reqGenShift | idx<<4, which fits the
// int of MPI_Request_toint: idx is the slot, gen counts the slot's uses
// (mod 1<<reqGenBits), so that a freed handle is an invalid request, not
// the request that reuses its slot. Freed slots are reused in the order
// they were freed, and only once reqQuarantine others wait behind them:
// a handle freed and used again within reqQuarantine<<reqGenBits later
// requests (a quarter of a million) is always found invalid. When every
// slot is in use, requests get handles from tab.reqs, as other objects do.
const (
	reqSpace      = 1 << 30 // in every slot handle
	reqIdxBits    = 16
	reqGenBits    = 10
	reqGenShift   = 4 + reqIdxBits
	reqChunkLen   = 256
	reqQuarantine = 256
	reqSlots      = 1 << reqIdxBits
	reqGenMask    = 1<<reqGenBits - 1
)

// A reqSlot is one request's place: state is gen<<1, plus 1 while the
// slot holds a request of that generation. Its x is written before state
// says so (a store-release) and read after state is checked.
type reqSlot struct {
	state atomic.Uint32
	x     reqH
}

var reqTab struct {
	chunks [reqSlots / reqChunkLen]atomic.Pointer[[reqChunkLen]reqSlot]
	mu     sync.Mutex
	free   []uint32 // freed slots, oldest first, from head on
	head   int
	made   int // slots made: [0, made) exist
}

// reqSlotAt is slot idx, or nil if it was never made.
func reqSlotAt(idx uintptr) *reqSlot {
	c := reqTab.chunks[idx/reqChunkLen].Load()
	if c == nil {
		return nil
	}
	return &c[idx%reqChunkLen]
}

// takeSlot is a slot for a new request: the oldest freed one if enough
// others wait behind it, a new one while there is room, else (every slot
// in use) -1.
func takeSlot() int {
	t := &reqTab
	t.mu.Lock()
	defer t.mu.Unlock()
	waiting := len(t.free) - t.head
	if waiting > reqQuarantine || waiting > 0 && t.made == reqSlots {
		idx := t.free[t.head]
		t.head++
		if t.head >= 1024 && t.head*2 >= len(t.free) {
			t.free = t.free[:copy(t.free, t.free[t.head:])]
			t.head = 0
		}
		return int(idx)
	}
	if t.made == reqSlots {
		return -1
	}
	idx := t.made
	if idx%reqChunkLen == 0 {
		t.chunks[idx/reqChunkLen].Store(new([reqChunkLen]reqSlot))
	}
	t.made++
	return idx
}

// newReq stores x under a fresh request handle and returns the handle.
func newReq(x reqH) uintptr {
	idx := takeSlot()
	if idx < 0 {
		return addReqMap(x)
	}
	s := reqSlotAt(uintptr(idx))
	gen := (s.state.Load()>>1 + 1) & reqGenMask
	s.x = x
	s.state.Store(gen<<1 | 1)
	return reqSpace | uintptr(gen)<<reqGenShift | uintptr(idx)<<4
}

// addReqMap is newReq when every slot is in use. (A function of its own,
// so that newReq's x does not escape.)
//
//go:noinline
func addReqMap(x reqH) uintptr { return add(tab.reqs, &x) }

// decodeReq is slot handle h's slot and generation; ok false if h is not
// a slot handle.
func decodeReq(h uintptr) (s *reqSlot, gen uint32, ok bool) {
	if h&^(1<<31-1) != 0 || h&reqSpace == 0 || h&15 != 0 {
		return nil, 0, false
	}
	s = reqSlotAt(h >> 4 & (reqSlots - 1))
	return s, uint32(h>>reqGenShift) & reqGenMask, s != nil
}

// getReq is request handle h's object, if h names a live request. (A
// handle of tab.reqs has reqSpace clear: newHandle stays below it unless
// 67 million objects are live at once; then it is looked up there too.)
func getReq(h uintptr) (*reqH, bool) {
	if isSent(h) {
		return &reqH{done: true}, true
	}
	if isCQ(h) {
		return cqReq(h)
	}
	if h&reqSpace != 0 {
		if s, gen, ok := decodeReq(h); ok && s.state.Load() == gen<<1|1 {
			return &s.x, true
		}
	}
	return get(tab.reqs, h)
}

// dropReq frees request handle h (nothing if it is not live): its object,
// which the caller must not use after, is zeroed.
func dropReq(h uintptr) {
	if isSent(h) {
		return // in no table
	}
	if isCQ(h) {
		cqDrop(h)
		return
	}
	s, gen, ok := decodeReq(h)
	if !ok || !s.state.CompareAndSwap(gen<<1|1, gen<<1) {
		drop(tab.reqs, h)
		return
	}
	s.x = reqH{}
	t := &reqTab
	t.mu.Lock()
	t.free = append(t.free, uint32(h>>4&(reqSlots-1)))
	t.mu.Unlock()
}
