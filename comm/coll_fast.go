//go:build !mpi

package comm

import (
	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/internal/raw"
)

// The small collectives' fast path: a call of one round whose data rides
// inline (Barrier, and the inline cases of Bcast, Reduce, Allreduce,
// Gather, Allgather, Alltoall, Scatter, ReduceScatterBlock, Scan and
// Exscan, their in-place forms included) runs begin, agree (or offer, or
// agreeFrom) and end in one pass: the same round on the same lines, the
// same signatures, the same waits and run-ahead, the same verdict on a
// mismatch (call.verdict), the same late checks (settle), with no call
// built and none of the general path's bookkeeping: one rank's Allgather of
// 8 bytes 49 -> 20 ns, two ranks' Barrier 73 -> 58 across cores
// (bench/NOTES.md). The C interface's shmrun_fast_round (capi/mpi_fast.h)
// is its twin for every call here (the rooted calls and the scans only
// where ranks have cores of their own), with the same signatures and line
// layouts. A call with
// anything off that case takes the general path, which does it all: an
// argument to check and report (the caller tests its arguments first), data
// that does not ride inline, a collective area not made yet, a queued
// nonblocking collective, shmrun --check or --stats.

// fastArea returns c's collective area when c's next small call may take
// the fast path: c is live, nothing observes the job, the area is made and
// no nonblocking collective is queued, unless the call is the running
// job's own (nbc.go). nil otherwise.
func (c *Comm) fastArea() *collArea {
	if c == nil || c.t == nil || rec != nil || chk != nil {
		return nil
	}
	a := c.coll.Load()
	if a == nil {
		return nil
	}
	if q := c.nbc.Load(); q != nil && q.pending.Load() != 0 {
		if q.runner.Load() != raw.Goroutine() {
			return nil // queued jobs run first (prepare), but for the running job's own call
		}
		if a.resume {
			// A step left this call's round published (nbc_shm.go):
			// it goes on here, even with the communicator freed or
			// the runtime finalizing since (their drains run it).
			return a
		}
	}
	if c.freed.Load() {
		return nil
	}
	if w := c.world; w != nil && w.finalized.Load() {
		return nil
	}
	return a
}

// fastRound runs the one round of a small call named name on a
// (fastArea's): it writes data (at most format.InlineLen bytes) into this
// rank's inline bytes and the signature w0, w1 (mkSig's words, this rank's
// arguments good) into its flag line and publishes the round. Then it
// waits for ranks [lo, hi), whose data it reads, and compares their
// signatures in the fields same names: every rank's (agree: lo, hi = 0,
// n), none (offer: lo == hi), or some (agreeFrom), leaving the others' to
// a later call (settle), under the general path's rules for when that may
// be. Ranks [rlo, rhi) read this rank's line of the round (its data's
// readers, or every rank where every rank compares every signature in the
// call): with more than two ranks, the line is written again once they
// have published the next round (coll_check.go). It returns the round's
// line parity, whose inline bytes the caller then reads, and the round's
// verdict (a mismatch, the job's end). The caller ends with fastEnd once
// it has read them.
func (c *Comm) fastRound(a *collArea, name string, w0, w1 uint64, data []byte, same sameFields, lo, hi, rlo, rhi int) (int, error) {
	var r uint32
	var p int
	if a.resume {
		// A step published this call's round and stopped at its waits
		// (nbc_shm.go): this is the same call again, run on from there.
		a.resume = false
		r = a.h.Round
		p = int(r & (a.par - 1))
	} else {
		r = a.h.Round + 1
		p = int(r & (a.par - 1))
		// begin's work for a round that writes no staging buffer (open,
		// settle): its line must be free, and the pending checks that
		// has made due come first.
		if a.star {
			if !a.lineFreeNow(r) {
				if err := a.lineWait(r); err != nil {
					return p, c.wrapWait(name, err)
				}
			}
		} else if need := r - a.par/2; !a.atLeast(a.h.Seen, need) {
			if err := a.waitRange(need, 0, a.n); err != nil {
				return p, c.wrapWait(name, err)
			}
		}
		if a.npend > 0 && a.atLeast(a.h.Seen, a.pend[a.pend0].r) {
			c.fastSettle(a, name)
		}
		if a.star {
			if a.me == 0 {
				a.publishChecked()
			}
			a.busy(r)
			a.readBy(r, rlo, rhi)
		}
		own := a.meta(a.me, p)
		copy(own[metaInline:], data)
		storeSig(own[metaSig:metaSig+16], w0, w1)
		atomics.StoreRelease32(a.seq(a.me, p), r)
		a.h.Round = r
		a.h.Pending |= 1 << p
		a.fastN++
	}
	// The round is out; a wait below that stops (a step's, errTry)
	// leaves it to the next run of the same call (resume).
	mask := sigMask(same)
	switch {
	case a.n < 2 || hi-lo >= a.n-1:
	case lo == hi:
		a.pendOn(name, r, w0, w1, same)
		return p, nil
	default:
		alike := true
		for q := lo; q < hi; q++ {
			if err := c.fastWait(a, name, r, p, q); err != nil {
				a.resume = a.tried != 0
				return p, err
			}
			alike = alike && fastAlike(a.meta(q, p), w0, w1, mask, same) && a.lineAt(q, p, r)
		}
		if alike {
			a.pendOn(name, r, w0, w1, same)
			return p, nil
		}
	}
	for q := range a.n {
		if q != a.me {
			if err := c.fastWait(a, name, r, p, q); err != nil {
				a.resume = a.tried != 0
				return p, err
			}
		}
	}
	a.h.Seen = r
	for q := range a.n {
		if q != a.me && (!fastAlike(a.meta(q, p), w0, w1, mask, same) || !a.lineAt(q, p, r)) {
			if a.star && a.me == 0 && a.npend > 0 {
				k := call{c: c, a: a, name: name}
				k.settleFirst()
			}
			return p, c.fastVerdict(a, name, r, p, same)
		}
	}
	return p, nil
}

