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

// Commutative reports whether the op was created as commutative
// (MPI_Op_commutative). Local. A nil op is not.
func (o *UserOp[T]) Commutative() bool { return o != nil && o.commute }

// reducer is an Operation resolved for one call: apply sets
// inout = in ∘ inout element-wise.
type reducer[T atomics.Elem] struct {
	pre  atomics.Op
	user *UserOp[T]
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
		return reducer[T]{pre: o}, uint8(o), nil
	case *UserOp[T]:
		if o == nil || o.fn == nil {
			return reducer[T]{}, 0, fmt.Errorf("nil user op: %w", ErrOp)
		}
		return reducer[T]{user: o}, format.OpUser, nil
	}
	return reducer[T]{}, 0, fmt.Errorf("unknown op: %w", ErrOp)
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
