package comm

import (
	"fmt"
	"math"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/dtype"
)

// GetCountType is the number of whole instances of t a status's message
// holds (MPI_Get_count with a datatype), or Undefined if its bytes are
// not a whole number of instances; 0 for a type of size 0 (MPI 4.1
// §3.2.5). Local.
func GetCountType(st Status, t *dtype.Type) (int, error) {
	if err := t.CheckCommitted(); err != nil {
		return 0, fmt.Errorf("comm: GetCountType: %v: %w", err, ErrType)
	}
	size := int(t.Size())
	switch {
	case size == 0:
		return 0, nil
	case st.bytes%size != 0:
		return Undefined, nil
	}
	return st.bytes / size, nil
}

// GetElements is the number of basic elements of t's signature a status's
// message holds (MPI_Get_elements): partial instances count their whole
// elements; the pair types (FloatInt, ...) count as two elements each.
// Undefined if the message ends inside an element; 0 for a type of size
// 0. Local.
func GetElements(st Status, t *dtype.Type) (int, error) {
	sig, err := t.Signature()
	if err != nil {
		return 0, fmt.Errorf("comm: GetElements: %v: %w", err, ErrType)
	}
	size, n := t.Size(), int64(st.bytes)
	if n == 0 || size == 0 {
		return 0, nil // a type of size 0 holds no elements, as GetCountType says
	}
	per := int64(0)
	for _, r := range sig {
		per += r.N * elems(r)
	}
	total := n / size * per
	rem := n % size
	for _, r := range sig {
		if rem == 0 {
			break
		}
		es := dtype.Basic(r.T).Size()
		if r.IsByte {
			es = 1
		}
		k := min(r.N, rem/es)
		total += k * elems(r)
		if rem -= k * es; k < r.N && rem > 0 {
			return Undefined, nil
		}
	}
	if rem != 0 {
		return Undefined, nil
	}
	return int(total), nil
}

// elems is the basic elements one element of a signature run counts for.
func elems(r dtype.SigRun) int64 {
	if !r.IsByte && r.T >= atomics.FloatIntT && r.T <= atomics.ShortIntT {
		return 2
	}
	return 1
}

// blockOffset is the byte offset of a v form's block at displ extents of
// ext bytes in a buffer of n bytes, and whether it lies inside (at most at
// its end). No product is taken before the bounds: a displacement times
// the extent may wrap past 2^63, and a type resized to a negative extent
// puts the block before the buffer.
func blockOffset(displ int, ext int64, n int) (int64, bool) {
	d := int64(displ)
	switch {
	case d == 0:
		return 0, true
	case d < 0 || ext <= 0 || d > int64(n)/ext:
		return 0, false
	}
	return d * ext, true
}

// blocksOf is the instances of n blocks of count each, or math.MaxInt
// where that overflows: more than any buffer holds or any type's size
// allows, so tcheck reports it (ErrCount, ErrBuffer), where the wrapped
// product could pass as a small count (2^62 on 4 ranks as 0).
func blocksOf(count, n int) int {
	if count > 0 && n > 0 && count > math.MaxInt/n {
		return math.MaxInt
	}
	return count * n
}
