//go:build !mpi

package comm

import (
	"encoding/binary"
	"os"
	"runtime"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/shm"
)

// The collectives that move data without combining it. A payload that
// fits rides in the flag lines' inline bytes; a larger one moves through
// the staging buffers a chunk per round, two rounds in flight. The v forms
// spend their first round on the counts (the root's, or everyone's), which
// every rank checks against every rank's own count before any data moves.

// Barrier blocks until every rank of c has called it (MPI_Barrier).
// Collective. It waits by the barrier package's spin/yield/sleep policy and
// returns ErrAborted if the job is ending. Like every collective here it
// checks that all ranks made the same call: a rank in Barrier while another
// is in Bcast is an error on both, not a hang.
func (c *Comm) Barrier() (err error) {
	if a := c.fastArea(); a != nil {
		_, err = c.fastRound(a, "Barrier", barrierSig.w0, barrierSig.w1, nil, 0, 0, a.n, 0, a.n)
		return c.fastEnd(a, "Barrier", err)
	}
	k := call{light: true}
	err = c.begin(&k, "Barrier")
	if err != nil {
		return err
	}
	defer k.end(&err)
	return k.barrier()
}

// Bcast copies root's buf into every other rank's buf (MPI_Bcast).
// Collective; a rank returns once its buf holds the data (the root, once
// its data is staged if it fits one round, checking the others' calls in a
// later call: see the package documentation; else once every rank has
// joined and its data is staged, or, for 64 KiB and more between
// processes, once every rank has copied it straight from root's buf).
// len(buf) must be the same on every rank.
func Bcast[T atomics.Elem](c *Comm, buf []T, root int) error {
	w, t := genericWire[T]()
	if t != nil {
		return bcastType(c, "Bcast", raw.Bytes(buf), len(buf), t, root)
	}
	return bcast(c, "Bcast", raw.Bytes(buf), root, w)
}

// wire is how a collective's bytes count: the element type its signature
// names and the size of the elements its counts and displacements count
// (the generic forms: T's; the typed forms: their type's basic type's, or
// bytes). A signature counts elements of its type (count).
type wire struct {
	typ  uint8
	size int
	bad  error // the typed form's own argument error, found before the call
}

// count is the signature's count of b bytes of data.
func (w wire) count(b int) uint64 { return uint64(b / typeUnit(w.typ)) }

func bcast(c *Comm, name string, b []byte, root int, w wire) (err error) {
	if a := c.fastArea(); a != nil && w.bad == nil && uint(root) < uint(a.n) && len(b) <= format.InlineLen {
		// The fast path (coll_fast.go): the root's data rides inline.
		sg := mkSig(format.CollBcast, w.typ, 0, int32(root), w.count(len(b)))
		var p int
		if a.me == root {
			_, err = c.fastRound(a, name, sg.w0, sg.w1, b, sameCount|sameRoot, 0, 0, 0, a.n)
		} else if p, err = c.fastRound(a, name, sg.w0, sg.w1, nil, sameCount|sameRoot, root, root+1, 0, 0); err == nil {
			copy(b, a.inline(root, p))
		}
		return c.fastEnd(a, name, err)
	}
	// Its first round writes a staging buffer only at a root whose data
	// does not ride inline.
	k := call{light: c.Rank() != root || len(b) <= format.InlineLen, small: staged(len(b))}
	err = c.begin(&k, name)
	if err != nil {
		return err
	}
	k.bad = w.bad
	defer k.end(&err)
	n, me := c.Size(), c.Rank()
	if root < 0 || root >= n {
		k.err = k.errorf(ErrRoot, "root %d of %d ranks", root, n)
	}
	nb := len(b)
	inline := nb <= format.InlineLen
	chunk := int(k.a.l.Chunk)
	if k.a.single && nb >= format.SingleBcast {
		return k.bcastSingle(b, root, mkSig(format.CollBcast, w.typ, 0, int32(root), w.count(nb)))
	}
	if k.err == nil && me == root {
		st, in := k.stage()
		if inline {
			copy(in, b)
		} else {
			copy(st, b)
		}
	}
	// In a Bcast of one round the root reads nothing: it need not wait;
	// the others read the root only.
	sg := mkSig(format.CollBcast, w.typ, 0, int32(root), w.count(nb))
	if me != root && nb <= chunk {
		err = k.agreeFrom(sg, sameCount|sameRoot, root, root+1)
	} else {
		err = k.offer(sg, sameCount|sameRoot, me == root && nb <= chunk)
	}
	if err != nil {
		return err
	}
	if inline {
		if me != root {
			copy(b, k.inline(root))
		}
		return nil
	}
	for off := 0; ; {
		if me != root {
			copy(b[off:min(off+chunk, nb)], k.staging(root))
		}
		if off += chunk; off >= nb {
			return nil
		}
		if err := k.next(); err != nil {
			return err
		}
		if me == root {
			copy(k.staging(me), b[off:min(off+chunk, nb)])
		}
		k.post()
		if me != root {
			if err := k.waitFor(root, root+1); err != nil {
				return err
			}
		}
	}
}

