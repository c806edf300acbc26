package comm

import (
	"fmt"

	"github.com/shmrun/shmrun/internal/raw"
)

// overlap reports whether two byte slices share memory.
func overlap(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := raw.Addr(a), raw.Addr(b)
	return pa < pb+uintptr(len(b)) && pb < pa+uintptr(len(a))
}

// aliased is the error of a call on rank whose send and receive buffers
// share memory, or nil: MPI forbids an argument a call writes to alias
// another (MPI 4.1 §2.3), and the data would be read after being
// overwritten. The InPlace forms (MPI_IN_PLACE) and SendrecvReplace are
// how a call reads and writes one buffer.
func aliased(call string, rank int, send, recv []byte) error {
	if !overlap(send, recv) {
		return nil
	}
	return fmt.Errorf("comm: %s on rank %d: the send buffer (%d bytes at %#x) and the receive buffer (%d bytes at %#x) overlap; the InPlace form reads and writes one buffer: %w",
		call, rank, len(send), raw.Addr(send), len(recv), raw.Addr(recv), ErrBuffer)
}
