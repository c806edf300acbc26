package format

import "github.com/shmrun/shmrun/shm"

// A communicator's collective area (a segment of kind shm.KindCollective,
// made by the communicator's first collective call, or a heap block in the
// goroutine test mode) holds, after a one-page header, per rank P flag
// lines (round parities 0 to P-1, P = CollParities(n)), one
// nonblocking-barrier block (its line, then the flag lines' sleepers
// words), and two staging buffers of CollChunk bytes each.
//
// A collective runs in rounds numbered 1, 2, ... on every rank alike. In
// round r, rank q fills its staging buffer of parity r&1 and the inline
// bytes of its flag line of parity r%P, then stores r into that line's
// sequence word (a release; it is also the futex word), and wakes sleepers
// if the line's sleepers word is nonzero. A rank reads rank q's line and
// buffer of round r only after loading a sequence value s with
// int32(s-r) >= 0 (an acquire). A rank reads round r's staging buffers
// before it publishes round r+1, so it writes its staging buffer of round
// r once every rank has published round r-1. With two ranks, a rank reads
// round r's lines before it publishes round r+P/2, so it writes its line
// of round r once every rank has published round r-P/2.
//
// The first round of each call carries the call's signature (kind, element
// type, op, root, count). A rank compares the signatures of the ranks whose
// data it reads before it reads any. With two ranks every rank compares
// every rank's, in the call or, where the call is one round for it, in a
// later call. With more, rank 0 compares every rank's for all (the
// checker) and publishes in its record (CollCheck) how far it has and
// the last mismatch it found; a rank writes its line of round r once the
// ranks that read its round r-P there (the data's readers of a call of one
// round: once they have published round r-P+1; else every rank: r-P/2)
// are done and rank 0 has compared round r-P, and rank 0 once every rank
// has published round r-P+1 (docs/FORMAT.md has the whole of it). A rank
// whose own arguments are wrong says so in CollFailed with an error class
// and takes part anyway.

// Collective area header fields after the common fixed header.
const (
	CollRanks = shm.FixedHeaderLen // uint32 ranks n of the communicator
	CollChunk = CollRanks + 4      // uint32 staging buffer length C
	// CollCheck is the checker's record, two lines of the header page:
	// in an area of more than two ranks, rank 0 compares every round's
	// signatures for all and says there how far it has, and the last
	// mismatch it found (the protocol above).
	CollCheck = Line
)

// Words of the checker's record (from CollCheck), written by rank 0 alone:
// the round it has compared through, on a line of its own (it moves on
// nearly every call), then the last mismatch, on the next line (which
// moves only on a mismatch, so the others' loads of it hit their cache).
const (
	// CheckDone is the round through which rank 0 has compared every
	// rank's signature, and every rank has published (a release; 0
	// before any).
	CheckDone = 0
	// CheckCount is the mismatches found, twice, plus 1 while one is
	// being written (a sequence lock over the words after it).
	CheckCount = Line
	CheckRound = Line + 4  // uint32 the round of the last mismatch found
	CheckRank  = Line + 8  // int32 the rank whose signature failed or differs
	CheckSame  = Line + 12 // uint8 the fields the round's ranks must agree on (Same*)
	CheckSig0  = Line + 16 // [16]byte rank 0's signature words of that round
	CheckSigQ  = Line + 32 // [16]byte that rank's
)

// Words of a flag line, as offsets from the line's start.
const (
	FlagSeq = 0 // uint32 the round last published: the futex word
	// +4: unused; the line's sleepers word is in the rank's Ibarrier
	// block (IbarFlagSleepers).
	FlagKind   = 8  // uint8 the call (Coll*) of the round's signature
	FlagType   = 9  // uint8 element type (atomics.Type), FlagTypeBytes or FlagTypeMixed
	FlagOp     = 10 // uint8 reduction op (atomics.Op), OpUser, or 0
	FlagFailed = 11 // uint8 0, or 1 + the class of this rank's argument error
	FlagRoot   = 12 // int32 root, or -1
	FlagCount  = 16 // uint64 the count the call checks (elements)
	FlagInline = 24 // [InlineLen]byte data small enough to ride in the line
	InlineLen  = Line - FlagInline
)

