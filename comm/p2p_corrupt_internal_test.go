//go:build !mpi

package comm

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/shmrun/shmrun/internal/format"
)

// stampPacket writes pkt at e's read position in sender s's ring with the
// stamp that comes next, as the sender would publish it.
func stampPacket(e *engine, s int, pkt []byte) {
	r := &e.rx[s]
	pos := r.st.Pos & uint64(len(r.ring)-1)
	copy(r.ring[pos:], pkt)
	want := r.st.Stamp + 1
	if want == 0 {
		want = 1
	}
	binary.LittleEndian.PutUint32(r.ring[pos:], want)
}

// progressOnce drains e's rings once, as a call that takes the lock does;
// a panic there ends the test with the engine unlocked again, so that it
// can still drop its world.
func progressOnce(t *testing.T, e *engine) {
	t.Helper()
	e.lock()
	defer e.release()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("progress panicked: %v", p)
		}
	}()
	e.progress()
}

// breakInbox makes rank 0's engine of cs find a packet of no kind in rank
// 1's ring, which breaks it (corrupt).
func breakInbox(t *testing.T, cs []*Comm) {
	t.Helper()
	e := cs[0].eng
	pkt := make([]byte, format.PktHeader)
	pkt[format.PktKind] = 99
	stampPacket(e, 1, pkt)
	progressOnce(t, e)
	if e.broken == nil {
		t.Fatal("the engine took a packet of kind 99")
	}
}

// TestCorruptDataOffset: a Data packet whose offset plus size wraps past
// 2^64 to inside the receive is corruption (an error on the receive), not
// a copy at an offset outside the buffer.
func TestCorruptDataOffset(t *testing.T) {
	SetSingleOff(true) // the chunks come through the ring
	defer SetSingleOff(false)
	cs, err := NewLocalWorld(2)
	if err != nil {
		t.Fatal(err)
	}
	e := cs[0].eng
	defer cs[1].eng.abandon()
	defer e.abandon()
	r, err := cs[0].Irecv(make([]byte, 1<<20), 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs[1].Isend(make([]byte, 1<<20), 0, 0); err != nil {
		t.Fatal(err)
	}
	progressOnce(t, e)
	job := e.rx[1].job
	if job == nil {
		t.Fatal("no receive job open on rank 1's line")
	}
	ch := uint64(e.chunk)
	off := -((^uint64(0)%ch + 1) % ch) // 2^64 - (2^64 mod ch): a multiple of ch
	pkt := make([]byte, format.PktHeader+int(ch))
	pkt[format.PktKind] = format.PktData
	binary.LittleEndian.PutUint64(pkt[format.PktOffset:], off)
	binary.LittleEndian.PutUint64(pkt[format.PktSize:], ch)
	binary.LittleEndian.PutUint64(pkt[format.PktID:], job.id)
	stampPacket(e, 1, pkt)
	progressOnce(t, e)
	if _, done, err := r.Test(); !done || !errors.Is(err, ErrOther) {
		t.Fatalf("the receive after a chunk at %#x: done %v, error %v; want done with ErrOther", off, done, err)
	}
}

// TestCorruptFailsEverything: once the engine is broken, a send still
// queued for ring room fails (it was in no other list), Probe, Iprobe,
// Mprobe and Improbe fail at once, and a message taken by Mprobe before
// (a large one, whose bytes would need the broken engine) fails its
// receive: nothing waits for ever.
func TestCorruptFailsEverything(t *testing.T) {
	cs, err := NewLocalWorld(2)
	if err != nil {
		t.Fatal(err)
	}
	defer cs[1].eng.abandon()
	defer cs[0].eng.abandon()
	// A large message from rank 1, taken by Mprobe.
	if _, err := cs[1].Isend(make([]byte, 1<<20), 0, 3); err != nil {
		t.Fatal(err)
	}
	msg, _, ok, err := cs[0].Improbe(1, 3)
	if err != nil || !ok {
		t.Fatalf("Improbe of the large message: %v, %v", ok, err)
	}
	// Sends from rank 0 to rank 1 until one waits for room in the ring.
	var queued *Request
	for i := 0; i < 1000 && queued == nil; i++ {
		r, err := cs[0].Isend(make([]byte, 8000), 1, 5)
		if err != nil {
			t.Fatal(err)
		}
		if _, done, _ := r.Test(); !done {
			queued = r
		}
	}
	if queued == nil {
		t.Fatal("no send waited for room in rank 1's ring")
	}
	breakInbox(t, cs)
	if _, done, err := queued.Test(); !done || !errors.Is(err, ErrOther) {
		t.Errorf("the queued send: done %v, error %v; want done with ErrOther", done, err)
	}
	if _, _, err := cs[0].Iprobe(AnySource, AnyTag); !errors.Is(err, ErrOther) {
		t.Errorf("Iprobe: %v, want ErrOther", err)
	}
	if _, _, _, err := cs[0].Improbe(1, AnyTag); !errors.Is(err, ErrOther) {
		t.Errorf("Improbe: %v, want ErrOther", err)
	}
	// The blocking forms, in a goroutine each: one that waited for ever
	// would hang the test rather than fail it.
	probes := map[string]func() error{
		"Probe":  func() error { _, err := cs[0].Probe(1, AnyTag); return err },
		"Mprobe": func() error { _, _, err := cs[0].Mprobe(1, AnyTag); return err },
	}
	for name, probe := range probes {
		done := make(chan error, 1)
		go func() { done <- probe() }()
		select {
		case err := <-done:
			if !errors.Is(err, ErrOther) {
				t.Errorf("%s: %v, want ErrOther", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s on a broken engine still waits after 10 s", name)
		}
	}
	r, err := msg.Irecv(make([]byte, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	if _, done, err := r.Test(); !done || !errors.Is(err, ErrOther) {
		t.Errorf("the receive of the message taken before: done %v, error %v; want done with ErrOther", done, err)
	}
}
