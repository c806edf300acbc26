//go:build !mpi

package comm

import (
	"fmt"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/format"
)

// Collectives with derived datatypes (package dtype): every buffer is
// count instances of a committed type from the buffer's first byte (the
// v forms: counts[q] instances at displs[q] extents of the type, as in
// MPI). Data that are one run move in place; others are packed before the
// call and scattered after it, so the call costs one copy more each way.
//
// Type matching: data of one basic type (a vector of float64, a subarray
// of int32, ...) count that basic type's elements, as the generic forms
// do, so a rank may pass Bcast[float64] while another passes BcastType
// with a column of float64: counts and basic types are checked on every
// rank, exactly. A pair type counts as its two halves, as MPI defines it
// (coll_pairs.go): TwoInt as two int32, so 2 TwoInt meet 4 int32; the
// others are mixed data. Data made only of dtype.Byte match any type by
// size, as MPI_BYTE does. Data mixing basic types (a struct, FloatInt,
// DoubleInt packed without its padding) are checked by size only, so
// FloatInt meets a struct of a float32 and an int32, and a generic
// DoubleInt meets the typed one; but also, where MPI would refuse them,
// any other mixed data of the same size (point-to-point checks mixed
// signatures by a digest: typesig). A rank's own send and receive types
// must match each other (ErrType, or ErrCount for sizes), and every
// argument error is reported on every rank, as for the generic forms.
// Reductions need a type of one basic type, T (ErrType otherwise).

// typedWire is the wire of a type: the basic type its signature is made
// of (a pair's halves counted as such: moveWire), bytes of any type if it
// holds Byte only or nothing, mixed bytes otherwise.
func typedWire(t *dtype.Type) wire {
	if e, ok := t.Elem(); ok {
		return moveWire(e)
	}
	s, err := t.Signature()
	if err != nil {
		return wire{typ: typMixed, size: 1} // reported by the caller's checks
	}
	w := wire{typ: typAny, size: 1}
	for i, r := range s {
		x := wire{typ: typAny, size: 1}
		if !r.IsByte {
			x = moveWire(r.T)
		}
		if i > 0 && x.typ != w.typ {
			return wire{typ: typMixed, size: 1}
		}
		w = x
	}
	return w
}

// tcheck returns the packed length of d, after checking d (the error is the
// call's argument error, or nil).
func (c *Comm) tcheck(call string, d tdata) (int, error) {
	if w, _, ok := simpleData(d.buf, d.count, d.t); ok {
		return len(w), nil // one run of one basic type: nothing to check further
	}
	if err := d.t.CheckCommitted(); err != nil {
		return 0, c.typeError(call, err)
	}
	if err := d.t.Fits(d.count, len(d.buf)); err != nil {
		return 0, c.typeError(call, err)
	}
	n, err := dtype.PackSize(d.count, d.t)
	if err != nil {
		return 0, c.typeError(call, err)
	}
	if err := c.stageOK(call, n, d.count, d.t); err != nil {
		return 0, err
	}
	return int(n), nil
}

// pack returns d's data as contiguous bytes: a slice of d.buf if they are
// one run, else a packed copy (nil after an error).
func (c *Comm) pack(call string, d tdata) ([]byte, error) {
	n, err := c.tcheck(call, d)
	if err != nil {
		return nil, err
	}
	if off, l, ok := d.t.Contig(d.count); ok {
		return d.buf[off : off+l : off+l], nil
	}
	out := make([]byte, n)
	dtype.Pack(d.buf, d.count, d.t, out)
	return out, nil
}

// landing returns where d's data arrive: a slice of d.buf if they are one
// run (in place: true), else a zeroed buffer to unpack from.
func (c *Comm) landing(call string, d tdata) ([]byte, bool, error) {
	n, err := c.tcheck(call, d)
	if err != nil {
		return nil, false, err
	}
	if off, l, ok := d.t.Contig(d.count); ok {
		return d.buf[off : off+l : off+l], true, nil
	}
	if err := d.t.FitsRecv(d.count, len(d.buf)); err != nil {
		return nil, false, c.typeError(call, err)
	}
	return make([]byte, n), false, nil
}

// unpack scatters packed data into d (once a call succeeded).
func unpack(d tdata, wire []byte, inPlace bool, err error) error {
	if ran(err) && !inPlace {
		dtype.Unpack(wire, d.buf, d.count, d.t)
	}
	return err
}

// firstErr keeps the first argument error.
func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// meet checks that a rank's send and receive types may meet and returns
// the wire the call counts in: ws, or bytes where the element sizes
// differ (one side Byte).
func (c *Comm) meet(call string, ws, wr wire) (wire, error) {
	if !typeCompat(ws.typ, wr.typ) {
		return ws, fmt.Errorf("comm: %s on rank %d: send data of %s elements, receive data of %s: %w", call, c.Rank(), typeName(ws.typ), typeName(wr.typ), ErrType)
	}
	if ws.size != wr.size {
		return wire{typ: typAny, size: 1}, nil
	}
	return ws, nil
}

