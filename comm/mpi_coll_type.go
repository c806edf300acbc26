//go:build mpi

package comm

import (
	"errors"
	"fmt"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/dtype"
)

// The datatype forms of the collectives under the MPI backend: each rank
// packs its instances into bytes (a slice of its buffer when they are one
// run), the byte form of the call moves them through the MPI (one MPI
// call), and each rank unpacks what arrived into its instances. A
// reduction copies the instances into elements of T and runs the generic
// form.
//
// Before moving data the ranks agree on argument errors, by one
// MPI_Allreduce: an error one rank finds (an uncommitted type, a buffer
// too small, a bad root, a reduction type not made of T) is an error on
// every rank, as on the shmrun backend, never a hang of the others inside
// the MPI. The MPI sees bytes: type signatures of the same size that
// differ between ranks are not detected (the shmrun backend's ErrType),
// and sizes that differ are the MPI's to detect.

// agreeClasses are the error classes one rank's argument error carries
// to the others.
var agreeClasses = []error{ErrArg, ErrCount, ErrType, ErrOp, ErrRoot, ErrBuffer, ErrRank, ErrTruncate}

// agree makes the ranks' argument errors every rank's: it returns bad if
// this rank has one, else, if another rank has, an error of that rank's
// class naming it (the highest such rank), else nil. Collective: one
// MPI_Allreduce.
func (c *Comm) agree(call string, bad error) error {
	v := []int32{0}
	if bad != nil {
		k := len(agreeClasses)
		for i, cl := range agreeClasses {
			if errors.Is(bad, cl) {
				k = i
				break
			}
		}
		v[0] = int32(c.rank+1)<<8 | int32(k)
	}
	if err := AllreduceInPlace(c, v, atomics.Max); err != nil {
		return err
	}
	if bad != nil {
		return bad
	}
	if v[0] == 0 {
		return nil
	}
	class := ErrArg
	if k := int(v[0] & 0xff); k < len(agreeClasses) {
		class = agreeClasses[k]
	}
	return fmt.Errorf("comm: %s on rank %d: rank %d's arguments were refused there: %w", call, c.rank, v[0]>>8-1, class)
}

// pack returns d's instances as bytes: a slice of d.buf when they are
// one run, else a packed copy.
func (c *Comm) pack(call string, d tdata) ([]byte, error) {
	if _, err := c.typedSize(call, d.buf, d.count, d.t); err != nil {
		return nil, err
	}
	if off, n, ok := d.t.Contig(d.count); ok {
		return d.buf[off : off+n : off+n], nil
	}
	return c.packed(call, d.buf, d.count, d.t)
}

// landingOf returns where d's bytes arrive: a slice of d.buf when its
// instances are one run (direct), else a buffer to unpack from.
func (c *Comm) landingOf(call string, d tdata) (area []byte, direct bool, err error) {
	n, err := c.recvSize(call, d.buf, d.count, d.t)
	if err != nil {
		return nil, false, err
	}
	if off, m, ok := d.t.Contig(d.count); ok {
		return d.buf[off : off+m : off+m], true, nil
	}
	return make([]byte, n), false, nil
}

// store unpacks area into d unless it is d's own memory.
func store(d tdata, area []byte, direct bool) {
	if !direct {
		_, _ = dtype.Unpack(area, d.buf, d.count, d.t)
	}
}

// pairCheck checks that a rank's send block and receive block hold the
// same bytes.
func (c *Comm) pairCheck(call string, s, r tdata) error {
	if sb, rb := int64(s.count)*s.t.Size(), int64(r.count)*r.t.Size(); sb != rb {
		return fmt.Errorf("comm: %s on rank %d: a block of %d bytes sent, of %d received: %w", call, c.rank, sb, rb, ErrCount)
	}
	return nil
}

// typedCall runs a typed collective's local checks, then (if c is usable)
// agree, then move; bad is the checks' error.
func (c *Comm) typedCall(call string, bad error, move func() error) error {
	if err := c.usable(call); err != nil {
		return err
	}
	if err := c.agree(call, bad); err != nil {
		return err
	}
	return move()
}

