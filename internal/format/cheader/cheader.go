// Package cheader renders include/shmrun/format.h, the C view of package
// format's constants and layout math. It is shared by the generator
// (internal/format/gen, run by go generate) and by the test that fails when
// the checked-in header is stale.
package cheader

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/shm"
)

// def is one #define: a C name, its Go value, and what it is.
type def struct {
	name  string
	value any // an integer constant or a string
	doc   string
}

// section is a group of defines under a heading comment.
type section struct {
	title string
	defs  []def
}

func sections() []section {
	m := shm.Magic
	return []section{
		{"Common header (every segment; package shm)", []def{
			{"SHMRUN_FORMAT_VERSION", shm.FormatVersion, "format version this header describes"},
			{"SHMRUN_MAGIC", string(m[:]), "the 8 bytes at SHMRUN_HDR_MAGIC (compare 8 bytes, it holds a NUL)"},
			{"SHMRUN_KIND_CONTROL", shm.KindControl, "kind of the control segment"},
			{"SHMRUN_KIND_WINDOW", shm.KindWindow, "kind of a window segment"},
			{"SHMRUN_KIND_COLLECTIVE", shm.KindCollective, "kind of a communicator's collective area"},
			{"SHMRUN_KIND_INBOX", shm.KindInbox, "kind of a rank's point-to-point inbox"},
			{"SHMRUN_HDR_MAGIC", shm.OffMagic, "[8]byte magic"},
			{"SHMRUN_HDR_VERSION", shm.OffVersion, "uint32 format version"},
			{"SHMRUN_HDR_KIND", shm.OffKind, "uint32 kind"},
			{"SHMRUN_HDR_LEN", shm.OffHeaderLen, "uint64 header length: the checksummed area"},
			{"SHMRUN_HDR_TOTAL", shm.OffTotalSize, "uint64 total segment size"},
			{"SHMRUN_HDR_CHECKSUM", shm.OffChecksum, "uint32 CRC-32C of the header with this field as zero"},
			{"SHMRUN_HDR_RESERVED", shm.OffReserved, "uint32 zero"},
			{"SHMRUN_HDR_FIXED_LEN", shm.FixedHeaderLen, "kind-specific fields start here"},
			{"SHMRUN_LINE", format.Line, "bytes of a line: words written by one process sit on lines of their own"},
		}},
		{"Window segment header (kind SHMRUN_KIND_WINDOW)", []def{
			{"SHMRUN_WIN_RANKS", format.WinRanks, "uint32 ranks n"},
			{"SHMRUN_WIN_FLAVOR", format.WinFlavor, "uint32 flavor"},
			{"SHMRUN_WIN_FLAGS", format.WinFlags, "uint32 SHMRUN_FLAG_* bits"},
			{"SHMRUN_WIN_STRIPES", format.WinStripes, "uint32 lock stripes"},
			{"SHMRUN_WIN_SYNC_OFF", format.WinSyncOff, "uint64 sync block offset"},
			{"SHMRUN_WIN_SYNC_LEN", format.WinSyncLen, "uint64 sync block length"},
			{"SHMRUN_WIN_ALIGN", format.WinAlign, "uint64 per-rank alignment (noncontig)"},
			{"SHMRUN_WIN_TABLES", format.WinTables, "[n]uint64 sizes, [n]uint64 disp units, [n]uint64 data offsets"},
			{"SHMRUN_FLAVOR_SHARED", format.FlavorShared, "MPI_Win_allocate_shared"},
			{"SHMRUN_FLAVOR_ALLOCATE", format.FlavorAllocate, "MPI_Win_allocate"},
			{"SHMRUN_FLAVOR_CREATE", format.FlavorCreate, "MPI_Win_create: parts of size 0, the memory is the ranks' own"},
			{"SHMRUN_FLAVOR_DYNAMIC", format.FlavorDynamic, "MPI_Win_create_dynamic: each part is its rank's attach table"},
			{"SHMRUN_FLAG_NONCONTIG", format.FlagNoncontig, "each part on its own alignment boundary"},
			{"SHMRUN_FLAG_HUGE", format.FlagHuge, "huge pages asked for"},
			{"SHMRUN_FLAG_NO_RESERVE", format.FlagNoReserve, "parts not reserved at allocation"},
			{"SHMRUN_NUM_STRIPES", format.NumStripes, "accumulate lock stripes in a sync block"},
		}},
		{"Dynamic window attach table (a rank's part; offsets from its start)", []def{
			{"SHMRUN_ATTACH_SEQ", format.AttachSeq, "uint64 sequence: even while stable, odd while the owner edits"},
			{"SHMRUN_ATTACH_COUNT", format.AttachCount, "uint64 entries"},
			{"SHMRUN_ATTACH_ACCESS", format.AttachAccess, "SHMRUN_LINE/8 uint64 access slots of this rank as an origin"},
			{"SHMRUN_ATTACH_ENTRIES", format.AttachEntries, "first entry, sorted by base"},
			{"SHMRUN_ATTACH_ENTRY_LEN", format.AttachEntryLen, "bytes of an entry"},
			{"SHMRUN_ATTACH_BASE", format.AttachBase, "uint64 the region's address in its owner"},
			{"SHMRUN_ATTACH_LEN", format.AttachLen, "uint64 its length"},
			{"SHMRUN_ATTACH_MAP", format.AttachMap, "uint64 object id; 0: private memory"},
			{"SHMRUN_ATTACH_FILE_OFF", format.AttachFileOff, "uint64 the region's offset in the object"},
			{"SHMRUN_ATTACH_FILE_SIZE", format.AttachFileSize, "uint64 the object's size"},
			{"SHMRUN_ATTACH_INO", format.AttachIno, "uint64 the object's inode"},
			{"SHMRUN_ATTACH_FD", format.AttachFD, "uint32 the object's descriptor in its owner"},
			{"SHMRUN_DEFAULT_MAX_ATTACH", format.DefaultMaxAttach, "entries of a table unless shmrun_max_attach says"},
		}},
		{"Sync block lines (offsets from the line's start)", []def{
			{"SHMRUN_GLOBAL_HOLDERS", format.GlobalHolders, "uint64: A (LockAll holders) bits 0-31, Q (LockAll calls waiting) bits 32-63"},
			{"SHMRUN_GLOBAL_SEQ", format.GlobalSeq, "uint32 event seq"},
			{"SHMRUN_GLOBAL_SLEEPERS", format.GlobalSleepers, "uint32 event sleepers"},
			{"SHMRUN_LOCK_WORD", format.LockWord, "uint64 lock word L[r]; its low half is the futex word"},
			{"SHMRUN_LOCK_SLEEPERS", format.LockSleepers, "uint32 sleepers on L[r]'s low half"},
			{"SHMRUN_BELL_SEQ", format.BellSeq, "uint32 doorbell seq"},
			{"SHMRUN_BELL_SLEEPERS", format.BellSleepers, "uint32 doorbell sleepers"},
			{"SHMRUN_FENCE_WORD", format.FenceWord, "[2]uint64 fence words: generation (low half), failure code (high)"},
			{"SHMRUN_FENCE_SLEEPERS", format.FenceSleepers, "[2]uint32 sleepers on the fence words' low halves"},
			{"SHMRUN_FLAG_FENCE_RANKS", format.FlagFenceRanks, "most ranks whose Fence uses the fence words"},
		}},
		{"Lock word L[r]: W bits 0-14, R bits 16-30, X bits 32-47, T bits 49-63", []def{
			{"SHMRUN_LOCK_COUNTER_MASK", uint64(format.LockCounterMask), "W, R and T are 15-bit counters"},
			{"SHMRUN_LOCK_X_MASK", uint64(format.LockXMask), "X is 16 bits"},
			{"SHMRUN_LOCK_R_SHIFT", format.LockRShift, ""},
			{"SHMRUN_LOCK_X_SHIFT", format.LockXShift, ""},
			{"SHMRUN_LOCK_T_SHIFT", format.LockTShift, ""},
			{"SHMRUN_LOCK_GUARDS", uint64(format.LockGuards), "carry guards of W and R: clear with an atomic AND when an add's result has one"},
			{"SHMRUN_LOCK_EXCLUSIVE", uint64(format.LockExclusive), "exclusive lock: draw a ticket, raise X"},
			{"SHMRUN_LOCKALL_HOLDERS", uint64(format.LockAllHolders), "mask of A in the global word"},
			{"SHMRUN_LOCKALL_WAITER", uint64(format.LockAllWaiter), "a waiting LockAll's add to the global word (Q++)"},
			{"SHMRUN_LOCK_EXCLUSIVE_UNLOCK", uint64(format.LockExclusiveUnlock), "exclusive unlock: W++, R++, X-- (mod 2^64)"},
			{"SHMRUN_LOCK_SHARED", uint64(format.LockShared), "shared lock: draw a ticket"},
			{"SHMRUN_LOCK_ONE_R", uint64(format.LockOneR), "shared lock once admitted: R++"},
			{"SHMRUN_LOCK_SHARED_UNLOCK", uint64(format.LockSharedUnlock), "shared unlock: W++"},
		}},
		{"Barrier line (package barrier)", []def{
			{"SHMRUN_BARRIER_LEN", barrier.LineLen, "bytes of a barrier"},
			{"SHMRUN_BARRIER_STATE", barrier.OffState, "uint64 state"},
			{"SHMRUN_BARRIER_GEN", barrier.OffGen, "uint32 generation, the futex word"},
			{"SHMRUN_BARRIER_SLEEPERS", barrier.OffSleepers, "uint32 sleepers"},
			{"SHMRUN_BARRIER_FAIL", barrier.OffFail, "[2]uint32 failure codes of even and odd rounds"},
			{"SHMRUN_BARRIER_COUNT_MASK", uint64(barrier.CountMask), "arrivals in the state word"},
			{"SHMRUN_BARRIER_FAILED_BIT", uint64(barrier.FailedBit), "a failure was reported this round"},
		}},
		{"Accumulate lock stripes (package atomics)", []def{
			{"SHMRUN_STRIPE_LEN", atomics.StripeLen, "bytes of a stripe"},
			{"SHMRUN_STRIPE_LOCK", atomics.StripeOffLock, "uint32 lock word"},
			{"SHMRUN_STRIPE_SEQ", atomics.StripeOffSeq, "uint32 futex word"},
			{"SHMRUN_STRIPE_SLEEPERS", atomics.StripeOffSleepers, "uint32 sleepers"},
			{"SHMRUN_STRIPE_FREE", atomics.StripeFree, "lock word: free"},
			{"SHMRUN_STRIPE_HELD", atomics.StripeHeld, "lock word: held"},
			{"SHMRUN_STRIPE_GRANULE_SHIFT", atomics.StripeGranuleShift, "segment offset >> this is the granule"},
			{"SHMRUN_STRIPE_HASH_K", uint64(atomics.StripeHashK), "Fibonacci multiplier of the granule"},
		}},
		{"Control segment (kind SHMRUN_KIND_CONTROL; its header is one page)", []def{
			{"SHMRUN_CTL_RANKS", format.CtlRanks, "uint32 ranks n"},
			{"SHMRUN_CTL_SLOT_LEN", format.CtlSlotLen, "uint32 exchange slot length"},
			{"SHMRUN_CTL_JOB", format.CtlJob, "[SHMRUN_CTL_JOB_LEN]byte job id, zero-padded"},
			{"SHMRUN_CTL_JOB_LEN", format.CtlJobLen, ""},
			{"SHMRUN_SLOT_LEN", format.SlotLen, "bytes of one exchange slot"},
			{"SHMRUN_MAX_RANKS", format.MaxRanks, "ranks of one job at most"},
			{"SHMRUN_ABORT_STATE", format.AbortState, "uint32 abort state (abort line)"},
			{"SHMRUN_ABORT_CODE", format.AbortCode, "uint32 exit code asked by Abort"},
			{"SHMRUN_ABORT_RANK", format.AbortRank, "uint32 rank that called Abort"},
			{"SHMRUN_ABORT_NONE", format.AbortNone, "running"},
			{"SHMRUN_ABORT_LAUNCHER", format.AbortLauncher, "the launcher is ending the job"},
			{"SHMRUN_ABORT_BY_RANK", format.AbortByRank, "a rank called Abort"},
			{"SHMRUN_ABORT_CLAIMED", format.AbortClaimed, "a rank calling Abort writes code and rank"},
			{"SHMRUN_RANK_STATE", format.RankState, "uint32 rank state (rank line)"},
			{"SHMRUN_RANK_PID", format.RankPID, "uint32 pid (rank line)"},
			{"SHMRUN_RANK_STARTED", format.RankStarted, ""},
			{"SHMRUN_RANK_INIT", format.RankInit, "after Init"},
			{"SHMRUN_RANK_FINALIZED", format.RankFinalized, "after Finalize"},
			{"SHMRUN_RANK_FINALIZING", format.RankFinalizing, "in Finalize"},
			{"SHMRUN_MAX_COMMS", format.MaxComms, "communicator table entries"},
			{"SHMRUN_COMM_STATE", format.CommState, "uint32 entry state (entry header line)"},
			{"SHMRUN_COMM_MEMBERS", format.CommMembers, "uint32 members n"},
			{"SHMRUN_COMM_DEPARTED", format.CommDeparted, "uint32 members that freed it"},
			{"SHMRUN_COMM_GEN", format.CommGen, "uint32 claims so far"},
			{"SHMRUN_COMM_FREE", format.CommFree, "entry state: free"},
			{"SHMRUN_COMM_USED", format.CommUsed, "entry state: claimed"},
			{"SHMRUN_MBOX_STATE", format.MboxState, "uint32 mailbox state (mailbox line)"},
			{"SHMRUN_MBOX_SEQ", format.MboxSeq, "uint32 event seq (futex word)"},
			{"SHMRUN_MBOX_SLEEPERS", format.MboxSleepers, "uint32 event sleepers"},
			{"SHMRUN_MBOX_ENTRY", format.MboxEntry, "int32 entry, -1: the claim failed"},
			{"SHMRUN_MBOX_GEN", format.MboxGen, "uint32 the entry's claim number"},
			{"SHMRUN_MBOX_TAG", format.MboxTag, "int64 the call's tag"},
			{"SHMRUN_MBOX_KEY", format.MboxKey, "uint64 hash of the group's world ranks and the parent's context"},
			{"SHMRUN_MBOX_EMPTY", format.MboxEmpty, "mailbox state: empty"},
			{"SHMRUN_MBOX_FULL", format.MboxFull, "mailbox state: full"},
			{"SHMRUN_MBOX_BUSY", format.MboxBusy, "mailbox state: a writer is storing the fields"},
		}},
		{"Collective area (kind SHMRUN_KIND_COLLECTIVE)", []def{
			{"SHMRUN_COLL_RANKS", format.CollRanks, "uint32 ranks n"},
			{"SHMRUN_COLL_CHUNK", format.CollChunk, "uint32 staging buffer length C"},
			{"SHMRUN_COLL_CHECK", format.CollCheck, "the checker's record (n > 2), a line of the header page"},
			{"SHMRUN_CHECK_DONE", format.CheckDone, "uint32 every round through it compared by rank 0 (a release)"},
			{"SHMRUN_CHECK_COUNT", format.CheckCount, "uint32 2 x mismatches found, +1 while one is written"},
			{"SHMRUN_CHECK_ROUND", format.CheckRound, "uint32 the last mismatch's round"},
			{"SHMRUN_CHECK_RANK", format.CheckRank, "int32 the rank whose signature failed or differs"},
			{"SHMRUN_CHECK_SAME", format.CheckSame, "uint8 the fields that must match, SHMRUN_SAME_*"},
			{"SHMRUN_CHECK_SIG0", format.CheckSig0, "[16]byte rank 0's signature words"},
			{"SHMRUN_CHECK_SIGQ", format.CheckSigQ, "[16]byte that rank's"},
			{"SHMRUN_FLAG_SEQ", format.FlagSeq, "uint32 round last published: the futex word (flag line)"},
			{"SHMRUN_FLAG_KIND", format.FlagKind, "uint8 the call, SHMRUN_COLL_*"},
			{"SHMRUN_FLAG_TYPE", format.FlagType, "uint8 element type"},
			{"SHMRUN_FLAG_TYPE_BYTES", format.FlagTypeBytes, "element type of data of MPI_BYTE only, counted in bytes"},
			{"SHMRUN_FLAG_TYPE_MIXED", format.FlagTypeMixed, "element type of data mixing basic types, counted in bytes"},
			{"SHMRUN_FLAG_OP", format.FlagOp, "uint8 reduction op, SHMRUN_OP_USER, or 0"},
			{"SHMRUN_FLAG_FAILED", format.FlagFailed, "uint8 0, or 1 + the class of this rank's argument error"},
			{"SHMRUN_FLAG_ROOT", format.FlagRoot, "int32 root or -1"},
			{"SHMRUN_FLAG_COUNT", format.FlagCount, "uint64 the count the call checks"},
			{"SHMRUN_FLAG_INLINE", format.FlagInline, "[SHMRUN_INLINE_LEN]byte inline data"},
			{"SHMRUN_INLINE_LEN", format.InlineLen, "inline bytes of a flag line"},
			{"SHMRUN_SINGLE_BCAST", format.SingleBcast, "bytes from which a Bcast moves by process_vm_readv"},
			{"SHMRUN_SINGLE_ALLREDUCE", format.SingleAllreduce, "bytes from which an Allreduce does"},
			{"SHMRUN_SINGLE_PID", format.SinglePID, "int32 process id (inline bytes, first round)"},
			{"SHMRUN_SINGLE_SEND", format.SingleSend, "uint64 send buffer address"},
			{"SHMRUN_SINGLE_RECV", format.SingleRecv, "uint64 receive buffer address"},
			{"SHMRUN_SINGLE_FAILED", format.SingleFailed, "uint8 later rounds: this rank's reads failed"},
			{"SHMRUN_IBAR_SEQ", format.IbarSeq, "uint32 Ibarrier calls made: the futex word (Ibarrier line)"},
			{"SHMRUN_IBAR_SLEEPERS", format.IbarSleepers, "uint32 waiters in the futex phase"},
			{"SHMRUN_IBAR_FLAG_SLEEPERS", format.IbarFlagSleepers, "[P]uint32 waiters on the rank's flag lines (parity 0, 1, ...), in its Ibarrier block"},
			{"SHMRUN_OP_USER", format.OpUser, "a user-defined op in a signature"},
			{"SHMRUN_SAME_COUNT", format.SameCount, "the ranks must agree on the count"},
			{"SHMRUN_SAME_ROOT", format.SameRoot, "the ranks must agree on the root"},
			{"SHMRUN_SAME_OP", format.SameOp, "the ranks must agree on the op"},
			{"SHMRUN_COLL_BARRIER", format.CollBarrier, ""},
			{"SHMRUN_COLL_BCAST", format.CollBcast, ""},
			{"SHMRUN_COLL_REDUCE", format.CollReduce, ""},
			{"SHMRUN_COLL_ALLREDUCE", format.CollAllreduce, ""},
			{"SHMRUN_COLL_GATHER", format.CollGather, ""},
			{"SHMRUN_COLL_GATHERV", format.CollGatherv, ""},
			{"SHMRUN_COLL_SCATTER", format.CollScatter, ""},
			{"SHMRUN_COLL_SCATTERV", format.CollScatterv, ""},
			{"SHMRUN_COLL_ALLGATHER", format.CollAllgather, ""},
			{"SHMRUN_COLL_ALLGATHERV", format.CollAllgatherv, ""},
			{"SHMRUN_COLL_ALLTOALL", format.CollAlltoall, ""},
			{"SHMRUN_COLL_ALLTOALLV", format.CollAlltoallv, ""},
			{"SHMRUN_COLL_REDUCE_SCATTER_BLOCK", format.CollReduceScatterBlock, ""},
			{"SHMRUN_COLL_SCAN", format.CollScan, ""},
			{"SHMRUN_COLL_EXSCAN", format.CollExscan, ""},
			{"SHMRUN_COLL_FREE", format.CollFree, ""},
			{"SHMRUN_COLL_DUP", format.CollDup, ""},
			{"SHMRUN_COLL_SPLIT", format.CollSplit, ""},
			{"SHMRUN_COLL_CREATE", format.CollCreate, ""},
			{"SHMRUN_COLL_SPLIT_TYPE", format.CollSplitType, ""},
			{"SHMRUN_COLL_WIN_CREATE", format.CollWinCreate, ""},
			{"SHMRUN_COLL_FINALIZE", format.CollFinalize, ""},
		}},
		{"Special ranks, tags and comparison results (the MPI 5.0 standard ABI's values)", []def{
			{"SHMRUN_UNDEFINED", format.Undefined, "MPI_UNDEFINED"},
			{"SHMRUN_PROC_NULL", format.ProcNull, "MPI_PROC_NULL"},
			{"SHMRUN_ANY_SOURCE", format.AnySource, "MPI_ANY_SOURCE"},
			{"SHMRUN_ROOT", format.Root, "MPI_ROOT"},
			{"SHMRUN_ANY_TAG", format.AnyTag, "MPI_ANY_TAG"},
			{"SHMRUN_IDENT", format.Ident, "MPI_IDENT"},
			{"SHMRUN_CONGRUENT", format.Congruent, "MPI_CONGRUENT"},
			{"SHMRUN_SIMILAR", format.Similar, "MPI_SIMILAR"},
			{"SHMRUN_UNEQUAL", format.Unequal, "MPI_UNEQUAL"},
		}},
		{"Rank line of the control segment (offsets from the line's start; written by the rank)", []def{
			{"SHMRUN_RANK_STATE", format.RankState, "uint32 SHMRUN_RANK_STARTED, _INIT or _FINALIZED"},
			{"SHMRUN_RANK_PID", format.RankPID, "uint32 pid"},
			{"SHMRUN_RANK_INBOX", format.RankInbox, "uint32 the rank's descriptor of its inbox"},
			{"SHMRUN_RANK_SLEEPERS", format.RankSleepers, "uint32 goroutines asleep in a wait"},
			{"SHMRUN_RANK_WAKES", format.RankWakes, "uint32 waits ended after a sleep"},
			{"SHMRUN_RANK_WAIT_KIND", format.RankWaitKind, "uint32 what a sleeper waits for (the last asleep)"},
			{"SHMRUN_RANK_WAIT_PEER", format.RankWaitPeer, "int32 its peer's world rank or -1"},
			{"SHMRUN_RANK_WAIT_TAG", format.RankWaitTag, "int32 its tag or SHMRUN_ANY_TAG"},
			{"SHMRUN_RANK_STARTED", format.RankStarted, ""},
			{"SHMRUN_RANK_INIT", format.RankInit, ""},
			{"SHMRUN_RANK_FINALIZED", format.RankFinalized, ""},
			{"SHMRUN_RANK_FINALIZING", format.RankFinalizing, ""},
		}},
		{"Inbox (kind SHMRUN_KIND_INBOX)", []def{
			{"SHMRUN_INBOX_RANKS", format.InboxRanks, "uint32 ranks n"},
			{"SHMRUN_INBOX_RING", format.InboxRing, "uint32 ring bytes R per sender"},
			{"SHMRUN_TAIL_POS", format.TailPos, "uint64 bytes of the sender's ring consumed and given back (tail line)"},
			{"SHMRUN_JOB_ID", format.JobID, "uint64 the receiver's request of the open job, 0 for none (job line)"},
			{"SHMRUN_JOB_CLAIM", format.JobClaim, "uint64 claim word (job line)"},
			{"SHMRUN_JOB_CHUNKS", format.JobChunks, "uint32 chunk count (job line)"},
			{"SHMRUN_JOB_BACK_SHIFT", format.JobBackShift, "claim word: chunks taken from the back"},
			{"SHMRUN_JOB_TAG_SHIFT", format.JobTagShift, "claim word: the job's tag"},
			{"SHMRUN_JOB_COUNT_MASK", format.JobCountMask, ""},
			{"SHMRUN_JOB_TAG_MASK", format.JobTagMask, ""},
			{"SHMRUN_PKT_STAMP", format.PktStamp, "uint32 the packet's number in its ring, stored last"},
			{"SHMRUN_PKT_KIND", format.PktKind, "uint8 SHMRUN_PKT_EAGER..SHMRUN_PKT_WROTE"},
			{"SHMRUN_PKT_SIG", format.PktSig, "uint24 type signature digest, bytes 5..7"},
			{"SHMRUN_PKT_CTX", format.PktCtx, "uint32 communicator context"},
			{"SHMRUN_PKT_TAG", format.PktTag, "int32 tag"},
			{"SHMRUN_PKT_OFFSET", format.PktOffset, "uint64 byte offset in the message (Data, Wrote)"},
			{"SHMRUN_PKT_SIZE", format.PktSize, "uint64 message or chunk bytes"},
			{"SHMRUN_PKT_ID", format.PktID, "uint64 a request"},
			{"SHMRUN_PKT_HEADER", format.PktHeader, "payload starts here"},
			{"SHMRUN_PKT_CELL", format.PktCell, "packets are whole cells"},
			{"SHMRUN_RTS_ADDR", format.RTSAddr, "uint64 the sender's buffer address (RTS)"},
			{"SHMRUN_CTS_RECV_ID", format.CTSRecvID, "uint64 the receiver's request (CTS)"},
			{"SHMRUN_CTS_ACCEPT", format.CTSAccept, "uint64 bytes the receiver takes (CTS)"},
			{"SHMRUN_CTS_ADDR", format.CTSAddr, "uint64 the receiver's buffer address, 0: no writes in place (CTS)"},
			{"SHMRUN_PKT_EAGER", format.PktEager, ""},
			{"SHMRUN_PKT_SYNC", format.PktSync, ""},
			{"SHMRUN_PKT_RTS", format.PktRTS, ""},
			{"SHMRUN_PKT_CTS", format.PktCTS, ""},
			{"SHMRUN_PKT_DATA", format.PktData, ""},
			{"SHMRUN_PKT_FIN", format.PktFin, ""},
			{"SHMRUN_PKT_SKIP", format.PktSkip, ""},
			{"SHMRUN_PKT_WROTE", format.PktWrote, ""},
		}},
		{"Environment of a rank", []def{
			{"SHMRUN_ENV_JOB", format.EnvJob, "job id (hex)"},
			{"SHMRUN_ENV_RANK", format.EnvRank, "this rank"},
			{"SHMRUN_ENV_SIZE", format.EnvSize, "number of ranks"},
			{"SHMRUN_ENV_LOCAL_RANK", format.EnvLocalRank, "rank on this node"},
			{"SHMRUN_ENV_APPNUM", format.EnvAppNum, "number of the rank's program on the command line (MPI_APPNUM)"},
			{"SHMRUN_ENV_CONTROL_FD", format.EnvControlFD, "descriptor of the control segment"},
			{"SHMRUN_ENV_SHM_DIR", format.EnvShmDir, "directory of window segments"},
			{"SHMRUN_ENV_SHM", format.EnvShm, "window backing: auto, dir or memfd"},
			{"SHMRUN_ENV_SINGLE_COPY", format.EnvSingleCopy, "on or off: may ranks read each other's memory"},
			{"SHMRUN_ENV_WAIT", format.EnvWait, "wait policy"},
			{"SHMRUN_CONTROL_FD", format.ControlFD, "the descriptor the launcher passes the control segment on"},
		}},
	}
}

