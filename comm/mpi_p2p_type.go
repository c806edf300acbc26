//go:build mpi

package comm

import (
	"fmt"

	"github.com/shmrun/shmrun/dtype"
)

// The typed forms of point-to-point under the MPI backend move packed
// bytes: a send packs its instances (dtype.Pack) and sends them, a
// receive receives bytes and unpacks them. One MPI call a message, as the
// byte forms; the copy is the price. The MPI sees bytes, so a message of
// another type signature is not detected (the shmrun backend's ErrType).

// packed returns the bytes of count instances of t in buf, for a send.
func (c *Comm) packed(call string, buf []byte, count int, t *dtype.Type) ([]byte, error) {
	n, err := c.typedSize(call, buf, count, t)
	if err != nil {
		return nil, err
	}
	out := make([]byte, n)
	if _, err := dtype.Pack(buf, count, t, out); err != nil {
		return nil, fmt.Errorf("comm: %s on rank %d: %v: %w", call, c.rank, err, ErrBuffer)
	}
	return out, nil
}

// typedSize checks a typed buffer and returns its packed size.
func (c *Comm) typedSize(call string, buf []byte, count int, t *dtype.Type) (int, error) {
	if err := t.CheckCommitted(); err != nil {
		return 0, fmt.Errorf("comm: %s on rank %d: %v: %w", call, c.rank, err, ErrType)
	}
	if count < 0 {
		return 0, fmt.Errorf("comm: %s on rank %d: count %d: %w", call, c.rank, count, ErrCount)
	}
	if err := t.Fits(count, len(buf)); err != nil {
		return 0, fmt.Errorf("comm: %s on rank %d: %v: %w", call, c.rank, err, ErrBuffer)
	}
	n, err := dtype.PackSize(count, t)
	if err != nil {
		return 0, fmt.Errorf("comm: %s on rank %d: %v: %w", call, c.rank, err, ErrType)
	}
	if err := c.stageOK(call, n, count, t); err != nil {
		return 0, err
	}
	return int(n), nil
}

// recvSize is typedSize for a buffer a message arrives in (FitsRecv).
func (c *Comm) recvSize(call string, buf []byte, count int, t *dtype.Type) (int, error) {
	n, err := c.typedSize(call, buf, count, t)
	if err == nil {
		if ferr := t.FitsRecv(count, len(buf)); ferr != nil {
			return 0, fmt.Errorf("comm: %s on rank %d: %v: %w", call, c.rank, ferr, ErrType)
		}
	}
	return n, err
}

// typed is st with Count in whole instances of t.
func typed(st Status, t *dtype.Type) Status {
	if st.Source != ProcNull {
		st.Count, _ = GetCountType(st, t)
	}
	return st
}

// SendType sends count instances of t in buf (MPI_Send with a datatype).
// Blocking.
func (c *Comm) SendType(buf []byte, count int, t *dtype.Type, dest, tag int) error {
	b, err := c.packed("SendType", buf, count, t)
	if err != nil {
		return err
	}
	return c.Send(b, dest, tag)
}

// SsendType is SendType that returns once the receive has matched
// (MPI_Ssend with a datatype). Blocking.
func (c *Comm) SsendType(buf []byte, count int, t *dtype.Type, dest, tag int) error {
	b, err := c.packed("SsendType", buf, count, t)
	if err != nil {
		return err
	}
	return c.Ssend(b, dest, tag)
}

// RecvType receives into count instances of t in buf (MPI_Recv with a
// datatype). Blocking. The status's Count is in whole instances of t; a
// message longer than the data is ErrTruncate.
func (c *Comm) RecvType(buf []byte, count int, t *dtype.Type, src, tag int) (Status, error) {
	n, err := c.recvSize("RecvType", buf, count, t)
	if err != nil {
		return Status{}, err
	}
	tmp := make([]byte, n)
	st, err := c.Recv(tmp, src, tag)
	if err == nil {
		_, _ = dtype.UnpackPrefix(tmp[:st.bytes], buf, count, t)
	}
	return typed(st, t), err
}

// SendrecvType is Sendrecv with datatypes (MPI_Sendrecv). Blocking.
func (c *Comm) SendrecvType(send []byte, scount int, stype *dtype.Type, dest, sendTag int, recv []byte, rcount int, rtype *dtype.Type, src, recvTag int) (Status, error) {
	b, err := c.packed("SendrecvType", send, scount, stype)
	if err != nil {
		return Status{}, err
	}
	n, err := c.recvSize("SendrecvType", recv, rcount, rtype)
	if err != nil {
		return Status{}, err
	}
	tmp := make([]byte, n)
	st, err := c.Sendrecv(b, dest, sendTag, tmp, src, recvTag)
	if err == nil {
		_, _ = dtype.UnpackPrefix(tmp[:st.bytes], recv, rcount, rtype)
	}
	return typed(st, rtype), err
}

// SendrecvReplaceType is SendrecvReplace with a datatype
// (MPI_Sendrecv_replace). Blocking.
func (c *Comm) SendrecvReplaceType(buf []byte, count int, t *dtype.Type, dest, sendTag, src, recvTag int) (Status, error) {
	b, err := c.packed("SendrecvReplaceType", buf, count, t)
	if err != nil {
		return Status{}, err
	}
	st, err := c.SendrecvReplace(b, dest, sendTag, src, recvTag)
	if err == nil {
		_, _ = dtype.UnpackPrefix(b[:st.bytes], buf, count, t)
	}
	return typed(st, t), err
}

