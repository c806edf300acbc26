//go:build !mpi

package comm

import (
	"errors"
	"fmt"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/raw"
)

// Persistent requests (MPI_Send_init, MPI_Recv_init, MPI_Start): the
// arguments of a send or a receive fixed once, the operation started
// anew by each Start and completed by Wait or Test like Isend's or
// Irecv's. Between a completion and the next Start the request is
// inactive: Wait and Test on it return at once with the empty status,
// and Waitall and its kind leave it in the slice (an ordinary request's
// entry they set to nil). A receive's outcome lives in one recvReq made
// at RecvInit and reused by every Start, so that a loop of Start and
// Wait allocates nothing per message.

// persist is a persistent request's fixed arguments and state. Start,
// Wait, Test and Free on one request are not to be called from two
// goroutines at once (as MPI asks of a request's uses).
type persist struct {
	c         *Comm     // the communicator it was made on, until its Free (then lc's)
	lc        *liveComm // how it reaches its communicator after that communicator's Free
	call      string    // the Init call's name, in errors
	send      bool
	sync      bool
	buf       []byte // the user's buffer
	wire      []byte // a receive's landing bytes: buf, or part of it, or in's
	f         form   // bytes and typed forms'
	t         *dtype.Type
	count     int // Type forms: instances of t
	peer, tag int // as given (communicator ranks)

	active bool     // started and not yet completed by Wait or Test
	freed  bool     // Free was called
	cur    Request  // the operation of this start: o, rv, or none (done at once)
	st     Status   // the status of an operation done at once (ProcNull's)
	rv     *recvReq // a receive's outcome, reused by every Start
	in     *typedIn // a typed receive's wire buffer and scatter (nil: in place)

	// coll starts a persistent collective's operation on c (pcoll.go):
	// a nonblocking collective's request, which becomes cur. The fields
	// above but c, lc, call, active, freed and cur are then unused.
	coll func(c *Comm) (*Request, error)
}

// comm is the communicator p works on: the one it was made on, or, once
// the program has freed that one, the communicator Free handed its
// working parts to (liveComm).
func (p *persist) comm() *Comm {
	if c := p.lc.cur.Load(); c != nil {
		return c
	}
	return p.c
}

// newPersist makes a persistent request after checking its arguments as
// its operation will check them at every Start.
func (c *Comm) newPersist(p *persist) (*Request, error) {
	var so op
	var err error
	if p.send {
		_, _, err = c.newSend(&so, p.call, p.buf, p.peer, p.tag, p.f, p.sync)
		if err == nil && p.t != nil {
			_, _, err = c.typedOut(p.call, p.buf, p.count, p.t)
		}
	} else {
		p.wire = p.buf
		_, _, err = c.newRecv(&so, p.call, p.buf, p.peer, p.tag, p.f)
		if err == nil && p.t != nil {
			if p.in, err = c.typedIn(p.call, p.buf, p.count, p.t); err == nil {
				p.wire, p.f = p.in.wire, p.in.f
				if p.in.t == nil {
					p.in = nil // the data lands in place
				}
			}
		}
		p.rv = new(recvReq)
	}
	if err != nil {
		return nil, err
	}
	return c.holdPersist(p)
}

// SendInit makes a persistent request to send buf to rank dest with tag
// (MPI_Send_init): inactive until Start, and each Start sends buf's
// contents at that time as Isend would. Local. The arguments are checked
// now; ProcNull gives a request whose starts send nothing.
func (c *Comm) SendInit(buf []byte, dest, tag int) (*Request, error) {
	return c.newPersist(&persist{call: "SendInit", send: true, buf: buf, f: bytesForm, peer: dest, tag: tag})
}

// SsendInit is SendInit whose starts complete only once a receive has
// matched the message (MPI_Ssend_init). Local.
func (c *Comm) SsendInit(buf []byte, dest, tag int) (*Request, error) {
	return c.newPersist(&persist{call: "SsendInit", send: true, sync: true, buf: buf, f: bytesForm, peer: dest, tag: tag})
}

