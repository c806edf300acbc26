//go:build mpi

package comm

import (
	"fmt"
	"sync/atomic"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/internal/mpi"
	"github.com/shmrun/shmrun/internal/raw"
)

// Message is a message taken by Mprobe or Improbe (MPI_Message): no other
// receive can match it, and exactly one Recv or Irecv on it receives it.
type Message struct {
	h    mpi.Message
	null bool        // taken from ProcNull: received at once, empty
	used atomic.Bool // Recv or Irecv was called
}

// Mprobe waits for a message from src with tag and takes it (MPI_Mprobe):
// it returns the message, to be received by its Recv or Irecv, and its
// status. Blocking.
func (c *Comm) Mprobe(src, tag int) (*Message, Status, error) {
	m, st, _, err := c.mprobe("Mprobe", src, tag, true)
	return m, st, err
}

// Improbe takes a message from src with tag if one can be received
// (MPI_Improbe). Local.
func (c *Comm) Improbe(src, tag int) (*Message, Status, bool, error) {
	return c.mprobe("Improbe", src, tag, false)
}

func (c *Comm) mprobe(call string, src, tag int, block bool) (*Message, Status, bool, error) {
	s, t, err := c.recvArgs(call, src, tag)
	if err != nil {
		return nil, Status{}, false, err
	}
	if src == ProcNull {
		return &Message{null: true}, Status{Source: ProcNull, Tag: AnyTag}, true, nil
	}
	h, ms, found, err := c.h.Mprobe(s, t, block)
	if err != nil || !found {
		return nil, Status{}, false, mpiError(call, err)
	}
	return &Message{h: h}, goStatus(ms, 1), true, nil
}

// take checks that msg can still be received.
func (msg *Message) take(call string) error {
	if msg == nil {
		return fmt.Errorf("comm: %s of a nil message: %w", call, ErrArg)
	}
	if msg.used.Swap(true) {
		return fmt.Errorf("comm: %s of a message received already: %w", call, ErrArg)
	}
	return nil
}

// Recv receives the message into buf (MPI_Mrecv). Blocking. A message
// longer than buf is ErrTruncate.
func (msg *Message) Recv(buf []byte) (Status, error) {
	if err := msg.take("Recv"); err != nil {
		return Status{}, err
	}
	if msg.null {
		return Status{Source: ProcNull, Tag: AnyTag}, nil
	}
	st, err := msg.h.Recv(buf)
	return goStatus(st, 1), mpiError("Mrecv", err)
}

// Irecv starts receiving the message into buf (MPI_Imrecv). Local.
func (msg *Message) Irecv(buf []byte) (*Request, error) {
	if err := msg.take("Irecv"); err != nil {
		return nil, err
	}
	if msg.null {
		return nullRequest(false, true), nil
	}
	r := &Request{live: true}
	h, err := msg.h.Irecv(r.msgBuf(buf, false))
	return r.started("Imrecv", h, err)
}

// MrecvT receives a message taken by Mprobe into elements (MPI_Mrecv);
// the status's Count is in elements.
func MrecvT[T atomics.Elem](msg *Message, buf []T) (Status, error) {
	if t := pairOf[T](); t != nil {
		return msg.RecvType(raw.Bytes(buf), len(buf), t)
	}
	st, err := msg.Recv(raw.Bytes(buf))
	return inElems[T](st), err
}
