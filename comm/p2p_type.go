//go:build !mpi

package comm

import (
	"errors"
	"fmt"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/typesig"
)

// Point-to-point with derived datatypes (package dtype): a buffer holds
// count instances of a committed type from its first byte (the type's
// offsets are bytes from there; none may fall before it, ErrBuffer).
// Data that are one run of bytes move in place, as the byte forms do;
// others are packed into a contiguous copy on the way out and scattered
// from one on the way in, so a nonblocking receive's buffer is written
// when its request completes (Wait, Test and their kind), not before.
//
// Type matching (MPI 4.1 §3.3.1): every message carries a digest of its
// type signature (the byte forms: none; the generic forms: their element
// type). A receive whose data, cut to the message's length, has another
// signature completes with ErrType and leaves its buffer undefined; data
// made only of dtype.Byte, and the byte forms, match any message, as
// MPI_BYTE and MPI_PACKED do. Signatures of one basic type are compared
// exactly; signatures mixing basic types by a 23-bit hash (a mismatch
// escapes with a probability of 2^-23).

// form is how a call's buffer is typed: the element size Status.Count
// counts in, and its signature — a send's digest; a receive's digest, or
// its derived type and count.
type form struct {
	elem   int
	sig    uint32
	rtype  *dtype.Type
	rcount int
}

// bytesForm is the byte forms': bytes, matching anything.
var bytesForm = form{elem: 1}

// formOf is the generic forms' over T, which is not a pair type (those
// take the typed forms: pairOf).
func formOf[T atomics.Elem]() form {
	return form{elem: atomics.SizeOf[T](), sig: typesig.Kind(atomics.TypeOf[T]())}
}

func (f form) set(o *op) { o.elem, o.sig, o.rtype, o.rcount = f.elem, f.sig, f.rtype, f.rcount }

// instanceSize is what Status.Count counts for a derived type: instances
// of t (bytes, for a type of no data).
func instanceSize(t *dtype.Type) int { return max(1, int(t.Size())) }

// simpleData is the fast case of typedOut and typedIn: count > 0
// instances of a type of one basic type (a predefined datatype, or a
// contiguous run of one), or of dtype.Byte, that are one run from the
// buffer's first byte travel as the generic forms' data do, with the
// digest typesig computes for any number of them (a basic type's code)
// and nothing to scatter on the way in. false: take the general path,
// which also names any error (and digests the pairs of two different
// halves, whose digest depends on the count).
func simpleData(buf []byte, count int, t *dtype.Type) ([]byte, form, bool) {
	if count <= 0 {
		return nil, form{}, false
	}
	off, n, ok := t.Contig(count)
	if !ok || off != 0 || n > int64(len(buf)) {
		return nil, form{}, false
	}
	f := form{elem: instanceSize(t)}
	if t != dtype.Byte {
		k, ok := t.Elem()
		if !ok {
			return nil, form{}, false
		}
		if f.sig, ok = typesig.Uniform(k); !ok {
			return nil, form{}, false
		}
	}
	return buf[:n:n], f, true
}

// typedOut makes count instances of t in buf ready to send: the bytes
// that travel (a slice of buf if they are one run, else a packed copy)
// and their form.
func (c *Comm) typedOut(call string, buf []byte, count int, t *dtype.Type) ([]byte, form, error) {
	if wire, f, ok := simpleData(buf, count, t); ok {
		return wire, f, nil
	}
	sig, err := t.Signature()
	if err != nil {
		return nil, form{}, c.typeError(call, err)
	}
	if err := t.Fits(count, len(buf)); err != nil {
		return nil, form{}, c.typeError(call, err)
	}
	f := form{elem: instanceSize(t), sig: typesig.Of(sig, count)}
	if off, n, ok := t.Contig(count); ok {
		return buf[off : off+n : off+n], f, nil
	}
	n, err := dtype.PackSize(count, t)
	if err != nil {
		return nil, form{}, c.typeError(call, err)
	}
	if err := c.stageOK(call, n, count, t); err != nil {
		return nil, form{}, err
	}
	wire := make([]byte, n)
	if _, err := dtype.Pack(buf, count, t, wire); err != nil {
		return nil, form{}, c.typeError(call, err)
	}
	return wire, f, nil
}

// typedIn is a typed receive's buffer: the bytes the message lands in and
// how to scatter them into the user's buffer (nil: they landed in place).
type typedIn struct {
	wire  []byte
	f     form
	buf   []byte
	count int
	t     *dtype.Type
}

func (c *Comm) typedIn(call string, buf []byte, count int, t *dtype.Type) (*typedIn, error) {
	if wire, f, ok := simpleData(buf, count, t); ok {
		return &typedIn{wire: wire, f: f}, nil
	}
	if err := t.CheckCommitted(); err != nil {
		return nil, c.typeError(call, err)
	}
	if err := t.FitsRecv(count, len(buf)); err != nil {
		return nil, c.typeError(call, err)
	}
	in := &typedIn{f: form{elem: instanceSize(t), rtype: t, rcount: count}}
	if off, n, ok := t.Contig(count); ok {
		in.wire = buf[off : off+n : off+n]
		return in, nil
	}
	n, err := dtype.PackSize(count, t)
	if err != nil {
		return nil, c.typeError(call, err)
	}
	in.wire, in.buf, in.count, in.t = make([]byte, n), buf, count, t
	return in, nil
}