// BcastType broadcasts count instances of t in root's buf into every
// rank's buf (MPI_Bcast with a datatype). Collective.
func BcastType(c *Comm, buf []byte, count int, t *dtype.Type, root int) error {
	const call = "BcastType"
	if err := c.usable(call); err != nil {
		return err
	}
	d := tdata{buf, count, t}
	bad := c.checkRoot(call, root)
	var area []byte
	direct := true
	if bad == nil && c.rank == root {
		area, bad = c.pack(call, d)
	} else if bad == nil {
		area, direct, bad = c.landingOf(call, d)
	}
	return c.typedCall(call, bad, func() error {
		if err := Bcast(c, area, root); err != nil {
			return err
		}
		if c.rank != root {
			store(d, area, direct)
		}
		return nil
	})
}

// GatherType collects scount instances of stype from every rank's send
// into root's recv, rank q's block at q·rcount extents of rtype (MPI_Gather
// with datatypes). Collective; recv, rcount and rtype are used at the root
// only.
func GatherType(c *Comm, send []byte, scount int, stype *dtype.Type, recv []byte, rcount int, rtype *dtype.Type, root int) error {
	const call = "GatherType"
	if err := c.usable(call); err != nil {
		return err
	}
	sd, rd := tdata{send, scount, stype}, tdata{recv, blocksOf(rcount, c.size), rtype}
	bad := c.checkRoot(call, root)
	var mine, area []byte
	direct := true
	if bad == nil {
		mine, bad = c.pack(call, sd)
	}
	if bad == nil && c.rank == root {
		bad = c.pairCheck(call, sd, tdata{nil, rcount, rtype})
		if bad == nil {
			area, direct, bad = c.landingOf(call, rd)
		}
	}
	return c.typedCall(call, bad, func() error {
		if err := Gather(c, mine, area, root); err != nil || c.rank != root {
			return err
		}
		store(rd, area, direct)
		return nil
	})
}

// GatherTypeInPlace is GatherType with MPI_IN_PLACE at the root: there
// buf holds the n blocks of count instances of t, the root's own already
// in place; elsewhere buf is the rank's count instances. Collective.
func GatherTypeInPlace(c *Comm, buf []byte, count int, t *dtype.Type, root int) error {
	const call = "GatherTypeInPlace"
	if err := c.usable(call); err != nil {
		return err
	}
	d := tdata{buf, count, t}
	if c.rank == root {
		d.count = blocksOf(count, c.size)
	}
	bad := c.checkRoot(call, root)
	var b []byte
	if bad == nil {
		b, bad = c.pack(call, d)
	}
	return c.typedCall(call, bad, func() error {
		if err := GatherInPlace(c, b, root); err != nil || c.rank != root {
			return err
		}
		_, _, direct := t.Contig(d.count)
		store(d, b, direct)
		return nil
	})
}

// ScatterType sends block q of root's send (scount instances of stype at
// q·scount extents) to rank q's recv, rcount instances of rtype
// (MPI_Scatter with datatypes). Collective; send, scount and stype are
// used at the root only.
func ScatterType(c *Comm, send []byte, scount int, stype *dtype.Type, recv []byte, rcount int, rtype *dtype.Type, root int) error {
	const call = "ScatterType"
	if err := c.usable(call); err != nil {
		return err
	}
	sd, rd := tdata{send, blocksOf(scount, c.size), stype}, tdata{recv, rcount, rtype}
	bad := c.checkRoot(call, root)
	var all, area []byte
	direct := true
	if bad == nil {
		area, direct, bad = c.landingOf(call, rd)
	}
	if bad == nil && c.rank == root {
		bad = c.pairCheck(call, tdata{nil, scount, stype}, rd)
		if bad == nil {
			all, bad = c.pack(call, sd)
		}
	}
	return c.typedCall(call, bad, func() error {
		if err := Scatter(c, all, area, root); err != nil {
			return err
		}
		store(rd, area, direct)
		return nil
	})
}

