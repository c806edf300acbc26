//go:build !mpi

package comm

import (
	"encoding/binary"
	"sync/atomic"
	"testing"

	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/typesig"
)

// skipRing puts rank 1's ring of rank 0's inbox at its last cell, with a
// Skip packet there; it returns rank 0's engine, the ring and rank 0.
func skipRing(t *testing.T) (*engine, *rxRing, *Comm) {
	t.Helper()
	cs, err := NewLocalWorld(2)
	if err != nil {
		t.Fatal(err)
	}
	e := cs[0].eng
	r := &e.rx[1]
	last := uint64(len(r.ring) - format.PktCell)
	r.st.Pos, r.st.Given, r.st.Stamp = last, last, 0
	atomic.StoreUint64(r.tail, last)
	r.ring[last+format.PktKind] = format.PktSkip
	binary.LittleEndian.PutUint32(r.ring[last:], 1)
	return e, r, cs[0]
}

// eagerPacket is an eager packet of payload from rank 1 to c, tag 5.
func eagerPacket(c *Comm, payload []byte) []byte {
	b := make([]byte, format.PktHeader)
	b[format.PktKind] = format.PktEager
	binary.LittleEndian.PutUint32(b[format.PktCtx:], c.p2p().ctx)
	binary.LittleEndian.PutUint32(b[format.PktTag:], 5)
	binary.LittleEndian.PutUint64(b[format.PktSize:], uint64(len(payload)))
	binary.LittleEndian.PutUint32(b[format.PktKind:], uint32(format.PktEager)|typesig.Any<<8)
	return append(b, payload...)
}

// The room of a Skip packet goes back to the sender whether a packet
// follows it or the ring is empty after it, on the direct receive (takeIn)
// and on the engine's drain: else a sender that wrapped could wait for
// room the receiver holds. The direct receive that takes a packet may
// hold less than a quarter of the ring back until it next finds the ring
// empty (so the sender always has room for the largest eager packet).
func TestSkipRoomGivenBack(t *testing.T) {
	check := func(t *testing.T, r *rxRing, wantPos uint64) {
		t.Helper()
		if r.st.Pos != wantPos || r.st.Given != r.st.Pos || atomic.LoadUint64(r.tail) != r.st.Pos {
			t.Fatalf("read position %d (want %d), given back %d, tail %d", r.st.Pos, wantPos, r.st.Given, atomic.LoadUint64(r.tail))
		}
	}
	t.Run("take, empty after", func(t *testing.T) {
		e, r, c := skipRing(t)
		o := &op{recv: true, c: c, ctx: c.p2p().ctx, peer: 1, tag: AnyTag, buf: make([]byte, 8), elem: 1, sig: typesig.Any}
		e.lock()
		res, _, _, _, _ := e.takeIn(o.peer, o.ctx, o.tag, o.buf, o.sig)
		e.release()
		if res != takeEmpty {
			t.Fatalf("takeIn returned %d, want takeEmpty", res)
		}
		check(t, r, uint64(len(r.ring)))
	})
	t.Run("take, a packet after", func(t *testing.T) {
		e, r, c := skipRing(t)
		pkt := eagerPacket(c, []byte("12345678"))
		copy(r.ring, pkt)
		binary.LittleEndian.PutUint32(r.ring, 2)
		buf := make([]byte, 8)
		o := &op{recv: true, c: c, ctx: c.p2p().ctx, peer: 1, tag: AnyTag, buf: buf, elem: 1, sig: typesig.Any}
		e.lock()
		res, _, _, tag, _ := e.takeIn(o.peer, o.ctx, o.tag, o.buf, o.sig)
		e.release()
		if res != takeDone || string(buf) != "12345678" || tag != 5 {
			t.Fatalf("takeIn returned %d, %q, tag %d", res, buf, tag)
		}
		want := uint64(len(r.ring)) + uint64(cells(len(pkt)))
		if held := r.st.Pos - atomic.LoadUint64(r.tail); r.st.Pos != want || held >= uint64(len(r.ring))/4 {
			t.Fatalf("read position %d (want %d), %d bytes held back", r.st.Pos, want, held)
		}
		e.lock()
		res, _, _, _, _ = e.takeIn(o.peer, o.ctx, o.tag, o.buf, o.sig)
		e.release()
		if res != takeEmpty {
			t.Fatalf("second takeIn returned %d, want takeEmpty", res)
		}
		check(t, r, want)
	})
	t.Run("drain, empty after", func(t *testing.T) {
		e, r, _ := skipRing(t)
		e.lock()
		e.drain(1)
		e.release()
		check(t, r, uint64(len(r.ring)))
	})
}
