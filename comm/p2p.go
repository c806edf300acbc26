//go:build !mpi

package comm

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/internal/typesig"
)

// TagUB is the largest tag (MPI_TAG_UB): tags are 0..TagUB.
const TagUB = 1<<31 - 1

// selfContext is Self's message context: no other communicator has it
// (a communicator's is its table entry + 1 and claim number, the world's 0).
const selfContext = ^uint32(0)

// p2pInfo is what a communicator's messages need: its context and the
// comm rank of each world rank.
type p2pInfo struct {
	once  sync.Once
	ready atomic.Bool // once has run: the fields below are set
	ctx   uint32
	rank  map[int]int // world rank -> comm rank (nil: the world)
}

// p2p returns c's point-to-point information, made on first use. Its
// test of ready inlines into the fast paths, where a call to once.Do's
// closure cost a message 1.4 ns of each of its send and its receive.
func (c *Comm) p2p() *p2pInfo {
	if i := &c.pt; i.ready.Load() {
		return i
	}
	return c.p2pFirst()
}

// p2pFirst is p2p's first use.
func (c *Comm) p2pFirst() *p2pInfo {
	i := &c.pt
	i.once.Do(func() {
		switch {
		case c.self:
			i.ctx = selfContext
		case c.world == c:
			i.ctx = 0
		default:
			i.ctx = c.t.Context()
		}
		if c.world != c {
			i.rank = make(map[int]int, len(c.members))
			for r, w := range c.members {
				i.rank[w] = r
			}
		}
		i.ready.Store(true)
	})
	return i
}

// commRank is the rank in c of world rank w.
func (c *Comm) commRank(w int) int {
	i := c.p2p()
	if i.rank == nil {
		return w
	}
	if r, ok := i.rank[w]; ok {
		return r
	}
	return Undefined
}

// engine returns the point-to-point engine of c's world after checking c.
func (c *Comm) engine(call string) (*engine, error) {
	if err := c.check(call); err != nil {
		return nil, err
	}
	if c.world == nil || c.world.eng == nil {
		return nil, fmt.Errorf("comm: %s on rank %d: this communicator has no point-to-point engine: %w", call, c.Rank(), ErrComm)
	}
	return c.world.eng, nil
}

// peerRank checks a destination or source rank and returns its world
// rank: ProcNull stays ProcNull, and AnySource (allowed with any) stays
// AnySource.
func (c *Comm) peerRank(call, what string, r int, any bool) (int, error) {
	switch {
	case r == ProcNull:
		return ProcNull, nil
	case r == AnySource && any:
		return AnySource, nil
	case r < 0 || r >= c.Size():
		return 0, fmt.Errorf("comm: %s on rank %d: %s %d is not a rank of the communicator (0..%d, or ProcNull%s): %w",
			call, c.Rank(), what, r, c.Size()-1, map[bool]string{true: ", AnySource", false: ""}[any], ErrRank)
	}
	return c.members[r], nil
}

// checkTag checks a tag (AnyTag allowed with any).
func (c *Comm) checkTag(call string, tag int, any bool) error {
	if (tag < 0 || tag > TagUB) && !(any && tag == AnyTag) {
		return fmt.Errorf("comm: %s on rank %d: tag %d is not in 0..%d%s: %w", call, c.Rank(), tag, TagUB,
			map[bool]string{true: " or AnyTag", false: ""}[any], ErrTag)
	}
	return nil
}

// newSend checks a send's arguments and fills o, its operation; it
// returns a nil operation for ProcNull.
func (c *Comm) newSend(o *op, call string, buf []byte, dest, tag int, f form, sync bool) (*engine, *op, error) {
	e, err := c.engine(call)
	if err != nil {
		return nil, nil, err
	}
	w, err := c.peerRank(call, "destination", dest, false)
	if err != nil {
		return nil, nil, err
	}
	if err := c.checkTag(call, tag, false); err != nil {
		return nil, nil, err
	}
	if w == ProcNull {
		return e, nil, nil
	}
	o.c, o.ctx, o.peer, o.tag, o.buf, o.sync = c, c.p2p().ctx, w, tag, buf, sync
	f.set(o)
	return e, o, nil
}

