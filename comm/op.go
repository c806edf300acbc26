package comm

import (
	"fmt"

	"github.com/shmrun/shmrun/atomics"
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
