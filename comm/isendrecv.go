//go:build !mpi

package comm

import "github.com/shmrun/shmrun/internal/winc"

// both is the request of a send and a receive started together
// (MPI_Isendrecv, through winc.Both): it completes once both have, with
// the receive's status; its error is the receive's, else the send's.
// Freed while active (MPI_Request_free), the receive's data still reach
// its buffer (Request.Free).
func both(send, recv *Request) *Request {
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
	return &Request{ext: x}
}

func init() {
	winc.Both = func(_ string, send, recv any) any {
		return both(send.(*Request), recv.(*Request))
	}
}
