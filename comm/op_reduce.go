//go:build !mpi

package comm

import (
	"fmt"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/internal/format"
)

// reducer is an Operation resolved for one call: apply sets
// inout = in ∘ inout element-wise.
type reducer[T atomics.Elem] struct {
	pre  atomics.Op
	user *UserOp[T]
	unit int // elements applied as one: 1, or a user op's InUnits
}

// resolve checks op for T (typ is atomics.TypeOf[T], which the caller has
// at hand); code is what the signature records.
func resolve[T atomics.Elem, O Operation[T]](op O, typ atomics.Type) (reducer[T], uint8, error) {
	switch o := any(op).(type) {
	case atomics.Op:
		if o == atomics.Replace || o == atomics.NoOp {
			return reducer[T]{}, 0, fmt.Errorf("%v is an RMA op, not a reduction: %w", o, ErrOp)
		}
		if err := atomics.Check(o, typ, false); err != nil {
			return reducer[T]{}, 0, fmt.Errorf("%v: %w", err, ErrOp)
		}
		return reducer[T]{pre: o, unit: 1}, uint8(o), nil
	case *UserOp[T]:
		if o == nil || o.fn == nil {
			return reducer[T]{}, 0, fmt.Errorf("nil user op: %w", ErrOp)
		}
		return reducer[T]{user: o, unit: max(1, o.unit)}, format.OpUser, nil
	}
	return reducer[T]{}, 0, fmt.Errorf("unknown op: %w", ErrOp)
}

// share is rank q's share [lo, hi) of m elements (a multiple of the
// unit) split among n ranks in whole units.
func (r reducer[T]) share(q, m, n int) (int, int) {
	mu := m / r.unit
	return q * mu / n * r.unit, (q + 1) * mu / n * r.unit
}

// chunk is the most elements of size s a buffer of b bytes holds in whole
// units (0 if not one unit).
func (r reducer[T]) chunk(b int64, s int) int {
	return int(b) / s / r.unit * r.unit
}

// unitErr is the argument error, or nil, of a reduction of m elements of
// s bytes by r: not whole units, or (large: the call moves its data a
// chunk of chunkBytes at a time) a unit larger than a chunk.
func (r reducer[T]) unitErr(m int, chunkBytes int64, s int, large bool) error {
	switch {
	case r.unit <= 1:
		return nil
	case m%r.unit != 0:
		return fmt.Errorf("%d elements are not whole units of %d (the user op's InUnits): %w", m, r.unit, ErrType)
	case large && r.chunk(chunkBytes, s) == 0:
		return fmt.Errorf("a user op over units of %d bytes: the call moves at most %d bytes at a time: %w", r.unit*s, chunkBytes, ErrType)
	}
	return nil
}

// apply sets inout[i] = in[i] ∘ inout[i].
func (r reducer[T]) apply(in, inout []T) {
	if r.user != nil {
		r.user.fn(in, inout)
		return
	}
	// resolve checked op and type; the lengths are the caller's.
	_ = atomics.ReduceLocal(in, inout, r.pre)
}

func opName(op uint8) string {
	if op == format.OpUser {
		return "a user op"
	}
	if op == 0 {
		return "no op"
	}
	return atomics.Op(op).String()
}

func typeName(t uint8) string {
	switch t {
	case typAny:
		return "Byte"
	case typMixed:
		return "mixed-type"
	}
	return atomics.Type(t).String()
}
