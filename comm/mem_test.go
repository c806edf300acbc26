//go:build !mpi

package comm_test

import (
	"errors"
	"math"
	"testing"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/raw"
)

// AllocMem hands out zeroed, line-aligned, disjoint blocks of the shared
// heap; FreeMem takes back exactly what it gave, and the memory is reused.
func TestAllocMem(t *testing.T) {
	if b, err := comm.AllocMem(0, nil); b != nil || err != nil {
		t.Errorf("AllocMem(0) = %v, %v; want nil, nil", b, err)
	}
	if _, err := comm.AllocMem(-1, nil); !errors.Is(err, comm.ErrArg) {
		t.Errorf("AllocMem(-1) = %v, want ErrArg", err)
	}
	for _, v := range []string{"3", "0", "x", "-64"} {
		if _, err := comm.AllocMem(8, comm.Info{"mpi_minimum_memory_alignment": v}); !errors.Is(err, comm.ErrArg) {
			t.Errorf("alignment %q: %v, want ErrArg", v, err)
		}
	}
	// More than the machine maps (ENOMEM from the kernel), and a size
	// whose alignment padding would wrap past 2^63: ErrNoMem, as MPI says.
	for _, tc := range []struct {
		size  int
		align string
	}{{1 << 50, "64"}, {math.MaxInt - 100, "1073741824"}} {
		if _, err := comm.AllocMem(tc.size, comm.Info{"mpi_minimum_memory_alignment": tc.align}); !errors.Is(err, comm.ErrNoMem) {
			t.Errorf("AllocMem(%d) aligned to %s: %v, want ErrNoMem", tc.size, tc.align, err)
		}
	}
	var blocks [][]byte
	for i, size := range []int{1, 8, 63, 64, 65, 4096, 100000, 300 << 10, 1 << 20} {
		b, err := comm.AllocMem(size, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != size || cap(b) != size || raw.Addr(b)%64 != 0 {
			t.Fatalf("AllocMem(%d): len %d cap %d at %#x", size, len(b), cap(b), raw.Addr(b))
		}
		for j, x := range b {
			if x != 0 {
				t.Fatalf("AllocMem(%d): byte %d is %d", size, j, x)
			}
		}
		for j := range b {
			b[j] = byte(i + 1)
		}
		blocks = append(blocks, b)
	}
	for i, b := range blocks { // nobody wrote over anybody
		for j, x := range b {
			if x != byte(i+1) {
				t.Fatalf("block %d byte %d is %d, want %d", i, j, x, i+1)
			}
		}
	}
	big, err := comm.AllocMem(100, comm.Info{"mpi_minimum_memory_alignment": "8192"})
	if err != nil || raw.Addr(big)%8192 != 0 {
		t.Fatalf("8 KiB alignment: %#x, %v", raw.Addr(big), err)
	}
	if err := comm.FreeMem(big[1:]); !errors.Is(err, comm.ErrArg) {
		t.Errorf("FreeMem of a sub-slice = %v, want ErrArg", err)
	}
	if err := comm.FreeMem(make([]byte, 8)); !errors.Is(err, comm.ErrArg) {
		t.Errorf("FreeMem of Go memory = %v, want ErrArg", err)
	}
	if err := comm.FreeMem(big); err != nil {
		t.Fatal(err)
	}
	if err := comm.FreeMem(big); !errors.Is(err, comm.ErrArg) {
		t.Errorf("second FreeMem = %v, want ErrArg", err)
	}
	if err := comm.FreeMem(nil); err != nil {
		t.Errorf("FreeMem(nil) = %v", err)
	}
	// Freed small blocks are reused, zeroed.
	addr := raw.Addr(blocks[4])
	if err := comm.FreeMem(blocks[4]); err != nil {
		t.Fatal(err)
	}
	again, err := comm.AllocMem(65, nil)
	if err != nil {
		t.Fatal(err)
	}
	if raw.Addr(again) != addr {
		t.Errorf("a freed 65-byte block at %#x was not reused (got %#x)", addr, raw.Addr(again))
	}
	for j, x := range again {
		if x != 0 {
			t.Fatalf("reused block byte %d is %d", j, x)
		}
	}
	blocks[4] = again
	for _, b := range blocks {
		if err := comm.FreeMem(b); err != nil {
			t.Fatal(err)
		}
	}
	if comm.Address(nil) != 0 || comm.Address(again) != raw.Addr(again) {
		t.Error("Address")
	}
}
