//go:build mpi

package comm

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/internal/mpi"
	"github.com/shmrun/shmrun/internal/raw"
)

// Under the MPI backend every collective is the MPI's own call, made once
// with the whole buffer: one cgo call. Argument errors this rank can see
// (a bad root, a buffer too small, an op not defined on the type) are
// found in Go before the call; counts that differ between ranks are the
// MPI's to detect, and most MPIs do not.

// red resolves op for T into the MPI's datatype and op, and the elements
// one instance of that datatype holds.
func red[T atomics.Elem, O Operation[T]](call string, op O) (mpi.Red, int, error) {
	typ := atomics.TypeOf[T]()
	switch o := any(op).(type) {
	case atomics.Op:
		if o == atomics.Replace || o == atomics.NoOp {
			return mpi.Red{}, 0, fmt.Errorf("comm: %s: %v is an RMA op, not a reduction: %w", call, o, ErrOp)
		}
		if err := atomics.Check(o, typ, false); err != nil {
			return mpi.Red{}, 0, fmt.Errorf("comm: %s: %v: %w", call, err, ErrOp)
		}
		return mpi.Predefined(typ, o), 1, nil
	case *UserOp[T]:
		if o == nil || o.fn == nil {
			return mpi.Red{}, 0, fmt.Errorf("comm: %s: nil user op: %w", call, ErrOp)
		}
		r, err := userRed(o)
		if err != nil {
			return mpi.Red{}, 0, mpiError(call, err)
		}
		return r, max(1, o.unit), nil
	}
	return mpi.Red{}, 0, fmt.Errorf("comm: %s: unknown op: %w", call, ErrOp)
}

// userReds holds the MPI op made for each user op (a *UserOp[T]).
var userReds sync.Map

func userRed[T atomics.Elem](o *UserOp[T]) (mpi.Red, error) {
	if r, ok := userReds.Load(o); ok {
		return r.(mpi.Red), nil
	}
	unit := max(1, o.unit)
	size := atomics.SizeOf[T]()
	fn := o.fn
	r, err := mpi.NewUserOp(unit*size, o.commute, func(in, inout unsafe.Pointer, n int) {
		m := n * unit
		fn(unsafe.Slice((*T)(in), m), unsafe.Slice((*T)(inout), m))
	})
	if err != nil {
		return mpi.Red{}, err
	}
	userReds.Store(o, r)
	return r, nil
}

func (c *Comm) checkRoot(call string, root int) error {
	if root < 0 || root >= c.size {
		return fmt.Errorf("comm: %s on rank %d: root %d is not a rank of the communicator (0..%d): %w", call, c.rank, root, c.size-1, ErrRoot)
	}
	return nil
}

// blocks checks that m elements split into c.Size() equal blocks.
func (c *Comm) blocks(call string, m int) error {
	if m%c.size != 0 {
		return fmt.Errorf("comm: %s: %d elements are not %d equal blocks: %w", call, m, c.size, ErrCount)
	}
	return nil
}

func short(call string, what string, have, want int) error {
	return fmt.Errorf("comm: %s: %s holds %d elements, %d needed: %w", call, what, have, want, ErrCount)
}

// units checks that m elements are whole units of unit.
func units(call string, m, unit int) error {
	if m%unit != 0 {
		return fmt.Errorf("comm: %s: %d elements are not whole units of %d (the user op's InUnits): %w", call, m, unit, ErrType)
	}
	return nil
}

// Bcast copies root's buf into every other rank's buf (MPI_Bcast).
// Collective. len(buf) must be the same on every rank.
func Bcast[T atomics.Elem](c *Comm, buf []T, root int) error {
	if err := c.usable("Bcast"); err != nil {
		return err
	}
	if err := c.checkRoot("Bcast", root); err != nil {
		return err
	}
	return mpiError("Bcast", c.h.Bcast(raw.Bytes(buf), root))
}

