//go:build !mpi

package main

/*
#include "mpi.h"

// Calling a program's error handler: the handler types are variadic in
// the standard; a call with the two fixed arguments is what every
// implementation makes.
static void shmrun_call_comm_errh(uintptr_t fn, uintptr_t h, int *code) {
	MPI_Comm c = (MPI_Comm)h;
	((MPI_Comm_errhandler_function *)fn)(&c, code);
}
static void shmrun_call_win_errh(uintptr_t fn, uintptr_t h, int *code) {
	MPI_Win w = (MPI_Win)h;
	((MPI_Win_errhandler_function *)fn)(&w, code);
}
*/
import "C"

import (
	"fmt"
	"os"

	"github.com/shmrun/shmrun/comm"
)

// An errhH is an error handler made by the program.
type errhH struct {
	fn   C.uintptr_t // the C function
	kind int         // errhComm or errhWin
}

const (
	errhComm = iota
	errhWin
)

// checkErrhandler checks that eh may be set on an object of kind.
func checkErrhandler(eh uintptr, kind int) error {
	switch eh {
	case hErrorsAreFatal, hErrorsAbort, hErrorsReturn:
		return nil
	}
	x, ok := get(tab.errhs, eh)
	if !ok {
		return fmt.Errorf("an invalid error handler (handle %#x): %w", eh, errErrhandler)
	}
	if x.kind != kind {
		return fmt.Errorf("a %s error handler on a %s: %w", errhKinds[x.kind], errhKinds[kind], errErrhandler)
	}
	return nil
}

var errhKinds = [...]string{"communicator", "window"}

// callUserHandler calls the program's handler eh for an error of code on
// object obj; the call then returns code (what the handler leaves in it).
func callUserHandler(eh uintptr, obj uintptr, code C.int) (C.int, bool) {
	x, ok := get(tab.errhs, eh)
	if !ok {
		return 0, false
	}
	switch x.kind {
	case errhComm:
		C.shmrun_call_comm_errh(x.fn, C.uintptr_t(obj), &code)
	case errhWin:
		C.shmrun_call_win_errh(x.fn, C.uintptr_t(obj), &code)
	}
	return code, true
}

//export shmCreateErrhandler
func shmCreateErrhandler(fn C.uintptr_t, kind C.int, out *C.uintptr_t) C.int {
	if fn == 0 {
		return raiseSelf("MPI_Comm_create_errhandler", fmt.Errorf("a NULL function: %w", comm.ErrArg))
	}
	*out = C.uintptr_t(add(tab.errhs, &errhH{fn: fn, kind: int(kind)}))
	return C.MPI_SUCCESS
}

//export shmErrhandlerFree
func shmErrhandlerFree(eh *C.uintptr_t) C.int {
	switch *eh {
	case hErrorsAreFatal, hErrorsAbort, hErrorsReturn:
		*eh = hErrhandlerNull
		return C.MPI_SUCCESS
	}
	if _, ok := get(tab.errhs, uintptr(*eh)); !ok {
		return raiseSelf("MPI_Errhandler_free", fmt.Errorf("an invalid error handler (handle %#x): %w", uintptr(*eh), errErrhandler))
	}
	// Objects using it keep it (the standard frees it once they are gone):
	// the entry stays; the handle is nulled.
	*eh = hErrhandlerNull
	return C.MPI_SUCCESS
}

// shmCallErrhandler is MPI_Comm_call_errhandler (kind 0) and
// MPI_Win_call_errhandler: the object's handler runs for code; the call
// returns MPI_SUCCESS if the handler returns.
//
//export shmCallErrhandler
func shmCallErrhandler(h C.uintptr_t, code C.int, kind C.int) C.int {
	var eh uintptr
	var obj uintptr
	if kind == 1 {
		x, c := winOf("MPI_Win_call_errhandler", uintptr(h))
		if c != 0 {
			return c
		}
		tab.RLock()
		eh, obj = x.errh, x.h
		tab.RUnlock()
	} else {
		x, c := commOf("MPI_Comm_call_errhandler", uintptr(h))
		if c != 0 {
			return c
		}
		tab.RLock()
		eh, obj = x.errh, x.h
		tab.RUnlock()
	}
	switch eh {
	case hErrorsReturn:
	case hErrorsAreFatal, hErrorsAbort:
		msg, _ := messageOf(code)
		fmt.Fprintf(os.Stderr, "shmrun: MPI error on rank %d (raised by the program): %s\n", worldRank(), msg)
		class, _ := classOfCode(code)
		abortJob(max(1, int(class)))
	default:
		callUserHandler(eh, obj, code)
	}
	return C.MPI_SUCCESS
}

// raiser is an object errors are raised on (a communicator or a window).
type raiser interface {
	raise(call string, err error) C.int
}

// setErrhandler sets *field, an object's error handler, to eh after
// checking it fits the object's kind (the error goes to the old handler).
func setErrhandler(call string, eh uintptr, kind int, field *uintptr, x raiser) C.int {
	if err := checkErrhandler(eh, kind); err != nil {
		return x.raise(call, err)
	}
	tab.Lock()
	*field = eh
	tab.Unlock()
	return C.MPI_SUCCESS
}

// getErrhandler reads an object's error handler.
func getErrhandler(field *uintptr, out *C.uintptr_t) {
	tab.RLock()
	*out = C.uintptr_t(*field)
	tab.RUnlock()
}
