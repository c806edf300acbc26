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

// An errhH is an error handler made by the program. It lives while the
// program holds a handle to it or an object uses it: MPI_Errhandler_free
// marks it for deallocation, which happens once no communicator or window
// uses it (MPI 4.1 §9.3).
type errhH struct {
	fn   C.uintptr_t // the C function
	kind int         // errhComm or errhWin
	// users counts the handles the program holds: 1 from its creation, 1
	// more from each MPI_Comm_get_errhandler or MPI_Win_get_errhandler
	// that returned it (a new reference, which the program frees as
	// MPICH and Open MPI have it); MPI_Errhandler_free takes one.
	users int
	// objs counts the communicators and windows it is set on.
	objs int
}

const (
	errhComm = iota
	errhWin
)

// predefErrh reports whether eh is a predefined error handler (not in
// the table, never freed).
func predefErrh(eh uintptr) bool {
	switch eh {
	case hErrorsAreFatal, hErrorsAbort, hErrorsReturn:
		return true
	}
	return false
}

// errhLocked is the program's error handler eh, or the error of a call
// given it: a handle that names none (never made, MPI_ERRHANDLER_NULL,
// or freed and no longer used) or one whose handles the program has all
// freed (a copy of a freed handle). tab is locked.
func errhLocked(eh uintptr) (*errhH, error) {
	x, ok := tab.errhs[eh]
	switch {
	case !ok && eh == hErrhandlerNull:
		return nil, fmt.Errorf("MPI_ERRHANDLER_NULL: %w", errErrhandler)
	case !ok:
		return nil, fmt.Errorf("an invalid error handler (handle %#x: never made, or freed by MPI_Errhandler_free and used by no object since): %w", eh, errErrhandler)
	case x.users == 0:
		return nil, fmt.Errorf("error handler %#x was freed by MPI_Errhandler_free (its objects still use it, but the handle is stale): %w", eh, errErrhandler)
	}
	return x, nil
}

// checkErrhandlerLocked checks that eh may be set on an object of kind;
// tab is locked.
func checkErrhandlerLocked(eh uintptr, kind int) error {
	if predefErrh(eh) {
		return nil
	}
	x, err := errhLocked(eh)
	if err != nil {
		return err
	}
	if x.kind != kind {
		return fmt.Errorf("a %s error handler (handle %#x) on a %s: %w", errhKinds[x.kind], eh, errhKinds[kind], errErrhandler)
	}
	return nil
}

var errhKinds = [...]string{"communicator", "window"}

// errhRetain notes that one more object uses eh; tab is locked for
// writing.
func errhRetain(eh uintptr) {
	if x, ok := tab.errhs[eh]; ok {
		x.objs++
	}
}

// errhRelease notes that an object no longer uses eh, which goes from the
// table once neither an object nor the program holds it; tab is locked
// for writing.
func errhRelease(eh uintptr) {
	x, ok := tab.errhs[eh]
	if !ok {
		return
	}
	if x.objs--; x.objs <= 0 && x.users <= 0 {
		delete(tab.errhs, eh)
	}
}

// releaseErrh lets go of a freed object's error handler, *field.
func releaseErrh(field *uintptr) { releaseErrhOf(*field) }

// releaseErrhOf lets go of error handler eh of an object freed.
func releaseErrhOf(eh uintptr) {
	tab.Lock()
	errhRelease(eh)
	tab.Unlock()
}

// errhNew registers a program's error handler of kind calling fn.
func errhNew(fn C.uintptr_t, kind int) uintptr {
	return add(tab.errhs, &errhH{fn: fn, kind: kind, users: 1})
}

// errhFree is MPI_Errhandler_free of handle eh: the program's handle
// goes; the handler itself once no object uses it either. A predefined
// handler stays (it is never deallocated).
func errhFree(eh uintptr) error {
	if predefErrh(eh) {
		return nil
	}
	tab.Lock()
	defer tab.Unlock()
	x, err := errhLocked(eh)
	if err != nil {
		return err
	}
	if x.users--; x.users == 0 && x.objs == 0 {
		delete(tab.errhs, eh)
	}
	return nil
}

// errhSet sets *field, an object's error handler, to eh after checking
// that eh fits the object's kind: the object takes a reference to eh and
// drops the one to its old handler. tab is locked for writing.
func errhSet(eh uintptr, kind int, field *uintptr) error {
	if err := checkErrhandlerLocked(eh, kind); err != nil {
		return err
	}
	errhRetain(eh) // first: eh may be the old handler
	errhRelease(*field)
	*field = eh
	return nil
}

// errhGet is an object's error handler (*field) for
// MPI_Comm_get_errhandler and MPI_Win_get_errhandler: a new reference for
// the program, which it frees with MPI_Errhandler_free. tab is locked for
// writing.
func errhGet(field *uintptr) uintptr {
	eh := *field
	if x, ok := tab.errhs[eh]; ok {
		x.users++
	}
	return eh
}

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
	*out = C.uintptr_t(errhNew(fn, int(kind)))
	return C.MPI_SUCCESS
}

// shmErrhandlerFree is MPI_Errhandler_free: *eh becomes
// MPI_ERRHANDLER_NULL; the handler goes once no object uses it.
//
//export shmErrhandlerFree
func shmErrhandlerFree(eh *C.uintptr_t) C.int {
	if err := errhFree(uintptr(*eh)); err != nil {
		return raiseSelf("MPI_Errhandler_free", err)
	}
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

// setErrhandler is MPI_Comm_set_errhandler and MPI_Win_set_errhandler:
// *field, the object x's error handler, becomes eh if eh fits the
// object's kind (else the error goes to the old handler).
func setErrhandler(call string, eh uintptr, kind int, field *uintptr, x raiser) C.int {
	tab.Lock()
	err := errhSet(eh, kind, field)
	tab.Unlock()
	if err != nil {
		return x.raise(call, err)
	}
	return C.MPI_SUCCESS
}

// getErrhandler is MPI_Comm_get_errhandler and MPI_Win_get_errhandler:
// the object's error handler, a new reference (errhGet).
func getErrhandler(field *uintptr, out *C.uintptr_t) {
	tab.Lock()
	*out = C.uintptr_t(errhGet(field))
	tab.Unlock()
}
