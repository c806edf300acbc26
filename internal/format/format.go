package format

import (
	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/shm"
)

// Line is the unit shared words are spread over: words one process writes
// while others read never share a Line with unrelated words.
const Line = shm.CacheLine

// Window segment header (kind shm.KindWindow), after the common fixed header:
// byte offsets from the segment's start, little-endian.
const (
	WinRanks   = shm.FixedHeaderLen // uint32 ranks n
	WinFlavor  = WinRanks + 4       // uint32 Flavor*
	WinFlags   = WinFlavor + 4      // uint32 Flag* bits
	WinStripes = WinFlags + 4       // uint32 lock stripes (NumStripes)
	WinSyncOff = WinStripes + 4     // uint64 sync block offset
	WinSyncLen = WinSyncOff + 8     // uint64 sync block length
	WinAlign   = WinSyncLen + 8     // uint64 per-rank alignment of the noncontig layout
	WinTables  = WinAlign + 8       // [n]uint64 sizes, [n]uint64 disp units, [n]uint64 data offsets
)

// WinHeaderLen is the header length of a window segment of n ranks.
func WinHeaderLen(n int) int64 { return WinTables + 24*int64(n) }

// WinSizeOff is where rank r's part size (uint64) sits in a window header.
func WinSizeOff(r int) int64 { return WinTables + 8*int64(r) }

// WinDispUnitOff is where rank r's disp unit (uint64) sits in the header of
// a window of n ranks.
func WinDispUnitOff(n, r int) int64 { return WinTables + 8*int64(n+r) }

// WinDataOffOff is where rank r's data offset (uint64) sits in the header of
// a window of n ranks.
func WinDataOffOff(n, r int) int64 { return WinTables + 8*int64(2*n+r) }

// Window flavors as recorded in the header (MPI_WIN_FLAVOR_*).
const (
	FlavorShared   = 1 // MPI_Win_allocate_shared
	FlavorAllocate = 2 // MPI_Win_allocate
	FlavorCreate   = 3 // MPI_Win_create: no data parts; the memory is the ranks' own
	FlavorDynamic  = 4 // MPI_Win_create_dynamic: each rank's part is its attach table
)

// Window header flags.
const (
	FlagNoncontig = 1 << 0 // alloc_shared_noncontig: each part on its own alignment boundary
	FlagHuge      = 1 << 1 // huge pages asked for: 2 MiB alignment
	FlagNoReserve = 1 << 2 // no reservation of the parts at allocation
)

// NumStripes is the number of accumulate lock stripes in a window's sync
// block (a power of two; the header records it).
const NumStripes = 256

// Words of the sync block's lines, as offsets from the line's start.
const (
	GlobalHolders  = 0  // uint64: A, the LockAll holders, in bits 0-31; Q, the LockAll calls waiting for writers, in bits 32-63
	GlobalSeq      = 8  // uint32 event seq of the global line
	GlobalSleepers = 12 // uint32 event sleepers of the global line

	LockWord     = 0 // uint64 lock word L[r]; its low half is the futex word
	LockSleepers = 8 // uint32 sleepers on L[r]'s low half

	BellSeq      = 0 // uint32 doorbell seq (PSCW)
	BellSleepers = 4 // uint32 doorbell sleepers

	// The fence words of a window of up to FlagFenceRanks ranks, on the
	// doorbell line: word p holds, for the rank's fences g with g&1 == p,
	// g in its low half (the futex word) and the failure code the rank
	// arrived with in its high half (FORMAT.md). Their sleepers sit in the
	// line's second hardware line: a rank loads them right after storing
	// its word, which the other rank polls, and a load from the same
	// hardware line would wait for that store's transfer (~15 ns a Fence).
	FenceWord      = 8  // [2]uint64 fence words of parities 0 and 1
	FenceSleepers  = 64 // [2]uint32 sleepers on the fence words' low halves
	FlagFenceRanks = 2  // the most ranks whose Fence uses the fence words
)

