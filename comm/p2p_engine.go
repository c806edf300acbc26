//go:build !mpi

package comm

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/internal/team"
	"github.com/shmrun/shmrun/internal/typesig"
	"github.com/shmrun/shmrun/internal/winc"
	"github.com/shmrun/shmrun/shm"
)

// The point-to-point engine: one per world rank, shared by all its
// communicators and goroutines (MPI_THREAD_MULTIPLE: one lock guards it,
// a word of the state it shares with the C interface's fast paths,
// internal/winc's P2P).
// Every rank owns an inbox with one ring per sender (the protocol is in
// internal/format's p2p.go and docs/FORMAT.md). A rank moves messages only
// while one of its goroutines is inside a point-to-point call: progress
// drains every ring into the matching state (posted receives, then the
// unexpected messages, in arrival order, so each sender's messages stay in
// order), pushes the packets that waited for room, and works on the large
// messages in progress (p2p_bulk.go).
type engine struct {
	sh     winc.P2PMapped // the lock, Quiet and the ring positions (shared with C)
	ro     raceOrder      // the lock's order, for the race detector
	t      *team.Team     // the world's
	me, n  int
	l      format.InboxLayout
	mem    []byte // this rank's inbox
	bell   barrier.Event
	abort  *uint32
	policy barrier.Policy
	eager  int  // largest message sent whole
	chunk  int  // a large message's chunk
	single bool // large messages may be read from the sender's memory

	rx    []rxRing
	peers []*peer
	busy  []*peer // peers with packets waiting for room, or a send job
	// bulk is set while busy or jobs is not empty or an RTS waits for
	// its CTS (awaitCTS): a transfer in pieces is in flight, which a wait
	// outside point-to-point calls moves on (idleProgress). Written under
	// the lock, read without.
	bulk     *atomic.Bool // its own, or idleBulk for the process's engine
	awaitCTS int          // large sends announced whose CTS has not come
	jobs     []int        // senders with a receive job open on their line
	posted   fifo[*op]
	unexp    fifo[*inMsg]
	waiting  map[uint64]*op // sends waiting for CTS or Fin
	broken   error          // a ring held what no sender writes: every call fails
	wake     bool           // an operation completed since the doorbell was rung
	fence    *uint64        // a private word on lines of its own (unlock)

	// What a message-rate loop would otherwise allocate per message:
	// requests for sends complete at their start (Isend's of an eager
	// message), handed out from a block (all zero, never written); and
	// receive operations that completed, taken back from their requests
	// (complete) for the next Irecv's; and receives' requests, handed out
	// from blocks of rvBlock: one allocation for a window of receives
	// instead of one each, whose allocation and write barriers showed in
	// a message-rate loop's receiver (a request kept long keeps its
	// block, 6 KiB, alive).
	sent slab[Request]
	free []*op
	rvs  slab[recvReq]

	// Chunks of large messages this rank received in Data packets and by
	// single copy, and messages its receives took straight from a ring
	// (for tests).
	nStaged, nRead, nDirect int
	nWritten                int // chunks its receives got written in place by their senders
	nWhole                  int // messages read whole at their match, their sender's line busy

	cfast bool // the C interface runs fast paths over sh: keep Quiet

	// freed is, per communicator table entry, the claim number (the
	// context's high 24 bits) of the last communicator on it this rank
	// freed, 0 none: a message for it or an older one that no receive
	// takes can never be received (forget).
	freed [format.MaxComms]uint32

	rot atomic.Uint32 // where Waitany and its kin start looking (p2p_wait.go)
}

// rxRing is this rank's receiving state toward one sender: the ring, its
// tail line and the job line.
type rxRing struct {
	ring   []byte
	tail   *uint64 // the published tail
	jobID  *uint64
	claim  *uint64
	chunks *uint32
	st     *winc.P2PRx // the read position, given-back position and stamp
	job    *op         // the receive whose job is open on the line
	queued []*op       // receives matched to a large message, waiting for the line
	jobs   uint64      // jobs opened on the line so far: the last one's number
	// noWrites: the sender answered an offer of writes in place with Data
	// packets; later jobs read whole when the line is busy, and offer
	// nothing.
	noWrites bool
}

// peer is this rank's sending state toward another world rank (or
// itself): its inbox, mapped on first use, and this rank's ring and lines
// in it.
type peer struct {
	w        int
	pid      int
	bell     barrier.Event
	ring     []byte
	tail     *uint64
	claim    *uint64     // my job line's claim word
	st       *winc.P2PTx // the write position, the tail last seen and the stamp
	queue    []txItem
	sending  *op  // the send whose job is open on the peer's line
	noSingle bool // this rank cannot read the peer's memory
	probed   bool // noSingle is known
	noWrite  bool // a write of this rank into the peer's memory failed
}

// txItem is a packet waiting for room in a peer's ring.
type txItem struct {
	kind              uint8
	o                 *op    // Eager, Sync, RTS
	id                uint64 // Fin, CTS: the sender's request
	rid, accept, addr uint64 // CTS
}

// inMsg is a message matched to no receive yet (or taken by Mprobe).
type inMsg struct {
	kind uint8  // PktEager, PktSync or PktRTS
	sig  uint32 // the data's type signature digest (typesig)
	ctx  uint32
	src  int // world rank
	tag  int
	size int
	id   uint64
	addr uint64
	data []byte // Eager, Sync: the payload
}

// op is a point-to-point operation: a send or a receive.
type op struct {
	recv bool
	c    *Comm
	ctx  uint32
	peer int // world rank, or AnySource (receives)
	// from is the world rank + 1 of the message a receive took, under
	// shmrun --check: the thread that completes the receive (Wait, Test,
	// Recv) acquires its sender's clock, whichever thread delivered it.
	from int32
	tag  int // or AnyTag (receives)
	buf  []byte
	call string   // the call that made it, for a nonblocking one's errors
	rq   *recvReq // a nonblocking receive's request: complete leaves the outcome there
	elem int      // element size for Status.Count (1: bytes)
	sync bool
	// sig is a send's type signature digest (typesig), and the one a
	// receive's data must match: typesig.Any for bytes, a basic type's
	// code for typed receives; rtype and rcount describe a derived
	// receive's data (sig then unused).
	sig    uint32
	rtype  *dtype.Type
	rcount int

	id    uint64 // a send's (Sync, RTS), a receive's job
	lg    *large // a large message's state (nil for an eager one)
	trunc bool

	done uint32 // 1 once complete: stored after st and err
	st   Status
	err  error
	// freed is what a nonblocking receive's completion still owes its
	// buffer once its request was freed while active (a typed receive's
	// scatter): run by the engine when it completes, since no Wait will.
	// Set and run under the engine's lock.
	freed func(Status, error) (Status, error)
}

