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
// Invariant: unsafe.Sizeof(v) <= 8 (callers test that constant or the type
// first; a violation panics rather than read past v). Each load is of v's
// own size and alignment (a wider load of a narrower store defeats
// store-to-load forwarding: the load waits until the store has left the
// store buffer); the one exception, an
// 8-byte type with 4-byte alignment (complex64, the 8-byte pair types), is
// copied into an aligned uint64 instead.
func bitsOf[T any](v T) uint64 {
	p := unsafe.Pointer(&v)
	switch {
	case unsafe.Sizeof(v) == 1:
		return uint64(*(*uint8)(p))
	case unsafe.Sizeof(v) == 2:
		return uint64(*(*uint16)(p))
	case unsafe.Sizeof(v) == 4:
		return uint64(*(*uint32)(p))
	case unsafe.Sizeof(v) == 8 && unsafe.Alignof(v) == 8:
		return *(*uint64)(p)
	case unsafe.Sizeof(v) == 8:
		var b uint64
		*(*T)(unsafe.Pointer(&b)) = v
		return b
	}
	panic("atomics: bitsOf of an element wider than 8 bytes")
}

// bits64 is bitsOf for an 8-byte, 8-aligned T in one load, cheap enough to
// inline into the callers of FetchAddWord and CompareAndSwapWord.
//
// Invariant: T is int64 or uint64 (the callers test int64Word first).
func bits64[T any](v T) uint64 {
	return *(*uint64)(unsafe.Pointer(&v))
}

// fromBits is the inverse of bitsOf.
//
// Invariant: as bitsOf.
func fromBits[T any](b uint64) T {
	if unsafe.Sizeof(*new(T)) > 8 {
		panic("atomics: fromBits to an element wider than 8 bytes")
	}
	return *(*T)(unsafe.Pointer(&b))
}

// SizeOf is the size in bytes of one element of T (MPI_Type_size of its
// datatype). It is a constant within each instantiation, so callers on a hot
// path can use it instead of TypeOf[T]().Size().
func SizeOf[T Elem]() int {
	var zero T
	return int(unsafe.Sizeof(zero))
}