// pairWire checks a rank's send block against its receive block (types
// that meet, the same bytes) and returns the wire the call counts in.
func (c *Comm) pairWire(call string, s, r tdata) (wire, error) {
	w, err := c.meet(call, typedWire(s.t), typedWire(r.t))
	for _, d := range []struct {
		what  string
		count int
	}{{"send", s.count}, {"receive", r.count}} {
		if err == nil && d.count < 0 {
			err = fmt.Errorf("comm: %s on rank %d: the %s count %d is negative: %w", call, c.Rank(), d.what, d.count, ErrCount)
		}
	}
	if sb, rb := int64(s.count)*s.t.Size(), int64(r.count)*r.t.Size(); err == nil && sb != rb {
		err = fmt.Errorf("comm: %s on rank %d: a block of %d bytes sent, of %d received: %w", call, c.Rank(), sb, rb, ErrCount)
	}
	return w, err
}

// symmetric runs Allgather or Alltoall on typed data: send and recv whole,
// sblock and rblock one rank's block of each.
func (c *Comm) symmetric(call string, send, recv, sblock, rblock tdata, run func(mine, area []byte, w wire) error) error {
	mine, err := c.pack(call, send)
	area, inPlace, aerr := c.landing(call, recv)
	w, werr := c.pairWire(call, sblock, rblock)
	w.bad = firstErr(err, aerr, werr)
	return unpack(recv, area, inPlace, run(mine, area, w))
}

// inPlaceAll runs Allgather or Alltoall in place on count instances of t
// per rank in buf.
func (c *Comm) inPlaceAll(call string, buf []byte, count int, t *dtype.Type, run func(b []byte, w wire) error) error {
	d := tdata{buf, blocksOf(count, c.Size()), t}
	b, err := c.pack(call, d)
	w := typedWire(t)
	w.bad = err
	_, _, contig := t.Contig(d.count)
	return unpack(d, b, contig, run(b, w))
}

// BcastType broadcasts count instances of t in root's buf into every
// rank's buf (MPI_Bcast with a datatype). Collective; see Bcast.
func BcastType(c *Comm, buf []byte, count int, t *dtype.Type, root int) error {
	return bcastType(c, "BcastType", buf, count, t, root)
}

// bcastType is BcastType under the name call (the generic forms of pair types
// with padding take it: coll_pairs.go).
func bcastType(c *Comm, call string, buf []byte, count int, t *dtype.Type, root int) error {
	d := tdata{buf, count, t}
	w := typedWire(t)
	b, err := c.pack(call, d) // the root's data; elsewhere overwritten
	w.bad = err
	if err = bcast(c, call, b, root, w); !ran(err) {
		return err
	}
	if c.Rank() != root && b != nil {
		if _, _, ok := t.Contig(count); !ok {
			dtype.Unpack(b, buf, count, t)
		}
	}
	return err
}

// GatherType collects scount instances of stype from every rank's send
// into root's recv, rank q's block at q·rcount extents of rtype (MPI_Gather
// with datatypes). Collective; recv, rcount and rtype are used at the root
// only.
func GatherType(c *Comm, send []byte, scount int, stype *dtype.Type, recv []byte, rcount int, rtype *dtype.Type, root int) error {
	return gatherType(c, "GatherType", send, scount, stype, recv, rcount, rtype, root)
}

// gatherType is GatherType under the name call (the generic forms of pair types
// with padding take it: coll_pairs.go).
func gatherType(c *Comm, call string, send []byte, scount int, stype *dtype.Type, recv []byte, rcount int, rtype *dtype.Type, root int) error {
	sd := tdata{send, scount, stype}
	mine, err := c.pack(call, sd)
	w := typedWire(stype)
	var rd tdata
	var area []byte
	inPlace := true
	if c.Rank() == root && err == nil {
		w, err = c.pairWire(call, sd, tdata{nil, rcount, rtype})
		rd = tdata{recv, blocksOf(rcount, c.Size()), rtype}
		var aerr error
		area, inPlace, aerr = c.landing(call, rd)
		err = firstErr(err, aerr)
	}
	w.bad = err
	err = gather(c, call, mine, area, root, false, w)
	if c.Rank() != root {
		return err
	}
	return unpack(rd, area, inPlace, err)
}

// GatherTypeInPlace is GatherType with MPI_IN_PLACE at the root: there
// buf holds the n blocks of count instances of t, the root's own already
// in place; elsewhere buf is the rank's count instances. Collective.
func GatherTypeInPlace(c *Comm, buf []byte, count int, t *dtype.Type, root int) error {
	return gatherTypeInPlace(c, "GatherTypeInPlace", buf, count, t, root)
}

