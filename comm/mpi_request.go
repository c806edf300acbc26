//go:build mpi

package comm

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/internal/mpi"
	"github.com/shmrun/shmrun/internal/raw"
)

// Request is a nonblocking operation in progress (MPI_Request). Under the
// MPI backend it holds the MPI's request and the memory the MPI works on
// until the operation completes: a small message's in a block of C memory
// (a receive's copied into buf on completion), a larger one's buffer
// pinned (runtime.Pinner), a persistent request's until Free; a
// nonblocking collective's is an MPI generalized request its worker
// completes (nbc.go). Once complete, Wait and Test keep
// returning its outcome. The zero Request is complete with the empty
// status, as MPI_REQUEST_NULL is. A persistent request (SendInit, RecvInit)
// is inactive between its completion and the next Start: Wait and Test
// return the empty status at once. One goroutine at a time may complete a
// given request, as MPI requires.
type Request struct {
	h          mpi.Request
	live       bool // h is an operation not yet completed
	size       int  // bytes an element (the typed forms' Count); 0: 1
	persistent bool
	freed      bool
	done       bool // complete: st and err are its outcome (persistent: a started ProcNull request's, once)
	st         Status
	err        error

	// The memory the MPI works on: small messages in a block of C memory
	// (a receive's copied back into back when it completes), larger ones
	// and persistent requests' buffers pinned (in x).
	small []byte
	back  []byte

	// x holds what few requests need, so that a small message's request
	// stays small (one is allocated a message).
	x *reqExtra
}

// reqExtra is the part of a Request that large messages, persistent
// requests and the typed forms need.
type reqExtra struct {
	pin    runtime.Pinner
	pinned bool

	// The typed forms: before packs a send's instances (again at each
	// Start of a persistent one), after unpacks a receive's n bytes into
	// the caller's instances when it completes.
	before func()
	after  func(n int)

	// job is a nonblocking collective's (nbc.go) or an Isendrecv's
	// (isendrecv_mpi.go): its outcome is the request's, with the status
	// jobSt (an Isendrecv's receive's), set before job.done is closed.
	job   *nbcJob
	jobSt Status

	// coll starts a persistent collective's operation (pcoll.go): a
	// nonblocking collective's request, whose MPI request and job the
	// persistent one takes for that operation.
	coll func() (*Request, error)
	// dropColl is a persistent collective's Free: its communicator
	// counts it (holdColl).
	dropColl func()

	// nbc is a nonblocking collective's call: Cancel and Free refuse its
	// request (MPI 4.1 §6.12).
	nbc string
}

// extra returns r.x, made on first use.
func (r *Request) extra() *reqExtra {
	if r.x == nil {
		r.x = new(reqExtra)
	}
	return r.x
}

// smallMsg is the largest message a nonblocking call moves through C
// memory rather than pinning: a pin costs a runtime special record and a
// finalizer, several times the copy.
const smallMsg = 256

// smallBlocks are free blocks of smallMsg bytes of C memory, allocated 64
// at a time and kept for the process's life.
var smallBlocks struct {
	sync.Mutex
	free [][]byte
}

func smallAlloc() []byte {
	smallBlocks.Lock()
	if len(smallBlocks.free) == 0 {
		chunk := mpi.CAlloc(64 * smallMsg)
		for i := range 64 {
			smallBlocks.free = append(smallBlocks.free, chunk[i*smallMsg:(i+1)*smallMsg:(i+1)*smallMsg])
		}
	}
	b := smallBlocks.free[len(smallBlocks.free)-1]
	smallBlocks.free = smallBlocks.free[:len(smallBlocks.free)-1]
	smallBlocks.Unlock()
	return b
}

// smallFree gives back blocks from smallAlloc, all under one lock (a
// Waitall gives back its window's together).
func smallFree(bs ...[]byte) {
	smallBlocks.Lock()
	smallBlocks.free = append(smallBlocks.free, bs...)
	smallBlocks.Unlock()
}

