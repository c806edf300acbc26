//go:build !mpi

package comm

import (
	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/raw"
)

// pair is the request of a send and a receive started together
// (isendrecv): it completes once both have, with the receive's status;
// its error is the receive's, else the send's. Freed while active
// (Request.Free), the receive's data still reach its buffer.
func (c *Comm) pair(_ string, send, recv *Request) (*Request, error) {
	x := &requestExt{parts: &[2]*Request{send, recv}}
	x.poll = func(block bool) (bool, error) {
		if !block && (!send.complete() || !recv.complete()) {
			return false, nil
		}
		_, serr := send.Wait()
		st, rerr := recv.Wait()
		x.st = st
		if rerr != nil {
			return true, rerr
		}
		return true, serr
	}
	return &Request{ext: x}, nil
}

// sendOK checks a send's communicator, destination and tag, as the send
// itself will (isendrecv checks them before it posts the receive).
func (c *Comm) sendOK(call string, dest, tag int) error {
	if _, err := c.engine(call); err != nil {
		return err
	}
	if _, err := c.peerRank(call, "destination", dest, false); err != nil {
		return err
	}
	return c.checkTag(call, tag, false)
}

func (c *Comm) isendBytes(call string, buf []byte, dest, tag int) (*Request, error) {
	return c.isend(call, buf, dest, tag, bytesForm, false)
}

func (c *Comm) irecvBytes(call string, buf []byte, src, tag int) (*Request, error) {
	return c.irecv(call, buf, src, tag, bytesForm)
}

func isendElems[T atomics.Elem](c *Comm, call string, buf []T, dest, tag int) (*Request, error) {
	if t := pairOf[T](); t != nil {
		return c.isendType(call, raw.Bytes(buf), len(buf), t, dest, tag, false)
	}
	return c.isend(call, raw.Bytes(buf), dest, tag, formOf[T](), false)
}

func irecvElems[T atomics.Elem](c *Comm, call string, buf []T, src, tag int) (*Request, error) {
	if t := pairOf[T](); t != nil {
		return c.irecvType(call, raw.Bytes(buf), len(buf), t, src, tag)
	}
	return c.irecv(call, raw.Bytes(buf), src, tag, formOf[T]())
}

// isendType is IsendType and IssendType under the name call.
func (c *Comm) isendType(call string, buf []byte, count int, t *dtype.Type, dest, tag int, sync bool) (*Request, error) {
	wire, f, err := c.typedOut(call, buf, count, t)
	if err != nil {
		return nil, err
	}
	return c.isend(call, wire, dest, tag, f, sync)
}

// irecvType is IrecvType under the name call.
func (c *Comm) irecvType(call string, buf []byte, count int, t *dtype.Type, src, tag int) (*Request, error) {
	if wire, f, ok := simpleData(buf, count, t); ok {
		return c.irecv(call, wire, src, tag, f)
	}
	in, err := c.typedIn(call, buf, count, t)
	if err != nil {
		return nil, err
	}
	return in.request(c.irecv(call, in.wire, src, tag, in.f))
}