// newRecv checks a receive's arguments and fills o, its operation; it
// returns a nil operation for ProcNull.
func (c *Comm) newRecv(o *op, call string, buf []byte, src, tag int, f form) (*engine, *op, error) {
	e, err := c.engine(call)
	if err != nil {
		return nil, nil, err
	}
	w, err := c.peerRank(call, "source", src, true)
	if err != nil {
		return nil, nil, err
	}
	if err := c.checkTag(call, tag, true); err != nil {
		return nil, nil, err
	}
	if w == ProcNull {
		return e, nil, nil
	}
	o.recv, o.c, o.ctx, o.peer, o.tag, o.buf = true, c, c.p2p().ctx, w, tag, buf
	f.set(o)
	return e, o, nil
}

// procNullStatus is the status of a receive from ProcNull.
var procNullStatus = Status{Source: ProcNull, Tag: AnyTag}

// isend starts a send and returns its request.
func (c *Comm) isend(call string, buf []byte, dest, tag int, f form, sync bool) (*Request, error) {
	var so op // on the stack unless the send must wait
	e, o, err := c.newSend(&so, call, buf, dest, tag, f, sync)
	if o == nil {
		if err != nil {
			return nil, err
		}
		return doneRequest(Status{}), nil
	}
	r, done, err := e.sendNow(o, true)
	if err != nil {
		return nil, c.wrapWait(call, err)
	}
	if done {
		return r, nil
	}
	ho := getOp() // a variable of its own, or so escapes too
	*ho = so
	ho.call = call
	if err := e.startSend(ho); err != nil {
		putOp(ho)
		return nil, c.wrapWait(call, err)
	}
	return &Request{o: ho}, nil
}

// send is Send and Ssend: no request, and a recycled operation.
func (c *Comm) send(call string, buf []byte, dest, tag int, f form, sync bool) error {
	var so op
	e, o, err := c.newSend(&so, call, buf, dest, tag, f, sync)
	if err != nil || o == nil {
		return err
	}
	if _, done, err := e.sendNow(o, false); done || err != nil {
		return c.wrapWait(call, err)
	}
	ho := getOp() // a variable of its own, or so escapes too
	*ho = so
	if err := e.startSend(ho); err != nil {
		putOp(ho)
		return c.wrapWait(call, err)
	}
	if err := e.waitOp(ho); err != nil {
		return c.wrapWait(call, err) // the engine may still hold ho
	}
	err = ho.err
	putOp(ho)
	return err
}

// recv is Recv: no request, and a recycled operation. With now it first
// tries the direct receive (recvNow), which Recv's fast path (recvFast)
// has tried already.
func (c *Comm) recv(call string, buf []byte, src, tag int, f form, now bool) (Status, error) {
	var so op
	e, o, err := c.newRecv(&so, call, buf, src, tag, f)
	if err != nil {
		return Status{}, err
	}
	if o == nil {
		return procNullStatus, nil
	}
	if now {
		if src, tag, n, ok := e.recvNow(o); ok {
			return Status{Source: src, Tag: tag, Count: n / o.elem, bytes: n}, nil
		}
	}
	ho := getOp() // a variable of its own, or so escapes too
	*ho = so
	e.startRecv(ho)
	if err := e.waitOp(ho); err != nil {
		return Status{}, c.wrapWait(call, err)
	}
	chkReceived(ho, ho.from)
	st, err := ho.st, ho.err
	putOp(ho)
	return st, err
}

// irecv posts a receive and returns its request.
func (c *Comm) irecv(call string, buf []byte, src, tag int, f form) (*Request, error) {
	var so op
	e, o, err := c.newRecv(&so, call, buf, src, tag, f)
	if o == nil {
		if err != nil {
			return nil, err
		}
		return doneRequest(procNullStatus), nil
	}
	o.call = call
	return e.postRecv(o), nil
}

// Send sends buf to rank dest of c with tag (MPI_Send). Blocking, not
// collective. It returns once buf may be reused: a message of a few KiB
// is copied into dest's inbox at once, while a larger one waits until dest
// has received it — so two ranks that both Send a large message to each
// other before receiving wait for each other forever, as the standard
// allows (use Isend, Sendrecv, or receive first). ProcNull: nothing is
// sent.
func (c *Comm) Send(buf []byte, dest, tag int) error {
	if _, ok := c.sendFast(buf, dest, tag, typesig.Any, false); ok {
		return nil
	}
	return c.send("Send", buf, dest, tag, bytesForm, false)
}

