package atomics_test

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/shmrun/shmrun/atomics"
)

// TestStoreRelease32 checks the width of the store (its neighbours keep
// their bytes) and message passing: a reader that acquires the flag sees
// the data stored before it.
func TestStoreRelease32(t *testing.T) {
	words := [3]uint32{0xAAAAAAAA, 0, 0xBBBBBBBB}
	atomics.StoreRelease32(&words[1], 0x12345678)
	if words != [3]uint32{0xAAAAAAAA, 0x12345678, 0xBBBBBBBB} {
		t.Fatalf("after StoreRelease32: %#x", words)
	}
	words64 := [3]uint64{0xAAAAAAAAAAAAAAAA, 0, 0xBBBBBBBBBBBBBBBB}
	atomics.StoreRelease64(&words64[1], 0x1234567890ABCDEF)
	if words64 != [3]uint64{0xAAAAAAAAAAAAAAAA, 0x1234567890ABCDEF, 0xBBBBBBBBBBBBBBBB} {
		t.Fatalf("after StoreRelease64: %#x", words64)
	}

	const rounds = 20000
	var data [8]uint64
	var flag, ack uint32
	done := make(chan error, 1)
	go func() {
		for i := uint32(1); i <= rounds; i++ {
			for atomic.LoadUint32(&flag) != i {
				runtime.Gosched()
			}
			for j := range data {
				if got := atomic.LoadUint64(&data[j]); got != uint64(i) {
					done <- fmt.Errorf("round %d: data[%d] = %d after the flag", i, j, got)
					return
				}
			}
			atomic.StoreUint32(&ack, i)
		}
		done <- nil
	}()
	for i := uint32(1); i <= rounds; i++ {
		for j := range data {
			data[j] = uint64(i) // plain stores, ordered by the release
		}
		atomics.StoreRelease32(&flag, i)
		for atomic.LoadUint32(&ack) != i {
			runtime.Gosched()
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