// msgBuf returns the memory an operation on buf hands the MPI: a C block
// holding a small send's bytes (or waiting for a small receive's), else
// buf itself, pinned until the operation completes (a persistent
// request's until Free).
func (r *Request) msgBuf(buf []byte, send bool) []byte {
	if len(buf) == 0 {
		return buf
	}
	if len(buf) <= smallMsg && !r.persistent {
		r.small = smallAlloc()
		if !send {
			// The whole block: a longer message shows in the count.
			r.back = buf
			return r.small
		}
		copy(r.small, buf)
		return r.small[:len(buf)]
	}
	x := r.extra()
	x.pin.Pin(&buf[0])
	x.pinned = true
	pinnedOps.Store(x, struct{}{})
	return buf
}

// pinnedOps holds the pins of every operation whose buffer the MPI may
// still use, until release: a Request the program drops before its
// operation completes (or a persistent one freed while active) would
// otherwise take its runtime.Pinner to the collector, which ends the
// process ("found leaking pinned pointer").
var pinnedOps sync.Map // *reqExtra -> struct{}

// release gives back what msgBuf took, copying a small receive's bytes
// (n of them) to the caller's buffer first. With a non-nil blocks, a C
// block is added to it for the caller to give back, else given back now.
func (r *Request) release(n int, blocks *[][]byte) {
	if r.small != nil {
		if r.back != nil {
			copy(r.back, r.small[:min(n, len(r.back))])
		}
		if blocks != nil {
			*blocks = append(*blocks, r.small)
		} else {
			smallFree(r.small)
		}
		r.small, r.back = nil, nil
	}
	if r.x != nil && r.x.pinned {
		r.x.pin.Unpin()
		r.x.pinned = false
		pinnedOps.Delete(r.x)
	}
}

// started finishes making a request whose operation the MPI has (or,
// with err, has refused).
func (r *Request) started(call string, h mpi.Request, err error) (*Request, error) {
	if err != nil {
		r.release(0, nil)
		return nil, mpiError(call, err)
	}
	r.h = h
	return r, nil
}

// reqChunk is where newLive takes requests from: a message-rate loop
// makes a request a message, and one allocation of 64 costs less than 64
// (with the collector's work on each). A chunk is never reused: it lives
// while any of its requests does.
var reqChunk struct {
	sync.Mutex
	free []Request
}

// newLive returns a new live request.
func newLive() *Request {
	reqChunk.Lock()
	if len(reqChunk.free) == 0 {
		reqChunk.free = make([]Request, 64)
	}
	r := &reqChunk.free[0]
	reqChunk.free = reqChunk.free[1:]
	reqChunk.Unlock()
	r.live = true
	return r
}

// nullRequest is the request of an operation with ProcNull: complete, with
// ProcNull's status, or, persistent, inactive until Start.
func nullRequest(persistent bool, recv bool) *Request {
	r := &Request{done: !persistent, persistent: persistent, h: mpi.RequestNull()}
	if recv {
		r.st = Status{Source: ProcNull, Tag: AnyTag}
	}
	return r
}

// Isend starts a send of buf to dest with tag (MPI_Isend of bytes). Local.
// buf must not change until the request completes.
func (c *Comm) Isend(buf []byte, dest, tag int) (*Request, error) {
	return c.isend("Isend", buf, dest, tag, false)
}

// Issend is Isend whose request completes only once the receive has
// matched (MPI_Issend). Local.
func (c *Comm) Issend(buf []byte, dest, tag int) (*Request, error) {
	return c.isend("Issend", buf, dest, tag, true)
}

func (c *Comm) isend(call string, buf []byte, dest, tag int, sync bool) (*Request, error) {
	d, t, err := c.sendArgs(call, dest, tag)
	if err != nil {
		return nil, err
	}
	if dest == ProcNull {
		return nullRequest(false, false), nil
	}
	kind := mpi.OpIsend
	if sync {
		kind = mpi.OpIssend
	}
	r := newLive()
	h, err := c.h.NewRequest(kind, r.msgBuf(buf, true), d, t)
	return r.started(call, h, err)
}

