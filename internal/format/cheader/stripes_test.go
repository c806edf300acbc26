package cheader_test

import (
	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/shm"
)

// newStripes builds atomics' own Stripes over n heap stripes, so the test
// compares the C hash with the Go code that takes stripes, not a copy of it.
func newStripes(n int) (*atomics.Stripes, error) {
	region := shm.Bytes(make([]uint64, n*atomics.StripeLen/8))
	return atomics.NewStripes(region, nil, barrier.DefaultPolicy)
}
