//go:build !mpi

package comm_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/internal/raw"
)

// p2pPersistent: persistent requests around a ring, every form and size
// class (eager, and past the eager limit: single copy or streamed between
// processes), restarted many times with new data; the statuses, the
// inactive state between starts, what Waitall and its kind do to them,
// ProcNull, Cancel, truncation, Free, and the errors of Start.
func p2pPersistent(c *comm.Comm, procs bool) error {
	me, n := c.Rank(), c.Size()
	to, from := (me+1)%n, (me+n-1)%n
	sizes := []int{0, 8, 1000, 64 << 10}
	if procs {
		sizes = append(sizes, 1<<20)
	}
	for si, size := range sizes {
		tag := 100 + si
		sbuf, rbuf := make([]byte, size), make([]byte, size)
		rq, err := c.RecvInit(rbuf, from, tag)
		if err != nil {
			return err
		}
		sq, err := c.SendInit(sbuf, to, tag)
		if err != nil {
			return err
		}
		reqs := []*comm.Request{rq, sq}
		for k := range 20 {
			copy(sbuf, pattern(me, k, size))
			if err := comm.Startall(reqs); err != nil {
				return fmt.Errorf("size %d, start %d: %w", size, k, err)
			}
			sts, err := comm.Waitall(reqs)
			if err != nil {
				return fmt.Errorf("size %d, start %d: %w", size, k, err)
			}
			if reqs[0] != rq || reqs[1] != sq {
				return fmt.Errorf("size %d: Waitall changed the entries of persistent requests: %v", size, reqs)
			}
			if st := sts[0]; st.Source != from || st.Tag != tag || st.Count != size || st.Cancelled {
				return fmt.Errorf("size %d, start %d: receive status %+v", size, k, st)
			}
			if !bytes.Equal(rbuf, pattern(from, k, size)) {
				return fmt.Errorf("size %d, start %d: wrong data", size, k)
			}
		}
		// Inactive: Wait and Test return the empty status at once; the
		// calls on several requests see nothing active.
		if st, err := rq.Wait(); st != emptyStatus || err != nil {
			return fmt.Errorf("Wait on an inactive request: %+v, %v", st, err)
		}
		if st, ok, err := sq.Test(); st != emptyStatus || !ok || err != nil {
			return fmt.Errorf("Test on an inactive request: %+v, %v, %v", st, ok, err)
		}
		if i, _, err := comm.Waitany(reqs); i != comm.Undefined || err != nil {
			return fmt.Errorf("Waitany of inactive requests: %d, %v", i, err)
		}
		if i, _, ok, err := comm.Testany(reqs); i != comm.Undefined || !ok || err != nil {
			return fmt.Errorf("Testany of inactive requests: %d, %v, %v", i, ok, err)
		}
		if idx, _, err := comm.Waitsome(reqs); idx != nil || err != nil {
			return fmt.Errorf("Waitsome of inactive requests: %v, %v", idx, err)
		}
		// Testall polls without losing a persistent request's outcome.
		copy(sbuf, pattern(me, 98, size))
		if err := comm.Startall(reqs); err != nil {
			return err
		}
		for {
			sts, ok, err := comm.Testall(reqs)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			if st := sts[0]; st.Source != from || st.Tag != tag || st.Count != size {
				return fmt.Errorf("size %d: Testall's receive status %+v", size, st)
			}
			break
		}
		if !bytes.Equal(rbuf, pattern(from, 98, size)) {
			return fmt.Errorf("size %d, after Testall: wrong data", size)
		}
		// Waitany and Waitsome complete active ones and leave them.
		copy(sbuf, pattern(me, 99, size))
		if err := comm.Startall(reqs); err != nil {
			return err
		}
		for left := 2; left > 0; {
			idx, _, err := comm.Waitsome(reqs)
			if err != nil {
				return err
			}
			left -= len(idx)
			if reqs[0] != rq || reqs[1] != sq {
				return fmt.Errorf("size %d: Waitsome changed the entries of persistent requests", size)
			}
		}
		if !bytes.Equal(rbuf, pattern(from, 99, size)) {
			return fmt.Errorf("size %d, after Waitsome: wrong data", size)
		}
		if err := errors.Join(rq.Free(), sq.Free()); err != nil {
			return err
		}
		if err := rq.Start(); !errors.Is(err, comm.ErrRequest) {
			return fmt.Errorf("Start of a freed request = %v, want ErrRequest", err)
		}
		if _, err := sq.Wait(); !errors.Is(err, comm.ErrRequest) {
			return fmt.Errorf("Wait on a freed request = %v, want ErrRequest", err)
		}
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	if err := persistTyped(c, to, from); err != nil {
		return fmt.Errorf("typed: %w", err)
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	return persistEdges(c, to, from)
}

// persistTyped: the generic and the datatype forms; Count in elements or
// instances, a strided column sent and received in place.
func persistTyped(c *comm.Comm, to, from int) error {
	me := c.Rank()
	src, dst := make([]int64, 5), make([]int64, 5)
	rq, err := comm.RecvInitT(c, dst, from, 7)
	if err != nil {
		return err
	}
	sq, err := comm.SendInitT(c, src, to, 7)
	if err != nil {
		return err
	}
	const rows, cols = 100, 4
	col := mustType(dtype.Vector(rows, 1, cols, dtype.Basic(atomics.Float64)))
	smat, rmat := make([]float64, rows*cols), make([]float64, rows*cols)
	rv, err := c.RecvInitType(raw.Bytes(rmat), 1, col, from, 8)
	if err != nil {
		return err
	}
	sv, err := c.SendInitType(raw.Bytes(smat), 1, col, to, 8)
	if err != nil {
		return err
	}
	reqs := []*comm.Request{rq, sq, rv, sv}
	for k := range 10 {
		for i := range src {
			src[i] = int64(me*1000 + k*10 + i)
		}
		for i := range smat {
			smat[i] = float64(me*100000 + k*1000 + i)
		}
		if err := comm.Startall(reqs); err != nil {
			return err
		}
		sts, err := comm.Waitall(reqs)
		if err != nil {
			return err
		}
		if sts[0].Count != len(dst) || sts[2].Count != 1 {
			return fmt.Errorf("start %d: counts %d elements, %d columns", k, sts[0].Count, sts[2].Count)
		}
		for i, v := range dst {
			if v != int64(from*1000+k*10+i) {
				return fmt.Errorf("start %d: element %d is %d", k, i, v)
			}
		}
		for i, v := range rmat {
			want := 0.0 // only the column moves: the rest stays zero
			if i%cols == 0 {
				want = float64(from*100000 + k*1000 + i)
			}
			if v != want {
				return fmt.Errorf("start %d: matrix element %d is %v, want %v", k, i, v, want)
			}
		}
	}
	return nil
}

// persistEdges: ProcNull, Cancel, truncation, Ssend, and Start's errors.
func persistEdges(c *comm.Comm, to, from int) error {
	pn, err := c.RecvInit(make([]byte, 4), comm.ProcNull, comm.AnyTag)
	if err != nil {
		return err
	}
	ps, err := c.SendInit(make([]byte, 4), comm.ProcNull, 0)
	if err != nil {
		return err
	}
	for range 3 {
		if err := comm.Startall([]*comm.Request{pn, ps}); err != nil {
			return err
		}
		if st, err := pn.Wait(); st.Source != comm.ProcNull || st.Tag != comm.AnyTag || st.Count != 0 || err != nil {
			return fmt.Errorf("receive from ProcNull: %+v, %v", st, err)
		}
		if st, err := ps.Wait(); st != (comm.Status{}) || err != nil {
			return fmt.Errorf("send to ProcNull: %+v, %v", st, err)
		}
	}
	// Cancel: no message ever has this tag; restart and cancel again.
	cr, err := c.RecvInit(make([]byte, 4), from, 999)
	if err != nil {
		return err
	}
	for k := range 3 {
		if err := cr.Start(); err != nil {
			return err
		}
		if err := cr.Start(); !errors.Is(err, comm.ErrRequest) {
			return fmt.Errorf("Start of an active request = %v, want ErrRequest", err)
		}
		if err := cr.Cancel(); err != nil {
			return err
		}
		if st, err := cr.Wait(); !st.Cancelled || err != nil {
			return fmt.Errorf("cancelled start %d: %+v, %v", k, st, err)
		}
	}
	// Truncation, then a start that fits; Ssend's completes once matched.
	tr, err := c.RecvInit(make([]byte, 3), from, 5)
	if err != nil {
		return err
	}
	ss, err := c.SsendInit([]byte{1, 2, 3, 4}, to, 5)
	if err != nil {
		return err
	}
	if err := comm.Startall([]*comm.Request{tr, ss}); err != nil {
		return err
	}
	if _, err := ss.Wait(); err != nil {
		return err
	}
	if st, err := tr.Wait(); !errors.Is(err, comm.ErrTruncate) || st.Count != 4 {
		return fmt.Errorf("truncated receive: %+v, %v", st, err)
	}
	if err := c.Send([]byte{9}, to, 5); err != nil {
		return err
	}
	if err := tr.Start(); err != nil {
		return err
	}
	if st, err := tr.Wait(); err != nil || st.Count != 1 {
		return fmt.Errorf("receive after a truncated one: %+v, %v", st, err)
	}
	// Errors: of the arguments at Init, of Start on other requests.
	if _, err := c.SendInit(nil, c.Size(), 0); !errors.Is(err, comm.ErrRank) {
		return fmt.Errorf("SendInit to rank %d = %v, want ErrRank", c.Size(), err)
	}
	if _, err := c.RecvInit(nil, 0, -5); !errors.Is(err, comm.ErrTag) {
		return fmt.Errorf("RecvInit with tag -5 = %v, want ErrTag", err)
	}
	r, err := c.Isend(nil, comm.ProcNull, 0)
	if err != nil {
		return err
	}
	if err := r.Start(); !errors.Is(err, comm.ErrRequest) {
		return fmt.Errorf("Start of an Isend's request = %v, want ErrRequest", err)
	}
	if err := (*comm.Request)(nil).Start(); !errors.Is(err, comm.ErrRequest) {
		return fmt.Errorf("Start of nil = %v, want ErrRequest", err)
	}
	if err := comm.Startall([]*comm.Request{nil, r}); !errors.Is(err, comm.ErrRequest) {
		return fmt.Errorf("Startall with an Isend's request = %v, want ErrRequest", err)
	}
	return nil
}

// TestPersistentAllocs holds persistent requests to their purpose: a loop
// of Start and Wait to oneself allocates nothing.
func TestPersistentAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	ranktest.RunLocal(t, 1, func(c *comm.Comm) error {
		sbuf, rbuf := make([]byte, 8), make([]byte, 8)
		rq, err := c.RecvInit(rbuf, 0, 1)
		if err != nil {
			return err
		}
		sq, err := c.SendInit(sbuf, 0, 1)
		if err != nil {
			return err
		}
		var ferr error
		allocs := testing.AllocsPerRun(1000, func() {
			sbuf[0]++
			if err := errors.Join(rq.Start(), sq.Start()); err != nil {
				ferr = err
			}
			if _, err := sq.Wait(); err != nil {
				ferr = err
			}
			if _, err := rq.Wait(); err != nil {
				ferr = err
			}
		})
		if ferr != nil {
			return ferr
		}
		if rbuf[0] != sbuf[0] {
			return fmt.Errorf("received %d, sent %d", rbuf[0], sbuf[0])
		}
		if allocs != 0 {
			return fmt.Errorf("%v allocations a message", allocs)
		}
		return nil
	})
}

// TestWindowAllocs: a window of Irecvs and eager Isends to oneself, waited
// for with WaitallInto, allocates about one block of requests per 32
// messages of each kind, not one per message (the garbage collector's
// work in a message-rate loop).
func TestWindowAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	ranktest.RunLocal(t, 1, func(c *comm.Comm) error {
		const window = 64
		sbuf, rbuf := make([]byte, 8*window), make([]byte, 8*window)
		reqs := make([]*comm.Request, 2*window)
		sts := make([]comm.Status, 2*window)
		var ferr error
		allocs := testing.AllocsPerRun(200, func() {
			for j := range window {
				r, err := c.Irecv(rbuf[8*j:8*j+8], 0, 1)
				if err != nil {
					ferr = err
					return
				}
				reqs[j] = r
			}
			for j := range window {
				sbuf[8*j]++
				r, err := c.Isend(sbuf[8*j:8*j+8], 0, 1)
				if err != nil {
					ferr = err
					return
				}
				reqs[window+j] = r
			}
			if err := comm.WaitallInto(reqs, sts); err != nil {
				ferr = err
			}
		})
		if ferr != nil {
			return ferr
		}
		if !bytes.Equal(rbuf, sbuf) {
			return fmt.Errorf("received %v, sent %v", rbuf, sbuf)
		}
		if perMsg := allocs / window; perMsg > 0.2 {
			return fmt.Errorf("%.2f allocations a message (%v a window of %d)", perMsg, allocs, window)
		}
		return nil
	})
}

