//go:build mpi

package comm

import (
	"fmt"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/internal/mpi"
	"github.com/shmrun/shmrun/internal/raw"
)

// TagUB is the largest tag this API accepts (MPI_TAG_UB is at least
// 32767); the MPI may accept fewer, and refuses a larger tag with ErrTag.
const TagUB = 1<<31 - 1

// peer checks a destination or source rank and returns the MPI's value for
// it (ProcNull and, with any, AnySource translated).
func (c *Comm) peer(call, what string, r int, any bool) (int, error) {
	switch {
	case r == ProcNull:
		return mpi.ProcNull, nil
	case r == AnySource && any:
		return mpi.AnySource, nil
	case r < 0 || r >= c.size:
		return 0, fmt.Errorf("comm: %s on rank %d: %s %d is not a rank of the communicator (0..%d, or ProcNull%s): %w",
			call, c.rank, what, r, c.size-1, map[bool]string{true: ", AnySource", false: ""}[any], ErrRank)
	}
	return r, nil
}

// tagOf checks a tag (AnyTag allowed with any) and returns the MPI's value.
func (c *Comm) tagOf(call string, tag int, any bool) (int, error) {
	if any && tag == AnyTag {
		return mpi.AnyTag, nil
	}
	if tag < 0 || tag > TagUB {
		return 0, fmt.Errorf("comm: %s on rank %d: tag %d is not in 0..%d%s: %w", call, c.rank, tag, TagUB,
			map[bool]string{true: " or AnyTag", false: ""}[any], ErrTag)
	}
	return tag, nil
}

func (c *Comm) sendArgs(call string, dest, tag int) (int, int, error) {
	if err := c.usable(call); err != nil {
		return 0, 0, err
	}
	d, err := c.peer(call, "destination", dest, false)
	if err != nil {
		return 0, 0, err
	}
	t, err := c.tagOf(call, tag, false)
	return d, t, err
}

func (c *Comm) recvArgs(call string, src, tag int) (int, int, error) {
	if err := c.usable(call); err != nil {
		return 0, 0, err
	}
	s, err := c.peer(call, "source", src, true)
	if err != nil {
		return 0, 0, err
	}
	t, err := c.tagOf(call, tag, true)
	return s, t, err
}

// goStatus is the Status of an MPI status, with Count in elements of size.
func goStatus(st mpi.Status, size int) Status {
	s := Status{Source: st.Source, Tag: st.Tag, bytes: st.Bytes}
	if st.Source == mpi.ProcNull {
		return Status{Source: ProcNull, Tag: AnyTag}
	}
	if st.Tag == mpi.AnyTag {
		s.Tag = AnyTag
	}
	if st.Bytes%size != 0 {
		s.Count = Undefined
	} else {
		s.Count = st.Bytes / size
	}
	return s
}

// Send sends buf to dest with tag (MPI_Send of bytes). Blocking: it
// returns when buf may be reused, which the MPI may make wait for the
// receive. ProcNull returns at once.
func (c *Comm) Send(buf []byte, dest, tag int) error {
	d, t, err := c.sendArgs("Send", dest, tag)
	if err != nil {
		return err
	}
	return mpiError("Send", c.h.Send(buf, d, t, false))
}

// Ssend is Send that returns only once the receive has matched
// (MPI_Ssend). Blocking.
func (c *Comm) Ssend(buf []byte, dest, tag int) error {
	d, t, err := c.sendArgs("Ssend", dest, tag)
	if err != nil {
		return err
	}
	return mpiError("Ssend", c.h.Send(buf, d, t, true))
}

// Recv receives a message from src (or AnySource) with tag (or AnyTag)
// into buf (MPI_Recv of bytes). Blocking. A message longer than buf is
// ErrTruncate.
func (c *Comm) Recv(buf []byte, src, tag int) (Status, error) {
	s, t, err := c.recvArgs("Recv", src, tag)
	if err != nil {
		return Status{}, err
	}
	st, err := c.h.Recv(buf, s, t)
	return goStatus(st, 1), mpiError("Recv", err)
}