// ScatterTypeInPlace is ScatterType with MPI_IN_PLACE at the root: there
// buf holds the n blocks of count instances of t and the root's own block
// stays where it is; elsewhere buf receives count instances. Collective.
func ScatterTypeInPlace(c *Comm, buf []byte, count int, t *dtype.Type, root int) error {
	const call = "ScatterTypeInPlace"
	if err := c.usable(call); err != nil {
		return err
	}
	d := tdata{buf, count, t}
	bad := c.checkRoot(call, root)
	var b []byte
	direct := true
	if bad == nil && c.rank == root {
		d.count = blocksOf(count, c.size)
		b, bad = c.pack(call, d)
	} else if bad == nil {
		b, direct, bad = c.landingOf(call, d)
	}
	return c.typedCall(call, bad, func() error {
		if err := ScatterInPlace(c, b, root); err != nil || c.rank == root {
			return err
		}
		store(d, b, direct)
		return nil
	})
}

// symmetricType runs Allgather or Alltoall on typed data: send and recv
// whole, sblock and rblock one rank's block of each.
func (c *Comm) symmetricType(call string, send, recv, sblock, rblock tdata, move func(mine, area []byte) error) error {
	if err := c.usable(call); err != nil {
		return err
	}
	bad := c.pairCheck(call, sblock, rblock)
	var mine, area []byte
	direct := true
	if bad == nil {
		mine, bad = c.pack(call, send)
	}
	if bad == nil {
		area, direct, bad = c.landingOf(call, recv)
	}
	return c.typedCall(call, bad, func() error {
		if err := move(mine, area); err != nil {
			return err
		}
		store(recv, area, direct)
		return nil
	})
}

// inPlaceType runs Allgather or Alltoall in place on count instances of
// t per rank in buf.
func (c *Comm) inPlaceType(call string, buf []byte, count int, t *dtype.Type, move func(b []byte) error) error {
	if err := c.usable(call); err != nil {
		return err
	}
	d := tdata{buf, blocksOf(count, c.size), t}
	b, bad := c.pack(call, d)
	return c.typedCall(call, bad, func() error {
		if err := move(b); err != nil {
			return err
		}
		_, _, direct := t.Contig(d.count)
		store(d, b, direct)
		return nil
	})
}

// AllgatherType collects scount instances of stype from every rank into
// every rank's recv, rank q's at q·rcount extents of rtype (MPI_Allgather
// with datatypes). Collective.
func AllgatherType(c *Comm, send []byte, scount int, stype *dtype.Type, recv []byte, rcount int, rtype *dtype.Type) error {
	n := 0
	if c != nil {
		n = c.size
	}
	return c.symmetricType("AllgatherType", tdata{send, scount, stype}, tdata{recv, blocksOf(rcount, n), rtype},
		tdata{nil, scount, stype}, tdata{nil, rcount, rtype}, func(mine, area []byte) error { return Allgather(c, mine, area) })
}

// AllgatherTypeInPlace is AllgatherType with MPI_IN_PLACE: buf holds n
// blocks of count instances of t, this rank's own already in place.
// Collective.
func AllgatherTypeInPlace(c *Comm, buf []byte, count int, t *dtype.Type) error {
	return c.inPlaceType("AllgatherTypeInPlace", buf, count, t, func(b []byte) error { return AllgatherInPlace(c, b) })
}

// AlltoallType sends block q of send (scount instances of stype at
// q·scount extents) to rank q, and receives rank q's block at q·rcount
// extents of rtype in recv (MPI_Alltoall with datatypes). Collective.
func AlltoallType(c *Comm, send []byte, scount int, stype *dtype.Type, recv []byte, rcount int, rtype *dtype.Type) error {
	n := 0
	if c != nil {
		n = c.size
	}
	return c.symmetricType("AlltoallType", tdata{send, blocksOf(scount, n), stype}, tdata{recv, blocksOf(rcount, n), rtype},
		tdata{nil, scount, stype}, tdata{nil, rcount, rtype}, func(mine, area []byte) error { return Alltoall(c, mine, area) })
}

