//go:build !mpi

package win_test

import (
	"sync"
	"testing"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/win"
)

// benchWindow gives rank 0 of a two-rank heap world a window whose rank 1
// sits idle in a barrier until the benchmark ends: origin-side costs with the
// target idle, as in bench/RESULTS.md.
func benchWindow(b *testing.B, size int) *win.Win {
	b.Helper()
	cs, err := comm.NewLocalWorld(2)
	if err != nil {
		b.Fatal(err)
	}
	ws := make([]*win.Win, 2)
	var wg sync.WaitGroup
	for i := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := win.AllocateShared(cs[i], size, 1, nil)
			if err != nil {
				b.Error(err)
				return
			}
			ws[i] = w
		}()
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		cs[1].Barrier()
		ws[1].Free()
	}()
	b.Cleanup(func() {
		cs[0].Barrier()
		ws[0].Free()
		<-done
	})
	return ws[0]
}

func BenchmarkPut8Flush(b *testing.B) {
	w := benchWindow(b, 4096)
	src := make([]byte, 8)
	w.LockAll(0)
	for b.Loop() {
		w.Put(src, 1, 64)
		w.Flush(1)
	}
	w.UnlockAll()
}

func BenchmarkGet8Flush(b *testing.B) {
	w := benchWindow(b, 4096)
	dst := make([]byte, 8)
	w.LockAll(0)
	for b.Loop() {
		w.Get(dst, 1, 64)
		w.Flush(1)
	}
	w.UnlockAll()
}

func BenchmarkFetchAndOpFlush(b *testing.B) {
	w := benchWindow(b, 4096)
	w.LockAll(0)
	for b.Loop() {
		win.FetchAndOp(w, int64(1), 1, 64, atomics.Sum)
		w.Flush(1)
	}
	w.UnlockAll()
}

func BenchmarkCompareAndSwapFlush(b *testing.B) {
	w := benchWindow(b, 4096)
	w.LockAll(0)
	for b.Loop() {
		win.CompareAndSwap(w, int64(1), 0, 1, 64)
		w.Flush(1)
	}
	w.UnlockAll()
}

func BenchmarkAccumulateFlush(b *testing.B) {
	w := benchWindow(b, 4096)
	src := []int64{1}
	w.LockAll(0)
	for b.Loop() {
		win.Accumulate(w, src, 1, 64, atomics.Sum)
		w.Flush(1)
	}
	w.UnlockAll()
}

func BenchmarkGetAccumulateFlush(b *testing.B) {
	w := benchWindow(b, 4096)
	src, res := []int64{1}, []int64{0}
	w.LockAll(0)
	for b.Loop() {
		win.GetAccumulate(w, src, res, 1, 64, atomics.Sum)
		w.Flush(1)
	}
	w.UnlockAll()
}

func BenchmarkLockUnlockExclusive(b *testing.B) {
	w := benchWindow(b, 4096)
	for b.Loop() {
		w.Lock(win.Exclusive, 1, 0)
		w.Unlock(1)
	}
}

func BenchmarkLockAllUnlockAll(b *testing.B) {
	w := benchWindow(b, 4096)
	for b.Loop() {
		w.LockAll(0)
		w.UnlockAll()
	}
}

func BenchmarkPut64KFlush(b *testing.B) {
	w := benchWindow(b, 1<<20)
	src := make([]byte, 64<<10)
	w.LockAll(0)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		w.Put(src, 1, 0)
		w.Flush(1)
	}
	w.UnlockAll()
}

// BenchmarkPutTypeSubarrayFlush is bench/'s put_type_subarray_64 row on a
// heap world: a 64×64 block of a 1024×1024 float64 matrix, the same
// Subarray on both sides, + Flush.
func BenchmarkPutTypeSubarrayFlush(b *testing.B) {
	const n = 1024
	w := benchWindow(b, 8*n*n)
	t, err := dtype.Subarray([]int{n, n}, []int{64, 64}, []int{100, 200}, dtype.OrderC, dtype.Basic(atomics.Float64))
	if err != nil || t.Commit() != nil {
		b.Fatal(err)
	}
	src := make([]byte, 8*n*n)
	w.LockAll(0)
	for b.Loop() {
		win.PutType(w, src, 1, t, 1, 0, 1, t)
		w.Flush(1)
	}
	w.UnlockAll()
}
