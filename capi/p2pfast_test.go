//go:build !mpi && cgo

package main

import (
	"testing"

	"github.com/shmrun/shmrun/internal/winc"
)

// TestP2PLayout holds capi.h's point-to-point engine state (which the C
// eager Send, Isend and Recv read and write) to internal/winc's, which
// package comm's engine reads and writes: one layout.
func TestP2PLayout(t *testing.T) {
	want := map[string]uintptr{
		"lock": winc.P2POffLock, "quiet": winc.P2POffQuiet, "n": winc.P2POffN, "eager": winc.P2POffEager,
		"spin": winc.P2POffSpin, "cq": winc.P2POffCQ, "next_id": winc.P2POffNextID, "sizeof": winc.P2PHeader,
		"tx.ring": winc.TxOffRing, "tx.tail": winc.TxOffTail, "tx.seq": winc.TxOffSeq, "tx.sleepers": winc.TxOffSleepers,
		"tx.head": winc.TxOffHead, "tx.seen_tail": winc.TxOffSeenTail, "tx.stamp": winc.TxOffStamp,
		"tx.ring_len": winc.TxOffRingLen, "tx.sizeof": winc.TxSize,
		"rx.ring": winc.RxOffRing, "rx.tail": winc.RxOffTail, "rx.pos": winc.RxOffPos, "rx.given": winc.RxOffGiven,
		"rx.stamp": winc.RxOffStamp, "rx.ring_len": winc.RxOffRingLen, "rx.sizeof": winc.RxSize,
		"REQ_SENT": reqSent, "REQ_SENT_K": reqSentK,
	}
	sameLayout(t, p2pLayout(), want)
}
