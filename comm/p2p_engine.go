package comm

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/internal/team"
	"github.com/shmrun/shmrun/shm"
)

// The point-to-point engine: one per world rank, shared by all its
// communicators and goroutines (MPI_THREAD_MULTIPLE: one mutex guards it).
// Every rank owns an inbox with one ring per sender (the protocol is in
// internal/format's p2p.go and docs/FORMAT.md). A rank moves messages only
// while one of its goroutines is inside a point-to-point call: progress
// drains every ring into the matching state (posted receives, then the
// unexpected messages, in arrival order, so each sender's messages stay in
// order), and pushes the packets that waited for room.
//
// Large messages are read by the receiver from the sender's pinned buffer
// (process_vm_readv) as soon as it matches them: the sender need not be in
// a call. Where the kernel forbids that (or in the goroutine test mode),
// the receiver answers CTS and the sender streams the bytes through its
// ring, which needs both ranks in calls.
type engine struct {
	mu     sync.Mutex
	t      *team.Team // the world's
	me, n  int
	l      format.InboxLayout
	mem    []byte // this rank's inbox
	bell   barrier.Event
	abort  *uint32
	policy barrier.Policy
	eager  int  // largest message sent whole
	frag   int  // largest Data fragment
	single bool // single copy may be tried

	rx      []rxRing
	peers   []*peer
	busy    []*peer // peers with packets waiting for room
	posted  []*op
	unexp   []*inMsg
	waiting map[uint64]*op // sends waiting for Fin or CTS
	streams map[uint64]*op // receives taking Data packets
	nextID  uint64

	// Large messages received by single copy and streamed (for tests).
	nSingle, nStreamed int
}

// rxRing is this rank's reading state of one sender's ring.
type rxRing struct {
	ring  []byte
	tail  *uint64 // the published tail
	pos   uint64  // bytes consumed
	stamp uint32  // stamp of the last packet consumed
}

// peer is this rank's state toward another world rank (or itself): its
// inbox, mapped on first use, and this rank's ring in it.
type peer struct {
	w        int
	pid      int
	bell     barrier.Event
	ring     []byte
	tail     *uint64
	head     uint64 // bytes written
	seenTail uint64
	stamp    uint32 // stamp of the last packet written
	queue    []*txItem
	noSingle bool // a read from this peer failed: stream its messages
}

// txItem is a packet waiting for room in a peer's ring.
type txItem struct {
	kind        uint8
	o           *op    // Eager, Sync, RTS, Data
	id          uint64 // Fin, CTS: the sender's request
	rid, accept uint64 // CTS
}

// inMsg is a message matched to no receive yet (or taken by Mprobe).
type inMsg struct {
	kind      uint8 // PktEager, PktSync or PktRTS
	ctx       uint32
	src       int // world rank
	tag       int
	size      int
	id        uint64
	addr      uint64
	data      []byte // Eager, Sync: the payload
	fromProbe bool
}

// op is a point-to-point operation: a send or a receive.
type op struct {
	recv bool
	c    *Comm
	ctx  uint32
	peer int // world rank, or AnySource (receives)
	tag  int // or AnyTag (receives)
	buf  []byte
	elem int // element size for Status.Count (1: bytes)

	// send
	sync   bool
	id     uint64
	pin    runtime.Pinner
	pinned bool
	accept int // CTS: bytes to stream
	sent   int
	rid    uint64

	// receive
	got   int
	msg   *inMsg
	trunc bool

	done atomic.Bool
	st   Status
	err  error
}

// inboxOf is the layout of an inbox for a world of n ranks.
func inboxOf(n int) format.InboxLayout { return format.NewInboxLayout(n, shm.PageSize) }