// The element types of a flag line's FlagType besides atomics.Type's: the
// data of the call counted in bytes. A data-movement call (Bcast, the
// gathers, scatters and all-to-alls) names its data's type signature:
// the element type when the data are of one basic type (a pair of two
// equal halves, MPI_2INT, as its half: twice as many), FlagTypeBytes for
// data of MPI_BYTE only, which meet any type of the same size,
// FlagTypeMixed for data mixing basic types (a struct, MPI_FLOAT_INT),
// which meet each other by size. A reduction names its element type,
// pairs included.
const (
	FlagTypeBytes = 0x7f
	FlagTypeMixed = 0x80
)

// Words of a rank's nonblocking-barrier block: its Ibarrier line, then
// the sleepers words of its flag lines.
const (
	IbarSeq      = 0 // uint32 Ibarrier calls made by the rank: the futex word
	IbarSleepers = 4 // uint32 waiters in the futex phase
	// IbarFlagSleepers holds the waiters in the futex phase on the rank's
	// flag lines (parity 0, 1, ..., P-1): a uint32 each, on the lines
	// after the Ibarrier line, which nothing polls. On the flag line
	// itself, the waker's load of the word right after its round's store
	// would wait for the line the other ranks are polling (~35 ns a
	// round).
	IbarFlagSleepers = Line
)

// Single copy. A large Bcast or Allreduce between processes moves its data
// by process_vm_readv from the owners' buffers (a Bcast between two ranks
// also by the root's process_vm_writev into the reader's): in the call's
// first round, each rank whose buffers others read or write puts its
// process id and the buffers' addresses in its inline bytes (offsets
// below, from FlagInline); each later round of the call has, in inline
// byte SingleFailed, 1 if the rank's copies failed. A rank returns only
// after every reader's last round.
const (
	SingleBcast     = 64 << 10  // bytes from which a Bcast moves by single copy
	SingleAllreduce = 512 << 10 // bytes from which an Allreduce does
	SinglePID       = 0         // int32 process id
	SingleSend      = 4         // uint64 address of the send buffer (Bcast: the buffer)
	SingleRecv      = 12        // uint64 address of the receive buffer (Allreduce)
	SingleLen       = 20        // bytes of the three
	SingleFailed    = 0         // uint8 in a later round: this rank's reads failed
)

// CollParities is the flag lines a rank has in a collective area of n
// ranks: the round parities. Two ranks alternate two; more ranks keep up
// to 64, fewer as n grows (P·n at most 4096, P at least 8), so that a
// rank that reads nothing in a call of one round (a Bcast's root, a
// Gather's sender) may run up to P rounds ahead of the slowest before it
// must wait (the rules above), as the ranks of a loop of such calls do
// when they outnumber the cores: each then does many calls' work each
// time it runs. A Bcast of 8 bytes at 8 ranks on 2 cores took 3.6 µs two
// rounds ahead, 2.0 at four, 0.93 at eight and 0.6 at 32 (bench/NOTES.md,
// under the old rule of P/2 rounds).
func CollParities(n int) int {
	if n <= 2 {
		return 2
	}
	p := 64
	for p > 8 && p*n > 4096 {
		p /= 2
	}
	return p
}

// CollSlots is the slots of a staging buffer in a collective area of n
// ranks (CollSlot): one for two ranks, else four. A slot is reused 2·S
// rounds on (S the slots), so a rank writes its slot of round r once
// every rank has published round r-2S+1: a call of one round with staged
// data (a Gather's block) runs up to 2S-1 rounds ahead where its lines
// alone would allow P/2, and the slots stay a quarter of a buffer
// (16 KiB up to 16 ranks) however many parities the lines have.
func CollSlots(n int) int {
	if n <= 2 {
		return 1
	}
	return 4
}

// OpUser marks a user-defined op (comm.OpCreate) in a signature: its
// function cannot be compared across processes, only its presence.
const OpUser = 0xff

// The signature fields a call's ranks must agree on, besides the kind
// and the type (which always must): bits of the C interface's small
// collectives' mismatch path (package comm's sameFields).
const (
	SameCount = 1 << iota // the count
	SameRoot              // the root
	SameOp                // the op
)

