package format

import "github.com/shmrun/shmrun/shm"

// Point-to-point messages. Every rank owns an inbox (a segment of kind
// shm.KindInbox, a memfd made at Init and published in the rank's control
// line as RankInbox; a heap block in the goroutine test mode). After a
// one-page header the inbox holds the owner's doorbell line (BellSeq,
// BellSleepers: every wait of the owner sleeps on it), then per sender a
// tail line, a job line and a ring of P2PRing(n) bytes. Ring s is written
// only by world rank s and read only by the owner: a single-producer
// single-consumer queue of packets.
//
// A packet is a header of PktHeader bytes and its payload, rounded up to
// whole PktCell-byte cells; it never wraps (a Skip packet fills the ring's
// end instead). The producer writes the packet's bytes, then stores its
// stamp (the ring's packet count, 1, 2, ..., skipping 0) with a release as
// the header's first word, then wakes the owner's doorbell if it has
// sleepers. The consumer reads a packet once the stamp at its read
// position is the next count (an acquire). Then, or when it next finds
// the ring empty while it holds back less than a quarter of it, it zeroes
// the first word of each cell it consumed (so no stale bytes ever look
// like a stamp), then stores the bytes consumed so far in the sender's
// tail line (a release) and wakes the sender's doorbell if it has
// sleepers. The doorbells are Light events (barrier.Event): a waker in a
// process registered for the sleepers' membarrier skips its full fence.
// The producer writes only below tail + ring size.
//
// Messages up to P2PEager(ring) bytes travel whole in an Eager packet. A
// larger one sends an RTS with the address of the sender's pinned buffer.
// The receiver that matches it opens a job on the sender's job line (its
// request's id, the chunk count n, a claim word of zero) and answers CTS.
// The message is then copied in chunks of P2PChunk(ring) bytes from both
// ends at once. The owner claims chunks from the back, in batches, and
// reads them from the sender's buffer with process_vm_readv where the
// kernel allows it. The sender claims chunks from the front: where the
// CTS carries the owner's buffer address (single copy on) and the kernel
// lets the sender write there, it writes a batch in place with
// process_vm_writev and then reports it in a Wrote packet (offset and
// bytes, no payload); otherwise it sends each chunk in a Data packet, while
// its ring has room, and the owner copies it out. A claim is a
// compare-and-swap of the claim word: JobFront chunks taken by the sender,
// JobBack by the owner, and the job's tag (the low bits of its id, so that
// a claim meant for an earlier job on the line fails). When all n chunks
// are in, the owner clears the line and answers Fin. A sender's buffer is
// its own again only after Fin; the owner's buffer is pinned from its CTS
// until the job ends.

// Inbox header fields after the common fixed header.
const (
	InboxRanks = shm.FixedHeaderLen // uint32 ranks n of the world
	InboxRing  = InboxRanks + 4     // uint32 ring bytes per sender
)

// TailPos is the word of a tail line: uint64 bytes the owner has consumed
// from the sender's ring and given back (written by the owner).
const TailPos = 0

// Words of a job line. The owner writes JobID and JobChunks before its
// CTS; the claim word is changed by both sides, by compare-and-swap only.
const (
	JobID     = 0  // uint64 the job in progress: its number on the line (1, 2, ...), 0 for none
	JobClaim  = 8  // uint64 claim word: front | back<<JobBackShift | tag<<JobTagShift
	JobChunks = 16 // uint32 the job's chunk count n

	JobBackShift = 24
	JobTagShift  = 48
	JobCountMask = 1<<24 - 1 // front and back are 24-bit counts
	JobTagMask   = 1<<16 - 1 // the tag is the job number's low 16 bits
)

