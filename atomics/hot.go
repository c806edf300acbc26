package atomics

import (
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/shmrun/shmrun/shm"
)

// The one-element hot path. FetchAndOp, CompareAndSwap and the one-element
// Accumulate and GetAccumulate first ask hotWord whether T and off qualify;
// if so the call is a few predictable compares and one native atomic (for
// Sum on an 8-byte integer not even a call), else it goes the general way
// (TypeOf, Check, span, the kernels): several calls, a type switch and a
// loop for one element.

// int64Word reports whether T is exactly int64 or uint64 and off an aligned
// 8-byte element inside a usable segment: the hottest case (counters,
// tickets, lock words), tested first because a two-type switch is a compare
// chain, while hotWord's six types make a jump table (an indirect branch).
func int64Word[T Elem](mem []byte, off int64) bool {
	switch any(*new(T)).(type) {
	case int64, uint64:
		return off&7 == 0 && off >= 0 && off <= int64(len(mem))-8 && segmentOK(mem)
	}
	return false
}

// hotWord kinds.
const (
	hotInt   = 1 // exactly int32, uint32, int64 or uint64
	hotFloat = 2 // exactly float32 or float64
)

// hotWord returns hotInt or hotFloat if T is exactly one of those types and
// off is an element of its size, aligned, inside a usable segment; otherwise
// 0. It is inlined: a jump on T's type hash, a compare or two of its type
// descriptor, no call (keep it under the inlining budget: splitting the
// switch by size, for one, makes it a call). Named types answer 0 and take
// the general path.
func hotWord[T Elem](mem []byte, off int64) uint8 {
	var k uint8
	switch any(*new(T)).(type) {
	case int64, uint64, int32, uint32:
		k = hotInt
	case float64, float32:
		k = hotFloat
	default:
		return 0
	}
	size := int64(unsafe.Sizeof(*new(T)))
	if off&(size-1) == 0 && off >= 0 && off <= int64(len(mem))-size && segmentOK(mem) {
		return k
	}
	return 0
}

// rmwHot does op on the aligned 4- or 8-byte element at off and returns its
// old value, for the ops it knows without TypeOf: Sum, NoOp, Replace, and for
// integers Band and Bor (whose results do not depend on signedness). ok is
// false for the other ops, which take the general path (and its errors).
func rmwHot(mem []byte, off int64, size uintptr, k uint8, op Op, x uint64) (old uint64, ok bool) {
	if size == 8 {
		p := word64(mem, off)
		switch {
		case op == NoOp:
			return atomic.LoadUint64(p), true
		case op == Replace:
			return atomic.SwapUint64(p, x), true
		case k == hotFloat:
			if op != Sum {
				return 0, false
			}
			for {
				o := atomic.LoadUint64(p)
				if atomic.CompareAndSwapUint64(p, o, math.Float64bits(math.Float64frombits(o)+math.Float64frombits(x))) {
					return o, true
				}
			}
		case op == Sum:
			return atomic.AddUint64(p, x) - x, true
		case op == Band:
			return atomic.AndUint64(p, x), true
		case op == Bor:
			return atomic.OrUint64(p, x), true
		}
		return 0, false
	}
	p, y := word32(mem, off), uint32(x)
	switch {
	case op == NoOp:
		return uint64(atomic.LoadUint32(p)), true
	case op == Replace:
		return uint64(atomic.SwapUint32(p, y)), true
	case k == hotFloat:
		if op != Sum {
			return 0, false
		}
		for {
			o := atomic.LoadUint32(p)
			if atomic.CompareAndSwapUint32(p, o, math.Float32bits(math.Float32frombits(o)+math.Float32frombits(y))) {
				return uint64(o), true
			}
		}
	case op == Sum:
		return uint64(atomic.AddUint32(p, y) - y), true
	case op == Band:
		return uint64(atomic.AndUint32(p, y)), true
	case op == Bor:
		return uint64(atomic.OrUint32(p, y)), true
	}
	return 0, false
}

// FetchAddWord is FetchAndOp(Sum) on the one case that needs no dispatch:
// T exactly int64 or uint64 and off an 8-byte element inside mem at an
// 8-byte aligned address. It does the add (one locked instruction)
// and returns the old value and true; otherwise it does nothing and returns
// false, and the caller goes on to FetchAndOp. It is small enough to inline
// into the caller's frame: the hottest path makes no call into this package.
func FetchAddWord[T Elem](mem []byte, off int64, v T) (old T, ok bool) {
	switch any(old).(type) {
	case int64, uint64:
		if off >= 0 && off <= int64(len(mem))-8 && (shm.Addr(mem)+uintptr(off))&7 == 0 {
			x := bits64(v)
			return fromBits[T](atomic.AddUint64(word64(mem, off), x) - x), true
		}
	}
	return old, false
}

// SwapIfWord is the successful case of CompareAndSwap where FetchAddWord
// applies, inlinable the same way: if the element equals compare it becomes
// v and SwapIfWord returns true. It returns false, having changed nothing,
// when the element differs or the case does not apply; the caller then goes
// on to CompareAndSwap, which returns the element it finds. (A failed
// hardware compare-and-swap does not say what it found, and a second call
// costs a contended caller little next to the line transfer it waits for.)
func SwapIfWord[T Integer](mem []byte, off int64, v, compare T) bool {
	switch any(v).(type) {
	case int64, uint64:
		return off >= 0 && off <= int64(len(mem))-8 && (shm.Addr(mem)+uintptr(off))&7 == 0 &&
			atomic.CompareAndSwapUint64(word64(mem, off), bits64(compare), bits64(v))
	}
	return false
}