// IsendType starts a send of count instances of t (MPI_Isend with a
// datatype); buf may change once it returns (it is packed). Local.
func (c *Comm) IsendType(buf []byte, count int, t *dtype.Type, dest, tag int) (*Request, error) {
	return c.isendType("IsendType", buf, count, t, dest, tag, false)
}

// IssendType is IsendType of a synchronous send (MPI_Issend). Local.
func (c *Comm) IssendType(buf []byte, count int, t *dtype.Type, dest, tag int) (*Request, error) {
	return c.isendType("IssendType", buf, count, t, dest, tag, true)
}

// isendType is IsendType and IssendType under the name call.
func (c *Comm) isendType(call string, buf []byte, count int, t *dtype.Type, dest, tag int, sync bool) (*Request, error) {
	b, err := c.packed(call, buf, count, t)
	if err != nil {
		return nil, err
	}
	return c.isend(call, b, dest, tag, sync)
}

// IrecvType starts a receive into count instances of t (MPI_Irecv with a
// datatype); buf is written when the request completes. Local.
func (c *Comm) IrecvType(buf []byte, count int, t *dtype.Type, src, tag int) (*Request, error) {
	return c.irecvType("IrecvType", buf, count, t, src, tag)
}

// irecvType is IrecvType under the name call.
func (c *Comm) irecvType(call string, buf []byte, count int, t *dtype.Type, src, tag int) (*Request, error) {
	n, err := c.recvSize(call, buf, count, t)
	if err != nil {
		return nil, err
	}
	tmp := make([]byte, n)
	r, err := c.irecv(call, tmp, src, tag)
	if err != nil {
		return nil, err
	}
	typedRecv(r, tmp, buf, count, t)
	return r, nil
}

// typedRecv makes r unpack tmp into buf and count whole instances of t
// when it completes.
func typedRecv(r *Request, tmp, buf []byte, count int, t *dtype.Type) {
	r.size = int(t.Size()) // the status's Count in whole instances
	r.extra().after = func(n int) { _, _ = dtype.UnpackPrefix(tmp[:n], buf, count, t) }
	if r.done {
		// ProcNull: nothing arrives.
		r.extra().after = nil
	}
}

// SendInitType makes a persistent send of count instances of t
// (MPI_Send_init with a datatype): each Start sends buf's current
// contents. Local.
func (c *Comm) SendInitType(buf []byte, count int, t *dtype.Type, dest, tag int) (*Request, error) {
	return c.sendInitType("SendInitType", buf, count, t, dest, tag, false)
}

// SsendInitType is SendInitType of synchronous sends (MPI_Ssend_init).
// Local.
func (c *Comm) SsendInitType(buf []byte, count int, t *dtype.Type, dest, tag int) (*Request, error) {
	return c.sendInitType("SsendInitType", buf, count, t, dest, tag, true)
}

func (c *Comm) sendInitType(call string, buf []byte, count int, t *dtype.Type, dest, tag int, sync bool) (*Request, error) {
	b, err := c.packed(call, buf, count, t)
	if err != nil {
		return nil, err
	}
	r, err := c.sendInit(call, b, dest, tag, sync)
	if err != nil {
		return nil, err
	}
	r.extra().before = func() { _, _ = dtype.Pack(buf, count, t, b) }
	return r, nil
}

// RecvInitType makes a persistent receive into count instances of t
// (MPI_Recv_init with a datatype). Local.
func (c *Comm) RecvInitType(buf []byte, count int, t *dtype.Type, src, tag int) (*Request, error) {
	n, err := c.recvSize("RecvInitType", buf, count, t)
	if err != nil {
		return nil, err
	}
	tmp := make([]byte, n)
	r, err := c.RecvInit(tmp, src, tag)
	if err != nil {
		return nil, err
	}
	typedRecv(r, tmp, buf, count, t)
	return r, nil
}

// RecvType receives the message into count instances of t (MPI_Mrecv
// with a datatype). Blocking.
func (msg *Message) RecvType(buf []byte, count int, t *dtype.Type) (Status, error) {
	if err := t.CheckCommitted(); err != nil {
		return Status{}, fmt.Errorf("comm: RecvType: %v: %w", err, ErrType)
	}
	n, err := dtype.PackSize(count, t)
	if err != nil || t.FitsRecv(count, len(buf)) != nil {
		return Status{}, fmt.Errorf("comm: RecvType: %d instances of %v in %d bytes: %w", count, t, len(buf), ErrBuffer)
	}
	tmp := make([]byte, n)
	st, err := msg.Recv(tmp)
	if err == nil {
		_, _ = dtype.UnpackPrefix(tmp[:st.bytes], buf, count, t)
	}
	return typed(st, t), err
}

// IrecvType starts receiving the message into count instances of t
// (MPI_Imrecv with a datatype). Local.
func (msg *Message) IrecvType(buf []byte, count int, t *dtype.Type) (*Request, error) {
	if err := t.CheckCommitted(); err != nil {
		return nil, fmt.Errorf("comm: IrecvType: %v: %w", err, ErrType)
	}
	n, err := dtype.PackSize(count, t)
	if err != nil || t.FitsRecv(count, len(buf)) != nil {
		return nil, fmt.Errorf("comm: IrecvType: %d instances of %v in %d bytes: %w", count, t, len(buf), ErrBuffer)
	}
	tmp := make([]byte, n)
	r, err := msg.Irecv(tmp)
	if err != nil {
		return nil, err
	}
	typedRecv(r, tmp, buf, count, t)
	return r, nil
}
