//go:build mpi

package comm

import (
	"fmt"
	"math"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/internal/mpi"
	"github.com/shmrun/shmrun/internal/raw"
)

// layout checks the counts and displacements of a v collective against
// buf's n elements (every block inside it) and returns them in bytes of
// elements of size s.
func (c *Comm) layout(call, what string, counts, displs []int, n, s int) ([]int, []int, error) {
	if len(counts) != c.size || len(displs) != c.size {
		return nil, nil, fmt.Errorf("comm: %s on rank %d: %d counts and %d displacements for %d ranks: %w",
			call, c.rank, len(counts), len(displs), c.size, ErrCount)
	}
	bc, bd := make([]int, c.size), make([]int, c.size)
	for q := range c.size {
		d := displs[q]
		if counts[q] == 0 {
			d = 0 // an empty block's displacement places nothing (MPI 4.1, 6.5)
		}
		if counts[q] < 0 || d < 0 || counts[q] > n || d > n-counts[q] {
			return nil, nil, fmt.Errorf("comm: %s on rank %d: rank %d's block of %d at %d is outside %s's %d elements: %w",
				call, c.rank, q, counts[q], d, what, n, ErrCount)
		}
		bc[q], bd[q] = counts[q]*s, d*s
		if bd[q]+bc[q] > math.MaxInt32 {
			// The MPI takes them in bytes, as ints.
			return nil, nil, fmt.Errorf("comm: %s on rank %d: rank %d's block ends %d bytes into %s, past the MPI's int counts: %w",
				call, c.rank, q, bd[q]+bc[q], what, ErrCount)
		}
	}
	return bc, bd, nil
}

// Gatherv collects every rank's send into root's recv: rank q's
// len(send) elements (counts[q] of them, as root says) go to
// recv[displs[q]:] (MPI_Gatherv). Collective. counts and displs are used
// at the root only.
func Gatherv[T atomics.Elem](c *Comm, send, recv []T, counts, displs []int, root int) error {
	return gatherv("Gatherv", c, nonNil(send), recv, counts, displs, root)
}

// GathervInPlace is Gatherv with MPI_IN_PLACE at the root: on root, buf is
// the receive buffer with root's own block already at displs[root];
// elsewhere buf is the rank's contribution. Collective.
func GathervInPlace[T atomics.Elem](c *Comm, buf []T, counts, displs []int, root int) error {
	if c != nil && c.rank == root {
		return gatherv("GathervInPlace", c, nil, buf, counts, displs, root)
	}
	return gatherv("GathervInPlace", c, nonNil(buf), nil, counts, displs, root)
}

func gatherv[T atomics.Elem](call string, c *Comm, send, recv []T, counts, displs []int, root int) error {
	if err := c.rooted(call, root); err != nil {
		return err
	}
	s := atomics.SizeOf[T]()
	var bc, bd []int
	if c.rank == root {
		var err error
		if bc, bd, err = c.layout(call, "recv", counts, displs, len(recv), s); err != nil {
			return err
		}
	}
	return mpiError(call, c.h.MoveV(mpi.MoveGather, bytesOrNil(send), len(send)*s, nil, nil, bytesOrNil(recv), 0, bc, bd, root))
}

// Scatterv sends counts[q] elements of root's send, from send[displs[q]:],
// to rank q's recv (MPI_Scatterv). Collective. counts and displs are used
// at the root only.
func Scatterv[T atomics.Elem](c *Comm, send []T, counts, displs []int, recv []T, root int) error {
	return scatterv("Scatterv", c, nonNil(send), counts, displs, nonNil(recv), root)
}

// ScattervInPlace is Scatterv with MPI_IN_PLACE at the root: on root, buf
// is the send buffer and root's own block stays at displs[root];
// elsewhere buf receives the rank's block. Collective.
func ScattervInPlace[T atomics.Elem](c *Comm, buf []T, counts, displs []int, root int) error {
	if c != nil && c.rank == root {
		return scatterv("ScattervInPlace", c, nonNil(buf), counts, displs, nil, root)
	}
	return scatterv("ScattervInPlace", c, nil, counts, displs, nonNil(buf), root)
}

