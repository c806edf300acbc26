package comm_test

// Rank bodies that run under both backends: shmrun's (the default build)
// and the MPI backend (-tags mpi, started by the MPI's launcher). They use
// only the API both provide, and check results against a sequential
// reference computed in every rank.

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/ranktest"
)

func init() {
	ranktest.Register("be_comms", beComms)
	ranktest.Register("be_p2p", beP2P)
	ranktest.Register("be_coll", beColl)
	ranktest.Register("be_nb", beNonblocking)
	ranktest.Register("be_collv", beCollv)
	ranktest.Register("be_mprobe", beMprobe)
	ranktest.Register("be_typed", beTyped)
	ranktest.Register("be_tcoll", beTypedColl)
	ranktest.Register("be_hw", beHardware)
	ranktest.Register("be_signals", beSignals)
	ranktest.Register("be_userstack", beUserOpStack)
	ranktest.Register("be_dropped", beDropped)
	ranktest.Register("be_anyerr", beAnyErr)
	ranktest.Register("be_splittype_undefined", beSplitTypeUndefined)
	ranktest.Register("be_alltoallw", beAlltoallw)
	ranktest.Register("be_nbc", beNonblockingColl)
}

// TestBackends runs the bodies above at rank counts that include odd ones
// and more ranks than cores.
func TestBackends(t *testing.T) {
	ranktest.RunEach(t, []string{"be_comms", "be_p2p", "be_coll", "be_nb", "be_collv", "be_mprobe", "be_typed", "be_tcoll", "be_hw", "be_signals", "be_userstack", "be_dropped", "be_anyerr", "be_splittype_undefined", "be_alltoallw", "be_nbc", "be_isendrecv", "be_pcoll", "be_persist_free"}, []int{1, 2, 3, 5})
}

// beComms: Dup, Split, SplitType, Create, Compare and Free.
func beComms(c *comm.Comm) error {
	r, n := c.Rank(), c.Size()
	if err := ranktest.Want("group", fmt.Sprint(c.Group().Size(), c.Group().Rank()), fmt.Sprint(n, r)); err != nil {
		return err
	}
	d, err := c.Dup()
	if err != nil {
		return err
	}
	if err := ranktest.Want("Compare(dup)", comm.Compare(c, d), comm.Congruent); err != nil {
		return err
	}
	// Split by parity, ordered backwards.
	s, err := c.Split(r%2, -r)
	if err != nil {
		return err
	}
	size := (n + 1 - r%2) / 2
	if err := ranktest.Want("split size", s.Size(), size); err != nil {
		return err
	}
	if err := ranktest.Want("split rank", s.Rank(), size-1-r/2); err != nil {
		return err
	}
	// Undefined color: no communicator.
	u, err := c.Split(map[bool]int{true: comm.Undefined, false: 0}[r == 0], 0)
	if err != nil {
		return err
	}
	if (u == nil) != (r == 0) {
		return fmt.Errorf("Split with Undefined on rank %d gave %v", r, u)
	}
	sh, err := c.SplitType(comm.TypeShared, 0, nil)
	if err != nil {
		return err
	}
	total := []int64{0}
	if sh.Rank() == 0 {
		total[0] = int64(sh.Size())
	}
	if err := comm.AllreduceInPlace(c, total, atomics.Sum); err != nil {
		return err
	}
	if err := ranktest.Want("ranks over the nodes", total[0], n); err != nil {
		return err
	}
	// Create: the even ranks, in reverse order.
	var evens []int
	for q := n - 1 - (n-1)%2; q >= 0; q -= 2 {
		evens = append(evens, q)
	}
	g, err := c.Group().Incl(evens...)
	if err != nil {
		return err
	}
	e, err := c.Create(g)
	if err != nil {
		return err
	}
	if r%2 == 1 {
		if e != nil {
			return fmt.Errorf("Create gave odd rank %d a communicator", r)
		}
	} else {
		if err := ranktest.Want("created rank", e.Rank(), slices.Index(evens, r)); err != nil {
			return err
		}
		if err := e.Barrier(); err != nil {
			return err
		}
		if err := e.Free(); err != nil {
			return err
		}
	}
	// Create with disjoint groups (MPI 2.2): each rank passes the group
	// of its parity, in reverse; one communicator per group.
	var same []int
	for q := n - 1; q >= 0; q-- {
		if q%2 == r%2 {
			same = append(same, q)
		}
	}
	pg, err := c.Group().Incl(same...)
	if err != nil {
		return err
	}
	p, err := c.Create(pg)
	if err != nil {
		return err
	}
	if err := ranktest.Want("disjoint Create size, rank", fmt.Sprint(p.Size(), p.Rank()), fmt.Sprint(len(same), slices.Index(same, r))); err != nil {
		return err
	}
	psum := []int64{int64(r)}
	if err := comm.AllreduceInPlace(p, psum, atomics.Sum); err != nil {
		return err
	}
	want := int64(0)
	for _, q := range same {
		want += int64(q)
	}
	if err := ranktest.Want("Allreduce over a disjoint Create's communicator", psum[0], want); err != nil {
		return err
	}
	for _, x := range []*comm.Comm{d, s, sh, p} {
		if err := x.Free(); err != nil {
			return err
		}
	}
	if err := ranktest.WantErr("Barrier on a freed communicator", d.Barrier(), comm.ErrComm); err != nil {
		return err
	}
	if u != nil {
		if err := u.Free(); err != nil {
			return err
		}
	}
	fmt.Printf("rank %d ok\n", r)
	return nil
}