// gatherTypeInPlace is GatherTypeInPlace under the name call (the generic forms of pair types
// with padding take it: coll_pairs.go).
func gatherTypeInPlace(c *Comm, call string, buf []byte, count int, t *dtype.Type, root int) error {
	d := tdata{buf, count, t}
	if c.Rank() == root {
		d.count = blocksOf(count, c.Size())
	}
	b, err := c.pack(call, d)
	w := typedWire(t)
	w.bad = err
	err = gather(c, call, b, b, root, c.Rank() == root, w)
	if c.Rank() != root || b == nil {
		return err
	}
	_, _, contig := t.Contig(d.count)
	return unpack(d, b, contig, err)
}

// vlayout packs the v form's blocks (counts[q] instances of t at
// displs[q] extents) back to back: it returns the wire counts and
// displacements (elements of w) and each block's data.
func (c *Comm) vlayout(call string, buf []byte, counts, displs []int, t *dtype.Type, w wire) (wc, wd []int, blocks []tdata, err error) {
	n := c.Size()
	if len(counts) != n || len(displs) != n {
		return nil, nil, nil, fmt.Errorf("comm: %s on rank %d: %d counts and %d displacements for %d ranks: %w", call, c.Rank(), len(counts), len(displs), n, ErrCount)
	}
	wc, wd, blocks = make([]int, n), make([]int, n), make([]tdata, n)
	ext, at := t.Extent(), 0
	for q := range n {
		d := displs[q]
		if counts[q] == 0 {
			d = 0 // an empty block's displacement places nothing (MPI 4.1, 6.5)
		}
		off, ok := blockOffset(d, ext, len(buf))
		if !ok || counts[q] < 0 {
			return nil, nil, nil, fmt.Errorf("comm: %s on rank %d: rank %d's block, %d instances at %d extents, is outside the %d-byte buffer: %w",
				call, c.Rank(), q, counts[q], displs[q], len(buf), ErrCount)
		}
		blocks[q] = tdata{buf[off:], counts[q], t}
		nb, err := c.tcheck(call, blocks[q])
		if err != nil {
			return nil, nil, nil, err
		}
		if int64(nb) > physMem()-int64(at) {
			return nil, nil, nil, fmt.Errorf("comm: %s on rank %d: the blocks up to rank %d's pack into more than this machine's memory (%d bytes): %w",
				call, c.Rank(), q, physMem(), ErrNoMem)
		}
		wc[q], wd[q] = nb/w.size, at/w.size
		at += nb
	}
	return wc, wd, blocks, nil
}

// packV packs every block into one buffer laid out as wc, wd say.
func packV(blocks []tdata, wd []int, w wire, total int) []byte {
	out := make([]byte, total)
	for q, b := range blocks {
		dtype.Pack(b.buf, b.count, b.t, out[wd[q]*w.size:])
	}
	return out
}

func unpackV(blocks []tdata, wd []int, w wire, packed []byte) {
	for q, b := range blocks {
		dtype.Unpack(packed[wd[q]*w.size:], b.buf, b.count, b.t)
	}
}

func wireTotal(wc []int, w wire) int {
	t := 0
	for _, c := range wc {
		t += c * w.size
	}
	return t
}

// GathervType collects scount instances of stype from every rank into
// root's recv: rank q's counts[q] instances of rtype at displs[q] extents
// (MPI_Gatherv with datatypes). Collective; counts, displs, recv and rtype
// are used at the root only.
func GathervType(c *Comm, send []byte, scount int, stype *dtype.Type, recv []byte, counts, displs []int, rtype *dtype.Type, root int) error {
	return gathervType(c, "GathervType", send, scount, stype, recv, counts, displs, rtype, root)
}

// gathervType is GathervType under the name call (the generic forms of pair types
// with padding take it: coll_pairs.go).
func gathervType(c *Comm, call string, send []byte, scount int, stype *dtype.Type, recv []byte, counts, displs []int, rtype *dtype.Type, root int) error {
	mine, err := c.pack(call, tdata{send, scount, stype})
	w := typedWire(stype)
	var wc, wd []int
	var blocks []tdata
	var area []byte
	if c.Rank() == root && err == nil {
		if w, err = c.meet(call, w, typedWire(rtype)); err == nil {
			wc, wd, blocks, err = c.vlayout(call, recv, counts, displs, rtype, w)
			area = make([]byte, wireTotal(wc, w))
		}
	}
	if err != nil {
		wc, wd = make([]int, c.Size()), make([]int, c.Size())
	}
	w.bad = err
	err = gatherv(c, call, mine, area, wc, wd, root, false, w)
	if c.Rank() == root && ran(err) {
		unpackV(blocks, wd, w, area)
	}
	return err
}

