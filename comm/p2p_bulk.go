//go:build !mpi

package comm

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/raw"
)

// Large messages (more than the eager limit). The sender announces the
// message with an RTS holding its pinned buffer's address; the receiver
// that matches it opens a job on the sender's job line and answers CTS,
// with its own buffer's address (pinned) where single copy is on. Then
// both ends copy at once, each claiming batches of chunks from its end:
// the receiver from the back, read straight from the sender's buffer by
// process_vm_readv; the sender from the front, written straight into the
// receiver's buffer by process_vm_writev and reported in a Wrote packet.
// One copy per byte, two cores at it: on this host a 1 MiB ping-pong half
// trip over real pages took 88-93 us with the sender's part going through
// its ring (two copies, and the receiver's core copying them out) and
// 42-52 with it written in place (bench/NOTES.md). The two meet where
// their speeds put them; a receiver whose sender is computing (an Isend
// left to run) completes on its own. Where the kernel lets the sender read its own buffer but not
// write the receiver's, the sender's chunks go through its ring in Data
// packets (two copies), and where the receiver cannot read the sender's
// memory (Yama, seccomp, --no-single-copy, SetSingleOff), the sender moves
// it all.
//
// The receiver used to leave a job to its sender for its first 5 µs
// (process_vm_readv then cost ~2.5 µs a call here): on the 2026-11 host,
// where a cross-core line takes ~130 ns and the system call is cheap,
// that made the sender's two copies carry nearly all of a ping-pong, and
// 64 KiB, 1 MiB and 4 MiB took 11, 137 and 533 µs against 3.4, 36-55 and
// 246 with both ends at work from the start (bench/NOTES.md).
//
// One job is open per sender at a time; a second large message from the
// same sender, matched meanwhile, waits for the line where the receiver
// offers writes in place (it then moves from both ends too), else is read
// whole by single copy when possible, or waits for the line.

// maxBatch is the most chunks either end claims at once (one system
// call: its fixed cost spread over up to maxBatch chunks).
const maxBatch = 32

// batch is how many of rest unclaimed chunks an end claims: half, so that
// the other end, copying at the same time, finds the other half (the two
// halve what is left until they meet), but at least two and at most
// maxBatch.
func batch(rest int) int {
	return min(rest, maxBatch, max(2, (rest+1)/2))
}

// localBufs maps the addresses of pinned buffers of large messages to the
// buffers, for single copy in the goroutine test mode, where ranks share
// an address space: a rank copies from or into the slice itself (the race
// detector sees it), not through the kernel. Several operations may pin
// buffers at one address at once (one buffer in two Isends, or the first
// half of it in another): the entry counts them and holds the longest,
// until the last is unpinned.
var localBufs struct {
	sync.Mutex
	m map[uint64]*localBuf
}

type localBuf struct {
	buf  []byte
	pins int
}

func addLocalBuf(b []byte) {
	localBufs.Lock()
	defer localBufs.Unlock()
	if localBufs.m == nil {
		localBufs.m = make(map[uint64]*localBuf)
	}
	addr := uint64(raw.Addr(b))
	lb := localBufs.m[addr]
	if lb == nil {
		lb = new(localBuf)
		localBufs.m[addr] = lb
	}
	if len(b) > len(lb.buf) {
		lb.buf = b
	}
	lb.pins++
}

func dropLocalBuf(b []byte) {
	localBufs.Lock()
	defer localBufs.Unlock()
	addr := uint64(raw.Addr(b))
	if lb := localBufs.m[addr]; lb != nil {
		if lb.pins--; lb.pins == 0 {
			delete(localBufs.m, addr)
		}
	}
}

// localBufAt returns the buffer pinned at addr (nil if none).
func localBufAt(addr uint64) []byte {
	localBufs.Lock()
	defer localBufs.Unlock()
	if lb := localBufs.m[addr]; lb != nil {
		return lb.buf
	}
	return nil
}

// claimFields splits a claim word.
func claimFields(c uint64) (front, back int, tag uint64) {
	return int(c & format.JobCountMask), int(c >> format.JobBackShift & format.JobCountMask), c >> format.JobTagShift
}

func jobTag(id uint64) uint64 { return id & format.JobTagMask }