// Ssend sends buf to rank dest with tag and returns once a receive has
// matched it (MPI_Ssend). Blocking, not collective.
func (c *Comm) Ssend(buf []byte, dest, tag int) error {
	return c.send("Ssend", buf, dest, tag, bytesForm, true)
}

// Isend starts sending buf to rank dest with tag (MPI_Isend) and returns a
// request; buf must not be changed until the request completes. Local,
// not collective: it never waits. The request holds buf, pinned, so that
// the receiving process can read it in place.
func (c *Comm) Isend(buf []byte, dest, tag int) (*Request, error) {
	if r, ok := c.sendFast(buf, dest, tag, typesig.Any, true); ok {
		return r, nil
	}
	return c.isend("Isend", buf, dest, tag, bytesForm, false)
}

// Issend is Isend whose request completes only once a receive has matched
// the message (MPI_Issend). Local.
func (c *Comm) Issend(buf []byte, dest, tag int) (*Request, error) {
	return c.isend("Issend", buf, dest, tag, bytesForm, true)
}

// Recv receives a message from rank src (or AnySource) with tag (or
// AnyTag) into buf (MPI_Recv). Blocking, not collective. Messages from
// one sender on one communicator with one tag arrive in the order sent.
// A message longer than buf fills buf and returns ErrTruncate, with the
// message's length in the status's Count. From ProcNull it returns at
// once with Source ProcNull, Tag AnyTag and Count 0.
func (c *Comm) Recv(buf []byte, src, tag int) (Status, error) {
	if rtag, n, ok := c.recvFast(buf, src, tag, typesig.Any); ok {
		return Status{Source: src, Tag: rtag, Count: n, bytes: n}, nil
	}
	return c.recv("Recv", buf, src, tag, bytesForm, false)
}

// Irecv posts a receive into buf (MPI_Irecv) and returns its request; buf
// belongs to the request until it completes. Local.
func (c *Comm) Irecv(buf []byte, src, tag int) (*Request, error) {
	if r := c.irecvFast("Irecv", buf, src, tag, 1, typesig.Any); r != nil {
		return r, nil
	}
	return c.irecv("Irecv", buf, src, tag, bytesForm)
}

// Sendrecv sends send to dest with sendTag and receives into recv from src
// with recvTag (MPI_Sendrecv), both at once: it completes whatever the
// sizes and whatever the peers do first. Blocking.
func (c *Comm) Sendrecv(send []byte, dest, sendTag int, recv []byte, src, recvTag int) (Status, error) {
	return sendrecv(c, "Sendrecv", send, dest, sendTag, bytesForm, recv, src, recvTag, bytesForm)
}

// SendrecvReplace sends buf to dest with sendTag and receives a message
// from src with recvTag into buf (MPI_Sendrecv_replace). Blocking.
func (c *Comm) SendrecvReplace(buf []byte, dest, sendTag, src, recvTag int) (Status, error) {
	return sendrecv(c, "SendrecvReplace", append([]byte(nil), buf...), dest, sendTag, bytesForm, buf, src, recvTag, bytesForm)
}

func sendrecv(c *Comm, call string, send []byte, dest, sendTag int, sf form, recv []byte, src, recvTag int, rf form) (Status, error) {
	if err := aliased(call, c.Rank(), send, recv); err != nil {
		return Status{}, err
	}
	rr, err := c.irecv(call, recv, src, recvTag, rf)
	if err != nil {
		return Status{}, err
	}
	sr, err := c.isend(call, send, dest, sendTag, sf, false)
	if err != nil {
		rr.Cancel()
		rr.Wait()
		return Status{}, err
	}
	if _, err := sr.Wait(); err != nil {
		rr.Cancel()
		rr.Wait()
		return Status{}, err
	}
	return rr.Wait()
}

// Probe waits until a message from src (or AnySource) with tag (or AnyTag)
// can be received and returns its status, without receiving it
// (MPI_Probe): a Recv with the status's source and tag receives that
// message. Blocking. The status's Count is in bytes (a probe has no
// datatype): GetCount[T] and GetCountType count it in elements or
// instances.
func (c *Comm) Probe(src, tag int) (Status, error) {
	st, _, err := c.probe("Probe", src, tag, true)
	return st, err
}

// Iprobe reports whether a message from src with tag can be received, and
// its status if so (MPI_Iprobe). Local: it never blocks.
func (c *Comm) Iprobe(src, tag int) (Status, bool, error) {
	return c.probe("Iprobe", src, tag, false)
}