// newEngine makes this rank's inbox and engine.
func newEngine(t *team.Team, single bool) (*engine, error) {
	l := inboxOf(t.Size())
	init := func(mem []byte) error {
		binary.LittleEndian.PutUint32(mem[format.InboxRanks:], uint32(l.N))
		binary.LittleEndian.PutUint32(mem[format.InboxRing:], uint32(l.Ring))
		return shm.WriteHeader(mem, shm.Header{Version: shm.FormatVersion, Kind: shm.KindInbox,
			HeaderLen: format.InboxRing + 4, TotalSize: uint64(l.Total)})
	}
	mem, err := t.NewInbox(l.Total, init)
	if err != nil {
		return nil, fmt.Errorf("making the rank's inbox: %w", err)
	}
	e := &engine{t: t, me: t.Rank(), n: t.Size(), l: l, mem: mem, abort: t.Abort(), policy: t.Policy(),
		eager: format.P2PEager(l.Ring), frag: format.P2PFrag(l.Ring), single: single && !t.Local(),
		rx: make([]rxRing, l.N), peers: make([]*peer, l.N), waiting: map[uint64]*op{}, streams: map[uint64]*op{}}
	e.bell = bellOf(mem, l)
	for s := range l.N {
		off := l.RingOff(s)
		e.rx[s] = rxRing{ring: mem[off : off+l.Ring : off+l.Ring], tail: raw.Uint64At(mem, l.TailOff(s)+format.TailPos)}
	}
	return e, nil
}

func bellOf(mem []byte, l format.InboxLayout) barrier.Event {
	return barrier.Event{Seq: raw.Uint32At(mem, l.BellOff+format.BellSeq), Sleepers: raw.Uint32At(mem, l.BellOff+format.BellSleepers)}
}

// checkInbox checks an inbox made by another rank.
func checkInbox(mem []byte, l format.InboxLayout) error {
	if _, err := shm.ReadHeader(mem, shm.KindInbox, int64(len(mem))); err != nil {
		return err
	}
	if n := binary.LittleEndian.Uint32(mem[format.InboxRanks:]); n != uint32(l.N) {
		return fmt.Errorf("inbox for %d ranks, want %d: %w", n, l.N, shm.ErrMismatch)
	}
	if r := binary.LittleEndian.Uint32(mem[format.InboxRing:]); r != uint32(l.Ring) {
		return fmt.Errorf("inbox with %d-byte rings, want %d: %w", r, l.Ring, shm.ErrMismatch)
	}
	return nil
}

// peer returns world rank w's peer state, mapping its inbox on first use.
// Called with e.mu held; it may wait for w to start.
func (e *engine) peer(w int) (*peer, error) {
	if p := e.peers[w]; p != nil {
		return p, nil
	}
	mem, pid := e.mem, os.Getpid()
	if w != e.me {
		var err error
		mem, pid, err = e.t.PeerInbox(w, e.l.Total, func(m []byte) error { return checkInbox(m, e.l) })
		if err != nil {
			return nil, err
		}
	}
	off := e.l.RingOff(e.me)
	p := &peer{w: w, pid: pid, bell: bellOf(mem, e.l), ring: mem[off : off+e.l.Ring : off+e.l.Ring],
		tail: raw.Uint64At(mem, e.l.TailOff(e.me)+format.TailPos)}
	e.peers[w] = p
	return p, nil
}

func (e *engine) newID() uint64 { e.nextID++; return e.nextID }

func cells(k int) int64 { return int64((k + format.PktCell - 1) &^ (format.PktCell - 1)) }

// reserve finds room for a packet of k bytes (a cell multiple) in p's
// ring, first filling the ring's end with a Skip packet if the packet
// would run past it. ok is false when the ring has no room yet.
func (p *peer) reserve(k int64) (int64, bool) {
	size := int64(len(p.ring))
	pos := int64(p.head % uint64(size))
	need := k
	if pos+k > size {
		need += size - pos
	}
	if int64(p.head-p.seenTail)+need > size {
		p.seenTail = atomic.LoadUint64(p.tail)
		if int64(p.head-p.seenTail)+need > size {
			return 0, false
		}
	}
	if pos+k > size {
		p.ring[pos+format.PktKind] = format.PktSkip
		p.publish(pos, size-pos)
		pos = 0
	}
	return pos, true
}

// publish stores the stamp of the packet of k bytes at pos (the release
// that hands it to the reader; an atomic store, so also a full fence
// before the doorbell's sleepers are read).
func (p *peer) publish(pos, k int64) {
	p.stamp++
	if p.stamp == 0 {
		p.stamp = 1
	}
	atomic.StoreUint32(raw.Uint32At(p.ring, pos), p.stamp)
	p.head += uint64(k)
}