// bcastSingle is Bcast by single copy: the root publishes its buffer, the
// others read it, then say so in a second round, which the root waits for
// before it returns (its buffer is free again). Two ranks split the copy
// (bcastPair).
func (k *call) bcastSingle(b []byte, root int, sg sig) error {
	me, pair := k.a.me, k.a.n == 2
	var pin runtime.Pinner
	defer pin.Unpin()
	_, in := k.stage()
	if k.err == nil {
		switch {
		case me == root:
			remoteBuf{pid: int32(os.Getpid()), send: pinBytes(&pin, b)}.put(in)
		case pair:
			remoteBuf{pid: int32(os.Getpid()), recv: pinBytes(&pin, b)}.put(in)
		}
	}
	if err := k.agree(sg, sameCount|sameRoot); err != nil {
		return err
	}
	if pair {
		return k.bcastPair(b, root)
	}
	var rerr error
	if me != root {
		rb := getRemoteBuf(k.inline(root))
		rerr = readRemote(rb.pid, b, rb.send)
	}
	return k.done(rerr, me == root)
}

// bcastPair is a single-copy Bcast between two ranks, both copying at
// once, one copy each: the reader reads the first half of the root's
// buffer (page-aligned) while the root writes the second half into the
// reader's, which the reader published in the first round. In the second
// round each says whether its copy failed and waits for the other's; a
// root whose write failed leaves its half to the reader, which reads it
// and says so in a third round, which the root waits for. (With more
// ranks the root would write to each reader in turn while they read in
// parallel: no faster with a core each, so they only read.) A 1 MiB
// Bcast here: 51-56 us read by the reader alone, 18 so (quick runs,
// bench/NOTES.md).
func (k *call) bcastPair(b []byte, root int) error {
	me := k.a.me
	peer := 1 - me
	cut := len(b) / 2 &^ int(shm.PageSize-1)
	rb := getRemoteBuf(k.inline(peer))
	var err error // this rank's copy
	if me == root {
		err = writeRemote(rb.pid, rb.recv+uint64(cut), b[cut:])
	} else {
		err = readRemote(rb.pid, b[:cut], rb.send)
	}
	if e := k.flagRound(err != nil, peer); e != nil {
		return e
	}
	peerFailed := k.inline(peer)[format.SingleFailed] != 0
	rootFailed := (me == root && err != nil) || (me != root && peerFailed)
	if me != root && err == nil && peerFailed {
		err = readRemote(rb.pid, b[cut:], rb.send+uint64(cut)) // the root's half
	}
	if rootFailed {
		if e := k.flagRound(me != root && err != nil, peer); e != nil {
			return e
		}
		if me == root {
			if k.inline(peer)[format.SingleFailed] != 0 {
				return k.errorf(ErrOther, "rank %d could not read the data by single copy", peer)
			}
			return nil
		}
	}
	switch {
	case me != root && err != nil:
		return k.errorf(ErrOther, "%v", err)
	case me == root && !rootFailed && peerFailed:
		return k.errorf(ErrOther, "rank %d could not read the data by single copy", peer)
	}
	return nil
}