// AlltoallTypeInPlace is AlltoallType with MPI_IN_PLACE: buf holds the n
// blocks to send and receives the n blocks. Collective.
func AlltoallTypeInPlace(c *Comm, buf []byte, count int, t *dtype.Type) error {
	return c.inPlaceType("AlltoallTypeInPlace", buf, count, t, func(b []byte) error { return AlltoallInPlace(c, b) })
}

// vblocks is the v form's blocks of one buffer (counts[q] instances of t
// at displs[q] extents), packed back to back: byte counts and
// displacements of the packed layout.
type vblocks struct {
	blocks []tdata
	bc, bd []int
	total  int
}

// vlayoutType checks the v form's blocks of buf and lays them out.
func (c *Comm) vlayoutType(call string, buf []byte, counts, displs []int, t *dtype.Type) (vblocks, error) {
	n := c.size
	if len(counts) != n || len(displs) != n {
		return vblocks{}, fmt.Errorf("comm: %s on rank %d: %d counts and %d displacements for %d ranks: %w", call, c.rank, len(counts), len(displs), n, ErrCount)
	}
	v := vblocks{blocks: make([]tdata, n), bc: make([]int, n), bd: make([]int, n)}
	ext := t.Extent()
	for q := range n {
		d := displs[q]
		if counts[q] == 0 {
			d = 0 // an empty block's displacement places nothing (MPI 4.1, 6.5)
		}
		off, ok := blockOffset(d, ext, len(buf))
		if !ok || counts[q] < 0 {
			return vblocks{}, fmt.Errorf("comm: %s on rank %d: rank %d's block, %d instances at %d extents, is outside the %d-byte buffer: %w",
				call, c.rank, q, counts[q], displs[q], len(buf), ErrCount)
		}
		v.blocks[q] = tdata{buf[off:], counts[q], t}
		nb, err := c.typedSize(call, v.blocks[q].buf, counts[q], t)
		if err != nil {
			return vblocks{}, err
		}
		v.bc[q], v.bd[q] = nb, v.total
		v.total += nb
	}
	return v, nil
}

// pack packs every block into one buffer.
func (v vblocks) pack() []byte {
	out := make([]byte, v.total)
	for q, b := range v.blocks {
		_, _ = dtype.Pack(b.buf, b.count, b.t, out[v.bd[q]:])
	}
	return out
}

// unpack scatters the packed blocks back into their instances.
func (v vblocks) unpack(packed []byte) {
	for q, b := range v.blocks {
		_, _ = dtype.Unpack(packed[v.bd[q]:v.bd[q]+v.bc[q]], b.buf, b.count, b.t)
	}
}

// GathervType collects scount instances of stype from every rank into
// root's recv: rank q's counts[q] instances of rtype at displs[q] extents
// (MPI_Gatherv with datatypes). Collective; counts, displs, recv and rtype
// are used at the root only.
func GathervType(c *Comm, send []byte, scount int, stype *dtype.Type, recv []byte, counts, displs []int, rtype *dtype.Type, root int) error {
	const call = "GathervType"
	if err := c.usable(call); err != nil {
		return err
	}
	bad := c.checkRoot(call, root)
	var mine, area []byte
	var v vblocks
	if bad == nil {
		mine, bad = c.pack(call, tdata{send, scount, stype})
	}
	if bad == nil && c.rank == root {
		if v, bad = c.vlayoutType(call, recv, counts, displs, rtype); bad == nil {
			if len(mine) != v.bc[root] {
				bad = fmt.Errorf("comm: %s on rank %d: a block of %d bytes sent, of %d received: %w", call, c.rank, len(mine), v.bc[root], ErrCount)
			}
			area = make([]byte, v.total)
		}
	}
	return c.typedCall(call, bad, func() error {
		if err := Gatherv(c, mine, area, v.bc, v.bd, root); err != nil || c.rank != root {
			return err
		}
		v.unpack(area)
		return nil
	})
}

