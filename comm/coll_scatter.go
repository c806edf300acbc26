//go:build !mpi

package comm

import (
	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/raw"
)

// Scatter and Alltoall split a rank's staging buffer into n pieces, piece q
// for rank q, and move every block a piece per round; blocks that fit the
// inline bytes sit there packed, block q at q times the largest.

// piece is the bytes a rank's buffer of length room holds for each of n
// ranks in one round: a multiple of 16 where that leaves any (aligned
// copies), and in any case the same on every rank. It must not depend on
// a rank's element size: the typed forms let a rank that moves bytes
// (dtype.Byte, or a root whose send type differs from its receive type)
// meet ranks of wider elements, and a piece of 5461 bytes on one rank
// against 5456 on the others put the blocks at different offsets.
func piece(room, n int) int {
	if p := room / n; p >= 16 {
		return p &^ 15
	}
	return room / n
}

// Scatter sends block q of root's send, elements [q·len(recv), (q+1)·len(recv)),
// to rank q's recv (MPI_Scatter). Collective; the root returns once the
// data is staged (and, unless it fits one round, every rank has joined:
// see Bcast), the others once recv holds their block. len(recv) must be
// the same on every rank and root's send must hold n·len(recv) elements.
func Scatter[T atomics.Elem](c *Comm, send, recv []T, root int) error {
	w, t := genericWire[T]()
	if t != nil && apart(c, send, recv, root) {
		return scatterType(c, "Scatter", raw.Bytes(send), len(recv), t, raw.Bytes(recv), len(recv), t, root)
	}
	return scatter(c, "Scatter", raw.Bytes(send), raw.Bytes(recv), root, false, w)
}

// ScatterInPlace is Scatter with MPI_IN_PLACE at the root: on root, buf is
// the send buffer (n blocks of len(buf)/n elements) and root's own block
// stays where it is; elsewhere buf receives the rank's block. Collective.
func ScatterInPlace[T atomics.Elem](c *Comm, buf []T, root int) error {
	w, t := genericWire[T]()
	if t != nil && whole(c, len(buf), root) {
		return scatterTypeInPlace(c, "ScatterInPlace", raw.Bytes(buf), blockCount(c, len(buf), root), t, root)
	}
	return scatter(c, "ScatterInPlace", raw.Bytes(buf), raw.Bytes(buf), root, true, w)
}

func scatter(c *Comm, name string, send, recv []byte, root int, inPlace bool, w wire) (err error) {
	if w.bad == nil && !inPlace && overlap(send, recv) && c.Rank() == root {
		w.bad = aliased(name, root, head(send, c.Size()*len(recv)), recv)
	}
	if a := c.fastArea(); a != nil && w.bad == nil && uint(root) < uint(a.n) {
		// The fast path (coll_fast.go): the root's blocks ride inline,
		// packed.
		n, me, b := a.n, a.me, len(recv)/w.size*w.size
		if inPlace && me == root {
			b = len(send) / w.size / n * w.size
		}
		if b > 0 && b <= piece(format.InlineLen, n) && (me != root || len(send) >= n*b && (!inPlace || len(send) == n*b)) {
			sg := mkSig(format.CollScatter, w.typ, 0, int32(root), w.count(b))
			var p int
			if me == root {
				_, err = c.fastRound(a, name, sg.w0, sg.w1, send[:n*b], sameCount|sameRoot, 0, 0, 0, a.n)
				if !inPlace {
					copy(recv[:b], send[me*b:])
				}
			} else if p, err = c.fastRound(a, name, sg.w0, sg.w1, nil, sameCount|sameRoot, root, root+1, 0, 0); err == nil {
				copy(recv[:b], a.inline(root, p)[me*b:])
			}
			return c.fastEnd(a, name, err)
		}
	}
	// Its first round writes a staging buffer only at a root whose blocks
	// do not ride inline.
	k := call{light: c.Rank() != root || len(send) <= format.InlineLen}
	// The root's blocks, packed: a slot's worth at most (spread).
	k.small = staged(c.Size() * blockOf(c, recv, send, inPlace && c.Rank() == root, w.size))
	err = c.begin(&k, name)
	if err != nil {
		return err
	}
	k.bad = w.bad
	defer k.end(&err)
	n, me, s := c.Size(), c.Rank(), w.size
	m, ns := len(recv)/s, len(send)/s
	var snd blocks
	if root < 0 || root >= n {
		k.err = k.errorf(ErrRoot, "root %d of %d ranks", root, n)
	} else if me == root {
		if inPlace {
			if m = ns / n; ns%n != 0 {
				k.err = k.errorf(ErrCount, "buffer of %d elements is not %d equal blocks", ns, n)
			}
		} else if ns < n*m {
			k.err = k.errorf(ErrCount, "send holds %d elements, %d blocks of %d need %d", ns, n, m, n*m)
		}
	}
	bl := k.a.even(m * s)
	if me == root {
		snd = bl
	}
	sg := mkSig(format.CollScatter, w.typ, 0, int32(root), w.count(m*w.size))
	return k.spread(send, snd, recv, bl.counts, root, inPlace, sg, true, sameCount|sameRoot)
}