// Irecv starts a receive into buf from src (or AnySource) with tag (or
// AnyTag) (MPI_Irecv of bytes). Local.
func (c *Comm) Irecv(buf []byte, src, tag int) (*Request, error) {
	return c.irecv("Irecv", buf, src, tag)
}

func (c *Comm) irecv(call string, buf []byte, src, tag int) (*Request, error) {
	s, t, err := c.recvArgs(call, src, tag)
	if err != nil {
		return nil, err
	}
	if src == ProcNull {
		return nullRequest(false, true), nil
	}
	r := newLive()
	h, err := c.h.NewRequest(mpi.OpIrecv, r.msgBuf(buf, false), s, t)
	return r.started(call, h, err)
}

// SendInit makes a persistent send request of buf to dest with tag
// (MPI_Send_init): each Start sends buf's current contents. Local.
func (c *Comm) SendInit(buf []byte, dest, tag int) (*Request, error) {
	return c.sendInit("SendInit", buf, dest, tag, false)
}

// SsendInit is SendInit of synchronous sends (MPI_Ssend_init). Local.
func (c *Comm) SsendInit(buf []byte, dest, tag int) (*Request, error) {
	return c.sendInit("SsendInit", buf, dest, tag, true)
}

func (c *Comm) sendInit(call string, buf []byte, dest, tag int, sync bool) (*Request, error) {
	d, t, err := c.sendArgs(call, dest, tag)
	if err != nil {
		return nil, err
	}
	if dest == ProcNull {
		return nullRequest(true, false), nil
	}
	kind := mpi.OpSendInit
	if sync {
		kind = mpi.OpSsendInit
	}
	r := &Request{persistent: true}
	h, err := c.h.NewRequest(kind, r.msgBuf(buf, true), d, t)
	return r.started(call, h, err)
}

// RecvInit makes a persistent receive request into buf (MPI_Recv_init).
// Local.
func (c *Comm) RecvInit(buf []byte, src, tag int) (*Request, error) {
	s, t, err := c.recvArgs("RecvInit", src, tag)
	if err != nil {
		return nil, err
	}
	if src == ProcNull {
		return nullRequest(true, true), nil
	}
	r := &Request{persistent: true}
	h, err := c.h.NewRequest(mpi.OpRecvInit, r.msgBuf(buf, false), s, t)
	return r.started("RecvInit", h, err)
}

// Ibarrier starts a barrier (MPI_Ibarrier): its request completes once
// every rank of c has called Ibarrier. Collective, local.
func (c *Comm) Ibarrier() (*Request, error) {
	if err := c.usable("Ibarrier"); err != nil {
		return nil, err
	}
	h, err := c.h.Ibarrier()
	r := &Request{live: true}
	r.extra().nbc = "Ibarrier"
	return r.started("Ibarrier", h, err)
}

// IsendT is Isend of elements (MPI_Isend). Local.
func IsendT[T atomics.Elem](c *Comm, buf []T, dest, tag int) (*Request, error) {
	if t := pairOf[T](); t != nil {
		return c.isendType("IsendT", raw.Bytes(buf), len(buf), t, dest, tag, false)
	}
	return c.Isend(raw.Bytes(buf), dest, tag)
}

// IrecvT is Irecv of elements (MPI_Irecv); its status's Count is in
// elements. Local.
func IrecvT[T atomics.Elem](c *Comm, buf []T, src, tag int) (*Request, error) {
	if t := pairOf[T](); t != nil {
		return c.irecvType("IrecvT", raw.Bytes(buf), len(buf), t, src, tag)
	}
	r, err := c.Irecv(raw.Bytes(buf), src, tag)
	if r != nil {
		r.size = atomics.SizeOf[T]()
	}
	return r, err
}

