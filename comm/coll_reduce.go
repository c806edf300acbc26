//go:build !mpi

package comm

import (
	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/raw"
	"os"
	"runtime"
)

// The reducing collectives. Every result is the fold in rank order
// x0 ∘ (x1 ∘ (... ∘ x_{n-1})) — for a predefined op on floating-point data,
// the same bits on every rank and in every run with the same rank count.
//
// How the data moves depends on its size (B bytes a rank):
//   - B <= format.InlineLen: in the flag lines, one round;
//   - n·B <= redundantMax: through the staging buffers, one round, every
//     receiving rank folds everything;
//   - larger: a chunk at a time, two rounds a chunk: every rank stages its
//     chunk; rank q folds share q of it (elements [q·m/n, (q+1)·m/n)) over
//     all ranks into its next buffer; the receivers copy every share out.

// redundantMax is the largest n·B folded whole by every receiver: above it
// each rank folding a share and copying the others' is cheaper.
const redundantMax = 8 << 10

// Reduce combines every rank's send with op and leaves the result in
// root's recv (MPI_Reduce). Collective; it blocks until this rank's part
// is done (root: until the result is in recv). len(send) must be the same
// on every rank; root's recv must hold at least that many elements (the
// result goes to recv[:len(send)]); recv is not used elsewhere. Mismatched
// counts, types, ops or roots are an error on every rank.
func Reduce[T atomics.Elem, O Operation[T]](c *Comm, send, recv []T, op O, root int) error {
	return reduce(c, "Reduce", format.CollReduce, send, recv, op, root, false, nil)
}

// ReduceInPlace is Reduce with MPI_IN_PLACE at the root: on root, buf is
// both its contribution and the result; on the other ranks it is their
// contribution. Collective.
func ReduceInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []T, op O, root int) error {
	return reduce(c, "ReduceInPlace", format.CollReduce, buf, buf, op, root, true, nil)
}

// Allreduce combines every rank's send with op and leaves the result in
// every rank's recv (MPI_Allreduce). Collective; it blocks until the result
// is in recv (and, for 512 KiB and more between processes, until the
// other ranks have read what they need from this rank's send and recv).
// len(send) must be the same on every rank and recv must hold that many
// elements (the result goes to recv[:len(send)]).
func Allreduce[T atomics.Elem, O Operation[T]](c *Comm, send, recv []T, op O) error {
	return reduce(c, "Allreduce", format.CollAllreduce, send, recv, op, -1, false, nil)
}

// AllreduceInPlace is Allreduce with MPI_IN_PLACE: buf is every rank's
// contribution and, on return, the result. Collective.
func AllreduceInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []T, op O) error {
	return reduce(c, "AllreduceInPlace", format.CollAllreduce, buf, buf, op, -1, true, nil)
}

