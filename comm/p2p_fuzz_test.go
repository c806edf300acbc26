//go:build !mpi

package comm

import (
	"encoding/binary"
	"testing"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/shm"
)

// FuzzInboxHeader: checkInbox decodes an inbox another process made; any
// bytes give nil or an error, never a panic.
func FuzzInboxHeader(f *testing.F) {
	l := inboxOf(2)
	good := make([]byte, shm.PageSize)
	binary.LittleEndian.PutUint32(good[format.InboxRanks:], uint32(l.N))
	binary.LittleEndian.PutUint32(good[format.InboxRing:], uint32(l.Ring))
	if err := shm.WriteHeader(good, shm.Header{Version: shm.FormatVersion, Kind: shm.KindInbox, HeaderLen: format.InboxRing + 4, TotalSize: uint64(l.Total)}); err != nil {
		f.Fatal(err)
	}
	f.Add(good[:format.InboxRing+8])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		mem := make([]byte, shm.PageSize)
		copy(mem, b)
		_ = checkInbox(mem[:min(max(len(b), 1), len(mem))], l) // a short inbox, or all of it
		_ = checkInbox(mem, l)
	})
}

// FuzzRingPackets: whatever another rank writes into its ring of this
// rank's inbox, with valid stamps, draining it completes or fails the
// operations in progress and never panics or reads outside the ring.
func FuzzRingPackets(f *testing.F) {
	pkt := func(kind uint8, ctx uint32, tag int32, size, id uint64, payload []byte) []byte {
		b := make([]byte, format.PktHeader, format.PktHeader+len(payload))
		b[format.PktKind] = kind
		binary.LittleEndian.PutUint32(b[format.PktCtx:], ctx)
		binary.LittleEndian.PutUint32(b[format.PktTag:], uint32(tag))
		binary.LittleEndian.PutUint64(b[format.PktSize:], size)
		binary.LittleEndian.PutUint64(b[format.PktID:], id)
		return append(b, payload...)
	}
	f.Add(pkt(format.PktEager, 0, 3, 8, 0, []byte("12345678")), 0)
	f.Add(pkt(format.PktEager, 0, 3, 1<<40, 0, nil), 1)
	f.Add(pkt(format.PktRTS, 0, 3, 1<<20, 7, make([]byte, 8)), 2)
	f.Add(pkt(format.PktCTS, 0, 0, 0, 7, make([]byte, 16)), 3)
	f.Add(pkt(format.PktData, 0, 0, 64, 9, make([]byte, 64)), 4)
	f.Add(pkt(format.PktFin, 0, 0, 0, 12345, nil), 5)
	cts := make([]byte, 24)
	binary.LittleEndian.PutUint64(cts[8:], 10000)
	binary.LittleEndian.PutUint64(cts[16:], 0x7f0000001000) // an address no buffer has
	f.Add(pkt(format.PktCTS, 0, 0, 0, 1, cts), 8)
	rts := pkt(format.PktRTS, 0, 3, 1<<20, 7, make([]byte, 8))
	wrote := pkt(format.PktWrote, 0, 0, 1<<16, 1, nil)
	binary.LittleEndian.PutUint64(wrote[format.PktOffset:], 0)
	f.Add(append(append(rts, make([]byte, format.PktCell-len(rts))...), wrote...), 9)
	f.Add(pkt(99, 0, 0, 0, 0, nil), 6)
	typed := pkt(format.PktEager, 0, 3, 16, 0, make([]byte, 16))
	typed[format.PktSig], typed[format.PktSig+2] = 0x12, 0x80 // a mixed-type digest
	f.Add(typed, 7)
	f.Fuzz(func(t *testing.T, data []byte, at int) {
		cs, err := NewLocalWorld(2)
		if err != nil {
			t.Fatal(err)
		}
		e := cs[0].eng
		// A posted receive and a send in flight for the packets to meet.
		rbuf := make([]byte, 96)
		pair, err := dtype.Struct([]int{1, 1}, []int64{0, 8}, []*dtype.Type{dtype.Basic(atomics.Int32), dtype.Basic(atomics.Float64)})
		if err != nil || pair.Commit() != nil {
			t.Fatal(err)
		}
		r, err := cs[0].IrecvType(rbuf, 6, pair, 1, AnyTag) // digests and a scatter checked
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs[0].Isend(make([]byte, 10000), 1, 0); err != nil { // request 1: the seeds' CTS
			t.Fatal(err)
		}
		ring := e.rx[1].ring
		// Packets of the fuzzed bytes at cell boundaries, stamped in order.
		pos, stamp := (at&0xff)*format.PktCell%len(ring), uint32(0)
		e.rx[1].st.Pos, e.rx[1].st.Given = uint64(pos), uint64(pos)
		for len(data) >= format.PktHeader && pos+format.PktCell <= len(ring) {
			n := min(len(data), len(ring)-pos)
			copy(ring[pos:], data[:n])
			stamp++
			binary.LittleEndian.PutUint32(ring[pos:], stamp)
			k := int(cells(int(binary.LittleEndian.Uint64(data[format.PktSize:])&0xffff) + format.PktHeader))
			data = data[min(len(data), format.PktCell):]
			pos += max(k, format.PktCell)
		}
		e.lock()
		e.progress()
		e.release()
		if r.rv.isDone() && r.rv.err == nil && r.rv.count > len(rbuf) {
			t.Fatalf("a receive completed with %d bytes into %d", r.rv.count, len(rbuf))
		}
		// The world is dropped unfinished: a pinned buffer (the send's,
		// a receive job's) must not be collected while pinned (the
		// runtime would fail the process).
		e.abandon()
	})
}