// header writes a packet header's fields (not the stamp).
func header(b []byte, kind uint8, ctx uint32, tag int, size int, id uint64) {
	b[format.PktKind] = kind
	le := binary.LittleEndian
	le.PutUint32(b[format.PktCtx:], ctx)
	le.PutUint32(b[format.PktTag:], uint32(int32(tag)))
	le.PutUint64(b[format.PktSize:], uint64(size))
	le.PutUint64(b[format.PktID:], id)
}

// write puts item into p's ring if there is room, reporting whether it is
// all written (a Data stream may be written in several calls).
func (e *engine) write(p *peer, it *txItem) bool {
	le := binary.LittleEndian
	switch it.kind {
	case format.PktEager, format.PktSync:
		o := it.o
		k := cells(format.PktHeader + len(o.buf))
		pos, ok := p.reserve(k)
		if !ok {
			return false
		}
		b := p.ring[pos : pos+k]
		header(b, it.kind, o.ctx, o.tag, len(o.buf), o.id)
		copy(b[format.PktHeader:], o.buf)
		if it.kind == format.PktSync {
			e.waiting[o.id] = o
		}
		p.publish(pos, k)
		if it.kind == format.PktEager {
			e.complete(o, Status{}, nil)
		}
	case format.PktRTS:
		o := it.o
		k := cells(format.RTSLen)
		pos, ok := p.reserve(k)
		if !ok {
			return false
		}
		b := p.ring[pos : pos+k]
		header(b, it.kind, o.ctx, o.tag, len(o.buf), o.id)
		le.PutUint64(b[format.RTSAddr:], uint64(raw.Addr(o.buf)))
		e.waiting[o.id] = o
		p.publish(pos, k)
	case format.PktFin:
		k := cells(format.PktHeader)
		pos, ok := p.reserve(k)
		if !ok {
			return false
		}
		header(p.ring[pos:pos+k], it.kind, 0, 0, 0, it.id)
		p.publish(pos, k)
	case format.PktCTS:
		k := cells(format.CTSLen)
		pos, ok := p.reserve(k)
		if !ok {
			return false
		}
		b := p.ring[pos : pos+k]
		header(b, it.kind, 0, 0, 0, it.id)
		le.PutUint64(b[format.CTSRecvID:], it.rid)
		le.PutUint64(b[format.CTSAccept:], it.accept)
		p.publish(pos, k)
	case format.PktData:
		o := it.o
		for o.sent < o.accept {
			n := min(o.accept-o.sent, e.frag)
			k := cells(format.PktHeader + n)
			pos, ok := p.reserve(k)
			if !ok {
				return false
			}
			b := p.ring[pos : pos+k]
			b[format.PktKind] = format.PktData
			le.PutUint64(b[format.PktOffset:], uint64(o.sent))
			le.PutUint64(b[format.PktSize:], uint64(n))
			le.PutUint64(b[format.PktID:], o.rid)
			copy(b[format.PktHeader:], o.buf[o.sent:o.sent+n])
			p.publish(pos, k)
			o.sent += n
		}
		e.complete(o, Status{}, nil)
	}
	return true
}

// send queues item for p and writes what fits. Called with e.mu held.
func (e *engine) send(p *peer, it *txItem) {
	head := p.head
	if len(p.queue) == 0 && e.write(p, it) {
		p.bell.Notify()
		return
	}
	if p.head != head { // a Data stream wrote part of itself
		p.bell.Notify()
	}
	if len(p.queue) == 0 {
		e.busy = append(e.busy, p)
	}
	p.queue = append(p.queue, it)
}

// flush writes the queued packets that fit. Called with e.mu held.
func (e *engine) flush() {
	keep := e.busy[:0]
	for _, p := range e.busy {
		n, head := 0, p.head
		for n < len(p.queue) && e.write(p, p.queue[n]) {
			p.queue[n] = nil
			n++
		}
		if p.head != head {
			p.bell.Notify()
		}
		p.queue = p.queue[n:]
		if len(p.queue) > 0 {
			keep = append(keep, p)
		}
	}
	clear(e.busy[len(keep):])
	e.busy = keep
}

// progress drains every ring and pushes waiting packets. Called with e.mu
// held.
func (e *engine) progress() {
	for s := range e.rx {
		e.drain(s)
	}
	if len(e.busy) > 0 {
		e.flush()
	}
}

