//go:build !mpi

package comm

import (
	"runtime"

	"github.com/shmrun/shmrun/internal/format"
)

// The fast paths of the common message: an eager send of bytes or of one
// basic type (Isend, Send and their typed forms) and a receive of them
// from one source (Irecv, IrecvT). They do what the general paths
// (isend, send, irecv) do for it, in the same packets, with no operation
// built and copied: a message-rate loop spends its time here, and the
// general path's operation (its copy, its clearing, the write barriers of
// its pointers while the garbage collector marks) cost a window of 64
// messages more than the messages' own work. Anything off the common
// case (an argument to check and report, ProcNull, AnySource, a message
// too large, a synchronous send, an observed job, a ring not mapped yet
// or full, a lock held elsewhere) returns nothing done, and the call
// takes the general path, which does it all and names any error.

// fastComm returns c's world engine and c's message context when c is a
// live communicator whose world has an engine and no observer runs (the
// general path's check, engine and the rec and chk tests), or nil.
func (c *Comm) fastComm() (*engine, uint32) {
	if c == nil || c.t == nil || rec != nil || chk != nil {
		return nil, 0
	}
	w := c.world
	if w == nil || w.eng == nil || w.finalized.Load() || c.freed.Load() {
		return nil, 0
	}
	return w.eng, c.p2p().ctx
}

// sendFast writes buf to rank dest of c as one eager message with tag and
// the data's signature digest sig, reporting whether it did (then the
// send is complete); with req it also returns a request complete with
// the zero status (Isend's). The engine must be unlocked.
func (c *Comm) sendFast(buf []byte, dest, tag int, sig uint32, req bool) (*Request, bool) {
	e, ctx := c.fastComm()
	if e == nil || uint(dest) >= uint(len(c.members)) || uint(tag) > TagUB || len(buf) > e.eager {
		return nil, false
	}
	w := c.members[dest]
	if !e.tryLock() {
		return nil, false
	}
	p := e.peers[w]
	if e.broken != nil || p == nil || len(p.queue) > 0 {
		e.release()
		return nil, false
	}
	k := cells(format.PktHeader + len(buf))
	pos, ok := p.reserve(k)
	if !ok {
		e.release()
		return nil, false
	}
	b := p.ring[pos : pos+k]
	header(b, format.PktEager, sig, ctx, tag, len(buf), e.newID())
	copy(b[format.PktHeader:], buf)
	p.publish(pos, k)
	e.notify(p.bell)
	var r *Request
	if req {
		r, _ = e.sent.take(sentBlock) // a zero Request: a complete send's
	}
	e.release() // nothing completed here: no doorbell of ours to ring
	return r, true
}

// sentBlock is the zero requests allocated at once (engine.sent).
const sentBlock = 128

// recvFast is Recv's fast path, a blocking receive from rank src of c
// with tag (or AnyTag) into buf whose data's signature digest is sig:
// while nothing is posted or set aside, the source's next packet if it is
// a message the receive takes whole, its stamp polled for as long as the
// wait policy's spin (engine.recvFrom, recvNow's work without the
// 200-byte operation built and its arguments checked twice). It returns
// the message's tag and bytes, or ok false with nothing received (then
// the receive takes the general path, which does not poll again).
func (c *Comm) recvFast(buf []byte, src, tag int, sig uint32) (rtag, n int, ok bool) {
	e, ctx := c.fastComm()
	if e == nil || uint(src) >= uint(len(c.members)) || uint(tag) > TagUB && tag != AnyTag {
		return 0, 0, false
	}
	return e.recvFrom(c.members[src], ctx, tag, buf, sig)
}

// irecvFast is Irecv's fast path, a receive from rank src of c with tag
// (or AnyTag) into buf whose data's elements are elem bytes with the
// signature digest sig: while nothing is posted or set aside, the
// source's next packet if it is a message the receive takes whole (take:
// the request is complete at its start); else the receive is posted as
// the general path posts it, without building its operation twice. nil
// if the receive took no fast path.
func (c *Comm) irecvFast(call string, buf []byte, src, tag, elem int, sig uint32) *Request {
	if rv := c.postFast(call, buf, src, tag, elem, sig, nil); rv != nil {
		return &rv.r
	}
	return nil
}

// postFast is irecvFast whose outcome goes to rv (a persistent request's,
// reused by each start: its last operation is complete) or, if rv is nil,
// to a new request's. It returns rv, or nil if the receive took no fast
// path (rv then unchanged).
func (c *Comm) postFast(call string, buf []byte, src, tag, elem int, sig uint32, rv *recvReq) *recvReq {
	e, ctx := c.fastComm()
	if e == nil || uint(src) >= uint(len(c.members)) || uint(tag) > TagUB && tag != AnyTag {
		return nil
	}
	w := c.members[src]
	if !e.tryLock() {
		return nil
	}
	if e.broken != nil {
		e.release()
		return nil
	}
	refill := false
	if rv == nil {
		rv, refill = e.rvs.take(rvBlock)
		rv.r.rv, rv.c = rv, c
	} else {
		// Field by field, storing no pointer that is already right: what
		// the last start's completion left, cleared (freed is nil once a
		// receive completed).
		rv.done, rv.from = 0, 0
		if rv.r.rv != rv {
			rv.r.rv = rv
		}
		if rv.c != c {
			rv.c = c
		}
		if rv.err != nil {
			rv.err = nil
		}
	}
	if e.idle() {
		if res, _, _, ptag, n := e.takeIn(w, ctx, tag, buf, sig); res == takeDone {
			count := n
			if elem != 1 {
				count /= elem
			}
			rv.src, rv.stag, rv.count, rv.bytes = int32(src), int32(ptag), count, n
			rv.done = doneSet
			e.release()
			yieldIf(refill)
			return rv
		}
	}
	o := e.newOp()
	if o.c != c { // a recycled operation most often has them: no store, no write barrier
		o.c = c
	}
	if o.call != call {
		o.call = call
	}
	o.recv, o.ctx, o.peer, o.tag, o.buf, o.elem, o.sig, o.rq = true, ctx, w, tag, buf, elem, sig, rv
	rv.o, rv.peer, rv.tag = o, int32(w), int32(tag)
	e.post(o)
	e.unlock()
	yieldIf(refill)
	return rv
}

// yieldIf yields the processor (runtime.Gosched) if refill: a receive
// that allocated its block of requests (one receive in rvBlock) lets the
// scheduler run, and with it the garbage collector's worker. A rank bound
// to one core runs at GOMAXPROCS 1, where that worker gets the processor
// only when the scheduler runs, which a loop of nonblocking calls never
// makes it do before the 10 ms preemption: a cycle that marks for 0.3 ms
// of CPU then kept marking for 1-7 ms of the loop's time, all of it with
// every pointer store through the write barrier. Yielding once a block:
// marking in 0.4 ms, BenchmarkWindowSides/posted 204-222 -> 174-178 ns.
//
// Only at GOMAXPROCS 1: with more, the worker has a processor of its
// own, and Gosched there hands this goroutine to the global queue and
// wakes a thread for it (runtime.wakep): 3% of an 8-rank message-rate
// loop's samples on 2 cores were that wake.
func yieldIf(refill bool) {
	if refill && runtime.GOMAXPROCS(0) == 1 {
		runtime.Gosched()
	}
}