// RecvInit makes a persistent request to receive into buf from rank src
// (or AnySource) with tag (or AnyTag) (MPI_Recv_init): inactive until
// Start, and each Start posts a receive as Irecv would, whose status the
// Wait or Test that completes it returns. Local.
func (c *Comm) RecvInit(buf []byte, src, tag int) (*Request, error) {
	return c.newPersist(&persist{call: "RecvInit", buf: buf, f: bytesForm, peer: src, tag: tag})
}

// SendInitT is SendInit of elements (MPI_Send_init with buf's predefined
// datatype). Local.
func SendInitT[T atomics.Elem](c *Comm, buf []T, dest, tag int) (*Request, error) {
	if t := pairOf[T](); t != nil {
		return c.SendInitType(raw.Bytes(buf), len(buf), t, dest, tag)
	}
	return c.newPersist(&persist{call: "SendInitT", send: true, buf: raw.Bytes(buf), f: formOf[T](), peer: dest, tag: tag})
}

// RecvInitT is RecvInit of elements (MPI_Recv_init); its statuses' Count
// is in elements. Local.
func RecvInitT[T atomics.Elem](c *Comm, buf []T, src, tag int) (*Request, error) {
	if t := pairOf[T](); t != nil {
		return c.RecvInitType(raw.Bytes(buf), len(buf), t, src, tag)
	}
	return c.newPersist(&persist{call: "RecvInitT", buf: raw.Bytes(buf), f: formOf[T](), peer: src, tag: tag})
}

// SendInitType is SendInit of count instances of t in buf (MPI_Send_init
// with a datatype): each Start packs them anew if they are not one run of
// bytes. Local.
func (c *Comm) SendInitType(buf []byte, count int, t *dtype.Type, dest, tag int) (*Request, error) {
	return c.newPersist(&persist{call: "SendInitType", send: true, buf: buf, t: t, count: count, peer: dest, tag: tag})
}

// SsendInitType is SsendInit of count instances of t (MPI_Ssend_init).
// Local.
func (c *Comm) SsendInitType(buf []byte, count int, t *dtype.Type, dest, tag int) (*Request, error) {
	return c.newPersist(&persist{call: "SsendInitType", send: true, sync: true, buf: buf, t: t, count: count, peer: dest, tag: tag})
}

// RecvInitType is RecvInit into count instances of t in buf
// (MPI_Recv_init with a datatype). Local.
func (c *Comm) RecvInitType(buf []byte, count int, t *dtype.Type, src, tag int) (*Request, error) {
	return c.newPersist(&persist{call: "RecvInitType", buf: buf, t: t, count: count, peer: src, tag: tag})
}

// persistOf is r's persistent state, or an error naming call.
func (r *Request) persistOf(call string) (*persist, error) {
	if r == nil {
		return nil, fmt.Errorf("comm: %s: nil request: %w", call, ErrRequest)
	}
	x := r.ext
	if x == nil || x.pers == nil {
		return nil, fmt.Errorf("comm: %s: not a persistent request (SendInit, RecvInit and their forms make them): %w", call, ErrRequest)
	}
	if x.pers.freed {
		return nil, fmt.Errorf("comm: %s: the persistent request of %s was freed: %w", call, x.pers.call, ErrRequest)
	}
	return x.pers, nil
}

// Start starts the operation of persistent request r (MPI_Start): a send
// of its buffer's current contents, a receive, or a persistent
// collective's operation (a collective call: pcoll.go); Wait or Test
// completes it. Local. Starting a request that is active (started and not
// completed), not persistent, or freed is ErrRequest. Start, Wait, Test,
// Cancel and Free of one persistent request are not to run in two
// goroutines at once (different requests may).
func (r *Request) Start() error {
	p, err := r.persistOf("Start")
	if err != nil {
		return err
	}
	if p.active {
		return fmt.Errorf("comm: Start: the persistent request of %s on rank %d is active (started and not completed): %w", p.call, p.c.Rank(), ErrRequest)
	}
	c := p.comm()
	err = p.start(c)
	if err != nil && errors.Is(err, ErrComm) && p.comm() != c {
		// Its communicator's Free, on another goroutine, handed the
		// request over meanwhile (liveComm): start it where it lives now.
		err = p.start(p.comm())
	}
	if err != nil {
		return err
	}
	p.active = true
	return nil
}