// fastWait waits for rank q to publish round r (line parity p).
func (c *Comm) fastWait(a *collArea, name string, r uint32, p, q int) error {
	if reached(a.seq(q, p), r) {
		return nil
	}
	if err := a.wait(q, r); err != nil {
		return c.wrapWait(name, err)
	}
	return nil
}

// fastAlike reports whether the signature in a flag line's meta equals
// w0, w1 under mask (and the count, if same names it): call.alike's test.
func fastAlike(meta []byte, w0, w1, mask uint64, same sameFields) bool {
	m0, m1 := loadSig(meta[metaSig : metaSig+16])
	return (m0^w0)&mask == 0 && (same&sameCount == 0 || m1 == w1)
}

// fastVerdict is fastRound's verdict on a signature that differs: the
// general path's (call.verdict), from every rank's line. Apart, so that
// fastRound's frame holds no call.
//
//go:noinline
func (c *Comm) fastVerdict(a *collArea, name string, r uint32, p int, same sameFields) error {
	k := call{c: c, a: a, name: name, r: r, p: p}
	return k.verdict(same)
}

// fastEnd ends a fast call whose error so far is err, as call.end does:
// the pending signature checks every rank's rounds now allow (settle),
// the sleepers' wake-up (flush), and a mismatch an earlier call left.
func (c *Comm) fastEnd(a *collArea, name string, err error) error {
	if tryOf(a) {
		if a.tried != 0 {
			// A step's call stopped (nbc_shm.go): it returns to the
			// step with its round's sleepers woken, if it published it.
			a.flush()
			return err
		}
		a.try.Store(0) // the job's later calls, if any, wait
	}
	if a.npend > 0 && a.h.Seen == a.h.Round {
		c.fastSettle(a, name)
	}
	if a.star && a.me == 0 {
		a.publishChecked()
	}
	a.flush()
	if s := a.stale; s != nil {
		a.stale = nil
		return withLate(s, err)
	}
	return err
}

// fastSettle is fastEnd's settle.
//
//go:noinline
func (c *Comm) fastSettle(a *collArea, name string) {
	k := call{c: c, a: a, name: name}
	k.settle()
}

// collectInline is the fast Gather's root and Allgather reading a round of
// line parity p: every other rank's b inline bytes into recv at q·b, and
// this rank's own there from own, not from its line (the own-line rule),
// unless own is nil (in place: already there).
func (a *collArea) collectInline(p int, recv, own []byte, b int) {
	for q := range a.n {
		switch {
		case q != a.me:
			copy(recv[q*b:(q+1)*b], a.inline(q, p))
		case own != nil:
			copy(recv[q*b:(q+1)*b], own)
		}
	}
}