// openJob starts receiving large message m (an RTS) into o.
func (e *engine) openJob(o *op, m *inMsg) {
	cp := *m
	o.lg = &large{msg: &cp}
	o.lg.accept = min(m.size, len(o.buf))
	p, err := e.peer(m.src)
	if err != nil {
		e.complete(o, Status{}, fmt.Errorf("comm: receive from world rank %d: %v: %w", m.src, err, ErrOther))
		return
	}
	if o.lg.accept == 0 {
		e.send(p, txItem{kind: format.PktFin, id: m.id})
		e.finishRecv(o, o.lg.msg)
		return
	}
	o.lg.n = (o.lg.accept + e.chunk - 1) / e.chunk
	if o.lg.n > format.P2PMaxChunks {
		e.send(p, txItem{kind: format.PktFin, id: m.id})
		e.complete(o, Status{}, fmt.Errorf("comm: receive on rank %d: a message of %d bytes: at most %d bytes move in one message: %w",
			o.c.Rank(), m.size, format.P2PMaxChunks*e.chunk, ErrCount))
		return
	}
	r := &e.rx[m.src]
	if r.job == nil {
		e.startJob(m.src, r, o)
		return
	}
	// The line is busy. Where the sender writes in place, the message
	// waits for the line, to move from both ends; else this rank reads it
	// whole now if it may.
	if !e.offers(r) && e.canRead(p, m.addr) {
		if err := e.readPeer(p, o.buf[:o.lg.accept], m.addr, 0); err != nil {
			e.send(p, txItem{kind: format.PktFin, id: m.id})
			e.complete(o, Status{}, e.readError(o, err))
			return
		}
		e.nRead += o.lg.n
		e.nWhole++
		e.send(p, txItem{kind: format.PktFin, id: m.id})
		e.finishRecv(o, o.lg.msg)
		return
	}
	r.queued = append(r.queued, o)
}

// startJob opens o's job on sender s's line and answers CTS, offering
// writes in place where single copy is on (o's buffer pinned until the
// job ends).
//
// The job's request is its number on the line (1, 2, ...), whose low bits
// are the claim word's tag: consecutive jobs on a line never share a tag,
// so a sender still working on a job the receiver has finished (it read
// the rest from the back) fails its next claim rather than take chunks of
// a later job for its message, and write them into the finished one's
// buffer. (Requests from the engine's counter, which every send also
// draws from, could share the tag with the job before.)
func (e *engine) startJob(s int, r *rxRing, o *op) {
	r.jobs++
	o.id = r.jobs
	o.lg.got = 0
	r.job = o
	atomic.StoreUint32(r.chunks, uint32(o.lg.n))
	atomic.StoreUint64(r.claim, jobTag(o.id)<<format.JobTagShift)
	atomic.StoreUint64(r.jobID, o.id)
	e.jobs = append(e.jobs, s)
	e.bulk.Store(true)
	var addr uint64
	if e.offers(r) {
		pinBuf(o, e.t.Local())
		o.lg.offer = true
		addr = uint64(raw.Addr(o.buf))
	}
	if p, err := e.peer(s); err == nil {
		e.send(p, txItem{kind: format.PktCTS, id: o.lg.msg.id, rid: o.id, accept: uint64(o.lg.accept), addr: addr})
	}
}

// cts is the sender's side of a job opening: move the message's front,
// in place at addr where the receiver offers it and this rank may write
// there, else through the ring.
func (e *engine) cts(s int, id, rid, accept, addr uint64) {
	o := e.waiting[id]
	if o == nil || o.recv || o.lg == nil || accept == 0 || accept > uint64(len(o.buf)) {
		e.corrupt(s, fmt.Sprintf("a CTS for no large message of this rank (request %d, %d bytes)", id, accept))
		return
	}
	o.lg.rid, o.lg.accept = rid, int(accept)
	e.ctsCame(o)
	o.lg.n = (o.lg.accept + e.chunk - 1) / e.chunk
	p, err := e.peer(s)
	if err != nil {
		return
	}
	o.lg.raddr = 0
	if addr != 0 && e.mayWrite(p) {
		o.lg.raddr = addr
	}
	e.markBusy(p)
	p.sending = o
}

// stream moves p's open send job's front: in place (writeFront), or by
// claiming chunks one at a time and sending each in a Data packet while
// the ring has room (first the chunks a failed write left over).
func (e *engine) stream(p *peer) {
	o := p.sending
	if o.lg.raddr != 0 {
		e.writeFront(p)
		return
	}
	for {
		k := cells(format.PktHeader + e.chunk)
		pos, ok := p.reserve(k)
		if !ok {
			return
		}
		var front int
		if o.lg.oweLo < o.lg.oweHi {
			front = o.lg.oweLo
			o.lg.oweLo++
		} else {
			c := atomic.LoadUint64(p.claim)
			f, back, tag := claimFields(c)
			if tag != jobTag(o.lg.rid) || f+back >= o.lg.n {
				p.sending = nil // the rest is the receiver's; Fin completes o
				return
			}
			if !atomic.CompareAndSwapUint64(p.claim, c, c+1) {
				continue
			}
			front = f
		}
		off := front * e.chunk
		n := min(e.chunk, o.lg.accept-off)
		b := p.ring[pos : pos+k]
		copy(b[format.PktHeader:], o.buf[off:off+n])
		le := binary.LittleEndian
		le.PutUint32(b[format.PktKind:], format.PktData) // and a zero digest
		le.PutUint64(b[format.PktOffset:], uint64(off))
		le.PutUint64(b[format.PktSize:], uint64(n))
		le.PutUint64(b[format.PktID:], o.lg.rid)
		p.publish(pos, cells(format.PktHeader+n))
	}
}