// SendInitT is SendInit of elements (MPI_Send_init). Local.
func SendInitT[T atomics.Elem](c *Comm, buf []T, dest, tag int) (*Request, error) {
	if t := pairOf[T](); t != nil {
		return c.SendInitType(raw.Bytes(buf), len(buf), t, dest, tag)
	}
	return c.SendInit(raw.Bytes(buf), dest, tag)
}

// RecvInitT is RecvInit of elements (MPI_Recv_init); Count is in
// elements. Local.
func RecvInitT[T atomics.Elem](c *Comm, buf []T, src, tag int) (*Request, error) {
	if t := pairOf[T](); t != nil {
		return c.RecvInitType(raw.Bytes(buf), len(buf), t, src, tag)
	}
	r, err := c.RecvInit(raw.Bytes(buf), src, tag)
	if r != nil {
		r.size = atomics.SizeOf[T]()
	}
	return r, err
}

// finish records the outcome of r's operation, which the MPI has just
// completed; blocks is release's.
func (r *Request) finish(rs *mpi.ReqStatus, call string, blocks *[][]byte) (Status, error) {
	r.live = false
	if r.x != nil && r.x.job != nil {
		<-r.x.job.done // closed just after the runner completed the MPI request
		if r.persistent {
			// A persistent collective's operation: inactive until the
			// next Start, which makes a new one (prepare).
			err := r.x.job.err
			r.h, r.x.job = mpi.RequestNull(), nil
			return Status{}, err
		}
		r.done, r.st, r.err = true, r.x.jobSt, r.x.job.err
		return r.st, r.err
	}
	st := goStatus(rs.Status, max(1, r.size))
	err := mpiError(call, rs.Err)
	if rs.Cancelled {
		// The other fields of a cancelled receive's status are undefined
		// (MPICH leaves an earlier message's there): the empty status's,
		// not a rank 0 and tag 0 that look like a message's.
		st, rs.Bytes = emptyStatus, 0
		st.Cancelled = true
	}
	if err == nil && r.back != nil && rs.Bytes > len(r.back) {
		// A small receive waits in a block of smallMsg bytes, so a message
		// longer than the caller's buffer is seen here, whatever the MPI
		// says (Open MPI's self path truncates silently).
		err = fmt.Errorf("comm: %s: a message of %d bytes or more for a buffer of %d: %w", call, rs.Bytes, len(r.back), ErrTruncate)
	}
	if !r.persistent {
		r.release(rs.Bytes, blocks)
	}
	if r.x != nil && r.x.after != nil && err == nil && !rs.Cancelled {
		r.x.after(rs.Bytes)
	}
	if !r.persistent {
		r.done, r.st, r.err = true, st, err
	}
	return st, err
}

// kept is the outcome of a request with no operation in the MPI: its
// recorded one, or the empty status of a zero or inactive request.
func (r *Request) kept(call string) (Status, error) {
	if r.freed {
		return Status{}, fmt.Errorf("comm: %s of a freed request: %w", call, ErrRequest)
	}
	if r.done {
		if r.persistent {
			r.done = false // a started ProcNull request: inactive again
		}
		return r.st, r.err
	}
	return emptyStatus, nil
}

// Wait blocks until the operation completes and returns its status
// (MPI_Wait): a receive's source, tag and count (ErrTruncate if the
// message was longer than the buffer), a cancelled receive's Cancelled.
// A nil Request is an error.
func (r *Request) Wait() (Status, error) {
	if r == nil {
		return Status{}, fmt.Errorf("comm: Wait of a nil request: %w", ErrArg)
	}
	if !r.live {
		return r.kept("Wait")
	}
	if r.x != nil && r.x.job != nil {
		r.x.job.await() // then the MPI has it complete
	}
	rs, err := r.h.Wait()
	if err != nil {
		return Status{}, mpiError("Wait", err)
	}
	return r.finish(&rs, "Wait", nil)
}

