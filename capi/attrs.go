//go:build !mpi

package main

/*
#include <stdlib.h>
#include "mpi.h"
*/
import "C"

import (
	"github.com/shmrun/shmrun/comm"
)

// firstKeyval is above every predefined attribute key.
const firstKeyval = 1 << 12

// An attrBlock holds the predefined communicator attributes'
// values in C memory (MPI_Comm_get_attr hands out pointers to them, which
// the program may keep): one block for the process, made at MPI_Init.
type attrBlock struct {
	vals   *C.int // tagUB, host, io, wtimeIsGlobal, universeSize, lastUsedCode, appNum
	appSet bool   // MPI_APPNUM has a value (not in a singleton)
}

const (
	attrTagUB = iota
	attrHost
	attrIO
	attrWtimeGlobal
	attrUniverse
	attrLastCode
	attrAppNum
	attrCount
)

func newAttrBlock(w *comm.Comm) *attrBlock {
	p := (*C.int)(C.calloc(attrCount, C.sizeof_int))
	v := cArray(p, attrCount)
	v[attrTagUB] = C.int(comm.TagUB)
	v[attrHost] = C.MPI_PROC_NULL     // no host process
	v[attrIO] = C.MPI_ANY_SOURCE      // every rank may do I/O
	v[attrWtimeGlobal] = 0            // each process's clock starts at its own Init
	v[attrUniverse] = C.int(w.Size()) // no spawning: the universe is the world
	v[attrLastCode] = C.MPI_ERR_LASTCODE
	// The program's number on shmrun's command line: MPI 4.1 §12.10.3
	// sets MPI_APPNUM when a launcher that takes several programs (as
	// shmrun does, MPMD) started the process; a singleton has none.
	app, ok := w.AppNum()
	v[attrAppNum] = C.int(app)
	return &attrBlock{vals: p, appSet: ok}
}

// lookup is the pointer MPI_Comm_get_attr returns for key.
func (a *attrBlock) lookup(key C.int) (*C.int, bool) {
	if a == nil {
		return nil, false
	}
	v := cArray(a.vals, attrCount)
	switch key {
	case C.MPI_TAG_UB:
		return &v[attrTagUB], true
	case C.MPI_HOST:
		return &v[attrHost], true
	case C.MPI_IO:
		return &v[attrIO], true
	case C.MPI_WTIME_IS_GLOBAL:
		return &v[attrWtimeGlobal], true
	case C.MPI_UNIVERSE_SIZE:
		return &v[attrUniverse], true
	case C.MPI_LASTUSEDCODE:
		return &v[attrLastCode], true
	case C.MPI_APPNUM:
		return &v[attrAppNum], a.appSet
	}
	return nil, false
}