// writeFront claims batches of p's open send job from the front, writes
// each straight into the receiver's buffer and reports it in a Wrote
// packet, as long as the ring has room for the report. A write that fails
// turns writing off toward p; its batch goes in Data packets.
func (e *engine) writeFront(p *peer) {
	o := p.sending
	le := binary.LittleEndian
	for {
		k := cells(format.PktHeader)
		pos, ok := p.reserve(k) // room for the report before the claim
		if !ok {
			return
		}
		c := atomic.LoadUint64(p.claim)
		front, back, tag := claimFields(c)
		if tag != jobTag(o.lg.rid) || front+back >= o.lg.n {
			p.sending = nil // the rest is the receiver's; Fin completes o
			return
		}
		m := batch(o.lg.n - front - back)
		if !atomic.CompareAndSwapUint64(p.claim, c, c+uint64(m)) {
			continue
		}
		lo, hi := front*e.chunk, min((front+m)*e.chunk, o.lg.accept)
		if err := e.writePeer(p, o.lg.raddr, lo, o.buf[lo:hi]); err != nil {
			o.lg.raddr = 0
			o.lg.oweLo, o.lg.oweHi = front, front+m
			e.stream(p)
			return
		}
		b := p.ring[pos : pos+k]
		le.PutUint32(b[format.PktKind:], format.PktWrote)
		le.PutUint64(b[format.PktOffset:], uint64(lo))
		le.PutUint64(b[format.PktSize:], uint64(hi-lo))
		le.PutUint64(b[format.PktID:], o.lg.rid)
		p.publish(pos, k)
	}
}

// data copies a chunk of sender s's open job into its buffer.
func (e *engine) data(s int, r *rxRing, rid, off uint64, chunk []byte) {
	o := r.job
	n := uint64(len(chunk))
	// No sums of the packet's words: off near 2^64 would wrap past the
	// check and index the buffer out of range.
	if o == nil || o.id != rid || off%uint64(e.chunk) != 0 || off >= uint64(o.lg.accept) || n != min(uint64(e.chunk), uint64(o.lg.accept)-off) {
		e.corrupt(s, fmt.Sprintf("a chunk of %d bytes at %d for no open job (request %d)", n, off, rid))
		return
	}
	copy(o.buf[off:off+n], chunk)
	if o.lg.offer {
		r.noWrites = true // the sender cannot write here
	}
	e.nStaged++
	o.lg.got++
	if o.lg.got == o.lg.n {
		e.finishJob(s, r)
	}
}

// wrote counts the n bytes at off of sender s's open job that the sender
// wrote in place.
func (e *engine) wrote(s int, r *rxRing, rid, off, n uint64) {
	o := r.job
	ch := uint64(e.chunk)
	if o == nil || o.id != rid || !o.lg.offer || off%ch != 0 || n == 0 || off >= uint64(o.lg.accept) || n > uint64(o.lg.accept)-off ||
		(off+n != uint64(o.lg.accept) && n%ch != 0) || o.lg.got+int((n+ch-1)/ch) > o.lg.n {
		e.corrupt(s, fmt.Sprintf("a report of %d bytes written at %d for no open job (request %d)", n, off, rid))
		return
	}
	k := int((n + ch - 1) / ch)
	e.nWritten += k
	o.lg.got += k
	if o.lg.got == o.lg.n {
		e.finishJob(s, r)
	}
}

// readJobs reads the open jobs' chunks from the back where this rank may
// read the sender's memory: in batches until the job is claimed, draining
// the sender's ring in between (its chunks from the front).
func (e *engine) readJobs() {
	for i := 0; i < len(e.jobs); i++ {
		s := e.jobs[i]
		r := &e.rx[s]
		o := r.job
		p, err := e.peer(s)
		if err != nil || !e.canRead(p, o.lg.msg.addr) {
			continue
		}
		for r.job == o && e.broken == nil {
			c := atomic.LoadUint64(r.claim)
			front, back, _ := claimFields(c)
			k := batch(o.lg.n - front - back)
			if k <= 0 {
				break // the rest is the sender's, in flight
			}
			if !atomic.CompareAndSwapUint64(r.claim, c, c+uint64(k)<<format.JobBackShift) {
				continue
			}
			lo, hi := (o.lg.n-back-k)*e.chunk, min((o.lg.n-back)*e.chunk, o.lg.accept)
			if err := e.readPeer(p, o.buf[lo:hi], o.lg.msg.addr, lo); err != nil && o.err == nil {
				// The chunks are claimed: nobody else will bring them.
				o.err = e.readError(o, err)
			}
			e.nRead += k
			o.lg.got += k
			if o.lg.got == o.lg.n {
				e.finishJob(s, r)
				break
			}
			e.drain(s)
		}
		if r.job != o {
			i-- // e.jobs lost entry i
		}
	}
}

