//go:build !mpi

package main

/*
#include "capi.h"
*/
import "C"

import (
	"fmt"

	"github.com/shmrun/shmrun/comm"
)

// MPI I/O is outside shmrun's subset (docs/CAPI.md): no file is ever
// open. Its calls return MPI_ERR_UNSUPPORTED_OPERATION on the error
// handler of MPI_FILE_NULL, where the standard raises the errors of the
// calls that have no file (MPI_File_open, MPI_File_delete: MPI 4.1
// §14.7), so that a program that tries them and falls back goes on:
// MPI_ERRORS_RETURN unless the program set another with
// MPI_File_set_errhandler on MPI_FILE_NULL.

const hFileNull = 0x118

// fileErrh is MPI_FILE_NULL's error handler; under tab.
var fileErrh uintptr = hErrorsReturn

// fileNull raises errors on MPI_FILE_NULL's handler.
type fileNull struct{}

func (fileNull) raise(call string, err error) C.int {
	tab.RLock()
	eh := fileErrh
	tab.RUnlock()
	return raise(call, eh, hFileNull, err)
}

// errNoFile is the error of a call on a file handle other than
// MPI_FILE_NULL: none is valid.
func errNoFile(h C.uintptr_t) error {
	return &classError{class: C.MPI_ERR_FILE, msg: fmt.Sprintf("an invalid file (handle %#x): shmrun opens no file (MPI I/O is not implemented)", uintptr(h))}
}

// shmFileSetErrhandler is MPI_File_set_errhandler: on MPI_FILE_NULL, one
// of the predefined handlers (a file's own handler would come from
// MPI_File_create_errhandler, not implemented).
//
//export shmFileSetErrhandler
func shmFileSetErrhandler(h, eh C.uintptr_t) C.int {
	const call = "MPI_File_set_errhandler"
	if h != hFileNull {
		return fileNull{}.raise(call, errNoFile(h))
	}
	switch eh {
	case hErrorsReturn, hErrorsAreFatal, hErrorsAbort:
	default:
		return fileNull{}.raise(call, fmt.Errorf("error handler %#x: a file's handler here is MPI_ERRORS_RETURN, MPI_ERRORS_ARE_FATAL or MPI_ERRORS_ABORT (MPI_File_create_errhandler is not implemented): %w", uintptr(eh), errErrhandler))
	}
	tab.Lock()
	fileErrh = uintptr(eh)
	tab.Unlock()
	return C.MPI_SUCCESS
}

// shmFileGetErrhandler is MPI_File_get_errhandler of MPI_FILE_NULL.
//
//export shmFileGetErrhandler
func shmFileGetErrhandler(h C.uintptr_t, eh *C.uintptr_t) C.int {
	const call = "MPI_File_get_errhandler"
	if h != hFileNull {
		return fileNull{}.raise(call, errNoFile(h))
	}
	if eh == nil {
		return fileNull{}.raise(call, fmt.Errorf("errhandler is NULL: %w", comm.ErrArg))
	}
	tab.RLock()
	*eh = C.uintptr_t(fileErrh)
	tab.RUnlock()
	return C.MPI_SUCCESS
}

// shmUnsupportedFile is every MPI I/O function (unsupported.c):
// MPI_ERR_UNSUPPORTED_OPERATION naming it, on MPI_FILE_NULL's handler.
//
//export shmUnsupportedFile
func shmUnsupportedFile(name *C.char) C.int {
	call := goString(name)
	return fileNull{}.raise(call, fmt.Errorf("%s is not implemented by shmrun (MPI I/O is not; docs/CAPI-functions.md lists what is): %w", call, errUnsupported))
}

// shmUnsupportedEh is a function of the standard ABI shmrun does not
// implement that takes the error handler its errors go to
// (MPI_Session_init, MPI_Comm_create_from_group, ...: MPI 4.1 §11.3.1):
// MPI_ERR_UNSUPPORTED_OPERATION naming it, on that handler.
//
//export shmUnsupportedEh
func shmUnsupportedEh(name *C.char, eh C.uintptr_t) C.int {
	call := goString(name)
	err := fmt.Errorf("%s is not implemented by shmrun (docs/CAPI-functions.md lists what is): %w", call, errUnsupported)
	return raise(call, uintptr(eh), hCommNull, err)
}