// TestPersistFreeActiveTypedLocal: Free of an active persistent receive
// lets its operation complete (MPI 4.1 §3.7.3), so the message it matched
// lands in its buffer, a strided column too.
func TestPersistFreeActiveTypedLocal(t *testing.T) {
	freeActiveTyped(t, func(c *comm.Comm, buf []byte, col *dtype.Type) (*comm.Request, error) {
		r, err := c.RecvInitType(buf, 1, col, 0, 8)
		if err == nil {
			err = r.Start()
		}
		return r, err
	})
}

// TestFreeActiveTypedIrecvLocal: Free of an active nonblocking receive
// into a derived datatype (MPI_Request_free) lets its data reach the
// buffer, as for a persistent one: the scatter its Wait would have run
// runs when it completes.
func TestFreeActiveTypedIrecvLocal(t *testing.T) {
	freeActiveTyped(t, func(c *comm.Comm, buf []byte, col *dtype.Type) (*comm.Request, error) {
		return c.IrecvType(buf, 1, col, 0, 8)
	})
}

// freeActiveTyped: rank 1 starts a receive of a matrix column (recv),
// frees its request before the message comes (a Barrier orders rank 0's
// send after the Free), and checks the column once a second message,
// sent after the first, is here.
func freeActiveTyped(t *testing.T, recv func(c *comm.Comm, buf []byte, col *dtype.Type) (*comm.Request, error)) {
	ranktest.RunLocal(t, 2, func(c *comm.Comm) error {
		const rows, cols = 8, 4
		col := mustType(dtype.Vector(rows, 1, cols, dtype.Basic(atomics.Float64)))
		mat := make([]float64, rows*cols)
		if c.Rank() == 0 {
			for i := range mat {
				mat[i] = float64(i + 1)
			}
			if err := c.Barrier(); err != nil {
				return err
			}
			if err := c.SendType(raw.Bytes(mat), 1, col, 1, 8); err != nil {
				return err
			}
			return c.Send([]byte{1}, 1, 9)
		}
		r, err := recv(c, raw.Bytes(mat), col)
		if err != nil {
			return err
		}
		if err := r.Free(); err != nil {
			return err
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		// The second message comes after the first: once it is here, the
		// first has been received.
		if _, err := c.Recv(make([]byte, 1), 0, 9); err != nil {
			return err
		}
		for i := 0; i < rows; i++ {
			if v, want := mat[i*cols], float64(i*cols+1); v != want {
				return fmt.Errorf("column element %d is %v, want %v", i, v, want)
			}
		}
		return nil
	})
}

// emptyStatus is MPI's empty status (MPI 4.1 §3.7.3), what an inactive
// request's Wait and Test return.
var emptyStatus = comm.Status{Source: comm.AnySource, Tag: comm.AnyTag}