func (c *Comm) probe(call string, src, tag int, block bool) (Status, bool, error) {
	e, o, err := c.newRecv(new(op), call, nil, src, tag, bytesForm)
	if err != nil {
		return Status{}, false, err
	}
	if o == nil {
		return procNullStatus, true, nil
	}
	var m *inMsg
	var perr error
	find := func() bool { m, perr = e.probe(o.ctx, o.peer, o.tag, false); return m != nil || perr != nil }
	if !find() {
		if !block {
			return Status{}, false, nil
		}
		if err := e.waitFor(e.policy, barrier.Waiting{Kind: barrier.WaitProbe, Peer: int32(o.peer), Tag: int32(o.tag)}, find); err != nil {
			return Status{}, false, c.wrapWait(call, err)
		}
	}
	if perr != nil {
		return Status{}, false, perr
	}
	return msgStatus(c, m, 1), true, nil
}

func msgStatus(c *Comm, m *inMsg, elem int) Status {
	return Status{Source: c.commRank(m.src), Tag: m.tag, Count: m.size / elem, bytes: m.size}
}

// Message is a message taken by Mprobe or Improbe (MPI_Message): no other
// receive can match it, and exactly one Recv or Irecv on it receives it.
type Message struct {
	c      *Comm
	e      *engine
	m      *inMsg // nil: from ProcNull (MPI_MESSAGE_NO_PROC)
	mu     sync.Mutex
	closed bool
}

// Mprobe waits for a message from src with tag and takes it (MPI_Mprobe):
// it returns the message, to be received by its Recv or Irecv, and its
// status. Blocking.
func (c *Comm) Mprobe(src, tag int) (*Message, Status, error) {
	m, st, _, err := c.mprobe("Mprobe", src, tag, true)
	return m, st, err
}

// Improbe takes a message from src with tag if one can be received
// (MPI_Improbe). Local.
func (c *Comm) Improbe(src, tag int) (*Message, Status, bool, error) {
	return c.mprobe("Improbe", src, tag, false)
}

func (c *Comm) mprobe(call string, src, tag int, block bool) (*Message, Status, bool, error) {
	e, o, err := c.newRecv(new(op), call, nil, src, tag, bytesForm)
	if err != nil {
		return nil, Status{}, false, err
	}
	if o == nil {
		return &Message{c: c, e: e}, procNullStatus, true, nil
	}
	var m *inMsg
	var perr error
	find := func() bool { m, perr = e.probe(o.ctx, o.peer, o.tag, true); return m != nil || perr != nil }
	if !find() {
		if !block {
			return nil, Status{}, false, nil
		}
		if err := e.waitFor(e.policy, barrier.Waiting{Kind: barrier.WaitProbe, Peer: int32(o.peer), Tag: int32(o.tag)}, find); err != nil {
			return nil, Status{}, false, c.wrapWait(call, err)
		}
	}
	if perr != nil {
		return nil, Status{}, false, perr
	}
	return &Message{c: c, e: e, m: m}, msgStatus(c, m, 1), true, nil
}

// take marks the message received (once).
func (msg *Message) take(call string) error {
	if msg == nil {
		return fmt.Errorf("comm: Message.%s: nil message: %w", call, ErrArg)
	}
	msg.mu.Lock()
	defer msg.mu.Unlock()
	if msg.closed {
		return fmt.Errorf("comm: Message.%s on rank %d: the message was already received: %w", call, msg.c.Rank(), ErrArg)
	}
	msg.closed = true
	return msg.c.check("Message." + call)
}

// Recv receives the message into buf (MPI_Mrecv). Blocking, only as long
// as the message's bytes take to arrive.
func (msg *Message) Recv(buf []byte) (Status, error) {
	return wait1Status(msg.irecv("Recv", buf, bytesForm))
}

// Irecv starts receiving the message into buf (MPI_Imrecv). Local.
func (msg *Message) Irecv(buf []byte) (*Request, error) {
	return msg.irecv("Irecv", buf, bytesForm)
}

func (msg *Message) irecv(call string, buf []byte, f form) (*Request, error) {
	if err := msg.take(call); err != nil {
		return nil, err
	}
	if msg.m == nil {
		return doneRequest(procNullStatus), nil
	}
	so := op{recv: true, c: msg.c, ctx: msg.m.ctx, peer: msg.m.src, tag: msg.m.tag, buf: buf, call: "Message." + call}
	f.set(&so)
	return msg.e.recvMessage(&so, msg.m), nil
}