// drain handles the packets waiting in sender s's ring.
func (e *engine) drain(s int) {
	r := &e.rx[s]
	size := uint64(len(r.ring))
	moved := false
	for {
		pos := int64(r.pos % size)
		want := r.stamp + 1
		if want == 0 {
			want = 1
		}
		if atomic.LoadUint32(raw.Uint32At(r.ring, pos)) != want {
			break
		}
		b := r.ring[pos:]
		k := e.handle(s, b)
		if k == 0 { // a Skip
			k = int64(size) - pos
		}
		for c := int64(0); c < k; c += format.PktCell {
			binary.LittleEndian.PutUint32(b[c:], 0)
		}
		r.stamp = want
		r.pos += uint64(k)
		moved = true
	}
	if moved {
		atomic.StoreUint64(r.tail, r.pos)
		if p, err := e.peer(s); err == nil {
			p.bell.Notify()
		}
	}
}

// handle acts on the packet at b from sender s and returns its length (0
// for a Skip).
func (e *engine) handle(s int, b []byte) int64 {
	le := binary.LittleEndian
	kind := b[format.PktKind]
	size := int(le.Uint64(b[format.PktSize:]))
	id := le.Uint64(b[format.PktID:])
	switch kind {
	case format.PktSkip:
		return 0
	case format.PktEager, format.PktSync, format.PktRTS:
		m := &inMsg{kind: kind, ctx: le.Uint32(b[format.PktCtx:]), src: s, tag: int(int32(le.Uint32(b[format.PktTag:]))), size: size, id: id}
		var k int64
		var payload []byte
		if kind == format.PktRTS {
			m.addr = le.Uint64(b[format.RTSAddr:])
			k = cells(format.RTSLen)
		} else {
			k = cells(format.PktHeader + size)
			payload = b[format.PktHeader : format.PktHeader+size]
		}
		for i, o := range e.posted {
			if o.matches(m) {
				e.posted = append(e.posted[:i], e.posted[i+1:]...)
				e.deliver(o, m, payload)
				return k
			}
		}
		if payload != nil {
			m.data = append([]byte(nil), payload...)
		}
		e.unexp = append(e.unexp, m)
		return k
	case format.PktCTS:
		if o := e.waiting[id]; o != nil {
			delete(e.waiting, id)
			o.rid = le.Uint64(b[format.CTSRecvID:])
			o.accept = int(le.Uint64(b[format.CTSAccept:]))
			if p, err := e.peer(s); err == nil {
				e.send(p, &txItem{kind: format.PktData, o: o})
			} else {
				e.complete(o, Status{}, fmt.Errorf("comm: send to world rank %d: %v: %w", s, err, ErrOther))
			}
		}
		return cells(format.CTSLen)
	case format.PktData:
		off := int(le.Uint64(b[format.PktOffset:]))
		if o := e.streams[id]; o != nil {
			o.got += copy(o.buf[off:], b[format.PktHeader:format.PktHeader+size])
			if o.got >= o.accept {
				delete(e.streams, id)
				e.finishRecv(o, o.msg)
			}
		}
		return cells(format.PktHeader + size)
	case format.PktFin:
		if o := e.waiting[id]; o != nil {
			delete(e.waiting, id)
			e.complete(o, Status{}, nil)
		}
		return cells(format.PktHeader)
	}
	// Only this module writes rings; an unknown kind is a broken inbox.
	panic(fmt.Sprintf("comm: inbox ring of world rank %d holds a packet of kind %d", s, kind))
}

// matches reports whether receive o takes message m.
func (o *op) matches(m *inMsg) bool {
	return o.ctx == m.ctx && (o.peer == AnySource || o.peer == m.src) && (o.tag == AnyTag || o.tag == m.tag)
}

// deliver hands message m to receive o. payload holds an eager message's
// bytes (in the ring or in m.data).
func (e *engine) deliver(o *op, m *inMsg, payload []byte) {
	o.msg = m
	o.trunc = m.size > len(o.buf)
	if m.kind != format.PktRTS {
		copy(o.buf, payload)
		if m.kind == format.PktSync {
			e.fin(m)
		}
		e.finishRecv(o, m)
		return
	}
	want := min(m.size, len(o.buf))
	p, err := e.peer(m.src)
	if err != nil {
		e.complete(o, Status{}, fmt.Errorf("comm: receive from world rank %d: %v: %w", m.src, err, ErrOther))
		return
	}
	if want > 0 && e.single && !singleOff && !p.noSingle {
		if err := readRemote(int32(p.pid), o.buf[:want], m.addr); err == nil {
			want = 0
			e.nSingle++
		} else {
			p.noSingle = true
		}
	}
	if want == 0 {
		e.send(p, &txItem{kind: format.PktFin, id: m.id})
		e.finishRecv(o, m)
		return
	}
	o.id = e.newID()
	o.accept = want
	e.streams[o.id] = o
	e.nStreamed++
	e.send(p, &txItem{kind: format.PktCTS, id: m.id, rid: o.id, accept: uint64(want)})
}

