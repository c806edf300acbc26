package comm

import (
	"fmt"

	"github.com/shmrun/shmrun/dtype"
)

// MPI_Alltoallw, written once over each backend's byte Alltoallv
// (alltoallwBytes): every block is packed with its own type, the packed
// blocks move as bytes, and the received ones are unpacked with theirs.

// AlltoallwType sends sendCounts[j] instances of sendTypes[j], at
// sendDispls[j] bytes into send, to rank j, and receives recvCounts[q]
// instances of recvTypes[q], at recvDispls[q] bytes into recv, from rank
// q (MPI_Alltoallw): Alltoallv with a datatype per block and
// displacements in bytes. Collective; it blocks until every rank has
// called it. The blocks move as bytes, so what is checked is that the
// bytes rank i sends to rank j are the bytes j receives from i (ErrCount
// on every rank under shmrun; over an MPI, -tags mpi, what its
// MPI_Alltoallv makes of it); types of the same size and other basic
// types are not told apart (the program's error, which the MPIs leave
// undetected too). A block outside its buffer, an uncommitted type, or arrays whose
// lengths are not Size() are an error on every rank.
func AlltoallwType(c *Comm, send []byte, sendCounts, sendDispls []int, sendTypes []*dtype.Type,
	recv []byte, recvCounts, recvDispls []int, recvTypes []*dtype.Type) error {
	const call = "AlltoallwType"
	if err := c.valid(call); err != nil {
		return err
	}
	sb, bad := c.wlayout(call, "send", send, sendCounts, sendDispls, sendTypes)
	var rb wblocks
	var all, area []byte
	if bad == nil {
		rb, bad = c.wlayout(call, "receive", recv, recvCounts, recvDispls, recvTypes)
	}
	if bad == nil {
		all, area = sb.pack(), make([]byte, rb.total)
	} else {
		sb, rb = c.noBlocks(), c.noBlocks()
	}
	moved, err := c.alltoallwBytes(call, all, sb.bc, sb.bd, area, rb.bc, rb.bd, false, bad)
	if moved {
		rb.unpack(area)
	}
	return err
}

// AlltoallwTypeInPlace is AlltoallwType with MPI_IN_PLACE: buf holds the
// blocks to send and receives the blocks, with the same counts,
// displacements (bytes) and types for both. Collective.
func AlltoallwTypeInPlace(c *Comm, buf []byte, counts, displs []int, types []*dtype.Type) error {
	const call = "AlltoallwTypeInPlace"
	if err := c.valid(call); err != nil {
		return err
	}
	b, bad := c.wlayout(call, "buffer", buf, counts, displs, types)
	var area []byte
	if bad == nil {
		area = b.pack()
	} else {
		b = c.noBlocks()
	}
	moved, err := c.alltoallwBytes(call, area, b.bc, b.bd, area, b.bc, b.bd, true, bad)
	if moved {
		b.unpack(area)
	}
	return err
}

// wblocks are Alltoallw's blocks of one side: each block's instances,
// and its packed bytes' count and displacement in the packed buffer.
type wblocks struct {
	blocks []tdata
	bc, bd []int
	total  int
}

// noBlocks is a side of no bytes to any rank: what a rank whose
// arguments were refused takes part with.
func (c *Comm) noBlocks() wblocks {
	n := c.Size()
	return wblocks{bc: make([]int, n), bd: make([]int, n)}
}

// wlayout checks the blocks of one side of an Alltoallw (side names it)
// and lays them out back to back.
func (c *Comm) wlayout(call, side string, buf []byte, counts, displs []int, types []*dtype.Type) (wblocks, error) {
	n := c.Size()
	if len(counts) != n || len(displs) != n || len(types) != n {
		return wblocks{}, fmt.Errorf("comm: %s on rank %d: %d %s counts, %d displacements and %d types for %d ranks: %w",
			call, c.Rank(), len(counts), side, len(displs), len(types), n, ErrCount)
	}
	w := wblocks{blocks: make([]tdata, n), bc: make([]int, n), bd: make([]int, n)}
	for q := range n {
		t, d := types[q], displs[q]
		if counts[q] == 0 {
			d = 0 // an empty block's displacement places nothing (MPI 4.1, 6.5)
		}
		switch {
		case t == nil:
			return wblocks{}, fmt.Errorf("comm: %s on rank %d: rank %d's %s type is nil: %w", call, c.Rank(), q, side, ErrType)
		case counts[q] < 0:
			return wblocks{}, fmt.Errorf("comm: %s on rank %d: rank %d's %s count %d is negative: %w", call, c.Rank(), q, side, counts[q], ErrCount)
		case d < 0 || d > len(buf):
			return wblocks{}, fmt.Errorf("comm: %s on rank %d: rank %d's %s block at byte %d is outside the %d-byte buffer: %w",
				call, c.Rank(), q, side, d, len(buf), ErrCount)
		}
		w.blocks[q] = tdata{buf[d:], counts[q], t}
		nb, err := c.blockBytes(call, w.blocks[q])
		if err != nil {
			return wblocks{}, err
		}
		if int64(nb) > physMem()-int64(w.total) {
			return wblocks{}, fmt.Errorf("comm: %s on rank %d: the %s blocks up to rank %d's pack into more than this machine's memory (%d bytes): %w",
				call, c.Rank(), side, q, physMem(), ErrNoMem)
		}
		w.bc[q], w.bd[q] = nb, w.total
		w.total += nb
	}
	return w, nil
}

// pack packs every block into one buffer.
func (w wblocks) pack() []byte {
	out := make([]byte, w.total)
	for q, b := range w.blocks {
		_, _ = dtype.Pack(b.buf, b.count, b.t, out[w.bd[q]:w.bd[q]+w.bc[q]])
	}
	return out
}

// unpack scatters the packed blocks into their instances.
func (w wblocks) unpack(packed []byte) {
	for q, b := range w.blocks {
		_, _ = dtype.Unpack(packed[w.bd[q]:w.bd[q]+w.bc[q]], b.buf, b.count, b.t)
	}
}