// GathervTypeInPlace is GathervType with MPI_IN_PLACE at the root: there
// buf is the receive buffer (counts[q] instances of t at displs[q]
// extents), the root's own block already in place; elsewhere buf holds
// the rank's count instances (counts and displs unused). Collective.
func GathervTypeInPlace(c *Comm, buf []byte, count int, counts, displs []int, t *dtype.Type, root int) error {
	const call = "GathervTypeInPlace"
	if err := c.usable(call); err != nil {
		return err
	}
	bad := c.checkRoot(call, root)
	var b []byte
	var v vblocks
	if bad == nil && c.rank == root {
		if v, bad = c.vlayoutType(call, buf, counts, displs, t); bad == nil {
			b = v.pack()
		}
	} else if bad == nil {
		b, bad = c.pack(call, tdata{buf, count, t})
	}
	return c.typedCall(call, bad, func() error {
		if err := GathervInPlace(c, b, v.bc, v.bd, root); err != nil || c.rank != root {
			return err
		}
		v.unpack(b)
		return nil
	})
}

// ScattervType sends counts[q] instances of stype at displs[q] extents of
// root's send to rank q's recv, rcount instances of rtype (MPI_Scatterv
// with datatypes). Collective; send, counts, displs and stype are used at
// the root only.
func ScattervType(c *Comm, send []byte, counts, displs []int, stype *dtype.Type, recv []byte, rcount int, rtype *dtype.Type, root int) error {
	const call = "ScattervType"
	if err := c.usable(call); err != nil {
		return err
	}
	rd := tdata{recv, rcount, rtype}
	bad := c.checkRoot(call, root)
	var all, area []byte
	var v vblocks
	direct := true
	if bad == nil {
		area, direct, bad = c.landingOf(call, rd)
	}
	if bad == nil && c.rank == root {
		if v, bad = c.vlayoutType(call, send, counts, displs, stype); bad == nil {
			if len(area) != v.bc[root] {
				bad = fmt.Errorf("comm: %s on rank %d: a block of %d bytes sent, of %d received: %w", call, c.rank, v.bc[root], len(area), ErrCount)
			}
			all = v.pack()
		}
	}
	return c.typedCall(call, bad, func() error {
		if err := Scatterv(c, all, v.bc, v.bd, area, root); err != nil {
			return err
		}
		store(rd, area, direct)
		return nil
	})
}

// ScattervTypeInPlace is ScattervType with MPI_IN_PLACE at the root:
// there buf is the send buffer (counts[q] instances of t at displs[q]
// extents) and the root's own block stays where it is; elsewhere buf
// receives count instances (counts and displs unused). Collective.
func ScattervTypeInPlace(c *Comm, buf []byte, count int, counts, displs []int, t *dtype.Type, root int) error {
	const call = "ScattervTypeInPlace"
	if err := c.usable(call); err != nil {
		return err
	}
	d := tdata{buf, count, t}
	bad := c.checkRoot(call, root)
	var b []byte
	var v vblocks
	direct := true
	if bad == nil && c.rank == root {
		if v, bad = c.vlayoutType(call, buf, counts, displs, t); bad == nil {
			b = v.pack()
		}
	} else if bad == nil {
		b, direct, bad = c.landingOf(call, d)
	}
	return c.typedCall(call, bad, func() error {
		if err := ScattervInPlace(c, b, v.bc, v.bd, root); err != nil || c.rank == root {
			return err
		}
		store(d, b, direct)
		return nil
	})
}