// Packet header fields, offsets from the packet's start.
const (
	PktStamp  = 0              // uint32 the packet's count in its ring (never 0): written last
	PktKind   = 4              // uint8 Pkt* kind
	PktSig    = 5              // uint24 type signature digest (Eager, Sync, RTS): bytes 5..7, little-endian
	PktCtx    = 8              // uint32 communicator context (Eager, Sync, RTS)
	PktTag    = 12             // int32 tag (Eager, Sync, RTS)
	PktOffset = 8              // uint64 byte offset in the message (Data, Wrote; overlays ctx and tag)
	PktSize   = 16             // uint64 message bytes (Eager, Sync, RTS), chunk bytes (Data), bytes written (Wrote)
	PktID     = 24             // uint64 sender's request (Sync, RTS, Fin, CTS), receiver's (Data, Wrote)
	PktHeader = 32             // payload starts here
	PktCell   = 64             // packets are whole cells
	RTSAddr   = PktHeader      // uint64 sender's buffer address (RTS payload)
	RTSLen    = PktHeader + 8  // RTS packet length before rounding
	CTSRecvID = PktHeader      // uint64 receiver's request for the Data and Wrote packets (CTS payload)
	CTSAccept = PktHeader + 8  // uint64 bytes the receiver takes (CTS payload)
	CTSAddr   = PktHeader + 16 // uint64 receiver's buffer address, 0: no writes in place (CTS payload)
	CTSLen    = PktHeader + 24 // CTS packet length before rounding
)

// Packet kinds.
const (
	PktEager = 1 // a whole message
	PktSync  = 2 // a whole message whose sender waits for Fin once it is matched (Ssend)
	PktRTS   = 3 // a large message's announcement
	PktCTS   = 4 // receiver to sender: a job is open for the message
	PktData  = 5 // a chunk of a large message
	PktFin   = 6 // receiver to sender: the message is matched (Sync) or read (RTS)
	PktSkip  = 7 // nothing: the rest of the ring up to its end
	PktWrote = 8 // sender to receiver: PktSize bytes at PktOffset are written in place
)

// P2PRing is the ring bytes per sender in a world of n ranks: smaller for
// large worlds, where an inbox holds n rings (only the touched pages of a
// ring cost memory). A large message streams through the ring in quarters,
// so a bigger ring moves it faster (bench/NOTES.md).
func P2PRing(n int) int64 {
	switch {
	case n <= 8:
		return 64 << 10
	case n <= 16:
		return 32 << 10
	case n <= 64:
		return 16 << 10
	case n <= 1024:
		return 4 << 10
	}
	return 1 << 10
}

// P2PEager is the largest message sent whole in a ring of ring bytes: 8
// KiB at most (a message of 4–8 KiB went by rendezvous, three packets
// more: an 8 KiB ping-pong one way 3.3 → 1.85 µs on this host), and a
// quarter of the ring, so that a large message's chunks stay larger.
func P2PEager(ring int64) int { return int(min(8192, ring/4-PktHeader)) }

// P2PChunk is the chunk of a large message in a ring of ring bytes: a Data
// packet fills a quarter of the ring, so that three are always in flight
// whatever the other packets and the ring's end do to their places (two
// halves pipelined only when nothing else was in the ring: an RTS before
// them made the second wait for the first's room); half the ring in rings
// of 16 KiB and less, where a quarter would be small.
func P2PChunk(ring int64) int {
	if ring >= 32<<10 {
		return int(ring/4 - PktCell)
	}
	return int(ring/2 - PktCell)
}

// P2PMaxChunks bounds a message's chunks (the claim word's counts).
const P2PMaxChunks = JobCountMask

// InboxLayout places an inbox of n rings.
type InboxLayout struct {
	N                 int
	Ring              int64
	BellOff, TailsOff int64
	JobsOff, RingsOff int64
	Total             int64
}

// NewInboxLayout returns the inbox layout for a world of n ranks on a
// machine whose page is page bytes.
func NewInboxLayout(n int, page int64) InboxLayout {
	l := InboxLayout{N: n, Ring: P2PRing(n), BellOff: page}
	l.TailsOff = l.BellOff + Line
	l.JobsOff = l.TailsOff + int64(n)*Line
	l.RingsOff, _ = shm.AlignUp(l.JobsOff+int64(n)*Line, page)
	l.Total = l.RingsOff + int64(n)*l.Ring
	return l
}

// JobOff is sender s's job line.
func (l InboxLayout) JobOff(s int) int64 { return l.JobsOff + int64(s)*Line }

// TailOff is sender s's tail line.
func (l InboxLayout) TailOff(s int) int64 { return l.TailsOff + int64(s)*Line }

// RingOff is sender s's ring.
func (l InboxLayout) RingOff(s int) int64 { return l.RingsOff + int64(s)*l.Ring }