func scatterv[T atomics.Elem](call string, c *Comm, send []T, counts, displs []int, recv []T, root int) error {
	if err := c.rooted(call, root); err != nil {
		return err
	}
	s := atomics.SizeOf[T]()
	var bc, bd []int
	if c.rank == root {
		var err error
		if bc, bd, err = c.layout(call, "send", counts, displs, len(send), s); err != nil {
			return err
		}
	}
	return mpiError(call, c.h.MoveV(mpi.MoveScatter, bytesOrNil(send), 0, bc, bd, bytesOrNil(recv), len(recv)*s, nil, nil, root))
}

// Allgatherv collects every rank's send into every rank's recv: rank q's
// counts[q] elements go to recv[displs[q]:] (MPI_Allgatherv).
// Collective.
func Allgatherv[T atomics.Elem](c *Comm, send, recv []T, counts, displs []int) error {
	return allgatherv("Allgatherv", c, nonNil(send), recv, counts, displs)
}

// AllgathervInPlace is Allgatherv with MPI_IN_PLACE: this rank's own block
// is already at buf[displs[Rank()]:]. Collective.
func AllgathervInPlace[T atomics.Elem](c *Comm, buf []T, counts, displs []int) error {
	return allgatherv("AllgathervInPlace", c, nil, buf, counts, displs)
}

func allgatherv[T atomics.Elem](call string, c *Comm, send, recv []T, counts, displs []int) error {
	if err := c.usable(call); err != nil {
		return err
	}
	s := atomics.SizeOf[T]()
	bc, bd, err := c.layout(call, "recv", counts, displs, len(recv), s)
	if err != nil {
		return err
	}
	if send != nil && len(send) != counts[c.rank] {
		return fmt.Errorf("comm: %s on rank %d: sends %d elements, counts says %d: %w", call, c.rank, len(send), counts[c.rank], ErrCount)
	}
	return mpiError(call, c.h.MoveV(mpi.MoveAllgather, bytesOrNil(send), len(send)*s, nil, nil, raw.Bytes(recv), 0, bc, bd, 0))
}

// Alltoallv sends sendCounts[j] elements of send, from
// send[sendDispls[j]:], to rank j, and receives recvCounts[q] elements
// from rank q into recv[recvDispls[q]:] (MPI_Alltoallv). Collective.
func Alltoallv[T atomics.Elem](c *Comm, send []T, sendCounts, sendDispls []int, recv []T, recvCounts, recvDispls []int) error {
	if err := c.usable("Alltoallv"); err != nil {
		return err
	}
	s := atomics.SizeOf[T]()
	sc, sd, err := c.layout("Alltoallv", "send", sendCounts, sendDispls, len(send), s)
	if err != nil {
		return err
	}
	rc, rd, err := c.layout("Alltoallv", "recv", recvCounts, recvDispls, len(recv), s)
	if err != nil {
		return err
	}
	return mpiError("Alltoallv", c.h.MoveV(mpi.MoveAlltoall, bytesOrNil(nonNil(send)), 0, sc, sd, raw.Bytes(recv), 0, rc, rd, 0))
}

// AlltoallvInPlace is Alltoallv with MPI_IN_PLACE: buf holds the blocks to
// send and receives the blocks, with the same counts and displacements
// for both. Collective.
func AlltoallvInPlace[T atomics.Elem](c *Comm, buf []T, counts, displs []int) error {
	if err := c.usable("AlltoallvInPlace"); err != nil {
		return err
	}
	rc, rd, err := c.layout("AlltoallvInPlace", "buf", counts, displs, len(buf), atomics.SizeOf[T]())
	if err != nil {
		return err
	}
	return mpiError("AlltoallvInPlace", c.h.MoveV(mpi.MoveAlltoall, nil, 0, nil, nil, raw.Bytes(buf), 0, rc, rd, 0))
}

// SendrecvReplace sends buf to dest with sendTag and receives a message
// from src with recvTag into buf (MPI_Sendrecv_replace). Blocking.
func (c *Comm) SendrecvReplace(buf []byte, dest, sendTag, src, recvTag int) (Status, error) {
	d, st, err := c.sendArgs("SendrecvReplace", dest, sendTag)
	if err != nil {
		return Status{}, err
	}
	s, rt, err := c.recvArgs("SendrecvReplace", src, recvTag)
	if err != nil {
		return Status{}, err
	}
	ms, err := c.h.SendrecvReplace(buf, d, st, s, rt)
	return goStatus(ms, 1), mpiError("SendrecvReplace", err)
}
