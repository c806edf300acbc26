//go:build mpi

package comm

import (
	"fmt"
	"sync"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/internal/mpi"
	"github.com/shmrun/shmrun/internal/raw"
)

// pairs counts the MPI backend's send-receive pairs not yet complete,
// for Finalize: their goroutines must be done with the MPI first.
var pairs sync.WaitGroup

// pair is the request of a send and a receive started together
// (isendrecv). MPI_Isendrecv is MPI 4.0, which Open MPI 4.1 lacks, so
// the pair is an MPI generalized request, completed by a goroutine that
// waits for the two (as a nonblocking collective's job: nbc_mpi.go), so
// that Wait, Test and their kin take it beside other requests. Its
// outcome is the receive's status; its error is the receive's, else the
// send's.
func (c *Comm) pair(call string, send, recv *Request) (*Request, error) {
	h, err := mpi.GrequestStart()
	if err != nil {
		_, _ = send.Wait()
		_ = recv.Cancel()
		_, _ = recv.Wait()
		return nil, mpiError(call, err)
	}
	j := &nbcJob{call: call, done: make(chan struct{})}
	r := newLive()
	r.h = h
	x := r.extra()
	x.job = j
	pairs.Add(1)
	go func() {
		defer pairs.Done()
		_, serr := send.Wait()
		x.jobSt, j.err = recv.Wait()
		if j.err == nil {
			j.err = serr
		}
		// It cannot fail on a request MPI_Grequest_start made; if it
		// did, the request's Wait would never return: say so.
		if err := mpi.GrequestComplete(h); err != nil {
			panic(fmt.Sprintf("comm: %s: %v", call, err))
		}
		close(j.done)
	}()
	return r, nil
}

// sendOK checks a send's communicator, destination and tag, as the send
// itself will (isendrecv checks them before it posts the receive).
func (c *Comm) sendOK(call string, dest, tag int) error {
	_, _, err := c.sendArgs(call, dest, tag)
	return err
}

func (c *Comm) isendBytes(call string, buf []byte, dest, tag int) (*Request, error) {
	return c.isend(call, buf, dest, tag, false)
}

func (c *Comm) irecvBytes(call string, buf []byte, src, tag int) (*Request, error) {
	return c.irecv(call, buf, src, tag)
}

func isendElems[T atomics.Elem](c *Comm, call string, buf []T, dest, tag int) (*Request, error) {
	if t := pairOf[T](); t != nil {
		return c.isendType(call, raw.Bytes(buf), len(buf), t, dest, tag, false)
	}
	return c.isend(call, raw.Bytes(buf), dest, tag, false)
}

func irecvElems[T atomics.Elem](c *Comm, call string, buf []T, src, tag int) (*Request, error) {
	if t := pairOf[T](); t != nil {
		return c.irecvType(call, raw.Bytes(buf), len(buf), t, src, tag)
	}
	r, err := c.irecv(call, raw.Bytes(buf), src, tag)
	if r != nil {
		r.size = atomics.SizeOf[T]()
	}
	return r, err
}