// reduce is Reduce (root >= 0) and Allreduce (root -1).
func reduce[T atomics.Elem, O Operation[T]](c *Comm, name string, kind uint8, send, recv []T, op O, root int, inPlace bool, bad error) (err error) {
	if bad == nil && !inPlace && overlap(raw.Bytes(send), raw.Bytes(recv)) && (root < 0 || c.Rank() == root) {
		bad = aliased(name, c.Rank(), raw.Bytes(send), head(raw.Bytes(recv), len(send)*raw.SizeOf[T]()))
	}
	if a := c.fastArea(); a != nil && bad == nil && len(send)*raw.SizeOf[T]() <= format.InlineLen &&
		(kind == format.CollAllreduce || uint(root) < uint(a.n)) {
		// The fast path (coll_fast.go): every rank's data rides inline.
		m, me := len(send), a.me
		receives := root < 0 || me == root
		typ := atomics.TypeOf[T]()
		if red, code, rerr := resolve[T](op, typ); rerr == nil && red.unitErr(m, a.l.Chunk, raw.SizeOf[T](), false) == nil &&
			(!receives || inPlace || len(recv) >= m) {
			hi, rlo, rhi := a.n, 0, a.n // an Allreduce's line: read by all
			switch {
			case !receives:
				hi, rlo, rhi = 0, root, root+1 // a Reduce's sender reads nothing (offer)
			case root >= 0:
				rlo, rhi = 0, 0 // its root's line: by none (but rank 0)
			}
			sg := mkSig(kind, uint8(typ), code, int32(root), uint64(m))
			p, err := c.fastRound(a, name, sg.w0, sg.w1, raw.Bytes(send), sameCount|sameRoot|sameOp, 0, hi, rlo, rhi)
			if err == nil && receives && m > 0 {
				acc := recv[:m]
				for q := a.n - 1; q >= 0; q-- {
					x := send[:m] // its own, not its line back (the own-line rule)
					if q != me || inPlace {
						x = raw.Elems[T](a.inline(q, p)[:len(send)*raw.SizeOf[T]()])
					}
					if q == a.n-1 {
						copy(acc, x)
					} else {
						red.apply(x, acc)
					}
				}
			}
			return c.fastEnd(a, name, err)
		}
	}
	k := call{light: len(send)*raw.SizeOf[T]() <= format.InlineLen} // inline
	if b := len(send) * raw.SizeOf[T](); c.Size()*b <= redundantMax {
		k.small = staged(b) // one round, staged
	}
	err = c.begin(&k, name)
	if err != nil {
		return err
	}
	k.bad = bad
	defer k.end(&err)
	n, me, m := c.Size(), c.Rank(), len(send)
	typ := atomics.TypeOf[T]()
	red, code, err := resolve[T](op, typ)
	if err != nil {
		k.err = k.errorf(ErrOp, "%v", err)
	}
	receives := root < 0 || me == root
	switch {
	case kind == format.CollReduce && (root < 0 || root >= n):
		k.err = k.errorf(ErrRoot, "root %d of %d ranks", root, n)
	case receives && !inPlace && len(recv) < m:
		k.err = k.errorf(ErrCount, "recv holds %d elements, the reduction has %d", len(recv), m)
	}
	s := raw.SizeOf[T]()
	b := m * s
	sg := mkSig(kind, uint8(typ), code, int32(root), uint64(m))
	single := kind == format.CollAllreduce && k.a.single && b >= format.SingleAllreduce
	inline := b <= format.InlineLen
	if k.err == nil {
		if err := red.unitErr(m, k.a.l.Chunk, s, !single && !inline && n*b > redundantMax); err != nil {
			k.err = k.errorf(ErrType, "%v", err)
		}
	}
	if single {
		return allreduceSingle(&k, red, send, recv, sg)
	}
	st, in := k.stage()
	if k.err == nil {
		if inline {
			copy(in, raw.Bytes(send))
		} else {
			copy(st, raw.Bytes(send))
		}
	}
	// A Reduce's sender reads nothing: with one round, it need not wait.
	if err := k.offer(sg, sameCount|sameRoot|sameOp, !receives && (inline || n*b <= redundantMax)); err != nil {
		return err
	}
	if inline || n*b <= redundantMax {
		if receives && m > 0 {
			// fold, written out: a closure per rank costs a call each.
			acc := recv[:m]
			for q := n - 1; q >= 0; q-- {
				var x []T
				switch {
				case q == me && !inPlace:
					x = send[:m] // not its line back (the own-line rule)
				case inline:
					x = raw.Elems[T](k.inline(q)[:b])
				default:
					x = raw.Elems[T](k.staging(q)[:b])
				}
				if q == n-1 {
					copy(acc, x)
				} else {
					red.apply(x, acc)
				}
			}
		}
		return nil
	}
	mc := red.chunk(k.a.l.Chunk, s)
	for base := 0; base < m; base += mc {
		cm := min(mc, m-base)
		if base > 0 {
			// Round A of this chunk: every rank stages its part.
			if err := k.next(); err != nil {
				return err
			}
			copy(k.staging(me), raw.Bytes(send[base:base+cm]))
			k.post()
			if err := k.waitAll(); err != nil {
				return err
			}
		}
		pa := k.r & 1 // round A's staging parity
		// Round B: fold my share into my next buffer, then copy the shares.
		if err := k.next(); err != nil {
			return err
		}
		lo, hi := red.share(me, cm, n)
		if hi > lo {
			dst := raw.Elems[T](k.staging(me)[:cm*s])[lo:hi]
			fold(red, dst, func(q int) []T { return raw.Elems[T](k.a.stage[q][pa][:cm*s])[lo:hi] }, 0, n)
		}
		k.post()
		if !receives {
			continue
		}
		if err := k.waitAll(); err != nil {
			return err
		}
		for q := range n {
			ql, qh := red.share(q, cm, n)
			copy(recv[base+ql:base+qh], raw.Elems[T](k.staging(q)[:cm*s])[ql:qh])
		}
	}
	return nil
}

