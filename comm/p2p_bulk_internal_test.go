//go:build !mpi

package comm

import (
	"bytes"
	"testing"
)

// TestStaleSenderNextJob: a sender still inside its flush of a job that the
// receiver has finished meanwhile (it read the rest from the back) and
// replaced by the next job on the line must not claim chunks of that next
// job for its finished message: it would write them into the finished
// receive's buffer, or send them in Data packets that break the receiver.
// The receiver draws 65535 requests of other operations between the two
// jobs: with the jobs numbered from the engine's counter, the second job's
// claim tag was the first's (and the second receive failed here).
func TestStaleSenderNextJob(t *testing.T) {
	cs, err := NewLocalWorld(2)
	if err != nil {
		t.Fatal(err)
	}
	e0, e1 := cs[0].eng, cs[1].eng
	defer e1.abandon()
	defer e0.abandon()
	const size = 1 << 20
	bufs := [2][]byte{make([]byte, size), make([]byte, size)}
	var recvs [2]*Request
	if recvs[0], err = cs[0].Irecv(bufs[0], 1, 0); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := cs[1].Isend(bytes.Repeat([]byte{byte(0x11 * (i + 1))}, size), 0, i); err != nil {
			t.Fatal(err)
		}
	}
	e0.lock()
	e0.drain(1) // both RTS: the first opens a job, the second waits unexpected
	e0.release()
	first := e0.rx[1].job
	if first == nil || !first.lg.offer {
		t.Skip("no job offering writes in place opened (single copy off here)")
	}
	id1 := first.id // the op is recycled once the receive completes
	e1.lock()
	e1.drain(0) // the CTS: rank 1 now sends the first message's front
	e1.release()
	progressOnce(t, e0) // reads the whole first message from the back
	if _, done, err := recvs[0].Test(); !done || err != nil {
		t.Fatalf("the first receive: done %v, error %v", done, err)
	}
	clear(bufs[0]) // the program's again
	// Other operations' requests, then the receive that opens the second job.
	e0.sh.NextID = id1 + 1<<16 - 1
	if recvs[1], err = cs[0].Irecv(bufs[1], 1, 1); err != nil {
		t.Fatal(err)
	}
	e1.lock()
	e1.flush() // rank 1 was still in its flush of the first job
	e1.release()
	if i := bytes.IndexFunc(bufs[0], func(r rune) bool { return r != 0 }); i >= 0 {
		t.Fatalf("byte %d of the first receive's buffer was written after it completed", i)
	}
	for range 100 {
		progressOnce(t, e1)
		progressOnce(t, e0)
	}
	if _, done, err := recvs[1].Test(); !done || err != nil {
		t.Fatalf("the second receive: done %v, error %v", done, err)
	}
	if !bytes.Equal(bufs[1], bytes.Repeat([]byte{0x22}, size)) {
		t.Fatal("the second message arrived wrong")
	}
}
