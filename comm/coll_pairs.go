//go:build !mpi

package comm

import (
	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/internal/typesig"
)

// The pair types in the data-movement collectives (Bcast, the gathers,
// scatters and all-to-alls). MPI defines a pair type as the struct of a
// value and an int (MPI 4.1 §6.9.4): its type signature is its two
// halves, and type matching is by signature. So a collective counts them
// as the point-to-point calls do (pairs.go): TwoInt as twice as many
// int32, a pair of two different types as mixed data counted in bytes,
// which meet a struct of the same basic types; and the pairs whose Go
// struct has padding (DoubleInt, LongInt, ShortInt) move packed, through
// the typed forms, as a C program's MPI_DOUBLE_INT does. The reductions
// name the pair type itself: its op reduces pairs.

// moveWire is the wire a data-movement collective counts data of element
// type k (of its Go size: no padding) in.
func moveWire(k atomics.Type) wire {
	if k < atomics.FloatIntT || k > atomics.ShortIntT { // not a pair
		return wire{typ: uint8(k), size: k.Size()}
	}
	typ, size := typesig.CollElem(k)
	return wire{typ: typ, size: size}
}

// genericWire is the wire of the generic forms' data of T (its counts and
// displacements count Ts), and T's basic datatype if T is a pair type
// whose Go struct holds padding, for which the generic forms take the
// typed forms; else nil. One type switch: it runs at every generic call.
func genericWire[T atomics.Elem]() (wire, *dtype.Type) {
	k, size := atomics.TypeOf[T](), raw.SizeOf[T]()
	w := moveWire(k)
	w.size = size
	if k >= atomics.FloatIntT && k <= atomics.ShortIntT {
		if t := dtype.Basic(k); t.Size() != int64(size) {
			return w, t
		}
	}
	return w, nil
}

// blockCount is the count of a rank's block in a generic in-place call
// whose buffer holds n blocks at the root (or everywhere: root -1) and
// one block elsewhere.
func blockCount(c *Comm, l, root int) int {
	if root < 0 || c.Rank() == root {
		return l / c.Size()
	}
	return l
}

// whole reports whether a generic in-place call's buffer of l elements
// splits into c.Size() blocks where it must (at root, or everywhere: root
// -1); if not, or c is nil, the generic path reports the error.
func whole(c *Comm, l, root int) bool {
	if c == nil || c.Size() == 0 {
		return false // the generic path reports the communicator
	}
	return (root >= 0 && c.Rank() != root) || l%c.Size() == 0
}

// apart reports whether a generic call's send and recv are apart where the
// call uses both (at root, or everywhere: root -1); if not, the generic
// path reports the overlap (ErrBuffer).
func apart[T atomics.Elem](c *Comm, send, recv []T, root int) bool {
	if c == nil {
		return false // the generic path reports the communicator
	}
	return (root >= 0 && c.Rank() != root) || !overlap(raw.Bytes(send), raw.Bytes(recv))
}
