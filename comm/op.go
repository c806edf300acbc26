package comm

import (
	"fmt"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/internal/format"
)

// Operation is what the reducing collectives (Reduce, Allreduce,
// ReduceScatterBlock, Scan, Exscan and their in-place forms) accept as
// their op: a predefined atomics.Op (Sum, Prod, Max, Min, Band, Bor, Bxor,
// Land, Lor, Lxor, MinLoc, MaxLoc; Replace and NoOp are RMA-only and
// refused with ErrOp), or a user op made by OpCreate for the same element
// type.
type Operation[T atomics.Elem] interface {
	atomics.Op | *UserOp[T]
}

// UserOp is a user-defined reduction (an MPI_Op made by MPI_Op_create),
// for elements of type T.
type UserOp[T atomics.Elem] struct {
	fn      func(in, inout []T)
	commute bool
	unit    int // elements fn takes as one (InUnits); 0 means 1
}

// OpCreate makes a user-defined reduction op (MPI_Op_create). Local. fn
// must set inout[i] = in[i] ∘ inout[i] for every i, for an associative ∘;
// commute says whether ∘ is also commutative. The runtime always applies
// ops in rank order — x0 ∘ (x1 ∘ (... ∘ x_{n-1})) — so a non-commutative op
// gets the standard's order and every op gets the same result in every
// run; commute is kept for Commutative (MPI_Op_commutative). fn is called
// on slices of the runtime's buffers, which it must not keep.
func OpCreate[T atomics.Elem](fn func(in, inout []T), commute bool) (*UserOp[T], error) {
	if fn == nil {
		return nil, fmt.Errorf("comm: OpCreate: nil function: %w", ErrOp)
	}
	return &UserOp[T]{fn: fn, commute: commute}, nil
}

// InUnits returns op applied to whole units of n elements: every call of
// its function gets in and inout slices of a multiple of n elements that
// begin at a unit's first element, as MPI calls a user function with
// whole instances of the call's datatype (an op over 3-vectors of float64
// stored flat is OpCreate's function over triples, InUnits(3)). Local;
// op itself is unchanged. The typed forms (ReduceType and its kind) apply
// a user op to whole instances of their datatype by themselves. The
// reducing calls refuse, with ErrType on every rank, data of more than
// one chunk of the collective area that is not a multiple of n elements,
// and units larger than a chunk (the staging buffers; 4 KiB or more).
func (o *UserOp[T]) InUnits(n int) (*UserOp[T], error) {
	if o == nil || o.fn == nil {
		return nil, fmt.Errorf("comm: InUnits: nil user op: %w", ErrOp)
	}
	if n < 1 {
		return nil, fmt.Errorf("comm: InUnits: %d elements a unit: %w", n, ErrArg)
	}
	cp := *o
	cp.unit = n
	return &cp, nil
}

// Commutative reports whether the op was created as commutative
// (MPI_Op_commutative). Local. A nil op is not.
func (o *UserOp[T]) Commutative() bool { return o != nil && o.commute }

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