// allreduceSingle is Allreduce by single copy: each rank reduces its share
// of the elements, reading the others' pieces of it from their send
// buffers, into its own recv; then, after a round, reads the others'
// reduced shares from their recv buffers; a last round frees the buffers.
// The fold order is the staging path's, so results are the same bits.
func allreduceSingle[T atomics.Elem](k *call, red reducer[T], send, recv []T, sg sig) error {
	n, me, s := k.a.n, k.a.me, raw.SizeOf[T]()
	var pin runtime.Pinner
	defer pin.Unpin()
	_, in := k.stage()
	if k.err == nil {
		remoteBuf{pid: int32(os.Getpid()), send: pinBytes(&pin, raw.Bytes(send)), recv: pinBytes(&pin, raw.Bytes(recv))}.put(in)
	}
	if err := k.agree(sg, sameCount|sameRoot|sameOp); err != nil {
		return err
	}
	m := len(send)
	recv = recv[:m]
	bufs := make([]remoteBuf, n)
	for q := range bufs {
		bufs[q] = getRemoteBuf(k.inline(q))
	}
	// My share, a piece at a time: the piece read and the accumulator,
	// which is recv's share itself unless recv overlaps send (in place):
	// there the fold would overwrite this rank's own contribution before
	// its turn.
	lo, hi := red.share(me, m, n)
	piece := max(red.unit, min(hi-lo, red.chunk(singlePiece, s)))
	direct := !overlap(raw.Bytes(send), raw.Bytes(recv))
	scratch := k.a.scratchFor(2 * piece * s)
	x, acc := raw.Elems[T](scratch[:piece*s]), raw.Elems[T](scratch[piece*s:2*piece*s])
	var rerr error
	for a := lo; a < hi && rerr == nil; a += piece {
		e := min(a+piece, hi)
		ac, xc := acc[:e-a], x[:e-a]
		if direct {
			ac = recv[a:e]
		}
		for q := n - 1; q >= 0 && rerr == nil; q-- {
			src := send[a:e]
			switch {
			case q == n-1 && q != me:
				// The fold's first term: straight into the accumulator.
				rerr = readRemote(bufs[q].pid, raw.Bytes(ac), bufs[q].send+uint64(a*s))
				continue
			case q != me:
				rerr = readRemote(bufs[q].pid, raw.Bytes(xc), bufs[q].send+uint64(a*s))
				src = xc
			}
			if q == n-1 {
				copy(ac, src)
			} else {
				red.apply(src, ac)
			}
		}
		if !direct {
			// In place, recv[a:e] is this rank's send[a:e]: read above,
			// and nobody else reads this share of it.
			copy(recv[a:e], ac)
		}
	}
	if err := k.done(rerr, true); err != nil {
		return err
	}
	for q := 0; q < n && rerr == nil; q++ {
		ql, qh := red.share(q, m, n)
		if q != me && qh > ql {
			rerr = readRemote(bufs[q].pid, raw.Bytes(recv[ql:qh]), bufs[q].recv+uint64(ql*s))
		}
	}
	return k.done(rerr, true)
}

