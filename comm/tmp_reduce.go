package comm

import (
	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/internal/raw"
)

func reduceLocalTmp[T atomics.Elem](in, inout []T, op atomics.Op) error {
	return atomics.Accumulate(raw.Bytes(inout), 0, in, op, nil)
}