// flagRound posts the call's next round with its failed flag
// (postFlag) and waits for rank q's post of it.
func (k *call) flagRound(failed bool, q int) error {
	if err := k.postFlag(failed); err != nil {
		return err
	}
	return k.waitFor(q, q+1)
}

// postFlag opens the call's next round and posts it with inline byte
// SingleFailed 1 if failed, else 0.
func (k *call) postFlag(failed bool) error {
	if err := k.next(); err != nil {
		return err
	}
	_, in := k.stage()
	in[format.SingleFailed] = 0
	if failed {
		in[format.SingleFailed] = 1
	}
	k.post()
	return nil
}

// done ends a single-copy call: a round in which every rank says whether
// its reads succeeded; a rank whose buffer others read (wait) waits for all
// of them. A failed read is an error on the reader, and on the waiters.
func (k *call) done(rerr error, wait bool) error {
	if err := k.postFlag(rerr != nil); err != nil {
		return err
	}
	if rerr != nil {
		return k.errorf(ErrOther, "%v", rerr)
	}
	if !wait {
		return nil
	}
	if err := k.waitAll(); err != nil {
		return err
	}
	for q := range k.a.n {
		if k.inline(q)[format.SingleFailed] != 0 {
			return k.errorf(ErrOther, "rank %d could not read the data by single copy", q)
		}
	}
	return nil
}

// blocks describes one rank's side of a gather or scatter in bytes: where
// each rank's block sits in the buffer that holds all of them (the root's,
// or everyone's for the all- forms) and how long it is.
type blocks struct {
	counts, displs []int // bytes, per rank
}

// even is n blocks of size bytes, one after another, in slices the area
// keeps for the next call (a communicator's collectives run one at a time;
// the callers only read them).
func (a *collArea) even(size int) blocks {
	if a.evenBl.counts == nil {
		a.evenBl = blocks{counts: make([]int, a.n), displs: make([]int, a.n)}
		a.evenSize = -1
	}
	if a.evenSize != size {
		for q := range a.n {
			a.evenBl.counts[q], a.evenBl.displs[q] = size, q*size
		}
		a.evenSize = size
	}
	return a.evenBl
}

// vblocks checks counts and displs (elements) of a v form against a buffer
// of length elements of size s, and returns them in bytes.
func (k *call) vblocks(counts, displs []int, length, s int, what string) (blocks, error) {
	n := k.a.n
	if len(counts) != n || len(displs) != n {
		return blocks{}, k.errorf(ErrCount, "%d counts and %d displacements for %d ranks", len(counts), len(displs), n)
	}
	bl := blocks{counts: make([]int, n), displs: make([]int, n)}
	for q := range n {
		c, d := counts[q], displs[q]
		if c == 0 {
			d = 0 // an empty block's displacement places nothing (MPI 4.1, 6.5)
		}
		if c < 0 || d < 0 || d > length || c > length-d {
			return blocks{}, k.errorf(ErrCount, "rank %d's block: %d elements at %d, %s holds %d", q, c, d, what, length)
		}
		bl.counts[q], bl.displs[q] = c*s, d*s
	}
	return bl, nil
}

// putCounts writes counts (bytes) into a staging buffer for the others.
func putCounts(dst []byte, counts []int) {
	for q, c := range counts {
		binary.LittleEndian.PutUint64(dst[8*q:], uint64(c))
	}
}

func getCount(src []byte, q int) int { return int(binary.LittleEndian.Uint64(src[8*q:])) }

// Gather collects every rank's send into root's recv, rank q's block at
// q·len(send) (MPI_Gather). Collective; a non-root returns once its data is
// staged, the root once recv holds everything. len(send) must be the same
// on every rank, and root's recv must hold n·len(send) elements.
func Gather[T atomics.Elem](c *Comm, send, recv []T, root int) error {
	w, t := genericWire[T]()
	if t != nil && apart(c, send, recv, root) {
		return gatherType(c, "Gather", raw.Bytes(send), len(send), t, raw.Bytes(recv), len(send), t, root)
	}
	return gather(c, "Gather", raw.Bytes(send), raw.Bytes(recv), root, false, w)
}

