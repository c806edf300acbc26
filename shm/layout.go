package shm

import (
	"errors"
	"math"
	"os"
)

// PageSize is the system page size.
var PageSize = int64(os.Getpagesize())

// HugePageSize is the padding used per rank when huge pages are asked for.
const HugePageSize = 2 << 20

// CacheLine is the unit shared words are spread over so that unrelated words
// never share a line (128 covers adjacent-line prefetch on x86 and arm64).
const CacheLine = 128

// ErrSize marks a layout that cannot be made: a negative size or a total that
// overflows.
var ErrSize = errors.New("invalid segment size")

// AlignUp rounds n up to a multiple of a (a power of two), and reports false on
// overflow.
func AlignUp(n, a int64) (int64, bool) {
	if n > math.MaxInt64-(a-1) {
		return 0, false
	}
	return (n + a - 1) &^ (a - 1), true
}