// large is the state of an operation on a large message (p2p_bulk.go),
// apart so that the common small operation stays small (less for the
// garbage collector to scan per request).
type large struct {
	pin    runtime.Pinner
	pinned bool   // o.buf is pinned (a send's always, a receive's job where it offers writes)
	rid    uint64 // a send's: the receiver's job
	raddr  uint64 // a send's: the receiver's buffer, written in place; 0: Data packets
	// oweLo, oweHi: a send's chunks that a failed write in place left to
	// Data packets.
	oweLo, oweHi int
	accept       int    // bytes that move
	n            int    // chunks
	got          int    // a receive's chunks in
	offer        bool   // a receive's: its CTS offered writes in place
	ctsDue       bool   // a send's: counted in engine.awaitCTS until its CTS (or Fin) comes
	msg          *inMsg // a receive's message
}

// isDone reports whether o is complete (an acquire).
func (o *op) isDone() bool { return atomic.LoadUint32(&o.done) != 0 }

// opPool recycles the operations of blocking calls, which nothing
// references once they are complete.
var opPool = sync.Pool{New: func() any { return new(op) }}

func getOp() *op { return opPool.Get().(*op) }

func putOp(o *op) {
	*o = op{}
	opPool.Put(o)
}

// p2pPolicy is the wait policy of point-to-point waits: the job's, except
// that a short (oversubscribed) spin is a quarter as long, since one poll
// here drains every ring (measured at 8 ranks on 2 cores: a ping-pong
// 10.4 us with 20 polls, 4.8 with 5, bench/NOTES.md).
func p2pPolicy(p barrier.Policy) barrier.Policy {
	if p.Spin <= barrier.OversubscribedPolicy.Spin {
		p.Spin = max(1, p.Spin/4)
	}
	return p
}

// tryLock takes the engine's lock if it is free, reporting whether it did.
func (e *engine) tryLock() bool {
	l := &e.sh.Lock
	if atomic.LoadUint32(l) == 0 && atomic.CompareAndSwapUint32(l, 0, 1) {
		e.ro.acquire()
		if e.sh.CQ != 0 {
			e.migrateCQ()
		}
		return true
	}
	return false
}

// migrateCQ moves the receives the C interface queued in C (winc.P2P's
// CQ) into the posted queue, in the order they were posted, before the
// lock's new holder does anything: messages are then matched as if they
// had been posted here. The engine is locked.
func (e *engine) migrateCQ() {
	if winc.CQMigrate == nil {
		return
	}
	winc.CQMigrate(func(x any, buf []byte, src, tag, elem int, sig uint32) any {
		c := x.(*Comm)
		so := op{recv: true, c: c, ctx: c.p2p().ctx, peer: src, tag: tag, buf: buf, elem: elem, sig: sig, call: "MPI_Irecv"}
		rv, o, _ := e.takeOp(&so, nil)
		e.post(o)
		return &rv.r
	})
}

// lock takes the engine's lock: a word the C interface's fast paths take
// too (winc.P2P), so not a sync.Mutex. Its holders do short work, but
// one may wait for a peer's inbox to appear (peer): a waiter spins a
// little, then yields, then sleeps.
func (e *engine) lock() {
	for i := 0; !e.tryLock(); i++ {
		switch {
		case i < 64:
			raw.Pause()
		case i < 1024:
			runtime.Gosched()
		default:
			time.Sleep(20 * time.Microsecond)
		}
	}
}

// release gives the engine's lock back, first recording in Quiet whether
// the C fast paths may go on (winc.P2P: nothing in progress in the
// matching state, nothing observed) once they exist in this process (a
// ping-pong from Go measured 12 ns slower for the test in every unlock).
func (e *engine) release() {
	if e.cfast {
		e.setQuiet()
	}
	e.ro.release()
	atomics.StoreRelease32(&e.sh.Lock, 0)
}

// setQuiet is release's: Quiet is 1 while nothing is in progress.
//
//go:noinline
func (e *engine) setQuiet() {
	q := uint32(0)
	if e.idle() {
		q = 1
	}
	e.sh.Quiet = q
}

// idle reports whether nothing is in progress in the engine's matching
// state (no receive posted, no message set aside, no packet waiting for
// room, no large message, no synchronous send waiting for its answer)
// and nothing observes it: then the next packet of a sender's ring is the
// oldest message from it that nothing has matched, and a receive from
// that sender may take it straight from the ring (recvNow, and the C
// interface's receive). The engine is locked.
func (e *engine) idle() bool {
	return len(e.posted.all()) == 0 && len(e.unexp.all()) == 0 && len(e.busy) == 0 && len(e.jobs) == 0 &&
		len(e.waiting) == 0 && e.broken == nil && rec == nil && chk == nil
}

// Outcomes of take.
const (
	takeDone  = iota // the message is received
	takeEmpty        // the ring holds no packet yet
	takeOther        // a packet the receive does not take here: the engine's path
)

// recvNow receives o, a receive from one sender not yet started, straight
// from that sender's ring when the engine is idle and the next packet
// there is an eager message o takes, as drain, handle, deliver and
// finishRecv would, without posting o: then it reports true with o's
// status. While the ring is empty it polls the packet's stamp without the
// lock for as long as the wait policy's spin, and then, as for any
// packet it does not take, it reports false with nothing changed and o
// takes the engine's path. Called with the engine unlocked. It returns
// the message's source (a rank of o's communicator), tag and bytes, which
// stay in registers: a Status passed by value or through memory was
// stored a word at a time and copied sixteen bytes at a time, a failed
// store-to-load forwarding (a fifth of recvNow's time).
func (e *engine) recvNow(o *op) (src, tag, n int, ok bool) {
	if o.peer == AnySource || o.rtype != nil || rec != nil || chk != nil {
		return 0, 0, 0, false
	}
	if tag, n, ok = e.recvFrom(o.peer, o.ctx, o.tag, o.buf, o.sig); ok {
		src = o.c.commRank(o.peer)
	}
	return src, tag, n, ok
}

// recvFrom is recvNow's work for a receive from world rank w of context
// ctx with tag (or AnyTag) into buf, whose data's signature digest is sig
// (no observer runs): it returns the message's tag and bytes.
func (e *engine) recvFrom(w int, ctx uint32, rtag int, buf []byte, sig uint32) (tag, n int, ok bool) {
	spin := e.policy.Spin
	for i := 0; ; {
		if !e.tryLock() {
			return 0, 0, false
		}
		if !e.idle() {
			e.release()
			return 0, 0, false
		}
		res, at, want, tag, n := e.takeIn(w, ctx, rtag, buf, sig)
		e.release()
		switch res {
		case takeDone:
			return tag, n, true
		case takeOther:
			return 0, 0, false
		}
		// With the pause other spins make (barrier.PauseFrom), as C's
		// receive does: where the two ranks' CPUs are hyperthreads of one
		// core, a poll back to back takes the execution units the sender
		// needs (8 B ping-pong, 2 ranks bound, five interleaved pairs:
		// 90 -> 72 ns, the C limit 65; on a host where they were cores
		// apart, it measured 175.6 against 183.6 without: bench/NOTES.md).
		pause := spin >= barrier.PauseFrom
		for i < spin && atomic.LoadUint32(at) != want {
			if pause {
				raw.Pause()
			}
			i++
		}
		if i >= spin {
			return 0, 0, false
		}
	}
}