// Scatterv sends counts[q] elements of root's send, from send[displs[q]:],
// to rank q's recv (MPI_Scatterv). Collective. counts and displs are used
// at the root only; a count that differs from len(recv) on rank q is an
// error on every rank.
func Scatterv[T atomics.Elem](c *Comm, send []T, counts, displs []int, recv []T, root int) error {
	w, t := genericWire[T]()
	if t != nil && apart(c, send, recv, root) {
		return scattervType(c, "Scatterv", raw.Bytes(send), counts, displs, t, raw.Bytes(recv), len(recv), t, root)
	}
	return scatterv(c, "Scatterv", raw.Bytes(send), counts, displs, raw.Bytes(recv), root, false, w)
}

// ScattervInPlace is Scatterv with MPI_IN_PLACE at the root: on root, buf
// is the send buffer and root's own block stays at displs[root]; elsewhere
// buf receives the rank's block. Collective.
func ScattervInPlace[T atomics.Elem](c *Comm, buf []T, counts, displs []int, root int) error {
	w, t := genericWire[T]()
	if t != nil {
		return scattervTypeInPlace(c, "ScattervInPlace", raw.Bytes(buf), len(buf), counts, displs, t, root)
	}
	return scatterv(c, "ScattervInPlace", raw.Bytes(buf), counts, displs, raw.Bytes(buf), root, true, w)
}

func scatterv(c *Comm, name string, send []byte, counts, displs []int, recv []byte, root int, inPlace bool, w wire) (err error) {
	var k call
	err = c.begin(&k, name)
	if err != nil {
		return err
	}
	k.bad = w.bad
	defer k.end(&err)
	n, me, s := c.Size(), c.Rank(), w.size
	m := len(recv) / s
	var snd blocks
	if root < 0 || root >= n {
		k.err = k.errorf(ErrRoot, "root %d of %d ranks", root, n)
	} else if me == root {
		snd, k.err = k.vblocks(counts, displs, len(send)/s, s, "send")
		if k.err == nil && !inPlace {
			k.err = aliasedBlocks(name, me, recv, send, snd)
		}
		if k.err == nil {
			if inPlace {
				m = counts[me]
			}
			putCounts(k.staging(me), snd.counts)
		}
	}
	if err := k.agree(mkSig(format.CollScatterv, w.typ, 0, int32(root), w.count(m*w.size)), sameRoot); err != nil {
		return err
	}
	all, err := k.countsFrom(root, m*w.size)
	if err != nil {
		return err
	}
	return k.spread(send, snd, recv, all, root, inPlace, sig{}, false, 0)
}

// spread runs a scatter: counts[q] bytes for rank q from snd's blocks of
// root's send, in pieces of the same bytes on every rank (piece). With sg,
// the first round is yet to be agreed and carries
// the first pieces; without, the counts round is done and data rounds
// follow.
func (k *call) spread(send []byte, snd blocks, recv []byte, counts []int, root int, inPlace bool, sg sig, first bool, same sameFields) error {
	n, me := k.a.n, k.a.me
	most := 0
	for _, c := range counts {
		most = max(most, c)
	}
	p := piece(int(k.a.l.Chunk), n)
	if k.inSlot {
		p = piece(k.a.slotLen, n) // n·most <= slotLen: one round
	}
	inline := first && most <= piece(format.InlineLen, n)
	if inline {
		// Packed, not spread over the line: a small block then sits in
		// the line's first cache line, which the reader's poll of the
		// round brought in (the second would be one more miss).
		p = max(most, 1)
	}
	fill := func(dst []byte, off int) {
		for q := range n {
			if off < counts[q] && !(inPlace && q == me) {
				d := snd.displs[q] + off
				copy(dst[q*p:], send[d:d+min(p, counts[q]-off)])
			}
		}
	}
	if first {
		if k.err == nil && me == root && most > 0 {
			st, in := k.stage()
			if inline {
				fill(in, 0)
			} else {
				fill(st, 0)
			}
		}
		// With one round, the root reads only its own block: it need
		// not wait; the others read the root only.
		var err error
		if me != root && most <= p && root >= 0 && root < n {
			err = k.agreeFrom(sg, same, root, root+1)
		} else {
			err = k.offer(sg, same, me == root && most <= p)
		}
		if err != nil {
			return err
		}
	}
	for off := 0; off < most; off += p {
		if off > 0 || !first {
			if err := k.next(); err != nil {
				return err
			}
			if me == root {
				fill(k.staging(me), off)
			}
			k.post()
			if me != root {
				if err := k.waitFor(root, root+1); err != nil {
					return err
				}
			}
		}
		if off >= counts[me] || inPlace && me == root {
			continue
		}
		if me == root {
			// Its own block, not its line back (the own-line rule).
			d := snd.displs[me] + off
			copy(recv[off:off+min(p, counts[me]-off)], send[d:])
			continue
		}
		src := k.staging(root)
		if inline {
			src = k.inline(root)
		}
		copy(recv[off:off+min(p, counts[me]-off)], src[me*p:])
	}
	return nil
}