// Test reports whether the operation has completed, and if so its status
// (MPI_Test). Local. A nil Request is an error.
func (r *Request) Test() (Status, bool, error) {
	if r == nil {
		return Status{}, false, fmt.Errorf("comm: Test of a nil request: %w", ErrArg)
	}
	if !r.live {
		st, err := r.kept("Test")
		return st, err == nil || !errors.Is(err, ErrRequest), err
	}
	rs, done, err := r.h.Test()
	if err != nil || !done {
		if err == nil {
			jobYield(r)
		}
		return Status{}, false, mpiError("Test", err)
	}
	st, err := r.finish(&rs, "Test", nil)
	return st, true, err
}

// jobYield is a test's that found requests incomplete: if one is a
// nonblocking collective's (an MPI generalized request) whose job has not
// ended, the test gives the processor up (Gosched) to the goroutine that
// runs the job. The MPI's test is a short cgo call, which never lets the
// runtime hand the processor over: at one processor (a rank bound to its
// core) the job ran only at the scheduler's preemption, 10 ms a turn, and
// an Iallreduce polled by Test took 1.28 ms a call over Open MPI.
func jobYield(reqs ...*Request) {
	for _, r := range reqs {
		if r != nil && r.live && r.x != nil && r.x.job != nil && !r.x.job.ended() {
			runtime.Gosched()
			return
		}
	}
}

// Cancel asks for a pending receive to be withdrawn (MPI_Cancel); the
// request must still be completed by Wait or Test, whose status says
// whether it was. Local. A nil Request is an error.
func (r *Request) Cancel() error {
	if r == nil {
		return fmt.Errorf("comm: Cancel of a nil request: %w", ErrArg)
	}
	if x := r.x; x != nil && (x.nbc != "" || x.coll != nil) {
		return fmt.Errorf("comm: Cancel: the request of a collective may not be cancelled: %w", ErrRequest)
	}
	if !r.live {
		return nil
	}
	return mpiError("Cancel", r.h.Cancel())
}

// Start starts the operation of persistent request r (MPI_Start). Local.
// Starting a request that is active, not persistent, or freed is
// ErrRequest.
func (r *Request) Start() error {
	if err := r.startable(); err != nil {
		return err
	}
	if ok, err := r.prepare(); err != nil || !ok {
		return err
	}
	if err := r.h.Start(); err != nil {
		return mpiError("Start", err)
	}
	r.live = true
	return nil
}

// startable is nil when r may be started, else Start's error.
func (r *Request) startable() error {
	switch {
	case r == nil:
		return fmt.Errorf("comm: Start of a nil request: %w", ErrArg)
	case !r.persistent:
		return fmt.Errorf("comm: Start of a request that is not persistent: %w", ErrRequest)
	case r.freed:
		return fmt.Errorf("comm: Start of a freed request: %w", ErrRequest)
	case r.live:
		return fmt.Errorf("comm: Start of an active request: %w", ErrRequest)
	}
	return nil
}

// prepare readies startable r's start (a typed send packs its data) and
// reports whether the MPI has anything to start: a ProcNull request is
// complete at once, and Wait returns its status. A persistent
// collective's operation it starts itself (its job queued, a generalized
// request made), leaving the MPI nothing to start.
func (r *Request) prepare() (bool, error) {
	if r.x != nil && r.x.coll != nil {
		op, err := r.x.coll()
		if err != nil {
			return false, err
		}
		r.h, r.x.job, r.live = op.h, op.x.job, true
		return false, nil
	}
	if r.h == mpi.RequestNull() {
		if r.persistent {
			r.done = true // ProcNull's: its status, once (kept)
		}
		return false, nil
	}
	if r.x != nil && r.x.before != nil {
		r.x.before()
	}
	return true, nil
}

// startScratch is what one startall gathers the handles in.
type startScratch struct {
	hs   []mpi.Request
	reqs []*Request
}

var startPool = sync.Pool{New: func() any { return new(startScratch) }}