// GatherInPlace is Gather with MPI_IN_PLACE at the root: on root, buf is
// the receive buffer, n blocks of len(buf)/n elements, with root's own
// block already in place; elsewhere buf is the rank's contribution.
// Collective.
func GatherInPlace[T atomics.Elem](c *Comm, buf []T, root int) error {
	w, t := genericWire[T]()
	if t != nil && whole(c, len(buf), root) {
		return gatherTypeInPlace(c, "GatherInPlace", raw.Bytes(buf), blockCount(c, len(buf), root), t, root)
	}
	return gather(c, "GatherInPlace", raw.Bytes(buf), raw.Bytes(buf), root, true, w)
}

func gather(c *Comm, name string, send, recv []byte, root int, inPlace bool, w wire) (err error) {
	if w.bad == nil && !inPlace && overlap(send, recv) && c.Rank() == root {
		w.bad = aliased(name, root, send, head(recv, c.Size()*len(send)))
	}
	if a := c.fastArea(); a != nil && w.bad == nil && uint(root) < uint(a.n) {
		// The fast path (coll_fast.go): every block rides inline.
		n, me, b := a.n, a.me, len(send)/w.size*w.size
		if inPlace && me == root {
			b = len(recv) / w.size / n * w.size
		}
		if b <= format.InlineLen && (me != root || len(recv) >= n*b && (!inPlace || len(recv) == n*b)) {
			sg := mkSig(format.CollGather, w.typ, 0, int32(root), w.count(b))
			if me != root {
				// A sender reads nothing (offer).
				_, err = c.fastRound(a, name, sg.w0, sg.w1, send[:b], sameCount|sameRoot, 0, 0, root, root+1)
				return c.fastEnd(a, name, err)
			}
			p, err := c.fastRound(a, name, sg.w0, sg.w1, nil, sameCount|sameRoot, 0, a.n, 0, 0)
			if err == nil {
				own := send[:b]
				if inPlace {
					own = nil
				}
				a.collectInline(p, recv, own, b)
			}
			return c.fastEnd(a, name, err)
		}
	}
	var k call
	k.stages(blockOf(c, send, recv, inPlace && c.Rank() == root, w.size))
	err = c.begin(&k, name)
	if err != nil {
		return err
	}
	k.bad = w.bad
	defer k.end(&err)
	n, me, s := c.Size(), c.Rank(), w.size
	m, nr := len(send)/s, len(recv)/s
	if root < 0 || root >= n {
		k.err = k.errorf(ErrRoot, "root %d of %d ranks", root, n)
	} else if me == root {
		if inPlace {
			if m = nr / n; nr%n != 0 {
				k.err = k.errorf(ErrCount, "buffer of %d elements is not %d equal blocks", nr, n)
			}
		} else if nr < n*m {
			k.err = k.errorf(ErrCount, "recv holds %d elements, %d blocks of %d need %d", nr, n, m, n*m)
		}
	}
	var mine []byte
	if me == root && inPlace {
		mine = nil // already in place
	} else {
		mine = send
	}
	rcv := blocks{}
	if me == root {
		rcv = k.a.even(m * s)
	}
	return k.collect(mine, recv, rcv, root, m*s, mkSig(format.CollGather, w.typ, 0, int32(root), w.count(m*w.size)), sameCount|sameRoot)
}

// Gatherv collects every rank's send into root's recv: rank q's
// len(send) elements (counts[q] of them, as root says) go to
// recv[displs[q]:] (MPI_Gatherv). Collective. counts and displs are used
// at the root only; a count that differs from what rank q sends is an error
// on every rank. A block of count 0 places nothing: its displacement may be
// anything (in the other v forms too).
func Gatherv[T atomics.Elem](c *Comm, send, recv []T, counts, displs []int, root int) error {
	w, t := genericWire[T]()
	if t != nil && apart(c, send, recv, root) {
		return gathervType(c, "Gatherv", raw.Bytes(send), len(send), t, raw.Bytes(recv), counts, displs, t, root)
	}
	return gatherv(c, "Gatherv", raw.Bytes(send), raw.Bytes(recv), counts, displs, root, false, w)
}