// ScatterType sends block q of root's send, scount instances of stype at
// q·scount extents, to rank q's recv, rcount instances of rtype
// (MPI_Scatter with datatypes). Collective; send and stype are used at the
// root only.
func ScatterType(c *Comm, send []byte, scount int, stype *dtype.Type, recv []byte, rcount int, rtype *dtype.Type, root int) error {
	return scatterType(c, "ScatterType", send, scount, stype, recv, rcount, rtype, root)
}

// scatterType is ScatterType under the name call (the generic forms of pair types
// with padding take it: coll_pairs.go).
func scatterType(c *Comm, call string, send []byte, scount int, stype *dtype.Type, recv []byte, rcount int, rtype *dtype.Type, root int) error {
	rd := tdata{recv, rcount, rtype}
	area, inPlace, err := c.landing(call, rd)
	w := typedWire(rtype)
	var all []byte
	if c.Rank() == root && err == nil {
		var ws wire
		ws, err = c.pairWire(call, tdata{nil, scount, stype}, rd)
		if ws.size != w.size {
			w = ws // bytes
		}
		if err == nil {
			all, err = c.pack(call, tdata{send, blocksOf(scount, c.Size()), stype})
		}
	}
	w.bad = err
	err = scatter(c, call, all, area, root, false, w)
	return unpack(rd, area, inPlace, err)
}

// ScatterTypeInPlace is ScatterType with MPI_IN_PLACE at the root: there
// buf holds the n blocks of count instances of t and the root's own stays
// where it is; elsewhere buf receives count instances. Collective.
func ScatterTypeInPlace(c *Comm, buf []byte, count int, t *dtype.Type, root int) error {
	return scatterTypeInPlace(c, "ScatterTypeInPlace", buf, count, t, root)
}

// scatterTypeInPlace is ScatterTypeInPlace under the name call (the generic forms of pair types
// with padding take it: coll_pairs.go).
func scatterTypeInPlace(c *Comm, call string, buf []byte, count int, t *dtype.Type, root int) error {
	d := tdata{buf, count, t}
	w := typedWire(t)
	if c.Rank() == root {
		d.count = blocksOf(count, c.Size())
		b, err := c.pack(call, d)
		w.bad = err
		return scatter(c, call, b, b, root, true, w) // nothing to unpack: the root's block stays
	}
	area, inPlace, err := c.landing(call, d)
	w.bad = err
	err = scatter(c, call, area, area, root, false, w)
	return unpack(d, area, inPlace, err)
}

// ScattervType sends counts[q] instances of stype at displs[q] extents of
// root's send to rank q's recv, rcount instances of rtype (MPI_Scatterv
// with datatypes). Collective; send, counts, displs and stype are used at
// the root only.
func ScattervType(c *Comm, send []byte, counts, displs []int, stype *dtype.Type, recv []byte, rcount int, rtype *dtype.Type, root int) error {
	return scattervType(c, "ScattervType", send, counts, displs, stype, recv, rcount, rtype, root)
}

// scattervType is ScattervType under the name call (the generic forms of pair types
// with padding take it: coll_pairs.go).
func scattervType(c *Comm, call string, send []byte, counts, displs []int, stype *dtype.Type, recv []byte, rcount int, rtype *dtype.Type, root int) error {
	rd := tdata{recv, rcount, rtype}
	area, inPlace, err := c.landing(call, rd)
	w := typedWire(rtype)
	var wc, wd []int
	var all []byte
	if c.Rank() == root && err == nil {
		var ws wire
		if ws, err = c.meet(call, typedWire(stype), w); err == nil {
			if ws.size != w.size {
				w = ws // bytes
			}
			wc, wd, _, all, err = c.packedV(call, send, counts, displs, stype, w)
		}
	}
	if err != nil || wc == nil {
		wc, wd = make([]int, c.Size()), make([]int, c.Size())
	}
	w.bad = err
	err = scatterv(c, call, all, wc, wd, area, root, false, w)
	return unpack(rd, area, inPlace, err)
}

// AllgatherType collects scount instances of stype from every rank into
// every rank's recv, rank q's block at q·rcount extents of rtype
// (MPI_Allgather with datatypes). Collective.
func AllgatherType(c *Comm, send []byte, scount int, stype *dtype.Type, recv []byte, rcount int, rtype *dtype.Type) error {
	return allgatherType(c, "AllgatherType", send, scount, stype, recv, rcount, rtype)
}

// allgatherType is AllgatherType under the name call (the generic forms of pair types
// with padding take it: coll_pairs.go).
func allgatherType(c *Comm, call string, send []byte, scount int, stype *dtype.Type, recv []byte, rcount int, rtype *dtype.Type) error {
	return c.symmetric(call, tdata{send, scount, stype}, tdata{recv, blocksOf(rcount, c.Size()), rtype}, tdata{nil, scount, stype}, tdata{nil, rcount, rtype},
		func(mine, area []byte, w wire) error { return allgather(c, call, mine, area, false, w) })
}

