package format

import "github.com/shmrun/shmrun/shm"

// Point-to-point messages. Every rank owns an inbox (a segment of kind
// shm.KindInbox, a memfd made at Init and published in the rank's control
// line as RankInbox; a heap block in the goroutine test mode). After a
// one-page header the inbox holds the owner's doorbell line (BellSeq,
// BellSleepers: every wait of the owner sleeps on it), one tail line
// per sender, and one ring of P2PRing(n) bytes per sender: ring s is
// written only by world rank s and read only by the owner, a
// single-producer single-consumer queue of packets.
//
// A packet is a header of PktHeader bytes and its payload, rounded up to
// whole PktCell-byte cells; it never wraps (a Skip packet fills the ring's
// end instead). The producer writes the packet's bytes, then stores its
// stamp (the ring's packet count, 1, 2, ..., skipping 0) with a release as
// the header's first word, then wakes the owner's doorbell if it has
// sleepers. The consumer reads a packet once the stamp at its read
// position is the next count (an acquire); after using it, it zeroes the
// first word of each of the packet's cells (so no stale bytes ever look
// like a stamp) and then stores the bytes consumed so far in the sender's
// tail line (a release), waking the sender's doorbell if it has sleepers.
// The producer writes only below tail + ring size.
//
// Messages up to P2PEager(ring) bytes travel whole in an Eager packet. A
// larger one sends an RTS with the address of the sender's pinned buffer:
// the receiver that matches it reads the buffer with process_vm_readv and
// answers Fin; where it cannot read it, it answers CTS and the sender
// streams the bytes in Data packets of at most P2PFrag(ring) bytes.

// Inbox header fields after the common fixed header.
const (
	InboxRanks = shm.FixedHeaderLen // uint32 ranks n of the world
	InboxRing  = InboxRanks + 4     // uint32 ring bytes per sender
)

// TailPos is the word of a tail line: uint64 bytes the owner has consumed
// from that sender's ring (written by the owner).
const TailPos = 0

// Packet header fields, offsets from the packet's start.
const (
	PktStamp  = 0              // uint32 the packet's count in its ring (never 0): written last
	PktKind   = 4              // uint8 Pkt* kind
	PktCtx    = 8              // uint32 communicator context (Eager, Sync, RTS)
	PktTag    = 12             // int32 tag (Eager, Sync, RTS)
	PktOffset = 8              // uint64 offset in the message (Data; overlays ctx and tag)
	PktSize   = 16             // uint64 message bytes (Eager, Sync, RTS), fragment bytes (Data)
	PktID     = 24             // uint64 sender's request (Sync, RTS, Fin, CTS), receiver's (Data)
	PktHeader = 32             // payload starts here
	PktCell   = 64             // packets are whole cells
	RTSAddr   = PktHeader      // uint64 sender's buffer address (RTS payload)
	RTSLen    = PktHeader + 8  // RTS packet length before rounding
	CTSRecvID = PktHeader      // uint64 receiver's request for the Data packets (CTS payload)
	CTSAccept = PktHeader + 8  // uint64 bytes the receiver takes (CTS payload)
	CTSLen    = PktHeader + 16 // CTS packet length before rounding
)

// Packet kinds.
const (
	PktEager = 1 // a whole message
	PktSync  = 2 // a whole message whose sender waits for Fin once it is matched (Ssend)
	PktRTS   = 3 // a large message's announcement
	PktCTS   = 4 // receiver to sender: stream the message in Data packets
	PktData  = 5 // a fragment of a large message
	PktFin   = 6 // receiver to sender: the message is matched (Sync) or read (RTS)
	PktSkip  = 7 // nothing: the rest of the ring up to its end
)

// P2PRing is the ring bytes per sender in a world of n ranks: smaller for
// large worlds, where an inbox holds n rings (only the touched pages of a
// ring cost memory).
func P2PRing(n int) int64 {
	switch {
	case n <= 64:
		return 16 << 10
	case n <= 1024:
		return 4 << 10
	}
	return 1 << 10
}

// P2PEager is the largest message sent whole in a ring of ring bytes.
func P2PEager(ring int64) int { return int(min(4096, ring/4-PktHeader)) }

// P2PFrag is the largest Data fragment in a ring of ring bytes.
func P2PFrag(ring int64) int { return int(ring/2 - PktHeader) }

// InboxLayout places an inbox of n rings.
type InboxLayout struct {
	N                 int
	Ring              int64
	BellOff, TailsOff int64
	RingsOff, Total   int64
}

// NewInboxLayout returns the inbox layout for a world of n ranks on a
// machine whose page is page bytes.
func NewInboxLayout(n int, page int64) InboxLayout {
	l := InboxLayout{N: n, Ring: P2PRing(n), BellOff: page}
	l.TailsOff = l.BellOff + Line
	l.RingsOff, _ = shm.AlignUp(l.TailsOff+int64(n)*Line, page)
	l.Total = l.RingsOff + int64(n)*l.Ring
	return l
}

// TailOff is sender s's tail line.
func (l InboxLayout) TailOff(s int) int64 { return l.TailsOff + int64(s)*Line }

// RingOff is sender s's ring.
func (l InboxLayout) RingOff(s int) int64 { return l.RingsOff + int64(s)*l.Ring }
