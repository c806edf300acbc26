//go:build !mpi

package comm

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"

	"github.com/shmrun/shmrun/internal/heap"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/shm"
)

// AllocMem allocates size bytes of the job's shared heap (MPI_Alloc_mem).
// Local. The memory lives in a shared-memory object of this process that
// every other rank of the job can map, so a window made over it by
// win.Create (or attached to a dynamic window) is reached by load/store and
// lock-free atomics from every rank, at the cost of a window made by
// win.Allocate, instead of by system calls. It is zeroed, its length and
// capacity are size (size 0 gives nil), and it starts on a 64-byte line
// (no two allocations share one).
//
// Info key (unknown keys are ignored, as MPI says):
//
//	mpi_minimum_memory_alignment  N: a power of two; the first byte's address is a multiple of N
//
// The pages are reserved now, from this process: a machine (or memory
// cgroup) without room is ErrNoMem here, never a SIGBUS later. Blocks under
// 256 KiB come from 1 MiB arenas; larger ones get an object of their own,
// given back to the kernel by FreeMem. Everything is released when the
// process exits: nothing can leak into /dev/shm. The memory must not hold
// Go pointers (the garbage collector does not scan it).
func AllocMem(size int, info Info) ([]byte, error) {
	if size < 0 {
		return nil, fmt.Errorf("comm: AllocMem of %d bytes: size is negative: %w", size, ErrArg)
	}
	align := 64
	if v, ok := info["mpi_minimum_memory_alignment"]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n <= 0 || n&(n-1) != 0 || n > 1<<30 {
			return nil, fmt.Errorf("comm: AllocMem: info mpi_minimum_memory_alignment=%q: want a power of two up to 1 GiB: %w", v, ErrArg)
		}
		align = n
	}
	mem, err := heap.Alloc(size, align)
	if err != nil {
		// The kernel's refusals are out of memory too: no address space
		// (RLIMIT_AS, vm.max_map_count: ENOMEM), no room (ENOSPC).
		if errors.Is(err, shm.ErrNoSpace) || errors.Is(err, syscall.ENOMEM) || errors.Is(err, syscall.ENOSPC) {
			return nil, fmt.Errorf("comm: AllocMem of %d bytes: %v: %w", size, err, ErrNoMem)
		}
		return nil, fmt.Errorf("comm: AllocMem of %d bytes: %v: %w", size, err, ErrOther)
	}
	return mem, nil
}

// FreeMem frees memory that AllocMem returned (MPI_Free_mem). Local. mem
// must be the slice AllocMem returned, whole (a sub-slice, memory from
// elsewhere or a second FreeMem is ErrArg, and nothing is freed); freeing
// nil or an empty slice does nothing. Memory still exposed by a window
// (made by win.Create over it, or attached to a dynamic window) is not
// freed either: FreeMem says so (ErrArg), and the block stays valid until
// a FreeMem after that window's Free or Detach. Freed memory is reused by
// later calls of AllocMem.
func FreeMem(mem []byte) error {
	if err := heap.Free(mem); err != nil {
		return fmt.Errorf("comm: FreeMem: %v: %w", err, ErrArg)
	}
	return nil
}

// Address returns the address of mem's first byte (MPI_Get_address), the
// displacement an origin passes to reach it in a dynamic window
// (win.CreateDynamic) once the owner has attached it. Local. An empty
// slice gives the address its data pointer holds, nil gives 0.
func Address(mem []byte) uintptr {
	return raw.Addr(mem)
}