// SyncLayout places a window's sync block for n ranks; offsets are from the
// sync block's start (the header's WinSyncOff).
//
//	Fence     the fence barrier (barrier.LineLen)
//	Global    one line: LockAll holders and the global event
//	Ranks     per rank r, two lines: the lock line at LockOff(r), the
//	          doorbell line at DoorbellOff(r)
//	Post      post matrix: row o (RowLen bytes) holds [n]uint32, entry t =
//	          Posts by t whose group held o (written by t)
//	Complete  complete matrix: row t holds [n]uint32, entry o = Completes by
//	          o toward t (written by o)
//	Stripes   NumStripes lock stripes of atomics.StripeLen bytes
type SyncLayout struct {
	N                                             int
	Fence, Global, Ranks, Post, Complete, Stripes int64
	RowLen, Total                                 int64
}

// NewSyncLayout returns the sync block layout for n ranks.
func NewSyncLayout(n int) SyncLayout {
	s := SyncLayout{N: n}
	s.RowLen, _ = shm.AlignUp(4*int64(n), Line)
	s.Fence = 0
	s.Global = s.Fence + barrier.LineLen
	s.Ranks = s.Global + Line
	s.Post = s.Ranks + 2*Line*int64(n)
	s.Complete = s.Post + s.RowLen*int64(n)
	s.Stripes = s.Complete + s.RowLen*int64(n)
	s.Total = s.Stripes + NumStripes*atomics.StripeLen
	return s
}

// LockOff is where rank r's lock line starts.
func (s SyncLayout) LockOff(r int) int64 { return s.Ranks + 2*Line*int64(r) }

// DoorbellOff is where rank r's doorbell line starts.
func (s SyncLayout) DoorbellOff(r int) int64 { return s.LockOff(r) + Line }

// PostOff is the post counter post[origin][target].
func (s SyncLayout) PostOff(origin, target int) int64 {
	return s.Post + s.RowLen*int64(origin) + 4*int64(target)
}

// CompleteOff is the complete counter complete[target][origin].
func (s SyncLayout) CompleteOff(target, origin int) int64 {
	return s.Complete + s.RowLen*int64(target) + 4*int64(origin)
}

// Passive-target lock word L[r], 64 bits:
//
//	bits  0-14  W: write-serving counter     bit 15: carry guard of W
//	bits 16-30  R: read-serving counter      bit 31: carry guard of R
//	bits 32-47  X: exclusive lockers holding or waiting
//	bits 49-63  T: next ticket (its carry leaves the word)
//
// The protocol is in win/lock.go and docs/FORMAT.md.
const (
	LockCounterMask = 1<<15 - 1 // W, R and T are 15-bit counters
	LockXMask       = 1<<16 - 1 // X is 16 bits
	LockRShift      = 16
	LockXShift      = 32
	LockTShift      = 49
	LockGuards      = 1<<15 | 1<<31 // carry guards of W and R
	LockOneR        = 1 << LockRShift
	LockOneX        = 1 << LockXShift
	LockOneT        = 1 << LockTShift

	// LockExclusive is an exclusive Lock's add: draw a ticket, raise X.
	LockExclusive = LockOneT + LockOneX
	// LockShared is a shared Lock's first add: draw a ticket.
	LockShared = LockOneT
	// LockSharedUnlock is a shared Unlock's add: W++.
	LockSharedUnlock = 1

	// LockAllHolders masks A in the global word; LockAllWaiter is the add
	// to it of a LockAll that waits for writers (Q++), taken back once in.
	LockAllHolders = 1<<32 - 1
	LockAllWaiter  = 1 << 32
)

// LockExclusiveUnlock is an exclusive Unlock's add: W++, R++ and X-- in one
// add (modulo 2^64; X >= 1 while the lock is held, so the borrow stays
// inside X).
const LockExclusiveUnlock = uint64(1+LockOneR) + (^uint64(LockOneX) + 1)

// Control segment (kind shm.KindControl): header fields after the common
// fixed header.
const (
	CtlRanks   = shm.FixedHeaderLen // uint32 ranks n
	CtlSlotLen = CtlRanks + 4       // uint32 exchange slot length (SlotLen)
	CtlJob     = CtlSlotLen + 4     // [CtlJobLen]byte job id, ASCII, zero-padded
	CtlJobLen  = 64
)

// SlotLen is the bytes one rank may publish in one exchange round.
const SlotLen = 256

// MaxRanks bounds the ranks of one job (the control segment stays small).
const MaxRanks = 1<<16 - 1