// startall is Startall: the requests before the first that may not start
// go to the MPI in one MPI_Startall.
func startall(reqs []*Request) error {
	s := startPool.Get().(*startScratch)
	defer startPool.Put(s)
	s.hs, s.reqs = s.hs[:0], s.reqs[:0]
	var bad error
	for i, r := range reqs {
		if r == nil {
			continue
		}
		if err := r.startable(); err != nil {
			bad = fmt.Errorf("request %d: %w", i, err)
			break
		}
		ok, err := r.prepare()
		if err != nil {
			bad = fmt.Errorf("request %d: %w", i, err)
			break
		}
		if ok {
			s.hs = append(s.hs, r.h)
			s.reqs = append(s.reqs, r)
		}
	}
	err := mpi.Startall(s.hs)
	for i, r := range s.reqs {
		// MPI_Startall's handles are in-out. After an error some may have
		// started: live either way (Wait on an inactive persistent request
		// returns at once; one started and not seen live would have its
		// buffer reused under the MPI).
		r.h = s.hs[i]
		r.live = true
	}
	clear(s.reqs)
	if err != nil {
		return mpiError("Startall", err)
	}
	return bad
}

// Free frees request r (MPI_Request_free). A persistent request may not be
// started again; if it is active its operation goes on, and its buffer
// stays pinned (and held) for the rest of the process. Other requests need
// no freeing: Free does nothing to them, and one dropped before its
// operation completes keeps its buffer pinned and held for good. Local.
func (r *Request) Free() error {
	if r == nil {
		return fmt.Errorf("comm: Free of a nil request: %w", ErrArg)
	}
	if r.x != nil && r.x.nbc != "" {
		return fmt.Errorf("comm: Free: the request of %s, a nonblocking collective, may not be freed: %w", r.x.nbc, ErrRequest)
	}
	if !r.persistent {
		return nil
	}
	if r.freed {
		return fmt.Errorf("comm: Free of a freed request: %w", ErrRequest)
	}
	if r.live && r.x != nil && r.x.coll != nil {
		return fmt.Errorf("comm: Free of an active persistent collective (started and not completed): %w", ErrRequest)
	}
	r.freed = true
	if r.x != nil && r.x.dropColl != nil {
		r.x.dropColl()
	}
	if r.h == mpi.RequestNull() {
		return nil
	}
	active := r.live
	if err := r.h.Free(); err != nil {
		return mpiError("Free", err)
	}
	if !active {
		r.release(0, nil)
	}
	return nil
}

// multiScratch is what one multi call works in, kept between calls.
type multiScratch struct {
	hs     []mpi.Request
	at     []int
	rss    []mpi.ReqStatus
	done   []int
	blocks [][]byte
}

var multiPool = sync.Pool{New: func() any { return new(multiScratch) }}

// reqErr is the error of the request at index i.
type reqErr struct {
	i   int
	err error
}

// joinErrs joins the requests' errors, each naming its index.
func joinErrs(all []error, fails []reqErr) []error {
	for _, f := range fails {
		all = append(all, fmt.Errorf("request %d: %w", f.i, f.err))
	}
	return all
}

// multi runs an MPI_Wait*/MPI_Test* call over the live requests among
// reqs and returns the indices (into reqs) it completed, in increasing
// order for Waitall and Testall, appended to idx, with their statuses
// written into sts (when not nil) and the errors of those that failed.
// Requests that are not live are complete already: complete reports them
// to the caller, which decides.
func multi(kind int, call string, reqs []*Request, sts []Status, idx []int) ([]int, []reqErr, error) {
	sc := multiPool.Get().(*multiScratch)
	defer multiPool.Put(sc)
	hs, at := sc.hs[:0], sc.at[:0]
	for i, r := range reqs {
		if r != nil && r.live {
			hs = append(hs, r.h)
			at = append(at, i)
		}
	}
	sc.hs, sc.at = hs, at
	if len(hs) == 0 {
		return idx, nil, nil
	}
	if cap(sc.rss) < len(hs) {
		sc.rss = make([]mpi.ReqStatus, len(hs))
	}
	rss := sc.rss[:len(hs)]
	done, err := mpi.Multi(kind, hs, rss, sc.done[:0])
	sc.done = done[:0]
	if err != nil {
		return idx, nil, mpiError(call, err)
	}
	var fails []reqErr
	blocks := sc.blocks[:0]
	for _, j := range done {
		i := at[j]
		r := reqs[i]
		r.h = hs[j]
		st, err := r.finish(&rss[j], call, &blocks)
		rss[j] = mpi.ReqStatus{}
		idx = append(idx, i)
		if sts != nil {
			sts[i] = st
		}
		if err != nil {
			fails = append(fails, reqErr{i, err})
		}
	}
	if len(blocks) > 0 {
		smallFree(blocks...)
		clear(blocks)
	}
	sc.blocks = blocks[:0]
	return idx, fails, nil
}

