package atomics

import (
	"sync/atomic"
	"testing"

	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/internal/raw"
)

// Single-process latency of the kernels on a heap segment (uncontended, the
// line stays in this core's cache). bench/ measures them across processes
// with Flush; these show what the kernel itself adds to the one locked
// instruction (BenchmarkBaselineAtomicAdd).

func benchSegment(b *testing.B) ([]byte, *Stripes) {
	mem := newSegment(b, 32<<10)
	clear(mem)
	return mem, newStripes(b, 64, nil, barrier.DefaultPolicy)
}

func BenchmarkBaselineAtomicAdd(b *testing.B) {
	mem, _ := benchSegment(b)
	p := raw.Word64(mem, 64)
	for b.Loop() {
		atomic.AddUint64(p, 1)
	}
}

func BenchmarkFetchAndOpSumInt64(b *testing.B) {
	mem, st := benchSegment(b)
	for b.Loop() {
		if _, err := FetchAndOp(mem, 64, int64(1), Sum, st); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFetchAndOpSumUint32(b *testing.B) {
	mem, st := benchSegment(b)
	for b.Loop() {
		if _, err := FetchAndOp(mem, 64, uint32(1), Sum, st); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFetchAndOpSumFloat64(b *testing.B) {
	mem, st := benchSegment(b)
	for b.Loop() {
		if _, err := FetchAndOp(mem, 64, 1.0, Sum, st); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFetchAndOpSumInt8(b *testing.B) {
	mem, st := benchSegment(b)
	for b.Loop() {
		if _, err := FetchAndOp(mem, 65, int8(1), Sum, st); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFetchAndOpNoOpInt64(b *testing.B) {
	mem, st := benchSegment(b)
	for b.Loop() {
		if _, err := FetchAndOp(mem, 64, int64(0), NoOp, st); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCompareAndSwapInt64(b *testing.B) {
	mem, st := benchSegment(b)
	var cur int64
	for b.Loop() {
		old, err := CompareAndSwap(mem, 64, cur+1, cur, st)
		if err != nil || old != cur {
			b.Fatal(old, err)
		}
		cur++
	}
}

func BenchmarkAccumulateSumInt64(b *testing.B) {
	mem, st := benchSegment(b)
	src := []int64{1}
	for b.Loop() {
		if err := Accumulate(mem, 64, src, Sum, st); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAccumulateSumInt64x1024(b *testing.B) {
	mem, st := benchSegment(b)
	src := make([]int64, 1024)
	b.SetBytes(8 * 1024)
	for b.Loop() {
		if err := Accumulate(mem, 64, src, Sum, st); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAccumulateReplaceInt64x1024(b *testing.B) {
	mem, st := benchSegment(b)
	src := make([]int64, 1024)
	b.SetBytes(8 * 1024)
	for b.Loop() {
		if err := Accumulate(mem, 64, src, Replace, st); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetAccumulateSumInt64(b *testing.B) {
	mem, st := benchSegment(b)
	src, res := []int64{1}, make([]int64, 1)
	for b.Loop() {
		if err := GetAccumulate(mem, 64, src, res, Sum, st); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetAccumulateNoOpInt64(b *testing.B) {
	mem, st := benchSegment(b)
	res := make([]int64, 1)
	for b.Loop() {
		if err := GetAccumulate[int64](mem, 64, nil, res, NoOp, st); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFetchAndOpSumComplex128(b *testing.B) {
	mem, st := benchSegment(b)
	for b.Loop() {
		if _, err := FetchAndOp(mem, 64, complex(1, 1), Sum, st); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAccumulateSumComplex128(b *testing.B) {
	mem, st := benchSegment(b)
	src := []complex128{1 + 1i}
	for b.Loop() {
		if err := Accumulate(mem, 64, src, Sum, st); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAccumulateSumComplex128x1024(b *testing.B) {
	mem, st := benchSegment(b)
	src := make([]complex128, 1024)
	b.SetBytes(16 * 1024)
	for b.Loop() {
		if err := Accumulate(mem, 64, src, Sum, st); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFetchAndOpMaxLocDoubleInt(b *testing.B) {
	mem, st := benchSegment(b)
	for b.Loop() {
		if _, err := FetchAndOp(mem, 64, DoubleInt{1, 2}, MaxLoc, st); err != nil {
			b.Fatal(err)
		}
	}
}

// Contended: every goroutine on one word, and on one stripe.

func BenchmarkFetchAndOpSumInt64Contended(b *testing.B) {
	mem, st := benchSegment(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := FetchAndOp(mem, 64, int64(1), Sum, st); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkFetchAndOpSumComplex128Contended(b *testing.B) {
	mem, st := benchSegment(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := FetchAndOp(mem, 64, complex(1, 1), Sum, st); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