// singlePiece is the most bytes of one rank's share read by one system
// call in allreduceSingle.
const singlePiece = 512 << 10

// fold sets acc to x_lo ∘ (x_lo+1 ∘ (... ∘ x_hi-1)), x_q = from(q), for
// hi > lo. acc must not alias any x_q.
func fold[T atomics.Elem](red reducer[T], acc []T, from func(q int) []T, lo, hi int) {
	copy(acc, from(hi-1))
	for q := hi - 2; q >= lo; q-- {
		red.apply(from(q), acc)
	}
}

// ReduceScatterBlock combines every rank's send with op and scatters the
// result in blocks: rank r gets elements [r·m, (r+1)·m) of the reduction in
// recv, m = len(recv) (MPI_Reduce_scatter_block). Collective. len(recv) must
// be the same on every rank and send must hold n·len(recv) elements.
func ReduceScatterBlock[T atomics.Elem, O Operation[T]](c *Comm, send, recv []T, op O) error {
	return reduceScatter(c, "ReduceScatterBlock", send, recv, op, false, nil)
}

// ReduceScatterBlockInPlace is ReduceScatterBlock with MPI_IN_PLACE: buf
// holds n blocks of len(buf)/n elements, and on return its first block is
// this rank's block of the result. Collective.
func ReduceScatterBlockInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []T, op O) error {
	return reduceScatter(c, "ReduceScatterBlockInPlace", buf, buf, op, true, nil)
}

func reduceScatter[T atomics.Elem, O Operation[T]](c *Comm, name string, send, recv []T, op O, inPlace bool, bad error) (err error) {
	if bad == nil && !inPlace && overlap(raw.Bytes(send), raw.Bytes(recv)) {
		bad = aliased(name, c.Rank(), raw.Bytes(send), raw.Bytes(recv))
	}
	if a := c.fastArea(); a != nil && bad == nil {
		// The fast path (coll_fast.go): every rank's blocks ride inline,
		// packed.
		n, me, m, s := a.n, a.me, len(recv), raw.SizeOf[T]()
		if inPlace {
			m = len(send) / n
		}
		typ := atomics.TypeOf[T]()
		if m > 0 && n*m*s <= format.InlineLen && len(send) >= n*m && (!inPlace || len(send) == n*m) {
			if red, code, rerr := resolve[T](op, typ); rerr == nil && red.unitErr(m, a.l.Chunk/int64(n), s, false) == nil {
				sg := mkSig(format.CollReduceScatterBlock, uint8(typ), code, -1, uint64(m))
				p, err := c.fastRound(a, name, sg.w0, sg.w1, raw.Bytes(send[:n*m]), sameCount|sameOp, 0, a.n, 0, a.n)
				if err == nil {
					acc := recv[:m]
					for q := n - 1; q >= 0; q-- {
						x := send[me*m : me*m+m] // its own, not its line back (the own-line rule)
						if q != me || inPlace {
							x = raw.Elems[T](a.inline(q, p)[me*m*s : (me*m+m)*s])
						}
						if q == n-1 {
							copy(acc, x)
						} else {
							red.apply(x, acc)
						}
					}
				}
				return c.fastEnd(a, name, err)
			}
		}
	}
	var k call
	err = c.begin(&k, name)
	if err != nil {
		return err
	}
	k.bad = bad
	defer k.end(&err)
	n, me := c.Size(), c.Rank()
	m := len(recv)
	if inPlace {
		m = len(send) / n
	}
	typ := atomics.TypeOf[T]()
	red, code, err := resolve[T](op, typ)
	switch {
	case err != nil:
		k.err = k.errorf(ErrOp, "%v", err)
	case inPlace && len(send)%n != 0:
		k.err = k.errorf(ErrCount, "buffer of %d elements is not %d equal blocks", len(send), n)
	case len(send) < n*m:
		k.err = k.errorf(ErrCount, "send holds %d elements, %d blocks of %d need %d", len(send), n, m, n*m)
	}
	s := raw.SizeOf[T]()
	// Each round moves a piece of every block: pm elements a block.
	pm := red.chunk(k.a.l.Chunk/int64(n), s)
	inline := n*m*s <= format.InlineLen
	if inline {
		pm = max(m, 1)
	}
	if k.err == nil {
		if err := red.unitErr(m, k.a.l.Chunk/int64(n), s, !inline); err != nil {
			k.err = k.errorf(ErrType, "%v", err)
		}
	}
	stageBlocks := func(dst []byte, base int) {
		for j := range n {
			lo := j*m + base
			cnt := min(pm, m-base)
			copy(dst[j*pm*s:], raw.Bytes(send[lo:lo+cnt]))
		}
	}
	st, in := k.stage()
	if k.err == nil && m > 0 {
		if inline {
			stageBlocks(in, 0)
		} else {
			stageBlocks(st, 0)
		}
	}
	if err := k.agree(mkSig(format.CollReduceScatterBlock, uint8(typ), code, -1, uint64(m)), sameCount|sameOp); err != nil {
		return err
	}
	for base := 0; base < m; base += pm {
		cnt := min(pm, m-base)
		if base > 0 {
			if err := k.next(); err != nil {
				return err
			}
			stageBlocks(k.staging(me), base)
			k.post()
			if err := k.waitAll(); err != nil {
				return err
			}
		}
		from := func(q int) []T {
			if q == me && inline && !inPlace {
				// Its own data, not its line back (the own-line rule).
				return send[me*m+base : me*m+base+cnt]
			}
			b := k.staging(q)
			if inline {
				b = k.inline(q)
			}
			return raw.Elems[T](b[me*pm*s : (me*pm+cnt)*s])
		}
		fold(red, recv[base:base+cnt], from, 0, n)
	}
	return nil
}