// reduction resolves op for a reducing call and counts its data: len(send)
// elements, or len(recv) in place (a nil send). recv must hold them where
// used says the call uses it, and comes back cut to them. The count is in
// instances of the reduction's datatype (whole units of a user op).
func reduction[T atomics.Elem, O Operation[T]](call string, c *Comm, send, recv []T, op O, used bool) (mpi.Red, int, []T, error) {
	r, unit, err := red[T](call, op)
	if err != nil {
		return mpi.Red{}, 0, nil, err
	}
	m := len(recv)
	if send != nil {
		m = len(send)
		if used && len(recv) < m {
			return mpi.Red{}, 0, nil, short(call, "recv", len(recv), m)
		}
		recv = recv[:min(len(recv), m)]
		if used {
			if err := aliased(call, c.rank, raw.Bytes(send), raw.Bytes(recv)); err != nil {
				return mpi.Red{}, 0, nil, err
			}
		}
	}
	if err := units(call, m, unit); err != nil {
		return mpi.Red{}, 0, nil, err
	}
	return r, m / unit, recv, nil
}

// reduce is Reduce (root >= 0) and Allreduce; a nil send is in place.
func reduce[T atomics.Elem, O Operation[T]](call string, c *Comm, send, recv []T, op O, root int) error {
	if err := c.usable(call); err != nil {
		return err
	}
	if root >= 0 {
		if err := c.checkRoot(call, root); err != nil {
			return err
		}
	}
	r, m, recv, err := reduction(call, c, send, recv, op, root < 0 || c.rank == root)
	if err != nil {
		return err
	}
	return mpiError(call, c.h.Reduce(bytesOrNil(send), raw.Bytes(recv), m, r, root))
}

// bytesOrNil is s's bytes, nil for a nil s (MPI_IN_PLACE) and an empty
// non-nil slice for an empty one.
func bytesOrNil[T any](s []T) []byte {
	if s == nil {
		return nil
	}
	if len(s) == 0 {
		return []byte{}
	}
	return raw.Bytes(s)
}

// Reduce combines every rank's send with op and leaves the result in
// root's recv[:len(send)] (MPI_Reduce). Collective.
func Reduce[T atomics.Elem, O Operation[T]](c *Comm, send, recv []T, op O, root int) error {
	if root < 0 {
		return c.checkRoot("Reduce", root)
	}
	return reduce("Reduce", c, nonNil(send), recv, op, root)
}

// nonNil keeps an empty send an ordinary buffer, not MPI_IN_PLACE.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// ReduceInPlace is Reduce with MPI_IN_PLACE at the root: on root, buf is
// both its contribution and the result; on the other ranks it is their
// contribution. Collective.
func ReduceInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []T, op O, root int) error {
	if root < 0 {
		return c.checkRoot("ReduceInPlace", root)
	}
	if c != nil && c.rank == root {
		return reduce("ReduceInPlace", c, nil, buf, op, root)
	}
	return reduce("ReduceInPlace", c, nonNil(buf), nil, op, root)
}

// Allreduce combines every rank's send with op and leaves the result in
// every rank's recv[:len(send)] (MPI_Allreduce). Collective.
func Allreduce[T atomics.Elem, O Operation[T]](c *Comm, send, recv []T, op O) error {
	return reduce("Allreduce", c, nonNil(send), recv, op, -1)
}

// AllreduceInPlace is Allreduce with MPI_IN_PLACE: buf is the contribution
// and, on return, the result. Collective.
func AllreduceInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []T, op O) error {
	return reduce("AllreduceInPlace", c, nil, buf, op, -1)
}

// scan is Scan and Exscan; a nil send is in place.
func scan[T atomics.Elem, O Operation[T]](call string, c *Comm, send, recv []T, op O, ex bool) error {
	if err := c.usable(call); err != nil {
		return err
	}
	r, m, recv, err := reduction(call, c, send, recv, op, !(ex && c.rank == 0))
	if err != nil {
		return err
	}
	if ex && c.rank == 0 && send != nil && len(recv) < len(send) {
		// Rank 0's recv is not used by Exscan; give the MPI room anyway.
		recv = make([]T, len(send))
	}
	return mpiError(call, c.h.Scan(bytesOrNil(send), raw.Bytes(recv), m, r, ex))
}

// Scan leaves in rank r's recv the reduction of send over ranks 0..r
// (MPI_Scan). Collective.
func Scan[T atomics.Elem, O Operation[T]](c *Comm, send, recv []T, op O) error {
	return scan("Scan", c, nonNil(send), recv, op, false)
}

// ScanInPlace is Scan with MPI_IN_PLACE. Collective.
func ScanInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []T, op O) error {
	return scan("ScanInPlace", c, nil, buf, op, false)
}