// Alltoall sends block j of every rank's send (len(send)/n elements) to
// rank j, which puts the block from rank q at recv[q·len(send)/n:]
// (MPI_Alltoall). Collective. len(send) must be a multiple of n and the
// same on every rank; recv must hold as many elements.
func Alltoall[T atomics.Elem](c *Comm, send, recv []T) error {
	w, t := genericWire[T]()
	if t != nil && whole(c, len(send), -1) && apart(c, send, recv, -1) {
		return alltoallType(c, "Alltoall", raw.Bytes(send), len(send)/c.Size(), t, raw.Bytes(recv), len(send)/c.Size(), t)
	}
	return alltoall(c, "Alltoall", raw.Bytes(send), raw.Bytes(recv), false, w)
}

// AlltoallInPlace is Alltoall with MPI_IN_PLACE: buf holds the n blocks to
// send and, on return, the n blocks received. Collective.
func AlltoallInPlace[T atomics.Elem](c *Comm, buf []T) error {
	w, t := genericWire[T]()
	if t != nil && whole(c, len(buf), -1) {
		return alltoallTypeInPlace(c, "AlltoallInPlace", raw.Bytes(buf), len(buf)/c.Size(), t)
	}
	return alltoall(c, "AlltoallInPlace", raw.Bytes(buf), raw.Bytes(buf), true, w)
}

func alltoall(c *Comm, name string, send, recv []byte, inPlace bool, w wire) (err error) {
	if w.bad == nil && !inPlace && overlap(send, recv) {
		w.bad = aliased(name, c.Rank(), send, head(recv, len(send)))
	}
	if a := c.fastArea(); a != nil && w.bad == nil {
		// The fast path (coll_fast.go): every block rides inline, packed.
		n, me := a.n, a.me
		b := len(send) / w.size / n * w.size
		if b > 0 && b <= piece(format.InlineLen, n) && len(send) == n*b && len(recv) >= n*b {
			sg := mkSig(format.CollAlltoall, w.typ, 0, -1, w.count(b))
			p, err := c.fastRound(a, name, sg.w0, sg.w1, send, sameCount, 0, a.n, 0, a.n)
			if err == nil {
				for q := range n {
					switch {
					case q != me:
						copy(recv[q*b:(q+1)*b], a.inline(q, p)[me*b:])
					case !inPlace:
						copy(recv[q*b:(q+1)*b], send[q*b:]) // not its line back (the own-line rule)
					}
				}
			}
			return c.fastEnd(a, name, err)
		}
	}
	var k call
	err = c.begin(&k, name)
	if err != nil {
		return err
	}
	k.bad = w.bad
	defer k.end(&err)
	n, s := c.Size(), w.size
	ns := len(send) / s
	m := ns / n
	switch {
	case ns%n != 0:
		k.err = k.errorf(ErrCount, "send of %d elements is not %d equal blocks", ns, n)
	case !inPlace && len(recv)/s < n*m:
		k.err = k.errorf(ErrCount, "recv holds %d elements, %d blocks of %d need %d", len(recv)/s, n, m, n*m)
	}
	bl := k.a.even(m * s)
	sg := mkSig(format.CollAlltoall, w.typ, 0, -1, w.count(m*w.size))
	return k.exchange(send, bl, recv, bl, m*s, sg, true, sameCount)
}

// Alltoallv sends sendCounts[j] elements of send, from
// send[sendDispls[j]:], to rank j, and receives recvCounts[q] elements from
// rank q into recv[recvDispls[q]:] (MPI_Alltoallv). Collective. What rank q
// sends to rank j must be what rank j expects from rank q: otherwise an
// error on every rank.
func Alltoallv[T atomics.Elem](c *Comm, send []T, sendCounts, sendDispls []int, recv []T, recvCounts, recvDispls []int) error {
	w, t := genericWire[T]()
	if t != nil && apart(c, send, recv, -1) {
		return alltoallvType(c, "Alltoallv", raw.Bytes(send), sendCounts, sendDispls, t, raw.Bytes(recv), recvCounts, recvDispls, t)
	}
	return alltoallv(c, "Alltoallv", raw.Bytes(send), sendCounts, sendDispls, raw.Bytes(recv), recvCounts, recvDispls, w)
}