// start starts p's operation on c, the communicator it works on.
func (p *persist) start(c *Comm) error {
	switch {
	case p.coll != nil:
		cur, err := p.coll(c)
		if err == nil {
			p.cur = *cur
		}
		return err
	case p.send:
		return p.startSend(c)
	}
	return p.startRecv(c)
}

// startall is Startall: each request's Start in turn.
func startall(reqs []*Request) error {
	for i, r := range reqs {
		if r == nil {
			continue
		}
		if err := r.Start(); err != nil {
			return fmt.Errorf("request %d: %w", i, err)
		}
	}
	return nil
}

// startSend starts a send on c: written whole at once if it is eager, else in
// an operation of its own until it completes.
func (p *persist) startSend(c *Comm) error {
	wire, f := p.buf, p.f
	if p.t != nil {
		var err error
		if wire, f, err = c.typedOut(p.call, p.buf, p.count, p.t); err != nil {
			return err
		}
	}
	if !p.sync {
		if _, ok := c.sendFast(wire, p.peer, p.tag, f.sig, false); ok {
			p.cur, p.st = Request{}, Status{}
			return nil
		}
	}
	var so op
	e, o, err := c.newSend(&so, p.call, wire, p.peer, p.tag, f, p.sync)
	if err != nil {
		return err
	}
	p.cur, p.st = Request{}, Status{}
	if o == nil {
		return nil // ProcNull
	}
	if _, done, err := e.sendNow(o, false); err != nil || done {
		return c.wrapWait(p.call, err)
	}
	ho := getOp()
	*ho = so
	ho.call = p.call
	if err := e.startSend(ho); err != nil {
		putOp(ho)
		return c.wrapWait(p.call, err)
	}
	p.cur.o = ho
	return nil
}

// startRecv posts a receive on c whose outcome goes to p.rv.
func (p *persist) startRecv(c *Comm) error {
	if p.f.rtype == nil && c.postFast(p.call, p.wire, p.peer, p.tag, p.f.elem, p.f.sig, p.rv) != nil {
		p.cur = Request{rv: p.rv}
		return nil
	}
	var so op
	e, o, err := c.newRecv(&so, p.call, p.wire, p.peer, p.tag, p.f)
	if err != nil {
		return err
	}
	// Field by field, not a copy of procNullStatus nor of Status{}: a
	// 40-byte struct is stored and loaded in overlapping 16-byte halves,
	// and a load that spans two pending stores cannot take its data from
	// them (three quarters of startRecv's samples; see engine.handle).
	p.cur = Request{}
	p.st.Source, p.st.Tag, p.st.Count, p.st.Cancelled, p.st.bytes = ProcNull, AnyTag, 0, false, 0
	if o == nil {
		return nil // ProcNull
	}
	o.call = p.call
	p.cur.rv = e.postRecvInto(o, p.rv)
	return nil
}

// Free frees request r (MPI_Request_free). For a persistent request: it
// may not be started again, and Wait and Test on it are ErrRequest; if it
// is active, its operation goes on (a receive still writes its buffer)
// but its outcome is lost. Any other request needs no freeing (the
// garbage collector takes it once it is unreferenced): Free only makes
// sure that a typed receive's data still reaches its buffer, which its
// completion call would have scattered there. A nonblocking collective's
// request may not be freed (MPI 4.1 §6.12): ErrRequest. Local.
func (r *Request) Free() error {
	if r == nil {
		return fmt.Errorf("comm: Free: nil request: %w", ErrRequest)
	}
	if x := r.ext; x != nil && x.coll != "" {
		return fmt.Errorf("comm: Free: the request of %s, a nonblocking collective, may not be freed: %w", x.coll, ErrRequest)
	}
	if x := r.ext; x != nil && x.pers == nil && r.rv != nil {
		// Taken under x.mu, so that a completion call that has already
		// run the scatter (outcome) leaves nothing to run twice.
		x.mu.Lock()
		f := x.after
		x.after = nil
		x.mu.Unlock()
		if f != nil {
			r.rv.onComplete(f)
		}
		return nil
	}
	if x := r.ext; x != nil && x.parts != nil {
		return x.parts[1].Free() // the send needs nothing more
	}
	if x := r.ext; x != nil && x.pers != nil {
		p, err := r.persistOf("Free")
		if err != nil {
			return err
		}
		if p.active && p.coll != nil {
			return fmt.Errorf("comm: Free: the persistent collective of %s on rank %d is active (started and not completed): %w", p.call, p.c.Rank(), ErrRequest)
		}
		if p.active && p.in != nil && p.cur.rv != nil {
			// The receive goes on, and its data must still reach the
			// buffer (MPI 4.1 §3.7.3): the scatter Wait would have run.
			p.cur.rv.onComplete(p.in.finish)
		}
		p.freed, p.active = true, false
		p.cur = Request{}
		p.lc.drop()
	}
	return nil
}