// firstErr is the error of the first failed request, or nil.
func firstErr(fails []reqErr) error {
	if len(fails) == 0 {
		return nil
	}
	return fails[0].err
}

// clearDone sets reqs[i] to nil unless it is persistent (which becomes
// inactive instead).
func clearDone(reqs []*Request, i int) {
	if reqs[i] != nil && !reqs[i].persistent {
		reqs[i] = nil
	}
}

// Waitall waits for every request (MPI_Waitall) and returns their
// statuses, in order, setting the entries to nil (a persistent request's
// entry stays: it becomes inactive). Blocking. If some failed, the error
// joins theirs, each naming its index.
func Waitall(reqs []*Request) ([]Status, error) {
	sts := make([]Status, len(reqs))
	return sts, WaitallInto(reqs, sts)
}

// WaitallInto is Waitall writing the statuses into sts, which must hold
// len(reqs) of them, or be nil when they are not wanted. Blocking.
func WaitallInto(reqs []*Request, sts []Status) error {
	if sts != nil && len(sts) < len(reqs) {
		return fmt.Errorf("comm: WaitallInto: %d statuses for %d requests: %w", len(sts), len(reqs), ErrArg)
	}
	// The nonblocking collectives' jobs first, in Go: inside
	// MPI_Waitall this goroutine would hold its P, which their worker may
	// need to run them.
	for _, r := range reqs {
		if r != nil && r.live && r.x != nil && r.x.job != nil {
			r.x.job.await()
		}
	}
	_, err := completeAll(mpi.Waitall, "Waitall", reqs, sts)
	return err
}

// completeAll is Waitall (kind mpi.Waitall) and Testall (mpi.Testall):
// it completes every request or, Testall finding one pending, none (a
// request the MPI completed meanwhile, failed beside one still pending,
// keeps its outcome for the next call).
func completeAll(kind int, call string, reqs []*Request, sts []Status) (bool, error) {
	n := 0
	for _, r := range reqs {
		if r != nil && r.live {
			n++
		}
	}
	var all []error
	var few [64]int
	var idx []int // the requests the MPI completed, in increasing order
	if n > 0 {
		var fails []reqErr
		var err error
		idx, fails, err = multi(kind, call, reqs, sts, few[:0])
		if err != nil {
			return false, err
		}
		if len(idx) < n {
			return false, nil
		}
		all = joinErrs(all, fails)
	}
	for i, r := range reqs {
		switch {
		case len(idx) > 0 && idx[0] == i:
			idx = idx[1:]
		case r == nil:
			if sts != nil {
				sts[i] = emptyStatus
			}
			continue
		default:
			st, err := r.kept(call)
			if sts != nil {
				sts[i] = st
			}
			if err != nil {
				all = append(all, fmt.Errorf("request %d: %w", i, err))
			}
		}
		clearDone(reqs, i)
	}
	return true, errors.Join(all...)
}

// firstKept returns the index of a non-nil request that is complete
// without the MPI (its outcome kept), or -1.
func firstKept(reqs []*Request) int {
	for i, r := range reqs {
		if r != nil && !r.live && (!r.persistent || r.done) {
			return i
		}
	}
	return -1
}

