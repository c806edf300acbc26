package atomics

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/shmrun/shmrun/internal/raw"
)

// raw.FetchAddWord must do the add exactly where it applies and leave memory
// alone everywhere else: the callers fall back to FetchAndOp on false, so a
// false that had already added would count twice.
func TestFetchAddWord(t *testing.T) {
	mem := raw.Bytes(make([]uint64, 4)) // 32 bytes, 8-byte aligned
	for off := int64(-16); off <= 40; off++ {
		clear(mem)
		before := bytes.Clone(mem)
		old, ok := raw.FetchAddWord(mem, off, int64(5))
		want := off >= 0 && off%8 == 0 && off+8 <= int64(len(mem))
		if ok != want {
			t.Fatalf("int64 at %d: ok = %v, want %v", off, ok, want)
		}
		if !ok {
			if !bytes.Equal(mem, before) {
				t.Fatalf("int64 at %d: refused, but memory changed", off)
			}
			continue
		}
		if old != 0 {
			t.Fatalf("int64 at %d: old %d, want 0", off, old)
		}
		if got, _ := raw.FetchAddWord(mem, off, int64(-7)); got != 5 {
			t.Fatalf("int64 at %d: second old %d, want 5", off, got)
		}
		if got, _ := FetchAndOp(mem, off, int64(0), NoOp, nil); got != -2 {
			t.Fatalf("int64 at %d: value %d, want -2", off, got)
		}
	}
	// Unsigned wrap-around.
	clear(mem)
	raw.FetchAddWord(mem, 8, uint64(math.MaxUint64))
	if old, ok := raw.FetchAddWord(mem, 8, uint64(2)); !ok || old != math.MaxUint64 {
		t.Fatalf("uint64: old %d ok %v", old, ok)
	}
	if got, _ := FetchAndOp(mem, 8, uint64(0), NoOp, nil); got != 1 {
		t.Fatalf("uint64 wrap: value %d, want 1", got)
	}
	// Memory cut at an odd address is no usable segment, even where the
	// word's own address is aligned: the general path refuses it too
	// (ErrArg), so the same element never takes two paths.
	clear(mem)
	for _, off := range []int64{7, 8} {
		if _, ok := raw.FetchAddWord(mem[1:], off, int64(1)); ok {
			t.Fatalf("word at %d of a segment at an odd address accepted", off)
		}
		if _, err := FetchAndOp(mem[1:], off, int64(1), Sum, nil); !errors.Is(err, ErrArg) {
			t.Fatalf("FetchAndOp at %d of a segment at an odd address: %v, want ErrArg", off, err)
		}
	}
	clear(mem)
	// Every other type is left to FetchAndOp, named int64 types included.
	type count int64
	checks := map[string]bool{}
	_, checks["int32"] = raw.FetchAddWord(mem, 0, int32(1))
	_, checks["float64"] = raw.FetchAddWord(mem, 0, float64(1))
	_, checks["count"] = raw.FetchAddWord(mem, 0, count(1))
	_, checks["complex128"] = raw.FetchAddWord(mem, 0, complex128(1))
	for name, ok := range checks {
		if ok {
			t.Errorf("%s: FetchAddWord applied", name)
		}
	}
	if !bytes.Equal(mem, make([]byte, len(mem))) {
		t.Fatal("refused types changed memory")
	}
}

// raw.SwapIfWord must swap exactly when the element equals compare in the case
// it handles, and change nothing otherwise (callers fall back to
// CompareAndSwap on false).
func TestSwapIfWord(t *testing.T) {
	mem := raw.Bytes(make([]uint64, 4))
	for off := int64(-16); off <= 40; off++ {
		clear(mem)
		applies := off >= 0 && off%8 == 0 && off+8 <= int64(len(mem))
		if raw.SwapIfWord(mem, off, int64(9), int64(1)) {
			t.Fatalf("int64 at %d: swapped 0 though compare was 1", off)
		}
		if !bytes.Equal(mem, make([]byte, len(mem))) {
			t.Fatalf("int64 at %d: a failed swap changed memory", off)
		}
		if got := raw.SwapIfWord(mem, off, int64(-9), int64(0)); got != applies {
			t.Fatalf("int64 at %d: swapped %v, want %v", off, got, applies)
		}
		if applies {
			if v, _ := FetchAndOp(mem, off, int64(0), NoOp, nil); v != -9 {
				t.Fatalf("int64 at %d: value %d after the swap, want -9", off, v)
			}
		} else if !bytes.Equal(mem, make([]byte, len(mem))) {
			t.Fatalf("int64 at %d: refused, but memory changed", off)
		}
	}
	clear(mem)
	if raw.SwapIfWord(mem[1:], 8, uint64(1), 0) {
		t.Fatal("unaligned address accepted")
	}
	type count int64
	if raw.SwapIfWord(mem, 0, int32(1), 0) || raw.SwapIfWord(mem, 0, count(1), 0) || raw.SwapIfWord(mem, 0, uint8(1), 0) {
		t.Fatal("a type other than int64/uint64 was swapped")
	}
	if !bytes.Equal(mem, make([]byte, len(mem))) {
		t.Fatal("refused types changed memory")
	}
}
