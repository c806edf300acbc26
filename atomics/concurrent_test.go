package atomics

import (
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/shmrun/shmrun/barrier"
)

// Goroutines over one heap segment stand in for ranks here, so that the race
// detector checks the kernels' synchronization; cross-process stress lives
// with the win package. Counts are exact invariants, never timings.

func goroutines() int { return max(8, 2*runtime.GOMAXPROCS(0)) }

// TestConcurrentFetchAndOpSum: every goroutine adds 1 to one int64 many
// times; the total is exact and the fetched values are exactly 0..N-1 (every
// ticket handed out once).
func TestConcurrentFetchAndOpSum(t *testing.T) {
	mem := newSegment(t, 64)
	putElems(mem, 16, []int64{0})
	g, rounds := goroutines(), 5000
	if testing.Short() {
		rounds = 500
	}
	tickets := make([][]int64, g)
	var wg sync.WaitGroup
	for w := range g {
		wg.Go(func() {
			for range rounds {
				old, err := FetchAndOp(mem, 16, int64(1), Sum, nil)
				if err != nil {
					t.Error(err)
					return
				}
				tickets[w] = append(tickets[w], old)
			}
		})
	}
	wg.Wait()
	total := int64(g * rounds)
	if got := getElem[int64](mem, 16); got != total {
		t.Fatalf("after %d concurrent adds of 1 the word is %d", total, got)
	}
	all := slices.Concat(tickets...)
	slices.Sort(all)
	for i, v := range all {
		if v != int64(i) {
			t.Fatalf("fetched values are not 0..%d: position %d holds %d", total-1, i, v)
		}
	}
	checkUntouched(t, newSegment(t, 64), mem, 16, 1, Int64)
}

// TestConcurrentSubwordNeighbours: six goroutines hammer neighbouring 1- and
// 2-byte elements that share aligned 32-bit words, with Sum, CAS, Bor/Band
// and Bxor, through all three kernels. No update may be lost and no byte
// outside the elements may change.
func TestConcurrentSubwordNeighbours(t *testing.T) {
	const base = 16 // word A = [16,20), word B = [20,24)
	mem := newSegment(t, 48)
	clear(mem[base : base+8])
	before := slices.Clone(mem)
	rounds := 20000
	if testing.Short() {
		rounds = 2000
	}
	var wg sync.WaitGroup
	fail := func(err error) bool {
		if err != nil {
			t.Error(err)
			return true
		}
		return false
	}
	wg.Go(func() { // byte 16: uint8 Accumulate(Sum)
		for range rounds {
			if fail(Accumulate(mem, base, []uint8{1}, Sum, nil)) {
				return
			}
		}
	})
	wg.Go(func() { // byte 17: int8 increment by a CompareAndSwap loop
		for range rounds {
			for {
				cur, err := FetchAndOp(mem, base+1, int8(0), NoOp, nil)
				if fail(err) {
					return
				}
				old, err := CompareAndSwap(mem, base+1, cur+1, cur, nil)
				if fail(err) {
					return
				}
				if old == cur {
					break
				}
			}
		}
	})
	wg.Go(func() { // bytes 18-19: uint16 FetchAndOp(Sum)
		for range rounds {
			if _, err := FetchAndOp(mem, base+2, uint16(3), Sum, nil); fail(err) {
				return
			}
		}
	})
	wg.Go(func() { // byte 20: uint8 sets and clears its low nibble
		for range rounds {
			if fail(Accumulate(mem, base+4, []uint8{0x0f}, Bor, nil)) {
				return
			}
			if _, err := FetchAndOp(mem, base+4, uint8(0xf0), Band, nil); fail(err) {
				return
			}
		}
	})
	wg.Go(func() { // byte 21: int8 GetAccumulate(Sum) of -1
		res := make([]int8, 1)
		for range rounds {
			if fail(GetAccumulate(mem, base+5, []int8{-1}, res, Sum, nil)) {
				return
			}
		}
	})
	wg.Go(func() { // bytes 22-23: int16 Bxor of a pattern, twice per round
		for range rounds {
			if fail(Accumulate(mem, base+6, []int16{0x5a5a}, Bxor, nil)) {
				return
			}
			if _, err := FetchAndOp(mem, base+6, int16(0x5a5a), Bxor, nil); fail(err) {
				return
			}
		}
	})
	wg.Wait()
	if got, want := getElem[uint8](mem, base), uint8(rounds); got != want {
		t.Errorf("uint8 Sum: %d, want %d", got, want)
	}
	if got, want := getElem[int8](mem, base+1), int8(rounds); got != want {
		t.Errorf("int8 CAS increments: %d, want %d", got, want)
	}
	if got, want := getElem[uint16](mem, base+2), uint16(3*rounds); got != want {
		t.Errorf("uint16 Sum: %d, want %d", got, want)
	}
	if got := getElem[uint8](mem, base+4); got != 0 {
		t.Errorf("uint8 Bor/Band: %#x, want 0", got)
	}
	if got, want := getElem[int8](mem, base+5), int8(-rounds); got != want {
		t.Errorf("int8 GetAccumulate Sum: %d, want %d", got, want)
	}
	if got := getElem[int16](mem, base+6); got != 0 {
		t.Errorf("int16 Bxor: %#x, want 0", got)
	}
	checkUntouched(t, before, mem, base, 8, Uint8)
}