// takeIn is recvFrom's work under the lock: it takes the next packet of
// world rank w's ring (Skip packets first) if it is an eager message of
// context ctx with tag rtag (or AnyTag) that fits buf whole and whose
// signature digest matches sig, and returns the message's tag and bytes.
// On takeEmpty, *at is where the next packet's stamp will be and want its
// value.
func (e *engine) takeIn(w int, ctx uint32, rtag int, buf []byte, sig uint32) (res int, at *uint32, want uint32, tag, n int) {
	le := binary.LittleEndian
	r := &e.rx[w]
	size := uint64(len(r.ring))
	rs := r.st
	for {
		pos := int64(rs.Pos & (size - 1))
		want = rs.Stamp + 1
		if want == 0 {
			want = 1
		}
		at = raw.Uint32At(r.ring, pos)
		if atomic.LoadUint32(at) != want {
			if rs.Pos != rs.Given {
				e.giveBack(w, r) // a Skip taken
			}
			return takeEmpty, at, want, 0, 0
		}
		b := r.ring[pos:]
		kind := b[format.PktKind]
		if kind == format.PktSkip {
			rs.Stamp, rs.Pos = want, rs.Pos+size-uint64(pos)
			continue
		}
		m := le.Uint64(b[format.PktSize:])
		tag = int(int32(le.Uint32(b[format.PktTag:])))
		if kind != format.PktEager || le.Uint32(b[format.PktCtx:]) != ctx || rtag != AnyTag && tag != rtag ||
			m > uint64(e.eager) || m > uint64(len(buf)) || !typesig.Match(le.Uint32(b[format.PktKind:])>>8, sig) ||
			cells(format.PktHeader+int(m)) > int64(len(b)) {
			if rs.Pos != rs.Given {
				e.giveBack(w, r) // a Skip taken
			}
			return takeOther, nil, 0, 0, 0
		}
		copy(buf, b[format.PktHeader:format.PktHeader+m])
		rs.Stamp, rs.Pos = want, rs.Pos+uint64(cells(format.PktHeader+int(m)))
		// No prefetch of the cells ahead, unlike drain's: a receive here
		// runs right behind its sender, whose next packets are not
		// written yet, and a line fetched before its sender writes it
		// must go back to the sender first (msgrate_8, 2 ranks bound, 7
		// interleaved runs: 160 -> 131 ns a message without it).
		if rs.Pos-rs.Given >= size/4 {
			// Else the room goes back when this ring is next found
			// empty (above), off the way of this rank's reply.
			e.giveBack(w, r)
		}
		e.nDirect++
		return takeDone, nil, 0, tag, int(m)
	}
}

// inboxOf is the layout of an inbox for a world of n ranks.
func inboxOf(n int) format.InboxLayout { return format.NewInboxLayout(n, shm.PageSize) }

// newEngine makes this rank's inbox and engine.
func newEngine(t *team.Team, single bool) (*engine, error) {
	raw.RegisterLightFence() // notify then needs no fence of its own
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
	sh, err := winc.NewP2P(l.N)
	if err != nil {
		return nil, err
	}
	e := &engine{sh: sh, t: t, me: t.Rank(), n: t.Size(), l: l, mem: mem, abort: t.Abort(), policy: p2pPolicy(t.Policy()),
		eager: format.P2PEager(l.Ring), chunk: format.P2PChunk(l.Ring), single: single,
		rx: make([]rxRing, l.N), peers: make([]*peer, l.N), waiting: map[uint64]*op{}, fence: &new(fenceLine).w, bulk: new(atomic.Bool)}
	e.bell = bellOf(mem, l)
	sh.Eager, sh.Spin = uint32(e.eager), int32(e.policy.Spin)
	for s := range l.N {
		off, jo := l.RingOff(s), l.JobOff(s)
		e.rx[s] = rxRing{ring: mem[off : off+l.Ring : off+l.Ring],
			tail:  raw.Uint64At(mem, l.TailOff(s)+format.TailPos),
			jobID: raw.Uint64At(mem, jo+format.JobID), claim: raw.Uint64At(mem, jo+format.JobClaim), chunks: raw.Uint32At(mem, jo+format.JobChunks),
			st: &sh.Rx[s]}
		r := &e.rx[s]
		r.st.Ring, r.st.Tail, r.st.RingLen = raw.Addr(r.ring), raw.AddrOf(r.tail), uint32(l.Ring)
	}
	return e, nil
}

func bellOf(mem []byte, l format.InboxLayout) barrier.Event {
	// Light: its wakers store with release and skip the full fence before
	// the sleepers' load where this process is registered (notify).
	return barrier.Event{Seq: raw.Uint32At(mem, l.BellOff+format.BellSeq), Sleepers: raw.Uint32At(mem, l.BellOff+format.BellSleepers), Light: true}
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
// Called with the engine locked; it may wait for w to start.
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
	off, jo, to := e.l.RingOff(e.me), e.l.JobOff(e.me), e.l.TailOff(e.me)
	p := &peer{w: w, pid: pid, bell: bellOf(mem, e.l), ring: mem[off : off+e.l.Ring : off+e.l.Ring],
		tail: raw.Uint64At(mem, to+format.TailPos), claim: raw.Uint64At(mem, jo+format.JobClaim), st: &e.sh.Tx[w]}
	st := p.st
	st.Tail, st.Seq, st.Sleepers = raw.AddrOf(p.tail), raw.AddrOf(p.bell.Seq), raw.AddrOf(p.bell.Sleepers)
	st.RingLen, st.Ring = uint32(len(p.ring)), raw.Addr(p.ring) // Ring last: the entry is complete
	e.peers[w] = p
	return p, nil
}

func (e *engine) newID() uint64 { e.sh.NextID++; return e.sh.NextID }

// prefetchAhead is how far on a receiver prefetches the ring after the
// packet it takes: four cells (measured from C: msgrate_8 69 -> 59 ns a
// message; eight about the same, sixteen worse).
const prefetchAhead = 4 * format.PktCell

func cells(k int) int64 { return int64((k + format.PktCell - 1) &^ (format.PktCell - 1)) }