// Scan leaves in rank r's recv the reduction of send over ranks 0..r
// (MPI_Scan, an inclusive prefix reduction). Collective. len(send) must be
// the same on every rank and recv must hold that many elements.
func Scan[T atomics.Elem, O Operation[T]](c *Comm, send, recv []T, op O) error {
	return scan(c, "Scan", format.CollScan, send, recv, op, false, nil)
}

// ScanInPlace is Scan with MPI_IN_PLACE: buf is the contribution and, on
// return, the prefix reduction. Collective.
func ScanInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []T, op O) error {
	return scan(c, "ScanInPlace", format.CollScan, buf, buf, op, true, nil)
}

// Exscan leaves in rank r's recv the reduction of send over ranks 0..r-1
// (MPI_Exscan, an exclusive prefix reduction); rank 0's recv is left as it
// was. Collective. len(send) must be the same on every rank and recv must
// hold that many elements (except on rank 0, where it is not used).
func Exscan[T atomics.Elem, O Operation[T]](c *Comm, send, recv []T, op O) error {
	return scan(c, "Exscan", format.CollExscan, send, recv, op, false, nil)
}

// ExscanInPlace is Exscan with MPI_IN_PLACE: buf is the contribution and,
// on return, the prefix reduction over the lower ranks (rank 0's buf is
// left as it was). Collective.
func ExscanInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []T, op O) error {
	return scan(c, "ExscanInPlace", format.CollExscan, buf, buf, op, true, nil)
}