// fin answers a Sync message's sender.
func (e *engine) fin(m *inMsg) {
	if p, err := e.peer(m.src); err == nil {
		e.send(p, &txItem{kind: format.PktFin, id: m.id})
	}
}

// finishRecv completes receive o of message m.
func (e *engine) finishRecv(o *op, m *inMsg) {
	st := Status{Source: o.c.commRank(m.src), Tag: m.tag, Count: m.size / o.elem, bytes: m.size}
	var err error
	if o.trunc {
		err = fmt.Errorf("comm: receive on rank %d: a message of %d bytes from rank %d (tag %d) into a buffer of %d: %w",
			o.c.Rank(), m.size, st.Source, m.tag, len(o.buf), ErrTruncate)
	}
	e.complete(o, st, err)
}

// complete marks o done.
func (e *engine) complete(o *op, st Status, err error) {
	if o.pinned {
		o.pin.Unpin()
		o.pinned = false
	}
	o.st, o.err = st, err
	o.done.Store(true)
	e.bell.Notify() // another goroutine of this rank may sleep on it
}

// startSend begins sending o to world rank o.peer. Called without e.mu.
func (e *engine) startSend(o *op) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, err := e.peer(o.peer)
	if err != nil {
		return err
	}
	o.id = e.newID()
	kind := uint8(format.PktEager)
	switch {
	case len(o.buf) > e.eager:
		kind = format.PktRTS
		o.pin.Pin(&o.buf[0])
		o.pinned = true
	case o.sync:
		kind = format.PktSync
	}
	e.send(p, &txItem{kind: kind, o: o})
	return nil
}

// startRecv posts receive o: it takes the first unexpected message it
// matches, or waits in the posted queue. Called without e.mu.
func (e *engine) startRecv(o *op) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.progress()
	for i, m := range e.unexp {
		if o.matches(m) {
			e.unexp = append(e.unexp[:i], e.unexp[i+1:]...)
			e.deliver(o, m, m.data)
			return
		}
	}
	e.posted = append(e.posted, o)
}

// probe finds the first unexpected message that a receive with ctx, src
// and tag would take; with take, it removes it (Mprobe).
func (e *engine) probe(ctx uint32, src, tag int, take bool) *inMsg {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.progress()
	key := op{ctx: ctx, peer: src, tag: tag}
	for i, m := range e.unexp {
		if key.matches(m) {
			if take {
				e.unexp = append(e.unexp[:i], e.unexp[i+1:]...)
			}
			return m
		}
	}
	return nil
}

// recvMessage receives a message taken by Mprobe into o.
func (e *engine) recvMessage(o *op, m *inMsg) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.deliver(o, m, m.data)
}

// cancel withdraws receive o if it is not matched yet.
func (e *engine) cancel(o *op) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, p := range e.posted {
		if p == o {
			e.posted = append(e.posted[:i], e.posted[i+1:]...)
			src := o.peer
			if src != AnySource {
				src = o.c.commRank(src)
			}
			e.complete(o, Status{Source: src, Tag: o.tag, Cancelled: true}, nil)
			return
		}
	}
}

// poll makes progress if no other goroutine is, and reports cond().
func (e *engine) poll(cond func() bool) bool {
	if cond() {
		return true
	}
	if e.mu.TryLock() {
		e.progress()
		e.mu.Unlock()
	}
	return cond()
}

// waitFor makes progress until cond() holds, waiting like the barrier
// (spin, yield, futex sleep on this rank's doorbell) in between. p is the
// wait policy.
func (e *engine) waitFor(p barrier.Policy, cond func() bool) error {
	check := func() bool { return e.poll(cond) }
	if check() {
		return nil
	}
	return e.bell.Await(e.abort, p, check)
}