// Exscan leaves in rank r's recv the reduction of send over ranks 0..r-1
// (MPI_Exscan); rank 0's recv is left as it was. Collective.
func Exscan[T atomics.Elem, O Operation[T]](c *Comm, send, recv []T, op O) error {
	return scan("Exscan", c, nonNil(send), recv, op, true)
}

// ExscanInPlace is Exscan with MPI_IN_PLACE. Collective.
func ExscanInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []T, op O) error {
	return scan("ExscanInPlace", c, nil, buf, op, true)
}

// ReduceScatterBlock combines every rank's send with op and gives rank r
// elements [r·m, (r+1)·m) of the result in recv, m = len(recv)
// (MPI_Reduce_scatter_block). Collective.
func ReduceScatterBlock[T atomics.Elem, O Operation[T]](c *Comm, send, recv []T, op O) error {
	if err := c.usable("ReduceScatterBlock"); err != nil {
		return err
	}
	if len(send) < c.size*len(recv) {
		return short("ReduceScatterBlock", "send", len(send), c.size*len(recv))
	}
	return reduceScatter("ReduceScatterBlock", c, nonNil(send[:c.size*len(recv)]), recv, len(recv), op)
}

// ReduceScatterBlockInPlace is ReduceScatterBlock with MPI_IN_PLACE: buf
// holds n blocks of len(buf)/n elements, and on return its first block is
// this rank's block of the result. Collective.
func ReduceScatterBlockInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []T, op O) error {
	if err := c.usable("ReduceScatterBlockInPlace"); err != nil {
		return err
	}
	if err := c.blocks("ReduceScatterBlockInPlace", len(buf)); err != nil {
		return err
	}
	return reduceScatter("ReduceScatterBlockInPlace", c, nil, buf, len(buf)/c.size, op)
}

func reduceScatter[T atomics.Elem, O Operation[T]](call string, c *Comm, send, recv []T, m int, op O) error {
	r, unit, err := red[T](call, op)
	if err != nil {
		return err
	}
	if err := units(call, m, unit); err != nil {
		return err
	}
	return mpiError(call, c.h.ReduceScatterBlock(bytesOrNil(send), raw.Bytes(recv), m/unit, r))
}

// move runs one of the data-moving collectives of k elements a rank; a
// nil send is in place.
func move[T atomics.Elem](call string, kind int, c *Comm, send, recv []T, k, root int) error {
	s := atomics.SizeOf[T]()
	if send != nil && recv != nil && (c.rank == root || kind == mpi.MoveAllgather || kind == mpi.MoveAlltoall) {
		// The bytes a non-in-place call uses on a rank that both sends
		// and receives may not overlap (MPI 4.1 §2.3), as the other
		// backend says.
		sb, rb := raw.Bytes(send), raw.Bytes(recv)
		switch kind {
		case mpi.MoveScatter:
			sb = sb[:min(len(sb), c.size*k*s)]
			rb = rb[:min(len(rb), k*s)]
		case mpi.MoveAlltoall:
			sb, rb = sb[:min(len(sb), c.size*k*s)], rb[:min(len(rb), c.size*k*s)]
		default: // Gather, Allgather
			sb, rb = sb[:min(len(sb), k*s)], rb[:min(len(rb), c.size*k*s)]
		}
		if err := aliased(call, c.rank, sb, rb); err != nil {
			return err
		}
	}
	return mpiError(call, c.h.Move(kind, bytesOrNil(send), bytesOrNil(recv), k*s, root))
}

func (c *Comm) rooted(call string, root int) error {
	if err := c.usable(call); err != nil {
		return err
	}
	return c.checkRoot(call, root)
}

// Gather collects every rank's send into root's recv, rank q's block at
// q·len(send) (MPI_Gather). Collective.
func Gather[T atomics.Elem](c *Comm, send, recv []T, root int) error {
	if err := c.rooted("Gather", root); err != nil {
		return err
	}
	k := len(send)
	if c.rank == root && len(recv) < c.size*k {
		return short("Gather", "recv", len(recv), c.size*k)
	}
	return move("Gather", mpi.MoveGather, c, nonNil(send), recv, k, root)
}

