//go:build !mpi && cgo

package main

import (
	"testing"
	"unsafe"

	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/internal/winc"
)

// TestEpochLayout holds capi.h's epoch state and round counters (which
// the C fast path reads and writes) to internal/winc's, which packages win
// and comm read and write: one layout, one set of bits.
func TestEpochLayout(t *testing.T) {
	var e winc.Epoch
	var k winc.Coll
	want := map[string]uintptr{
		"coll.round": winc.OffRound, "coll.seen": winc.OffSeen, "coll.pending": winc.OffPending, "coll.sizeof": unsafe.Sizeof(k),
		"gate": winc.OffGate, "access_all": winc.OffAccessAll, "lock_all": winc.OffLockAll,
		"all_check": winc.OffAllCheck, "fence_open": winc.OffFenceOpen, "post_open": winc.OffPostOpen, "fence_used": winc.OffFenceUsed, "fence_gen": winc.OffFenceGen,
		"flush_any": winc.OffFlushAny, "start_n": winc.OffStartN, "post_n": winc.OffPostN, "sizeof": unsafe.Sizeof(e), "tgt_off": winc.TgtOff,
		"TGT_ACCESS": winc.TgtAccess, "TGT_EXCLUSIVE": winc.TgtExclusive, "TGT_SHARED": winc.TgtShared,
		"TGT_NOCHECK": winc.TgtNoCheck, "TGT_CHECK": winc.TgtCheck, "TGT_LOCKED": winc.TgtLocked,
		"GATE_LOCKALL": winc.GateLockAll, "GATE_START": winc.GateStart, "GATE_FENCE": winc.GateFence,
		"GATE_NOLOCKS": winc.GateNoLocks, "GATE_FREED": winc.GateFreed, "GATE_CHECK": winc.GateCheck,
		"PAUSE_FROM": barrier.PauseFrom,
	}
	sameLayout(t, epochLayout(), want)
}

// sameLayout compares capi.h's layout entries (got) with internal/winc's.
func sameLayout(t *testing.T, got, want map[string]uintptr) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("capi.h has %d layout entries, the test %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: capi.h %d, internal/winc %d", k, got[k], v)
		}
	}
}
