//go:build !mpi

package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include/abi -I${SRCDIR}/../include
#include <stdlib.h>
#include "capi.h"
*/
import "C"

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// The library's only unsafe code: C pointers the MPI calls receive, made
// into Go slices and back. A slice made here aliases the C program's
// memory: the program owns it for the duration the standard gives (the
// call, or until a request completes), and the Go collector neither moves
// nor frees it.

// bytesAt is the n bytes at p (nil for n == 0). p must point to n bytes
// the caller owns. The C side passes every buffer (a void * of the
// standard) as a char *.
func bytesAt(p *C.char, n int64) []byte {
	if n <= 0 || p == nil {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), n)
}

// addressable reports whether p+off (off <= 0) is an address, not a
// wrap below zero.
func addressable(p *C.char, off int64) bool {
	return uintptr(-off) <= uintptr(unsafe.Pointer(p))
}

// charBefore is the address back bytes before p (addressable checked).
func charBefore(p *C.char, back int64) *C.char {
	return (*C.char)(unsafe.Add(unsafe.Pointer(p), -back))
}

// bytesBefore is the n bytes from back bytes before p (a buffer whose
// data start before its address: a negative lower bound), which the
// program says are its memory (addressable checked the address).
func bytesBefore(p *C.char, back, n int64) []byte {
	if n <= 0 || p == nil {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(p), -back)), n)
}

// overlaps reports whether byte slices a and b (C memory, or any) share a
// byte.
func overlaps(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
	return pa < pb+uintptr(len(b)) && pb < pa+uintptr(len(a))
}

// emptyAt is an empty slice at p: a window part of size 0 keeps the base
// the program gave (MPI_WIN_BASE reports it). p must not be nil.
func emptyAt(p *C.char) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(p)), 0) }

// isInPlace says whether p is MPI_IN_PLACE (address 1 in the standard
// ABI), which is not memory.
func isInPlace(p *C.char) bool { return uintptr(unsafe.Pointer(p)) == inPlaceAddr }

// cptr is the C pointer to b's memory, also when b is empty (a window
// part of size 0 still has an address: where it would start). b must not
// be Go heap memory: the C program keeps the pointer.
func cptr(b []byte) *C.char {
	return (*C.char)(unsafe.Pointer(unsafe.SliceData(b)))
}

// caddr is p's address (MPI_Get_address, MPI_Aint displacements).
func caddr(p *C.char) C.MPI_Aint { return C.MPI_Aint(uintptr(unsafe.Pointer(p))) }

// cArray is the C array of n elements at p (nil for n <= 0 or a NULL p:
// MPI_STATUSES_IGNORE and the like). p must point to n elements the
// caller owns: the program's arrays (ints, MPI_Aint, handles, statuses)
// for the call's duration, or the library's own C memory.
func cArray[T any](p *T, n int) []T {
	if n <= 0 || p == nil {
		return nil
	}
	return unsafe.Slice(p, n)
}

// putString copies s into the C buffer at p of max bytes (including the
// terminating NUL), truncated if need be, and returns its length.
func putString(p *C.char, max int, s string) int {
	if p == nil || max <= 0 {
		return 0
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(p)), max)
	n := copy(b[:max-1], s)
	b[n] = 0
	return n
}

// goString is the NUL-terminated C string at p ("" for nil).
func goString(p *C.char) string {
	if p == nil {
		return ""
	}
	return C.GoString(p)
}

// callNames caches callName's strings by address: a direct-mapped table
// of atomic pointers, so a hit is one load and a compare (a sync.Map's
// hashing showed in the profiles of the message calls).
var callNames [256]atomic.Pointer[callNameEntry]

type callNameEntry struct {
	p uintptr
	s string
}

// callName is the name of the MPI call a C wrapper passes: one of mpi.c's
// string literals, whose address never changes, so the string is made
// once per call site rather than once per call.
func callName(p *C.char) string {
	a := uintptr(unsafe.Pointer(p))
	slot := &callNames[(a>>3^a>>11)%uintptr(len(callNames))]
	if e := slot.Load(); e != nil && e.p == a {
		return e.s
	}
	s := goString(p)
	slot.Store(&callNameEntry{a, s})
	return s
}

// elemsPtr is the C pointer to v's elements (a runtime buffer handed to a
// program's reduction function for the call's duration; it holds no Go
// pointers).
func elemsPtr[T any](v []T) unsafe.Pointer {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Pointer(&v[0])
}

// maxAlign is the strictest alignment a C type has here (long double's,
// and the SSE moves a C compiler makes for it and for structs holding it).
const maxAlign = 16

// aligned reports whether b starts on a maxAlign boundary.
func aligned(b []byte) bool { return uintptr(elemsPtr(b))%maxAlign == 0 }

// alignedBytes is n zero bytes starting on a maxAlign boundary.
func alignedBytes(n int) []byte {
	b := make([]byte, n+maxAlign)
	off := (maxAlign - int(uintptr(elemsPtr(b))%maxAlign)) % maxAlign
	return b[off : off+n : off+n]
}

// loadElem reads a T from the start of b (len(b) >= its size; C memory may
// be unaligned for T, so it is copied).
func loadElem[T any](b []byte) T {
	var v T
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&v)), unsafe.Sizeof(v)), b)
	return v
}