// reserve finds room for a packet of k bytes (a cell multiple) in p's
// ring, first filling the ring's end with a Skip packet if the packet
// would run past it. ok is false when the ring has no room yet.
func (p *peer) reserve(k int64) (int64, bool) {
	size := int64(len(p.ring))
	st := p.st
	pos := int64(st.Head & uint64(size-1))
	need := k
	if pos+k > size {
		need += size - pos
	}
	if int64(st.Head-st.SeenTail)+need > size {
		st.SeenTail = atomic.LoadUint64(p.tail)
		if int64(st.Head-st.SeenTail)+need > size {
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

// publish stores the stamp of the packet of k bytes at pos: the release
// that hands it to the reader (its doorbell is rung by notify), a plain
// store as the C library's is. (It was an exchange, which measured faster
// for bursts on an earlier host; on this one the store is faster for
// both: bench/NOTES.md.)
func (p *peer) publish(pos, k int64) {
	st := p.st
	st.Stamp++
	if st.Stamp == 0 {
		st.Stamp = 1
	}
	atomics.StoreRelease32(raw.Uint32At(p.ring, pos), st.Stamp)
	st.Head += uint64(k)
}

// header writes a packet header's fields (not the stamp): kind and the
// 24-bit signature digest sig are one word.
func header(b []byte, kind uint8, sig uint32, ctx uint32, tag int, size int, id uint64) {
	le := binary.LittleEndian
	le.PutUint32(b[format.PktKind:], uint32(kind)|sig<<8)
	le.PutUint32(b[format.PktCtx:], ctx)
	le.PutUint32(b[format.PktTag:], uint32(int32(tag)))
	le.PutUint64(b[format.PktSize:], uint64(size))
	le.PutUint64(b[format.PktID:], id)
}

// write puts item into p's ring if there is room, reporting whether it
// did.
func (e *engine) write(p *peer, it *txItem) bool {
	le := binary.LittleEndian
	switch it.kind {
	case format.PktEager, format.PktSync:
		o := it.o
		if it.kind == format.PktSync {
			e.waiting[o.id] = o // before the receiver can see the packet
		}
		if !p.writeData(it.kind, o) {
			if it.kind == format.PktSync {
				delete(e.waiting, o.id)
			}
			return false
		}
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
		header(b, it.kind, o.sig, o.ctx, o.tag, len(o.buf), o.id)
		le.PutUint64(b[format.RTSAddr:], uint64(raw.Addr(o.buf)))
		e.waiting[o.id] = o
		if o.lg != nil && !o.lg.ctsDue {
			o.lg.ctsDue = true
			e.awaitCTS++
			e.bulk.Store(true)
		}
		p.publish(pos, k)
	case format.PktFin:
		k := cells(format.PktHeader)
		pos, ok := p.reserve(k)
		if !ok {
			return false
		}
		header(p.ring[pos:pos+k], it.kind, 0, 0, 0, 0, it.id)
		p.publish(pos, k)
	case format.PktCTS:
		k := cells(format.CTSLen)
		pos, ok := p.reserve(k)
		if !ok {
			return false
		}
		b := p.ring[pos : pos+k]
		header(b, it.kind, 0, 0, 0, 0, it.id)
		le.PutUint64(b[format.CTSRecvID:], it.rid)
		le.PutUint64(b[format.CTSAccept:], it.accept)
		le.PutUint64(b[format.CTSAddr:], it.addr)
		p.publish(pos, k)
	}
	return true
}

// writeData puts o's message whole into p's ring as a packet of kind
// (Eager or Sync) if there is room, reporting whether it did. o does not
// escape.
func (p *peer) writeData(kind uint8, o *op) bool {
	k := cells(format.PktHeader + len(o.buf))
	pos, ok := p.reserve(k)
	if !ok {
		return false
	}
	b := p.ring[pos : pos+k]
	header(b, kind, o.sig, o.ctx, o.tag, len(o.buf), o.id)
	copy(b[format.PktHeader:], o.buf)
	p.publish(pos, k)
	return true
}

// sendNow sends o, a send not yet started, at once if it is an eager
// message (not synchronous, small) and there is room for it in the
// receiver's ring behind nothing queued, reporting whether it did; then
// with req it also returns a request complete with the zero status. When
// it did not, o goes through startSend. o does not escape: the caller's
// may live on its stack. Called with the engine unlocked.
func (e *engine) sendNow(o *op, req bool) (*Request, bool, error) {
	if o.sync || len(o.buf) > e.eager || rec != nil || chk != nil {
		return nil, false, nil
	}
	e.lock()
	defer e.release() // nothing completes here: no doorbell of ours to ring
	if e.broken != nil {
		return nil, false, e.broken
	}
	p, err := e.peer(o.peer)
	if err != nil {
		return nil, false, err
	}
	if len(p.queue) > 0 {
		return nil, false, nil
	}
	o.id = e.newID()
	if !p.writeData(format.PktEager, o) {
		return nil, false, nil
	}
	e.notify(p.bell)
	if !req {
		return nil, true, nil
	}
	r, _ := e.sent.take(sentBlock)
	return r, true, nil
}

// send queues item for p and writes what fits. Called with the engine locked.
func (e *engine) send(p *peer, it txItem) {
	if len(p.queue) == 0 && e.write(p, &it) {
		e.notify(p.bell)
		return
	}
	e.markBusy(p)
	p.queue = append(p.queue, it)
}

// markBusy puts p on the list flush visits.
func (e *engine) markBusy(p *peer) {
	if len(p.queue) == 0 && p.sending == nil {
		e.busy = append(e.busy, p)
		e.bulk.Store(true)
	}
}

// idleEngine is this process's engine under shmrun (Init), for
// idleProgress; nil before and after. Its bulk flag is idleBulk, which
// idle reads first.
var (
	idleEngine atomic.Pointer[engine]
	idleBulk   atomic.Bool
)

// idleProgress is barrier.Idle's: a wait of any call outside the
// point-to-point calls (a Barrier, a Fence, a collective) moves on this
// rank's transfers in pieces, which another rank's receive or send may
// be waiting for (MPI's progress rule: a rank inside any MPI call makes
// progress; under --no-single-copy an Isend of a large message followed
// by a Barrier waited for ever); idle calls it when one is in flight or
// the wait slept unwoken. It reports whether one still is, and whether
// this call moved one.
func idleProgress() (inFlight, moved bool) {
	e := idleEngine.Load()
	if e == nil || !e.tryLock() {
		return idleBulk.Load(), false
	}
	before := e.idleMark()
	e.progress()
	inFlight, moved = e.bulk.Load(), e.idleMark() != before
	e.unlock()
	return inFlight, moved
}

// idleMark sums what moves when a transfer in pieces does: the write
// positions and claim words of the peers with queued packets or send jobs,
// the read positions of the lines with receive jobs and the chunks their
// jobs have in, the large sends still waiting for their CTS. Called with
// the engine locked.
func (e *engine) idleMark() uint64 {
	m := uint64(e.awaitCTS) + uint64(len(e.busy))<<32 + uint64(len(e.jobs))<<48
	for _, p := range e.busy {
		m += p.st.Head
		if p.claim != nil {
			m += atomic.LoadUint64(p.claim)
		}
	}
	for _, s := range e.jobs {
		r := &e.rx[s]
		m += r.st.Pos
		if o := r.job; o != nil && o.lg != nil {
			m += uint64(o.lg.got)
		}
	}
	return m
}

// ctsCame counts send o's CTS (or its Fin, where the receiver read the
// message itself) as come.
func (e *engine) ctsCame(o *op) {
	if o.lg != nil && o.lg.ctsDue {
		o.lg.ctsDue = false
		e.awaitCTS--
		e.setBulk()
	}
}

// setBulk records whether a transfer in pieces is still in flight.
func (e *engine) setBulk() { e.bulk.Store(len(e.busy) > 0 || len(e.jobs) > 0 || e.awaitCTS > 0) }

// flush writes the queued packets that fit and the chunks of open send
// jobs. Called with the engine locked.
func (e *engine) flush() {
	keep := e.busy[:0]
	for _, p := range e.busy {
		n, head := 0, p.st.Head
		for n < len(p.queue) && e.write(p, &p.queue[n]) {
			p.queue[n] = txItem{}
			n++
		}
		p.queue = p.queue[n:]
		if len(p.queue) == 0 && p.sending != nil {
			e.stream(p)
		}
		if p.st.Head != head {
			e.notify(p.bell)
		}
		if len(p.queue) > 0 || p.sending != nil {
			keep = append(keep, p)
		}
	}
	clear(e.busy[len(keep):])
	e.busy = keep
	if len(keep) == 0 {
		e.setBulk()
	}
}

// progress drains every ring, pushes waiting packets and chunks, and works
// on the open receive jobs. Called with the engine locked.
func (e *engine) progress() {
	if e.broken != nil {
		return
	}
	for s := range e.rx {
		e.drain(s)
	}
	if len(e.busy) > 0 {
		e.flush()
	}
	if len(e.jobs) > 0 {
		e.readJobs()
	}
}

// drain handles the packets waiting in sender s's ring.
func (e *engine) drain(s int) {
	r := &e.rx[s]
	st := r.st
	size := uint64(len(r.ring))
	for e.broken == nil {
		pos := int64(st.Pos & (size - 1)) // rings are a power of two
		want := st.Stamp + 1
		if want == 0 {
			want = 1
		}
		if atomic.LoadUint32(raw.Uint32At(r.ring, pos)) != want {
			break
		}
		// The sender's next packets are on lines of its cache: ask for
		// one a few cells on, so that a run of them arrives overlapped
		// (capi's shmrun_p2p_take_in does the same).
		raw.Prefetch(r.ring, int64((st.Pos+prefetchAhead)&(size-1)))
		k := e.handle(s, r, r.ring[pos:])
		if k == 0 { // a Skip
			k = int64(size) - pos
		}
		st.Stamp = want
		st.Pos += uint64(k)
	}
	// Room goes back at once: a sender that posts a packet and then
	// computes must find room for its next one. (Giving it back in
	// batches measured no faster.)
	if st.Pos != st.Given {
		e.giveBack(s, r)
	}
}

// giveBack zeroes the first word of every cell consumed since the last
// tail and publishes the new tail to sender s.
func (e *engine) giveBack(s int, r *rxRing) {
	size := uint64(len(r.ring))
	st := r.st
	for at := st.Given; at != st.Pos; at += format.PktCell {
		binary.LittleEndian.PutUint32(r.ring[at&(size-1):], 0)
	}
	st.Given = st.Pos
	atomics.StoreRelease64(r.tail, st.Pos)
	if p, err := e.peer(s); err == nil {
		e.notify(p.bell)
	}
}

// handle acts on the packet at b, the rest of sender s's ring from the
// packet on, and returns the packet's length (0 for a Skip). A packet no
// sender writes (a corrupt ring) breaks the engine.
func (e *engine) handle(s int, r *rxRing, b []byte) int64 {
	le := binary.LittleEndian
	kind := b[format.PktKind]
	size := le.Uint64(b[format.PktSize:])
	id := le.Uint64(b[format.PktID:])
	var k int64
	switch kind {
	case format.PktSkip:
		return 0
	case format.PktEager, format.PktSync:
		if size > uint64(e.eager) {
			e.corrupt(s, fmt.Sprintf("an eager message of %d bytes (at most %d)", size, e.eager))
			return 0
		}
		k = cells(format.PktHeader + int(size))
	case format.PktRTS:
		k = cells(format.RTSLen)
	case format.PktCTS:
		k = cells(format.CTSLen)
	case format.PktData:
		if size > uint64(e.chunk) {
			e.corrupt(s, fmt.Sprintf("a chunk of %d bytes (at most %d)", size, e.chunk))
			return 0
		}
		k = cells(format.PktHeader + int(size))
	case format.PktFin, format.PktWrote:
		k = cells(format.PktHeader)
	default:
		e.corrupt(s, fmt.Sprintf("a packet of kind %d", kind))
		return 0
	}
	if k > int64(len(b)) {
		e.corrupt(s, fmt.Sprintf("a %d-byte packet past the ring's end", k))
		return 0
	}
	switch kind {
	case format.PktEager, format.PktSync, format.PktRTS:
		// Field by field: a composite literal is built in a temporary a
		// word at a time and copied sixteen bytes at a time, and a load
		// that spans two pending stores cannot take its data from them
		// (a store-forwarding stall: 43% of handle's samples). complete,
		// takeOp and persist.startRecv avoid it the same way.
		var m inMsg
		m.kind, m.sig, m.ctx, m.src = kind, le.Uint32(b[format.PktKind:])>>8, le.Uint32(b[format.PktCtx:]), s
		m.tag, m.size, m.id = int(int32(le.Uint32(b[format.PktTag:]))), int(size), id
		var payload []byte
		if kind == format.PktRTS {
			m.addr = le.Uint64(b[format.RTSAddr:])
			if size > math.MaxInt/2 {
				e.corrupt(s, fmt.Sprintf("a message of %d bytes", size))
				return 0
			}
		} else {
			payload = b[format.PktHeader : format.PktHeader+size]
		}
		for i, o := range e.posted.all() {
			if o.matches(&m) {
				e.posted.take(i)
				e.deliver(o, &m, payload)
				return k
			}
		}
		if e.dead(m.ctx) {
			return k // sent before its communicator's free, and now unreceivable
		}
		if payload != nil {
			m.data = append([]byte(nil), payload...)
		}
		h := new(inMsg)
		*h = m
		e.unexp.push(h)
	case format.PktCTS:
		e.cts(s, id, le.Uint64(b[format.CTSRecvID:]), le.Uint64(b[format.CTSAccept:]), le.Uint64(b[format.CTSAddr:]))
	case format.PktData:
		e.data(s, r, id, le.Uint64(b[format.PktOffset:]), b[format.PktHeader:format.PktHeader+size])
	case format.PktWrote:
		e.wrote(s, r, id, le.Uint64(b[format.PktOffset:]), size)
	case format.PktFin:
		if o := e.waiting[id]; o != nil {
			delete(e.waiting, id)
			e.ctsCame(o) // a single copy's Fin comes with no CTS
			if p := e.peers[s]; p != nil && p.sending == o {
				p.sending = nil
			}
			e.complete(o, Status{}, nil)
		}
	}
	return k
}

// corrupt breaks the engine: sender s's ring in this rank's inbox holds
// what no sender writes. Every operation in progress fails, and so does
// every later call.
func (e *engine) corrupt(s int, what string) {
	e.broken = fmt.Errorf("comm: world rank %d's ring in the inbox of world rank %d holds %s: the inbox is corrupt: %w", s, e.me, what, ErrOther)
	for _, o := range e.posted.all() {
		e.complete(o, Status{}, e.broken)
	}
	e.posted.reset()
	for id, o := range e.waiting {
		delete(e.waiting, id)
		e.complete(o, Status{}, e.broken)
	}
	for _, p := range e.peers {
		if p == nil {
			continue
		}
		// A send still queued for ring room is in no other list (write
		// puts it in waiting once written): it fails here, or its Wait
		// would wait for ever. Fin and CTS items carry no operation.
		for _, it := range p.queue {
			if it.o != nil && !it.o.isDone() {
				e.complete(it.o, Status{}, e.broken)
			}
		}
		p.sending, p.queue = nil, nil
	}
	e.busy = nil
	for i := range e.rx {
		if o := e.rx[i].job; o != nil && !o.isDone() {
			// The sender may not claim more of it (its next claim sees
			// every chunk taken); a batch it claimed already may still
			// be landing in o's buffer, which nothing here can wait for.
			atomic.StoreUint64(e.rx[i].claim, jobTag(o.id)<<format.JobTagShift|uint64(o.lg.n))
			e.complete(o, Status{}, e.broken)
		}
		for _, o := range e.rx[i].queued {
			e.complete(o, Status{}, e.broken)
		}
		e.rx[i].job, e.rx[i].queued = nil, nil
	}
	e.jobs = nil
	e.awaitCTS = 0
	e.setBulk()
}

// matches reports whether receive o takes message m.
func (o *op) matches(m *inMsg) bool {
	return o.ctx == m.ctx && (o.peer == AnySource || o.peer == m.src) && (o.tag == AnyTag || o.tag == m.tag)
}

// deliver hands message m to receive o. payload holds an eager message's
// bytes (in the ring or in m.data). m may be on the caller's stack: only
// a copy is kept.
func (e *engine) deliver(o *op, m *inMsg, payload []byte) {
	if rec != nil {
		rec.Message(m.src, m.size, false)
	}
	if chk != nil {
		// The sender's clock is joined by the call that completes the
		// receive (chkReceived), not here: this may be another call's
		// progress (an Iprobe, a Test of another request), and the
		// rank's accesses before that Wait are not ordered after the
		// sender's.
		chkSnaps.Store(o, chk.Snap(m.src))
		o.from = int32(m.src) + 1
	}
	o.trunc = m.size > len(o.buf)
	if m.kind != format.PktRTS {
		copy(o.buf, payload)
		if m.kind == format.PktSync {
			e.fin(m)
		}
		e.finishRecv(o, m)
		return
	}
	e.openJob(o, m)
}

// fin answers a Sync message's sender.
func (e *engine) fin(m *inMsg) {
	if p, err := e.peer(m.src); err == nil {
		e.send(p, txItem{kind: format.PktFin, id: m.id})
	}
}

// finishRecv completes receive o of message m.
func (e *engine) finishRecv(o *op, m *inMsg) {
	src := o.c.commRank(m.src)
	var err error
	if o.trunc {
		err = fmt.Errorf("comm: receive on rank %d: a message of %d bytes from rank %d (tag %d) into a buffer of %d: %w",
			o.c.Rank(), m.size, src, m.tag, len(o.buf), ErrTruncate)
	} else if want, ok := o.wants(m.size); !ok || !typesig.Match(m.sig, want) {
		err = fmt.Errorf("comm: receive on rank %d: a message of %d bytes from rank %d (tag %d) carries %s, the receive's data %s: %w",
			o.c.Rank(), m.size, src, m.tag, typesig.Describe(m.sig), describeWant(want, ok), ErrType)
	}
	count := m.size
	if o.elem != 1 {
		count /= o.elem
	}
	o.setStatus(src, m.tag, count, m.size, false)
	e.completed(o, err)
}

// wants is the signature digest receive o's data has over its first n
// bytes; false when n bytes end inside one of its elements.
func (o *op) wants(n int) (uint32, bool) {
	if o.rtype == nil {
		return o.sig, true
	}
	s, err := o.rtype.Signature()
	if err != nil {
		return 0, false
	}
	return typesig.Prefix(s, o.rtype.Size(), o.rcount, int64(n))
}

func describeWant(d uint32, ok bool) string {
	if !ok {
		return "ends inside an element there"
	}
	return "holds " + typesig.Describe(d)
}

// complete marks o done. Another goroutine of this rank may sleep on the
// doorbell waiting for it: unlock rings it, once for every operation
// completed under the lock, after one full fence (a store-release per
// operation here, not a locked exchange each: a window of 64 receives
// completes in one drain).
func (e *engine) complete(o *op, st Status, err error) {
	o.setStatus(st.Source, st.Tag, st.Count, st.bytes, st.Cancelled)
	e.completed(o, err)
}

// setStatus is where o's status goes when it completes: its request's
// (a nonblocking receive's: the cancellation goes to o.st until
// completed stores it in done) or its own. Field by field: a Status
// passed and copied whole stalled on the stores that had just built it
// (half of complete's samples once).
func (o *op) setStatus(src, tag, count, bytes int, cancelled bool) {
	if rv := o.rq; rv != nil {
		rv.src, rv.stag, rv.count, rv.bytes = int32(src), int32(tag), count, bytes
		o.st.Cancelled = cancelled
		return
	}
	o.st.Source, o.st.Tag, o.st.Count, o.st.Cancelled, o.st.bytes = src, tag, count, cancelled, bytes
}

// completed is complete once o's status is in place.
func (e *engine) completed(o *op, err error) {
	unpinBuf(o)
	if rv := o.rq; rv != nil {
		// rv.o stays: rv is done, and nothing follows that link once it
		// is (cancel, onComplete), so the operation may serve another
		// receive. A pointer stored while the collector marks costs a
		// write barrier, so this path stores none it can avoid.
		if err != nil {
			rv.err = err
		}
		rv.from = o.from
		if o.from > 0 {
			// A freed request's receive completes with nobody to join
			// its sender's clock: its snapshot goes.
			if snap, ok := chkSnaps.LoadAndDelete(o); ok && o.freed == nil {
				chkSnaps.Store(rv, snap)
			}
		}
		d := uint32(doneSet)
		if o.st.Cancelled {
			d |= doneCancelled
		}
		atomics.StoreRelease32(&rv.done, d)
		if f := o.freed; f != nil {
			o.freed = nil
			f(rv.status(), err)
		}
		if len(e.free) < maxFree {
			o.recycle()
			e.free = append(e.free, o)
		}
	} else {
		o.err = err
		atomics.StoreRelease32(&o.done, 1)
	}
	e.wake = true
}

// recycle readies completed receive o for the free list: zero but for
// its communicator and call, which the next receive most often shares
// (postFast then stores neither) and which hold nothing of the user's;
// its buffer goes, so that a receive that is over keeps no user memory
// alive. Field by field: a whole-struct clear passes every pointer slot
// through the write barrier while the collector marks, and this runs once
// a message.
func (o *op) recycle() {
	o.buf = nil
	if o.rq != nil {
		o.rq = nil
	}
	if o.rtype != nil {
		o.rtype = nil
	}
	if o.lg != nil {
		o.lg = nil
	}
	if o.err != nil {
		o.err = nil
	}
	if o.freed != nil {
		o.freed = nil
	}
	o.recv, o.ctx, o.peer, o.from, o.tag, o.elem, o.sync, o.sig, o.rcount = false, 0, 0, 0, 0, 0, false, 0, 0
	o.id, o.trunc, o.done = 0, false, 0
	o.st.Source, o.st.Tag, o.st.Count, o.st.Cancelled, o.st.bytes = 0, 0, 0, false, 0
}

// maxFree bounds the free list of receive operations (what a window of
// receives in flight needs).
const maxFree = 256

// rvBlock is the receives' requests allocated at once (engine.rvs).
const rvBlock = 64

// takeOp returns a copy of so, a receive not yet started, in an
// operation from the free list or a new one, whose outcome goes to rv:
// a persistent request's, reused by each start (its last operation is
// complete), or, when rv is nil, a new request's. It returns rv, and
// whether rv's block of requests was allocated for it (yieldIf). The
// engine is locked.
func (e *engine) takeOp(so *op, rv *recvReq) (*recvReq, *op, bool) {
	o := e.newOp()
	*o = *so
	fresh := false
	if rv == nil {
		rv, fresh = e.rvs.take(rvBlock)
	} else {
		*rv = recvReq{}
	}
	rv.r.rv, rv.c, rv.o, rv.peer, rv.tag = rv, so.c, o, int32(so.peer), int32(so.tag)
	o.rq = rv
	return rv, o, fresh
}

// newOp is an operation from the free list (zero but for its c and call,
// recycle) or a new one. The engine is locked. (The taken entry stays in
// the list's array past its length, a pointer to an operation in use:
// clearing it would cost a write barrier a message.)
func (e *engine) newOp() *op {
	n := len(e.free)
	if n == 0 {
		return new(op)
	}
	o := e.free[n-1]
	e.free = e.free[:n-1]
	return o
}

// unlock unlocks the engine, first ringing the doorbell if operations
// completed under it: the fence orders their done stores before the load
// of the doorbell's sleepers (a sleeper adds itself, then re-checks done).
func (e *engine) unlock() {
	if e.wake {
		e.wake = false
		e.notify(e.bell)
	}
	e.release()
}

// notify rings a doorbell after release stores (a packet's stamp, a
// ring's tail, operations' done words): first a full fence, so that they
// come before the load of its sleepers (a sleeper adds itself, then looks
// again), unless this process is registered for the sleepers' heavy fence
// (the doorbells are Light events; internal/raw's LightFence).
func (e *engine) notify(bell barrier.Event) {
	if !raw.LightFence() {
		atomic.AddUint64(e.fence, 1)
	}
	bell.Notify()
}

// startSend begins sending o to world rank o.peer. Called with the engine unlocked.
func (e *engine) startSend(o *op) error {
	e.lock()
	defer e.unlock()
	if e.broken != nil {
		return e.broken
	}
	p, err := e.peer(o.peer)
	if err != nil {
		return err
	}
	o.id = e.newID()
	if rec != nil {
		rec.Message(o.peer, len(o.buf), true)
	}
	if chk != nil {
		chk.Send()
	}
	kind := uint8(format.PktEager)
	switch {
	case len(o.buf) > e.eager:
		kind = format.PktRTS
		pinSend(o, e.t.Local())
	case o.sync:
		kind = format.PktSync
	}
	e.send(p, txItem{kind: kind, o: o})
	return nil
}

// startRecv posts receive o: it takes the first unexpected message it
// matches, or waits in the posted queue. Called with the engine unlocked.
func (e *engine) startRecv(o *op) {
	e.lock()
	defer e.unlock()
	e.post(o)
}

// postRecvInto posts a copy of so, a receive not yet started, whose
// outcome goes to rv (a persistent request's, reused by each start: its
// last operation is complete) instead of a new recvReq, and returns rv.
// Called with the engine unlocked.
func (e *engine) postRecvInto(so *op, rv *recvReq) *recvReq {
	e.lock()
	defer e.unlock()
	rv, o, _ := e.takeOp(so, rv)
	e.post(o)
	return rv
}

// postRecv posts a copy of so, a receive not yet started, and returns its
// request (takeOp: so itself does not escape). Called with the engine unlocked.
func (e *engine) postRecv(so *op) *Request {
	e.lock()
	rv, o, fresh := e.takeOp(so, nil)
	e.post(o)
	e.unlock()
	yieldIf(fresh) // as postFast does
	return &rv.r
}

// post is startRecv's work; the engine is locked. A receive that completes here
// has nobody waiting for it yet: it rings no doorbell.
func (e *engine) post(o *op) {
	if e.broken != nil {
		e.complete(o, Status{}, e.broken)
		return
	}
	// No full progress first: a message still in its ring is younger than
	// every unexpected one, and meets this receive in the posted queue
	// when it is drained, without being copied aside (a window of Irecvs
	// posted while the messages arrive then allocates nothing). Once
	// posted, the receives take what their rings hold for them already
	// (drainPosted): a window's receiver then works while its sender
	// does, not after (msgrate_8, 2 ranks bound, 7 interleaved runs:
	// 237 -> 160 ns a message).
	for i, m := range e.unexp.all() {
		if o.matches(m) {
			e.unexp.take(i)
			wake := e.wake
			e.deliver(o, m, m.data)
			e.wake = wake
			return
		}
	}
	e.posted.push(o)
	if o.peer != AnySource {
		e.drainPosted(o.peer)
	} else {
		for s := range e.rx {
			e.drainPosted(s)
		}
	}
}

// drainPosted handles the packets at the head of sender s's ring while
// each is an eager message that a posted receive takes, and stops at the
// first that is anything else, which stays where it is for the next
// drain: a window of receives posted while their messages arrive then
// receives each as soon as both are there, without setting any aside. A
// message left in its ring is as if it had not arrived yet, and a later
// packet of the same ring never passes it. The engine is locked.
func (e *engine) drainPosted(s int) {
	r := &e.rx[s]
	st := r.st
	size := uint64(len(r.ring))
	le := binary.LittleEndian
	for e.broken == nil && len(e.posted.all()) > 0 {
		pos := int64(st.Pos & (size - 1))
		want := st.Stamp + 1
		if want == 0 {
			want = 1
		}
		if atomic.LoadUint32(raw.Uint32At(r.ring, pos)) != want {
			break
		}
		b := r.ring[pos:]
		switch b[format.PktKind] {
		case format.PktSkip:
		case format.PktEager:
			m := inMsg{ctx: le.Uint32(b[format.PktCtx:]), src: s, tag: int(int32(le.Uint32(b[format.PktTag:])))}
			if !e.anyPosted(&m) {
				goto out
			}
		default:
			goto out
		}
		k := e.handle(s, r, b)
		if k == 0 { // a Skip
			k = int64(size) - pos
		}
		st.Stamp = want
		st.Pos += uint64(k)
	}
out:
	if st.Pos != st.Given {
		e.giveBack(s, r)
	}
}

// anyPosted reports whether a posted receive takes message m.
func (e *engine) anyPosted(m *inMsg) bool {
	for _, o := range e.posted.all() {
		if o.matches(m) {
			return true
		}
	}
	return false
}

// probe finds the first unexpected message that a receive with ctx, src
// and tag would take; with take, it removes it (Mprobe). A broken engine
// (corrupt) is its error: no message will come.
func (e *engine) probe(ctx uint32, src, tag int, take bool) (*inMsg, error) {
	e.lock()
	defer e.unlock()
	e.progress()
	if e.broken != nil {
		return nil, e.broken
	}
	key := op{ctx: ctx, peer: src, tag: tag}
	for i, m := range e.unexp.all() {
		if key.matches(m) {
			if take {
				e.unexp.take(i)
			}
			return m, nil
		}
	}
	return nil, nil
}

// recvMessage receives a message taken by Mprobe into a copy of so, a
// receive not yet started, and returns its request. Called with the engine unlocked.
func (e *engine) recvMessage(so *op, m *inMsg) *Request {
	e.lock()
	defer e.unlock()
	rv, o, _ := e.takeOp(so, nil)
	if e.broken != nil {
		e.complete(o, Status{}, e.broken) // its sender's data cannot come
		return &rv.r
	}
	e.deliver(o, m, m.data)
	return &rv.r
}

// cancel withdraws rv's receive if it is not matched yet.
func (e *engine) cancel(rv *recvReq) {
	e.lock()
	defer e.unlock()
	o := rv.o
	if o == nil || rv.isDone() {
		return // complete (rv.o may serve another receive by now)
	}
	for i, p := range e.posted.all() {
		if p == o {
			e.posted.take(i)
			src := o.peer
			if src != AnySource {
				src = o.c.commRank(src)
			}
			e.complete(o, Status{Source: src, Tag: o.tag, Cancelled: true}, nil)
			return
		}
	}
}

// forget is the engine's part of freeing the communicator of context
// ctx, which every member has done: its unexpected messages go, and so
// will any that arrives later (sent before the free, still in a ring or a
// sender's queue) unless a receive pending at the free takes it (MPI 4.1
// §6.4.3: pending operations complete normally). Without it they stayed
// in the queue for the rest of the job, searched by every receive.
func (e *engine) forget(ctx uint32) {
	ent := int(ctx&0xff) - 1
	if ent < 0 || ent >= len(e.freed) {
		return // the world's or Self's: never freed
	}
	e.lock()
	defer e.unlock()
	e.freed[ent] = ctx >> 8
	e.unexp.keep(func(m *inMsg) bool { return !e.dead(m.ctx) })
}

// dead reports whether context ctx is that of a communicator this rank
// freed: one of the last communicator freed on its table entry, or an
// older claim of it. Claim numbers count up per entry (24 bits here, so
// compared modulo 2^24): a newer one is a communicator this rank may not
// have made yet, whose messages wait for it. The engine is locked.
func (e *engine) dead(ctx uint32) bool {
	ent := int(ctx&0xff) - 1
	if ent < 0 || ent >= len(e.freed) || e.freed[ent] == 0 {
		return false
	}
	d := (ctx>>8 - e.freed[ent]) & (1<<24 - 1)
	return d == 0 || d >= 1<<23
}

// waitOp waits for o to complete.
func (e *engine) waitOp(o *op) error { return e.waitDone(&o.done, o.waiting(), o.recv) }

// waitDone waits until *done is set (an operation completes; w says what
// it is, recv whether a receive): a short spin of progress first (no
// allocation on this common path), then waitFor.
func (e *engine) waitDone(done *uint32, w barrier.Waiting, recv bool) error {
	isDone := func() bool { return atomic.LoadUint32(done) != 0 }
	if rec != nil && !isDone() {
		defer recordWait(recv, time.Now())
	}
	// Oversubscribed, the peer needs this core: spin only as the policy
	// says before yielding it.
	pause := e.policy.Spin >= barrier.PauseFrom
	for range min(64, e.policy.Spin) {
		if isDone() {
			return nil
		}
		if e.tryLock() {
			e.progress()
			e.unlock()
		}
		if pause {
			raw.Pause()
		}
	}
	return e.waitFor(e.policy, w, isDone)
}

// recordWait records the time a wait for o blocked (--stats, --trace).
func recordWait(recv bool, t0 time.Time) {
	if recv {
		rec.Wait("Recv", t0)
	} else {
		rec.Wait("Send", t0)
	}
}

// waiting describes a wait for o to the deadlock watch.
func (o *op) waiting() barrier.Waiting {
	w := barrier.Waiting{Kind: barrier.WaitSend, Peer: int32(o.peer), Tag: int32(o.tag)}
	if o.recv {
		w.Kind = barrier.WaitRecv
	}
	return w
}

// poll makes progress if no other goroutine is, and reports cond().
func (e *engine) poll(cond func() bool) bool {
	if cond() {
		return true
	}
	if e.tryLock() {
		e.progress()
		e.unlock()
	}
	return cond()
}

// pollLocked is poll that waits for the lock if another holds it: a
// waiter's check before it sleeps must drain the rings itself. A holder
// that only sends, or a C call that reads Quiet, completes nothing and
// rings nothing, so a check that found the lock taken and slept could
// miss a packet that arrived meanwhile for a whole futex timeout.
func (e *engine) pollLocked(cond func() bool) bool {
	if cond() {
		return true
	}
	e.lock()
	e.progress()
	e.unlock()
	return cond()
}

// waitFor makes progress until cond() holds, waiting like the barrier
// (spin, yield, futex sleep on this rank's doorbell) in between. p is the
// wait policy.
func (e *engine) waitFor(p barrier.Policy, w barrier.Waiting, cond func() bool) error {
	check := func() bool { return e.pollLocked(cond) }
	if check() {
		return nil
	}
	err := e.bell.AwaitAs(w, e.abort, p, check)
	if err != nil {
		e.abandon()
	}
	return err
}

// abandon unpins every send and receive job the engine holds once the
// job is aborted: no other rank will read or write those buffers any
// more, and a runtime.Pinner collected while it pins makes the Go runtime
// panic (a world of the goroutine test mode, dropped after the abort, is
// collected whole). The operations stay where they are; their buffers,
// still referenced, stay valid.
func (e *engine) abandon() {
	e.lock()
	defer e.release()
	for _, o := range e.waiting {
		unpinBuf(o)
	}
	for s := range e.rx {
		if o := e.rx[s].job; o != nil {
			unpinBuf(o) // a receive job offering writes in place
		}
	}
	for _, p := range e.peers {
		if p == nil {
			continue
		}
		if p.sending != nil {
			unpinBuf(p.sending)
		}
		for _, it := range p.queue {
			if it.o != nil && !it.o.recv {
				unpinBuf(it.o)
			}
		}
	}
}