// functions is the layout math of package format in C. Each function names
// the Go function it mirrors; the gcc test compares their results.
const functions = `
/* Window header tables (format.WinHeaderLen, WinSizeOff, WinDispUnitOff, WinDataOffOff). */
static inline uint64_t shmrun_win_header_len(uint64_t n) { return SHMRUN_WIN_TABLES + 24 * n; }
static inline uint64_t shmrun_win_size_off(uint64_t r) { return SHMRUN_WIN_TABLES + 8 * r; }
static inline uint64_t shmrun_win_disp_unit_off(uint64_t n, uint64_t r) { return SHMRUN_WIN_TABLES + 8 * (n + r); }
static inline uint64_t shmrun_win_data_off_off(uint64_t n, uint64_t r) { return SHMRUN_WIN_TABLES + 8 * (2 * n + r); }

/* Sync block of n ranks, offsets from its start (format.NewSyncLayout). */
static inline uint64_t shmrun_sync_row_len(uint64_t n) { return (4 * n + SHMRUN_LINE - 1) & ~(uint64_t)(SHMRUN_LINE - 1); }
static inline uint64_t shmrun_sync_fence(void) { return 0; }
static inline uint64_t shmrun_sync_global(void) { return shmrun_sync_fence() + SHMRUN_BARRIER_LEN; }
static inline uint64_t shmrun_sync_ranks(void) { return shmrun_sync_global() + SHMRUN_LINE; }
static inline uint64_t shmrun_sync_lock(uint64_t r) { return shmrun_sync_ranks() + 2 * SHMRUN_LINE * r; }
static inline uint64_t shmrun_sync_doorbell(uint64_t r) { return shmrun_sync_lock(r) + SHMRUN_LINE; }
static inline uint64_t shmrun_sync_post_base(uint64_t n) { return shmrun_sync_ranks() + 2 * SHMRUN_LINE * n; }
static inline uint64_t shmrun_sync_complete_base(uint64_t n) { return shmrun_sync_post_base(n) + shmrun_sync_row_len(n) * n; }
static inline uint64_t shmrun_sync_stripes(uint64_t n) { return shmrun_sync_complete_base(n) + shmrun_sync_row_len(n) * n; }
static inline uint64_t shmrun_sync_total(uint64_t n) { return shmrun_sync_stripes(n) + (uint64_t)SHMRUN_NUM_STRIPES * SHMRUN_STRIPE_LEN; }
/* post[origin][target]: Posts by target whose group held origin (written by target). */
static inline uint64_t shmrun_sync_post(uint64_t n, uint64_t origin, uint64_t target) { return shmrun_sync_post_base(n) + shmrun_sync_row_len(n) * origin + 4 * target; }
/* complete[target][origin]: Completes by origin toward target (written by origin). */
static inline uint64_t shmrun_sync_complete(uint64_t n, uint64_t target, uint64_t origin) { return shmrun_sync_complete_base(n) + shmrun_sync_row_len(n) * target + 4 * origin; }

/* Lock word fields. */
static inline uint64_t shmrun_lock_w(uint64_t v) { return v & SHMRUN_LOCK_COUNTER_MASK; }
static inline uint64_t shmrun_lock_r(uint64_t v) { return (v >> SHMRUN_LOCK_R_SHIFT) & SHMRUN_LOCK_COUNTER_MASK; }
static inline uint64_t shmrun_lock_x(uint64_t v) { return (v >> SHMRUN_LOCK_X_SHIFT) & SHMRUN_LOCK_X_MASK; }
/* The ticket drawn by the add whose result is v. */
static inline uint64_t shmrun_lock_ticket(uint64_t v) { return ((v >> SHMRUN_LOCK_T_SHIFT) - 1) & SHMRUN_LOCK_COUNTER_MASK; }

/* The stripe guarding the element at segment offset off (atomics.Stripes.Index); nstripes is a power of two. */
static inline uint64_t shmrun_stripe_index(uint64_t off, uint64_t nstripes) { return (((off >> SHMRUN_STRIPE_GRANULE_SHIFT) * SHMRUN_STRIPE_HASH_K) >> 32) & (nstripes - 1); }

/* Control segment of n ranks; page is the control header's length (format.NewControlLayout). */
static inline uint64_t shmrun_ctl_abort(uint64_t page) { return page; }
static inline uint64_t shmrun_ctl_barrier(uint64_t page) { return shmrun_ctl_abort(page) + SHMRUN_LINE; }
static inline uint64_t shmrun_ctl_wake(uint64_t page) { return shmrun_ctl_barrier(page) + SHMRUN_BARRIER_GEN; }
static inline uint64_t shmrun_ctl_rank(uint64_t page, uint64_t r) { return shmrun_ctl_barrier(page) + SHMRUN_LINE + SHMRUN_LINE * r; }
static inline uint64_t shmrun_ctl_slots(uint64_t page, uint64_t n, uint64_t parity) { return shmrun_ctl_rank(page, n) + parity * n * SHMRUN_SLOT_LEN; }
static inline uint64_t shmrun_ctl_comm_len(uint64_t n) { return 2 * SHMRUN_LINE + 2 * n * SHMRUN_SLOT_LEN; }
static inline uint64_t shmrun_ctl_comm(uint64_t page, uint64_t n, uint64_t e) { return shmrun_ctl_slots(page, n, 2) + e * shmrun_ctl_comm_len(n); }
static inline uint64_t shmrun_ctl_mbox(uint64_t page, uint64_t n, uint64_t r) { return shmrun_ctl_comm(page, n, SHMRUN_MAX_COMMS) + r * SHMRUN_LINE; }
static inline uint64_t shmrun_ctl_total(uint64_t page, uint64_t n) { return (shmrun_ctl_mbox(page, n, n) + page - 1) & ~(page - 1); }

/* Collective area of n ranks (format.NewCollLayout). */
static inline uint64_t shmrun_coll_align(uint64_t x, uint64_t page) { return (x + page - 1) & ~(page - 1); }
static inline uint64_t shmrun_coll_chunk(uint64_t n, uint64_t page)
{
	uint64_t c = (2u << 20) / (2 * n);
	if (c < page) c = page;
	if (c > (64u << 10)) c = 64u << 10;
	if (c < 16 * n) c = 16 * n;
	return shmrun_coll_align(c, page);
}
static inline uint64_t shmrun_coll_parities(uint64_t n) { uint64_t p = 64; while (p > 8 && p * n > 4096) p /= 2; return n <= 2 ? 2 : p; }
static inline uint64_t shmrun_coll_slots(uint64_t n) { return n <= 2 ? 1 : 4; }
static inline uint64_t shmrun_coll_flag(uint64_t page, uint64_t n, uint64_t q, uint64_t parity) { return page + (shmrun_coll_parities(n) * q + parity) * SHMRUN_LINE; }
static inline uint64_t shmrun_coll_ibar_len(uint64_t n) { return (SHMRUN_IBAR_FLAG_SLEEPERS + 4 * shmrun_coll_parities(n) + SHMRUN_LINE - 1) / SHMRUN_LINE * SHMRUN_LINE; }
static inline uint64_t shmrun_coll_ibar(uint64_t page, uint64_t n, uint64_t q) { return page + shmrun_coll_parities(n) * n * SHMRUN_LINE + q * shmrun_coll_ibar_len(n); }
static inline uint64_t shmrun_coll_sleepers(uint64_t page, uint64_t n, uint64_t q, uint64_t parity) { return shmrun_coll_ibar(page, n, q) + SHMRUN_IBAR_FLAG_SLEEPERS + 4 * parity; }
static inline uint64_t shmrun_coll_stage_base(uint64_t page, uint64_t n) { return shmrun_coll_align(shmrun_coll_ibar(page, n, n), page); }
static inline uint64_t shmrun_coll_staging(uint64_t page, uint64_t n, uint64_t q, uint64_t parity) { return shmrun_coll_stage_base(page, n) + (2 * q + parity) * shmrun_coll_chunk(n, page); }
static inline uint64_t shmrun_coll_total(uint64_t page, uint64_t n) { return shmrun_coll_staging(page, n, n, 0); }
static inline uint64_t shmrun_coll_slot_len(uint64_t page, uint64_t n) { return shmrun_coll_chunk(n, page) / shmrun_coll_slots(n); }
static inline uint64_t shmrun_coll_slot(uint32_t r, uint64_t n) { return (r >> 1) & (shmrun_coll_slots(n) - 1); }

/* Inbox of a world of n ranks (format.NewInboxLayout, P2PRing, P2PEager, P2PChunk). */
static inline uint64_t shmrun_p2p_ring(uint64_t n) { return n <= 8 ? 64u << 10 : n <= 16 ? 32u << 10 : n <= 64 ? 16u << 10 : n <= 1024 ? 4u << 10 : 1u << 10; }
static inline uint64_t shmrun_p2p_eager(uint64_t ring) { uint64_t e = ring / 4 - SHMRUN_PKT_HEADER; return e < 8192 ? e : 8192; }
static inline uint64_t shmrun_p2p_chunk(uint64_t ring) { return ring >= (32u << 10) ? ring / 4 - SHMRUN_PKT_CELL : ring / 2 - SHMRUN_PKT_CELL; }
static inline uint64_t shmrun_inbox_bell(uint64_t page) { return page; }
static inline uint64_t shmrun_inbox_tail(uint64_t page, uint64_t s) { return page + SHMRUN_LINE + s * SHMRUN_LINE; }
static inline uint64_t shmrun_inbox_job(uint64_t page, uint64_t n, uint64_t s) { return shmrun_inbox_tail(page, n) + s * SHMRUN_LINE; }
static inline uint64_t shmrun_inbox_ring(uint64_t page, uint64_t n, uint64_t s) { return ((shmrun_inbox_job(page, n, n) + page - 1) & ~(page - 1)) + s * shmrun_p2p_ring(n); }
static inline uint64_t shmrun_inbox_total(uint64_t page, uint64_t n) { return shmrun_inbox_ring(page, n, n); }
`