// AllgatherTypeInPlace is AllgatherType with MPI_IN_PLACE: buf holds n
// blocks of count instances of t, this rank's own already in place.
// Collective.
func AllgatherTypeInPlace(c *Comm, buf []byte, count int, t *dtype.Type) error {
	return allgatherTypeInPlace(c, "AllgatherTypeInPlace", buf, count, t)
}

// allgatherTypeInPlace is AllgatherTypeInPlace under the name call (the generic forms of pair types
// with padding take it: coll_pairs.go).
func allgatherTypeInPlace(c *Comm, call string, buf []byte, count int, t *dtype.Type) error {
	return c.inPlaceAll(call, buf, count, t, func(b []byte, w wire) error { return allgather(c, call, b, b, true, w) })
}

// AllgathervType collects scount instances of stype from every rank into
// every rank's recv, rank q's counts[q] instances of rtype at displs[q]
// extents (MPI_Allgatherv with datatypes). Collective.
func AllgathervType(c *Comm, send []byte, scount int, stype *dtype.Type, recv []byte, counts, displs []int, rtype *dtype.Type) error {
	return allgathervType(c, "AllgathervType", send, scount, stype, recv, counts, displs, rtype)
}

// allgathervType is AllgathervType under the name call (the generic forms of pair types
// with padding take it: coll_pairs.go).
func allgathervType(c *Comm, call string, send []byte, scount int, stype *dtype.Type, recv []byte, counts, displs []int, rtype *dtype.Type) error {
	mine, err := c.pack(call, tdata{send, scount, stype})
	w, merr := c.meet(call, typedWire(stype), typedWire(rtype))
	err = firstErr(err, merr)
	var wc, wd []int
	var blocks []tdata
	var area []byte
	if err == nil {
		if wc, wd, blocks, err = c.vlayout(call, recv, counts, displs, rtype, w); err == nil {
			area = make([]byte, wireTotal(wc, w))
		}
	}
	if err != nil {
		wc, wd = make([]int, c.Size()), make([]int, c.Size())
	}
	w.bad = err
	if err = allgatherv(c, call, mine, area, wc, wd, false, w); ran(err) {
		unpackV(blocks, wd, w, area)
	}
	return err
}

// AlltoallType sends block j of send (scount instances of stype at
// j·scount extents) to rank j, which puts the block from rank q at
// q·rcount extents of rtype in recv (MPI_Alltoall with datatypes).
// Collective.
func AlltoallType(c *Comm, send []byte, scount int, stype *dtype.Type, recv []byte, rcount int, rtype *dtype.Type) error {
	return alltoallType(c, "AlltoallType", send, scount, stype, recv, rcount, rtype)
}

// alltoallType is AlltoallType under the name call (the generic forms of pair types
// with padding take it: coll_pairs.go).
func alltoallType(c *Comm, call string, send []byte, scount int, stype *dtype.Type, recv []byte, rcount int, rtype *dtype.Type) error {
	n := c.Size()
	return c.symmetric(call, tdata{send, blocksOf(scount, n), stype}, tdata{recv, blocksOf(rcount, n), rtype}, tdata{nil, scount, stype}, tdata{nil, rcount, rtype},
		func(mine, area []byte, w wire) error { return alltoall(c, call, mine, area, false, w) })
}

// AlltoallTypeInPlace is AlltoallType with MPI_IN_PLACE: buf holds the n
// blocks of count instances of t to send and, on return, those received.
// Collective.
func AlltoallTypeInPlace(c *Comm, buf []byte, count int, t *dtype.Type) error {
	return alltoallTypeInPlace(c, "AlltoallTypeInPlace", buf, count, t)
}

// alltoallTypeInPlace is AlltoallTypeInPlace under the name call (the generic forms of pair types
// with padding take it: coll_pairs.go).
func alltoallTypeInPlace(c *Comm, call string, buf []byte, count int, t *dtype.Type) error {
	return c.inPlaceAll(call, buf, count, t, func(b []byte, w wire) error { return alltoall(c, call, b, b, true, w) })
}

// AlltoallvType sends sendCounts[j] instances of stype at sendDispls[j]
// extents of send to rank j and receives recvCounts[q] instances of rtype
// from rank q at recvDispls[q] extents of recv (MPI_Alltoallv with
// datatypes). Collective.
func AlltoallvType(c *Comm, send []byte, sendCounts, sendDispls []int, stype *dtype.Type,
	recv []byte, recvCounts, recvDispls []int, rtype *dtype.Type) error {
	return alltoallvType(c, "AlltoallvType", send, sendCounts, sendDispls, stype, recv, recvCounts, recvDispls, rtype)
}

