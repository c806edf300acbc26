package atomics

import (
	"math"
	"sync/atomic"

	"github.com/shmrun/shmrun/internal/raw"
)

// The one-element hot path. FetchAndOp, CompareAndSwap and the one-element
// Accumulate and GetAccumulate first try raw.FetchAddWord (Sum on an aligned
// int64 or uint64: the hottest case, counters, tickets and lock words, one
// locked instruction and no call), then ask hotWord whether T and off
// qualify for one native atomic; else they go the general way (TypeOf,
// Check, span, the kernels), which dispatches on the datatype at run time.

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
	size := int64(raw.SizeOf[T]())
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
		p := raw.Word64(mem, off)
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
	p, y := raw.Word32(mem, off), uint32(x)
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
