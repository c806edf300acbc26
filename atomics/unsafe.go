package atomics

// All of this package's unsafe code is in this file: word pointers into the
// segment for sync/atomic, and moving element values between a type
// parameter and their bit patterns.
//
// Byte order: the kernels assume a little-endian machine (amd64 and arm64,
// the only targets; TestLittleEndian guards it): an element's bit pattern is
// its bytes read as a little-endian integer, on both sides of these helpers.

import "unsafe"

// word64 returns the 64-bit word at mem[off:off+8] for sync/atomic.
//
// Invariant: the kernel checked that mem starts 8-byte aligned (a mapping is
// page-aligned), that off%8 == 0 and that off+8 <= len(mem); the index
// expression still bounds-checks off. The pointer is used only during the
// call, while the caller keeps mem mapped.
func word64(mem []byte, off int64) *uint64 {
	return (*uint64)(unsafe.Pointer(&mem[off]))
}

// word32 returns the 32-bit word at mem[off:off+4] for sync/atomic.
//
// Invariant: as word64, with off%4 == 0 and off+4 <= len(mem).
func word32(mem []byte, off int64) *uint32 {
	return (*uint32)(unsafe.Pointer(&mem[off]))
}

// bitsOf returns v's bytes as the low bytes of a uint64.
//
// Invariant: unsafe.Sizeof(v) <= 8 (callers test that constant first), and
// T's alignment is at most 8, so v fits in and is aligned within b.
func bitsOf[T any](v T) uint64 {
	var b uint64
	*(*T)(unsafe.Pointer(&b)) = v
	return b
}

// fromBits is the inverse of bitsOf.
//
// Invariant: as bitsOf.
func fromBits[T any](b uint64) T {
	return *(*T)(unsafe.Pointer(&b))
}
