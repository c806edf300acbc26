package comm

import (
	"errors"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/dtype"
)

// Error classes (MPI's error classes for communicators and groups). Errors
// returned by this package wrap one of them: test with errors.Is. A class
// is one value in every package that has it: ErrArg is dtype.ErrArg and
// atomics.ErrArg, ErrOp is atomics.ErrOp and win.ErrOp, ErrType and
// ErrCount are dtype's and win's, ErrRank, ErrBuffer, ErrNoMem and
// ErrOther win's.
var (
	ErrRank     = errors.New("MPI_ERR_RANK: invalid rank")
	ErrGroup    = errors.New("MPI_ERR_GROUP: invalid group")
	ErrArg      = dtype.ErrArg
	ErrComm     = errors.New("MPI_ERR_COMM: invalid communicator")
	ErrOther    = errors.New("MPI_ERR_OTHER: failure")
	ErrCount    = dtype.ErrCount
	ErrType     = dtype.ErrType
	ErrOp       = atomics.ErrOp
	ErrRoot     = errors.New("MPI_ERR_ROOT: invalid root")
	ErrBuffer   = dtype.ErrBuffer
	ErrTruncate = errors.New("MPI_ERR_TRUNCATE: message truncated")
	ErrTag      = errors.New("MPI_ERR_TAG: invalid tag")
	ErrNoMem    = dtype.ErrNoMem
	// ErrTopology: a call that needs a Cartesian topology (CartGet,
	// CartShift, ...) on a communicator without one.
	ErrTopology = errors.New("MPI_ERR_TOPOLOGY: invalid topology")
	// ErrRequest: a request used as it may not be (Start of one that is
	// not persistent, or is active, or was freed; Wait on a freed one).
	ErrRequest   = errors.New("MPI_ERR_REQUEST: invalid request")
	ErrInit      = errors.New("MPI_ERR_OTHER: cannot initialize the rank")
	ErrFinalized = errors.New("MPI_ERR_OTHER: called after Finalize")
	// ErrAborted: the job is ending (a rank failed or called Abort) and the
	// call gave up waiting.
	ErrAborted = errors.New("MPI_ERR_OTHER: job aborted")
	// ErrEarlierCall marks an error that belongs to an earlier collective
	// call on the same communicator, whose mismatch this rank found only
	// when a later call began (on two ranks, a rank that read no one's
	// data; see the package documentation). The call that returned it
	// completed and delivered its data, and the error also wraps the
	// mismatch's class (ErrCount, ErrRoot, ...). A call that failed itself
	// joins the earlier mismatch to its own error without this mark. Only
	// shmrun's backend returns it.
	ErrEarlierCall = errors.New("the mismatch of an earlier collective call")
)