// TestConcurrentStriped: complex128 Sum by many goroutines under the stripes
// is exact, an unaligned int64 next to it too, and concurrent atomic reads
// (GetAccumulate NoOp) never see a torn complex value.
func TestConcurrentStriped(t *testing.T) {
	mem := newSegment(t, 256)
	putElems(mem, 64, []complex128{0})
	putElems(mem, 81, []int64{0}) // unaligned: striped too
	before := slices.Clone(mem)
	st := newStripes(t, 4, nil, barrier.DefaultPolicy)
	g, rounds := goroutines(), 2000
	if testing.Short() {
		rounds = 200
	}
	var wg sync.WaitGroup
	for range g {
		wg.Go(func() {
			for range rounds {
				if err := Accumulate(mem, 64, []complex128{1 + 2i}, Sum, st); err != nil {
					t.Error(err)
					return
				}
				if _, err := FetchAndOp(mem, 81, int64(-1), Sum, st); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	readers.Go(func() {
		res := make([]complex128, 1)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := GetAccumulate(mem, 64, nil, res, NoOp, st); err != nil {
				t.Error(err)
				return
			}
			if 2*real(res[0]) != imag(res[0]) {
				t.Errorf("torn read: %v", res[0])
				return
			}
		}
	})
	wg.Wait()
	close(stop)
	readers.Wait()
	n := float64(g * rounds)
	if got := getElem[complex128](mem, 64); got != complex(n, 2*n) {
		t.Errorf("complex128 Sum: %v, want %v", got, complex(n, 2*n))
	}
	if got := getElem[int64](mem, 81); got != -int64(g*rounds) {
		t.Errorf("unaligned int64 Sum: %d, want %d", got, -g*rounds)
	}
	want := slices.Clone(before)
	putElems(want, 64, []complex128{complex(n, 2*n)})
	putElems(want, 81, []int64{-int64(g * rounds)})
	if !slices.Equal(want, mem) {
		t.Errorf("bytes around the elements changed:\nwant %x\ngot  %x", want, mem)
	}
}

// TestConcurrentPairs: MaxLoc from many goroutines ends at the global maximum
// with the lowest index that holds it.
func TestConcurrentPairs(t *testing.T) {
	mem := newSegment(t, 64)
	putElems(mem, 8, []TwoInt{{-1 << 31, 1 << 30}})
	st := newStripes(t, 2, nil, barrier.DefaultPolicy)
	g := goroutines()
	var wg sync.WaitGroup
	for w := range g {
		wg.Go(func() {
			for i := range int32(1000) {
				v := TwoInt{V: i % 500, I: int32(w)*1000 + i} // max 499, first at index 499
				if err := Accumulate(mem, 8, []TwoInt{v}, MaxLoc, st); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if got := getElem[TwoInt](mem, 8); got != (TwoInt{499, 499}) {
		t.Errorf("MaxLoc = %+v, want {499 499}", got)
	}
}
