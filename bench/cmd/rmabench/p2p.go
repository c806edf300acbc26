package main

import (
	"encoding/binary"
	"fmt"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
)

// The point-to-point rows (issue 15), the twins of bench/c/p2prows.h: the
// same messages, the same stamps and patterns, the same answers checked.
// Ranks pair as (r, r^1) and a rank without a partner idles; every row is
// timed from the first rank's start to the last rank's end (span kind) and
// reported per message. pingpong_SIZE is a round trip of blocking Send and
// Recv (two messages: the figure is half a round trip); bw_SIZE and
// msgrate_8 are a window of Isends from the even rank into Irecvs posted
// by the odd one, WaitallInto on both (MPI_Waitall into the statuses
// array the program keeps, as rmabench.c does), then a 0-byte ack
// (osu_bw); msgrate_8_persistent is msgrate_8 with persistent requests
// made once (SendInit, RecvInit), each window started by Startall:
// nothing allocated.

type p2pMethod int

const (
	p2pPingpong p2pMethod = iota
	p2pWindow
	p2pPersist // p2pWindow with persistent requests
)

type p2pRow struct {
	name   string
	method p2pMethod
	bytes  int // per message
}

const (
	p2pWindowLen = 64 // messages in flight per window (osu_bw's 64)
	p2pTagData   = 1
	p2pTagAck    = 2
)

var p2pRows = []p2pRow{
	{"pingpong_0", p2pPingpong, 0},
	{"pingpong_8", p2pPingpong, 8},
	{"pingpong_4k", p2pPingpong, 4096},
	{"pingpong_8k", p2pPingpong, 8192},
	{"pingpong_64k", p2pPingpong, 64 * kib},
	{"pingpong_1m", p2pPingpong, mib},
	{"pingpong_4m", p2pPingpong, 4 * mib},
	{"pingpong_16m", p2pPingpong, 16 * mib},
	{"bw_64k", p2pWindow, 64 * kib},
	{"bw_1m", p2pWindow, mib},
	{"msgrate_8", p2pWindow, 8},
	{"msgrate_8_persistent", p2pPersist, 8},
}

func init() { table = append(table, p2pMeas()...) }

func p2pMeas() []meas {
	var ms []meas
	for i, r := range p2pRows {
		body := p2pPingpongBody
		if r.method != p2pPingpong {
			body = p2pWindowBody
		}
		ms = append(ms, meas{name: r.name, kind: span, need2: true, arg: i, msgs: r.perOp(),
			setup: p2pSetup, body: body, teardown: p2pTeardown})
	}
	return ms
}

// perOp is the messages of one timed operation: a round trip or a window.
func (r *p2pRow) perOp() int {
	if r.method == p2pPingpong {
		return 2
	}
	return p2pWindowLen
}

// slots is the buffers per side: a slot per message when a window's
// messages fit in a page together, else one buffer sent p2pWindowLen
// times into one receive buffer, as osu_bw does.
func (r *p2pRow) slots() int {
	if r.method != p2pPingpong && r.bytes*p2pWindowLen <= 4096 {
		return p2pWindowLen
	}
	return 1
}

// stride is the bytes from one slot to the next.
func (r *p2pRow) stride() int { return (r.bytes + 7) &^ 7 }

// slot is slot i of a buffer.
func (r *p2pRow) slot(b []byte, i int) []byte {
	o := i * r.stride()
	return b[o : o+r.bytes]
}

// p2pStamp is the stamp of the message in slot i of operation seq of pair,
// sent by the even rank (dir 0) or the odd one (dir 1).
func p2pStamp(seq int64, pair, i, dir int) uint64 {
	return uint64(seq)<<24 | uint64(pair&0xffff)<<8 | uint64(i)<<1 | uint64(dir)
}

func putStamp(b []byte, v uint64) {
	if len(b) < 8 {
		return
	}
	binary.LittleEndian.PutUint64(b, v)
	binary.LittleEndian.PutUint64(b[len(b)-8:], v)
}

func stampOK(b []byte, v uint64) bool {
	return len(b) < 8 || binary.LittleEndian.Uint64(b) == v && binary.LittleEndian.Uint64(b[len(b)-8:]) == v
}

func p2pPattern(j, pair, i, dir int) byte {
	return byte(j*131 + j/251 + pair*7 + i*3 + dir*5 + 1)
}

func p2pFill(b []byte, pair, i, dir int) {
	for j := range b {
		b[j] = p2pPattern(j, pair, i, dir)
	}
}