// storeElem writes v at the start of b.
func storeElem[T any](b []byte, v T) {
	copy(b, unsafe.Slice((*byte)(unsafe.Pointer(&v)), unsafe.Sizeof(v)))
}

// freeAttrs frees a window's attribute block.
func freeAttrs(p *C.shmrun_win_attrs) { C.free(unsafe.Pointer(p)) }

// ptrSize is the size of a C pointer.
const ptrSize = unsafe.Sizeof(uintptr(0))

// freeC frees C memory.
func freeC[T any](p *T) { C.free(unsafe.Pointer(p)) }

// A communicator's C descriptors live in cache slots that communicators
// share by hash: a C fast path of one thread may load another
// communicator's descriptor from the slot just before that one's
// MPI_Comm_free takes it out, and then read its handle to find it is not
// its own. So their memory goes back only descQuarantine frees later,
// which no such read outlasts.
const descQuarantine = 256

var freedDescs struct {
	sync.Mutex
	ps []unsafe.Pointer
}

// freeLater frees p once descQuarantine later ones have been queued.
func freeLater[T any](p *T) {
	freedDescs.Lock()
	defer freedDescs.Unlock()
	freedDescs.ps = append(freedDescs.ps, unsafe.Pointer(p))
	for len(freedDescs.ps) > descQuarantine {
		C.free(freedDescs.ps[0])
		freedDescs.ps[0] = nil
		freedDescs.ps = freedDescs.ps[1:]
	}
}

// storeInt stores v into the C int at p atomically (C threads read it with
// __atomic loads).
func storeInt(p *C.int, v int32) { atomic.StoreInt32((*int32)(unsafe.Pointer(p)), v) }

// loadWord loads the C word at p with an acquire, storeWord stores v
// there with a release (C threads use __atomic loads and stores on it);
// in Go, so that the race detector orders what is written before.
func loadWord(p *C.uint32_t) uint32     { return atomic.LoadUint32((*uint32)(unsafe.Pointer(p))) }
func storeWord(p *C.uint32_t, v uint32) { atomic.StoreUint32((*uint32)(unsafe.Pointer(p)), v) }

// cword is p as a C pointer. p must point outside the Go heap (a window's
// segment, the epoch state's mapping): the C side keeps it.
func cword[T, C any](p *T) *C { return (*C)(unsafe.Pointer(p)) }

// viewOf is b as n elements of T, in place, when b is aligned for T and
// holds them (false otherwise: the caller takes the copying path).
func viewOf[T any](b []byte, n int) ([]T, bool) {
	var zero T
	size, align := int(unsafe.Sizeof(zero)), uintptr(unsafe.Alignof(zero))
	if n == 0 {
		return []T{}, true
	}
	if n < 0 || len(b) < n*size || uintptr(unsafe.Pointer(&b[0]))%align != 0 {
		return nil, false
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n), true
}

// epochLayout is capi.h's shmrun_epoch and shmrun_coll as the C compiler
// lays them out, the epoch's bits and the spin rule's constant, for the
// test that holds them to internal/winc and package barrier.
func epochLayout() map[string]uintptr {
	var e C.shmrun_epoch
	var k C.shmrun_coll
	return map[string]uintptr{
		"coll.round": unsafe.Offsetof(k.round), "coll.seen": unsafe.Offsetof(k.seen),
		"coll.pending": unsafe.Offsetof(k.pending), "coll.sizeof": unsafe.Sizeof(k),
		"gate": unsafe.Offsetof(e.gate), "access_all": unsafe.Offsetof(e.access_all),
		"lock_all": unsafe.Offsetof(e.lock_all), "all_check": unsafe.Offsetof(e.all_check),
		"fence_open": unsafe.Offsetof(e.fence_open), "post_open": unsafe.Offsetof(e.post_open), "fence_used": unsafe.Offsetof(e.fence_used),
		"fence_gen": unsafe.Offsetof(e.fence_gen), "flush_any": unsafe.Offsetof(e.flush_any),
		"start_n": unsafe.Offsetof(e.start_n), "post_n": unsafe.Offsetof(e.post_n),
		"sizeof": unsafe.Sizeof(e), "tgt_off": C.SHMRUN_EPOCH_TGT_OFF,
		"TGT_ACCESS": C.SHMRUN_TGT_ACCESS, "TGT_EXCLUSIVE": C.SHMRUN_TGT_EXCLUSIVE,
		"TGT_SHARED": C.SHMRUN_TGT_SHARED, "TGT_NOCHECK": C.SHMRUN_TGT_NOCHECK,
		"TGT_CHECK": C.SHMRUN_TGT_CHECK, "TGT_LOCKED": C.SHMRUN_TGT_LOCKED,
		"GATE_LOCKALL": C.SHMRUN_GATE_LOCKALL, "GATE_START": C.SHMRUN_GATE_START,
		"GATE_FENCE": C.SHMRUN_GATE_FENCE, "GATE_NOLOCKS": C.SHMRUN_GATE_NOLOCKS,
		"GATE_FREED": C.SHMRUN_GATE_FREED, "GATE_CHECK": C.SHMRUN_GATE_CHECK,
		"PAUSE_FROM": C.SHMRUN_PAUSE_FROM,
	}
}