// Sendrecv sends send to dest and receives into recv from src, in one call
// that cannot deadlock against a matching Sendrecv (MPI_Sendrecv).
// Blocking.
func (c *Comm) Sendrecv(send []byte, dest, sendTag int, recv []byte, src, recvTag int) (Status, error) {
	d, st, err := c.sendArgs("Sendrecv", dest, sendTag)
	if err != nil {
		return Status{}, err
	}
	s, rt, err := c.recvArgs("Sendrecv", src, recvTag)
	if err != nil {
		return Status{}, err
	}
	if err := aliased("Sendrecv", c.rank, send, recv); err != nil {
		return Status{}, err
	}
	ms, err := c.h.Sendrecv(send, d, st, recv, s, rt)
	return goStatus(ms, 1), mpiError("Sendrecv", err)
}

// Probe blocks until a message from src with tag can be received and
// returns its status, leaving it to be received (MPI_Probe). The status's
// Count is in bytes: GetCount[T] and GetCountType count it in elements
// or instances.
func (c *Comm) Probe(src, tag int) (Status, error) {
	s, t, err := c.recvArgs("Probe", src, tag)
	if err != nil {
		return Status{}, err
	}
	ms, _, err := c.h.Probe(s, t, true)
	return goStatus(ms, 1), mpiError("Probe", err)
}

// Iprobe is Probe that does not block (MPI_Iprobe): found is false when no
// message matches yet.
func (c *Comm) Iprobe(src, tag int) (Status, bool, error) {
	s, t, err := c.recvArgs("Iprobe", src, tag)
	if err != nil {
		return Status{}, false, err
	}
	ms, found, err := c.h.Probe(s, t, false)
	if err != nil || !found {
		return Status{}, false, mpiError("Iprobe", err)
	}
	return goStatus(ms, 1), true, nil
}

// SendT sends the elements of buf to dest with tag (MPI_Send with buf's
// predefined datatype). Blocking; see Send.
func SendT[T atomics.Elem](c *Comm, buf []T, dest, tag int) error {
	if t := pairOf[T](); t != nil {
		return sendPair(c, "SendT", buf, t, dest, tag, false)
	}
	return c.Send(raw.Bytes(buf), dest, tag)
}

// SsendT is Ssend of elements (MPI_Ssend). Blocking.
func SsendT[T atomics.Elem](c *Comm, buf []T, dest, tag int) error {
	if t := pairOf[T](); t != nil {
		return sendPair(c, "SsendT", buf, t, dest, tag, true)
	}
	return c.Ssend(raw.Bytes(buf), dest, tag)
}

// RecvT receives elements into buf (MPI_Recv): the status's Count is in
// elements. Blocking; see Recv.
func RecvT[T atomics.Elem](c *Comm, buf []T, src, tag int) (Status, error) {
	if t := pairOf[T](); t != nil {
		return recvPair(c, "RecvT", buf, t, src, tag)
	}
	st, err := c.Recv(raw.Bytes(buf), src, tag)
	return inElems[T](st), err
}

// SendrecvT is Sendrecv of elements (MPI_Sendrecv). Blocking.
func SendrecvT[T atomics.Elem](c *Comm, send []T, dest, sendTag int, recv []T, src, recvTag int) (Status, error) {
	if t := pairOf[T](); t != nil {
		return c.SendrecvType(raw.Bytes(send), len(send), t, dest, sendTag, raw.Bytes(recv), len(recv), t, src, recvTag)
	}
	st, err := c.Sendrecv(raw.Bytes(send), dest, sendTag, raw.Bytes(recv), src, recvTag)
	return inElems[T](st), err
}

// inElems is st with Count in elements of T.
func inElems[T atomics.Elem](st Status) Status {
	if st.Source != ProcNull {
		st.Count = GetCount[T](st)
	}
	return st
}

// GetCount is the number of elements of T a status's message carried
// (MPI_Get_count), or Undefined when its length is not a whole number of
// them.
func GetCount[T atomics.Elem](st Status) int {
	n := elemBytes[T]()
	if st.bytes%n != 0 {
		return Undefined
	}
	return st.bytes / n
}