// alltoallvType is AlltoallvType under the name call (the generic forms of pair types
// with padding take it: coll_pairs.go).
func alltoallvType(c *Comm, call string, send []byte, sendCounts, sendDispls []int, stype *dtype.Type,
	recv []byte, recvCounts, recvDispls []int, rtype *dtype.Type) error {
	w, err := c.meet(call, typedWire(stype), typedWire(rtype))
	n := c.Size()
	swc, swd, rwc, rwd := make([]int, n), make([]int, n), make([]int, n), make([]int, n)
	var all, area []byte
	var rblocks []tdata
	if err == nil {
		if swc, swd, _, all, err = c.packedV(call, send, sendCounts, sendDispls, stype, w); err == nil {
			if rwc, rwd, rblocks, err = c.vlayout(call, recv, recvCounts, recvDispls, rtype, w); err == nil {
				area = make([]byte, wireTotal(rwc, w))
			}
		}
	}
	if err != nil {
		swc, swd, rwc, rwd = make([]int, n), make([]int, n), make([]int, n), make([]int, n)
		all, area = nil, nil
	}
	w.bad = err
	if err = alltoallv(c, call, all, swc, swd, area, rwc, rwd, w); ran(err) {
		unpackV(rblocks, rwd, w, area)
	}
	return err
}

// typedReduce runs a reduction on typed data: the send data and the
// receive data as slices of T.
func typedReduce[T atomics.Elem](c *Comm, call string, send, recv tdata, receives, inPlace bool,
	run func(s, r []T, bad error) error) error {
	var s, r []T
	var err error
	if inPlace {
		s, err = recvElemsOf[T](c, call, recv)
		r = s
	} else {
		s, err = elemsOf[T](c, call, send)
		if receives && err == nil {
			if _, rerr := c.tcheck(call, recv); rerr != nil {
				err = rerr
			} else {
				r, err = recvElemsOf[T](c, call, recv)
			}
		}
	}
	if err = run(s, r, err); !ran(err) {
		return err
	}
	if receives {
		storeElems(recv, r)
	}
	return err
}

// ReduceType reduces count instances of t from every rank's send with op
// into root's recv (MPI_Reduce with a datatype); t must be made of T's
// basic type alone. Collective; recv is used at the root only.
func ReduceType[T atomics.Elem, O Operation[T]](c *Comm, send, recv []byte, count int, t *dtype.Type, op O, root int) error {
	op = typedOp[T](op, t)
	return typedReduce(c, "ReduceType", tdata{send, count, t}, tdata{recv, count, t}, c.Rank() == root, false,
		func(s, r []T, bad error) error {
			return reduce(c, "ReduceType", format.CollReduce, s, r, op, root, false, bad)
		})
}

// ReduceTypeInPlace is ReduceType with MPI_IN_PLACE at the root: buf is
// the root's contribution and result. Collective.
func ReduceTypeInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []byte, count int, t *dtype.Type, op O, root int) error {
	op = typedOp[T](op, t)
	d := tdata{buf, count, t}
	return typedReduce(c, "ReduceTypeInPlace", d, d, c.Rank() == root, true,
		func(s, r []T, bad error) error {
			return reduce(c, "ReduceTypeInPlace", format.CollReduce, s, r, op, root, true, bad)
		})
}

// AllreduceType reduces count instances of t from every rank's send with
// op into every rank's recv (MPI_Allreduce with a datatype). Collective.
func AllreduceType[T atomics.Elem, O Operation[T]](c *Comm, send, recv []byte, count int, t *dtype.Type, op O) error {
	op = typedOp[T](op, t)
	return typedReduce(c, "AllreduceType", tdata{send, count, t}, tdata{recv, count, t}, true, false,
		func(s, r []T, bad error) error {
			return reduce(c, "AllreduceType", format.CollAllreduce, s, r, op, -1, false, bad)
		})
}

// AllreduceTypeInPlace is AllreduceType with MPI_IN_PLACE. Collective.
func AllreduceTypeInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []byte, count int, t *dtype.Type, op O) error {
	op = typedOp[T](op, t)
	d := tdata{buf, count, t}
	return typedReduce(c, "AllreduceTypeInPlace", d, d, true, true,
		func(s, r []T, bad error) error {
			return reduce(c, "AllreduceTypeInPlace", format.CollAllreduce, s, r, op, -1, true, bad)
		})
}

// ReduceScatterBlockType reduces n·count instances of t from every rank's
// send with op and leaves block q, count instances, in rank q's recv
// (MPI_Reduce_scatter_block with a datatype). Collective.
func ReduceScatterBlockType[T atomics.Elem, O Operation[T]](c *Comm, send, recv []byte, count int, t *dtype.Type, op O) error {
	op = typedOp[T](op, t)
	return typedReduce(c, "ReduceScatterBlockType", tdata{send, blocksOf(count, c.Size()), t}, tdata{recv, count, t}, true, false,
		func(s, r []T, bad error) error {
			return reduceScatter(c, "ReduceScatterBlockType", s, r, op, false, bad)
		})
}

