//go:build !mpi

package main

/*
#include "mpi.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/winc"
)

// Rank arguments: the standard ABI's special values against the Go API's.
func goRank(r C.int) int {
	switch r {
	case C.MPI_PROC_NULL:
		return comm.ProcNull
	case C.MPI_ANY_SOURCE:
		return comm.AnySource
	case C.MPI_UNDEFINED:
		return comm.Undefined
	}
	return int(r)
}

func cRank(r int) C.int {
	switch r {
	case comm.ProcNull:
		return C.MPI_PROC_NULL
	case comm.AnySource:
		return C.MPI_ANY_SOURCE
	case comm.Undefined:
		return C.MPI_UNDEFINED
	}
	return C.int(r)
}

func goTag(t C.int) int {
	if t == C.MPI_ANY_TAG {
		return comm.AnyTag
	}
	return int(t)
}

func cTag(t int) C.int {
	if t == comm.AnyTag {
		return C.MPI_ANY_TAG
	}
	return C.int(t)
}

func cCompare(r int) C.int {
	switch r {
	case comm.Ident:
		return C.MPI_IDENT
	case comm.Congruent:
		return C.MPI_CONGRUENT
	case comm.Similar:
		return C.MPI_SIMILAR
	}
	return C.MPI_UNEQUAL
}

// newComm registers a communicator made by a call on parent: it inherits
// the parent's error handler, as the standard says (and holds it).
func newComm(c *comm.Comm, parent *commH) C.uintptr_t {
	if c == nil {
		return hCommNull
	}
	tab.Lock()
	defer tab.Unlock()
	h := newHandle()
	tab.comms[h] = &commH{c: c, errh: parent.errh, h: h}
	errhRetain(parent.errh)
	return C.uintptr_t(h)
}

// newCommAt registers c, made from parent, under handle h, which
// shmCommIdup reserved.
func newCommAt(h uintptr, c *comm.Comm, parent *commH) {
	tab.Lock()
	defer tab.Unlock()
	tab.comms[h] = &commH{c: c, errh: parent.errh, h: h}
	errhRetain(parent.errh)
}

//export shmCommRank
func shmCommRank(h C.uintptr_t, rank *C.int) C.int {
	x, code := commOf("MPI_Comm_rank", uintptr(h))
	if code != 0 {
		return code
	}
	*rank = C.int(x.c.Rank())
	return C.MPI_SUCCESS
}

//export shmCommSize
func shmCommSize(h C.uintptr_t, size *C.int) C.int {
	x, code := commOf("MPI_Comm_size", uintptr(h))
	if code != 0 {
		return code
	}
	*size = C.int(x.c.Size())
	return C.MPI_SUCCESS
}

//export shmCommDup
func shmCommDup(h C.uintptr_t, out *C.uintptr_t) C.int {
	x, code := commOf("MPI_Comm_dup", uintptr(h))
	if code != 0 {
		return code
	}
	return commDup("MPI_Comm_dup", x, out)
}

// commDup duplicates x for call (MPI_Comm_dup, MPI_Comm_dup_with_info):
// the runtime's Dup, then the program's attributes copied.
func commDup(call string, x *commH, out *C.uintptr_t) C.int {
	c, err := x.c.Dup()
	if err != nil {
		return x.raise(call, err)
	}
	nh := newComm(c, x)
	y, _ := get(tab.comms, uintptr(nh))
	as, err := copyAll(attrComm, x.h, attrsSnapshot(&x.uattrs), uintptr(nh))
	if err != nil {
		// A copy callback failed: no communicator for the program. The
		// runtime's stays unfreed (a Free is collective, and the other
		// ranks may have their copies).
		drop(tab.comms, uintptr(nh))
		releaseErrh(&y.errh)
		*out = hCommNull
		return x.raise(call, err)
	}
	tab.Lock()
	y.uattrs = as
	tab.Unlock()
	*out = nh
	return C.MPI_SUCCESS
}

//export shmCommSplit
func shmCommSplit(h C.uintptr_t, color, key C.int, out *C.uintptr_t) C.int {
	x, code := commOf("MPI_Comm_split", uintptr(h))
	if code != 0 {
		return code
	}
	c, err := x.c.Split(goRank(color), int(key))
	if err != nil {
		return x.raise("MPI_Comm_split", err)
	}
	*out = newComm(c, x)
	return C.MPI_SUCCESS
}

//export shmCommSplitType
func shmCommSplitType(h C.uintptr_t, kind, key C.int, info C.uintptr_t, out *C.uintptr_t) C.int {
	x, code := commOf("MPI_Comm_split_type", uintptr(h))
	if code != 0 {
		return code
	}
	var k comm.SplitKind
	switch kind {
	case C.MPI_COMM_TYPE_SHARED:
		k = comm.TypeShared
	case C.MPI_COMM_TYPE_HW_GUIDED:
		k = comm.TypeHWGuided
	case C.MPI_COMM_TYPE_HW_UNGUIDED:
		k = comm.TypeHWUnguided
	case C.MPI_UNDEFINED:
		// The other ranks may pass a kind (MPI 4.1, 7.4.2): this rank
		// takes part in their SplitType and gets no communicator.
		k = comm.SplitKind(comm.Undefined)
	default:
		return x.raise("MPI_Comm_split_type", fmt.Errorf("split type %d: %w", int(kind), comm.ErrArg))
	}
	in, err := infoMap(uintptr(info))
	if err != nil {
		return x.raise("MPI_Comm_split_type", err)
	}
	c, err := x.c.SplitType(k, int(key), comm.Info(in))
	if err != nil {
		return x.raise("MPI_Comm_split_type", err)
	}
	*out = newComm(c, x)
	return C.MPI_SUCCESS
}

//export shmCommCreate
func shmCommCreate(h, g C.uintptr_t, out *C.uintptr_t) C.int {
	x, code := commOf("MPI_Comm_create", uintptr(h))
	if code != 0 {
		return code
	}
	grp, err := groupOf(uintptr(g))
	if err != nil {
		return x.raise("MPI_Comm_create", err)
	}
	c, err := x.c.Create(grp)
	if err != nil {
		return x.raise("MPI_Comm_create", err)
	}
	*out = newComm(c, x)
	return C.MPI_SUCCESS
}

//export shmCommCreateGroup
func shmCommCreateGroup(h, g C.uintptr_t, tag C.int, out *C.uintptr_t) C.int {
	x, code := commOf("MPI_Comm_create_group", uintptr(h))
	if code != 0 {
		return code
	}
	grp, err := groupOf(uintptr(g))
	if err != nil {
		return x.raise("MPI_Comm_create_group", err)
	}
	c, err := x.c.CreateGroup(grp, int(tag))
	if err != nil {
		return x.raise("MPI_Comm_create_group", err)
	}
	*out = newComm(c, x)
	return C.MPI_SUCCESS
}

//export shmCommFree
func shmCommFree(h *C.uintptr_t) C.int {
	x, code := commOf("MPI_Comm_free", uintptr(*h))
	if code != 0 {
		return code
	}
	if *h == hCommWorld || *h == hCommSelf {
		return x.raise("MPI_Comm_free", fmt.Errorf("%s is predefined and cannot be freed: %w", x.name, comm.ErrComm))
	}
	if err := deleteAll(attrComm, x.h, &x.uattrs); err != nil {
		return x.raise("MPI_Comm_free", err) // not freed
	}
	cqFlush()          // receives queued in C on it become Go's while it has its descriptor
	winc.NBCDrain(x.c) // its nonblocking collectives' jobs use the descriptor
	tab.Lock()
	dropCommDesc(x) // before the free: a failed free keeps the Go path
	tab.Unlock()
	err := x.c.Free()
	if err != nil && !errors.Is(err, comm.ErrEarlierCall) {
		return x.raise("MPI_Comm_free", err)
	}
	// Freed, perhaps with an earlier call's mismatch to report (to its
	// handler, which it lets go of after). Its persistent collectives'
	// jobs still call with its handle: kept for them.
	tab.Lock()
	delete(tab.comms, uintptr(*h))
	if x.pcolls > 0 {
		if kc, _ := winc.KeptComm(x.c).(*comm.Comm); kc != nil {
			tab.kept[x.h] = &commH{h: x.h, c: kc, errh: x.errh, name: x.name}
		}
	}
	tab.Unlock()
	*h = hCommNull
	// Its error handler stays while a request of it may still fail
	// (MPI 4.1 §6.4.3: operations pending at the free complete; their
	// errors go to this handler): every request holds x, so the handler
	// is let go of once the last request is gone.
	eh := x.errh
	runtime.AddCleanup(x, releaseErrhOf, eh)
	if err != nil {
		return x.raise("MPI_Comm_free", err)
	}
	return C.MPI_SUCCESS
}

//export shmCommCompare
func shmCommCompare(a, b C.uintptr_t, result *C.int) C.int {
	x, code := commOf("MPI_Comm_compare", uintptr(a))
	if code != 0 {
		return code
	}
	y, code := commOf("MPI_Comm_compare", uintptr(b))
	if code != 0 {
		return code
	}
	*result = cCompare(comm.Compare(x.c, y.c))
	return C.MPI_SUCCESS
}

//export shmCommGroup
func shmCommGroup(h C.uintptr_t, out *C.uintptr_t) C.int {
	x, code := commOf("MPI_Comm_group", uintptr(h))
	if code != 0 {
		return code
	}
	*out = newGroup(x.c.Group())
	return C.MPI_SUCCESS
}

//export shmCommSetName
func shmCommSetName(h C.uintptr_t, name *C.char) C.int {
	x, code := commOf("MPI_Comm_set_name", uintptr(h))
	if code != 0 {
		return code
	}
	s := objectName(name)
	tab.Lock()
	x.name = s
	tab.Unlock()
	return C.MPI_SUCCESS
}

// objectName is the name a set_name call gives its object: the string at
// p, cut to the MPI_MAX_OBJECT_NAME - 1 bytes the get_name calls' buffers
// hold with their NUL.
func objectName(p *C.char) string {
	s := goString(p)
	if len(s) >= C.MPI_MAX_OBJECT_NAME {
		s = s[:C.MPI_MAX_OBJECT_NAME-1]
	}
	return s
}

//export shmCommGetName
func shmCommGetName(h C.uintptr_t, name *C.char, resultlen *C.int) C.int {
	x, code := commOf("MPI_Comm_get_name", uintptr(h))
	if code != 0 {
		return code
	}
	tab.RLock()
	s := x.name
	tab.RUnlock()
	*resultlen = C.int(putString(name, C.MPI_MAX_OBJECT_NAME, s))
	return C.MPI_SUCCESS
}

//export shmCommSetErrhandler
func shmCommSetErrhandler(h, eh C.uintptr_t) C.int {
	x, code := commOf("MPI_Comm_set_errhandler", uintptr(h))
	if code != 0 {
		return code
	}
	return setErrhandler("MPI_Comm_set_errhandler", uintptr(eh), errhComm, &x.errh, x)
}

//export shmCommGetErrhandler
func shmCommGetErrhandler(h C.uintptr_t, eh *C.uintptr_t) C.int {
	x, code := commOf("MPI_Comm_get_errhandler", uintptr(h))
	if code != 0 {
		return code
	}
	getErrhandler(&x.errh, eh)
	return C.MPI_SUCCESS
}

//export shmCommGetAttr
func shmCommGetAttr(h C.uintptr_t, key C.int, val **C.int, flag *C.int) C.int {
	x, code := commOf("MPI_Comm_get_attr", uintptr(h))
	if code != 0 {
		return code
	}
	w, _ := get(tab.comms, hCommWorld)
	p, ok := w.attr.lookup(key)
	if !ok {
		*flag = 0
		// Below firstKeyval only the predefined keys are keys (and a
		// window's are not a communicator's): any other number, such as
		// MPI_KEYVAL_INVALID, is MPI_ERR_KEYVAL, not a valid key without
		// a value.
		if key < C.MPI_TAG_UB || key > C.MPI_UNIVERSE_SIZE && key < firstKeyval {
			return x.raise("MPI_Comm_get_attr", fmt.Errorf("attribute key %d: %w", int(key), errKeyval))
		}
		return C.MPI_SUCCESS
	}
	*val, *flag = p, 1
	return C.MPI_SUCCESS
}

// shmCommTestInter is MPI_Comm_test_inter: false for every valid
// communicator, as shmrun makes intracommunicators only.
//
//export shmCommTestInter
func shmCommTestInter(h C.uintptr_t, flag *C.int) C.int {
	if _, code := commOf("MPI_Comm_test_inter", uintptr(h)); code != 0 {
		return code
	}
	*flag = 0
	return C.MPI_SUCCESS
}

// shmCommRemote is MPI_Comm_remote_size and MPI_Comm_remote_group (call):
// MPI_ERR_COMM on communicator h's handler, as h, a valid communicator,
// is an intracommunicator, which has no remote group (MPI 4.1 §7.6.1).
//
//export shmCommRemote
func shmCommRemote(h C.uintptr_t, call *C.char) C.int {
	name := callName(call)
	x, code := commOf(name, uintptr(h))
	if code != 0 {
		return code
	}
	tab.RLock()
	cn := x.name
	tab.RUnlock()
	if cn == "" {
		cn = fmt.Sprintf("communicator %#x", x.h)
	}
	return x.raise(name, fmt.Errorf("%s is not an intercommunicator (shmrun makes intracommunicators only), so it has no remote group: %w", cn, comm.ErrComm))
}

// shmCommDupInfo is MPI_Comm_dup_with_info: MPI_Comm_dup whose new
// communicator takes info's hints instead of comm's. No hint of a
// communicator is used here (MPI 4.1 §7.4.4 lets an implementation ignore
// them), so info is only checked: a wrong handle on one rank fails the
// duplication on every rank (the Dup's agreement carries the refusal).
//
//export shmCommDupInfo
func shmCommDupInfo(h, info C.uintptr_t, out *C.uintptr_t) C.int {
	const call = "MPI_Comm_dup_with_info"
	x, code := commOf(call, uintptr(h))
	if code != 0 {
		return code
	}
	if _, err := infoMap(uintptr(info)); err != nil {
		return x.raise(call, winc.RefuseColl(x.c, call, format.CollDup, err))
	}
	return commDup(call, x, out)
}

// shmCommSetInfo is MPI_Comm_set_info: the hints are checked and, none
// being used here, not kept; MPI_Comm_get_info then returns an empty
// info, as MPI 4.1 §7.4.4 allows for hints an implementation ignores.
// Collective in MPI; nothing here waits.
//
//export shmCommSetInfo
func shmCommSetInfo(h, info C.uintptr_t) C.int {
	const call = "MPI_Comm_set_info"
	x, code := commOf(call, uintptr(h))
	if code != 0 {
		return code
	}
	if _, err := infoMap(uintptr(info)); err != nil {
		return x.raise(call, err)
	}
	return C.MPI_SUCCESS
}

// shmCommGetInfo is MPI_Comm_get_info: a new info object, empty (the
// hints in use: none).
//
//export shmCommGetInfo
func shmCommGetInfo(h C.uintptr_t, info *C.uintptr_t) C.int {
	const call = "MPI_Comm_get_info"
	if _, code := commOf(call, uintptr(h)); code != 0 {
		return code
	}
	*info = newInfo(nil)
	return C.MPI_SUCCESS
}