// finishJob closes sender s's job: the receive completes, the sender gets
// Fin, and the next queued receive opens its job.
func (e *engine) finishJob(s int, r *rxRing) {
	o := r.job
	r.job = nil
	atomic.StoreUint64(r.jobID, 0)
	for i, j := range e.jobs {
		if j == s {
			e.jobs = append(e.jobs[:i], e.jobs[i+1:]...)
			break
		}
	}
	e.setBulk()
	if p, err := e.peer(s); err == nil {
		e.send(p, txItem{kind: format.PktFin, id: o.lg.msg.id})
	}
	if o.err != nil {
		e.complete(o, Status{}, o.err)
	} else {
		e.finishRecv(o, o.lg.msg)
	}
	if len(r.queued) > 0 {
		next := r.queued[0]
		r.queued = r.queued[1:]
		e.startJob(s, r, next)
	}
}

// canRead reports whether this rank may read p's memory, at addr in a
// buffer of p's: single copy is on, and the first read from p's process
// (a byte at addr, tried once) worked.
func (e *engine) canRead(p *peer, addr uint64) bool {
	if !e.single || singleOff || p.noSingle {
		return false
	}
	if !p.probed {
		p.probed = true
		var b [1]byte
		return e.readPeer(p, b[:], addr, 0) == nil
	}
	return true
}

// readPeer copies len(dst) bytes at offset off of the buffer at addr in
// p's process into dst. A failure turns single copy off toward p.
func (e *engine) readPeer(p *peer, dst []byte, addr uint64, off int) error {
	if e.t.Local() {
		src := localBufAt(addr)
		if len(src) < off+len(dst) {
			return fmt.Errorf("no buffer of %d bytes at %#x", off+len(dst), addr)
		}
		copy(dst, src[off:])
		return nil
	}
	err := readRemote(int32(p.pid), dst, addr+uint64(off))
	if err != nil {
		p.noSingle = true
	}
	return err
}

func (e *engine) readError(o *op, err error) error {
	return fmt.Errorf("comm: receive on rank %d: reading the sender's buffer: %v: %w", o.c.Rank(), err, ErrOther)
}

// offers reports whether this rank's jobs on r's line offer the sender
// writes in place: single copy is on, and the sender has not answered an
// offer with Data packets (it cannot write here).
func (e *engine) offers(r *rxRing) bool {
	return e.single && !singleOff && !r.noWrites
}

// mayWrite reports whether this rank is to try writing p's memory: single
// copy is on, and no write toward p has failed. (There is no probe: the
// first batch written is the test, and a batch that fails goes in Data
// packets.)
func (e *engine) mayWrite(p *peer) bool {
	return e.single && !singleOff && !p.noWrite
}

// writePeer copies src to offset off of the buffer at addr in p's
// process. A failure turns writing off toward p.
func (e *engine) writePeer(p *peer, addr uint64, off int, src []byte) error {
	if e.t.Local() {
		dst := localBufAt(addr)
		if len(dst) < off+len(src) {
			p.noWrite = true
			return fmt.Errorf("no buffer of %d bytes at %#x", off+len(src), addr)
		}
		copy(dst[off:], src)
		return nil
	}
	err := writeRemote(int32(p.pid), addr+uint64(off), src)
	if err != nil {
		p.noWrite = true
	}
	return err
}

// pinSend pins a large send's buffer: another process reads it by address
// until the send completes.
func pinSend(o *op, local bool) {
	o.lg = new(large)
	pinBuf(o, local)
}

// pinBuf pins o's buffer, which another process reads or writes by
// address until o completes (unpinBuf).
func pinBuf(o *op, local bool) {
	o.lg.pin.Pin(&o.buf[0])
	o.lg.pinned = true
	if local {
		addLocalBuf(o.buf)
	}
}

// unpinBuf undoes pinBuf.
func unpinBuf(o *op) {
	if o.lg != nil && o.lg.pinned {
		dropLocalBuf(o.buf)
		o.lg.pin.Unpin()
		o.lg.pinned = false
	}
}
