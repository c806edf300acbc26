package comm_test

import (
	"testing"

	"github.com/shmrun/shmrun/comm"
)

// BenchmarkWindowSelf is the CPU cost of the message-rate window on one
// rank: 64 Irecvs from itself, 64 Isends of 8 bytes to itself, Waitall on
// both; the figure is per message, both sides' work together.
func BenchmarkWindowSelf(b *testing.B) {
	const n = 64
	cs, err := comm.NewLocalWorld(1)
	if err != nil {
		b.Fatal(err)
	}
	c := cs[0]
	sbuf, rbuf := make([]byte, 8*n), make([]byte, 8*n)
	rr, sr := make([]*comm.Request, n), make([]*comm.Request, n)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += n {
		for j := range n {
			if rr[j], err = c.Irecv(rbuf[8*j:8*j+8], 0, 1); err != nil {
				b.Fatal(err)
			}
		}
		for j := range n {
			if sr[j], err = c.Isend(sbuf[8*j:8*j+8], 0, 1); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := comm.Waitall(sr); err != nil {
			b.Fatal(err)
		}
		if _, err := comm.Waitall(rr); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWindowSelfPersistent is BenchmarkWindowSelf with persistent
// requests made once, started by Startall and completed by WaitallInto
// each window: nothing allocated.
func BenchmarkWindowSelfPersistent(b *testing.B) {
	const n = 64
	cs, err := comm.NewLocalWorld(1)
	if err != nil {
		b.Fatal(err)
	}
	c := cs[0]
	sbuf, rbuf := make([]byte, 8*n), make([]byte, 8*n)
	rr, sr := make([]*comm.Request, n), make([]*comm.Request, n)
	sts := make([]comm.Status, n)
	for j := range n {
		if rr[j], err = c.RecvInit(rbuf[8*j:8*j+8], 0, 1); err != nil {
			b.Fatal(err)
		}
		if sr[j], err = c.SendInit(sbuf[8*j:8*j+8], 0, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += n {
		if err := comm.Startall(rr); err != nil {
			b.Fatal(err)
		}
		if err := comm.Startall(sr); err != nil {
			b.Fatal(err)
		}
		if err := comm.WaitallInto(sr, nil); err != nil {
			b.Fatal(err)
		}
		if err := comm.WaitallInto(rr, sts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSendRecvSelf is the CPU cost of a blocking Send and Recv of 8
// bytes on one rank, to itself: a ping-pong's software part.
func BenchmarkSendRecvSelf(b *testing.B) {
	cs, err := comm.NewLocalWorld(1)
	if err != nil {
		b.Fatal(err)
	}
	c := cs[0]
	sbuf, rbuf := make([]byte, 8), make([]byte, 8)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := c.Send(sbuf, 0, 1); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Recv(rbuf, 0, 1); err != nil {
			b.Fatal(err)
		}
	}
}