// GathervInPlace is Gatherv with MPI_IN_PLACE at the root: on root, buf is
// the receive buffer with root's own block already at displs[root];
// elsewhere buf is the rank's contribution. Collective.
func GathervInPlace[T atomics.Elem](c *Comm, buf []T, counts, displs []int, root int) error {
	w, t := genericWire[T]()
	if t != nil {
		return gathervTypeInPlace(c, "GathervInPlace", raw.Bytes(buf), len(buf), counts, displs, t, root)
	}
	return gatherv(c, "GathervInPlace", raw.Bytes(buf), raw.Bytes(buf), counts, displs, root, true, w)
}

func gatherv(c *Comm, name string, send, recv []byte, counts, displs []int, root int, inPlace bool, w wire) (err error) {
	var k call
	err = c.begin(&k, name)
	if err != nil {
		return err
	}
	k.bad = w.bad
	defer k.end(&err)
	n, me, s := c.Size(), c.Rank(), w.size
	m := len(send) / s
	var rcv blocks
	if root < 0 || root >= n {
		k.err = k.errorf(ErrRoot, "root %d of %d ranks", root, n)
	} else if me == root {
		rcv, k.err = k.vblocks(counts, displs, len(recv)/s, s, "recv")
		if k.err == nil && !inPlace {
			k.err = aliasedBlocks(name, me, send, recv, rcv)
		}
		if k.err == nil {
			if inPlace {
				m = counts[me]
			}
			putCounts(k.staging(me), rcv.counts)
		}
	}
	mine := send
	if me == root && inPlace {
		mine = nil
	}
	if err := k.agree(mkSig(format.CollGatherv, w.typ, 0, int32(root), w.count(m*w.size)), sameRoot); err != nil {
		return err
	}
	all, err := k.countsFrom(root, m*w.size)
	if err != nil {
		return err
	}
	if me != root {
		rcv = blocks{}
	}
	return k.move(mine, recv, all, rcv, root, false)
}

// head is b's first n bytes, or all of b if it is shorter: the part of a
// buffer a call uses.
func head(b []byte, n int) []byte { return b[:min(len(b), max(n, 0))] }

// aliasedBlocks is aliased for a v collective's one buffer (a rank's send
// or receive data) and the blocks of the other (bytes of other, by rank).
func aliasedBlocks(call string, rank int, one, other []byte, bl blocks) error {
	for q, n := range bl.counts {
		if n > 0 {
			if err := aliased(call, rank, one, other[bl.displs[q]:bl.displs[q]+n]); err != nil {
				return err
			}
		}
	}
	return nil
}

// blockOf is a rank's block of a gather or scatter in bytes: own, or, in
// place (fromAll), its share of all (every rank's blocks) in whole
// elements of s bytes.
func blockOf(c *Comm, own, all []byte, fromAll bool, s int) int {
	if fromAll {
		return len(all) / max(s, 1) / max(c.Size(), 1) * s
	}
	return len(own)
}

// staged is call.small for a call that stages b bytes a rank if they do
// not ride inline: b, or 0.
func staged(b int) int {
	if b <= format.InlineLen {
		return 0
	}
	return b
}

// stages sets light and small (before begin) for a call of one round in
// which every rank stages b bytes, inline if they fit.
func (k *call) stages(b int) { k.light, k.small = b <= format.InlineLen, staged(b) }

// countsFrom reads the per-rank counts (bytes) rank q published in the
// first round and checks them against every rank's own count (its
// signature's count of its own elements; this rank's, mine bytes, from
// its arguments: the own-line rule): the same verdict on every rank.
func (k *call) countsFrom(q int, mine int) ([]int, error) {
	all := make([]int, k.a.n)
	src := k.staging(q)
	for j := range all {
		all[j] = getCount(src, j)
		own := mine
		if j != k.a.me {
			sj := getSig(k.a.meta(j, k.p)[metaSig:])
			own = int(sj.count) * typeUnit(sj.typ)
		}
		if own != all[j] {
			return nil, k.errorf(ErrCount, "rank %d counts %d bytes from rank %d, which has %d", q, all[j], j, own)
		}
	}
	return all, nil
}

