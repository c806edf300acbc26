//go:build !mpi

package main

/*
#include "mpi.h"
*/
import "C"

import (
	"fmt"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/win"
)

//export shmWinSetErrhandler
func shmWinSetErrhandler(h, eh C.uintptr_t) C.int {
	x, code := winOf("MPI_Win_set_errhandler", uintptr(h))
	if code != 0 {
		return code
	}
	return setErrhandler("MPI_Win_set_errhandler", uintptr(eh), errhWin, &x.errh, x)
}

//export shmWinGetErrhandler
func shmWinGetErrhandler(h C.uintptr_t, eh *C.uintptr_t) C.int {
	x, code := winOf("MPI_Win_get_errhandler", uintptr(h))
	if code != 0 {
		return code
	}
	getErrhandler(&x.errh, eh)
	return C.MPI_SUCCESS
}

//export shmWinGetGroup
func shmWinGetGroup(h C.uintptr_t, g *C.uintptr_t) C.int {
	x, code := winOf("MPI_Win_get_group", uintptr(h))
	if code != 0 {
		return code
	}
	*g = newGroup(x.w.Group())
	return C.MPI_SUCCESS
}

//export shmWinGetInfo
func shmWinGetInfo(h C.uintptr_t, info *C.uintptr_t) C.int {
	x, code := winOf("MPI_Win_get_info", uintptr(h))
	if code != 0 {
		return code
	}
	*info = newInfo(x.w.Info())
	return C.MPI_SUCCESS
}

// shmWinAttach is MPI_Win_attach (attach) and MPI_Win_detach: the region
// is the C program's memory (from MPI_Alloc_mem, or any other).
//
//export shmWinAttach
func shmWinAttach(h C.uintptr_t, base *C.char, size C.MPI_Aint, attach C.int) C.int {
	call := "MPI_Win_detach"
	if attach != 0 {
		call = "MPI_Win_attach"
	}
	x, code := winOf(call, uintptr(h))
	if code != 0 {
		return code
	}
	var err error
	if attach != 0 {
		if size < 0 {
			return x.raise(call, fmt.Errorf("size %d is negative: %w", int64(size), comm.ErrArg))
		}
		err = x.w.Attach(bytesAt(base, int64(size)))
		if err == nil {
			chkAttach(x.h, x.w, bytesAt(base, int64(size)), true)
			// A region of size 0 is no region: it must not replace the
			// size of one attached at the same base, which its detach
			// names.
			k := attachKey{x.h, caddr(base)}
			tab.Lock()
			if old, ok := attached[k]; !ok || old == 0 {
				attached[k] = int64(size)
			}
			tab.Unlock()
		}
	} else {
		tab.Lock()
		n, ok := attached[attachKey{x.h, caddr(base)}]
		delete(attached, attachKey{x.h, caddr(base)})
		tab.Unlock()
		if !ok {
			return x.raise(call, fmt.Errorf("no region attached at %#x: %w", uintptr(caddr(base)), win.ErrRMAAttach))
		}
		err = x.w.Detach(bytesAt(base, n))
		if err == nil {
			chkAttach(x.h, x.w, bytesAt(base, n), false)
		}
	}
	if err != nil {
		return x.raise(call, err)
	}
	return C.MPI_SUCCESS
}

// attached remembers each attached region's size: MPI_Win_detach names a
// region by its base alone.
type attachKey struct {
	win  uintptr
	base C.MPI_Aint
}

var attached = map[attachKey]int64{}

// allocated remembers MPI_Alloc_mem's blocks: MPI_Free_mem gets only the
// base.
var allocated = map[C.MPI_Aint][]byte{}

//export shmAllocMem
func shmAllocMem(size C.MPI_Aint, info C.uintptr_t, base **C.char) C.int {
	if !initialized() {
		return notInit("MPI_Alloc_mem")
	}
	in, err := infoMap(uintptr(info))
	if err != nil {
		return raiseSelf("MPI_Alloc_mem", err)
	}
	if size < 0 {
		return raiseSelf("MPI_Alloc_mem", fmt.Errorf("size %d is negative: %w", int64(size), comm.ErrArg))
	}
	mem, err := comm.AllocMem(int(size), comm.Info(in))
	if err != nil {
		return raiseSelf("MPI_Alloc_mem", err)
	}
	p := cptr(mem)
	tab.Lock()
	allocated[caddr(p)] = mem
	tab.Unlock()
	*base = p
	return C.MPI_SUCCESS
}

//export shmFreeMem
func shmFreeMem(base *C.char) C.int {
	if !initialized() {
		return notInit("MPI_Free_mem")
	}
	tab.Lock()
	mem, ok := allocated[caddr(base)]
	delete(allocated, caddr(base))
	tab.Unlock()
	if !ok {
		return raiseSelf("MPI_Free_mem", fmt.Errorf("%#x is not the base of a block from MPI_Alloc_mem: %w", uintptr(caddr(base)), comm.ErrArg))
	}
	if err := comm.FreeMem(mem); err != nil {
		tab.Lock()
		allocated[caddr(base)] = mem
		tab.Unlock()
		return raiseSelf("MPI_Free_mem", err)
	}
	return C.MPI_SUCCESS
}

// shmWinSetInfo is MPI_Win_set_info: the hints are checked as an info
// object and not taken (the standard lets an implementation ignore hints;
// MPI_Win_get_info keeps reporting the hints in effect).
//
//export shmWinSetInfo
func shmWinSetInfo(h, info C.uintptr_t) C.int {
	x, code := winOf("MPI_Win_set_info", uintptr(h))
	if code != 0 {
		return code
	}
	if _, err := infoMap(uintptr(info)); err != nil {
		return x.raise("MPI_Win_set_info", err)
	}
	return C.MPI_SUCCESS
}

// shmWinSetName is MPI_Win_set_name: as a communicator's, a window's name
// is cut to MPI_MAX_OBJECT_NAME - 1 bytes. A window has no name until the
// program gives it one: MPI_Win_get_name returns the empty string.
//
//export shmWinSetName
func shmWinSetName(h C.uintptr_t, name *C.char) C.int {
	x, code := winOf("MPI_Win_set_name", uintptr(h))
	if code != 0 {
		return code
	}
	s := objectName(name)
	tab.Lock()
	x.name = s
	tab.Unlock()
	return C.MPI_SUCCESS
}

//export shmWinGetName
func shmWinGetName(h C.uintptr_t, name *C.char, resultlen *C.int) C.int {
	x, code := winOf("MPI_Win_get_name", uintptr(h))
	if code != 0 {
		return code
	}
	tab.RLock()
	s := x.name
	tab.RUnlock()
	*resultlen = C.int(putString(name, C.MPI_MAX_OBJECT_NAME, s))
	return C.MPI_SUCCESS
}
