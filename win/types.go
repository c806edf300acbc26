package win

import (
	"fmt"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/shm"
)

// ProcNull is a valid target of every RMA communication call (MPI_PROC_NULL):
// Put, Get, Accumulate, GetAccumulate, FetchAndOp, CompareAndSwap and their
// typed and request forms. Inside any open access epoch (Fence, Start, LockAll
// or a Lock on any rank; request forms need a passive-target one, as for any
// target) the call is a no-op; outside it is ErrRMASync. Lock, Unlock, Flush
// and FlushLocal take a rank of the window: ProcNull is ErrRank there.
// SharedQuery(ProcNull) returns the segment of the lowest rank with a nonzero
// size.
const ProcNull = comm.ProcNull

// Flavor is how a window's memory was made (MPI_WIN_FLAVOR).
type Flavor uint32

// Window flavors.
const (
	FlavorShared   Flavor = format.FlavorShared   // AllocateShared (MPI_WIN_FLAVOR_SHARED)
	FlavorAllocate Flavor = format.FlavorAllocate // Allocate (MPI_WIN_FLAVOR_ALLOCATE)
	FlavorCreate   Flavor = format.FlavorCreate   // Create (MPI_WIN_FLAVOR_CREATE)
	FlavorDynamic  Flavor = format.FlavorDynamic  // CreateDynamic (MPI_WIN_FLAVOR_DYNAMIC)
)

func (f Flavor) String() string {
	switch f {
	case FlavorShared:
		return "MPI_WIN_FLAVOR_SHARED"
	case FlavorAllocate:
		return "MPI_WIN_FLAVOR_ALLOCATE"
	case FlavorCreate:
		return "MPI_WIN_FLAVOR_CREATE"
	case FlavorDynamic:
		return "MPI_WIN_FLAVOR_DYNAMIC"
	}
	return fmt.Sprintf("Flavor(%d)", uint32(f))
}

// Model is the memory model of a window (MPI_WIN_MODEL).
type Model uint32

// The memory models. Every window of the shmrun backend is Unified; under
// the MPI backend a window has the model its MPI reports.
const (
	// Unified: one copy of the memory (MPI_WIN_UNIFIED).
	Unified Model = 1
	// Separate: a public copy for RMA and a private one for loads and
	// stores, reconciled by Sync and the synchronization calls
	// (MPI_WIN_SEPARATE).
	Separate Model = 2
)

func (m Model) String() string {
	switch m {
	case Unified:
		return "MPI_WIN_UNIFIED"
	case Separate:
		return "MPI_WIN_SEPARATE"
	}
	return fmt.Sprintf("Model(%d)", uint32(m))
}

// Segment is one rank's part of a window as seen from the calling process
// (what MPI_Win_shared_query returns): its size in bytes, its disp unit, its
// bytes in this process's mapping, and its offset in the window.
//
// Bytes has length and capacity Size: appending to it never writes into
// another rank's part. A part of size 0 has nil Bytes, so it carries no
// position; Offset does. Offset is the number of bytes from the start of
// rank 0's data to the start of this part's data (where its first byte is,
// or would be if it had one): 0 for rank 0; in the contiguous layout the sum
// of the sizes of the ranks before it, so that base(r) = base(0) + Offset(r)
// is the standard's base-pointer arithmetic; in the noncontig layout the
// page-padded position. It is the same in every process, unlike an address.
type Segment struct {
	Size     int
	DispUnit int
	Bytes    []byte
	Offset   int
}

// Attr holds a window's attributes (MPI_WIN_BASE, MPI_WIN_SIZE,
// MPI_WIN_DISP_UNIT, MPI_WIN_CREATE_FLAVOR, MPI_WIN_MODEL) for the caller.
//
// Base is the caller's part, exactly as Local and SharedQuery(own rank)
// return it (length and capacity Size, nil when Size is 0); Offset is its
// Segment.Offset.
type Attr struct {
	Base     []byte
	Size     int
	DispUnit int
	Flavor   Flavor
	Model    Model
	Offset   int
}

// Assert flags for synchronization calls (MPI_MODE_*).
const (
	ModeNoCheck   = 1 << iota // Start, Post, Lock, LockAll: the matching sync is known to be done
	ModeNoStore               // Fence, Post: no local stores since the last sync
	ModeNoPut                 // Fence, Post: no puts or accumulates into this window until the next sync
	ModeNoPrecede             // Fence: the fence closes no epoch
	ModeNoSucceed             // Fence: the fence opens no epoch
)