// GatherInPlace is Gather with MPI_IN_PLACE at the root: on root, buf is
// the receive buffer, n blocks of len(buf)/n elements, with root's own
// block already in place; elsewhere buf is the rank's contribution.
// Collective.
func GatherInPlace[T atomics.Elem](c *Comm, buf []T, root int) error {
	if err := c.rooted("GatherInPlace", root); err != nil {
		return err
	}
	if c.rank != root {
		return move("GatherInPlace", mpi.MoveGather, c, nonNil(buf), nil, len(buf), root)
	}
	if err := c.blocks("GatherInPlace", len(buf)); err != nil {
		return err
	}
	return move("GatherInPlace", mpi.MoveGather, c, nil, buf, len(buf)/c.size, root)
}

// Scatter sends block q of root's send, elements [q·len(recv),
// (q+1)·len(recv)), to rank q's recv (MPI_Scatter). Collective.
func Scatter[T atomics.Elem](c *Comm, send, recv []T, root int) error {
	if err := c.rooted("Scatter", root); err != nil {
		return err
	}
	k := len(recv)
	if c.rank == root && len(send) < c.size*k {
		return short("Scatter", "send", len(send), c.size*k)
	}
	return move("Scatter", mpi.MoveScatter, c, nonNil(send), nonNil(recv), k, root)
}

// ScatterInPlace is Scatter with MPI_IN_PLACE at the root: on root, buf is
// the send buffer (n blocks of len(buf)/n elements) and root's own block
// stays where it is; elsewhere buf receives the rank's block. Collective.
func ScatterInPlace[T atomics.Elem](c *Comm, buf []T, root int) error {
	if err := c.rooted("ScatterInPlace", root); err != nil {
		return err
	}
	if c.rank != root {
		return move("ScatterInPlace", mpi.MoveScatter, c, []T{}, nonNil(buf), len(buf), root)
	}
	if err := c.blocks("ScatterInPlace", len(buf)); err != nil {
		return err
	}
	return move("ScatterInPlace", mpi.MoveScatter, c, nonNil(buf), nil, len(buf)/c.size, root)
}

// Allgather collects every rank's send into every rank's recv, rank q's
// block at q·len(send) (MPI_Allgather). Collective.
func Allgather[T atomics.Elem](c *Comm, send, recv []T) error {
	if err := c.usable("Allgather"); err != nil {
		return err
	}
	k := len(send)
	if len(recv) < c.size*k {
		return short("Allgather", "recv", len(recv), c.size*k)
	}
	return move("Allgather", mpi.MoveAllgather, c, nonNil(send), recv, k, 0)
}

// AllgatherInPlace is Allgather with MPI_IN_PLACE: buf holds n blocks of
// len(buf)/n elements, this rank's own already in place. Collective.
func AllgatherInPlace[T atomics.Elem](c *Comm, buf []T) error {
	if err := c.usable("AllgatherInPlace"); err != nil {
		return err
	}
	if err := c.blocks("AllgatherInPlace", len(buf)); err != nil {
		return err
	}
	return move("AllgatherInPlace", mpi.MoveAllgather, c, nil, buf, len(buf)/c.size, 0)
}

// Alltoall sends block j of every rank's send (len(send)/n elements) to
// rank j, which puts the block from rank q at recv[q·len(send)/n:]
// (MPI_Alltoall). Collective.
func Alltoall[T atomics.Elem](c *Comm, send, recv []T) error {
	if err := c.usable("Alltoall"); err != nil {
		return err
	}
	if err := c.blocks("Alltoall", len(send)); err != nil {
		return err
	}
	if len(recv) < len(send) {
		return short("Alltoall", "recv", len(recv), len(send))
	}
	return move("Alltoall", mpi.MoveAlltoall, c, nonNil(send), recv, len(send)/c.size, 0)
}

// AlltoallInPlace is Alltoall with MPI_IN_PLACE: buf holds the n blocks to
// send and, on return, the n blocks received. Collective.
func AlltoallInPlace[T atomics.Elem](c *Comm, buf []T) error {
	if err := c.usable("AlltoallInPlace"); err != nil {
		return err
	}
	if err := c.blocks("AlltoallInPlace", len(buf)); err != nil {
		return err
	}
	return move("AlltoallInPlace", mpi.MoveAlltoall, c, nil, buf, len(buf)/c.size, 0)
}