func p2pPoison(b []byte, pair, i, dir int) {
	for j := range b {
		b[j] = ^p2pPattern(j, pair, i, dir)
	}
}

// p2pVerify checks a fully patterned message, saying where it is wrong.
func p2pVerify(c *ctx, m *meas, b []byte, pair, i, dir int) {
	for j, g := range b {
		if want := p2pPattern(j, pair, i, dir); g != want {
			fmt.Printf("INFO check %s WRONG on rank %d: slot %d byte %d of %d is %d, want %d\n", m.name, c.rank, i, j, len(b), g, want)
			c.wrong++
			return
		}
	}
}

// p2pCheck counts a wrong stamp, saying so once per row and rank.
func p2pCheck(c *ctx, m *meas, b []byte, v uint64) {
	if stampOK(b, v) {
		return
	}
	if c.wrong == 0 {
		fmt.Printf("INFO check %s WRONG on rank %d: stamp %#x ... %#x, want %#x\n", m.name, c.rank,
			binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[len(b)-8:]), v)
	}
	c.wrong++
}

// partner is this rank's partner, (r, r^1), or -1.
func partner(c *ctx) int {
	if q := c.rank ^ 1; q < c.size {
		return q
	}
	return -1
}

// prefault writes a byte of every page of b and returns b. A large make
// takes fresh pages from the system, which nothing has touched: untouched,
// a sender's buffer is the kernel's one zero page over and over, which a
// reader copies from its cache (a 1 MiB window of Isends measured 34 us a
// message so, 80 over real pages; the C programs do the same with
// benchutil.h's bench_prefault).
func prefault(b []byte) []byte {
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	return b
}

