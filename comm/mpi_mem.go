//go:build mpi

package comm

import (
	"fmt"
	"sync"

	"github.com/shmrun/shmrun/internal/mpi"
	"github.com/shmrun/shmrun/internal/raw"
)

// memLine is the alignment AllocMem gives: a cache line.
const memLine = 64

// allocs maps the first byte of each live AllocMem block to what
// MPI_Alloc_mem returned for it and the block's size.
var allocs = struct {
	sync.Mutex
	m map[uintptr]allocation
}{m: map[uintptr]allocation{}}

type allocation struct {
	block mpi.Mem
	size  int
}

// AllocMem allocates size bytes by MPI_Alloc_mem, memory the MPI may
// register for RMA (a window made over it by win.Create, say). Local. It
// is zeroed, its length and capacity are size (size 0 gives nil), and it
// starts on a 64-byte line. Under the MPI backend info is not used.
func AllocMem(size int, info Info) ([]byte, error) {
	if size < 0 {
		return nil, fmt.Errorf("comm: AllocMem of %d bytes: %w", size, ErrArg)
	}
	if size == 0 {
		return nil, nil
	}
	b, block, err := mpi.AllocMem(size + memLine)
	if err != nil {
		return nil, mpiError("AllocMem", err)
	}
	skip := (memLine - int(raw.Addr(b)%memLine)) % memLine
	mem := b[skip : skip+size : skip+size]
	clear(mem)
	allocs.Lock()
	allocs.m[Address(mem)] = allocation{block, size}
	allocs.Unlock()
	return mem, nil
}

// FreeMem frees memory that AllocMem returned (MPI_Free_mem). Local. mem
// must be the slice AllocMem returned, whole (anything else is ErrArg, and
// nothing is freed); freeing nil or an empty slice does nothing.
func FreeMem(mem []byte) error {
	if len(mem) == 0 {
		return nil
	}
	allocs.Lock()
	a, ok := allocs.m[Address(mem)]
	if ok && a.size == len(mem) {
		delete(allocs.m, Address(mem))
	}
	allocs.Unlock()
	if !ok || a.size != len(mem) {
		return fmt.Errorf("comm: FreeMem of %d bytes that are not a block of AllocMem: %w", len(mem), ErrArg)
	}
	return mpiError("FreeMem", mpi.FreeMem(a.block))
}

// Address returns the address of mem's first byte (MPI_Get_address): the
// displacement an origin passes to reach it in a dynamic window once the
// owner has attached it. Local. nil gives 0.
func Address(mem []byte) uintptr { return raw.Addr(mem) }