// AllgathervType collects scount instances of stype from every rank into
// every rank's recv, rank q's counts[q] instances of rtype at displs[q]
// extents (MPI_Allgatherv with datatypes). Collective.
func AllgathervType(c *Comm, send []byte, scount int, stype *dtype.Type, recv []byte, counts, displs []int, rtype *dtype.Type) error {
	const call = "AllgathervType"
	if err := c.usable(call); err != nil {
		return err
	}
	mine, bad := c.pack(call, tdata{send, scount, stype})
	var v vblocks
	var area []byte
	if bad == nil {
		if v, bad = c.vlayoutType(call, recv, counts, displs, rtype); bad == nil {
			if len(mine) != v.bc[c.rank] {
				bad = fmt.Errorf("comm: %s on rank %d: a block of %d bytes sent, of %d received: %w", call, c.rank, len(mine), v.bc[c.rank], ErrCount)
			}
			area = make([]byte, v.total)
		}
	}
	return c.typedCall(call, bad, func() error {
		if err := Allgatherv(c, mine, area, v.bc, v.bd); err != nil {
			return err
		}
		v.unpack(area)
		return nil
	})
}

// vInPlaceType runs Allgatherv or Alltoallv in place on the blocks of buf
// (counts[q] instances of t at displs[q] extents).
func (c *Comm) vInPlaceType(call string, buf []byte, counts, displs []int, t *dtype.Type, move func(area []byte, bc, bd []int) error) error {
	if err := c.usable(call); err != nil {
		return err
	}
	v, bad := c.vlayoutType(call, buf, counts, displs, t)
	var area []byte
	if bad == nil {
		area = v.pack()
	}
	return c.typedCall(call, bad, func() error {
		if err := move(area, v.bc, v.bd); err != nil {
			return err
		}
		v.unpack(area)
		return nil
	})
}

// AllgathervTypeInPlace is AllgathervType with MPI_IN_PLACE: this rank's
// own block is already at displs[Rank()] extents of buf and is what it
// contributes. Collective.
func AllgathervTypeInPlace(c *Comm, buf []byte, counts, displs []int, t *dtype.Type) error {
	return c.vInPlaceType("AllgathervTypeInPlace", buf, counts, displs, t, func(area []byte, bc, bd []int) error {
		return AllgathervInPlace(c, area, bc, bd)
	})
}

// AlltoallvType sends sendCounts[q] instances of stype at sendDispls[q]
// extents of send to rank q, and receives rank q's recvCounts[q]
// instances of rtype at recvDispls[q] extents of recv (MPI_Alltoallv with
// datatypes). Collective.
func AlltoallvType(c *Comm, send []byte, sendCounts, sendDispls []int, stype *dtype.Type,
	recv []byte, recvCounts, recvDispls []int, rtype *dtype.Type) error {
	const call = "AlltoallvType"
	if err := c.usable(call); err != nil {
		return err
	}
	sv, bad := c.vlayoutType(call, send, sendCounts, sendDispls, stype)
	var rv vblocks
	var all, area []byte
	if bad == nil {
		rv, bad = c.vlayoutType(call, recv, recvCounts, recvDispls, rtype)
	}
	if bad == nil {
		all, area = sv.pack(), make([]byte, rv.total)
	}
	return c.typedCall(call, bad, func() error {
		if err := Alltoallv(c, all, sv.bc, sv.bd, area, rv.bc, rv.bd); err != nil {
			return err
		}
		rv.unpack(area)
		return nil
	})
}

// AlltoallvTypeInPlace is AlltoallvType with MPI_IN_PLACE: buf holds the
// blocks to send and receives the blocks, with the same counts and
// displacements (instances of t, extents of t) for both. Collective.
func AlltoallvTypeInPlace(c *Comm, buf []byte, counts, displs []int, t *dtype.Type) error {
	return c.vInPlaceType("AlltoallvTypeInPlace", buf, counts, displs, t, func(area []byte, bc, bd []int) error {
		return AlltoallvInPlace(c, area, bc, bd)
	})
}