// collect is the gather and allgather of equal blocks: the first round
// carries the signature and the first chunk (or everything, inline).
func (k *call) collect(mine, recv []byte, rcv blocks, root, size int, sg sig, same sameFields) error {
	inline := size <= format.InlineLen
	if k.err == nil && mine != nil {
		st, in := k.stage()
		if inline {
			copy(in, mine)
		} else {
			copy(st, mine)
		}
	}
	// A Gather's sender reads nothing; with one round, it need not wait.
	if err := k.offer(sg, same, root >= 0 && k.a.me != root && size <= int(k.a.l.Chunk)); err != nil {
		return err
	}
	return k.move(mine, recv, k.a.even(size).counts, rcv, root, true)
}

// move runs the data rounds of a gather (root >= 0) or an allgather (root
// -1): counts[q] bytes from each rank q, which the receivers put at
// rcv.displs[q]. With first, the round just agreed on already carries the
// first chunk (inline when every count fits). A nil mine means the
// receiver's own block is already in place.
func (k *call) move(mine, recv []byte, counts []int, rcv blocks, root int, first bool) error {
	me := k.a.me
	chunk := int(k.a.l.Chunk)
	most := 0
	for _, c := range counts {
		most = max(most, c)
	}
	receives := root < 0 || me == root
	inline := first && most <= format.InlineLen
	for off := 0; off < most; off += chunk {
		if off > 0 || !first {
			if err := k.next(); err != nil {
				return err
			}
			if mine != nil && off < len(mine) {
				copy(k.staging(me), mine[off:min(off+chunk, len(mine))])
			}
			k.post()
			if !receives {
				continue
			}
			if err := k.waitAll(); err != nil {
				return err
			}
		}
		if !receives {
			continue
		}
		for q := range k.a.n {
			if q == me && mine == nil || off >= counts[q] {
				continue
			}
			src := k.staging(q)
			switch {
			case q == me:
				src = mine[off:] // not its line back (the own-line rule)
			case inline:
				src = k.inline(q)
			}
			d := rcv.displs[q] + off
			copy(recv[d:d+min(chunk, counts[q]-off)], src)
		}
	}
	return nil
}

// Allgather collects every rank's send into every rank's recv, rank q's
// block at q·len(send) (MPI_Allgather). Collective. len(send) must be the
// same on every rank and recv must hold n·len(send) elements.
func Allgather[T atomics.Elem](c *Comm, send, recv []T) error {
	w, t := genericWire[T]()
	if t != nil && apart(c, send, recv, -1) {
		return allgatherType(c, "Allgather", raw.Bytes(send), len(send), t, raw.Bytes(recv), len(send), t)
	}
	return allgather(c, "Allgather", raw.Bytes(send), raw.Bytes(recv), false, w)
}

// AllgatherInPlace is Allgather with MPI_IN_PLACE: buf holds n blocks of
// len(buf)/n elements, this rank's own already at Rank()·len(buf)/n; on
// return it holds every rank's block. Collective.
func AllgatherInPlace[T atomics.Elem](c *Comm, buf []T) error {
	w, t := genericWire[T]()
	if t != nil && whole(c, len(buf), -1) {
		return allgatherTypeInPlace(c, "AllgatherInPlace", raw.Bytes(buf), len(buf)/c.Size(), t)
	}
	return allgather(c, "AllgatherInPlace", raw.Bytes(buf), raw.Bytes(buf), true, w)
}