// Words of the control segment's lines, as offsets from the line's start.
const (
	AbortState = 0 // uint32 Abort* state
	AbortCode  = 4 // uint32 exit code asked by comm.Abort
	AbortRank  = 8 // uint32 rank that called comm.Abort

	RankState = 0 // uint32 Rank* state, written by the rank
	RankPID   = 4 // uint32 pid of the rank
	RankInbox = 8 // uint32 the rank's descriptor of its inbox (a memfd), set before RankInit

	// The rank's waits, for the launcher's deadlock watch (written by the
	// rank): goroutines asleep in a wait, wake-ups with the wait over, and
	// what the last goroutine to fall asleep waits for.
	RankSleepers = 12 // uint32 goroutines asleep in a wait
	RankWakes    = 16 // uint32 waits ended (any change means the rank moved)
	RankWaitKind = 20 // uint32 barrier.Wait* of a sleeper: the last to fall asleep of those still asleep
	RankWaitPeer = 24 // int32 its world rank, or -1 (any)
	RankWaitTag  = 28 // int32 its tag, or AnyTag
)

// AbortExitStatus is the exit status that stands for comm.Abort(code), used
// both by the aborting rank's own exit and by the launcher's exit code for
// the job: code mod 256 (as an exit status is), except that a code whose low
// byte is 0 (0, 256, -256, ...) becomes 1, so an aborted job never looks
// like a success. The result is always in 1..255.
func AbortExitStatus(code int) int {
	if s := code & 0xff; s != 0 {
		return s
	}
	return 1
}

// Abort states (the abort line's AbortState word).
const (
	AbortNone     = 0
	AbortLauncher = 1 // a rank failed or the launcher was signalled
	AbortByRank   = 2 // a rank called comm.Abort
	// AbortClaimed: a rank calling Abort won the state and is writing its
	// code and rank, after which it stores AbortByRank; a second rank's
	// Abort at the same time loses the claim and writes nothing.
	AbortClaimed = 3
)

// Rank states, written by the rank, read by the launcher.
const (
	RankStarted    = 0
	RankInit       = 1
	RankFinalized  = 2
	RankFinalizing = 3 // in Finalize, waiting for every rank to call it
)

// ControlLayout is where things are in a control segment of n ranks.
type ControlLayout struct {
	N int
	// AbortOff is the abort line: the header's one page ends there.
	AbortOff int64
	// BarrierOff is the world barrier's line.
	BarrierOff int64
	// WakeOff is the futex word to wake every waiter on after setting the
	// abort word: the world barrier's generation.
	WakeOff int64
	// RanksOff is rank 0's line; rank r's is r lines further.
	RanksOff int64
	// SlotOff is the exchange slots: 2 parities x n x SlotLen bytes.
	SlotOff int64
	// CommOff is the communicator table: MaxComms entries of CommLen
	// bytes, each a header line, a barrier line and its own exchange slots
	// (2 parities x n x SlotLen, room for any subset of the ranks).
	CommOff, CommLen int64
	// MboxOff is rank 0's mailbox line (CreateGroup's rendezvous); rank
	// r's is r lines further.
	MboxOff int64
	// Total is the segment size, a page multiple.
	Total int64
}

// MaxComms is how many communicators besides the world a job may have alive
// at once (Dup, Split, Create and their kind each take one entry of the
// control segment's table until Free gives it back).
const MaxComms = 64

// Words of a communicator entry's header line, as offsets from its start.
const (
	CommState    = 0  // uint32 CommFree or CommUsed: claimed by compare-and-swap
	CommMembers  = 4  // uint32 members n of the communicator
	CommDeparted = 8  // uint32 members that freed it; the n-th frees the entry
	CommGen      = 12 // uint32 times the entry was claimed (for context ids)
)

// Words of a rank's mailbox line, through which the rank 0 of a group that
// makes a communicator without its parent (comm.CreateGroup) hands the
// other members the entry it claimed.
const (
	MboxState    = 0  // uint32 MboxEmpty, MboxBusy or MboxFull
	MboxSeq      = 4  // uint32 event seq: the futex word
	MboxSleepers = 8  // uint32 waiters on it (the owner, or a writer waiting for room)
	MboxEntry    = 12 // int32 the entry, or -1: the claim failed
	MboxGen      = 16 // uint32 the entry's claim number
	MboxTag      = 24 // int64 the call's tag
	MboxKey      = 32 // uint64 a hash of the group's world ranks and the parent's context
)