// reduceType runs a typed reduction: send's and recv's instances as
// elements of T (recv's only where receives), the generic form by run,
// then recv's elements stored back (where receives). In place, recv is
// both.
func reduceType[T atomics.Elem](c *Comm, call string, send, recv tdata, receives, inPlace bool, bad error, run func(s, r []T) error) error {
	if err := c.usable(call); err != nil {
		return err
	}
	var s, r []T
	if bad == nil && inPlace {
		s, bad = recvElemsOf[T](c, call, recv)
		r = s
	} else if bad == nil {
		s, bad = elemsOf[T](c, call, send)
		if bad == nil && receives {
			r, bad = recvElemsOf[T](c, call, recv)
		}
	}
	if bad == nil && receives && !inPlace && len(r) != len(s) {
		bad = fmt.Errorf("comm: %s on rank %d: %d elements sent, %d received: %w", call, c.rank, len(s), len(r), ErrCount)
	}
	return c.typedCall(call, bad, func() error {
		if err := run(s, r); err != nil {
			return err
		}
		if receives {
			storeElems(recv, r)
		}
		return nil
	})
}

// ReduceType reduces count instances of t from every rank's send with op
// into root's recv (MPI_Reduce with a datatype); t must be made of T's
// basic type alone. Collective; recv is used at the root only.
func ReduceType[T atomics.Elem, O Operation[T]](c *Comm, send, recv []byte, count int, t *dtype.Type, op O, root int) error {
	const call = "ReduceType"
	op = typedOp[T](op, t)
	bad := c.rootOf(call, root)
	return reduceType(c, call, tdata{send, count, t}, tdata{recv, count, t}, c != nil && c.rank == root, false, bad,
		func(s, r []T) error { return Reduce(c, s, r, op, root) })
}

// rootOf checks root on a usable c (the nil c's error comes later).
func (c *Comm) rootOf(call string, root int) error {
	if c == nil {
		return nil
	}
	return c.checkRoot(call, root)
}

// ReduceTypeInPlace is ReduceType with MPI_IN_PLACE at the root: buf is
// the root's contribution and result. Collective.
func ReduceTypeInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []byte, count int, t *dtype.Type, op O, root int) error {
	const call = "ReduceTypeInPlace"
	op = typedOp[T](op, t)
	d := tdata{buf, count, t}
	bad := c.rootOf(call, root)
	return reduceType(c, call, d, d, c != nil && c.rank == root, true, bad,
		func(s, _ []T) error { return ReduceInPlace(c, s, op, root) })
}

// AllreduceType reduces count instances of t from every rank's send with
// op into every rank's recv (MPI_Allreduce with a datatype). Collective.
func AllreduceType[T atomics.Elem, O Operation[T]](c *Comm, send, recv []byte, count int, t *dtype.Type, op O) error {
	op = typedOp[T](op, t)
	return reduceType(c, "AllreduceType", tdata{send, count, t}, tdata{recv, count, t}, true, false, nil,
		func(s, r []T) error { return Allreduce(c, s, r, op) })
}

// AllreduceTypeInPlace is AllreduceType with MPI_IN_PLACE. Collective.
func AllreduceTypeInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []byte, count int, t *dtype.Type, op O) error {
	op = typedOp[T](op, t)
	d := tdata{buf, count, t}
	return reduceType(c, "AllreduceTypeInPlace", d, d, true, true, nil,
		func(s, _ []T) error { return AllreduceInPlace(c, s, op) })
}

// ReduceScatterBlockType reduces n·count instances of t from every rank's
// send with op and leaves block q, count instances, in rank q's recv
// (MPI_Reduce_scatter_block with a datatype). Collective.
func ReduceScatterBlockType[T atomics.Elem, O Operation[T]](c *Comm, send, recv []byte, count int, t *dtype.Type, op O) error {
	const call = "ReduceScatterBlockType"
	if err := c.usable(call); err != nil {
		return err
	}
	op = typedOp[T](op, t)
	sd, rd := tdata{send, blocksOf(count, c.size), t}, tdata{recv, count, t}
	s, bad := elemsOf[T](c, call, sd)
	var r []T
	if bad == nil {
		r, bad = recvElemsOf[T](c, call, rd)
	}
	return c.typedCall(call, bad, func() error {
		if err := ReduceScatterBlock(c, s, r, op); err != nil {
			return err
		}
		storeElems(rd, r)
		return nil
	})
}

