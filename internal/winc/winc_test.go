package winc

import (
	"testing"
	"unsafe"
)

// TestLayout holds the Go struct to the offsets capi.h repeats.
func TestLayout(t *testing.T) {
	var e Epoch
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"Gate", unsafe.Offsetof(e.Gate), OffGate},
		{"AccessAll", unsafe.Offsetof(e.AccessAll), OffAccessAll},
		{"LockAll", unsafe.Offsetof(e.LockAll), OffLockAll},
		{"AllCheck", unsafe.Offsetof(e.AllCheck), OffAllCheck},
		{"FenceOpen", unsafe.Offsetof(e.FenceOpen), OffFenceOpen},
		{"PostOpen", unsafe.Offsetof(e.PostOpen), OffPostOpen},
		{"FenceUsed", unsafe.Offsetof(e.FenceUsed), OffFenceUsed},
		{"NLocks", unsafe.Offsetof(e.NLocks), OffNLocks},
		{"FlushAny", unsafe.Offsetof(e.FlushAny), OffFlushAny},
		{"size", unsafe.Sizeof(e), OffFlushAny + 8},
	} {
		if c.got != c.want {
			t.Errorf("%s at %d, want %d", c.name, c.got, c.want)
		}
	}
	var k Coll
	if unsafe.Offsetof(k.Round) != OffRound || unsafe.Offsetof(k.Seen) != OffSeen || unsafe.Offsetof(k.Pending) != OffPending || unsafe.Sizeof(k) != 16 {
		t.Errorf("Coll: Round at %d, Seen at %d, Pending at %d, %d bytes", unsafe.Offsetof(k.Round), unsafe.Offsetof(k.Seen), unsafe.Offsetof(k.Pending), unsafe.Sizeof(k))
	}
	if unsafe.Sizeof(e) > TgtOff {
		t.Errorf("Epoch is %d bytes, more than TgtOff %d", unsafe.Sizeof(e), TgtOff)
	}
}

// TestNew maps a state, checks it is zeroed and sized, and unmaps it.
func TestNew(t *testing.T) {
	for _, n := range []int{0, 1, 7, 5000} {
		e, tgt, release, err := New(n)
		if err != nil {
			t.Fatal(err)
		}
		if len(tgt) != n || cap(tgt) != n {
			t.Errorf("n=%d: %d target bytes (cap %d)", n, len(tgt), cap(tgt))
		}
		for i, b := range tgt {
			if b != 0 {
				t.Fatalf("n=%d: target %d starts at %#x", n, i, b)
			}
		}
		if e.Gate != 0 || e.NLocks != 0 || e.FlushAny != 0 || e.FenceUsed.Load() {
			t.Errorf("n=%d: state not zeroed: %+v", n, e)
		}
		e.NLocks, e.FlushAny = 3, uint(n)
		for i := range tgt {
			tgt[i] = TgtAccess
		}
		release()
	}
}
