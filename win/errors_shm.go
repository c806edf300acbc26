//go:build !mpi

package win

import "errors"

// classes numbers the classes for agreement between ranks: a collective call
// that fails on one rank returns the same class on every rank.
var classes = []error{ErrOther, ErrRMASync, ErrRMARange, ErrRank, ErrDisp, ErrSize, ErrLockType,
	ErrAssert, ErrRMAFlavor, ErrRMAShared, ErrNoMem, ErrWin, ErrOp, ErrType, ErrInfo, ErrArg, ErrCount, ErrAborted, ErrRMAAttach, ErrBuffer}

func classCode(err error) byte {
	for i, c := range classes {
		if errors.Is(err, c) {
			return byte(i)
		}
	}
	return 0
}

// remoteError is the error a rank returns for a collective call that failed
// on another rank: it carries that rank's message and class.
type remoteError struct {
	msg   string
	class error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.class }