// ReduceScatterBlockTypeInPlace is ReduceScatterBlockType with
// MPI_IN_PLACE: buf holds n blocks of count instances of t, and on return
// its first block is this rank's block of the result. Collective.
func ReduceScatterBlockTypeInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []byte, count int, t *dtype.Type, op O) error {
	const call = "ReduceScatterBlockTypeInPlace"
	if err := c.usable(call); err != nil {
		return err
	}
	op = typedOp[T](op, t)
	s, bad := recvElemsOf[T](c, call, tdata{buf, blocksOf(count, c.size), t})
	return c.typedCall(call, bad, func() error {
		if err := ReduceScatterBlockInPlace(c, s, op); err != nil {
			return err
		}
		storeElems(tdata{buf, count, t}, s[:len(s)/max(1, c.size)])
		return nil
	})
}

// ScanType is Scan over count instances of t (MPI_Scan with a datatype):
// rank r's recv gets the reduction of ranks 0..r's send. Collective.
func ScanType[T atomics.Elem, O Operation[T]](c *Comm, send, recv []byte, count int, t *dtype.Type, op O) error {
	op = typedOp[T](op, t)
	return reduceType(c, "ScanType", tdata{send, count, t}, tdata{recv, count, t}, true, false, nil,
		func(s, r []T) error { return Scan(c, s, r, op) })
}

// ScanTypeInPlace is ScanType with MPI_IN_PLACE: buf is the contribution
// and the result. Collective.
func ScanTypeInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []byte, count int, t *dtype.Type, op O) error {
	op = typedOp[T](op, t)
	d := tdata{buf, count, t}
	return reduceType(c, "ScanTypeInPlace", d, d, true, true, nil,
		func(s, _ []T) error { return ScanInPlace(c, s, op) })
}

// ExscanType is Exscan over count instances of t (MPI_Exscan with a
// datatype): rank r's recv gets the reduction of ranks 0..r-1's send;
// rank 0's recv is left as it was. Collective.
func ExscanType[T atomics.Elem, O Operation[T]](c *Comm, send, recv []byte, count int, t *dtype.Type, op O) error {
	op = typedOp[T](op, t)
	return reduceType(c, "ExscanType", tdata{send, count, t}, tdata{recv, count, t}, true, false, nil,
		func(s, r []T) error { return Exscan(c, s, r, op) })
}

// ExscanTypeInPlace is ExscanType with MPI_IN_PLACE: buf is the
// contribution and, on return, the prefix reduction over the lower ranks
// (rank 0's buf is left as it was). Collective.
func ExscanTypeInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []byte, count int, t *dtype.Type, op O) error {
	op = typedOp[T](op, t)
	d := tdata{buf, count, t}
	return reduceType(c, "ExscanTypeInPlace", d, d, true, true, nil,
		func(s, _ []T) error { return ExscanInPlace(c, s, op) })
}

// blockBytes is the packed bytes of one block of an Alltoallw (alltoallw.go),
// after checking it.
func (c *Comm) blockBytes(call string, d tdata) (int, error) {
	return c.typedSize(call, d.buf, d.count, d.t)
}

// alltoallwBytes moves Alltoallw's packed blocks (alltoallw.go) as
// bytes, once every rank has agreed on bad, this rank's argument error;
// moved says the data moved.
func (c *Comm) alltoallwBytes(call string, send []byte, sc, sd []int, recv []byte, rc, rd []int, inPlace bool, bad error) (moved bool, err error) {
	err = c.typedCall(call, bad, func() error {
		if inPlace {
			return AlltoallvInPlace(c, recv, rc, rd)
		}
		return Alltoallv(c, send, sc, sd, recv, rc, rd)
	})
	return err == nil, err
}