// onComplete runs f with the outcome of receive rv once it completes (at
// once if it has): what its completion call would have done, for a
// request freed while active. The engine's lock orders it with completed.
func (rv *recvReq) onComplete(f func(Status, error) (Status, error)) {
	e := rv.c.world.eng
	e.lock()
	defer e.unlock()
	if rv.isDone() {
		f(rv.status(), rv.err)
		return
	}
	rv.o.freed = f
}

// isNull reports whether r counts as MPI_REQUEST_NULL for the calls on
// several requests: nil, or persistent and inactive.
func (r *Request) isNull() bool {
	if r == nil {
		return true
	}
	x := r.ext
	return x != nil && x.pers != nil && !x.pers.active
}

// wait is Request.wait for persistent requests: the empty status when
// inactive, else the current operation's outcome (after a typed
// receive's scatter), the request becoming inactive.
func (p *persist) wait(st *Status) error {
	if p.freed {
		return fmt.Errorf("comm: Wait: the persistent request of %s was freed: %w", p.call, ErrRequest)
	}
	if !p.active {
		*st = emptyStatus
		return nil
	}
	var err error
	if p.cur.o == nil && p.cur.rv == nil && p.cur.ext == nil {
		*st = p.st // done at its start
	} else {
		err = p.cur.wait(st)
		if errors.Is(err, ErrAborted) {
			return err // the job ends: the request stays as it is
		}
	}
	return p.finish(st, err)
}

// test is Request.Test for persistent requests.
func (p *persist) test(yield bool) (Status, bool, error) {
	if p.freed {
		return Status{}, false, fmt.Errorf("comm: Test: the persistent request of %s was freed: %w", p.call, ErrRequest)
	}
	if !p.active {
		return emptyStatus, true, nil
	}
	if p.cur.ext != nil && !p.cur.completeYield(yield) {
		return Status{}, false, nil
	}
	if o := p.cur.o; o != nil && !o.c.world.eng.poll(o.isDone) {
		return Status{}, false, nil
	}
	if rv := p.cur.rv; rv != nil && !rv.c.world.eng.poll(rv.isDone) {
		return Status{}, false, nil
	}
	var st Status
	err := p.wait(&st)
	return st, true, err
}

// finish ends the current operation, complete with *st and err: a typed
// receive's data is scattered, a send's operation recycled, and the
// request made inactive.
func (p *persist) finish(st *Status, err error) error {
	if p.in != nil && p.cur.rv != nil {
		*st, err = p.in.finish(*st, err)
	}
	if o := p.cur.o; o != nil {
		putOp(o)
	}
	p.cur, p.active = Request{}, false
	return err
}

// cancel is Request.Cancel for persistent requests: the current receive's.
func (p *persist) cancel() error {
	if p.freed {
		return fmt.Errorf("comm: Cancel: the persistent request of %s was freed: %w", p.call, ErrRequest)
	}
	if p.coll != nil {
		return fmt.Errorf("comm: Cancel: the request of %s, a persistent collective, may not be cancelled: %w", p.call, ErrRequest)
	}
	if p.active {
		return p.cur.Cancel()
	}
	return nil
}