// Render returns the header's bytes.
func Render() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`/* Code generated by go generate ./internal/format; DO NOT EDIT. */

/*
 * shmrun's cross-process formats for C code attached to shmrun segments:
 * offsets, bit fields, states, environment names and layout math, generated
 * from their Go definitions (internal/format, shm, barrier, atomics).
 * docs/FORMAT.md says how each word is used. All integers are
 * little-endian; offsets are bytes, never addresses.
 */
#ifndef SHMRUN_FORMAT_H
#define SHMRUN_FORMAT_H

#include <stdint.h>
`)
	for _, s := range sections() {
		fmt.Fprintf(&b, "\n/* %s */\n", s.title)
		for _, d := range s.defs {
			v, err := cValue(d.value)
			if err != nil {
				return nil, fmt.Errorf("cheader: %s: %w", d.name, err)
			}
			if d.doc != "" {
				fmt.Fprintf(&b, "#define %s %s /* %s */\n", d.name, v, d.doc)
			} else {
				fmt.Fprintf(&b, "#define %s %s\n", d.name, v)
			}
		}
	}
	b.WriteString(functions)
	b.WriteString("\n#endif /* SHMRUN_FORMAT_H */\n")
	return b.Bytes(), nil
}

// cValue spells a Go constant as a C expression: small integers in decimal,
// 64-bit ones as UINT64_C in hex, strings as C string literals.
func cValue(v any) (string, error) {
	switch x := v.(type) {
	case string:
		var b bytes.Buffer
		b.WriteByte('"')
		for i := 0; i < len(x); i++ {
			c := x[i]
			if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
				b.WriteByte(c)
			} else {
				fmt.Fprintf(&b, "\\%03o", c)
			}
		}
		b.WriteByte('"')
		return b.String(), nil
	case uint64:
		if x > 1<<31-1 {
			return fmt.Sprintf("UINT64_C(%#x)", x), nil
		}
		return strconv.FormatUint(x, 10), nil
	case int:
		return strconv.Itoa(x), nil
	case uint32:
		return strconv.FormatUint(uint64(x), 10), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	}
	return "", fmt.Errorf("no C spelling for a %T", v)
}
