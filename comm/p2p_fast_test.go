//go:build !mpi

package comm_test

import (
	"errors"
	"testing"

	"github.com/shmrun/shmrun/comm"
)

// TestFastPathOrder drives the receive fast path's three cases between two
// ranks of one process: a message already in its ring taken at Irecv
// (complete at its start), a receive posted behind a packet it does not
// take (left in the ring, not set aside), and a later receive that takes
// that packet, after which the message behind it reaches the first
// receive: non-overtaking, and nothing copied to the unexpected queue.
func TestFastPathOrder(t *testing.T) {
	cs, err := comm.NewLocalWorld(2)
	if err != nil {
		t.Fatal(err)
	}
	s, r := cs[0], cs[1]
	for _, m := range []struct {
		data string
		tag  int
	}{{"first", 1}, {"second", 2}, {"third", 1}} {
		if err := s.Send([]byte(m.data), 1, m.tag); err != nil {
			t.Fatal(err)
		}
	}
	direct := comm.P2PDirect(r)
	b1 := make([]byte, 8)
	r1, err := r.Irecv(b1, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := comm.P2PDirect(r) - direct; got != 1 {
		t.Fatalf("Irecv of a message in its ring took %d straight from it, want 1", got)
	}
	st, ok, err := r1.Test()
	if !ok || err != nil || st.Source != 0 || st.Tag != 1 || st.Count != 5 || string(b1[:5]) != "first" {
		t.Fatalf("first receive: done %v, %v, status %+v, %q", ok, err, st, b1)
	}
	b2, b3 := make([]byte, 8), make([]byte, 8)
	r2, err := r.Irecv(b2, 0, 1) // "second" (tag 2) is next: r2 waits behind it
	if err != nil {
		t.Fatal(err)
	}
	if n := comm.P2PUnexpected(r); n != 0 {
		t.Fatalf("%d messages set aside by a receive that took none", n)
	}
	r3, err := r.Irecv(b3, comm.AnySource, 2)
	if err != nil {
		t.Fatal(err)
	}
	if n := comm.P2PUnexpected(r); n != 0 {
		t.Fatalf("%d messages set aside, want 0", n)
	}
	sts, err := comm.Waitall([]*comm.Request{r2, r3})
	if err != nil {
		t.Fatal(err)
	}
	if sts[0].Tag != 1 || sts[0].Count != 5 || string(b2[:5]) != "third" {
		t.Fatalf("second receive (tag 1): status %+v, %q, want \"third\"", sts[0], b2)
	}
	if sts[1].Source != 0 || sts[1].Tag != 2 || sts[1].Count != 6 || string(b3[:6]) != "second" {
		t.Fatalf("third receive (tag 2): status %+v, %q, want \"second\"", sts[1], b3)
	}
}

// TestFastPathFallback checks that what the fast paths leave to the
// general path still gets its answer there: a message longer than the
// receive's buffer (ErrTruncate with its real length), data of another
// type (ErrType), a bad rank or tag (named errors), and a typed pair
// that matches.
func TestFastPathFallback(t *testing.T) {
	cs, err := comm.NewLocalWorld(2)
	if err != nil {
		t.Fatal(err)
	}
	s, r := cs[0], cs[1]
	if _, err := s.Isend(make([]byte, 16), 1, 3); err != nil {
		t.Fatal(err)
	}
	rq, err := r.Irecv(make([]byte, 8), 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := rq.Wait(); !errors.Is(err, comm.ErrTruncate) || st.Count != 16 {
		t.Fatalf("truncated receive: %+v, %v; want Count 16 and ErrTruncate", st, err)
	}
	if _, err := comm.IsendT(s, []int32{1, 2}, 1, 4); err != nil {
		t.Fatal(err)
	}
	rq, err = comm.IrecvT(r, make([]float64, 2), 0, 4)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rq.Wait(); !errors.Is(err, comm.ErrType) {
		t.Fatalf("int32 data into a float64 receive: %v, want ErrType", err)
	}
	if _, err := comm.IsendT(s, []int32{7, 8, 9}, 1, 5); err != nil {
		t.Fatal(err)
	}
	got := make([]int32, 4)
	rq, err = comm.IrecvT(r, got, 0, 5)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := rq.Wait(); err != nil || st.Count != 3 || got[0] != 7 || got[2] != 9 {
		t.Fatalf("typed pair: %+v, %v, %v", st, err, got)
	}
	if _, err := s.Isend(nil, 2, 0); !errors.Is(err, comm.ErrRank) {
		t.Fatalf("Isend to rank 2 of 2: %v, want ErrRank", err)
	}
	if _, err := s.Isend(nil, 1, -5); !errors.Is(err, comm.ErrTag) {
		t.Fatalf("Isend with tag -5: %v, want ErrTag", err)
	}
	if _, err := r.Irecv(nil, -7, 0); !errors.Is(err, comm.ErrRank) {
		t.Fatalf("Irecv from rank -7: %v, want ErrRank", err)
	}
	if err := s.Send(nil, 1, comm.AnyTag); !errors.Is(err, comm.ErrTag) {
		t.Fatalf("Send with AnyTag: %v, want ErrTag", err)
	}
}

// TestRecvFastPath drives Recv's fast path (recvFast) and what it leaves
// to the general path: a message in its ring taken straight from it,
// with its status (RecvT's Count in elements); a Recv behind a posted
// receive, which must not overtake it (the engine is not idle: the fast
// path declines and the general path, which does not poll again, matches
// in order); and the errors only the general path names - a message
// longer than the buffer, data of another type, a bad rank or tag - and
// ProcNull's status.
func TestRecvFastPath(t *testing.T) {
	cs, err := comm.NewLocalWorld(2)
	if err != nil {
		t.Fatal(err)
	}
	s, r := cs[0], cs[1]
	if err := s.Send([]byte("direct"), 1, 7); err != nil {
		t.Fatal(err)
	}
	direct := comm.P2PDirect(r)
	b := make([]byte, 8)
	st, err := r.Recv(b, 0, comm.AnyTag)
	if err != nil || st.Source != 0 || st.Tag != 7 || st.Count != 6 || string(b[:6]) != "direct" {
		t.Fatalf("Recv of a message in its ring: %+v, %v, %q", st, err, b)
	}
	if got := comm.P2PDirect(r) - direct; got != 1 {
		t.Fatalf("Recv took %d messages straight from the ring, want 1", got)
	}
	if err := comm.SendT(s, []int64{4, 5, 6}, 1, 8); err != nil {
		t.Fatal(err)
	}
	ei := make([]int64, 5)
	if st, err := comm.RecvT(r, ei, 0, 8); err != nil || st.Count != 3 || ei[0] != 4 || ei[2] != 6 {
		t.Fatalf("RecvT: %+v, %v, %v", st, err, ei)
	}

	// Behind a posted receive of the same tag: the first message is the
	// posted receive's, the second the Recv's.
	first := make([]byte, 8)
	rq, err := r.Irecv(first, 0, 9)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"one", "two"} {
		if err := s.Send([]byte(m), 1, 9); err != nil {
			t.Fatal(err)
		}
	}
	if st, err := r.Recv(b, 0, 9); err != nil || st.Count != 3 || string(b[:3]) != "two" {
		t.Fatalf("Recv behind a posted receive: %+v, %v, %q, want \"two\"", st, err, b)
	}
	if st, err := rq.Wait(); err != nil || st.Count != 3 || string(first[:3]) != "one" {
		t.Fatalf("the posted receive: %+v, %v, %q, want \"one\"", st, err, first)
	}

	if err := s.Send(make([]byte, 16), 1, 3); err != nil {
		t.Fatal(err)
	}
	if st, err := r.Recv(make([]byte, 8), 0, 3); !errors.Is(err, comm.ErrTruncate) || st.Count != 16 {
		t.Fatalf("truncated Recv: %+v, %v; want Count 16 and ErrTruncate", st, err)
	}
	if err := comm.SendT(s, []int32{1, 2}, 1, 4); err != nil {
		t.Fatal(err)
	}
	if _, err := comm.RecvT(r, make([]float64, 2), 0, 4); !errors.Is(err, comm.ErrType) {
		t.Fatalf("int32 data into a float64 Recv: %v, want ErrType", err)
	}
	if _, err := r.Recv(nil, 2, 0); !errors.Is(err, comm.ErrRank) {
		t.Fatalf("Recv from rank 2 of 2: %v, want ErrRank", err)
	}
	if _, err := r.Recv(nil, 0, -3); !errors.Is(err, comm.ErrTag) {
		t.Fatalf("Recv with tag -3: %v, want ErrTag", err)
	}
	if st, err := r.Recv(nil, comm.ProcNull, 0); err != nil || st.Source != comm.ProcNull || st.Tag != comm.AnyTag {
		t.Fatalf("Recv from ProcNull: %+v, %v", st, err)
	}
	if n := comm.P2PUnexpected(r); n != 0 {
		t.Fatalf("%d messages left set aside", n)
	}
}