// AlltoallvInPlace is Alltoallv with MPI_IN_PLACE: buf holds the blocks to
// send and receives the blocks, with the same counts and displacements for
// both. Collective.
func AlltoallvInPlace[T atomics.Elem](c *Comm, buf []T, counts, displs []int) error {
	w, t := genericWire[T]()
	if t != nil {
		return alltoallvTypeInPlace(c, "AlltoallvInPlace", raw.Bytes(buf), counts, displs, t)
	}
	return alltoallv(c, "AlltoallvInPlace", raw.Bytes(buf), counts, displs, raw.Bytes(buf), counts, displs, w)
}

func alltoallv(c *Comm, name string, send []byte, sendCounts, sendDispls []int, recv []byte, recvCounts, recvDispls []int, w wire) (err error) {
	var k call
	err = c.begin(&k, name)
	if err != nil {
		return err
	}
	k.bad = w.bad
	defer k.end(&err)
	n, me, s := c.Size(), c.Rank(), w.size
	snd, err := k.vblocks(sendCounts, sendDispls, len(send)/s, s, "send")
	if err != nil {
		k.err = err
	}
	rcv, err := k.vblocks(recvCounts, recvDispls, len(recv)/s, s, "recv")
	if err != nil && k.err == nil {
		k.err = err
	}
	if k.err == nil {
		st := k.staging(me)
		putCounts(st, snd.counts)
		putCounts(st[8*n:], rcv.counts)
	}
	if err := k.agree(mkSig(format.CollAlltoallv, w.typ, 0, -1, 0), 0); err != nil {
		return err
	}
	// Rank i's send count to j must be j's receive count from i: every
	// rank checks the whole matrix, so every rank gives the same verdict.
	most := 0
	for i := range n {
		for j := range n {
			out := getCount(k.staging(i), j)
			if in := getCount(k.staging(j)[8*n:], i); in != out {
				return k.errorf(ErrCount, "rank %d sends %d bytes to rank %d, which expects %d", i, out, j, in)
			}
			most = max(most, out)
		}
	}
	return k.exchange(send, snd, recv, rcv, most, sig{}, false, 0)
}

// exchange runs an alltoall's data rounds: rank j gets snd.counts[j] bytes
// from snd.displs[j] of this rank's send, and this rank puts rank q's
// rcv.counts[q] bytes at rcv.displs[q]; most is the largest block of all.
// Send and receive buffers may be one (in place): a round reads a piece of
// each block before it writes the same bytes of each block.
func (k *call) exchange(send []byte, snd blocks, recv []byte, rcv blocks, most int, sg sig, first bool, same sameFields) error {
	n, me := k.a.n, k.a.me
	p := piece(int(k.a.l.Chunk), n)
	if k.inSlot {
		p = piece(k.a.slotLen, n) // n·most <= slotLen: one round
	}
	inline := first && most <= piece(format.InlineLen, n)
	if inline {
		// Packed, not spread over the line: a small block then sits in
		// the line's first cache line, which the reader's poll of the
		// round brought in (the second would be one more miss).
		p = max(most, 1)
	}
	fill := func(dst []byte, off int) {
		for j := range n {
			if off < snd.counts[j] {
				d := snd.displs[j] + off
				copy(dst[j*p:], send[d:d+min(p, snd.counts[j]-off)])
			}
		}
	}
	if first {
		if k.err == nil && most > 0 {
			st, in := k.stage()
			if inline {
				fill(in, 0)
			} else {
				fill(st, 0)
			}
		}
		if err := k.agree(sg, same); err != nil {
			return err
		}
	}
	for off := 0; off < most; off += p {
		if off > 0 || !first {
			if err := k.next(); err != nil {
				return err
			}
			fill(k.staging(me), off)
			k.post()
			if err := k.waitAll(); err != nil {
				return err
			}
		}
		for q := range n {
			if off >= rcv.counts[q] {
				continue
			}
			if q == me {
				// Its own block, not its line back (the own-line rule).
				d, sd := rcv.displs[me]+off, snd.displs[me]+off
				l := min(p, rcv.counts[me]-off, snd.counts[me]-off)
				if l > 0 {
					copy(recv[d:d+l], send[sd:sd+l])
				}
				continue
			}
			src := k.staging(q)
			if inline {
				src = k.inline(q)
			}
			d := rcv.displs[q] + off
			copy(recv[d:d+min(p, rcv.counts[q]-off)], src[me*p:])
		}
	}
	return nil
}