// Mailbox states.
const (
	MboxEmpty = 0
	MboxFull  = 1
	MboxBusy  = 2 // a writer claimed the line and is storing the fields
)

// Communicator entry states.
const (
	CommFree = 0
	CommUsed = 1
)

// NewControlLayout returns the control layout for n ranks on a machine whose
// page is page bytes (the control header fills exactly one page).
func NewControlLayout(n int, page int64) ControlLayout {
	l := ControlLayout{N: n, AbortOff: page}
	l.BarrierOff = l.AbortOff + Line
	l.WakeOff = l.BarrierOff + barrier.OffGen
	l.RanksOff = l.BarrierOff + Line
	l.SlotOff = l.RanksOff + int64(n)*Line
	l.CommOff = l.SlotOff + 2*int64(n)*SlotLen
	l.CommLen = 2*Line + 2*int64(n)*SlotLen
	l.MboxOff = l.CommOff + MaxComms*l.CommLen
	l.Total, _ = shm.AlignUp(l.MboxOff+int64(n)*Line, page)
	return l
}

// MboxLineOff is world rank r's mailbox line.
func (l ControlLayout) MboxLineOff(r int) int64 { return l.MboxOff + int64(r)*Line }

// CommEntryOff is the start (header line) of communicator entry e; its
// barrier line follows, then its slots.
func (l ControlLayout) CommEntryOff(e int) int64 { return l.CommOff + int64(e)*l.CommLen }

// RankOff is rank r's line.
func (l ControlLayout) RankOff(r int) int64 { return l.RanksOff + int64(r)*Line }

// SlotsOff is where the exchange slots of parity p (0 or 1) start.
func (l ControlLayout) SlotsOff(p int) int64 { return l.SlotOff + int64(p)*int64(l.N)*SlotLen }

// Environment variables the launcher sets for each rank.
const (
	EnvJob       = "SHMRUN_JOB"        // job id (hex)
	EnvRank      = "SHMRUN_RANK"       // this rank, 0..size-1
	EnvSize      = "SHMRUN_SIZE"       // number of ranks
	EnvLocalRank = "SHMRUN_LOCAL_RANK" // rank among the ranks on this node (= rank)
	// EnvAppNum is the number of the rank's program on the launcher's
	// command line, from 0 (an MPMD job's parts: "-n 2 a : -n 2 b" gives
	// b's ranks 1): MPI_APPNUM.
	EnvAppNum    = "SHMRUN_APPNUM"
	EnvControlFD = "SHMRUN_CONTROL_FD" // inherited descriptor of the control segment
	EnvShmDir    = "SHMRUN_SHM_DIR"    // directory for window segments
	EnvShm       = "SHMRUN_SHM"        // window backing: auto, dir or memfd (ParseBacking)
	// EnvSingleCopy is "off" when the ranks must not let each other read
	// their memory (no PR_SET_PTRACER at Init): large messages then go
	// through shared memory. Unset or "on": they do.
	EnvSingleCopy = "SHMRUN_SINGLE_COPY"
	// EnvStats and EnvTrace are directories (shmrun --stats, --trace)
	// where the rank writes its statistics and its trace at Finalize
	// (internal/obs); unset: it records nothing.
	EnvStats = "SHMRUN_STATS"
	EnvTrace = "SHMRUN_TRACE"
	// EnvCheck is a directory (shmrun --check) where the rank writes the
	// conflicting accesses it finds (internal/rmacheck); unset: it checks
	// nothing.
	EnvCheck = "SHMRUN_CHECK"
	// EnvWait tunes how ranks wait (barrier.ParsePolicy): the one SHMRUN_
	// variable a user sets.
	EnvWait = "SHMRUN_WAIT"
	// EnvPrefix starts every variable above: the launcher drops inherited
	// ones (except EnvWait) and sets its own.
	EnvPrefix = "SHMRUN_"
)

// ControlFD is the descriptor the launcher passes the control segment on
// (its first extra file).
const ControlFD = 3