// finish scatters what a completed receive got into the user's buffer:
// the message's bytes (as many as fit, after ErrTruncate), nothing after
// another error. The elements past the message keep their values.
func (in *typedIn) finish(st Status, err error) (Status, error) {
	if in.t == nil || err != nil && !errors.Is(err, ErrTruncate) {
		return st, err
	}
	n := int64(min(st.bytes, len(in.wire)))
	at := int64(0)
	in.t.Each(in.count, func(off, l int64) bool {
		l = min(l, n-at)
		copy(in.buf[off:off+l], in.wire[at:at+l])
		at += l
		return at < n
	})
	return st, err
}

// request attaches the scatter to a receive's request.
func (in *typedIn) request(r *Request, err error) (*Request, error) {
	if err != nil || in.t == nil || r.rv == nil {
		return r, err
	}
	r.ext = &requestExt{after: in.finish}
	return r, nil
}

// SendType sends count instances of t from buf to rank dest with tag
// (MPI_Send with a datatype). Blocking, not collective; see Send.
func (c *Comm) SendType(buf []byte, count int, t *dtype.Type, dest, tag int) error {
	wire, f, err := c.typedOut("SendType", buf, count, t)
	if err != nil {
		return err
	}
	return c.send("SendType", wire, dest, tag, f, false)
}

// SsendType is SendType that returns once a receive has matched the
// message (MPI_Ssend). Blocking.
func (c *Comm) SsendType(buf []byte, count int, t *dtype.Type, dest, tag int) error {
	wire, f, err := c.typedOut("SsendType", buf, count, t)
	if err != nil {
		return err
	}
	return c.send("SsendType", wire, dest, tag, f, true)
}

// IsendType starts sending count instances of t from buf (MPI_Isend).
// Local. Data that are not one run are packed at the call, so buf may be
// reused at once; otherwise it belongs to the request until it completes.
func (c *Comm) IsendType(buf []byte, count int, t *dtype.Type, dest, tag int) (*Request, error) {
	return c.isendType("IsendType", buf, count, t, dest, tag, false)
}

// IssendType is IsendType whose request completes once a receive has
// matched the message (MPI_Issend). Local.
func (c *Comm) IssendType(buf []byte, count int, t *dtype.Type, dest, tag int) (*Request, error) {
	return c.isendType("IssendType", buf, count, t, dest, tag, true)
}

// RecvType receives a message from src (or AnySource) with tag (or
// AnyTag) into count instances of t in buf (MPI_Recv with a datatype).
// Blocking. The status's Count is in whole instances of t (GetCountType
// and GetElements tell more); a message longer than the data is
// ErrTruncate, one of another type signature ErrType.
func (c *Comm) RecvType(buf []byte, count int, t *dtype.Type, src, tag int) (Status, error) {
	if wire, f, ok := simpleData(buf, count, t); ok {
		return c.recv("RecvType", wire, src, tag, f, true)
	}
	in, err := c.typedIn("RecvType", buf, count, t)
	if err != nil {
		return Status{}, err
	}
	return in.finish(c.recv("RecvType", in.wire, src, tag, in.f, true))
}

// IrecvType posts a receive into count instances of t in buf (MPI_Irecv
// with a datatype). Local; buf is written by the time the request
// completes.
func (c *Comm) IrecvType(buf []byte, count int, t *dtype.Type, src, tag int) (*Request, error) {
	return c.irecvType("IrecvType", buf, count, t, src, tag)
}

// SendrecvType sends scount instances of stype from send to dest and
// receives into rcount instances of rtype in recv from src
// (MPI_Sendrecv), both at once. Blocking.
func (c *Comm) SendrecvType(send []byte, scount int, stype *dtype.Type, dest, sendTag int,
	recv []byte, rcount int, rtype *dtype.Type, src, recvTag int) (Status, error) {
	const call = "SendrecvType"
	wire, f, err := c.typedOut(call, send, scount, stype)
	if err != nil {
		return Status{}, err
	}
	in, err := c.typedIn(call, recv, rcount, rtype)
	if err != nil {
		return Status{}, err
	}
	return in.finish(sendrecv(c, call, wire, dest, sendTag, f, in.wire, src, recvTag, in.f))
}

// SendrecvReplaceType sends count instances of t from buf to dest and
// receives a message from src into the same instances
// (MPI_Sendrecv_replace with a datatype). Blocking.
func (c *Comm) SendrecvReplaceType(buf []byte, count int, t *dtype.Type, dest, sendTag, src, recvTag int) (Status, error) {
	const call = "SendrecvReplaceType"
	wire, f, err := c.typedOut(call, buf, count, t)
	if err != nil {
		return Status{}, err
	}
	wire = append([]byte(nil), wire...) // the receive may land in place
	in, err := c.typedIn(call, buf, count, t)
	if err != nil {
		return Status{}, err
	}
	return in.finish(sendrecv(c, call, wire, dest, sendTag, f, in.wire, src, recvTag, in.f))
}

// RecvType receives the message into count instances of t in buf
// (MPI_Mrecv with a datatype). Blocking, as Recv.
func (msg *Message) RecvType(buf []byte, count int, t *dtype.Type) (Status, error) {
	return wait1Status(msg.IrecvType(buf, count, t))
}

// IrecvType starts receiving the message into count instances of t in
// buf (MPI_Imrecv with a datatype). Local.
func (msg *Message) IrecvType(buf []byte, count int, t *dtype.Type) (*Request, error) {
	if msg == nil || msg.c == nil {
		return nil, fmt.Errorf("comm: Message.IrecvType: nil message: %w", ErrArg)
	}
	in, err := msg.c.typedIn("Message.IrecvType", buf, count, t)
	if err != nil {
		return nil, err
	}
	return in.request(msg.irecv("IrecvType", in.wire, in.f))
}
