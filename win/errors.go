package win

import (
	"errors"
	"fmt"
	"strings"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/raw"
)

// Error classes (MPI error classes for one-sided communication). Every error
// of this package wraps exactly one of them. A class is one value in every
// package that has it: ErrRank, ErrBuffer, ErrNoMem, ErrOp, ErrType, ErrArg,
// ErrCount, ErrOther and ErrAborted are comm's (and ErrOp atomics', ErrType
// and ErrCount dtype's).
var (
	ErrRMASync   = errors.New("MPI_ERR_RMA_SYNC: wrong synchronization of RMA calls")
	ErrRMARange  = errors.New("MPI_ERR_RMA_RANGE: target memory is not part of the window")
	ErrRank      = comm.ErrRank
	ErrDisp      = errors.New("MPI_ERR_DISP: invalid displacement")
	ErrSize      = errors.New("MPI_ERR_SIZE: invalid size")
	ErrLockType  = errors.New("MPI_ERR_LOCKTYPE: invalid lock type")
	ErrAssert    = errors.New("MPI_ERR_ASSERT: invalid assert argument")
	ErrRMAFlavor = errors.New("MPI_ERR_RMA_FLAVOR: wrong window flavor")
	ErrRMAShared = errors.New("MPI_ERR_RMA_SHARED: memory cannot be shared")
	ErrRMAAttach = errors.New("MPI_ERR_RMA_ATTACH: memory cannot be attached")
	ErrBuffer    = comm.ErrBuffer // MPI_ERR_BUFFER: an origin buffer too small for its datatype
	ErrNoMem     = comm.ErrNoMem
	ErrWin       = errors.New("MPI_ERR_WIN: invalid window")
	ErrOp        = comm.ErrOp // MPI_ERR_OP: an op not defined on the datatype
	ErrType      = comm.ErrType
	ErrInfo      = errors.New("MPI_ERR_INFO_VALUE: invalid info value")
	ErrArg       = comm.ErrArg
	ErrCount     = comm.ErrCount
	ErrOther     = comm.ErrOther
	ErrAborted   = comm.ErrAborted
)

// errorf makes an error of class with a message "win: <format>: <class>".
// It wraps class and every error among args, so errors.Is finds the class
// and errors.As reaches a cause (a *shm.NoSpaceError, say) through it.
func errorf(class error, format string, args ...any) error {
	msg := fmt.Sprintf("win: "+format, args...)
	if !strings.HasSuffix(msg, ": "+class.Error()) { // a cause's message may end with the class already
		msg += ": " + class.Error()
	}
	e := &classError{msg: msg, errs: []error{class}}
	for _, a := range args {
		if err, ok := a.(error); ok {
			e.errs = append(e.errs, err)
		}
	}
	return e
}

// classError is errorf's error: a message, its class first, then its causes.
type classError struct {
	msg  string
	errs []error
}

func (e *classError) Error() string   { return e.msg }
func (e *classError) Unwrap() []error { return e.errs }

// aliased is the error of call on w when its origin and result buffers
// share memory, or nil: MPI 4.1 §12.3.4 wants them disjoint, and the
// result would be written over origin data not yet combined.
func aliased(call string, w *Win, origin, result []byte) error {
	if len(origin) == 0 || len(result) == 0 {
		return nil
	}
	po, pr := raw.Addr(origin), raw.Addr(result)
	if po < pr+uintptr(len(result)) && pr < po+uintptr(len(origin)) {
		return errorf(ErrBuffer, "%s on rank %d: the origin buffer (%d bytes at %#x) and the result buffer (%d bytes at %#x) overlap", call, w.Rank(), len(origin), po, len(result), pr)
	}
	return nil
}