func scan[T atomics.Elem, O Operation[T]](c *Comm, name string, kind uint8, send, recv []T, op O, inPlace bool, bad error) (err error) {
	if bad == nil && !inPlace && overlap(raw.Bytes(send), raw.Bytes(recv)) && (kind != format.CollExscan || c.Rank() != 0) {
		bad = aliased(name, c.Rank(), raw.Bytes(send), head(raw.Bytes(recv), len(send)*raw.SizeOf[T]()))
	}
	if a := c.fastArea(); a != nil && bad == nil && len(send)*raw.SizeOf[T]() <= format.InlineLen {
		// The fast path (coll_fast.go): every rank's data rides inline;
		// rank 0 reads no one's (offer), the others the ranks below.
		me, m, s := a.me, len(send), raw.SizeOf[T]()
		hi := me + 1 // the ranks folded: [0, hi)
		if kind == format.CollExscan {
			hi = me
		}
		typ := atomics.TypeOf[T]()
		if red, code, rerr := resolve[T](op, typ); rerr == nil && red.unitErr(m, a.l.Chunk, s, false) == nil &&
			(hi == 0 || inPlace || len(recv) >= m) {
			sg := mkSig(kind, uint8(typ), code, -1, uint64(m))
			p, err := c.fastRound(a, name, sg.w0, sg.w1, raw.Bytes(send), sameCount|sameOp, 0, me, me+1, a.n)
			if err == nil && hi > 0 && m > 0 {
				acc := recv[:m]
				for q := hi - 1; q >= 0; q-- {
					x := send[:m] // its own, not its line back (the own-line rule)
					if q != me {
						x = raw.Elems[T](a.inline(q, p)[:m*s])
					}
					if q == hi-1 {
						copy(acc, x)
					} else {
						red.apply(x, acc)
					}
				}
			}
			return c.fastEnd(a, name, err)
		}
	}
	var k call
	k.stages(len(send) * raw.SizeOf[T]())
	err = c.begin(&k, name)
	if err != nil {
		return err
	}
	k.bad = bad
	defer k.end(&err)
	me, m := c.Rank(), len(send)
	hi := me + 1 // the ranks folded: [0, hi)
	if kind == format.CollExscan {
		hi = me
	}
	typ := atomics.TypeOf[T]()
	red, code, err := resolve[T](op, typ)
	switch {
	case err != nil:
		k.err = k.errorf(ErrOp, "%v", err)
	case hi > 0 && !inPlace && len(recv) < m:
		k.err = k.errorf(ErrCount, "recv holds %d elements, the reduction has %d", len(recv), m)
	}
	s := raw.SizeOf[T]()
	b := m * s
	inline := b <= format.InlineLen
	chunk := red.chunk(k.a.l.Chunk, s)
	if inline {
		chunk = max(m, 1)
	} else if m > chunk {
		if err := k.unslot(); err != nil { // more than one round
			return err
		}
	}
	if k.err == nil {
		if err := red.unitErr(m, k.a.l.Chunk, s, !inline); err != nil {
			k.err = k.errorf(ErrType, "%v", err)
		}
	}
	st, in := k.stage()
	if k.err == nil {
		if inline {
			copy(in, raw.Bytes(send))
		} else {
			copy(st, raw.Bytes(send[:min(chunk, m)]))
		}
	}
	// With one round, rank 0 reads no one's data: it need not wait; the
	// others read the ranks below them only.
	sg := mkSig(kind, uint8(typ), code, -1, uint64(m))
	if me > 0 && m <= chunk {
		err = k.agreeFrom(sg, sameCount|sameOp, 0, me)
	} else {
		err = k.offer(sg, sameCount|sameOp, me == 0 && m <= chunk)
	}
	if err != nil {
		return err
	}
	for base := 0; base < m; base += chunk {
		cnt := min(chunk, m-base)
		if base > 0 {
			if err := k.next(); err != nil {
				return err
			}
			copy(k.staging(me), raw.Bytes(send[base:base+cnt]))
			k.post()
			if err := k.waitFor(0, hi); err != nil {
				return err
			}
		}
		if hi == 0 {
			continue
		}
		from := func(q int) []T {
			if q == me && inline {
				// Its own data, not its line back (the own-line rule); in place,
				// recv is send, folded first (q == hi-1).
				return send[:cnt]
			}
			if inline {
				return raw.Elems[T](k.inline(q)[:cnt*s])
			}
			return raw.Elems[T](k.staging(q)[:cnt*s])
		}
		fold(red, recv[base:base+cnt], from, 0, hi)
	}
	return nil
}
