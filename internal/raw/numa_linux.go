package raw

// Memory policy calls on mapped memory (mbind, get_mempolicy, move_pages).
// x/sys/unix does not wrap them; their pointer arguments are why they live
// here.

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Memory policy modes and flags from linux/mempolicy.h.
const (
	MpolDefault    = 0
	MpolPreferred  = 1
	MpolBind       = 2
	MpolInterleave = 3
	MpolLocal      = 4

	mpolFAddr = 1 << 1 // get_mempolicy: the policy of the address given
)

// Mbind sets the memory policy of the pages of b (whole pages: b starts
// page-aligned) to mode over the nodes in mask (bit n: node n).
//
// Invariant: b is a live mapping for the call; mask is read only during it.
func Mbind(b []byte, mode int, mask []uint64) error {
	var mp unsafe.Pointer
	if len(mask) > 0 {
		mp = unsafe.Pointer(&mask[0])
	}
	_, _, e := unix.Syscall6(unix.SYS_MBIND, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)),
		uintptr(mode), uintptr(mp), uintptr(64*len(mask)+1), 0)
	if e != 0 {
		return e
	}
	return nil
}

// PolicyOf returns the memory policy mode that applies at the address p
// points to (get_mempolicy with MPOL_F_ADDR).
//
// Invariant: p points into a live mapping.
func PolicyOf(p *byte) (int, error) {
	var mode int32
	_, _, e := unix.Syscall6(unix.SYS_GET_MEMPOLICY, uintptr(unsafe.Pointer(&mode)), 0, 0,
		uintptr(unsafe.Pointer(p)), mpolFAddr, 0)
	if e != 0 {
		return 0, e
	}
	return int(mode), nil
}

// PageNodes reports, for each page of b (page-aligned, whole pages of size
// page), the NUMA node it sits on, or a negative errno (-ENOENT: not yet
// touched) — move_pages with no target nodes, which moves nothing.
//
// Invariant: b is a live mapping for the call.
func PageNodes(b []byte, page int) ([]int32, error) {
	n := len(b) / page
	if n == 0 {
		return nil, nil
	}
	pages := make([]uintptr, n)
	base := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	for i := range pages {
		pages[i] = base + uintptr(i*page)
	}
	status := make([]int32, n)
	_, _, e := unix.Syscall6(unix.SYS_MOVE_PAGES, 0, uintptr(n), uintptr(unsafe.Pointer(&pages[0])), 0,
		uintptr(unsafe.Pointer(&status[0])), 0)
	if e != 0 {
		return nil, e
	}
	return status, nil
}

// Mincore fills vec (one byte per page of b) with whether each page exists
// in memory: bit 0 set for a resident page (mincore).
//
// Invariant: b is a live, page-aligned mapping; len(vec) covers its pages.
func Mincore(b, vec []byte) error {
	_, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)),
		uintptr(unsafe.Pointer(unsafe.SliceData(vec))))
	if e != 0 {
		return e
	}
	return nil
}