// Collective kinds as recorded in FlagKind.
const (
	CollBarrier = 1 + iota
	CollBcast
	CollReduce
	CollAllreduce
	CollGather
	CollGatherv
	CollScatter
	CollScatterv
	CollAllgather
	CollAllgatherv
	CollAlltoall
	CollAlltoallv
	CollReduceScatterBlock
	CollScan
	CollExscan
	// The communicator's other collective calls: each first runs a round
	// with its signature, so that a rank in one of them while another is
	// in a collective above is an error on both, not a hang.
	CollFree
	CollDup
	CollSplit
	CollCreate
	CollSplitType
	CollWinCreate // a window's creation over the communicator
	CollFinalize  // the world's, once it has a collective area
)

// CollLayout is where things are in the collective area of n ranks.
type CollLayout struct {
	N int
	// Parities is CollParities(N), Slots CollSlots(N).
	Parities, Slots int
	// Chunk is each staging buffer's length: a page multiple that shrinks
	// with n so the area stays near 2 MiB, from 64 KiB down to one page
	// (and never below 16 bytes a rank, which Alltoallv's counts need).
	Chunk int64
	// FlagsOff is rank 0's flag line of parity 0; rank q's line of parity
	// p is FlagOff(q, p).
	FlagsOff int64
	// IbarOff is rank 0's nonblocking-barrier block, IbarLen a block's
	// length: the Ibarrier line, then lines holding the P sleepers words
	// of the rank's flag lines (IbarFlagSleepers).
	IbarOff, IbarLen int64
	// StageOff is rank 0's staging buffer of parity 0 (page aligned).
	StageOff int64
	// Total is the area's size, a page multiple.
	Total int64
}

// NewCollLayout returns the collective area layout for n ranks on a
// machine whose page is page bytes.
func NewCollLayout(n int, page int64) CollLayout {
	chunk := min(max((2<<20)/(2*int64(n)), page), 64<<10)
	chunk = max(chunk, 16*int64(n))
	chunk, _ = shm.AlignUp(chunk, page)
	l := CollLayout{N: n, Parities: CollParities(n), Slots: CollSlots(n), Chunk: chunk, FlagsOff: page}
	l.IbarOff = l.FlagsOff + int64(l.Parities*n)*Line
	l.IbarLen, _ = shm.AlignUp(IbarFlagSleepers+4*int64(l.Parities), Line)
	l.StageOff, _ = shm.AlignUp(l.IbarOff+int64(n)*l.IbarLen, page)
	l.Total = l.StageOff + 2*int64(n)*chunk
	return l
}

// FlagOff is rank q's flag line of parity p.
func (l CollLayout) FlagOff(q, p int) int64 { return l.FlagsOff + int64(l.Parities*q+p)*Line }

// IbarLineOff is rank q's nonblocking-barrier line (its block).
func (l CollLayout) IbarLineOff(q int) int64 { return l.IbarOff + int64(q)*l.IbarLen }

// SleepersOff is the sleepers word of rank q's flag line of parity p.
func (l CollLayout) SleepersOff(q, p int) int64 {
	return l.IbarLineOff(q) + IbarFlagSleepers + 4*int64(p)
}

// SlotLen is a staging slot's length: a call of one round whose staged
// data fits it puts it in its round's slot of the buffer (CollSlot), and
// may then write it once every rank has published round r-2S+1 (S the
// slots), unless a round of its last 2S wrote more of the buffer.
func (l CollLayout) SlotLen() int64 { return l.Chunk / int64(l.Slots) }

// CollSlot is the slot of its staging buffer that round r of a call of
// one round uses in an area of s slots a buffer: (r/2) mod s, at
// CollSlot·SlotLen bytes into the buffer of parity r&1. The slot was last
// used by round r-2s.
func CollSlot(r uint32, s int) uint32 { return r >> 1 & uint32(s-1) }

// StagingOff is rank q's staging buffer of parity p.
func (l CollLayout) StagingOff(q, p int) int64 { return l.StageOff + int64(2*q+p)*l.Chunk }
