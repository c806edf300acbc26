//go:build !mpi

package comm_test

import (
	"testing"
	"time"

	"github.com/shmrun/shmrun/comm"
)

// windowLen is the message-rate window's messages (bench/'s msgrate_8).
const windowLen = 64

// selfWindow is a one-rank world's communicator with a window's 8-byte
// send and receive slots and its request slices.
func selfWindow(b *testing.B) (c *comm.Comm, sbuf, rbuf []byte, rr, sr []*comm.Request) {
	cs, err := comm.NewLocalWorld(1)
	if err != nil {
		b.Fatal(err)
	}
	return cs[0], make([]byte, 8*windowLen), make([]byte, 8*windowLen),
		make([]*comm.Request, windowLen), make([]*comm.Request, windowLen)
}

// BenchmarkWindowSelf is the CPU cost of the message-rate window on one
// rank: 64 Irecvs from itself, 64 Isends of 8 bytes to itself, Waitall on
// both; the figure is per message, both sides' work together.
func BenchmarkWindowSelf(b *testing.B) {
	c, sbuf, rbuf, rr, sr := selfWindow(b)
	var err error
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += windowLen {
		for j := range windowLen {
			if rr[j], err = c.Irecv(rbuf[8*j:8*j+8], 0, 1); err != nil {
				b.Fatal(err)
			}
		}
		for j := range windowLen {
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
	c, sbuf, rbuf, rr, sr := selfWindow(b)
	var err error
	sts := make([]comm.Status, windowLen)
	for j := range windowLen {
		if rr[j], err = c.RecvInit(rbuf[8*j:8*j+8], 0, 1); err != nil {
			b.Fatal(err)
		}
		if sr[j], err = c.SendInit(sbuf[8*j:8*j+8], 0, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += windowLen {
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

// BenchmarkWindowSides times the message-rate window's phases apart, on
// one core, between two ranks of one process: the sender's 64 Isends and
// their Waitall (send-ns/msg), the receiver's 64 Irecvs (post-ns/msg)
// and their Waitall (wait-ns/msg). "arrived": the messages are in the
// ring before the receives are posted; "posted": the receives are posted
// first.
func BenchmarkWindowSides(b *testing.B) {
	for _, first := range []string{"arrived", "posted"} {
		b.Run(first, func(b *testing.B) {
			cs, err := comm.NewLocalWorld(2)
			if err != nil {
				b.Fatal(err)
			}
			sbuf, rbuf := make([]byte, 8*windowLen), make([]byte, 8*windowLen)
			rr, sr := make([]*comm.Request, windowLen), make([]*comm.Request, windowLen)
			sts := make([]comm.Status, windowLen)
			var tSend, tPost, tWait time.Duration
			send := func() {
				t0 := time.Now()
				for j := range windowLen {
					if sr[j], err = cs[0].Isend(sbuf[8*j:8*j+8], 1, 1); err != nil {
						b.Fatal(err)
					}
				}
				if err := comm.WaitallInto(sr, nil); err != nil {
					b.Fatal(err)
				}
				tSend += time.Since(t0)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += windowLen {
				if first == "arrived" {
					send()
				}
				t0 := time.Now()
				for j := range windowLen {
					if rr[j], err = cs[1].Irecv(rbuf[8*j:8*j+8], 0, 1); err != nil {
						b.Fatal(err)
					}
				}
				t1 := time.Now()
				tPost += t1.Sub(t0)
				if first == "posted" {
					send()
				}
				t1 = time.Now()
				if err := comm.WaitallInto(rr, sts); err != nil {
					b.Fatal(err)
				}
				tWait += time.Since(t1)
			}
			n := float64((b.N + windowLen - 1) / windowLen * windowLen)
			b.ReportMetric(float64(tSend.Nanoseconds())/n, "send-ns/msg")
			b.ReportMetric(float64(tPost.Nanoseconds())/n, "post-ns/msg")
			b.ReportMetric(float64(tWait.Nanoseconds())/n, "wait-ns/msg")
		})
	}
}