// Special ranks and tags, with the values the MPI 5.0 standard ABI fixes
// (the MPI Forum ABI working group's mpi.h), so C code on the ABI passes
// them through unchanged (package comm exports them).
const (
	Undefined = -32766 // MPI_UNDEFINED
	ProcNull  = -2     // MPI_PROC_NULL
	AnySource = -1     // MPI_ANY_SOURCE
	Root      = -3     // MPI_ROOT
	AnyTag    = -31    // MPI_ANY_TAG
)

// Results of comparing groups and communicators, with the MPI 5.0 ABI's
// values (MPI_IDENT, MPI_CONGRUENT, MPI_SIMILAR, MPI_UNEQUAL).
const (
	Ident     = 101
	Congruent = 102
	Similar   = 103
	Unequal   = 104
)

// CheckWrapped is every function a program linked by shmcc --check calls
// through libmpi_abi's __wrap_NAME (ld --wrap), which checks, then calls
// NAME: libc's copies (capi/tsanhooks.c), libgomp's entry points and
// lock calls (capi/omp.c), the POSIX threads' (capi/pthread.c). shmcc links with the list; capi's tests check
// that the library defines every wrapper.
var CheckWrapped = []string{
	"memcpy", "memmove", "memset",
	"GOMP_parallel", "GOMP_parallel_sections",
	"GOMP_parallel_loop_static", "GOMP_parallel_loop_dynamic", "GOMP_parallel_loop_guided",
	"GOMP_parallel_loop_nonmonotonic_dynamic", "GOMP_parallel_loop_nonmonotonic_guided",
	"GOMP_parallel_loop_runtime", "GOMP_parallel_loop_nonmonotonic_runtime",
	"GOMP_parallel_loop_maybe_nonmonotonic_runtime",
	"GOMP_barrier", "GOMP_loop_end", "GOMP_sections_end",
	"GOMP_sections_start", "GOMP_sections_next", "GOMP_sections_end_nowait",
	"GOMP_barrier_cancel", "GOMP_loop_end_cancel", "GOMP_sections_end_cancel",
	"GOMP_critical_start", "GOMP_critical_end", "GOMP_atomic_start", "GOMP_atomic_end",
	"GOMP_ordered_start", "GOMP_ordered_end", "GOMP_critical_name_start", "GOMP_critical_name_end",
	"omp_set_lock", "omp_unset_lock", "omp_set_nest_lock", "omp_unset_nest_lock",
	"omp_test_lock", "omp_test_nest_lock",
	"GOMP_task", "GOMP_taskwait", "GOMP_taskgroup_end",
	"pthread_create", "pthread_join",
	"pthread_mutex_lock", "pthread_mutex_trylock", "pthread_mutex_timedlock", "pthread_mutex_unlock",
	"pthread_rwlock_rdlock", "pthread_rwlock_wrlock", "pthread_rwlock_tryrdlock", "pthread_rwlock_trywrlock",
	"pthread_rwlock_unlock", "pthread_spin_lock", "pthread_spin_trylock", "pthread_spin_unlock",
	"pthread_cond_wait", "pthread_cond_timedwait", "pthread_cond_signal", "pthread_cond_broadcast",
	"pthread_barrier_wait", "sem_wait", "sem_trywait", "sem_timedwait", "sem_post",
	"pthread_exit", "pthread_rwlock_timedrdlock", "pthread_rwlock_timedwrlock",
	"pthread_mutex_clocklock", "pthread_rwlock_clockrdlock", "pthread_rwlock_clockwrlock",
	"sem_clockwait", "pthread_cond_clockwait", "GOMP_taskwait_depend", "GOMP_taskloop", "GOMP_taskloop_ull",
	"thrd_create", "thrd_join", "thrd_exit", "mtx_lock", "mtx_trylock", "mtx_timedlock",
	"mtx_unlock", "cnd_signal", "cnd_broadcast", "cnd_wait", "cnd_timedwait",
	"pthread_mutex_destroy", "pthread_rwlock_destroy", "pthread_spin_destroy", "pthread_cond_destroy",
	"pthread_barrier_destroy", "sem_destroy", "mtx_destroy", "cnd_destroy",
}