// Waitany waits until one of the requests completes (MPI_Waitany) and
// returns its index and status, setting its entry to nil. Blocking. With
// no active request it returns Undefined at once.
func Waitany(reqs []*Request) (int, Status, error) {
	if i := firstKept(reqs); i >= 0 {
		st, err := reqs[i].kept("Waitany")
		clearDone(reqs, i)
		return i, st, err
	}
	sts := make([]Status, len(reqs))
	idx, fails, err := multi(mpi.Waitany, "Waitany", reqs, sts, nil)
	if err != nil || len(idx) == 0 {
		return Undefined, emptyStatus, err
	}
	i := idx[0]
	clearDone(reqs, i)
	return i, sts[i], firstErr(fails)
}

// Waitsome waits until at least one request completes (MPI_Waitsome) and
// returns the indices and statuses of all that are complete, setting
// their entries to nil. Blocking. With no active request it returns nil.
func Waitsome(reqs []*Request) ([]int, []Status, error) {
	return some(mpi.Waitsome, "Waitsome", reqs)
}

// Testsome returns the indices and statuses of the requests that are
// complete (MPI_Testsome), setting their entries to nil. Local. With no
// active request it returns nil indices (MPI's outcount MPI_UNDEFINED);
// with active requests none of which is complete, an empty slice that is
// not nil (outcount 0).
func Testsome(reqs []*Request) ([]int, []Status, error) {
	return some(mpi.Testsome, "Testsome", reqs)
}

func some(kind int, call string, reqs []*Request) ([]int, []Status, error) {
	if !slices.ContainsFunc(reqs, func(r *Request) bool { return r != nil && (r.live || !r.persistent || r.done) }) {
		return nil, nil, nil // nothing active: MPI_UNDEFINED
	}
	idx := []int{}
	var out []Status
	var all []error
	for i, r := range reqs {
		if r != nil && !r.live && (!r.persistent || r.done) {
			st, err := r.kept(call)
			idx, out = append(idx, i), append(out, st)
			if err != nil {
				all = append(all, fmt.Errorf("request %d: %w", i, err))
			}
			clearDone(reqs, i)
		}
	}
	if len(idx) > 0 {
		kind = mpi.Testsome // some are complete: do not block
	}
	sts := make([]Status, len(reqs))
	done, fails, err := multi(kind, call, reqs, sts, nil)
	if err != nil {
		return nil, nil, err
	}
	if kind == mpi.Testsome && len(idx) == 0 && len(done) == 0 {
		jobYield(reqs...)
	}
	for _, i := range done {
		idx, out = append(idx, i), append(out, sts[i])
		clearDone(reqs, i)
	}
	return idx, out, errors.Join(joinErrs(all, fails)...)
}

// Testall reports whether every request is complete (MPI_Testall); if so
// it returns their statuses and sets the entries to nil, otherwise it
// leaves them all as they are. Local.
func Testall(reqs []*Request) ([]Status, bool, error) {
	sts := make([]Status, len(reqs))
	done, err := completeAll(mpi.Testall, "Testall", reqs, sts)
	if !done {
		if err == nil {
			jobYield(reqs...)
		}
		return nil, false, err
	}
	return sts, true, err
}

// Testany reports whether one of the requests is complete (MPI_Testany):
// if so its index and status, its entry set to nil. Local. With no
// active request it returns Undefined and true.
func Testany(reqs []*Request) (int, Status, bool, error) {
	if i := firstKept(reqs); i >= 0 {
		st, err := reqs[i].kept("Testany")
		clearDone(reqs, i)
		return i, st, true, err
	}
	sts := make([]Status, len(reqs))
	live := false
	for _, r := range reqs {
		live = live || (r != nil && r.live)
	}
	if !live {
		return Undefined, emptyStatus, true, nil
	}
	idx, fails, err := multi(mpi.Testany, "Testany", reqs, sts, nil)
	if err != nil || len(idx) == 0 {
		if err == nil {
			jobYield(reqs...)
		}
		return Undefined, Status{}, false, err
	}
	i := idx[0]
	clearDone(reqs, i)
	return i, sts[i], true, firstErr(fails)
}