// ScanType is Scan over count instances of t (MPI_Scan with a datatype):
// rank r's recv gets the reduction of ranks 0..r's send. Collective.
func ScanType[T atomics.Elem, O Operation[T]](c *Comm, send, recv []byte, count int, t *dtype.Type, op O) error {
	op = typedOp[T](op, t)
	return typedReduce(c, "ScanType", tdata{send, count, t}, tdata{recv, count, t}, true, false,
		func(s, r []T, bad error) error {
			return scan(c, "ScanType", format.CollScan, s, r, op, false, bad)
		})
}

// ExscanType is Exscan over count instances of t (MPI_Exscan with a
// datatype): rank r's recv gets the reduction of ranks 0..r-1's send;
// rank 0's recv is left as it was. Collective.
func ExscanType[T atomics.Elem, O Operation[T]](c *Comm, send, recv []byte, count int, t *dtype.Type, op O) error {
	op = typedOp[T](op, t)
	return typedReduce(c, "ExscanType", tdata{send, count, t}, tdata{recv, count, t}, true, false,
		func(s, r []T, bad error) error {
			return scan(c, "ExscanType", format.CollExscan, s, r, op, false, bad)
		})
}

// GathervTypeInPlace is GathervType with MPI_IN_PLACE at the root: there
// buf is the receive buffer (counts[q] instances of t at displs[q]
// extents), the root's own block already in place; elsewhere buf holds
// the rank's count instances (counts and displs unused). Collective.
func GathervTypeInPlace(c *Comm, buf []byte, count int, counts, displs []int, t *dtype.Type, root int) error {
	return gathervTypeInPlace(c, "GathervTypeInPlace", buf, count, counts, displs, t, root)
}

// gathervTypeInPlace is GathervTypeInPlace under the name call (the generic forms of pair types
// with padding take it: coll_pairs.go).
func gathervTypeInPlace(c *Comm, call string, buf []byte, count int, counts, displs []int, t *dtype.Type, root int) error {
	w := typedWire(t)
	if c.Rank() != root {
		mine, err := c.pack(call, tdata{buf, count, t})
		w.bad = err
		return gatherv(c, call, mine, nil, nil, nil, root, true, w)
	}
	wc, wd, blocks, area, err := c.packedV(call, buf, counts, displs, t, w)
	w.bad = err
	if err = gatherv(c, call, nil, area, wc, wd, root, true, w); ran(err) {
		unpackV(blocks, wd, w, area)
	}
	return err
}

// ScattervTypeInPlace is ScattervType with MPI_IN_PLACE at the root:
// there buf is the send buffer (counts[q] instances of t at displs[q]
// extents) and the root's own block stays where it is; elsewhere buf
// receives count instances (counts and displs unused). Collective.
func ScattervTypeInPlace(c *Comm, buf []byte, count int, counts, displs []int, t *dtype.Type, root int) error {
	return scattervTypeInPlace(c, "ScattervTypeInPlace", buf, count, counts, displs, t, root)
}

// scattervTypeInPlace is ScattervTypeInPlace under the name call (the generic forms of pair types
// with padding take it: coll_pairs.go).
func scattervTypeInPlace(c *Comm, call string, buf []byte, count int, counts, displs []int, t *dtype.Type, root int) error {
	w := typedWire(t)
	n := c.Size()
	if c.Rank() != root {
		d := tdata{buf, count, t}
		area, inPlace, err := c.landing(call, d)
		w.bad = err
		return unpack(d, area, inPlace, scatterv(c, call, nil, make([]int, n), make([]int, n), area, root, true, w))
	}
	wc, wd, _, all, err := c.packedV(call, buf, counts, displs, t, w)
	w.bad = err
	return scatterv(c, call, all, wc, wd, all, root, true, w) // the root's block stays
}

// packedV is vlayout with the blocks already packed into area; after an
// argument error, zero counts and displacements (the call still runs, to
// report it on every rank) and no area.
func (c *Comm) packedV(call string, buf []byte, counts, displs []int, t *dtype.Type, w wire) (wc, wd []int, blocks []tdata, area []byte, err error) {
	wc, wd, blocks, err = c.vlayout(call, buf, counts, displs, t, w)
	if err != nil {
		return make([]int, c.Size()), make([]int, c.Size()), nil, nil, err
	}
	return wc, wd, blocks, packV(blocks, wd, w, wireTotal(wc, w)), nil
}

