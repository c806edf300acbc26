package raw

import "sync/atomic"

// Word64OK reports whether the 8 bytes at off are an aligned word of mem:
// mem starts 8-byte aligned (so an offset's alignment is its address's
// alignment in every process, and a lock stripe chosen by offset is the
// same everywhere), off is a multiple of 8 and the word is inside mem. Every
// lock-free path on 8-byte elements asks this (FetchAddWord and SwapIfWord
// spell it out for the inline budget), so the same element never goes
// lock-free in one call and under a stripe in another.
func Word64OK(mem []byte, off int64) bool {
	return off >= 0 && off <= int64(len(mem))-8 && (Addr(mem)|uintptr(off))&7 == 0
}

// FetchAddWord is a fetch-and-add on the one case that needs no dispatch: T
// exactly int64 or uint64 and off an 8-byte element inside mem at an 8-byte
// aligned address. It does the add (one locked instruction) and returns the
// old value and true; otherwise it does nothing and returns false, and the
// caller takes its general path. It must stay small enough to inline into
// its callers (TestIntendedInlining in package win guards it): the hottest
// accumulate path then makes no call at all. It is the one encoding of this
// case: atomics' kernels and win's calls both use it.
func FetchAddWord[T any](mem []byte, off int64, v T) (old T, ok bool) {
	switch any(old).(type) {
	case int64, uint64:
		if off >= 0 && off <= int64(len(mem))-8 && (Addr(mem)|uintptr(off))&7 == 0 { // Word64OK, spelled out for the inline budget
			x := Bits64(v)
			return FromBits[T](atomic.AddUint64(Word64(mem, off), x) - x), true
		}
	}
	return old, false
}

// SwapIfWord is the successful case of a compare-and-swap where FetchAddWord
// applies, inlinable the same way: if the element equals compare it becomes
// v and SwapIfWord returns true. It returns false, having changed nothing,
// when the element differs or the case does not apply; the caller then takes
// its general path, which returns the element it finds. (A failed hardware
// compare-and-swap does not say what it found, and a second call costs a
// contended caller little next to the line transfer it waits for.)
func SwapIfWord[T any](mem []byte, off int64, v, compare T) bool {
	switch any(v).(type) {
	case int64, uint64:
		return off >= 0 && off <= int64(len(mem))-8 && (Addr(mem)|uintptr(off))&7 == 0 && atomic.CompareAndSwapUint64(Word64(mem, off), Bits64(compare), Bits64(v))
	}
	return false
}