func allgather(c *Comm, name string, send, recv []byte, inPlace bool, w wire) (err error) {
	if w.bad == nil && !inPlace && overlap(send, recv) {
		w.bad = aliased(name, c.Rank(), send, head(recv, c.Size()*len(send)))
	}
	if a := c.fastArea(); a != nil && w.bad == nil {
		// The fast path (coll_fast.go): every block rides inline.
		n, me, b := a.n, a.me, len(send)/w.size*w.size
		mine := send[:b]
		if inPlace {
			b = len(recv) / w.size / n * w.size
			mine = recv[me*b : (me+1)*b]
		}
		if b <= format.InlineLen && len(recv) >= n*b && (!inPlace || len(recv) == n*b) {
			sg := mkSig(format.CollAllgather, w.typ, 0, -1, w.count(b))
			p, err := c.fastRound(a, name, sg.w0, sg.w1, mine, sameCount, 0, a.n, 0, a.n)
			if err == nil {
				own := mine
				if inPlace {
					own = nil // already in place
				}
				a.collectInline(p, recv, own, b)
			}
			return c.fastEnd(a, name, err)
		}
	}
	var k call
	k.stages(blockOf(c, send, recv, inPlace, w.size))
	err = c.begin(&k, name)
	if err != nil {
		return err
	}
	k.bad = w.bad
	defer k.end(&err)
	n, me, s := c.Size(), c.Rank(), w.size
	m, nr := len(send)/s, len(recv)/s
	mine := send
	if inPlace {
		m = nr / n
		if nr%n != 0 {
			k.err = k.errorf(ErrCount, "buffer of %d elements is not %d equal blocks", nr, n)
		}
		mine = recv[me*m*s : (me+1)*m*s]
	} else if nr < n*m {
		k.err = k.errorf(ErrCount, "recv holds %d elements, %d blocks of %d need %d", nr, n, m, n*m)
	}
	return k.collect(mine, recv, k.a.even(m*s), -1, m*s, mkSig(format.CollAllgather, w.typ, 0, -1, w.count(m*w.size)), sameCount)
}

// Allgatherv collects every rank's send into every rank's recv: rank q's
// counts[q] elements go to recv[displs[q]:] (MPI_Allgatherv). Collective.
// counts must be the same on every rank and counts[q] must be what rank q
// sends; displs are each rank's own.
func Allgatherv[T atomics.Elem](c *Comm, send, recv []T, counts, displs []int) error {
	w, t := genericWire[T]()
	if t != nil && apart(c, send, recv, -1) {
		return allgathervType(c, "Allgatherv", raw.Bytes(send), len(send), t, raw.Bytes(recv), counts, displs, t)
	}
	return allgatherv(c, "Allgatherv", raw.Bytes(send), raw.Bytes(recv), counts, displs, false, w)
}

// AllgathervInPlace is Allgatherv with MPI_IN_PLACE: this rank's own block
// is already at buf[displs[Rank()]:] and is what it contributes.
// Collective.
func AllgathervInPlace[T atomics.Elem](c *Comm, buf []T, counts, displs []int) error {
	w, t := genericWire[T]()
	if t != nil {
		return allgathervTypeInPlace(c, "AllgathervInPlace", raw.Bytes(buf), counts, displs, t)
	}
	return allgatherv(c, "AllgathervInPlace", raw.Bytes(buf), raw.Bytes(buf), counts, displs, true, w)
}

func allgatherv(c *Comm, name string, send, recv []byte, counts, displs []int, inPlace bool, w wire) (err error) {
	var k call
	err = c.begin(&k, name)
	if err != nil {
		return err
	}
	k.bad = w.bad
	defer k.end(&err)
	me, s := c.Rank(), w.size
	m := len(send) / s
	rcv, verr := k.vblocks(counts, displs, len(recv)/s, s, "recv")
	k.err = verr
	if k.err == nil && !inPlace {
		k.err = aliasedBlocks(name, me, send, recv, rcv)
	}
	var mine []byte
	if k.err == nil {
		if inPlace {
			m = counts[me]
			mine = recv[rcv.displs[me] : rcv.displs[me]+rcv.counts[me]]
		} else {
			mine = send
		}
		putCounts(k.staging(me), rcv.counts)
	}
	if err := k.agree(mkSig(format.CollAllgatherv, w.typ, 0, -1, w.count(m*w.size)), 0); err != nil {
		return err
	}
	// Every rank's counts must equal rank 0's, and rank 0's must match
	// what each rank sends.
	all, err := k.countsFrom(0, m*w.size)
	if err != nil {
		return err
	}
	for q := 1; q < k.a.n; q++ {
		src := k.staging(q)
		for j := range all {
			if got := getCount(src, j); got != all[j] {
				return k.errorf(ErrCount, "rank 0 counts %d elements from rank %d, rank %d counts %d", all[j]/s, j, q, got/s)
			}
		}
	}
	// In place, mine is the block already in recv: it moves like the
	// others and lands where it was.
	return k.move(mine, recv, all, rcv, -1, false)
}
