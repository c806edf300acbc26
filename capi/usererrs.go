//go:build !mpi

package main

/*
#include "mpi.h"
*/
import "C"

import (
	"fmt"
	"sync"

	"github.com/shmrun/shmrun/comm"
)

// The program's error classes and codes (MPI 4.1 §9.5: MPI_Add_error_class,
// MPI_Add_error_code, MPI_Add_error_string and their MPI_Remove_ forms).
// They take values above MPI_ERR_LASTCODE and below the codes of raised
// errors (codeBase), one value each, never given twice; a class is its own
// code. MPI_Error_class and MPI_Error_string answer for them (an empty
// string until one is added), and MPI_LASTUSEDCODE, the world's attribute,
// is the largest value given.
type userErr struct {
	class C.int // the class a code belongs to; a class's own value
	str   string
	set   bool // str was added (and not removed)
	codes int  // a class's codes still in use
}

var userErrs = struct {
	sync.Mutex
	next C.int
	m    map[C.int]*userErr
}{next: C.MPI_ERR_LASTCODE + 1, m: map[C.int]*userErr{}}

// userErrOf is the program's class or code v, if it is one.
func userErrOf(v C.int) (*userErr, bool) {
	if v <= C.MPI_ERR_LASTCODE || v >= codeBase {
		return nil, false
	}
	userErrs.Lock()
	defer userErrs.Unlock()
	u, ok := userErrs.m[v]
	if !ok {
		return nil, false
	}
	c := *u
	return &c, true
}

// newUserErr gives the next value to a class (class < 0: the value
// itself) or to a code of class; userErrs is locked.
func newUserErr(class C.int) (C.int, error) {
	if userErrs.next >= codeBase {
		return 0, fmt.Errorf("all %d values for the program's error classes and codes are taken: %w", codeBase-C.MPI_ERR_LASTCODE-1, comm.ErrOther)
	}
	v := userErrs.next
	userErrs.next++
	if class < 0 {
		class = v
	}
	userErrs.m[v] = &userErr{class: class}
	if w := worldH.Load(); w != nil && w.attr != nil {
		if p, ok := w.attr.lookup(C.MPI_LASTUSEDCODE); ok {
			*p = v
		}
	}
	return v, nil
}

//export shmAddErrorClass
func shmAddErrorClass(class *C.int) C.int {
	userErrs.Lock()
	v, err := newUserErr(-1)
	userErrs.Unlock()
	if err != nil {
		return raiseSelf("MPI_Add_error_class", err)
	}
	*class = v
	return C.MPI_SUCCESS
}

//export shmAddErrorCode
func shmAddErrorCode(class C.int, code *C.int) C.int {
	userErrs.Lock()
	var v C.int
	var err error
	if u, ok := userErrs.m[class]; ok && u.class == class {
		if v, err = newUserErr(class); err == nil {
			u.codes++
		}
	} else if c, ok := predefinedClassOf(class); !ok || c != class || class == C.MPI_SUCCESS {
		err = fmt.Errorf("%d is no error class: %w", int(class), comm.ErrArg)
	} else {
		v, err = newUserErr(class)
	}
	userErrs.Unlock()
	if err != nil {
		return raiseSelf("MPI_Add_error_code", err)
	}
	*code = v
	return C.MPI_SUCCESS
}

//export shmAddErrorString
func shmAddErrorString(code C.int, s *C.char) C.int {
	str := C.GoString(s)
	userErrs.Lock()
	var err error
	switch u, ok := userErrs.m[code]; {
	case !ok:
		err = fmt.Errorf("%d is not an error class or code the program added (a string is added only to those): %w", int(code), comm.ErrArg)
	case len(str) >= C.MPI_MAX_ERROR_STRING:
		err = fmt.Errorf("a string of %d bytes, MPI_MAX_ERROR_STRING is %d: %w", len(str), C.MPI_MAX_ERROR_STRING, comm.ErrArg)
	default:
		u.str, u.set = str, true
	}
	userErrs.Unlock()
	if err != nil {
		return raiseSelf("MPI_Add_error_string", err)
	}
	return C.MPI_SUCCESS
}

// shmRemoveError is MPI_Remove_error_class (what 0), MPI_Remove_error_code
// (1) and MPI_Remove_error_string (2). A class goes once its codes and
// string have gone, a code once its string has; the value is not given
// again.
//
//export shmRemoveError
func shmRemoveError(v C.int, what C.int) C.int {
	call := [...]string{"MPI_Remove_error_class", "MPI_Remove_error_code", "MPI_Remove_error_string"}[what]
	userErrs.Lock()
	var err error
	u, ok := userErrs.m[v]
	isClass := ok && u.class == v
	switch {
	case !ok:
		err = fmt.Errorf("%d is not an error class or code the program added: %w", int(v), comm.ErrArg)
	case what == 2:
		if !u.set {
			err = fmt.Errorf("%d has no string to remove: %w", int(v), comm.ErrArg)
		}
		u.str, u.set = "", false
	case what == 0 && !isClass, what == 1 && isClass:
		err = fmt.Errorf("%d is an error %s: %w", int(v), map[bool]string{true: "class", false: "code"}[isClass], comm.ErrArg)
	case u.set:
		err = fmt.Errorf("%d still has its string (MPI_Remove_error_string first): %w", int(v), comm.ErrArg)
	case u.codes > 0:
		err = fmt.Errorf("class %d still has %d codes (MPI_Remove_error_code first): %w", int(v), u.codes, comm.ErrArg)
	default:
		delete(userErrs.m, v)
		if c, ok := userErrs.m[u.class]; ok && !isClass {
			c.codes--
		}
	}
	userErrs.Unlock()
	if err != nil {
		return raiseSelf(call, err)
	}
	return C.MPI_SUCCESS
}