func p2pSetup(c *ctx, m *meas) error {
	r := &p2pRows[m.arg]
	if m.name != r.name {
		return fmt.Errorf("row %s is not the point-to-point row %s", m.name, r.name)
	}
	c.wrong = 0
	if need := max(r.stride()*r.slots(), 64); need > len(c.ps) {
		c.ps, c.pr = prefault(make([]byte, need)), prefault(make([]byte, need))
	}
	if c.preq == nil {
		c.preq, c.psts = make([]*comm.Request, p2pWindowLen), make([]comm.Status, p2pWindowLen)
	}
	if q := partner(c); r.method == p2pPersist && q >= 0 {
		c.pers = make([]*comm.Request, p2pWindowLen)
		for j := range c.pers {
			var err error
			if c.rank&1 == 0 {
				c.pers[j], err = c.c.SendInit(r.slot(c.ps, j%r.slots()), q, p2pTagData)
			} else {
				c.pers[j], err = c.c.RecvInit(r.slot(c.pr, j%r.slots()), q, p2pTagData)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func p2pPingpongBody(c *ctx, m *meas, k int64) error {
	r := &p2pRows[m.arg]
	q, pair := partner(c), c.rank/2
	if q < 0 {
		return nil
	}
	s, rb := c.ps[:r.bytes], c.pr[:r.bytes]
	for range k {
		c.pseq++
		seq := c.pseq
		if c.rank&1 == 0 {
			putStamp(s, p2pStamp(seq, pair, 0, 0))
			if err := c.c.Send(s, q, p2pTagData); err != nil {
				return err
			}
			if _, err := c.c.Recv(rb, q, p2pTagData); err != nil {
				return err
			}
			p2pCheck(c, m, rb, p2pStamp(seq, pair, 0, 1))
		} else {
			if _, err := c.c.Recv(rb, q, p2pTagData); err != nil {
				return err
			}
			p2pCheck(c, m, rb, p2pStamp(seq, pair, 0, 0))
			putStamp(s, p2pStamp(seq, pair, 0, 1))
			if err := c.c.Send(s, q, p2pTagData); err != nil {
				return err
			}
		}
	}
	return nil
}

// p2pSendWindow and p2pRecvWindow are one window of the even and the odd
// rank, without stamps; they return the receives' statuses.
func p2pSendWindow(c *ctx, r *p2pRow, q int) error {
	if r.method == p2pPersist {
		if err := comm.Startall(c.pers); err != nil {
			return err
		}
		if err := comm.WaitallInto(c.pers, nil); err != nil {
			return err
		}
		_, err := c.c.Recv(nil, q, p2pTagAck)
		return err
	}
	for j := range p2pWindowLen {
		req, err := c.c.Isend(r.slot(c.ps, j%r.slots()), q, p2pTagData)
		if err != nil {
			return err
		}
		c.preq[j] = req
	}
	if err := comm.WaitallInto(c.preq, c.psts); err != nil {
		return err
	}
	_, err := c.c.Recv(nil, q, p2pTagAck)
	return err
}

func p2pRecvWindow(c *ctx, r *p2pRow, q int) ([]comm.Status, error) {
	if r.method == p2pPersist {
		if err := comm.Startall(c.pers); err != nil {
			return nil, err
		}
		return c.psts, comm.WaitallInto(c.pers, c.psts)
	}
	for j := range p2pWindowLen {
		req, err := c.c.Irecv(r.slot(c.pr, j%r.slots()), q, p2pTagData)
		if err != nil {
			return nil, err
		}
		c.preq[j] = req
	}
	return c.psts, comm.WaitallInto(c.preq, c.psts)
}

func p2pWindowBody(c *ctx, m *meas, k int64) error {
	r := &p2pRows[m.arg]
	q, pair := partner(c), c.rank/2
	if q < 0 {
		return nil
	}
	for range k {
		c.pseq++
		seq := c.pseq
		if c.rank&1 == 0 {
			for j := range r.slots() {
				putStamp(r.slot(c.ps, j), p2pStamp(seq, pair, j, 0))
			}
			if err := p2pSendWindow(c, r, q); err != nil {
				return err
			}
			continue
		}
		if _, err := p2pRecvWindow(c, r, q); err != nil {
			return err
		}
		for j := range r.slots() {
			p2pCheck(c, m, r.slot(c.pr, j), p2pStamp(seq, pair, j, 0))
		}
		if err := c.c.Send(nil, q, p2pTagAck); err != nil {
			return err
		}
	}
	return nil
}

// p2pStatus counts a receive's status that does not describe the message.
func p2pStatus(c *ctx, m *meas, st comm.Status, q, bytes int) {
	if st.Source != q || st.Tag != p2pTagData || st.Count != bytes {
		fmt.Printf("INFO check %s WRONG on rank %d: status source %d tag %d count %d, want %d %d %d\n",
			m.name, c.rank, st.Source, st.Tag, st.Count, q, p2pTagData, bytes)
		c.wrong++
	}
}

// p2pTeardown makes one more operation of the row with full patterns into
// poisoned buffers, every byte and status checked; rank 0 says whether
// every rank got every answer of the row right.
func p2pTeardown(c *ctx, m *meas) error {
	r := &p2pRows[m.arg]
	q, pair, odd := partner(c), c.rank/2, c.rank&1
	switch {
	case q < 0:
	case r.method == p2pPingpong:
		s, rb := c.ps[:r.bytes], c.pr[:r.bytes]
		p2pFill(s, pair, 0, odd)
		p2pPoison(rb, pair, 0, 1-odd)
		var st comm.Status
		var err error
		if odd == 0 {
			if err = c.c.Send(s, q, p2pTagData); err == nil {
				st, err = c.c.Recv(rb, q, p2pTagData)
			}
		} else {
			if st, err = c.c.Recv(rb, q, p2pTagData); err == nil {
				err = c.c.Send(s, q, p2pTagData)
			}
		}
		if err != nil {
			return err
		}
		p2pStatus(c, m, st, q, r.bytes)
		p2pVerify(c, m, rb, pair, 0, 1-odd)
	case odd == 0:
		for j := range r.slots() {
			p2pFill(r.slot(c.ps, j), pair, j, 0)
		}
		if err := p2pSendWindow(c, r, q); err != nil {
			return err
		}
	default:
		for j := range r.slots() {
			p2pPoison(r.slot(c.pr, j), pair, j, 0)
		}
		sts, err := p2pRecvWindow(c, r, q)
		if err != nil {
			return err
		}
		for _, st := range sts {
			p2pStatus(c, m, st, q, r.bytes)
		}
		for j := range r.slots() {
			p2pVerify(c, m, r.slot(c.pr, j), pair, j, 0)
		}
		if err := c.c.Send(nil, q, p2pTagAck); err != nil {
			return err
		}
	}
	for _, pr := range c.pers {
		if err := pr.Free(); err != nil {
			return err
		}
	}
	c.pers = nil
	in, out := []int64{c.wrong}, []int64{0}
	if err := comm.Reduce(c.c, in, out, atomics.Sum, 0); err != nil {
		return err
	}
	if c.rank == 0 {
		verdict := "ok"
		if out[0] != 0 {
			verdict = "WRONG"
		}
		fmt.Printf("INFO check %s %s\n", m.name, verdict)
	}
	return nil
}