// LockType selects the lock of Lock (MPI_LOCK_EXCLUSIVE, MPI_LOCK_SHARED).
type LockType int

// Lock types.
const (
	Exclusive LockType = 1
	Shared    LockType = 2
)

func (l LockType) String() string {
	switch l {
	case Exclusive:
		return "exclusive"
	case Shared:
		return "shared"
	}
	return fmt.Sprintf("LockType(%d)", int(l))
}

// Info holds window hints (MPI_Info): key → value. Unknown keys are ignored,
// as MPI says; a malformed value of a known key is ErrInfo.
//
// Keys understood (defaults in parentheses):
//
//	accumulate_ordering     rar,raw,war,waw | any subset, comma-separated | none   (rar,raw,war,waw)
//	accumulate_ops          same_op_no_op | same_op                               (same_op_no_op)
//	no_locks                true | false: Lock, LockAll are erroneous             (false)
//	alloc_shared_noncontig  true | false: page-padded part per rank               (false)
//	same_size               true | false: asserts every rank passes the same size (false)
//	same_disp_unit          true | false: asserts the same disp unit              (false)
//	shmrun_no_reserve       true | false: skip the fallocate reservation          (false)
//	shmrun_huge_pages       true | false: 2 MiB per-rank padding and MADV_HUGEPAGE (false)
//	shmrun_mempolicy        local | interleave | node:N: NUMA placement of this rank's part (local)
//	mpi_accumulate_granularity  N bytes: a hint (every accumulate is atomic per element whatever it says) (0)
//	shmrun_max_attach       N: regions one rank may attach to a dynamic window (1024)
//	mpi_minimum_memory_alignment  N: a power of two up to 1 GiB; every part's base is a multiple of N (none)
//
// shmrun_no_reserve is for huge sparse windows: nothing is reserved, so a
// full tmpfs shows up as SIGBUS when a page is first touched instead of an
// ErrNoMem at allocation. alloc_shared_noncontig, shmrun_huge_pages,
// shmrun_no_reserve, same_size and same_disp_unit take effect when any rank
// sets them (the standard wants same_size and same_disp_unit given alike on
// every rank; when they are not, the assertion is checked on every rank as if
// all had given it, so the outcome is the same everywhere); the effective
// values are in Win.Info.
//
// mpi_minimum_memory_alignment (MPI 4.1, Allocate and AllocateShared) holds
// for every rank's part when any rank gives it, the largest value given:
// each part starts on a multiple of N in every process and its size grows
// to a multiple of N (each rank still gets at least what it asked for, as
// MPI allows; SharedQuery, Attr and the C header's tables give the grown
// size), so the contiguous layout stays contiguous over the grown sizes.
// The growth is address space: only the bytes asked for are reserved, so
// a 2 MiB alignment costs no 2 MiB a rank (the shm directory's free space
// is still checked against the whole segment).
//
// shmrun_mempolicy is each rank's own: local places its part's pages on the
// NUMA node of the rank that first touches them (the owner, which reserves
// them); interleave spreads them over every node this process may use;
// node:N puts them on node N. The policy is set with mbind before the pages
// are reserved, on whole pages (in the contiguous layout a page shared with
// a neighbour's part follows the last policy set; alloc_shared_noncontig
// gives each part pages of its own). A node that does not exist, or a
// system that refuses mbind (a container's seccomp profile), is ErrInfo at
// allocation. Placement reports where the pages are.
type Info map[string]string

// View returns memory of a window as a slice of T: a Segment from
// SharedQuery, or bytes (from Local, or a sub-slice). It checks that the
// address is aligned for T, that the length is a multiple of T's size, and
// that T holds no Go pointers (ErrType otherwise). Local. The view aliases the
// window's memory and must not be used after Free.
func View[T any, M Segment | []byte](mem M) ([]T, error) {
	var b []byte
	switch m := any(mem).(type) {
	case Segment:
		b = m.Bytes
	case []byte:
		b = m
	}
	v, err := shm.View[T](b)
	if err != nil {
		return nil, fmt.Errorf("win: %v: %w", err, ErrType)
	}
	return v, nil
}

// Request is the handle of a request-based RMA call (MPI_Request from
// MPI_Rput, MPI_Rget, MPI_Raccumulate, MPI_Rget_accumulate). RMA completes
// eagerly, so a Request is complete when it is returned.
type Request struct{}

// Wait waits for the request to complete (MPI_Wait): it is complete already.
func (r *Request) Wait() error { return nil }

// Test reports whether the request is complete (MPI_Test): always true.
func (r *Request) Test() (bool, error) { return true, nil }

var doneRequest = &Request{}
