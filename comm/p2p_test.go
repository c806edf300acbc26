//go:build !mpi

package comm_test

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/launcher"
)

// Point-to-point. Every body below runs both as real processes (through
// the launcher) and as goroutine ranks (under the race detector); the
// goroutine mode has no single copy, so it covers the streamed path too.

// pattern is message number k's bytes of length n from rank r.
func pattern(r, k, n int) []byte {
	b := make([]byte, n)
	x := uint32(r*7919 + k*104729 + n)
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

// p2pSizes crosses the eager limit and the ring size; procs adds sizes
// past the staging of any ring (single copy, or many Data fragments).
func p2pSizes(procs bool) []int {
	eager := format.P2PEager(format.P2PRing(2))
	s := []int{0, 1, 8, 63, 64, 1000, eager - 1, eager, eager + 1, 3 * eager, 64 << 10}
	if procs {
		s = append(s, 1<<20, 4<<20+3)
	}
	return s
}

// p2pPingPong: ranks 0 and 1 bounce every size; the others idle.
func p2pPingPong(c *comm.Comm, procs bool) error {
	if c.Size() < 2 || c.Rank() > 1 {
		return nil
	}
	me, peer := c.Rank(), 1-c.Rank()
	for k, n := range p2pSizes(procs) {
		if me == 0 {
			if err := c.Send(pattern(0, k, n), 1, k); err != nil {
				return err
			}
		}
		buf := make([]byte, n)
		st, err := c.Recv(buf, peer, k)
		if err != nil {
			return err
		}
		if st.Source != peer || st.Tag != k || st.Count != n || st.Cancelled {
			return fmt.Errorf("size %d: status %+v", n, st)
		}
		if !bytes.Equal(buf, pattern(peer, k, n)) {
			return fmt.Errorf("size %d: received bytes differ", n)
		}
		if me == 1 {
			if err := c.Send(pattern(1, k, n), 0, k); err != nil {
				return err
			}
		}
	}
	return nil
}

// p2pOrder: every rank sends K messages with two tags to rank 0, which
// receives with AnySource/AnyTag and by specific tag; each sender's
// messages come in order per tag, and overall in order under AnyTag.
func p2pOrder(c *comm.Comm) error {
	const K = 200
	if c.Rank() != 0 {
		for k := range K {
			n := 8 + k%3*2000 // some eager, some not
			msg := pattern(c.Rank(), k, n)
			if err := c.Send(msg, 0, k%2); err != nil {
				return err
			}
		}
		return nil
	}
	next := make([]int, c.Size()) // next k expected from each sender
	for range (c.Size() - 1) * K {
		buf := make([]byte, 5000)
		st, err := c.Recv(buf, comm.AnySource, comm.AnyTag)
		if err != nil {
			return err
		}
		k := next[st.Source]
		next[st.Source]++
		if st.Tag != k%2 || !bytes.Equal(buf[:st.Count], pattern(st.Source, k, 8+k%3*2000)) {
			return fmt.Errorf("from %d: message %d out of order (tag %d, %d bytes)", st.Source, k, st.Tag, st.Count)
		}
	}
	return nil
}

// p2pFreed: messages nothing received on a freed communicator go (MPI
// 4.1 §6.4.3), whether they waited in the unexpected queue at the free
// or arrive after it, while a receive pending at the free still takes
// its message; the next communicator on the same table entry gets its
// messages.
func p2pFreed(c *comm.Comm) error {
	if c.Size() < 2 {
		return nil
	}
	me := c.Rank()
	for _, late := range []bool{false, true} {
		d, err := c.Dup()
		if err != nil {
			return err
		}
		var rq *comm.Request
		got := make([]byte, 8)
		send := func() error { // three messages nothing receives, then one for rq
			for tag := range 3 {
				if err := d.Send([]byte{byte(tag)}, 0, tag); err != nil {
					return err
				}
			}
			return d.Send([]byte("pending"), 0, 9)
		}
		if me == 0 {
			if rq, err = d.Irecv(got, 1, 9); err != nil {
				return err
			}
		}
		if me == 1 && !late {
			if err := send(); err != nil {
				return err
			}
		}
		if err := c.Barrier(); err != nil { // rq is posted
			return err
		}
		if me == 1 && late { // rank 0 makes no point-to-point call until its free
			if err := send(); err != nil {
				return err
			}
		}
		if me == 0 && !late { // drain the ring: three wait unexpected
			if _, ok, err := d.Iprobe(1, 77); err != nil || ok {
				return fmt.Errorf("Iprobe: %v, %v", ok, err)
			}
			if n := comm.P2PUnexpected(c); n != 3 {
				return fmt.Errorf("%d unexpected messages before the free, want 3", n)
			}
		}
		if err := d.Free(); err != nil {
			return err
		}
		if me == 1 { // after the free: drains the rest of rank 0's ring
			if err := c.Send([]byte("world"), 0, 3); err != nil {
				return err
			}
		}
		if me != 0 {
			continue
		}
		if _, err := c.Recv(make([]byte, 8), 1, 3); err != nil {
			return err
		}
		st, err := rq.Wait()
		if err != nil || string(got[:st.Count]) != "pending" {
			return fmt.Errorf("a receive pending at the free (late %v): %q, %v", late, got[:st.Count], err)
		}
		if n := comm.P2PUnexpected(c); n != 0 {
			return fmt.Errorf("%d unexpected messages after the free (late %v), want 0", n, late)
		}
	}
	d, err := c.Dup()
	if err != nil {
		return err
	}
	defer d.Free()
	switch me {
	case 0:
		st, err := d.Recv(make([]byte, 8), 1, 0)
		if err != nil || st.Count != 3 {
			return fmt.Errorf("a new communicator's message: %+v, %v", st, err)
		}
	case 1:
		return d.Send([]byte("new"), 0, 0)
	}
	return nil
}

// p2pTags: rank 1 sends tags 0..9 in order; rank 0 receives them in
// reverse tag order (each waits in the unexpected queue).
func p2pTags(c *comm.Comm) error {
	if c.Size() < 2 || c.Rank() > 1 {
		return nil
	}
	if c.Rank() == 1 {
		for tag := range 10 {
			if err := comm.SendT(c, []int64{int64(tag)}, 0, tag); err != nil {
				return err
			}
		}
		return nil
	}
	for tag := 9; tag >= 0; tag-- {
		v := make([]int64, 2)
		st, err := comm.RecvT(c, v, 1, tag)
		if err != nil {
			return err
		}
		if v[0] != int64(tag) || st.Count != 1 || comm.GetCount[int64](st) != 1 || comm.GetCount[int32](st) != 2 {
			return fmt.Errorf("tag %d: got %d, status %+v", tag, v[0], st)
		}
	}
	return nil
}

// p2pComms: the same (source, tag) on two communicators never match each
// other's messages.
func p2pComms(c *comm.Comm) error {
	d, err := c.Dup()
	if err != nil {
		return err
	}
	defer d.Free()
	if c.Size() < 2 || c.Rank() > 1 {
		return nil
	}
	if c.Rank() == 1 {
		if err := d.Send([]byte("dup"), 0, 5); err != nil {
			return err
		}
		return c.Send([]byte("world"), 0, 5)
	}
	buf := make([]byte, 8)
	st, err := c.Recv(buf, 1, 5)
	if err != nil || string(buf[:st.Count]) != "world" {
		return fmt.Errorf("world receive: %q, %v", buf[:st.Count], err)
	}
	st, err = d.Recv(buf, comm.AnySource, comm.AnyTag)
	if err != nil || string(buf[:st.Count]) != "dup" {
		return fmt.Errorf("dup receive: %q, %v", buf[:st.Count], err)
	}
	return nil
}

// p2pTruncate: a short buffer gives ErrTruncate with the real size, and
// the next messages are intact.
func p2pTruncate(c *comm.Comm) error {
	if c.Size() < 2 || c.Rank() > 1 {
		return nil
	}
	sizes := []int{100, 100000}
	if c.Rank() == 1 {
		for k, n := range sizes {
			if err := c.Send(pattern(1, k, n), 0, 1); err != nil {
				return err
			}
			if err := c.Send([]byte("after"), 0, 2); err != nil {
				return err
			}
		}
		return nil
	}
	for k, n := range sizes {
		buf := make([]byte, 10)
		st, err := c.Recv(buf, 1, 1)
		if !errors.Is(err, comm.ErrTruncate) || st.Count != n || !bytes.Equal(buf, pattern(1, k, n)[:10]) {
			return fmt.Errorf("truncated receive of %d: status %+v, %v", n, st, err)
		}
		after := make([]byte, 10)
		if st, err := c.Recv(after, 1, 2); err != nil || string(after[:st.Count]) != "after" {
			return fmt.Errorf("after truncation: %q, %v", after[:st.Count], err)
		}
	}
	return nil
}

// p2pCancelProbe: Cancel of an unmatched receive, Probe then Recv, Iprobe
// of nothing, Mprobe.
func p2pCancelProbe(c *comm.Comm) error {
	me := c.Rank()
	r, err := c.Irecv(make([]byte, 4), me, 99)
	if err != nil {
		return err
	}
	if err := r.Cancel(); err != nil {
		return err
	}
	st, err := r.Wait()
	if err != nil || !st.Cancelled {
		return fmt.Errorf("cancelled receive: %+v, %v", st, err)
	}
	if _, ok, err := c.Iprobe(comm.AnySource, 99); ok || err != nil {
		return fmt.Errorf("Iprobe of nothing: %v, %v", ok, err)
	}
	// A message to itself: Probe, then Recv of what Probe saw.
	if err := c.Send(pattern(me, 1, 3000), me, 7); err != nil {
		return err
	}
	st, err = c.Probe(comm.AnySource, comm.AnyTag)
	if err != nil || st.Source != me || st.Tag != 7 || st.Count != 3000 {
		return fmt.Errorf("Probe: %+v, %v", st, err)
	}
	buf := make([]byte, st.Count)
	if _, err := c.Recv(buf, st.Source, st.Tag); err != nil || !bytes.Equal(buf, pattern(me, 1, 3000)) {
		return fmt.Errorf("Recv after Probe: %v", err)
	}
	// Mprobe: the message is taken; a receive posted after it does not
	// see it.
	req, err := c.Isend(pattern(me, 2, 50000), me, 8)
	if err != nil {
		return err
	}
	m, st, err := c.Mprobe(me, 8)
	if err != nil || st.Count != 50000 {
		return fmt.Errorf("Mprobe: %+v, %v", st, err)
	}
	if _, ok, _ := c.Iprobe(me, 8); ok {
		return errors.New("Iprobe sees a message Mprobe took")
	}
	buf = make([]byte, st.Count)
	if _, err := m.Recv(buf); err != nil || !bytes.Equal(buf, pattern(me, 2, 50000)) {
		return fmt.Errorf("Message.Recv: %v", err)
	}
	if _, err := m.Recv(buf); !errors.Is(err, comm.ErrArg) {
		return fmt.Errorf("second Message.Recv: %v", err)
	}
	if _, err := req.Wait(); err != nil {
		return err
	}
	// ProcNull everywhere.
	if err := c.Send([]byte("x"), comm.ProcNull, 0); err != nil {
		return err
	}
	st, err = c.Recv(buf, comm.ProcNull, 3)
	if err != nil || st.Source != comm.ProcNull || st.Tag != comm.AnyTag || st.Count != 0 {
		return fmt.Errorf("Recv from ProcNull: %+v, %v", st, err)
	}
	return nil
}

// p2pReuse: a receive's operation goes back to the engine when it
// completes and serves a later receive; the request keeps its own
// outcome. Rounds of receives from the next rank — matched, cancelled,
// truncated, and sends complete at their start — are all waited for
// again, in reverse order, after later rounds reused their operations.
func p2pReuse(c *comm.Comm) error {
	me, n := c.Rank(), c.Size()
	to, from := (me+1)%n, (me+n-1)%n
	const rounds, per = 4, 40
	type kept struct {
		r        *comm.Request
		tag, len int // the message's, or -1: cancelled
	}
	var all []kept
	for k := range rounds {
		var sends []*comm.Request
		for i := range per {
			tag := k*per + i
			if i%5 == 4 { // cancelled: no message ever has this tag
				r, err := c.Irecv(make([]byte, 8), from, 10_000+tag)
				if err != nil {
					return err
				}
				if err := r.Cancel(); err != nil {
					return err
				}
				all = append(all, kept{r, tag, -1})
				continue
			}
			size := 1 + i%8 // i%7 == 6: a buffer one byte short (truncated)
			b := make([]byte, size-map[bool]int{true: 1, false: 0}[i%7 == 6])
			r, err := c.Irecv(b, from, tag)
			if err != nil {
				return err
			}
			all = append(all, kept{r, tag, size})
			s, err := c.Isend(pattern(me, tag, size), to, tag)
			if err != nil {
				return err
			}
			sends = append(sends, s)
		}
		if _, err := comm.Waitall(sends); err != nil {
			return err
		}
		for _, x := range all[len(all)-per:] {
			if _, err := x.r.Wait(); err != nil && !errors.Is(err, comm.ErrTruncate) {
				return fmt.Errorf("round %d, tag %d: %w", k, x.tag, err)
			}
		}
	}
	for i := len(all) - 1; i >= 0; i-- {
		x := all[i]
		st, err := x.r.Wait()
		st2, ok, err2 := x.r.Test()
		switch {
		case !ok || st != st2 || (err == nil) != (err2 == nil):
			return fmt.Errorf("tag %d: Wait %+v, %v but Test %+v, %v, %v", x.tag, st, err, st2, ok, err2)
		case x.len < 0:
			if !st.Cancelled || err != nil {
				return fmt.Errorf("cancelled receive of tag %d: %+v, %v", x.tag, st, err)
			}
		case st.Cancelled || st.Source != from || st.Tag != x.tag || st.Count != x.len:
			return fmt.Errorf("receive of tag %d: status %+v, want source %d count %d", x.tag, st, from, x.len)
		case (x.tag%per)%7 == 6 != errors.Is(err, comm.ErrTruncate):
			return fmt.Errorf("receive of tag %d: %v", x.tag, err)
		}
	}
	return nil
}

// p2pExchange: every pair Isends a large message both ways before posting
// its Irecv, then all complete; Sendrecv around the ring; Ssend is not
// complete before its receive is posted.
func p2pExchange(c *comm.Comm, procs bool) error {
	n := 300 << 10
	if procs {
		n = 8 << 20
	}
	me, size := c.Rank(), c.Size()
	var reqs []*comm.Request
	for q := range size {
		if q == me {
			continue
		}
		r, err := c.Isend(pattern(me, q, n), q, 3)
		if err != nil {
			return err
		}
		reqs = append(reqs, r)
	}
	bufs := make([][]byte, size)
	for q := range size {
		if q == me {
			continue
		}
		bufs[q] = make([]byte, n)
		r, err := c.Irecv(bufs[q], q, 3)
		if err != nil {
			return err
		}
		reqs = append(reqs, r)
	}
	if _, err := comm.Waitall(reqs); err != nil {
		return err
	}
	for q := range size {
		if q != me && !bytes.Equal(bufs[q], pattern(q, me, n)) {
			return fmt.Errorf("exchange: bytes from %d differ", q)
		}
	}
	right, left := (me+1)%size, (me+size-1)%size
	got := make([]byte, 100)
	st, err := c.Sendrecv(pattern(me, 9, 100), right, 4, got, left, 4)
	if err != nil || st.Source != left || !bytes.Equal(got, pattern(left, 9, 100)) {
		return fmt.Errorf("Sendrecv: %+v, %v", st, err)
	}
	buf := pattern(me, 10, 20)
	if _, err := c.SendrecvReplace(buf, right, 5, left, 5); err != nil || !bytes.Equal(buf, pattern(left, 10, 20)) {
		return fmt.Errorf("SendrecvReplace: %v", err)
	}
	if size < 2 || me > 1 {
		return c.Barrier()
	}
	if me == 1 {
		r, err := c.Issend([]byte("sync"), 0, 6)
		if err != nil {
			return err
		}
		time.Sleep(10 * time.Millisecond)
		if _, ok, err := r.Test(); ok || err != nil {
			return fmt.Errorf("Issend complete before its receive was posted: %v", err)
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		_, err = r.Wait()
		return err
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	_, err = c.Recv(make([]byte, 4), 1, 6)
	return err
}

// p2pWaitany: four always-ready receives from itself are served evenly.
func p2pWaitany(c *comm.Comm) error {
	me := c.Rank()
	const R, K = 4, 400
	reqs := make([]*comm.Request, R)
	bufs := make([][]byte, R)
	post := func(i int) error {
		if err := c.Send([]byte{byte(i)}, me, 20+i); err != nil {
			return err
		}
		bufs[i] = make([]byte, 1)
		var err error
		reqs[i], err = c.Irecv(bufs[i], me, 20+i)
		return err
	}
	for i := range R {
		if err := post(i); err != nil {
			return err
		}
	}
	served := make([]int, R)
	for range K {
		i, st, err := comm.Waitany(reqs)
		if err != nil {
			return err
		}
		if reqs[i] != nil || st.Tag != 20+i || bufs[i][0] != byte(i) {
			return fmt.Errorf("Waitany returned %d with status %+v", i, st)
		}
		served[i]++
		if err := post(i); err != nil {
			return err
		}
	}
	for i, s := range served {
		if s < K/R/2 {
			return fmt.Errorf("Waitany served the requests %v times: %d starves", served, i)
		}
	}
	_, err := comm.Waitall(reqs)
	if i, _, err := comm.Waitany(reqs); i != comm.Undefined || err != nil {
		return fmt.Errorf("Waitany of nil requests: %d, %v", i, err)
	}
	return err
}

// p2pGoroutines: four goroutines of each rank send to the next rank while
// four receive from the previous one, per tag in order.
func p2pGoroutines(c *comm.Comm) error {
	const G, K = 4, 100
	me, size := c.Rank(), c.Size()
	next, prev := (me+1)%size, (me+size-1)%size
	var wg sync.WaitGroup
	errs := make([]error, 2*G)
	for g := range G {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for k := range K {
				if err := c.Send(pattern(me, g*K+k, 10+k*50), next, g); err != nil {
					errs[g] = err
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for k := range K {
				buf := make([]byte, 10+k*50)
				if _, err := c.Recv(buf, prev, g); err != nil || !bytes.Equal(buf, pattern(prev, g*K+k, 10+k*50)) {
					errs[G+g] = fmt.Errorf("goroutine %d message %d: %v", g, k, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// p2pMprobeRace: goroutines of rank 0 race to take rank 1's messages with
// Mprobe and Improbe; every message is received exactly once.
func p2pMprobeRace(c *comm.Comm) error {
	const G, K = 4, 200
	if c.Size() < 2 || c.Rank() > 1 {
		return nil
	}
	if c.Rank() == 1 {
		for k := range K {
			n := 8 + k%2*6000 // eager and large
			if err := c.Send(pattern(1, k, n), 0, 9); err != nil {
				return err
			}
		}
		return nil
	}
	seen := make([]int, K)
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, G)
	taken := 0
	for g := range G {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				done := taken == K
				mu.Unlock()
				if done {
					return
				}
				m, st, ok, err := c.Improbe(1, 9)
				if err != nil {
					errs[g] = err
					return
				}
				if !ok {
					runtime.Gosched()
					continue
				}
				buf := make([]byte, st.Count)
				if _, err := m.Recv(buf); err != nil {
					errs[g] = err
					return
				}
				k := -1
				for j := range K {
					if 8+j%2*6000 == len(buf) && bytes.Equal(buf, pattern(1, j, len(buf))) {
						k = j
						break
					}
				}
				if k < 0 {
					errs[g] = fmt.Errorf("a message of %d bytes that rank 1 did not send", len(buf))
					return
				}
				mu.Lock()
				seen[k]++
				taken++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for k, n := range seen {
		if n != 1 {
			return fmt.Errorf("message %d received %d times", k, n)
		}
	}
	return nil
}

// p2pErrors: bad arguments are errors naming them.
func p2pErrors(c *comm.Comm) error {
	checks := []struct {
		name  string
		err   error
		class error
	}{
		{"rank", c.Send(nil, c.Size(), 0), comm.ErrRank},
		{"negative rank", c.Send(nil, -5, 0), comm.ErrRank},
		{"AnySource dest", c.Send(nil, comm.AnySource, 0), comm.ErrRank},
		{"tag", c.Send(nil, 0, -1), comm.ErrTag},
		{"AnyTag send", c.Send(nil, 0, comm.AnyTag), comm.ErrTag},
		{"nil comm", (*comm.Comm)(nil).Send(nil, 0, 0), comm.ErrComm},
	}
	for _, k := range checks {
		if !errors.Is(k.err, k.class) {
			return fmt.Errorf("%s: %v, want %v", k.name, k.err, k.class)
		}
	}
	if _, err := c.Recv(nil, c.Size(), 0); !errors.Is(err, comm.ErrRank) {
		return fmt.Errorf("Recv from a bad rank: %v", err)
	}
	if _, err := c.Recv(nil, 0, -7); !errors.Is(err, comm.ErrTag) {
		return fmt.Errorf("Recv with a bad tag: %v", err)
	}
	if err := (*comm.Request)(nil).Cancel(); !errors.Is(err, comm.ErrArg) {
		return fmt.Errorf("Cancel of nil: %v", err)
	}
	return nil
}

func p2pAll(c *comm.Comm, procs bool) error {
	steps := []struct {
		name string
		f    func(*comm.Comm) error
	}{
		{"pingpong", func(c *comm.Comm) error { return p2pPingPong(c, procs) }},
		{"order", p2pOrder},
		{"tags", p2pTags},
		{"comms", p2pComms},
		{"freed", p2pFreed},
		{"truncate", p2pTruncate},
		{"cancel/probe", p2pCancelProbe},
		{"reuse", p2pReuse},
		{"exchange", func(c *comm.Comm) error { return p2pExchange(c, procs) }},
		{"waitany", p2pWaitany},
		{"goroutines", p2pGoroutines},
		{"mprobe race", p2pMprobeRace},
		{"errors", p2pErrors},
		{"typed", func(c *comm.Comm) error { return p2pTyped(c, procs) }},
		{"persistent", func(c *comm.Comm) error { return p2pPersistent(c, procs) }},
		{"waiting", p2pWaiting},
	}
	for _, s := range steps {
		if err := s.f(c); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		if err := c.Barrier(); err != nil {
			return fmt.Errorf("after %s: %w", s.name, err)
		}
	}
	return nil
}

func init() {
	// p2p: args [off]. Every point-to-point rule; "off" turns single copy
	// off (the streamed path between processes).
	ranktest.Register("p2p", func(c *comm.Comm) error {
		off := os.Getenv(format.EnvSingleCopy) == "off"
		if a := ranktest.BodyArgs(); len(a) > 0 && a[0] == "off" {
			comm.SetSingleOff(true)
			off = true
		}
		if err := p2pAll(c, true); err != nil {
			return err
		}
		if err := p2pBigExchange(c); err != nil {
			return fmt.Errorf("64 MiB exchange: %w", err)
		}
		return p2pAbsentSender(c, !off && ptraceAllowed())
	})
	// p2pwrite: the sender's writes in place, their failure, and the
	// fallback to Data packets (p2pWriteInPlace).
	ranktest.Register("p2pwrite", p2pWriteInPlace)
	// p2pwhole: a large message matched while its sender's line is busy
	// is read whole at once when the sender cannot write in place
	// (p2pReadWhole).
	ranktest.Register("p2pwhole", p2pReadWhole)
	// p2pall: an all-to-all exchange of checksummed messages between
	// every pair, in random order of posting.
	ranktest.Register("p2pall", func(c *comm.Comm) error { return p2pAllToAll(c, 3) })
	// p2pdeadlock: both ranks receive first; the deadlock watch ends the
	// job. With "compute", rank 1 computes (sleeps) longer than the
	// watch's period before sending: nothing is deadlocked.
	ranktest.Register("p2pdeadlock", func(c *comm.Comm) error {
		if a := ranktest.BodyArgs(); len(a) > 0 && a[0] == "send" {
			// Both Send a large message first: each waits for the
			// other's receive (unsafe, as the standard says).
			err := c.Send(make([]byte, 1<<20), 1-c.Rank(), 7)
			return fmt.Errorf("Send returned: %v", err)
		}
		if a := ranktest.BodyArgs(); len(a) > 0 && a[0] == "barrier" {
			// Rank 0 receives what rank 1, in a Barrier, never sends.
			if c.Rank() == 1 {
				return fmt.Errorf("Barrier returned: %v", c.Barrier())
			}
			_, err := c.Recv(nil, 1, 3)
			return fmt.Errorf("Recv returned: %v", err)
		}
		if a := ranktest.BodyArgs(); len(a) > 0 && a[0] == "threaded" {
			// Rank 1 waits in a receive on one goroutine while another
			// computes for longer than the watch's period, then sends
			// what lets rank 0 answer that receive.
			if c.Rank() == 1 {
				got := make(chan error, 1)
				go func() { _, err := c.Recv(make([]byte, 8), 0, 9); got <- err }()
				for start := time.Now(); time.Since(start) < 1200*time.Millisecond; {
				}
				if err := c.Send([]byte("late"), 0, 5); err != nil {
					return err
				}
				return <-got
			}
			if _, err := c.Recv(make([]byte, 8), 1, 5); err != nil {
				return err
			}
			return c.Send([]byte("back"), 1, 9)
		}
		if a := ranktest.BodyArgs(); len(a) > 0 && a[0] == "stale" {
			// Rank 0's second goroutine falls asleep in a receive after
			// its main one, and wakes when rank 1 sends it: the watch
			// names the receives still stuck, not the one done.
			if c.Rank() == 1 {
				time.Sleep(400 * time.Millisecond)
				if err := c.Send([]byte("done"), 0, 20); err != nil {
					return err
				}
				_, err := c.Recv(make([]byte, 8), 0, 6)
				return fmt.Errorf("Recv returned: %v", err)
			}
			go func() {
				time.Sleep(100 * time.Millisecond)
				c.Recv(make([]byte, 8), 1, 20)
			}()
			_, err := c.Recv(make([]byte, 8), 1, 5)
			return fmt.Errorf("Recv returned: %v", err)
		}
		if a := ranktest.BodyArgs(); len(a) > 0 && a[0] == "compute" {
			if c.Rank() == 1 {
				time.Sleep(1500 * time.Millisecond)
				return c.Send([]byte("late"), 0, 5)
			}
			_, err := c.Recv(make([]byte, 8), 1, 5)
			return err
		}
		_, err := c.Recv(make([]byte, 8), 1-c.Rank(), 5+c.Rank())
		return fmt.Errorf("Recv returned: %v", err)
	})
	// p2pfreed: rank 1 Isends messages past the eager limit (up to 1
	// MiB), frees the requests and waits in a Barrier; rank 0 receives
	// them, then joins the Barrier. Under --no-single-copy only rank 1
	// can move them, from its Barrier's wait.
	ranktest.Register("p2pfreed", func(c *comm.Comm) error {
		sizes := []int{8193, 100003, 1 << 20}
		if c.Rank() == 1 {
			for i, n := range sizes {
				r, err := c.Isend(pattern(1, i, n), 0, 30+i)
				if err != nil {
					return err
				}
				if err := r.Free(); err != nil {
					return err
				}
			}
		} else if c.Rank() == 0 {
			for i, n := range sizes {
				buf := make([]byte, n)
				if _, err := c.Recv(buf, 1, 30+i); err != nil {
					return err
				}
				if !bytes.Equal(buf, pattern(1, i, n)) {
					return fmt.Errorf("message %d of %d bytes: wrong data", i, n)
				}
			}
		}
		return c.Barrier()
	})
	// p2ppostedbarrier: rank 0 posts an Irecv of a large message, then
	// waits in a Barrier; rank 1 Sends it (blocking: it waits for the
	// match), then joins the Barrier. MPI completes this: the receive is
	// posted.
	ranktest.Register("p2ppostedbarrier", func(c *comm.Comm) error {
		const n = 1 << 20
		switch c.Rank() {
		case 0:
			buf := make([]byte, n)
			r, err := c.Irecv(buf, 1, 40)
			if err != nil {
				return err
			}
			if err := c.Barrier(); err != nil {
				return err
			}
			if _, err := r.Wait(); err != nil {
				return err
			}
			if !bytes.Equal(buf, pattern(1, 40, n)) {
				return fmt.Errorf("wrong data")
			}
			return nil
		case 1:
			if err := c.Send(pattern(1, 40, n), 0, 40); err != nil {
				return err
			}
		}
		return c.Barrier()
	})
	// p2pdie: rank 1 exits while rank 0 waits in Recv from it.
	ranktest.Register("p2pdie", func(c *comm.Comm) error {
		if c.Rank() == 1 {
			time.Sleep(50 * time.Millisecond)
			os.Exit(3)
		}
		_, err := c.Recv(make([]byte, 8), 1, 0)
		if !errors.Is(err, comm.ErrAborted) {
			return fmt.Errorf("Recv from a dead rank: %v", err)
		}
		fmt.Println("rank", c.Rank(), "saw the abort")
		os.Exit(0)
		return nil
	})
}

// p2pBigExchange: ranks 0 and 1 both Isend 64 MiB to each other before
// either posts its Irecv; both complete.
func p2pBigExchange(c *comm.Comm) error {
	if c.Size() < 2 || c.Rank() > 1 {
		return c.Barrier()
	}
	const n = 64 << 20
	me, peer := c.Rank(), 1-c.Rank()
	send := pattern(me, 64, n)
	s, err := c.Isend(send, peer, 64)
	if err != nil {
		return err
	}
	recv := make([]byte, n)
	r, err := c.Irecv(recv, peer, 64)
	if err != nil {
		return err
	}
	if _, err := comm.Waitall([]*comm.Request{s, r}); err != nil {
		return err
	}
	if !bytes.Equal(recv, pattern(peer, 64, n)) {
		return errors.New("received bytes differ")
	}
	return c.Barrier()
}

// p2pAbsentSender: rank 1 Isends a large message and then computes (no
// call) while rank 0 receives it. With single copy rank 0 completes alone,
// and its answer is already there when rank 1 next looks; without it,
// rank 0 needs rank 1 to move the message, so the answer cannot be there.
// No timing is asserted: the order of events decides.
func p2pAbsentSender(c *comm.Comm, single bool) error {
	if c.Size() < 2 || c.Rank() > 1 {
		return c.Barrier()
	}
	const n = 4 << 20
	if c.Rank() == 1 {
		r, err := c.Isend(pattern(1, 77, n), 0, 77)
		if err != nil {
			return err
		}
		time.Sleep(300 * time.Millisecond) // computing
		_, answered, err := c.Iprobe(0, 78)
		if err != nil {
			return err
		}
		if answered != single {
			return fmt.Errorf("rank 0's answer there when rank 1 came back: %v; single copy: %v", answered, single)
		}
		if _, err := r.Wait(); err != nil {
			return err
		}
		if _, err := c.Recv(nil, 0, 78); err != nil {
			return err
		}
		return c.Barrier()
	}
	buf := make([]byte, n)
	if _, err := c.Recv(buf, 1, 77); err != nil || !bytes.Equal(buf, pattern(1, 77, n)) {
		return fmt.Errorf("receive from the absent sender: %v", err)
	}
	read, staged, _ := comm.P2PLarge(c)
	if (read > 0) != single {
		return fmt.Errorf("%d chunks read by single copy, %d through the ring; single copy: %v", read, staged, single)
	}
	if err := c.Send(nil, 1, 78); err != nil {
		return err
	}
	return c.Barrier()
}

// p2pWriteInPlace: rank 0 cannot read rank 1's memory (a read fault), so
// rank 1 moves every chunk of its large messages, and the counters say
// how. First, where the kernel allows it, it writes them all in place;
// then a write fails after the first batch (the rest of that message goes
// in Data packets); then a message after the failure goes in Data packets
// whole (rank 1 no longer writes, rank 0 no longer offers). Every message
// arrives intact. Without ptrace rights everything goes in Data packets.
func p2pWriteInPlace(c *comm.Comm) error {
	if c.Size() < 2 || c.Rank() > 1 {
		return c.Barrier()
	}
	const n = 4 << 20
	chunks := (n + format.P2PChunk(format.P2PRing(c.Size())) - 1) / format.P2PChunk(format.P2PRing(c.Size()))
	single := ptraceAllowed()
	if c.Rank() == 0 {
		comm.SetReadFault(errors.New("reads refused by the test"))
		defer comm.SetReadFault(nil)
	}
	for k, fault := range []int{0, 2, 0} {
		if c.Rank() == 1 {
			comm.SetWriteFaultIn(fault)
			if err := c.Send(pattern(1, 90+k, n), 0, 90+k); err != nil {
				return err
			}
			comm.SetWriteFaultIn(0)
			if err := c.Barrier(); err != nil {
				return err
			}
			continue
		}
		read0, staged0, written0 := comm.P2PLarge(c)
		buf := make([]byte, n)
		if _, err := c.Recv(buf, 1, 90+k); err != nil || !bytes.Equal(buf, pattern(1, 90+k, n)) {
			return fmt.Errorf("message %d: %v (or wrong bytes)", k, err)
		}
		read, staged, written := comm.P2PLarge(c)
		read, staged, written = read-read0, staged-staged0, written-written0
		var ok bool
		switch {
		case !single || k == 2:
			ok = read == 0 && staged == chunks && written == 0
		case k == 0:
			ok = read == 0 && staged == 0 && written == chunks
		case k == 1:
			ok = read == 0 && written > 0 && staged > 0 && written+staged == chunks
		}
		if !ok {
			return fmt.Errorf("message %d (single copy %v): %d chunks read, %d in Data packets, %d written in place, of %d",
				k, single, read, staged, written, chunks)
		}
		if err := c.Barrier(); err != nil {
			return err
		}
	}
	return nil
}

// p2pReadWhole: rank 1's writes into rank 0 fail, so after a large
// message that rank 1 answered in Data packets rank 0 offers it no more
// writes; then two large messages are matched at once, and the second,
// its line busy with the first's job, is read whole at its match instead
// of waiting for the line (the combination asymmetric ptrace rights make:
// the receiver may read its sender, not be written by it). Both arrive
// intact. Without ptrace rights everything goes in Data packets.
func p2pReadWhole(c *comm.Comm) error {
	if c.Size() < 2 || c.Rank() > 1 {
		return c.Barrier()
	}
	const n = 4 << 20
	single := ptraceAllowed()
	if c.Rank() == 1 {
		comm.SetWriteFaultIn(1)
		defer comm.SetWriteFaultIn(0)
	}
	// First messages until one came (partly) in Data packets: rank 1
	// claimed a batch, failed to write it and sent it (rank 0 may read
	// all of a message before rank 1 claims any).
	for k := 0; ; k++ {
		var staged int
		if c.Rank() == 1 {
			if err := c.Send(pattern(1, 80+k, n), 0, 80); err != nil {
				return err
			}
		} else {
			_, staged0, _ := comm.P2PLarge(c)
			buf := make([]byte, n)
			if _, err := c.Recv(buf, 1, 80); err != nil || !bytes.Equal(buf, pattern(1, 80+k, n)) {
				return fmt.Errorf("first message %d: %v (or wrong bytes)", k, err)
			}
			_, staged, _ = comm.P2PLarge(c)
			staged -= staged0
		}
		more := []int32{0}
		if staged == 0 && k < 20 {
			more[0] = 1
		}
		if err := comm.Bcast(c, more, 0); err != nil {
			return err
		}
		if more[0] == 0 {
			if c.Rank() == 0 && staged == 0 {
				return fmt.Errorf("rank 1 sent no Data packet in %d messages", k+1)
			}
			break
		}
	}
	if c.Rank() == 1 {
		r1, err := c.Isend(pattern(1, 91, n), 0, 91)
		if err != nil {
			return err
		}
		r2, err := c.Isend(pattern(1, 92, n), 0, 92)
		if err != nil {
			return err
		}
		if err := c.Barrier(); err != nil { // both RTS are in rank 0's ring
			return err
		}
		_, err = comm.Waitall([]*comm.Request{r1, r2})
		return err
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	whole0 := comm.P2PWhole(c)
	b1, b2 := make([]byte, n), make([]byte, n)
	r1, err := c.Irecv(b1, 1, 91)
	if err != nil {
		return err
	}
	r2, err := c.Irecv(b2, 1, 92)
	if err != nil {
		return err
	}
	if _, err := comm.Waitall([]*comm.Request{r1, r2}); err != nil {
		return err
	}
	if !bytes.Equal(b1, pattern(1, 91, n)) || !bytes.Equal(b2, pattern(1, 92, n)) {
		return errors.New("the two messages arrived with wrong bytes")
	}
	if whole, want := comm.P2PWhole(c)-whole0, map[bool]int{true: 1, false: 0}[single]; whole != want {
		return fmt.Errorf("%d messages read whole at their match (single copy %v), want %d", whole, single, want)
	}
	return nil
}

// p2pWaiting: messages that wait in their ring for a blocking Recv from
// their sender, which takes the eager ones it matches straight from the
// ring and leaves the rest (a truncation, a type that differs, a large
// message) to the engine, with the same answers and order.
func p2pWaiting(c *comm.Comm) error {
	if c.Size() < 2 || c.Rank() > 1 {
		return c.Barrier()
	}
	eager := format.P2PEager(format.P2PRing(c.Size()))
	big := pattern(0, 6, eager+100)
	if c.Rank() == 0 {
		for _, f := range []func() error{
			func() error { return c.Send(pattern(0, 1, 10), 1, 1) },
			func() error { return comm.SendT(c, []float64{1.5, 2.5}, 1, 2) },
			func() error { return c.Send(pattern(0, 3, 40), 1, 3) },
			func() error { return comm.SendT(c, []int32{7}, 1, 4) },
			func() error { return c.Send(nil, 1, 5) },
			c.Barrier,
			func() error { return c.Send(big, 1, 6) },
			func() error { return c.Send(pattern(0, 7, 8), 1, 7) },
		} {
			if err := f(); err != nil {
				return err
			}
		}
		return nil
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	before := comm.P2PDirect(c)
	b := make([]byte, 16)
	st, err := c.Recv(b, 0, 1)
	if err != nil || st.Count != 10 || st.Tag != 1 || st.Source != 0 || !bytes.Equal(b[:10], pattern(0, 1, 10)) {
		return fmt.Errorf("message 1: %+v, %v", st, err)
	}
	f := make([]float64, 2)
	if st, err := comm.RecvT(c, f, 0, comm.AnyTag); err != nil || st.Count != 2 || st.Tag != 2 || f[0] != 1.5 || f[1] != 2.5 {
		return fmt.Errorf("message 2: %+v, %v, %v", st, f, err)
	}
	// The next receive truncates: the engine drains the ring, setting
	// messages 4 and 5 aside, which their receives then find there.
	if d := comm.P2PDirect(c) - before; d != 2 {
		return fmt.Errorf("%d of the 2 eager messages that matched were taken from the ring", d)
	}
	if st, err := c.Recv(b, 0, 3); !errors.Is(err, comm.ErrTruncate) || st.Count != 40 {
		return fmt.Errorf("message 3 into 16 bytes: %+v, %v", st, err)
	}
	if _, err := comm.RecvT(c, make([]float32, 1), 0, 4); !errors.Is(err, comm.ErrType) {
		return fmt.Errorf("int32 into float32: %v", err)
	}
	if st, err := c.Recv(b, 0, 5); err != nil || st.Count != 0 || st.Tag != 5 {
		return fmt.Errorf("message 5: %+v, %v", st, err)
	}
	got := make([]byte, len(big))
	if st, err := c.Recv(got, 0, 6); err != nil || st.Count != len(big) || !bytes.Equal(got, big) {
		return fmt.Errorf("large message: %+v, %v", st, err)
	}
	if st, err := c.Recv(b, 0, 7); err != nil || st.Count != 8 || !bytes.Equal(b[:8], pattern(0, 7, 8)) {
		return fmt.Errorf("message 7: %+v, %v", st, err)
	}
	return nil
}

// p2pAllToAll: each rank sends rounds messages to every rank (itself
// included) with a checksum inside, posts the receives in another order,
// and checks every message.
func p2pAllToAll(c *comm.Comm, rounds int) error {
	me, size := c.Rank(), c.Size()
	var reqs []*comm.Request
	bufs := map[[2]int][]byte{}
	for k := range rounds {
		for i := range size {
			q := (me + i + k) % size
			n := 16 + (me*31+q*17+k*5)%3000
			b := pattern(me, q*rounds+k, n)
			crc := crc32.ChecksumIEEE(b[8:])
			copy(b, strconv.AppendUint(nil, uint64(crc), 16))
			r, err := c.Isend(b, q, k)
			if err != nil {
				return err
			}
			reqs = append(reqs, r)
		}
		for i := range size {
			q := (me + size - i) % size
			b := make([]byte, 4096)
			bufs[[2]int{q, k}] = b
			r, err := c.Irecv(b, q, k)
			if err != nil {
				return err
			}
			reqs = append(reqs, r)
		}
	}
	sts, err := comm.Waitall(reqs)
	if err != nil {
		return err
	}
	for _, st := range sts[len(sts)/2:] {
		_ = st
	}
	for key, b := range bufs {
		q, k := key[0], key[1]
		n := 16 + (q*31+me*17+k*5)%3000
		want := pattern(q, me*rounds+k, n)
		crc := crc32.ChecksumIEEE(want[8:])
		copy(want, strconv.AppendUint(nil, uint64(crc), 16))
		if !bytes.Equal(b[:n], want) {
			return fmt.Errorf("message %d from %d: checksum or bytes differ", k, q)
		}
	}
	return nil
}

func TestP2PLocal(t *testing.T) {
	for _, n := range []int{1, 2, 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			ranktest.RunLocal(t, n, func(c *comm.Comm) error { return p2pAll(c, false) })
		})
	}
}

func TestP2PAllToAllLocal(t *testing.T) {
	ranktest.RunLocal(t, 8, func(c *comm.Comm) error { return p2pAllToAll(c, 2) })
}

func TestP2PProcs(t *testing.T) { ranktest.Run(t, 3, "p2p") }

func TestP2PWriteInPlaceProcs(t *testing.T) { ranktest.Run(t, 2, "p2pwrite") }

func TestP2PReadWholeProcs(t *testing.T) { ranktest.Run(t, 2, "p2pwhole") }

func TestP2PStreamedProcs(t *testing.T) { ranktest.Run(t, 2, "p2p", ranktest.Args("off")) }

// A rank whose freed Isends are still in flight moves them on from a
// Barrier's wait (under --no-single-copy only the sender can: it waited
// in the Barrier for ever).
func TestP2PFreedSendsProgressInBarrier(t *testing.T) {
	for _, off := range []bool{false, true} {
		ranktest.Run(t, 2, "p2pfreed", ranktest.Configure(func(c *launcher.Config) {
			c.NoSingleCopy = off
			c.DeadlockAfter = 2 * time.Second
		}))
	}
}

// A rank waiting in a Barrier matches a message to the receive it posted
// before, which its sender's blocking Send waits for (in a wait that
// slept unwoken: within the policy's sleep, 50 ms).
func TestP2PPostedReceiveMatchedInBarrier(t *testing.T) {
	for _, off := range []bool{false, true} {
		ranktest.Run(t, 2, "p2ppostedbarrier", ranktest.Configure(func(c *launcher.Config) {
			c.NoSingleCopy = off
			c.DeadlockAfter = 2 * time.Second
		}))
	}
}

func TestP2PNoSingleCopyFlag(t *testing.T) {
	ranktest.Run(t, 2, "p2p", ranktest.Configure(func(c *launcher.Config) { c.NoSingleCopy = true }))
}

func TestP2POversubscribedProcs(t *testing.T) {
	n := 64
	if testing.Short() {
		n = 16
	}
	ranktest.Run(t, n, "p2pall", ranktest.Configure(func(c *launcher.Config) { c.Oversubscribe = true }))
}

// Two ranks that both receive first are ended by the deadlock watch, which
// names both waits (never a wait that has ended since); a rank that computes is never taken for blocked, even
// with another of its goroutines asleep in a wait.
func TestP2PDeadlockWatch(t *testing.T) {
	res := ranktest.Run(t, 2, "p2pdeadlock", ranktest.ExitCode(launcher.DeadlockExitCode),
		ranktest.Configure(func(c *launcher.Config) { c.DeadlockAfter = 300 * time.Millisecond }))
	for _, want := range []string{"deadlock", "rank 0 waits in a receive from rank 1 with tag 5", "rank 1 waits in a receive from rank 0 with tag 6"} {
		if !strings.Contains(res.Stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, res.Stderr)
		}
	}
	ranktest.Run(t, 2, "p2pdeadlock", ranktest.Args("compute"),
		ranktest.Configure(func(c *launcher.Config) { c.DeadlockAfter = 300 * time.Millisecond }))
	// Asleep on one goroutine, computing on another: not blocked.
	ranktest.Run(t, 2, "p2pdeadlock", ranktest.Args("threaded"),
		ranktest.Configure(func(c *launcher.Config) { c.DeadlockAfter = 300 * time.Millisecond }))
	// Both large sends wait for their CTS: a transfer in flight, which
	// every wait polls for (barrier.Idle), backing off while it stands
	// still, so that the watch still finds the ranks idle over a longer
	// period, in either copy mode (polling every millisecond looked like
	// computing to it).
	for _, tc := range []struct {
		after time.Duration
		off   bool
	}{{300 * time.Millisecond, false}, {2 * time.Second, false}, {2 * time.Second, true}} {
		res = ranktest.Run(t, 2, "p2pdeadlock", ranktest.Args("send"), ranktest.ExitCode(launcher.DeadlockExitCode),
			ranktest.Timeout(30*time.Second),
			ranktest.Configure(func(c *launcher.Config) { c.DeadlockAfter, c.NoSingleCopy = tc.after, tc.off }))
		for _, want := range []string{"rank 0 waits in a send to rank 1 with tag 7", "rank 1 waits in a send to rank 0 with tag 7"} {
			if !strings.Contains(res.Stderr, want) {
				t.Errorf("%v, no single copy %v: stderr lacks %q:\n%s", tc.after, tc.off, want, res.Stderr)
			}
		}
	}
	res = ranktest.Run(t, 2, "p2pdeadlock", ranktest.Args("stale"), ranktest.ExitCode(launcher.DeadlockExitCode),
		ranktest.Configure(func(c *launcher.Config) { c.DeadlockAfter = 300 * time.Millisecond }))
	for _, want := range []string{"rank 0 waits in a receive from rank 1 with tag 5", "rank 1 waits in a receive from rank 0 with tag 6"} {
		if !strings.Contains(res.Stderr, want) {
			t.Errorf("stale: stderr lacks %q:\n%s", want, res.Stderr)
		}
	}
	res = ranktest.Run(t, 2, "p2pdeadlock", ranktest.Args("barrier"), ranktest.ExitCode(launcher.DeadlockExitCode),
		ranktest.Configure(func(c *launcher.Config) { c.DeadlockAfter = 300 * time.Millisecond }))
	for _, want := range []string{"rank 0 waits in a receive from rank 1 with tag 3", "rank 1 waits in a collective call or a window's synchronization"} {
		if !strings.Contains(res.Stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, res.Stderr)
		}
	}
}

// A rank that dies while another waits in Recv from it ends the job with
// its status (the waiter either sees ErrAborted or is stopped by the
// launcher first): no hang.
func TestP2PRankDies(t *testing.T) {
	res := ranktest.Run(t, 2, "p2pdie", ranktest.ExitCode(3))
	if !strings.Contains(res.Stderr, "rank 1") {
		t.Errorf("the launcher does not name rank 1; stderr:\n%s", res.Stderr)
	}
}

// TestCancelWhileWaiting: a receive one goroutine waits on is cancelled
// from another; the Wait returns with Cancelled (Cancel must not wait for
// the Wait to end).
func TestCancelWhileWaiting(t *testing.T) {
	world, err := comm.NewLocalWorld(1)
	if err != nil {
		t.Fatal(err)
	}
	c := world[0]
	defer c.Finalize()
	r, err := c.Irecv(make([]byte, 8), 0, 99)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan comm.Status, 1)
	go func() {
		st, _ := r.Wait()
		done <- st
	}()
	time.Sleep(20 * time.Millisecond) // let the Wait block (no timing is asserted)
	if err := r.Cancel(); err != nil {
		t.Fatal(err)
	}
	select {
	case st := <-done:
		if !st.Cancelled {
			t.Fatalf("Wait returned %+v, want Cancelled", st)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Wait did not return after Cancel")
	}
}

// TestAbortWithLargeSendsInFlight: a job aborted while large messages
// wait for their receivers (a blocking Send and an Isend) leaves no
// buffer pinned: the sends return the abort, and the garbage collector
// later finds no runtime.Pinner still pinning (it would panic).
func TestAbortWithLargeSendsInFlight(t *testing.T) {
	cs, err := comm.NewLocalWorld(2)
	if err != nil {
		t.Fatal(err)
	}
	big := 4 * format.P2PEager(format.P2PRing(2))
	errs := make(chan error, 2)
	go func() {
		r, err := cs[0].Isend(make([]byte, big), 1, 1)
		if err != nil {
			errs <- err
			return
		}
		errs <- cs[0].Send(make([]byte, big), 1, 2)
		_, err = r.Wait()
		errs <- err
	}()
	time.Sleep(50 * time.Millisecond) // both RTS sent, nobody receives
	cs[1].Abort(3)
	for range 2 {
		if err := <-errs; !errors.Is(err, comm.ErrAborted) {
			t.Fatalf("a send in an aborted job returned %v", err)
		}
	}
	cs = nil
	for range 3 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the finalizers run
	}
}

// TestP2PSameBufferLocal: one buffer in two large Isends at once (MPI
// allows a send buffer in several sends). In the goroutine mode, where a
// rank copies from the other's slice by address, the first send's
// completion must not take away the second's buffer.
func TestP2PSameBufferLocal(t *testing.T) {
	const size = 256 << 10
	ranktest.RunLocal(t, 2, func(c *comm.Comm) error {
		if c.Rank() == 0 {
			buf := bytes.Repeat([]byte{7}, size)
			r1, err := c.Isend(buf, 1, 0)
			if err != nil {
				return err
			}
			r2, err := c.Isend(buf[:size/2], 1, 0) // the same address, shorter
			if err != nil {
				return err
			}
			if _, err := r1.Wait(); err != nil {
				return err
			}
			if err := c.Send(nil, 1, 1); err != nil { // the first send is complete
				return err
			}
			_, err = r2.Wait()
			return err
		}
		got := make([]byte, size)
		for i, want := range []int{size, size / 2} {
			if i == 1 {
				if _, err := c.Recv(nil, 0, 1); err != nil {
					return err
				}
			}
			clear(got)
			st, err := c.Recv(got, 0, 0)
			if err != nil {
				return fmt.Errorf("message %d: %w", i, err)
			}
			if st.Count != want || !bytes.Equal(got[:want], bytes.Repeat([]byte{7}, want)) {
				return fmt.Errorf("message %d: %d bytes, want %d of 7s", i, st.Count, want)
			}
		}
		return nil
	})
}
