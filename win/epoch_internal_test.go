//go:build !mpi

package win

import (
	"strings"
	"testing"
)

// The invariant check must see each way the mirrored fields can disagree.
func TestEpochCheck(t *testing.T) {
	fresh := func() *epochState {
		var e epochState
		e.init(4, true)
		return &e
	}
	if err := fresh().check(false, false); err != nil {
		t.Fatalf("fresh state: %v", err)
	}
	breaks := map[string]func(e *epochState){
		"both locks":       func(e *epochState) { e.setTgt(1, tgtAccess|tgtLocked) },
		"access bit":       func(e *epochState) { e.setTgt(2, tgtAccess) },
		"ModeNoCheck":      func(e *epochState) { e.setTgt(2, tgtNoCheck) },
		"check bit":        func(e *epochState) { e.tgt[3] = 0 },
		"accessAll":        func(e *epochState) { e.h.AccessAll = true },
		"flushAny":         func(e *epochState) { e.setLockAll(true); e.h.FlushAny = 1 },
		"gate":             func(e *epochState) { e.h.LockAll, e.h.AccessAll, e.h.FlushAny = true, true, 4 },
		"LockAll and Lock": func(e *epochState) { e.setLockAll(true); e.setTgt(0, tgtAccess|tgtShared) },
		"freed":            func(e *epochState) {},
	}
	for name, f := range breaks {
		e := fresh()
		f(e)
		if err := e.check(name == "freed", false); err == nil {
			t.Errorf("%s: broken state passed the check", name)
		}
	}
	// A consistent Start epoch passes.
	e := fresh()
	e.setStart([]int{1, 3})
	e.tgt[1] |= tgtAccess
	e.tgt[3] |= tgtAccess
	if err := e.check(false, false); err != nil {
		t.Errorf("Start epoch: %v", err)
	}
	// checkEpoch turns a broken state into a panic naming the call.
	w := &Win{rank: 2}
	w.ep.init(4, true)
	w.ep.h.AccessAll = true
	defer func() {
		if r, _ := recover().(string); !strings.Contains(r, "Fence on rank 2") || !strings.Contains(r, "accessAll") {
			t.Errorf("checkEpoch panicked with %q", r)
		}
	}()
	w.checkEpoch("Fence")
	t.Error("checkEpoch did not panic")
}

// anyLocked sees a lock on any target, in the bytes scanned eight at a
// time and in the tail, and nothing else: the access, NoCheck-less and
// check bits of unlocked targets do not count.
func TestAnyLocked(t *testing.T) {
	for _, n := range []int{1, 7, 8, 9, 16, 21} {
		var e epochState
		if err := e.init(n, true); err != nil {
			t.Fatal(err)
		}
		for i := range e.tgt {
			e.tgt[i] |= tgtAccess // a Start group's bit
		}
		if e.anyLocked() {
			t.Fatalf("n=%d: no lock held, anyLocked says one is", n)
		}
		for r := range n {
			for _, b := range []uint8{tgtExclusive, tgtShared} {
				e.setTgt(r, tgtAccess|b)
				if !e.anyLocked() {
					t.Errorf("n=%d: target %d locked (%#x), anyLocked says none", n, r, b)
				}
				e.setTgt(r, tgtAccess)
			}
		}
		e.drop()
	}
}