func wait1Status(r *Request, err error) (Status, error) {
	if err != nil {
		return Status{}, err
	}
	return r.Wait()
}

// SendT sends the elements of buf to dest with tag (MPI_Send with buf's
// predefined datatype). Blocking; see Send.
func SendT[T atomics.Elem](c *Comm, buf []T, dest, tag int) error {
	if t := pairOf[T](); t != nil {
		return sendPair(c, "SendT", buf, t, dest, tag, false)
	}
	if _, ok := c.sendFast(raw.Bytes(buf), dest, tag, formOf[T]().sig, false); ok {
		return nil
	}
	return c.send("SendT", raw.Bytes(buf), dest, tag, formOf[T](), false)
}

// SsendT is Ssend of elements (MPI_Ssend). Blocking.
func SsendT[T atomics.Elem](c *Comm, buf []T, dest, tag int) error {
	if t := pairOf[T](); t != nil {
		return sendPair(c, "SsendT", buf, t, dest, tag, true)
	}
	return c.send("SsendT", raw.Bytes(buf), dest, tag, formOf[T](), true)
}

// RecvT receives elements into buf (MPI_Recv): the status's Count is in
// elements. Blocking; see Recv.
func RecvT[T atomics.Elem](c *Comm, buf []T, src, tag int) (Status, error) {
	if t := pairOf[T](); t != nil {
		return recvPair(c, "RecvT", buf, t, src, tag)
	}
	f := formOf[T]()
	if rtag, n, ok := c.recvFast(raw.Bytes(buf), src, tag, f.sig); ok {
		return Status{Source: src, Tag: rtag, Count: n / f.elem, bytes: n}, nil
	}
	return c.recv("RecvT", raw.Bytes(buf), src, tag, f, false)
}

// IsendT starts sending the elements of buf (MPI_Isend). Local.
func IsendT[T atomics.Elem](c *Comm, buf []T, dest, tag int) (*Request, error) {
	if t := pairOf[T](); t != nil {
		return c.isendType("IsendT", raw.Bytes(buf), len(buf), t, dest, tag, false)
	}
	f := formOf[T]()
	if r, ok := c.sendFast(raw.Bytes(buf), dest, tag, f.sig, true); ok {
		return r, nil
	}
	return c.isend("IsendT", raw.Bytes(buf), dest, tag, formOf[T](), false)
}

// IrecvT posts a receive of elements into buf (MPI_Irecv); its status's
// Count is in elements. Local.
func IrecvT[T atomics.Elem](c *Comm, buf []T, src, tag int) (*Request, error) {
	if t := pairOf[T](); t != nil {
		return c.irecvType("IrecvT", raw.Bytes(buf), len(buf), t, src, tag)
	}
	f := formOf[T]()
	if r := c.irecvFast("IrecvT", raw.Bytes(buf), src, tag, f.elem, f.sig); r != nil {
		return r, nil
	}
	return c.irecv("IrecvT", raw.Bytes(buf), src, tag, formOf[T]())
}

// SendrecvT is Sendrecv of elements (MPI_Sendrecv). Blocking.
func SendrecvT[T atomics.Elem](c *Comm, send []T, dest, sendTag int, recv []T, src, recvTag int) (Status, error) {
	if t := pairOf[T](); t != nil {
		return c.SendrecvType(raw.Bytes(send), len(send), t, dest, sendTag, raw.Bytes(recv), len(recv), t, src, recvTag)
	}
	return sendrecv(c, "SendrecvT", raw.Bytes(send), dest, sendTag, formOf[T](), raw.Bytes(recv), src, recvTag, formOf[T]())
}

// MrecvT receives a message taken by Mprobe into elements (MPI_Mrecv).
func MrecvT[T atomics.Elem](msg *Message, buf []T) (Status, error) {
	if t := pairOf[T](); t != nil {
		return msg.RecvType(raw.Bytes(buf), len(buf), t)
	}
	return wait1Status(msg.irecv("Recv", raw.Bytes(buf), formOf[T]()))
}

// GetCount is the number of elements of T in the message a status
// describes (MPI_Get_count), or Undefined if its bytes are not a whole
// number of elements. Local.
func GetCount[T atomics.Elem](st Status) int {
	n := elemBytes[T]()
	if st.bytes%n != 0 {
		return Undefined
	}
	return st.bytes / n
}
