package comm

import (
	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/raw"
)

// The nonblocking send-receives of MPI 4.0 (MPI_Isendrecv and
// MPI_Isendrecv_replace), on both backends: the receive is posted first,
// then the send started (so that a rank may exchange with itself), and
// one request stands for both. It completes once both have, with the
// receive's status; its error is the receive's, else the send's. A send
// the runtime refuses withdraws the receive it posted, and the call
// returns that error. Cancel does nothing to such a request (MPI 4.1
// defines cancelling sends and receives only); Free lets it complete on
// its own, the received data still reaching the buffer.

// Isendrecv starts sending send to dest with sendTag and receiving into
// recv from src (or AnySource) with recvTag (or AnyTag) (MPI_Isendrecv).
// Local: it never waits. Neither buffer may be used until the request
// completes; they must not overlap.
func (c *Comm) Isendrecv(send []byte, dest, sendTag int, recv []byte, src, recvTag int) (*Request, error) {
	const call = "Isendrecv"
	if err := aliased(call, c.Rank(), send, recv); err != nil {
		return nil, err
	}
	return c.isendrecv(call, dest, sendTag,
		func() (*Request, error) { return c.isendBytes(call, send, dest, sendTag) },
		func() (*Request, error) { return c.irecvBytes(call, recv, src, recvTag) })
}

// IsendrecvReplace starts sending buf to dest with sendTag and receiving
// a message from src with recvTag into buf (MPI_Isendrecv_replace).
// Local. The bytes sent are a copy of buf taken at the call; buf belongs
// to the request until it completes.
func (c *Comm) IsendrecvReplace(buf []byte, dest, sendTag, src, recvTag int) (*Request, error) {
	const call = "IsendrecvReplace"
	out := append([]byte(nil), buf...)
	return c.isendrecv(call, dest, sendTag,
		func() (*Request, error) { return c.isendBytes(call, out, dest, sendTag) },
		func() (*Request, error) { return c.irecvBytes(call, buf, src, recvTag) })
}

// IsendrecvType is Isendrecv with datatypes (MPI_Isendrecv): scount
// instances of stype from send, rcount instances of rtype into recv; the
// status's Count is in whole instances of rtype. Local.
func (c *Comm) IsendrecvType(send []byte, scount int, stype *dtype.Type, dest, sendTag int,
	recv []byte, rcount int, rtype *dtype.Type, src, recvTag int) (*Request, error) {
	const call = "IsendrecvType"
	return c.isendrecv(call, dest, sendTag,
		func() (*Request, error) { return c.isendType(call, send, scount, stype, dest, sendTag, false) },
		func() (*Request, error) { return c.irecvType(call, recv, rcount, rtype, src, recvTag) })
}

// IsendrecvReplaceType is IsendrecvReplace with a datatype
// (MPI_Isendrecv_replace): count instances of t in buf are sent (a copy
// of their bytes taken at the call, holes and all) and the message
// received lands in the same instances. Local.
func (c *Comm) IsendrecvReplaceType(buf []byte, count int, t *dtype.Type, dest, sendTag, src, recvTag int) (*Request, error) {
	const call = "IsendrecvReplaceType"
	out := append([]byte(nil), buf...)
	return c.isendrecv(call, dest, sendTag,
		func() (*Request, error) { return c.isendType(call, out, count, t, dest, sendTag, false) },
		func() (*Request, error) { return c.irecvType(call, buf, count, t, src, recvTag) })
}

// IsendrecvT is Isendrecv of elements (MPI_Isendrecv with the elements'
// predefined datatype); its status's Count is in elements. Local.
func IsendrecvT[T atomics.Elem](c *Comm, send []T, dest, sendTag int, recv []T, src, recvTag int) (*Request, error) {
	const call = "IsendrecvT"
	if err := aliased(call, c.Rank(), raw.Bytes(send), raw.Bytes(recv)); err != nil {
		return nil, err
	}
	return c.isendrecv(call, dest, sendTag,
		func() (*Request, error) { return isendElems(c, call, send, dest, sendTag) },
		func() (*Request, error) { return irecvElems(c, call, recv, src, recvTag) })
}

// isendrecv posts the receive, then starts the send, and makes one
// request of them (pair, the backend's). The send's destination and tag
// are checked first, so that a wrong one costs no message the receive
// might already have taken; a send refused for another reason withdraws
// the receive.
func (c *Comm) isendrecv(call string, dest, sendTag int, send, recv func() (*Request, error)) (*Request, error) {
	if err := c.sendOK(call, dest, sendTag); err != nil {
		return nil, err
	}
	rr, err := recv()
	if err != nil {
		return nil, err
	}
	sr, err := send()
	if err != nil {
		_ = rr.Cancel()
		_, _ = rr.Wait()
		return nil, err
	}
	return c.pair(call, sr, rr)
}