// vInPlace runs Allgatherv or Alltoallv in place on the blocks of buf
// (counts[q] instances of t at displs[q] extents).
func (c *Comm) vInPlace(call string, buf []byte, counts, displs []int, t *dtype.Type, run func(area []byte, wc, wd []int, w wire) error) error {
	w := typedWire(t)
	wc, wd, blocks, area, err := c.packedV(call, buf, counts, displs, t, w)
	w.bad = err
	if err = run(area, wc, wd, w); ran(err) {
		unpackV(blocks, wd, w, area)
	}
	return err
}

// AllgathervTypeInPlace is AllgathervType with MPI_IN_PLACE: this rank's
// own block is already at displs[Rank()] extents of buf and is what it
// contributes. Collective.
func AllgathervTypeInPlace(c *Comm, buf []byte, counts, displs []int, t *dtype.Type) error {
	return allgathervTypeInPlace(c, "AllgathervTypeInPlace", buf, counts, displs, t)
}

// allgathervTypeInPlace is AllgathervTypeInPlace under the name call (the generic forms of pair types
// with padding take it: coll_pairs.go).
func allgathervTypeInPlace(c *Comm, call string, buf []byte, counts, displs []int, t *dtype.Type) error {
	return c.vInPlace(call, buf, counts, displs, t, func(area []byte, wc, wd []int, w wire) error {
		return allgatherv(c, call, nil, area, wc, wd, true, w)
	})
}

// AlltoallvTypeInPlace is AlltoallvType with MPI_IN_PLACE: buf holds the
// blocks to send and receives the blocks, with the same counts and
// displacements (instances of t, extents of t) for both. Collective.
func AlltoallvTypeInPlace(c *Comm, buf []byte, counts, displs []int, t *dtype.Type) error {
	return alltoallvTypeInPlace(c, "AlltoallvTypeInPlace", buf, counts, displs, t)
}

// alltoallvTypeInPlace is AlltoallvTypeInPlace under the name call (the generic forms of pair types
// with padding take it: coll_pairs.go).
func alltoallvTypeInPlace(c *Comm, call string, buf []byte, counts, displs []int, t *dtype.Type) error {
	return c.vInPlace(call, buf, counts, displs, t, func(area []byte, wc, wd []int, w wire) error {
		return alltoallv(c, call, area, wc, wd, area, wc, wd, w)
	})
}

// ReduceScatterBlockTypeInPlace is ReduceScatterBlockType with
// MPI_IN_PLACE: buf holds n blocks of count instances of t, and on return
// its first block is this rank's block of the result. Collective.
func ReduceScatterBlockTypeInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []byte, count int, t *dtype.Type, op O) error {
	op = typedOp[T](op, t)
	const call = "ReduceScatterBlockTypeInPlace"
	all := tdata{buf, blocksOf(count, c.Size()), t}
	s, err := recvElemsOf[T](c, call, all)
	if err = reduceScatter(c, call, s, s, op, true, err); !ran(err) {
		return err
	}
	storeElems(tdata{buf, count, t}, s[:len(s)/max(1, c.Size())])
	return err
}

// ScanTypeInPlace is ScanType with MPI_IN_PLACE: buf is the contribution
// and the result. Collective.
func ScanTypeInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []byte, count int, t *dtype.Type, op O) error {
	op = typedOp[T](op, t)
	d := tdata{buf, count, t}
	return typedReduce(c, "ScanTypeInPlace", d, d, true, true,
		func(s, r []T, bad error) error {
			return scan(c, "ScanTypeInPlace", format.CollScan, s, r, op, true, bad)
		})
}

// ExscanTypeInPlace is ExscanType with MPI_IN_PLACE: buf is the
// contribution and, on return, the prefix reduction over the lower ranks
// (rank 0's buf is left as it was). Collective.
func ExscanTypeInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []byte, count int, t *dtype.Type, op O) error {
	op = typedOp[T](op, t)
	d := tdata{buf, count, t}
	return typedReduce(c, "ExscanTypeInPlace", d, d, true, true,
		func(s, r []T, bad error) error {
			return scan(c, "ExscanTypeInPlace", format.CollExscan, s, r, op, true, bad)
		})
}

// blockBytes is the packed bytes of one block of an Alltoallw (alltoallw.go),
// after checking it.
func (c *Comm) blockBytes(call string, d tdata) (int, error) { return c.tcheck(call, d) }

// alltoallwBytes moves Alltoallw's packed blocks (alltoallw.go) as
// bytes: bad is this rank's argument error, which every rank reports;
// moved says the data moved (the call succeeded, or only an earlier
// call's mismatch is reported). In place, send and recv are one buffer,
// which alltoallv's rounds read before they write.
func (c *Comm) alltoallwBytes(call string, send []byte, sc, sd []int, recv []byte, rc, rd []int, _ bool, bad error) (moved bool, err error) {
	err = alltoallv(c, call, send, sc, sd, recv, rc, rd, wire{typ: typAny, size: 1, bad: bad})
	return ran(err), err
}
