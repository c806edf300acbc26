package shm_test

import (
	"math"
	"testing"

	"github.com/shmrun/shmrun/shm"
)

func TestAlignUp(t *testing.T) {
	for _, tt := range []struct {
		n, a, want int64
		ok         bool
	}{
		{0, 4096, 0, true},
		{1, 4096, 4096, true},
		{4096, 4096, 4096, true},
		{4097, 4096, 8192, true},
		{5 << 30, 2 << 20, 5 << 30, true},
		{5<<30 + 1, 2 << 20, 5<<30 + 2<<20, true},
		{math.MaxInt64 - 4094, 4096, 0, false},
		{math.MaxInt64 &^ 4095, 4096, math.MaxInt64 &^ 4095, true},
	} {
		got, ok := shm.AlignUp(tt.n, tt.a)
		if got != tt.want || ok != tt.ok {
			t.Errorf("AlignUp(%d, %d) = %d, %v; want %d, %v", tt.n, tt.a, got, ok, tt.want, tt.ok)
		}
	}
}
