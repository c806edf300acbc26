package winc

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/shmrun/shmrun/internal/raw"
)

// P2P is the part of a rank's point-to-point engine (package comm) that
// the C interface's eager fast paths share: the engine's lock, whether
// Go's matching state is empty (Quiet), and per world rank the sending
// state toward it (P2PTx) and the receiving state from it (P2PRx), which
// follow this header in the same mapping (P2PLayout). capi.h declares the
// same structs (shmrun_p2p, shmrun_p2p_tx, shmrun_p2p_rx); capi's tests
// hold them to the offsets here. The mapping is outside the Go heap, so C
// code may keep pointers to it; its pointers are uintptrs to shared
// memory, never to the Go heap.
//
// Every field but Lock is read and written only by the holder of Lock.
// MPI_Send, MPI_Isend and MPI_Recv from C take the lock and go on in C
// only while Quiet is 1: no receive posted, no message set aside
// (unexpected), no packet waiting for room, no large message in
// progress, no synchronous send waiting for its answer, nothing observed
// (shmrun --stats, --trace, --check). Then an eager message can be
// written behind nothing and the next packet of a sender's ring is the
// oldest message from it that nobody has matched: C can send and receive
// it exactly as the engine would. Anything else takes the Go path.
//
// MPI_Irecv from C may also queue a receive in C (CQ counts them) while
// Quiet is 1, and the completion calls (MPI_Wait, MPI_Test and their
// all, any and some forms) match the queued receives to the rings'
// packets in C. Whoever takes the lock in Go first moves the
// queued receives into the engine's posted queue, in the order they were
// posted (CQMigrate), so that Go's engine never runs while C holds
// receives that a message could be meant for.
type P2P struct {
	Lock  uint32 // 0 free, 1 held: a compare-and-swap takes it, a store-release gives it back
	Quiet uint32 // 1 while Go's engine holds no operation in progress
	N     uint32 // world ranks: P2PTx and P2PRx entries
	Eager uint32 // the largest message sent whole (format.P2PEager)
	Spin  int32  // polls a C receive makes before it hands its wait to Go
	CQ    uint32 // receives queued in C, not yet matched nor moved into Go
	// NextID numbers the packets (format.PktID); the engine's own.
	NextID uint64
}

// P2PTx is the sending state toward one world rank: that rank's inbox's
// ring of this rank (zero until the engine maps the inbox), its tail
// word, that inbox's doorbell, and the ring's write position.
type P2PTx struct {
	Ring     uintptr // the ring's first byte; 0: not mapped yet
	Tail     uintptr // *uint64: bytes the receiver gave back
	Seq      uintptr // *uint32: the receiver's doorbell (barrier.Event)
	Sleepers uintptr // *uint32
	Head     uint64  // bytes written
	SeenTail uint64  // the tail last read
	Stamp    uint32  // stamp of the last packet written
	RingLen  uint32  // bytes (a power of two)
	_        uint64
}

// P2PRx is the receiving state from one world rank: its ring in this
// rank's inbox, the ring's tail word and the read position.
type P2PRx struct {
	Ring    uintptr // the ring's first byte
	Tail    uintptr // *uint64: the tail published to the sender
	Pos     uint64  // bytes consumed
	Given   uint64  // bytes given back (the tail last published)
	Stamp   uint32  // stamp of the last packet consumed
	RingLen uint32
	_       [3]uint64
}

// Offsets of P2P, P2PTx and P2PRx (capi.h's shmrun_p2p, shmrun_p2p_tx,
// shmrun_p2p_rx).
const (
	P2POffLock   = 0
	P2POffQuiet  = 4
	P2POffN      = 8
	P2POffEager  = 12
	P2POffSpin   = 16
	P2POffCQ     = 20
	P2POffNextID = 24
	P2PHeader    = 64 // the P2PTx entries start here, then the P2PRx entries

	TxOffRing     = 0
	TxOffTail     = 8
	TxOffSeq      = 16
	TxOffSleepers = 24
	TxOffHead     = 32
	TxOffSeenTail = 40
	TxOffStamp    = 48
	TxOffRingLen  = 52
	TxSize        = 64

	RxOffRing    = 0
	RxOffTail    = 8
	RxOffPos     = 16
	RxOffGiven   = 24
	RxOffStamp   = 32
	RxOffRingLen = 36
	RxSize       = 64
)

// Compile-time checks that the structs have the sizes the layout says.
var (
	_ [TxSize - unsafe.Sizeof(P2PTx{})]struct{}
	_ [unsafe.Sizeof(P2PTx{}) - TxSize]struct{}
	_ [RxSize - unsafe.Sizeof(P2PRx{})]struct{}
	_ [unsafe.Sizeof(P2PRx{}) - RxSize]struct{}
	_ [P2PHeader - unsafe.Sizeof(P2P{})]struct{}
)

// P2PMapped is a mapped engine state of n ranks.
type P2PMapped struct {
	*P2P
	Tx []P2PTx
	Rx []P2PRx
}

// NewP2P maps the engine state of a world of n ranks, zeroed, with N set.
func NewP2P(n int) (P2PMapped, error) {
	size := P2PHeader + (TxSize+RxSize)*n
	size = (size + unix.Getpagesize() - 1) &^ (unix.Getpagesize() - 1)
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return P2PMapped{}, fmt.Errorf("mapping the point-to-point state of %d ranks: %w", n, err)
	}
	tx, rx := P2PHeader, P2PHeader+TxSize*n
	m := P2PMapped{
		P2P: &raw.Elems[P2P](mem[:P2PHeader])[0],
		Tx:  raw.Elems[P2PTx](mem[tx : tx+TxSize*n : tx+TxSize*n]),
		Rx:  raw.Elems[P2PRx](mem[rx : rx+RxSize*n : rx+RxSize*n]),
	}
	m.N = uint32(n)
	return m, nil
}

// P2PComm is what the C interface's eager fast paths need of one
// communicator: the engine's state, the communicator's context (the
// packets' ctx) and its members' world ranks. Package comm makes it
// (P2POf).
type P2PComm struct {
	Eng   *P2P
	Tx    []P2PTx
	Rx    []P2PRx
	Ctx   uint32
	World []int32 // world rank of each rank of the communicator
	Me    int
}

// P2POf returns c's P2PComm (c a *comm.Comm), or nil when c has no
// point-to-point engine or the job is observed (shmrun --stats, --trace,
// --check), where every call takes the Go path. Package comm sets it.
var P2POf func(c any) *P2PComm

// CQMigrate moves the receives queued in C (P2P.CQ) into Go's engine:
// for each, in the order they were posted, it calls post with the
// receive's communicator (a *comm.Comm), its buffer (C memory), its
// source's world rank, its tag (comm.AnyTag for any), its element size
// and signature digest (typesig), and keeps the request post returns (a
// *comm.Request) for the receive's handle. Package comm calls it with
// the engine locked whenever CQ is not 0; post neither locks nor blocks.
// The C interface sets it.
var CQMigrate func(post func(c any, buf []byte, src, tag, elem int, sig uint32) any)

// DoneRecv returns a completed request (a *comm.Request) whose status is
// that of a received message of n bytes from rank src of its
// communicator with tag: a receive the C interface completed in C, when
// a call that goes through Go must see it. Package comm sets it.
var DoneRecv func(src, tag int, n int64) any

// P2PFlush locks and unlocks the point-to-point engine of c (a
// *comm.Comm), which moves the receives queued in C into Go
// (CQMigrate); an error if c has no engine. Package comm sets it.
var P2PFlush func(c any) error
