//go:build !mpi && cgo

package main

import (
	"testing"

	"github.com/shmrun/shmrun/comm"
)

// TestReqTable holds the request table to its promises: every live
// handle finds its own object, a freed handle finds nothing (even once its
// slot is reused), handles fit MPI_Request_toint's int, and past the last
// slot requests still get handles (from tab.reqs).
func TestReqTable(t *testing.T) {
	live := map[uintptr]int{}
	mk := func(i int) uintptr {
		h := newReq(reqH{st: comm.Status{Tag: i}})
		if h == hRequestNull || h > 1<<31-1 {
			t.Fatalf("request %d: handle %#x (not a positive int)", i, h)
		}
		if _, dup := live[h]; dup {
			t.Fatalf("request %d: handle %#x given twice", i, h)
		}
		live[h] = i
		return h
	}
	check := func() {
		t.Helper()
		for h, i := range live {
			x, ok := getReq(h)
			if !ok || x.st.Tag != i {
				t.Fatalf("live handle %#x (request %d): ok %v", h, i, ok)
			}
		}
	}
	// A loop of short-lived requests: a freed handle stays invalid while
	// its slot is reused, for far longer than the quarantine.
	var freed []uintptr
	for i := range 5000 {
		h := mk(i)
		if i%7 == 0 {
			continue // some stay live
		}
		dropReq(h)
		delete(live, h)
		freed = append(freed, h)
		if _, ok := getReq(h); ok {
			t.Fatalf("handle %#x found right after it was freed", h)
		}
	}
	check()
	for _, h := range freed {
		if _, ok := getReq(h); ok {
			t.Fatalf("freed handle %#x found again", h)
		}
		dropReq(h) // freeing twice does nothing
	}
	check()
	if reqTab.made > 2*reqQuarantine+5000/7+1 {
		t.Errorf("%d slots made for at most %d live requests", reqTab.made, 5000/7+1)
	}
	// Handles that were never given, or of other objects.
	for _, h := range []uintptr{0, hRequestNull, hCommWorld, firstHandle, reqSpace, reqSpace | 4, reqSpace | (reqSlots-1)<<4, 1<<31 | reqSpace | 16, ^uintptr(0)} {
		if _, ok := getReq(h); ok {
			t.Errorf("handle %#x found", h)
		}
		dropReq(h)
	}
	// The handles of sends completed in C are always found, complete
	// requests, and dropping them changes nothing.
	for _, h := range []uintptr{reqSent, reqSent | 16, reqSent | reqSentK} {
		for range 2 {
			x, ok := getReq(h)
			if !ok || !x.done || x.r != nil || x.err != nil || x.persist != nil {
				t.Fatalf("%#x: %+v, %v", h, x, ok)
			}
			dropReq(h)
		}
	}
	check()
	// Every slot in use: the next requests come from tab.reqs, and all
	// work.
	var extra []uintptr
	for i := 0; reqTab.made < reqSlots || len(extra) < 10; i++ {
		h := mk(10000 + i)
		if h&reqSpace == 0 {
			extra = append(extra, h)
		}
	}
	check()
	for h := range live {
		dropReq(h)
		if _, ok := getReq(h); ok {
			t.Fatalf("handle %#x found after it was freed", h)
		}
	}
	for _, h := range extra {
		if _, ok := get(tab.reqs, h); ok {
			t.Fatalf("map handle %#x still in tab.reqs", h)
		}
	}
}

// BenchmarkReqTable is a handle's life in a message-rate loop: made,
// looked up, freed.
func BenchmarkReqTable(b *testing.B) {
	var hs [64]uintptr
	for b.Loop() {
		for i := range hs {
			hs[i] = newReq(reqH{done: true})
		}
		for _, h := range hs {
			if _, ok := getReq(h); !ok {
				b.Fatal("lost a handle")
			}
			dropReq(h)
		}
	}
}

// TestCQHandles: the handles of receives queued in C are a kind of their
// own - no slot, table, sent-send or predefined handle is one, each of
// them is, they fit an int - and one that names no queued receive is
// an invalid request, which retiring leaves alone.
func TestCQHandles(t *testing.T) {
	for _, idx := range []uintptr{0, 1, 517, cqSlots - 1} {
		for _, gen := range []uintptr{0, 1, 0x8001, 0xffff} {
			h := reqCQ | gen<<14 | idx<<4
			if !isCQ(h) || isSent(h) || h > 1<<31-1 {
				t.Fatalf("slot %d gen %d: handle %#x: isCQ %v isSent %v", idx, gen, h, isCQ(h), isSent(h))
			}
			if _, g, ok := decodeReq(h); ok {
				t.Fatalf("handle %#x decodes as a request slot (generation %d)", h, g)
			}
			if s, i, g := cqSlot(h); i != int(idx) || g != uint32(gen) || s == nil {
				t.Fatalf("handle %#x: slot %d generation %d", h, i, g)
			}
			if _, ok := getReq(h); ok {
				t.Fatalf("handle %#x of no queued receive found", h)
			}
			dropReq(h)
		}
	}
	others := []uintptr{hRequestNull, firstHandle, firstHandle + 16, reqSpace, reqSpace | 5<<4,
		reqSpace | reqGenMask<<reqGenShift | (reqSlots-1)<<4, reqSent, reqSent | reqSentK, 1 << 30, 0}
	for _, h := range others {
		if isCQ(h) {
			t.Fatalf("handle %#x taken for a queued receive's", h)
		}
	}
}

// TestHandlesWrap: once every handle value below handleEnd has been given
// out, newHandle gives them again from the first, skipping those still
// live or reserved, and never one with reqSpace set (a request slot's) nor past an
// int (MPI_*_toint).
func TestHandlesWrap(t *testing.T) {
	tab.Lock()
	defer tab.Unlock()
	next, wrapped := tab.next, tab.wrapped
	defer func() { tab.next, tab.wrapped = next, wrapped }()
	live := []uintptr{firstHandle, firstHandle + 32}
	for _, h := range live {
		tab.infos[h] = &infoH{}
	}
	// A handle MPI_Comm_idup gave before its communicator exists.
	tab.reserved[firstHandle+48] = struct{}{}
	defer func() {
		for _, h := range live {
			delete(tab.infos, h)
		}
		delete(tab.reserved, firstHandle+48)
	}()
	tab.next = handleEnd - 32
	want := []uintptr{handleEnd - 32, handleEnd - 16, firstHandle + 16, firstHandle + 64}
	for i, w := range want {
		if h := newHandle(); h != w || h&reqSpace != 0 || h > 1<<31-1 {
			t.Fatalf("handle %d near the end: %#x, want %#x", i, h, w)
		}
	}
}
