//go:build !mpi

package main

/*
#include "mpi.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/winc"
	"github.com/shmrun/shmrun/win"
)

// Error classes: the runtime's errors (testable with errors.Is) and the
// MPI class each one is. The first match in order wins.
var classes = []struct {
	err   error
	class C.int
}{
	{comm.ErrAborted, C.MPI_ERR_PROC_ABORTED},
	{comm.ErrRank, C.MPI_ERR_RANK},
	{comm.ErrGroup, C.MPI_ERR_GROUP},
	{comm.ErrComm, C.MPI_ERR_COMM},
	{comm.ErrCount, C.MPI_ERR_COUNT},
	{comm.ErrType, C.MPI_ERR_TYPE},
	{comm.ErrOp, C.MPI_ERR_OP},
	{comm.ErrRoot, C.MPI_ERR_ROOT},
	{comm.ErrBuffer, C.MPI_ERR_BUFFER},
	{comm.ErrTruncate, C.MPI_ERR_TRUNCATE},
	{comm.ErrTag, C.MPI_ERR_TAG},
	{comm.ErrNoMem, C.MPI_ERR_NO_MEM},
	{comm.ErrRequest, C.MPI_ERR_REQUEST},
	{comm.ErrTopology, C.MPI_ERR_TOPOLOGY},
	{comm.ErrArg, C.MPI_ERR_ARG},
	{win.ErrRMASync, C.MPI_ERR_RMA_SYNC},
	{win.ErrRMARange, C.MPI_ERR_RMA_RANGE},
	{win.ErrDisp, C.MPI_ERR_DISP},
	{win.ErrSize, C.MPI_ERR_SIZE},
	{win.ErrLockType, C.MPI_ERR_LOCKTYPE},
	{win.ErrAssert, C.MPI_ERR_ASSERT},
	{win.ErrRMAFlavor, C.MPI_ERR_RMA_FLAVOR},
	{win.ErrRMAShared, C.MPI_ERR_RMA_SHARED},
	{win.ErrRMAAttach, C.MPI_ERR_RMA_ATTACH},
	{win.ErrNoMem, C.MPI_ERR_NO_MEM},
	{win.ErrWin, C.MPI_ERR_WIN},
	{win.ErrType, C.MPI_ERR_TYPE},
	{win.ErrInfo, C.MPI_ERR_INFO_VALUE},
	{win.ErrArg, C.MPI_ERR_ARG},
	{win.ErrCount, C.MPI_ERR_COUNT},
	{atomics.ErrOp, C.MPI_ERR_OP},
	{dtype.ErrArg, C.MPI_ERR_ARG},
	{dtype.ErrCount, C.MPI_ERR_COUNT},
	{dtype.ErrType, C.MPI_ERR_TYPE},
	{dtype.ErrBuffer, C.MPI_ERR_BUFFER},
	{errUnsupported, C.MPI_ERR_UNSUPPORTED_OPERATION},
	{errRequest, C.MPI_ERR_REQUEST},
	{errInfo, C.MPI_ERR_INFO},
	{errInfoKey, C.MPI_ERR_INFO_KEY},
	{errInfoNoKey, C.MPI_ERR_INFO_NOKEY},
	{errErrhandler, C.MPI_ERR_ERRHANDLER},
	{errKeyval, C.MPI_ERR_KEYVAL},
	{errNotInit, C.MPI_ERR_OTHER},
	{comm.ErrOther, C.MPI_ERR_OTHER},
	{win.ErrOther, C.MPI_ERR_OTHER},
}

// This library's own errors, for what the Go packages have no call for.
var (
	errUnsupported = errors.New("MPI_ERR_UNSUPPORTED_OPERATION: not implemented by shmrun")
	errRequest     = errors.New("MPI_ERR_REQUEST: invalid request")
	errInfo        = errors.New("MPI_ERR_INFO: invalid info object")
	errInfoKey     = errors.New("MPI_ERR_INFO_KEY: invalid info key")
	errInfoNoKey   = errors.New("MPI_ERR_INFO_NOKEY: no such info key")
	errErrhandler  = errors.New("MPI_ERR_ERRHANDLER: invalid error handler")
	errKeyval      = errors.New("MPI_ERR_KEYVAL: invalid attribute key")
	errNotInit     = errors.New("MPI_ERR_OTHER: MPI is not initialized")
)

// classError is an error of a given class raised by the C half.
type classError struct {
	class C.int
	msg   string
}

func (e *classError) Error() string { return e.msg }

// classOf is err's MPI error class; of errors joined (a call's own error
// with an earlier collective's mismatch, comm's withLate), the first one's.
func classOf(err error) C.int {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		if es := j.Unwrap(); len(es) > 0 {
			return classOf(es[0])
		}
	}
	// MPI_ERR_IN_STATUS first: it wraps the first failure, whose own
	// class the statuses carry.
	var ie *inStatusError
	if errors.As(err, &ie) {
		return C.MPI_ERR_IN_STATUS
	}
	var ce *classError
	if errors.As(err, &ce) {
		return ce.class
	}
	for _, c := range classes {
		if errors.Is(err, c.err) {
			return c.class
		}
	}
	return C.MPI_ERR_OTHER
}

// Error codes. Every error raised gets a code of its own above
// MPI_ERR_LASTCODE that remembers its class and message (MPI_Error_class,
// MPI_Error_string), in a ring of the last codeRing errors; an older code
// still gives its class from the low bits.
const (
	codeBase = 1 << 16 // codes are codeBase + seq<<codeShift + class
	codeRing = 256
	// codeShift leaves room for every class below it.
	codeShift = 7
	// codeSeqs is how many sequence numbers codes take before they repeat.
	codeSeqs = 1 << 20
)

type errRecord struct {
	code C.int
	msg  string
}

var codes struct {
	sync.Mutex
	seq  int
	ring [codeRing]errRecord
}

// newCode records msg as an error of class and returns its code.
func newCode(class C.int, msg string) C.int {
	codes.Lock()
	defer codes.Unlock()
	codes.seq = (codes.seq + 1) % codeSeqs
	code := C.int(codeBase + codes.seq<<codeShift + int(class))
	codes.ring[codes.seq%codeRing] = errRecord{code, msg}
	return code
}

// classOfCode is the class of an error code (a class is its own code).
// Only a predefined class (or an MPI_T_ERR_ return code) and a code
// newCode can have made are error codes: any other number is not, and
// MPI_Error_class and MPI_Error_string must refuse it rather than answer
// with a class made up from its bits.
func classOfCode(code C.int) (C.int, bool) {
	if u, ok := userErrOf(code); ok {
		return u.class, true
	}
	return predefinedClassOf(code)
}

// predefinedClassOf is classOfCode for the runtime's own codes and
// classes alone (it takes no lock: MPI_Add_error_code calls it holding
// the program's table's).
func predefinedClassOf(code C.int) (C.int, bool) {
	var class C.int
	switch {
	case code >= 0 && code <= C.MPI_ERR_LASTCODE:
		class = code
	case code >= codeBase && int(code) < codeBase+codeSeqs<<codeShift:
		class = C.int((int(code) - codeBase) & (1<<codeShift - 1))
	default:
		return 0, false
	}
	if _, ok := classNames[class]; ok || class == C.MPI_ERR_LASTCODE || class >= C.MPI_T_ERR_CANNOT_INIT && class <= C.MPI_T_ERR_PVAR_NO_ATOMIC {
		return class, true
	}
	return 0, false
}

// messageOf is the message of an error code: the error's own while it is
// in the ring, else its class's.
func messageOf(code C.int) (string, bool) {
	if u, ok := userErrOf(code); ok {
		return u.str, true // "" until the program adds one (MPI 4.1 §9.5)
	}
	if code >= codeBase {
		codes.Lock()
		r := codes.ring[((int(code)-codeBase)>>codeShift)%codeRing]
		codes.Unlock()
		if r.code == code {
			return r.msg, true
		}
	}
	class, ok := classOfCode(code)
	if !ok {
		return "", false
	}
	if s, ok := classNames[class]; ok {
		return s, true
	}
	return fmt.Sprintf("MPI error class %d", class), true
}

// raise reports err from call through error handler eh of the object obj
// it concerns (a communicator or a window; MPI_COMM_SELF for calls with
// none) and returns the code the call returns, when the handler returns at
// all.
func raise(call string, eh, obj uintptr, err error) C.int {
	if onJob() && errors.Is(err, winc.ErrTry) {
		// A step's call that stopped (capi/nbc.go's runJob): no error,
		// and no code to spend a message slot on.
		return C.MPI_ERR_PENDING
	}
	class := classOf(err)
	msg := fmt.Sprintf("%s: %v", call, err)
	code := newCode(class, msg)
	if onJob() {
		return code // raised by the call that completes the request
	}
	switch eh {
	case hErrorsReturn:
		return code
	case hErrorsAreFatal, hErrorsAbort, 0:
	default:
		if code, ok := callUserHandler(eh, obj, code); ok {
			return code
		}
	}
	fmt.Fprintf(os.Stderr, "shmrun: MPI error on rank %d: %s\n", worldRank(), msg)
	abortJob(int(class))
	return code
}

// shmUnsupported is every function of the standard ABI shmrun does not
// implement (unsupported.c): MPI_ERR_UNSUPPORTED_OPERATION naming it, on
// its communicator's or window's handler (kind 0 or 1; obj 0: none).
//
//export shmUnsupported
func shmUnsupported(name *C.char, kind C.int, obj C.uintptr_t) C.int {
	call := goString(name)
	err := fmt.Errorf("%s is not implemented by shmrun (docs/CAPI-functions.md lists what is): %w", call, errUnsupported)
	if kind == 1 {
		if x, ok := get(tab.wins, uintptr(obj)); ok {
			return x.raise(call, err)
		}
	} else if obj != 0 {
		if x, ok := get(tab.comms, uintptr(obj)); ok {
			return x.raise(call, err)
		}
	}
	return raiseSelf(call, err)
}

// shmRaise raises an error of class with message msg from call (the C
// half's own checks) on communicator h's handler (MPI_COMM_SELF's when h
// is no communicator).
//
//export shmRaise
func shmRaise(call, msg *C.char, class C.int, h C.uintptr_t) C.int {
	err := &classError{class: class, msg: goString(msg)}
	if x, ok := get(tab.comms, uintptr(h)); ok {
		return x.raise(callName(call), err)
	}
	return raiseSelf(callName(call), err)
}

// shmRaiseWin is shmRaise on window h's handler (MPI_COMM_SELF's when h
// is no window).
//
//export shmRaiseWin
func shmRaiseWin(call, msg *C.char, class C.int, h C.uintptr_t) C.int {
	err := &classError{class: class, msg: goString(msg)}
	if x, ok := get(tab.wins, uintptr(h)); ok {
		return x.raise(callName(call), err)
	}
	return raiseSelf(callName(call), err)
}

// collErrs are the classes of the argument errors the C half finds in
// the collectives it makes of others (MPI_Reduce_scatter), as package
// comm's errors: a refused call carries those to the other ranks.
var collErrs = map[C.int]error{C.MPI_ERR_ARG: comm.ErrArg, C.MPI_ERR_COUNT: comm.ErrCount, C.MPI_ERR_BUFFER: comm.ErrBuffer}

// shmRefuseColl raises an error of class with message msg from call, a
// collective on communicator h whose arguments the C half refused, on
// h's handler, once this rank has taken part as refused (winc.RefuseColl)
// in the call of kind (a format.Coll* value) the other ranks make
// instead, so that they fail too rather than wait for it.
//
//export shmRefuseColl
func shmRefuseColl(call, msg *C.char, class C.int, h C.uintptr_t, kind C.int) C.int {
	name := callName(call)
	x, code := commOf(name, uintptr(h))
	if code != 0 {
		return code
	}
	var err error = &classError{class: class, msg: goString(msg)}
	if e, ok := collErrs[class]; ok {
		err = fmt.Errorf("%s: %w", goString(msg), e)
	}
	return x.raise(name, winc.RefuseColl(x.c, name, uint8(kind), err))
}
