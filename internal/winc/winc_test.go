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
		{"FlushAny", unsafe.Offsetof(e.FlushAny), OffFlushAny},
		{"StartN", unsafe.Offsetof(e.StartN), OffStartN},
		{"PostN", unsafe.Offsetof(e.PostN), OffPostN},
		{"size", unsafe.Sizeof(e), OffPostN + 4},
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

// TestNew maps a state, checks it is sized, zeroed with no epoch open,
// and that its arrays do not overlap, and unmaps it.
func TestNew(t *testing.T) {
	for _, n := range []int{0, 1, 7, 5000} {
		m, err := New(n)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Tgt) != n || cap(m.Tgt) != n || len(m.StartsFrom) != n || len(m.PostsTo) != n || len(m.StartGroup) != n || len(m.PostGroup) != n {
			t.Errorf("n=%d: lengths %d %d %d %d %d", n, len(m.Tgt), len(m.StartsFrom), len(m.PostsTo), len(m.StartGroup), len(m.PostGroup))
		}
		e := m.Epoch
		if e.Gate != 0 || e.FlushAny != 0 || e.FenceUsed.Load() || e.StartN != -1 || e.PostN != -1 {
			t.Errorf("n=%d: state not empty: gate %d, StartN %d, PostN %d", n, e.Gate, e.StartN, e.PostN)
		}
		// Fill each array with its own value; none may change another's.
		for i := range n {
			m.Tgt[i] = 0xAA
			m.StartsFrom[i], m.PostsTo[i] = 1, 2
			m.StartGroup[i], m.PostGroup[i] = 3, 4
		}
		e.FlushAny, e.StartN, e.PostN = 9, 5, 6
		for i := range n {
			if m.Tgt[i] != 0xAA || m.StartsFrom[i] != 1 || m.PostsTo[i] != 2 || m.StartGroup[i] != 3 || m.PostGroup[i] != 4 {
				t.Fatalf("n=%d: element %d overwritten: %#x %d %d %d %d", n, i, m.Tgt[i], m.StartsFrom[i], m.PostsTo[i], m.StartGroup[i], m.PostGroup[i])
			}
		}
		if e.FlushAny != 9 || e.StartN != 5 || e.PostN != 6 {
			t.Fatalf("n=%d: header overwritten", n)
		}
		m.Release()
	}
}

// TestP2PLayout holds the point-to-point structs to the offsets capi.h
// repeats, and NewP2P's mapping to the layout.
func TestP2PLayout(t *testing.T) {
	var e P2P
	var x P2PTx
	var r P2PRx
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"Lock", unsafe.Offsetof(e.Lock), P2POffLock},
		{"Quiet", unsafe.Offsetof(e.Quiet), P2POffQuiet},
		{"N", unsafe.Offsetof(e.N), P2POffN},
		{"Eager", unsafe.Offsetof(e.Eager), P2POffEager},
		{"Spin", unsafe.Offsetof(e.Spin), P2POffSpin},
		{"CQ", unsafe.Offsetof(e.CQ), P2POffCQ},
		{"NextID", unsafe.Offsetof(e.NextID), P2POffNextID},
		{"Tx.Ring", unsafe.Offsetof(x.Ring), TxOffRing},
		{"Tx.Tail", unsafe.Offsetof(x.Tail), TxOffTail},
		{"Tx.Seq", unsafe.Offsetof(x.Seq), TxOffSeq},
		{"Tx.Sleepers", unsafe.Offsetof(x.Sleepers), TxOffSleepers},
		{"Tx.Head", unsafe.Offsetof(x.Head), TxOffHead},
		{"Tx.SeenTail", unsafe.Offsetof(x.SeenTail), TxOffSeenTail},
		{"Tx.Stamp", unsafe.Offsetof(x.Stamp), TxOffStamp},
		{"Tx.RingLen", unsafe.Offsetof(x.RingLen), TxOffRingLen},
		{"Tx size", unsafe.Sizeof(x), TxSize},
		{"Rx.Ring", unsafe.Offsetof(r.Ring), RxOffRing},
		{"Rx.Tail", unsafe.Offsetof(r.Tail), RxOffTail},
		{"Rx.Pos", unsafe.Offsetof(r.Pos), RxOffPos},
		{"Rx.Given", unsafe.Offsetof(r.Given), RxOffGiven},
		{"Rx.Stamp", unsafe.Offsetof(r.Stamp), RxOffStamp},
		{"Rx.RingLen", unsafe.Offsetof(r.RingLen), RxOffRingLen},
		{"Rx size", unsafe.Sizeof(r), RxSize},
	} {
		if c.got != c.want {
			t.Errorf("%s at %d, want %d", c.name, c.got, c.want)
		}
	}
	m, err := NewP2P(3)
	if err != nil {
		t.Fatal(err)
	}
	base := uintptr(unsafe.Pointer(m.P2P))
	if m.N != 3 || len(m.Tx) != 3 || len(m.Rx) != 3 || m.Lock != 0 || m.Quiet != 0 ||
		uintptr(unsafe.Pointer(&m.Tx[0]))-base != P2PHeader || uintptr(unsafe.Pointer(&m.Rx[0]))-base != P2PHeader+3*TxSize {
		t.Errorf("NewP2P(3): N %d, %d tx at %d, %d rx at %d", m.N, len(m.Tx), uintptr(unsafe.Pointer(&m.Tx[0]))-base,
			len(m.Rx), uintptr(unsafe.Pointer(&m.Rx[0]))-base)
	}
}