// beP2P: a ring of typed messages, AnySource, ProcNull, Sendrecv, Probe,
// truncation and bad arguments. The program is safe as MPI defines it: a
// blocking Send may wait for its receive (MPICH's does, to self), so even
// ranks send first and odd ones receive first, and one rank alone only
// uses Sendrecv.
func beP2P(c *comm.Comm) error {
	r, n := c.Rank(), c.Size()
	next, prev := (r+1)%n, (r+n-1)%n
	rounds := 20
	if n == 1 {
		rounds = 0
	}
	for round := range rounds {
		out := []int64{int64(r), int64(round)}
		in := make([]int64, 3)
		if r%2 == 0 {
			if err := comm.SendT(c, out, next, round); err != nil {
				return err
			}
		}
		st, err := comm.RecvT(c, in, prev, round)
		if err != nil {
			return err
		}
		if r%2 == 1 {
			if err := comm.SendT(c, out, next, round); err != nil {
				return err
			}
		}
		if err := ranktest.Want("ring status", fmt.Sprint(st.Source, st.Tag, st.Count), fmt.Sprint(prev, round, 2)); err != nil {
			return err
		}
		if err := ranktest.Want("ring data", in[:2], []int64{int64(prev), int64(round)}); err != nil {
			return err
		}
	}
	// Everyone sends to rank 0, which receives with AnySource in any order
	// but each sender's messages in order.
	const k = 5
	if r != 0 {
		for i := range k {
			if err := comm.SendT(c, []int32{int32(r), int32(i)}, 0, 7); err != nil {
				return err
			}
		}
	} else {
		seen := make([]int, n)
		for range (n - 1) * k {
			in := make([]int32, 2)
			st, err := comm.RecvT(c, in, comm.AnySource, 7)
			if err != nil {
				return err
			}
			if int(in[0]) != st.Source || int(in[1]) != seen[st.Source] || st.Tag != 7 {
				return fmt.Errorf("AnySource: got %v from %d tag %d, expected message %d", in, st.Source, st.Tag, seen[st.Source])
			}
			seen[st.Source]++
		}
	}
	// Sendrecv around the ring, and ProcNull.
	got := make([]float64, 1)
	st, err := comm.SendrecvT(c, []float64{float64(r) + 0.5}, next, 3, got, prev, 3)
	if err != nil {
		return err
	}
	if err := ranktest.Want("Sendrecv", fmt.Sprint(got[0], st.Source), fmt.Sprint(float64(prev)+0.5, prev)); err != nil {
		return err
	}
	if err := c.Send([]byte{1}, comm.ProcNull, 0); err != nil {
		return err
	}
	st, err = c.Recv(make([]byte, 4), comm.ProcNull, 0)
	if err != nil {
		return err
	}
	if err := ranktest.Want("ProcNull status", fmt.Sprint(st.Source, st.Tag, st.Count), fmt.Sprint(comm.ProcNull, comm.AnyTag, 0)); err != nil {
		return err
	}
	// Probe, then a receive too small: ErrTruncate, with the traffic after
	// it unaffected.
	if n > 1 && r%2 == 0 {
		if err := sendTwo(c, next); err != nil {
			return err
		}
	}
	if n > 1 {
		if err := recvTwo(c, prev); err != nil {
			return err
		}
	}
	if n > 1 && r%2 == 1 {
		if err := sendTwo(c, next); err != nil {
			return err
		}
	}
	if _, found, err := c.Iprobe(comm.AnySource, 11); err != nil || found {
		return fmt.Errorf("Iprobe with nothing sent: %v %v", found, err)
	}
	if err := ranktest.WantErr("Send to rank n", c.Send(nil, n, 0), comm.ErrRank); err != nil {
		return err
	}
	if err := ranktest.WantErr("Send with tag -5", c.Send(nil, next, -5), comm.ErrTag); err != nil {
		return err
	}
	// Send and receive buffers may not share memory (MPI 4.1 §2.3):
	// ErrBuffer, nothing sent; two halves of one array are fine.
	b := make([]byte, 8)
	_, err = c.Sendrecv(b[:6], next, 30, b[2:], prev, 30)
	if err := ranktest.WantErr("Sendrecv of overlapping buffers", err, comm.ErrBuffer); err != nil {
		return err
	}
	w := []int32{int32(r), 0}
	q, err := comm.IsendrecvT(c, w[:1], next, 31, w[1:], prev, 31)
	if err != nil {
		return err
	}
	if _, err := q.Wait(); err != nil || w[1] != int32(prev) {
		return fmt.Errorf("IsendrecvT between the halves of one slice: %v, got %d want %d", err, w[1], prev)
	}
	_, err = comm.IsendrecvT(c, w, next, 32, w[1:], prev, 32)
	if err := ranktest.WantErr("IsendrecvT of overlapping slices", err, comm.ErrBuffer); err != nil {
		return err
	}
	// A persistent receive from ProcNull completes, once a Start, with
	// ProcNull's status (MPI 4.1 §3.11), then is inactive (the empty one).
	pq, err := c.RecvInit(make([]byte, 4), comm.ProcNull, 33)
	if err != nil {
		return err
	}
	for range 2 {
		if err := pq.Start(); err != nil {
			return err
		}
		st, err := pq.Wait()
		if err != nil || st.Source != comm.ProcNull || st.Tag != comm.AnyTag || st.Count != 0 {
			return fmt.Errorf("a started RecvInit from ProcNull: %+v %v, want ProcNull's status", st, err)
		}
		if st, err := pq.Wait(); err != nil || st.Source != comm.AnySource {
			return fmt.Errorf("the same request, inactive: %+v %v, want the empty status", st, err)
		}
	}
	if err := pq.Free(); err != nil {
		return err
	}
	// A collective's overlapping buffers: ErrBuffer on every rank, both
	// backends (here every rank passes them).
	g := make([]int32, n+1)
	if err := ranktest.WantErr("Allgather of overlapping buffers", comm.Allgather(c, g[:1], g), comm.ErrBuffer); err != nil {
		return err
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	fmt.Printf("rank %d ok\n", r)
	return nil
}

func sendTwo(c *comm.Comm, to int) error {
	if err := c.Send([]byte("hello"), to, 9); err != nil {
		return err
	}
	return c.Send([]byte("after"), to, 10)
}

func recvTwo(c *comm.Comm, from int) error {
	st, err := c.Probe(from, 9)
	if err != nil {
		return err
	}
	if err := ranktest.Want("Probe", fmt.Sprint(st.Source, st.Tag, st.Count), fmt.Sprint(from, 9, 5)); err != nil {
		return err
	}
	small := make([]byte, 2)
	if _, err := c.Recv(small, from, 9); !errors.Is(err, comm.ErrTruncate) {
		return fmt.Errorf("short Recv: error %v, want ErrTruncate", err)
	}
	buf := make([]byte, 8)
	st, err = c.Recv(buf, from, 10)
	if err != nil {
		return err
	}
	return ranktest.Want("after the truncation", string(buf[:st.Count]), "after")
}

// mul2 multiplies 2x2 integer matrices stored flat: a non-commutative
// op's data.
func mul2(a, b []int64) [4]int64 {
	return [4]int64{a[0]*b[0] + a[1]*b[2], a[0]*b[1] + a[1]*b[3], a[2]*b[0] + a[3]*b[2], a[2]*b[1] + a[3]*b[3]}
}

func rankMat(q int) []int64 { return []int64{1, int64(q + 1), 0, 1 + int64(q%2)} }

// beColl: every collective of the common API against a sequential
// reference, in-place forms, a non-commutative user op, and bad arguments.
func beColl(c *comm.Comm) error {
	r, n := c.Rank(), c.Size()
	const m = 3
	contrib := func(q int) []int64 { return []int64{int64(q + 1), int64(10 * q), int64(-q)} }
	var sum [m]int64
	for q := range n {
		for i, v := range contrib(q) {
			sum[i] += v
		}
	}
	// Bcast from the last rank.
	b := make([]float32, 4)
	if r == n-1 {
		b = []float32{1.5, 2.5, 3.5, 4.5}
	}
	if err := comm.Bcast(c, b, n-1); err != nil {
		return err
	}
	if err := ranktest.Want("Bcast", b, []float32{1.5, 2.5, 3.5, 4.5}); err != nil {
		return err
	}
	out := make([]int64, m)
	if err := comm.Allreduce(c, contrib(r), out, atomics.Sum); err != nil {
		return err
	}
	if err := ranktest.Want("Allreduce", out, sum[:]); err != nil {
		return err
	}
	in := contrib(r)
	if err := comm.AllreduceInPlace(c, in, atomics.Max); err != nil {
		return err
	}
	if err := ranktest.Want("AllreduceInPlace Max", in, []int64{int64(n), int64(10 * (n - 1)), 0}); err != nil {
		return err
	}
	root := n / 2
	red := make([]int64, m)
	if err := comm.Reduce(c, contrib(r), red, atomics.Sum, root); err != nil {
		return err
	}
	if r == root {
		if err := ranktest.Want("Reduce", red, sum[:]); err != nil {
			return err
		}
	}
	rin := contrib(r)
	if err := comm.ReduceInPlace(c, rin, atomics.Sum, root); err != nil {
		return err
	}
	if r == root {
		if err := ranktest.Want("ReduceInPlace", rin, sum[:]); err != nil {
			return err
		}
	}
	// Gather and Scatter through root, Allgather and Alltoall.
	all := make([]int64, n*m)
	if err := comm.Gather(c, contrib(r), all, root); err != nil {
		return err
	}
	var ref []int64
	for q := range n {
		ref = append(ref, contrib(q)...)
	}
	if r == root {
		if err := ranktest.Want("Gather", all, ref); err != nil {
			return err
		}
	}
	part := make([]int64, m)
	if err := comm.Scatter(c, ref, part, root); err != nil {
		return err
	}
	if err := ranktest.Want("Scatter", part, contrib(r)); err != nil {
		return err
	}
	ag := make([]int64, n*m)
	copy(ag[r*m:], contrib(r))
	if err := comm.AllgatherInPlace(c, ag); err != nil {
		return err
	}
	if err := ranktest.Want("AllgatherInPlace", ag, ref); err != nil {
		return err
	}
	send := make([]int32, n)
	for j := range n {
		send[j] = int32(100*r + j)
	}
	recv := make([]int32, n)
	if err := comm.Alltoall(c, send, recv); err != nil {
		return err
	}
	for q := range n {
		if recv[q] != int32(100*q+r) {
			return fmt.Errorf("Alltoall = %v", recv)
		}
	}
	// Scan and Exscan.
	sc := make([]int64, m)
	if err := comm.Scan(c, contrib(r), sc, atomics.Sum); err != nil {
		return err
	}
	var pre [m]int64
	for q := range r {
		for i, v := range contrib(q) {
			pre[i] += v
		}
	}
	var incl [m]int64
	for i := range m {
		incl[i] = pre[i] + contrib(r)[i]
	}
	if err := ranktest.Want("Scan", sc, incl[:]); err != nil {
		return err
	}
	ex := make([]int64, m)
	if err := comm.Exscan(c, contrib(r), ex, atomics.Sum); err != nil {
		return err
	}
	if r > 0 {
		if err := ranktest.Want("Exscan", ex, pre[:]); err != nil {
			return err
		}
	}
	// ReduceScatterBlock: block q of every rank's contribution is q+rank.
	rs := make([]int64, 2*n)
	for q := range n {
		rs[2*q], rs[2*q+1] = int64(q+r), 1
	}
	blk := make([]int64, 2)
	if err := comm.ReduceScatterBlock(c, rs, blk, atomics.Sum); err != nil {
		return err
	}
	if err := ranktest.Want("ReduceScatterBlock", blk, []int64{int64(n*r + n*(n-1)/2), int64(n)}); err != nil {
		return err
	}
	// A non-commutative user op: 2x2 matrix products in rank order.
	op, err := comm.OpCreate(func(in, inout []int64) {
		for i := 0; i+4 <= len(in); i += 4 {
			p := mul2(in[i:i+4], inout[i:i+4])
			copy(inout[i:i+4], p[:])
		}
	}, false)
	if err != nil {
		return err
	}
	op, err = op.InUnits(4)
	if err != nil {
		return err
	}
	prod := []int64{1, 0, 0, 1}
	for q := range n {
		p := mul2(prod, rankMat(q))
		prod = p[:]
	}
	mat := make([]int64, 4)
	if err := comm.Allreduce(c, rankMat(r), mat, op); err != nil {
		return err
	}
	if err := ranktest.Want("user op Allreduce", mat, prod); err != nil {
		return err
	}
	// The same op as a prefix: rank r gets M0·M1·…·Mr.
	pre2 := []int64{1, 0, 0, 1}
	for q := range r + 1 {
		p := mul2(pre2, rankMat(q))
		pre2 = p[:]
	}
	mine := rankMat(r)
	if err := comm.ScanInPlace(c, mine, op); err != nil {
		return err
	}
	if err := ranktest.Want("user op ScanInPlace", mine, pre2); err != nil {
		return err
	}
	// Bad arguments: an error on the calling rank, nothing sent.
	if err := ranktest.WantErr("Bcast root n", comm.Bcast(c, b, n), comm.ErrRoot); err != nil {
		return err
	}
	if err := ranktest.WantErr("Allreduce Replace", comm.Allreduce(c, out, make([]int64, len(out)), atomics.Replace), comm.ErrOp); err != nil {
		return err
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	fmt.Printf("rank %d ok\n", r)
	return nil
}

// beNonblocking: Isend and Irecv completed by each of the Wait and Test
// calls, persistent requests, Cancel, Ibarrier, ProcNull and the zero
// request.
func beNonblocking(c *comm.Comm) error {
	r, n := c.Rank(), c.Size()
	next, prev := (r+1)%n, (r+n-1)%n
	// A ring both ways, every receive posted before the sends: safe at any
	// size and with one rank.
	const k = 4
	for round := range 6 {
		in := make([][]int64, 2*k)
		var reqs []*comm.Request
		for i := range 2 * k {
			in[i] = make([]int64, 2)
			from := prev
			if i >= k {
				from = next
			}
			q, err := comm.IrecvT(c, in[i], from, 100+i)
			if err != nil {
				return err
			}
			reqs = append(reqs, q)
		}
		for i := range 2 * k {
			to := next
			if i >= k {
				to = prev
			}
			q, err := comm.IsendT(c, []int64{int64(r), int64(round*10 + i)}, to, 100+i)
			if err != nil {
				return err
			}
			reqs = append(reqs, q)
		}
		sts := make([]comm.Status, len(reqs))
		switch round % 3 {
		case 0:
			if err := comm.WaitallInto(reqs, sts); err != nil {
				return err
			}
		case 1:
			for range reqs {
				i, st, err := comm.Waitany(reqs)
				if err != nil {
					return err
				}
				sts[i] = st
			}
			if i, _, err := comm.Waitany(reqs); err != nil || i != comm.Undefined {
				return fmt.Errorf("Waitany of nothing: %d %v", i, err)
			}
		case 2:
			for left := len(reqs); left > 0; {
				idx, got, err := comm.Testsome(reqs)
				if err != nil {
					return err
				}
				for j, i := range idx {
					sts[i] = got[j]
				}
				left -= len(idx)
			}
		}
		for i := range 2 * k {
			from := prev
			if i >= k {
				from = next
			}
			if err := ranktest.Want("nonblocking message", fmt.Sprint(in[i], sts[i].Source, sts[i].Tag, sts[i].Count),
				fmt.Sprint([]int64{int64(from), int64(round*10 + i)}, from, 100+i, 2)); err != nil {
				return err
			}
		}
		for i, q := range reqs {
			if q != nil {
				return fmt.Errorf("round %d: request %d left in the list", round, i)
			}
		}
	}
	// Persistent requests: a halo of 10 rounds with Startall/WaitallInto.
	sbuf, rbuf := make([]int32, 3), make([]int32, 3)
	rq, err := comm.RecvInitT(c, rbuf, prev, 7)
	if err != nil {
		return err
	}
	sq, err := comm.SendInitT(c, sbuf, next, 7)
	if err != nil {
		return err
	}
	pers := []*comm.Request{rq, sq}
	psts := make([]comm.Status, 2)
	for round := range 10 {
		for i := range sbuf {
			sbuf[i] = int32(1000*r + 10*round + i)
		}
		if err := comm.Startall(pers); err != nil {
			return err
		}
		if err := rq.Start(); !errors.Is(err, comm.ErrRequest) {
			return fmt.Errorf("Start of an active request: %v", err)
		}
		if err := comm.WaitallInto(pers, psts); err != nil {
			return err
		}
		if pers[0] != rq || pers[1] != sq {
			return fmt.Errorf("WaitallInto dropped a persistent request")
		}
		if rbuf[2] != int32(1000*prev+10*round+2) || psts[0].Source != prev || psts[0].Count != 3 {
			return fmt.Errorf("persistent round %d: %v %+v", round, rbuf, psts[0])
		}
		// Inactive now: Wait returns the empty status at once.
		if st, err := rq.Wait(); err != nil || st.Source != comm.AnySource || st.Tag != comm.AnyTag || st.Count != 0 {
			return fmt.Errorf("Wait of an inactive request: %+v %v", st, err)
		}
	}
	for _, q := range pers {
		if err := q.Free(); err != nil {
			return err
		}
	}
	if err := rq.Start(); !errors.Is(err, comm.ErrRequest) {
		return fmt.Errorf("Start of a freed request: %v", err)
	}
	// Startall stops at the first request that may not start (a freed
	// one, index 3): those before it are started (a message to itself,
	// completed below), those after it not.
	self := make([]int32, 3)
	srq, err := comm.RecvInitT(c, self, r, 8)
	if err != nil {
		return err
	}
	ssq, err := comm.SendInitT(c, sbuf, r, 8)
	if err != nil {
		return err
	}
	after, err := comm.RecvInitT(c, self, r, 9)
	if err != nil {
		return err
	}
	if err := comm.Startall([]*comm.Request{srq, nil, ssq, rq, after}); !errors.Is(err, comm.ErrRequest) || !strings.Contains(err.Error(), "request 3") {
		return fmt.Errorf("Startall with a freed request at index 3: %v", err)
	}
	if _, err := comm.Waitall([]*comm.Request{srq, ssq}); err != nil {
		return err
	}
	if self[2] != sbuf[2] {
		return fmt.Errorf("Startall's started requests moved %v, want %v", self, sbuf)
	}
	if st, done, err := after.Test(); err != nil || !done || st.Count != 0 || st.Source != comm.AnySource {
		return fmt.Errorf("the request after the failed one: %+v %v %v (not started: done, the empty status)", st, done, err)
	}
	for _, q := range []*comm.Request{srq, ssq, after} {
		if err := q.Free(); err != nil {
			return err
		}
	}
	// A receive too small (ErrTruncate), and messages of 4 KiB, past the
	// size the MPI backend moves through C memory.
	small := make([]byte, 2)
	tq, err := c.Irecv(small, prev, 55)
	if err != nil {
		return err
	}
	big := make([]byte, 4096)
	bq, err := c.Irecv(big, prev, 56)
	if err != nil {
		return err
	}
	out := make([]byte, 4096)
	for i := range out {
		out[i] = byte(r + i)
	}
	s1, err := c.Isend([]byte("hello"), next, 55)
	if err != nil {
		return err
	}
	s2, err := c.Isend(out, next, 56)
	if err != nil {
		return err
	}
	if _, err := tq.Wait(); !errors.Is(err, comm.ErrTruncate) {
		return fmt.Errorf("Irecv too small: %v", err)
	}
	if _, err := comm.Waitall([]*comm.Request{bq, s1, s2}); err != nil {
		return err
	}
	for i, b := range big {
		if b != byte(prev+i) {
			return fmt.Errorf("4 KiB message: byte %d = %d", i, b)
		}
	}
	// Cancel of a receive nothing will match.
	q, err := c.Irecv(make([]byte, 8), comm.AnySource, 999)
	if err != nil {
		return err
	}
	if err := q.Cancel(); err != nil {
		return err
	}
	st, err := q.Wait()
	if err != nil || !st.Cancelled || st.Source != comm.AnySource || st.Count != 0 {
		return fmt.Errorf("cancelled receive: %+v %v (want Cancelled, no rank, count 0)", st, err)
	}
	// ProcNull and the zero request are complete at once.
	q, err = c.Irecv(make([]byte, 8), comm.ProcNull, 0)
	if err != nil {
		return err
	}
	if st, done, err := q.Test(); err != nil || !done || st.Source != comm.ProcNull {
		return fmt.Errorf("ProcNull receive: %+v %v %v", st, done, err)
	}
	var zero comm.Request
	if st, err := zero.Wait(); err != nil || st != (comm.Status{Source: comm.AnySource, Tag: comm.AnyTag}) {
		return fmt.Errorf("zero request: %+v %v", st, err)
	}
	if _, err := (*comm.Request)(nil).Wait(); !errors.Is(err, comm.ErrArg) {
		return fmt.Errorf("Wait of nil: %v", err)
	}
	// Ibarrier, completed by Test in a loop.
	b, err := c.Ibarrier()
	if err != nil {
		return err
	}
	for {
		_, done, err := b.Test()
		if err != nil {
			return err
		}
		if done {
			break
		}
	}
	// Two Ibarriers are a new communicator's first collective calls, and
	// rank 0 sends to every other rank between them and its Wait, which
	// the others receive before their own Ibarriers: Ibarrier waits for
	// nobody (MPI 4.1 §6.12), not even to set the communicator up.
	d, err := c.Dup()
	if err != nil {
		return err
	}
	var bs [2]*comm.Request
	if r != 0 {
		got := []int64{0}
		if _, err := comm.RecvT(d, got, 0, 7); err != nil || got[0] != 42 {
			return fmt.Errorf("the message sent between Ibarrier and Wait: %v %v", got, err)
		}
	}
	for i := range bs {
		if bs[i], err = d.Ibarrier(); err != nil {
			return err
		}
	}
	if r == 0 {
		for q := 1; q < n; q++ {
			if err := comm.SendT(d, []int64{42}, q, 7); err != nil {
				return err
			}
		}
	}
	if _, err := comm.Waitall(bs[:]); err != nil {
		return fmt.Errorf("the first Ibarriers of a communicator: %v", err)
	}
	if err := d.Free(); err != nil {
		return err
	}
	// A first Ibarrier pending at the communicator's Free completes
	// normally (MPI 4.1 §7.4.3). Not over an MPI: Open MPI 4.1's MPI_Wait
	// of it crashes (SIGSEGV in ompi's request).
	if underMPI {
		fmt.Printf("rank %d ok\n", r)
		return nil
	}
	if d, err = c.Dup(); err != nil {
		return err
	}
	if bs[0], err = d.Ibarrier(); err != nil {
		return err
	}
	if err := d.Free(); err != nil {
		return err
	}
	if _, err := bs[0].Wait(); err != nil {
		return fmt.Errorf("an Ibarrier pending at Free: %v", err)
	}
	fmt.Printf("rank %d ok\n", r)
	return nil
}

// beCollv: the v collectives with blocks of different sizes and gaps
// between them, in-place forms, and SendrecvReplace around the ring.
func beCollv(c *comm.Comm) error {
	r, n := c.Rank(), c.Size()
	// Rank q contributes q+1 elements; blocks sit one element apart.
	counts, displs := make([]int, n), make([]int, n)
	at := 0
	for q := range n {
		counts[q], displs[q] = q+1, at
		at += q + 2
	}
	block := func(q int) []int64 {
		b := make([]int64, q+1)
		for i := range b {
			b[i] = int64(100*q + i)
		}
		return b
	}
	full := make([]int64, at)
	for q := range n {
		copy(full[displs[q]:], block(q))
	}
	root := n - 1
	got := make([]int64, at)
	if err := comm.Gatherv(c, block(r), got, counts, displs, root); err != nil {
		return err
	}
	if r == root {
		if err := ranktest.Want("Gatherv", got, full); err != nil {
			return err
		}
	}
	mine := make([]int64, r+1)
	if err := comm.Scatterv(c, full, counts, displs, mine, 0); err != nil {
		return err
	}
	if err := ranktest.Want("Scatterv", mine, block(r)); err != nil {
		return err
	}
	all := make([]int64, at)
	if err := comm.Allgatherv(c, block(r), all, counts, displs); err != nil {
		return err
	}
	if err := ranktest.Want("Allgatherv", all, full); err != nil {
		return err
	}
	inplace := make([]int64, at)
	copy(inplace[displs[r]:], block(r))
	if err := comm.AllgathervInPlace(c, inplace, counts, displs); err != nil {
		return err
	}
	if err := ranktest.Want("AllgathervInPlace", inplace, full); err != nil {
		return err
	}
	// An empty block places nothing: the last rank's, far past the buffer
	// (and below it for the second to last when there is one), is no
	// error (MPI 4.1, 6.5), in place too.
	zc, zd := slices.Clone(counts), slices.Clone(displs)
	zc[n-1], zd[n-1] = 0, 1<<20
	if n > 1 {
		zc[n-2], zd[n-2] = 0, -5
	}
	zfull := make([]int64, at)
	for q := range n {
		copy(zfull[displs[q]:], block(q)[:zc[q]])
	}
	zall := make([]int64, at)
	if err := comm.Allgatherv(c, block(r)[:zc[r]], zall, zc, zd); err != nil {
		return err
	}
	if err := ranktest.Want("Allgatherv with empty blocks far away", zall, zfull); err != nil {
		return err
	}
	zin := make([]int64, at)
	copy(zin[displs[r]:], block(r)[:zc[r]])
	if err := comm.AllgathervInPlace(c, zin, zc, zd); err != nil {
		return err
	}
	if err := ranktest.Want("AllgathervInPlace with empty blocks far away", zin, zfull); err != nil {
		return err
	}
	zgot := make([]int64, at)
	if err := comm.Gatherv(c, block(r)[:zc[r]], zgot, zc, zd, 0); err != nil {
		return err
	}
	if r == 0 {
		if err := ranktest.Want("Gatherv with empty blocks far away", zgot, zfull); err != nil {
			return err
		}
	}
	zmine := make([]int64, zc[r])
	if err := comm.Scatterv(c, full, zc, zd, zmine, 0); err != nil {
		return err
	}
	if err := ranktest.Want("Scatterv with empty blocks far away", zmine, block(r)[:zc[r]]); err != nil {
		return err
	}
	// Alltoallv: rank r sends j+1 elements to rank j, 1000r+10j+i.
	sc, sd, rc, rd := make([]int, n), make([]int, n), make([]int, n), make([]int, n)
	sn, rn := 0, 0
	for j := range n {
		sc[j], sd[j] = j+1, sn
		sn += j + 1
		rc[j], rd[j] = r+1, rn
		rn += r + 1
	}
	send := make([]int32, sn)
	for j := range n {
		for i := range j + 1 {
			send[sd[j]+i] = int32(1000*r + 10*j + i)
		}
	}
	recv := make([]int32, rn)
	if err := comm.Alltoallv(c, send, sc, sd, recv, rc, rd); err != nil {
		return err
	}
	for q := range n {
		for i := range r + 1 {
			if recv[rd[q]+i] != int32(1000*q+10*r+i) {
				return fmt.Errorf("Alltoallv: %v", recv)
			}
		}
	}
	// SendrecvReplace around the ring.
	buf := []byte{byte(r), byte(r + 1)}
	st, err := c.SendrecvReplace(buf, (r+1)%n, 4, (r+n-1)%n, 4)
	if err != nil {
		return err
	}
	prev := (r + n - 1) % n
	if err := ranktest.Want("SendrecvReplace", fmt.Sprint(buf, st.Source, st.Count), fmt.Sprint([]byte{byte(prev), byte(prev + 1)}, prev, 2)); err != nil {
		return err
	}
	if err := ranktest.WantErr("Gatherv with short counts", comm.Allgatherv(c, block(r), all, counts[:n-1], displs), comm.ErrCount); err != nil {
		return err
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	fmt.Printf("rank %d ok\n", r)
	return nil
}

// beMprobe: messages taken by Mprobe and Improbe and received by Recv,
// Irecv and MrecvT; a message is received once; ProcNull.
func beMprobe(c *comm.Comm) error {
	r, n := c.Rank(), c.Size()
	next, prev := (r+1)%n, (r+n-1)%n
	var sends []*comm.Request
	for tag := 1; tag <= 3; tag++ {
		q, err := comm.IsendT(c, []int64{int64(100*r + tag)}, next, tag)
		if err != nil {
			return err
		}
		sends = append(sends, q)
	}
	// Take tag 3 first, by Mprobe with AnySource; then tag 1 by Improbe.
	m3, st, err := c.Mprobe(comm.AnySource, 3)
	if err != nil {
		return err
	}
	if err := ranktest.Want("Mprobe status", fmt.Sprint(st.Source, st.Tag, st.Count), fmt.Sprint(prev, 3, 8)); err != nil {
		return err
	}
	var m1 *comm.Message
	for {
		m, _, found, err := c.Improbe(prev, 1)
		if err != nil {
			return err
		}
		if found {
			m1 = m
			break
		}
	}
	got := make([]int64, 1)
	if _, err := comm.MrecvT(m3, got); err != nil {
		return err
	}
	if err := ranktest.Want("tag 3", got[0], 100*prev+3); err != nil {
		return err
	}
	if _, err := m3.Recv(make([]byte, 8)); !errors.Is(err, comm.ErrArg) {
		return fmt.Errorf("second Recv of a message: %v", err)
	}
	buf := make([]byte, 8)
	q, err := m1.Irecv(buf)
	if err != nil {
		return err
	}
	if _, err := q.Wait(); err != nil {
		return err
	}
	if err := ranktest.Want("tag 1", buf[0], byte(100*prev+1)); err != nil {
		return err
	}
	// Tag 2 is left for a plain receive.
	if _, err := comm.RecvT(c, got, prev, 2); err != nil {
		return err
	}
	if err := ranktest.Want("tag 2", got[0], 100*prev+2); err != nil {
		return err
	}
	if _, err := comm.Waitall(sends); err != nil {
		return err
	}
	pm, st, err := c.Mprobe(comm.ProcNull, 0)
	if err != nil || st.Source != comm.ProcNull {
		return fmt.Errorf("Mprobe of ProcNull: %+v %v", st, err)
	}
	if st, err := pm.Recv(nil); err != nil || st.Source != comm.ProcNull {
		return fmt.Errorf("Recv of ProcNull's message: %+v %v", st, err)
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	fmt.Printf("rank %d ok\n", r)
	return nil
}

// beTyped: a column of a 4x4 int32 matrix (dtype.Vector) sent and
// received by every typed point-to-point call, landing in another
// column; statuses counted in instances and elements.
func beTyped(c *comm.Comm) error {
	r, n := c.Rank(), c.Size()
	next, prev := (r+1)%n, (r+n-1)%n
	i32 := dtype.Basic(atomics.Int32)
	col, err := dtype.Vector(4, 1, 4, i32)
	if err != nil {
		return err
	}
	if err := col.Commit(); err != nil {
		return err
	}
	matrix := func(v int32) []int32 {
		m := make([]int32, 16)
		for i := range m {
			m[i] = v*100 + int32(i)
		}
		return m
	}
	// column k of m as bytes from element k on
	at := func(m []int32, k int) []byte { return i32bytes(m)[4*k:] }
	check := func(what string, got []int32, k int, from int) error {
		for i := range 4 {
			if got[4*i+k] != int32(from)*100+int32(4*i+1) {
				return fmt.Errorf("%s: column %d = %v", what, k, got)
			}
		}
		return nil
	}
	src := matrix(int32(r))
	// Blocking, column 1 into column 2; even ranks send first.
	dst := make([]int32, 16)
	if n > 1 && r%2 == 0 {
		if err := c.SendType(at(src, 1), 1, col, next, 1); err != nil {
			return err
		}
	}
	if n > 1 {
		st, err := c.RecvType(at(dst, 2), 1, col, prev, 1)
		if err != nil {
			return err
		}
		if err := check("RecvType", dst, 2, prev); err != nil {
			return err
		}
		if k, _ := comm.GetCountType(st, col); k != 1 || st.Count != 1 {
			return fmt.Errorf("RecvType status: count %d, GetCountType %d", st.Count, k)
		}
		if e, _ := comm.GetElements(st, col); e != 4 {
			return fmt.Errorf("GetElements = %d", e)
		}
	}
	if n > 1 && r%2 == 1 {
		if err := c.SendType(at(src, 1), 1, col, next, 1); err != nil {
			return err
		}
	}
	// Nonblocking, column 1 into column 3.
	dst = make([]int32, 16)
	rq, err := c.IrecvType(at(dst, 3), 1, col, prev, 2)
	if err != nil {
		return err
	}
	sq, err := c.IsendType(at(src, 1), 1, col, next, 2)
	if err != nil {
		return err
	}
	sts, err := comm.Waitall([]*comm.Request{rq, sq})
	if err != nil {
		return err
	}
	if err := check("IrecvType", dst, 3, prev); err != nil {
		return err
	}
	if sts[0].Count != 1 {
		return fmt.Errorf("IrecvType count %d", sts[0].Count)
	}
	// Sendrecv, column 1 into column 0.
	dst = make([]int32, 16)
	if _, err := c.SendrecvType(at(src, 1), 1, col, next, 3, at(dst, 0), 1, col, prev, 3); err != nil {
		return err
	}
	if err := check("SendrecvType", dst, 0, prev); err != nil {
		return err
	}
	// Persistent: three rounds; the send packs the current contents.
	dst = make([]int32, 16)
	prq, err := c.RecvInitType(at(dst, 2), 1, col, prev, 4)
	if err != nil {
		return err
	}
	psq, err := c.SendInitType(at(src, 1), 1, col, next, 4)
	if err != nil {
		return err
	}
	for round := range 3 {
		for i := range src {
			src[i] = int32(r)*100 + int32(i) + int32(1000*round)
		}
		if err := comm.Startall([]*comm.Request{prq, psq}); err != nil {
			return err
		}
		if _, err := comm.Waitall([]*comm.Request{prq, psq}); err != nil {
			return err
		}
		for i := range 4 {
			if dst[4*i+2] != int32(prev)*100+int32(4*i+1)+int32(1000*round) {
				return fmt.Errorf("persistent round %d: %v", round, dst)
			}
		}
	}
	if err := prq.Free(); err != nil {
		return err
	}
	if err := psq.Free(); err != nil {
		return err
	}
	if err := bePairs(c, next, prev); err != nil {
		return err
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	fmt.Printf("rank %d ok\n", r)
	return nil
}

// bePairs: the pair types travel as MPI defines them (MPI 4.1 §6.9.4), a
// value and an int without the padding, in the generic and the typed
// forms alike: SendT of DoubleInt into a struct of a float64 and an int32
// and into dtype.Basic(DoubleIntT), the basic type into RecvT, 2 TwoInt
// into 4 int32, FloatInt by Irecv and ShortInt by persistent requests.
func bePairs(c *comm.Comm, next, prev int) error {
	r := c.Rank()
	f64, i32 := dtype.Basic(atomics.Float64), dtype.Basic(atomics.Int32)
	st16, err := dtype.Struct([]int{1, 1}, []int64{0, 8}, []*dtype.Type{f64, i32})
	if err != nil {
		return err
	}
	if err := st16.Commit(); err != nil {
		return err
	}
	di := func(q, i int) atomics.DoubleInt {
		return atomics.DoubleInt{V: float64(q) + float64(i)/4, I: int32(10*q + i)}
	}
	exchange := func(what string, send func() (*comm.Request, error), recv func() (comm.Status, error), check func(comm.Status) error) error {
		sq, err := send()
		if err != nil {
			return fmt.Errorf("%s: send: %w", what, err)
		}
		st, err := recv()
		if err != nil {
			return fmt.Errorf("%s: receive: %w", what, err)
		}
		if _, err := sq.Wait(); err != nil {
			return fmt.Errorf("%s: send's wait: %w", what, err)
		}
		return check(st)
	}
	mine := []atomics.DoubleInt{di(r, 0), di(r, 1), di(r, 2)}
	got := make([]atomics.DoubleInt, 3)
	want := func(st comm.Status, count int) error {
		for i := range got {
			if got[i] != di(prev, i) {
				return fmt.Errorf("got %v from rank %d", got, prev)
			}
		}
		if st.Count != count || comm.GetCount[atomics.DoubleInt](st) != 3 {
			return fmt.Errorf("status count %d, GetCount %d", st.Count, comm.GetCount[atomics.DoubleInt](st))
		}
		return nil
	}
	gotBytes := unsafe.Slice((*byte)(unsafe.Pointer(&got[0])), 48)
	if err := exchange("IsendT DoubleInt, RecvType struct",
		func() (*comm.Request, error) { return comm.IsendT(c, mine, next, 20) },
		func() (comm.Status, error) { return c.RecvType(gotBytes, 3, st16, prev, 20) },
		func(st comm.Status) error { return want(st, 3) }); err != nil {
		return err
	}
	clear(got)
	mineBytes := unsafe.Slice((*byte)(unsafe.Pointer(&mine[0])), 48)
	if err := exchange("IsendType DOUBLE_INT, RecvT DoubleInt",
		func() (*comm.Request, error) {
			return c.IsendType(mineBytes, 3, dtype.Basic(atomics.DoubleIntT), next, 21)
		},
		func() (comm.Status, error) { return comm.RecvT(c, got, prev, 21) },
		func(st comm.Status) error { return want(st, 3) }); err != nil {
		return err
	}
	clear(got)
	if err := exchange("IsendT DoubleInt, RecvType DOUBLE_INT",
		func() (*comm.Request, error) { return comm.IsendT(c, mine, next, 22) },
		func() (comm.Status, error) {
			return c.RecvType(gotBytes, 3, dtype.Basic(atomics.DoubleIntT), prev, 22)
		},
		func(st comm.Status) error { return want(st, 3) }); err != nil {
		return err
	}
	ints := make([]int32, 4)
	if err := exchange("IsendT TwoInt, RecvT int32",
		func() (*comm.Request, error) {
			return comm.IsendT(c, []atomics.TwoInt{{V: int32(r), I: 1}, {V: int32(r), I: 2}}, next, 23)
		},
		func() (comm.Status, error) { return comm.RecvT(c, ints, prev, 23) },
		func(st comm.Status) error {
			if !slices.Equal(ints, []int32{int32(prev), 1, int32(prev), 2}) || st.Count != 4 {
				return fmt.Errorf("got %v, count %d", ints, st.Count)
			}
			return nil
		}); err != nil {
		return err
	}
	fi := make([]atomics.FloatInt, 2)
	if err := exchange("IsendT float32 and int32 pairs as a struct, IrecvT FloatInt",
		func() (*comm.Request, error) {
			f32 := dtype.Basic(atomics.Float32)
			st8, err := dtype.Struct([]int{1, 1}, []int64{0, 4}, []*dtype.Type{f32, i32})
			if err == nil {
				err = st8.Commit()
			}
			if err != nil {
				return nil, err
			}
			v := []atomics.FloatInt{{V: float32(r), I: 7}, {V: float32(r) / 2, I: 8}}
			return c.IsendType(unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 16), 2, st8, next, 24)
		},
		func() (comm.Status, error) {
			rq, err := comm.IrecvT(c, fi, prev, 24)
			if err != nil {
				return comm.Status{}, err
			}
			return rq.Wait()
		},
		func(st comm.Status) error {
			if fi[0] != (atomics.FloatInt{V: float32(prev), I: 7}) || fi[1] != (atomics.FloatInt{V: float32(prev) / 2, I: 8}) || st.Count != 2 {
				return fmt.Errorf("got %v, count %d", fi, st.Count)
			}
			return nil
		}); err != nil {
		return err
	}
	si := []atomics.ShortInt{{V: int16(r), I: 5}}
	sgot := make([]atomics.ShortInt, 1)
	ps, err := comm.SendInitT(c, si, next, 25)
	if err != nil {
		return err
	}
	pr, err := comm.RecvInitT(c, sgot, prev, 25)
	if err != nil {
		return err
	}
	for round := range 2 {
		si[0].I = int32(5 + round)
		if err := comm.Startall([]*comm.Request{pr, ps}); err != nil {
			return err
		}
		sts, err := comm.Waitall([]*comm.Request{pr, ps})
		if err != nil {
			return err
		}
		if sgot[0] != (atomics.ShortInt{V: int16(prev), I: int32(5 + round)}) || sts[0].Count != 1 {
			return fmt.Errorf("persistent ShortInt round %d: %v, count %d", round, sgot, sts[0].Count)
		}
	}
	if err := ps.Free(); err != nil {
		return err
	}
	return pr.Free()
}

// i32bytes is the bytes of an int32 slice (its memory, not a copy).
func i32bytes(v []int32) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v)) }

// beTypedColl: the datatype forms of the collectives on a column of a 4×4
// int32 matrix (a vector type, not one run), against references computed
// here; and an argument error on one rank reported on every rank.
func beTypedColl(c *comm.Comm) error {
	r, n := c.Rank(), c.Size()
	i32 := dtype.Basic(atomics.Int32)
	col, err := dtype.Vector(4, 1, 4, i32)
	if err != nil {
		return err
	}
	if err := col.Commit(); err != nil {
		return err
	}
	// Column k of a matrix of rank q: q*100 + 4*i + k in row i.
	val := func(q, i, k int) int32 { return int32(q*100 + 4*i + k) }
	matrix := func(q int) []int32 {
		m := make([]int32, 16)
		for i := range 4 {
			for k := range 4 {
				m[4*i+k] = val(q, i, k)
			}
		}
		return m
	}
	colOf := func(m []int32, k int) []int32 { return []int32{m[k], m[4+k], m[8+k], m[12+k]} }
	at := func(m []int32, k int) []byte { return i32bytes(m)[4*k:] }

	// BcastType: root's column 1 into everyone's column 1.
	root := n - 1
	m := matrix(r)
	if err := comm.BcastType(c, at(m, 1), 1, col, root); err != nil {
		return err
	}
	if err := ranktest.Want("BcastType column", colOf(m, 1), colOf(matrix(root), 1)); err != nil {
		return err
	}
	if err := ranktest.Want("BcastType column 0 untouched", colOf(m, 0), colOf(matrix(r), 0)); err != nil {
		return err
	}

	// GatherType: each rank's column 2 as plain int32s at the root.
	all := make([]int32, 4*n)
	if err := comm.GatherType(c, at(matrix(r), 2), 1, col, i32bytes(all), 4, i32, 0); err != nil {
		return err
	}
	if r == 0 {
		for q := range n {
			if err := ranktest.Want(fmt.Sprintf("GatherType block %d", q), all[4*q:4*q+4], colOf(matrix(q), 2)); err != nil {
				return err
			}
		}
	}

	// ScatterType: root's plain blocks into each rank's column 3.
	src := make([]int32, 4*n)
	for i := range src {
		src[i] = int32(1000 + i)
	}
	m = make([]int32, 16)
	if err := comm.ScatterType(c, i32bytes(src), 4, i32, at(m, 3), 1, col, 0); err != nil {
		return err
	}
	if err := ranktest.Want("ScatterType column", colOf(m, 3), src[4*r:4*r+4]); err != nil {
		return err
	}

	// AllgatherType and AlltoallType among the first four ranks, received
	// into columns: the receive type is the column resized to one int32's
	// extent, so block q is column q.
	cols, err := dtype.Resized(col, 0, 4)
	if err != nil {
		return err
	}
	if err := cols.Commit(); err != nil {
		return err
	}
	k := min(n, 4)
	sub, err := c.Split(map[bool]int{true: 0, false: comm.Undefined}[r < k], r)
	if err != nil {
		return err
	}
	if sub != nil {
		mine := []int32{int32(r), int32(r + 10), int32(r + 20), int32(r + 30)}
		got := make([]int32, 16)
		if err := comm.AllgatherType(sub, i32bytes(mine), 4, i32, i32bytes(got), 1, cols); err != nil {
			return err
		}
		for q := range k {
			if err := ranktest.Want(fmt.Sprintf("AllgatherType column %d", q), colOf(got, q), []int32{int32(q), int32(q + 10), int32(q + 20), int32(q + 30)}); err != nil {
				return err
			}
		}
		// AlltoallType: row q of my matrix to rank q as a column there.
		mat := matrix(r)
		got = make([]int32, 16)
		if err := comm.AlltoallType(sub, i32bytes(mat), 4, i32, i32bytes(got), 1, cols); err != nil {
			return err
		}
		for q := range k {
			if err := ranktest.Want(fmt.Sprintf("AlltoallType column %d", q), colOf(got, q), matrix(q)[4*r:4*r+4]); err != nil {
				return err
			}
		}
		if err := sub.Free(); err != nil {
			return err
		}
	}

	// AllgathervType: rank q gives q%3 int32s, landing at 5*q.
	counts, displs := make([]int, n), make([]int, n)
	for q := range n {
		counts[q], displs[q] = q%3, 5*q
	}
	mine := make([]int32, r%3)
	for i := range mine {
		mine[i] = int32(r*10 + i)
	}
	got := make([]int32, 5*n)
	var mb []byte
	if len(mine) > 0 {
		mb = i32bytes(mine)
	}
	if err := comm.AllgathervType(c, mb, len(mine), i32, i32bytes(got), counts, displs, i32); err != nil {
		return err
	}
	for q := range n {
		for i := range 5 {
			exp := int32(0)
			if i < q%3 {
				exp = int32(q*10 + i)
			}
			if got[5*q+i] != exp {
				return fmt.Errorf("AllgathervType: element %d of block %d = %d, want %d", i, q, got[5*q+i], exp)
			}
		}
	}

	// Reductions over a column: sum of column 1 of every rank's matrix.
	m = matrix(r)
	res := make([]int32, 16)
	if err := comm.AllreduceType[int32](c, at(m, 1), at(res, 1), 1, col, atomics.Sum); err != nil {
		return err
	}
	sum := func(upto int, i, k int) int32 {
		s := int32(0)
		for q := range upto {
			s += val(q, i, k)
		}
		return s
	}
	for i := range 4 {
		if res[4*i+1] != sum(n, i, 1) || res[4*i] != 0 {
			return fmt.Errorf("AllreduceType: row %d = %v", i, res[4*i:4*i+4])
		}
	}
	if err := comm.AllreduceTypeInPlace[int32](c, at(m, 2), 1, col, atomics.Sum); err != nil {
		return err
	}
	for i := range 4 {
		if m[4*i+2] != sum(n, i, 2) || m[4*i+1] != val(r, i, 1) {
			return fmt.Errorf("AllreduceTypeInPlace: row %d = %v", i, m[4*i:4*i+4])
		}
	}
	m, res = matrix(r), make([]int32, 16)
	if err := comm.ScanType[int32](c, at(m, 0), at(res, 0), 1, col, atomics.Sum); err != nil {
		return err
	}
	for i := range 4 {
		if res[4*i] != sum(r+1, i, 0) {
			return fmt.Errorf("ScanType: row %d = %v", i, res[4*i:4*i+4])
		}
	}
	res = make([]int32, 16)
	if err := comm.ReduceType[int32](c, at(m, 3), at(res, 3), 1, col, atomics.Max, root); err != nil {
		return err
	}
	if r == root {
		for i := range 4 {
			if res[4*i+3] != val(n-1, i, 3) {
				return fmt.Errorf("ReduceType: row %d = %v", i, res[4*i:4*i+4])
			}
		}
	}

	// An argument error on one rank is every rank's: the last rank passes
	// a type that is not committed.
	loose, err := dtype.Vector(4, 1, 4, i32)
	if err != nil {
		return err
	}
	t := col
	if r == n-1 {
		t = loose
	}
	m = matrix(r)
	if err := ranktest.WantErr("BcastType, one rank's type not committed", reported(c, comm.BcastType(c, at(m, 1), 1, t, 0)), comm.ErrType); err != nil {
		return err
	}
	if err := ranktest.WantErr("AllreduceType, one rank's type not committed", comm.AllreduceTypeInPlace[int32](c, at(m, 1), 1, t, atomics.Sum), comm.ErrType); err != nil {
		return err
	}
	// And the communicator works on.
	if err := comm.BcastType(c, at(m, 1), 1, col, 0); err != nil {
		return err
	}
	fmt.Printf("rank %d ok\n", r)
	return nil
}

// beHardware: SplitType's hardware kinds. Guided at mpi_shared_memory (or
// Machine) is the node's communicator; an unknown resource name gives nil
// on every rank; Core gives each rank a communicator or nil (nil when its
// CPUs span cores, as an unbound rank's do); unguided gives a
// communicator whose level is in info, or nil on every rank when no level
// splits them; an unknown kind is ErrArg.
func beHardware(c *comm.Comm) error {
	r := c.Rank()
	node, err := c.SplitType(comm.TypeShared, 0, nil)
	if err != nil {
		return err
	}
	for _, name := range []string{"mpi_shared_memory", "Machine"} {
		g, err := c.SplitType(comm.TypeHWGuided, 0, comm.Info{comm.HWResourceType: name})
		if err != nil {
			return err
		}
		if g == nil || g.Size() != node.Size() {
			return fmt.Errorf("guided %s: %v, want the node's %d ranks", name, g, node.Size())
		}
		if res := comm.Compare(g, node); res != comm.Congruent {
			return fmt.Errorf("guided %s against the node: %v", name, res)
		}
		if err := g.Free(); err != nil {
			return err
		}
	}
	g, err := c.SplitType(comm.TypeHWGuided, 0, comm.Info{comm.HWResourceType: "Quantum"})
	if err != nil || g != nil {
		return fmt.Errorf("guided by an unknown name: %v %v, want nil", g, err)
	}
	core, err := c.SplitType(comm.TypeHWGuided, -r, comm.Info{comm.HWResourceType: "Core"})
	if err != nil {
		return err
	}
	if core != nil {
		if core.Size() > node.Size() {
			return fmt.Errorf("a core's communicator of %d ranks, the node's %d", core.Size(), node.Size())
		}
		if err := core.Free(); err != nil {
			return err
		}
	}
	info := comm.Info{}
	u, err := c.SplitType(comm.TypeHWUnguided, 0, info)
	if err != nil {
		return err
	}
	if u != nil {
		if info[comm.HWResourceType] == "" {
			return fmt.Errorf("unguided: no level in info")
		}
		if u.Size() > c.Size() {
			return fmt.Errorf("unguided: %d ranks", u.Size())
		}
		if err := u.Free(); err != nil {
			return err
		}
	}
	if _, err := c.SplitType(comm.SplitKind(99), 0, nil); !errors.Is(err, comm.ErrArg) {
		return fmt.Errorf("an unknown kind: %v, want ErrArg", err)
	}
	if err := node.Free(); err != nil {
		return err
	}
	fmt.Printf("rank %d ok\n", r)
	return nil
}

// beSignals: after Init the Go runtime's signal handling still works, as
// the MPI backend promises after MPI_Init: a nil dereference is a Go
// panic that recover catches (SIGSEGV), and with one P a goroutine in a
// loop without calls is preempted so that this one wakes from a sleep
// (SIGURG; without it the job times out). Then the backend's own checks.
func beSignals(c *comm.Comm) error {
	var p *int
	caught := func() (err error) {
		defer func() {
			if e, ok := recover().(runtime.Error); ok {
				err = e
			}
		}()
		return fmt.Errorf("read %d through a nil pointer", *p)
	}()
	if caught == nil || !strings.Contains(caught.Error(), "nil pointer") {
		return fmt.Errorf("a nil dereference after Init: %v, want a runtime error", caught)
	}
	prev := runtime.GOMAXPROCS(1)
	var stop atomic.Bool
	spins := make(chan struct{})
	go func() {
		close(spins)
		for !stop.Load() {
		}
	}()
	<-spins
	time.Sleep(20 * time.Millisecond)
	stop.Store(true)
	runtime.GOMAXPROCS(prev)
	if err := backendSignals(); err != nil {
		return err
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	fmt.Printf("rank %d ok\n", c.Rank())
	return nil
}

// reported is the error a rank gets for a mismatched call whose own error
// was err: err itself, or, when err is nil, the error of the Barrier every
// rank then makes. On a communicator of two ranks a rank that read no
// other rank's data in the call (a root of Bcast or Scatter, a sender of
// Reduce or Gather, Scan's rank 0) finds the mismatch when its next call
// begins, and that call returns it; a rank that had its error in the call
// must get none from the Barrier.
func reported(c *comm.Comm, err error) error {
	berr := c.Barrier()
	if err == nil {
		return berr
	}
	if berr != nil {
		return fmt.Errorf("a Barrier after the call's error (%v) failed too: %v", err, berr)
	}
	return err
}

// beUserOpStack: Allreduce with a user op whose function grows the stack,
// over buffers the caller keeps on its stack. Over an MPI the op runs in a
// call back into Go from inside MPI_Allreduce, on the calling goroutine:
// its stack may then move, and a reduction handed the buffers' addresses
// as integers wrote its result into the old stack (a rank's own input
// came back).
func beUserOpStack(c *comm.Comm) error {
	op, err := comm.OpCreate(func(in, inout []int64) {
		stackSink += growStack(400)
		for i := range in {
			inout[i] += in[i]
		}
	}, true)
	if err != nil {
		return err
	}
	n := int64(c.Size())
	for i := range 20 {
		got0, got1, err := userOpRound(c, op)
		if err != nil {
			return err
		}
		if got0 != n*(n+1)/2 || got1 != 10*n {
			return fmt.Errorf("round %d: Allreduce with a user op gave %d, %d; want %d, %d", i, got0, got1, n*(n+1)/2, 10*n)
		}
	}
	fmt.Printf("rank %d ok\n", c.Rank())
	return nil
}

var stackSink int

//go:noinline
func userOpRound(c *comm.Comm, op *comm.UserOp[int64]) (int64, int64, error) {
	a := []int64{int64(c.Rank() + 1), 10} // on this goroutine's stack
	b := make([]int64, 2)
	err := comm.Allreduce(c, a, b, op)
	return b[0], b[1], err
}

//go:noinline
func growStack(n int) int {
	var pad [256]byte
	pad[n%256] = byte(n)
	if n == 0 {
		return int(pad[0])
	}
	return growStack(n-1) + int(pad[n%256])
}

// beDropped: requests the program lets go of while their operations are
// in flight (a persistent send freed while active, an Isend never waited
// for; MPI lets the operations go on) must not take their pinned buffers
// to the collector, which ends the process: the collector runs, and the
// messages arrive.
func beDropped(c *comm.Comm) error {
	const n = 1 << 20
	if c.Size() >= 2 && c.Rank() == 0 {
		err := func() error { // the requests go out of scope here
			p, err := c.SendInit(make([]byte, n), 1, 71)
			if err != nil {
				return err
			}
			if err := p.Start(); err != nil {
				return err
			}
			if err := p.Free(); err != nil {
				return err
			}
			_, err = c.Isend(make([]byte, n), 1, 72)
			return err
		}()
		if err != nil {
			return err
		}
		runtime.GC()
		runtime.GC()
	}
	if c.Size() >= 2 && c.Rank() == 1 {
		for _, tag := range []int{71, 72} {
			if _, err := c.Recv(make([]byte, n), 0, tag); err != nil {
				return err
			}
		}
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	runtime.GC()
	fmt.Printf("rank %d ok\n", c.Rank())
	return nil
}

// beAnyErr: a request that fails in Waitany or Testany (a message longer
// than the receive) comes back with its index and its error, its entry
// set to nil; the next Waitany on the same slice finds nothing active.
// (Over an MPI, Waitany returns such an error as its own: the request,
// freed by the MPI, was left in the slice, and the next call aborted.)
func beAnyErr(c *comm.Comm) error {
	if c.Size() >= 2 && c.Rank() == 1 {
		for tag := range 2 {
			if err := c.Send(make([]byte, 2000), 0, 80+tag); err != nil {
				return err
			}
		}
		// Waitall's and Testall's: a message too long for its receive,
		// and one that comes only after the other has failed.
		for tag := 82; tag < 86; tag += 2 {
			if err := c.Send(make([]byte, 2000), 0, tag); err != nil {
				return err
			}
			time.Sleep(50 * time.Millisecond)
			if err := c.Send([]byte("a late message"), 0, tag+1); err != nil {
				return err
			}
		}
	}
	if c.Size() >= 2 && c.Rank() == 0 {
		for tag, wait := range []func([]*comm.Request) (int, error){
			func(rs []*comm.Request) (int, error) { i, _, err := comm.Waitany(rs); return i, err },
			func(rs []*comm.Request) (int, error) {
				for {
					i, _, ok, err := comm.Testany(rs)
					if ok || err != nil {
						return i, err
					}
				}
			},
		} {
			r, err := c.Irecv(make([]byte, 1000), 1, 80+tag)
			if err != nil {
				return err
			}
			rs := []*comm.Request{r}
			i, err := wait(rs)
			if i != 0 || !errors.Is(err, comm.ErrTruncate) || rs[0] != nil {
				return fmt.Errorf("tag %d: a truncated receive gave index %d, error %v, entry %v; want 0, ErrTruncate, nil", 80+tag, i, err, rs[0])
			}
			if i, _, err := comm.Waitany(rs); i != comm.Undefined || err != nil {
				return fmt.Errorf("tag %d: Waitany after it: %d, %v; want Undefined, nil", 80+tag, i, err)
			}
		}
		// Waitall completes every request, the one still pending when
		// another failed too (MPICH's MPI_Waitall returns at the failure
		// with MPI_ERR_PENDING in the other's status): its message
		// arrives, and only the failed one's error is reported. Testall
		// reports the pair only once both are complete, the same way.
		for k, all := range []func([]*comm.Request) ([]comm.Status, error){
			comm.Waitall,
			func(rs []*comm.Request) ([]comm.Status, error) {
				for {
					sts, ok, err := comm.Testall(rs)
					if ok {
						return sts, err
					}
					if err != nil {
						return nil, fmt.Errorf("Testall failed before both completed: %w", err)
					}
				}
			},
		} {
			tag := 82 + 2*k // in the sender's order: the later message is late
			short, late := make([]byte, 1000), make([]byte, 14)
			r1, err := c.Irecv(short, 1, tag)
			if err != nil {
				return err
			}
			r2, err := c.Irecv(late, 1, tag+1)
			if err != nil {
				return err
			}
			rs := []*comm.Request{r1, r2}
			sts, err := all(rs)
			if !errors.Is(err, comm.ErrTruncate) || strings.Contains(err.Error(), "request 1") || rs[0] != nil || rs[1] != nil {
				return fmt.Errorf("tag %d: completing a truncated receive and a later one: %v, entries %v; want ErrTruncate of request 0 alone, nil entries", tag, err, rs)
			}
			if string(late) != "a late message" || sts[1].Count != 14 || sts[1].Tag != tag+1 {
				return fmt.Errorf("tag %d: completing a truncated receive and a later one: the later got %q, status %+v", tag, late, sts[1])
			}
		}
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	fmt.Printf("rank %d ok\n", c.Rank())
	return nil
}

// beSplitTypeUndefined: a rank may pass Undefined as the split kind where
// the others pass a kind (MPI 4.1, 7.4.2: it gets no communicator), for
// every kind; the others split among themselves.
func beSplitTypeUndefined(w *comm.Comm) error {
	me := w.Rank()
	for _, kind := range []comm.SplitKind{comm.TypeShared, comm.TypeHWGuided, comm.TypeHWUnguided} {
		k := kind
		if me == 0 {
			k = comm.SplitKind(comm.Undefined)
		}
		info := comm.Info{comm.HWResourceType: "mpi_shared_memory"}
		c, err := w.SplitType(k, -me, info)
		if err != nil {
			return fmt.Errorf("rank %d: SplitType(%d) with rank 0 passing Undefined: %v", me, kind, err)
		}
		if me == 0 && c != nil {
			return fmt.Errorf("rank 0: SplitType(Undefined) gave a communicator of %d", c.Size())
		}
		if me != 0 && kind != comm.TypeHWUnguided && (c == nil || c.Size() != w.Size()-1 || c.Rank() != w.Size()-1-me) {
			return fmt.Errorf("rank %d: SplitType(%d) without rank 0 gave %v", me, kind, c)
		}
		if c != nil {
			if err := c.Free(); err != nil {
				return err
			}
		}
	}
	if err := w.Barrier(); err != nil {
		return err
	}
	fmt.Printf("rank %d ok\n", me)
	return nil
}

// beAlltoallw: AlltoallwType with a type per block on both sides
// (contiguous int32 or strided ones), displacements in bytes with gaps
// the call must leave alone, its in-place form, and one rank's bad
// arguments reported on every rank.
func beAlltoallw(c *comm.Comm) error {
	r, n := c.Rank(), c.Size()
	i32 := dtype.Basic(atomics.Int32)
	strided := func(count, stride int) *dtype.Type {
		t, err := dtype.Vector(count, 1, stride, i32)
		if err == nil {
			err = t.Commit()
		}
		if err != nil {
			panic(err)
		}
		return t
	}
	val := func(from, to, i int) int32 { return int32(from*1000 + to*10 + i) }

	// Rank r sends j+1 values to rank j: plain int32s to an even rank,
	// every other int32 to an odd one; it receives r+1 values from rank
	// q: every third int32 from an even rank, plain int32s from an odd
	// one. Each block sits one int32 past the end of the one before.
	sc, sd, st := make([]int, n), make([]int, n), make([]*dtype.Type, n)
	rc, rd, rt := make([]int, n), make([]int, n), make([]*dtype.Type, n)
	var send, recv []int32
	for j := range n {
		send = append(send, -1) // the gap
		sd[j] = 4 * len(send)
		block := make([]int32, 2*(j+1))
		for i := range block {
			block[i] = -1
		}
		if j%2 == 0 {
			sc[j], st[j] = j+1, i32
			for i := range j + 1 {
				block[i] = val(r, j, i)
			}
		} else {
			sc[j], st[j] = 1, strided(j+1, 2)
			for i := range j + 1 {
				block[2*i] = val(r, j, i)
			}
		}
		send = append(send, block...)
	}
	for q := range n {
		recv = append(recv, -1)
		rd[q] = 4 * len(recv)
		if q%2 == 0 {
			rc[q], rt[q] = 1, strided(r+1, 3)
		} else {
			rc[q], rt[q] = r+1, i32
		}
		for range 3 * (r + 1) {
			recv = append(recv, -1)
		}
	}
	if err := comm.AlltoallwType(c, i32bytes(send), sc, sd, st, i32bytes(recv), rc, rd, rt); err != nil {
		return fmt.Errorf("AlltoallwType: %w", err)
	}
	want := make([]int32, len(recv))
	for i := range want {
		want[i] = -1
	}
	for q := range n {
		at, step := rd[q]/4, 1
		if q%2 == 0 {
			step = 3
		}
		for i := range r + 1 {
			want[at+step*i] = val(q, r, i)
		}
	}
	if err := ranktest.Want("AlltoallwType", recv, want); err != nil {
		return err
	}

	// In place: the block for (and from) rank j holds r+j+1 values,
	// plain to an even rank and every other int32 to an odd one.
	cnt, dis, typ := make([]int, n), make([]int, n), make([]*dtype.Type, n)
	var buf []int32
	for j := range n {
		buf = append(buf, -1)
		dis[j] = 4 * len(buf)
		m := r + j + 1
		block := make([]int32, 2*m)
		for i := range block {
			block[i] = -1
		}
		step := 1
		if j%2 == 0 {
			cnt[j], typ[j] = m, i32
		} else {
			cnt[j], typ[j], step = 1, strided(m, 2), 2
		}
		for i := range m {
			block[step*i] = val(r, j, i)
		}
		buf = append(buf, block...)
	}
	want = slices.Clone(buf)
	for j := range n {
		step := 1
		if j%2 == 1 {
			step = 2
		}
		for i := range r + j + 1 {
			want[dis[j]/4+step*i] = val(j, r, i)
		}
	}
	if err := comm.AlltoallwTypeInPlace(c, i32bytes(buf), cnt, dis, typ); err != nil {
		return fmt.Errorf("AlltoallwTypeInPlace: %w", err)
	}
	if err := ranktest.Want("AlltoallwTypeInPlace", buf, want); err != nil {
		return err
	}

	// The last rank passes one type too few: ErrCount on every rank.
	bad := st
	if r == n-1 {
		bad = st[:n-1]
	}
	err := comm.AlltoallwType(c, i32bytes(send), sc, sd, bad, i32bytes(recv), rc, rd, rt)
	if !errors.Is(err, comm.ErrCount) {
		return fmt.Errorf("AlltoallwType with rank %d's %d types: %v, want ErrCount", n-1, n-1, err)
	}
	fmt.Printf("rank %d ok\n", r)
	return nil
}

// beNonblockingColl: every nonblocking collective against its blocking
// form's result, many outstanding at once beside blocking collectives,
// point-to-point traffic a rank must get through before it calls the
// collective another rank has started (the progress a nonblocking
// collective promises), Test loops, Waitany, and Free with one pending.
func beNonblockingColl(c *comm.Comm) error {
	r, n := c.Rank(), c.Size()
	vals := func(q int) []int64 { return []int64{int64(q + 1), int64(10 * q), int64(-q)} }
	sum := make([]int64, 3)
	for q := range n {
		for i, v := range vals(q) {
			sum[i] += v
		}
	}
	root := n - 1

	// Started in a row, completed together, results checked.
	ar := make([]int64, 3)
	bc := []int64{-1}
	if r == root {
		bc[0] = 77
	}
	red := make([]int64, 3)
	ga := make([]int64, 3*n)
	ag := make([]int64, n)
	sc := make([]int64, 1)
	var scs []int64
	if r == root {
		for q := range n {
			scs = append(scs, int64(100+q))
		}
	}
	a2a := make([]int64, n)
	a2s := make([]int64, n)
	for j := range n {
		a2s[j] = int64(r*1000 + j)
	}
	scan, exscan := []int64{0}, []int64{-5}
	rsb := make([]int64, 1)
	rsbIn := make([]int64, n)
	for j := range n {
		rsbIn[j] = int64(j + r)
	}
	inplace := vals(r)
	var reqs []*comm.Request
	add := func(q *comm.Request, err error) {
		if err != nil {
			panic(err)
		}
		reqs = append(reqs, q)
	}
	add(comm.Iallreduce(c, vals(r), ar, atomics.Sum))
	add(comm.Ibcast(c, bc, root))
	add(comm.Ireduce(c, vals(r), red, atomics.Sum, root))
	add(comm.Igather(c, vals(r), ga, 0))
	add(comm.Iallgather(c, []int64{int64(r * r)}, ag))
	add(comm.Iscatter(c, scs, sc, root))
	add(comm.Ialltoall(c, a2s, a2a))
	add(comm.Iscan(c, []int64{int64(r + 1)}, scan, atomics.Sum))
	add(comm.Iexscan(c, []int64{int64(r + 1)}, exscan, atomics.Sum))
	add(comm.IreduceScatterBlock(c, rsbIn, rsb, atomics.Sum))
	add(comm.IallreduceInPlace(c, inplace, atomics.Max))
	if err := comm.WaitallInto(reqs, nil); err != nil {
		return fmt.Errorf("Waitall of the nonblocking collectives: %w", err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"Iallreduce", ar, sum},
		{"Ibcast", bc, []int64{77}},
		{"Iallgather", ag, func() []int64 {
			w := make([]int64, n)
			for q := range n {
				w[q] = int64(q * q)
			}
			return w
		}()},
		{"Ialltoall", a2a, func() []int64 {
			w := make([]int64, n)
			for q := range n {
				w[q] = int64(q*1000 + r)
			}
			return w
		}()},
		{"Iscan", scan, []int64{int64((r + 1) * (r + 2) / 2)}},
		{"IreduceScatterBlock", rsb, []int64{int64(n*r + n*(n-1)/2)}},
		{"IallreduceInPlace", inplace, []int64{int64(n), int64(10 * (n - 1)), 0}},
		{"Iscatter", sc, []int64{int64(100 + r)}},
	}
	if r == root {
		checks = append(checks, struct {
			name      string
			got, want any
		}{"Ireduce", red, sum})
	}
	if r == 0 {
		var w []int64
		for q := range n {
			w = append(w, vals(q)...)
		}
		checks = append(checks, struct {
			name      string
			got, want any
		}{"Igather", ga, w})
	} else {
		checks = append(checks, struct {
			name      string
			got, want any
		}{"Iexscan", exscan, []int64{int64(r * (r + 1) / 2)}})
	}
	for _, k := range checks {
		if err := ranktest.Want(k.name, k.got, k.want); err != nil {
			return err
		}
	}

	// Interleaved with blocking collectives: the order is the calls'.
	x, y := []int64{int64(r)}, []int64{-1}
	q1, err := comm.IallreduceInPlace(c, x, atomics.Sum)
	if err != nil {
		return err
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	y[0] = int64(10 * r)
	if err := comm.Bcast(c, y, 0); err != nil {
		return err
	}
	q2, err := comm.Ibcast(c, y, root)
	if err != nil {
		return err
	}
	if err := comm.WaitallInto([]*comm.Request{q2, q1}, nil); err != nil {
		return err
	}
	if err := ranktest.Want("interleaved", []int64{x[0], y[0]}, []int64{int64(n * (n - 1) / 2), 0}); err != nil {
		return err
	}

	// Progress: rank 0 starts an Iallreduce, then sends to rank 1, which
	// receives before it starts its own; both then wait.
	if n >= 2 {
		z := []float64{float64(r)}
		var q *comm.Request
		start := func() error {
			var err error
			q, err = comm.IallreduceInPlace(c, z, atomics.Sum)
			return err
		}
		switch r {
		case 0:
			if err := start(); err != nil {
				return err
			}
			if err := c.Send([]byte{1}, 1, 5); err != nil {
				return err
			}
		case 1:
			if _, err := c.Recv(make([]byte, 1), 0, 5); err != nil {
				return err
			}
			if err := start(); err != nil {
				return err
			}
		default:
			if err := start(); err != nil {
				return err
			}
		}
		// Test until done, then Waitany on the completed request.
		for {
			_, ok, err := q.Test()
			if err != nil {
				return err
			}
			if ok {
				break
			}
			runtime.Gosched()
		}
		if err := ranktest.Want("progress", z[0], float64(n*(n-1)/2)); err != nil {
			return err
		}
	}

	// Free with a collective pending on the communicator: it completes.
	d, err := c.Dup()
	if err != nil {
		return err
	}
	w := []int32{int32(r)}
	q3, err := comm.IallreduceInPlace(d, w, atomics.Max)
	if err != nil {
		return err
	}
	if err := d.Free(); err != nil {
		return fmt.Errorf("Free with an Iallreduce pending: %w", err)
	}
	if _, err := q3.Wait(); err != nil {
		return err
	}
	if err := ranktest.Want("pending at Free", w[0], int32(n-1)); err != nil {
		return err
	}
	if _, err := comm.Ibcast(d, w, 0); !errors.Is(err, comm.ErrComm) {
		return fmt.Errorf("Ibcast on a freed communicator: %v, want ErrComm", err)
	}
	if err := beNBCRequests(c); err != nil {
		return err
	}
	fmt.Printf("rank %d ok\n", r)
	return nil
}

// beNBCRequests: a nonblocking or persistent collective's request may not
// be cancelled, nor a nonblocking one freed (MPI 4.1 §6.12, §6.13):
// ErrRequest, the operation unharmed; and the calls on several requests
// with none active: Waitany and Testany Undefined with the empty status
// (source AnySource, tag AnyTag), Testsome nil indices where one pending
// request gives an empty slice that is not nil.
func beNBCRequests(c *comm.Comm) error {
	x := []int64{1}
	q, err := comm.IallreduceInPlace(c, x, atomics.Sum)
	if err != nil {
		return err
	}
	if err := q.Cancel(); !errors.Is(err, comm.ErrRequest) {
		return fmt.Errorf("Cancel of an Iallreduce's request: %v, want ErrRequest", err)
	}
	if err := q.Free(); !errors.Is(err, comm.ErrRequest) {
		return fmt.Errorf("Free of an Iallreduce's request: %v, want ErrRequest", err)
	}
	b, err := c.Ibarrier()
	if err != nil {
		return err
	}
	if err := b.Cancel(); !errors.Is(err, comm.ErrRequest) {
		return fmt.Errorf("Cancel of an Ibarrier's request: %v, want ErrRequest", err)
	}
	if err := b.Free(); !errors.Is(err, comm.ErrRequest) {
		return fmt.Errorf("Free of an Ibarrier's request: %v, want ErrRequest", err)
	}
	if err := comm.WaitallInto([]*comm.Request{q, b}, nil); err != nil {
		return err
	}
	if x[0] != int64(c.Size()) {
		return fmt.Errorf("the Iallreduce after a refused Cancel and Free: %d, want %d", x[0], c.Size())
	}
	p, err := comm.AllreduceInit(c, []int64{1}, make([]int64, 1), atomics.Sum)
	if err != nil {
		return err
	}
	if err := p.Start(); err != nil {
		return err
	}
	if err := p.Cancel(); !errors.Is(err, comm.ErrRequest) {
		return fmt.Errorf("Cancel of an active persistent Allreduce: %v, want ErrRequest", err)
	}
	if _, err := p.Wait(); err != nil {
		return err
	}
	if err := p.Free(); err != nil {
		return err
	}

	empty := func(call string, i int, st comm.Status) error {
		if i != comm.Undefined || st.Source != comm.AnySource || st.Tag != comm.AnyTag || st.Count != 0 || st.Cancelled {
			return fmt.Errorf("%s with no active request: %d, %+v; want Undefined and the empty status", call, i, st)
		}
		return nil
	}
	none := []*comm.Request{nil, nil}
	i, st, err := comm.Waitany(none)
	if err == nil {
		err = empty("Waitany", i, st)
	}
	if err != nil {
		return err
	}
	i, st, done, err := comm.Testany(none)
	if err == nil && !done {
		err = fmt.Errorf("Testany with no active request: not done")
	}
	if err == nil {
		err = empty("Testany", i, st)
	}
	if err != nil {
		return err
	}
	if idx, _, err := comm.Testsome(none); idx != nil || err != nil {
		return fmt.Errorf("Testsome with no active request: %v, %v; want nil indices", idx, err)
	}
	pending, err := c.Irecv(make([]byte, 1), c.Rank(), 77)
	if err != nil {
		return err
	}
	if idx, _, err := comm.Testsome([]*comm.Request{nil, pending}); idx == nil || len(idx) != 0 || err != nil {
		return fmt.Errorf("Testsome with a pending request: %#v, %v; want an empty slice, not nil", idx, err)
	}
	if err := pending.Cancel(); err != nil {
		return err
	}
	_, err = pending.Wait()
	return err
}
