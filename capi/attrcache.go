//go:build !mpi

package main

/*
#include "mpi.h"

// Calling a program's attribute callbacks (MPI 4.1 §7.7) on an object of
// kind 0 (communicator), 1 (window) or 2 (datatype): each kind's function
// type, with the object's handle.
static int shmrun_call_attr_copy(int kind, uintptr_t fn, uintptr_t h, int key, uintptr_t extra, uintptr_t in,
				 uintptr_t *out, int *flag) {
	void *o = NULL;
	int rc;
	switch (kind) {
	case 0:
		rc = ((MPI_Comm_copy_attr_function *)fn)((MPI_Comm)h, key, (void *)extra, (void *)in, &o, flag);
		break;
	case 1:
		rc = ((MPI_Win_copy_attr_function *)fn)((MPI_Win)h, key, (void *)extra, (void *)in, &o, flag);
		break;
	default:
		rc = ((MPI_Type_copy_attr_function *)fn)((MPI_Datatype)h, key, (void *)extra, (void *)in, &o, flag);
	}
	*out = (uintptr_t)o;
	return rc;
}
static int shmrun_call_attr_delete(int kind, uintptr_t fn, uintptr_t h, int key, uintptr_t val, uintptr_t extra) {
	switch (kind) {
	case 0:
		return ((MPI_Comm_delete_attr_function *)fn)((MPI_Comm)h, key, (void *)val, (void *)extra);
	case 1:
		return ((MPI_Win_delete_attr_function *)fn)((MPI_Win)h, key, (void *)val, (void *)extra);
	}
	return ((MPI_Type_delete_attr_function *)fn)((MPI_Datatype)h, key, (void *)val, (void *)extra);
}
*/
import "C"

import (
	"fmt"
	"slices"
)

// Attribute caching with the program's keys (MPI 4.1 §7.7): keyvals made
// by MPI_Comm_create_keyval, MPI_Win_create_keyval and
// MPI_Type_create_keyval, numbered from firstKeyval up (above the
// predefined attribute keys) and never given twice; each object holds its
// attributes in the order they were set. The callbacks run outside the
// tables' lock (they may call MPI): the copy callbacks by MPI_Comm_dup and
// MPI_Type_dup (windows are not duplicated), the delete callbacks by
// MPI_*_delete_attr, by MPI_*_set_attr replacing a value, and by the
// calls that free an object, last set first, before the object goes; and
// MPI_Finalize deletes MPI_COMM_SELF's attributes first (§11.2.4). A
// callback that returns other than MPI_SUCCESS fails the call that ran
// it, with an error of its code's class (MPI_ERR_OTHER if the code is
// none), the object left as it was but for the attributes deleted before.

// Attribute kinds: the objects keyvals are for.
const (
	attrComm = iota
	attrWin
	attrType
)

var attrKinds = [...]struct{ obj, prefix string }{
	{"communicator", "MPI_Comm_"}, {"window", "MPI_Win_"}, {"datatype", "MPI_Type_"},
}

// The predefined callbacks, as the standard ABI numbers them.
const (
	nullCopyFn   = 0 // MPI_*_NULL_COPY_FN: not copied
	dupFn        = 1 // MPI_*_DUP_FN: the same value
	nullDeleteFn = 0 // MPI_*_NULL_DELETE_FN: nothing
)

// A keyvalH is a keyval the program made.
type keyvalH struct {
	kind      int
	copy, del C.uintptr_t
	extra     C.uintptr_t
	freed     bool // by MPI_*_free_keyval: it goes once no attribute uses it
	uses      int  // attributes set with it
	key       C.int
}

// An attr is one attribute an object holds.
type attr struct {
	kv  *keyvalH
	val C.uintptr_t
}

var keyvals = struct {
	m    map[C.int]*keyvalH // under tab's lock
	next C.int
}{m: map[C.int]*keyvalH{}, next: firstKeyval}

// keyvalLocked is key's keyval for an object of kind, or the error of a
// call given it; tab is locked.
func keyvalLocked(kind int, key C.int) (*keyvalH, error) {
	kv, ok := keyvals.m[key]
	switch {
	case key == C.MPI_KEYVAL_INVALID:
		return nil, fmt.Errorf("MPI_KEYVAL_INVALID: %w", errKeyval)
	case !ok && key < firstKeyval:
		return nil, fmt.Errorf("attribute key %d is predefined, or no %s key: only keys made by %screate_keyval take values: %w",
			int(key), attrKinds[kind].obj, attrKinds[kind].prefix, errKeyval)
	case !ok:
		return nil, fmt.Errorf("attribute key %d: never made, or freed and no longer used: %w", int(key), errKeyval)
	case kv.kind != kind:
		return nil, fmt.Errorf("attribute key %d is a %s key, not a %s key: %w", int(key), attrKinds[kv.kind].obj, attrKinds[kind].obj, errKeyval)
	}
	return kv, nil
}

// releaseKeyvalLocked notes that an attribute of kv went; tab is locked.
func releaseKeyvalLocked(kv *keyvalH) {
	if kv.uses--; kv.uses <= 0 && kv.freed {
		delete(keyvals.m, kv.key)
	}
}

// callbackError is the error of a call whose callback returned rc.
func callbackError(what string, kv *keyvalH, rc C.int) error {
	class, ok := classOfCode(rc)
	if !ok || class == C.MPI_SUCCESS {
		class = C.MPI_ERR_OTHER
	}
	return &classError{class: class, msg: fmt.Sprintf("the %s callback of attribute key %d returned %d", what, int(kv.key), int(rc))}
}

// deleteAttr runs a's delete callback for the object of handle h.
func deleteAttr(kind int, h uintptr, a attr) error {
	if a.kv.del == nullDeleteFn {
		return nil
	}
	if rc := C.shmrun_call_attr_delete(C.int(kind), a.kv.del, C.uintptr_t(h), a.kv.key, a.val, a.kv.extra); rc != C.MPI_SUCCESS {
		return callbackError("delete", a.kv, rc)
	}
	return nil
}

// deleteAll deletes the attributes *as of the object of handle h, last
// set first (MPI_*_free, and MPI_Finalize's of MPI_COMM_SELF); at a
// callback's error it stops, the attributes not deleted kept.
func deleteAll(kind int, h uintptr, as *[]attr) error {
	for {
		tab.Lock()
		n := len(*as)
		if n == 0 {
			tab.Unlock()
			return nil
		}
		a := (*as)[n-1]
		tab.Unlock()
		if err := deleteAttr(kind, h, a); err != nil {
			return err
		}
		tab.Lock()
		if i := slices.Index(*as, a); i >= 0 {
			*as = slices.Delete(*as, i, i+1)
			releaseKeyvalLocked(a.kv)
		}
		tab.Unlock()
	}
}

// forgetAll drops attributes without running their delete callbacks:
// the copies MPI_Comm_idup made for a communicator whose making failed
// (the job is aborting, and the callbacks would run on the communicator's
// worker thread rather than the program's).
func forgetAll(as []attr) {
	tab.Lock()
	defer tab.Unlock()
	for _, a := range as {
		releaseKeyvalLocked(a.kv)
	}
}

// copyAll runs the copy callbacks of the attributes of the object of
// handle h, old, for its copy (MPI_Comm_dup, MPI_Type_dup): the
// attributes the copy gets. At a callback's error the attributes copied
// so far are deleted (their delete callbacks run for the copy, newh).
func copyAll(kind int, h uintptr, old []attr, newh uintptr) ([]attr, error) {
	var out []attr
	for _, a := range old {
		var v C.uintptr_t
		var flag C.int
		switch a.kv.copy {
		case nullCopyFn:
		case dupFn:
			v, flag = a.val, 1
		default:
			if rc := C.shmrun_call_attr_copy(C.int(kind), a.kv.copy, C.uintptr_t(h), a.kv.key, a.kv.extra, a.val, &v, &flag); rc != C.MPI_SUCCESS {
				err := callbackError("copy", a.kv, rc)
				for i := len(out) - 1; i >= 0; i-- {
					deleteAttr(kind, newh, out[i]) // the copy's error is the call's
				}
				return nil, err
			}
		}
		if flag != 0 {
			out = append(out, attr{a.kv, v})
		}
	}
	tab.Lock()
	for _, a := range out {
		a.kv.uses++
	}
	tab.Unlock()
	return out, nil
}

// attrsOf is the attributes of the object of kind and handle h, or the
// error of call (raised already).
func attrsOf(kind int, call string, h C.uintptr_t) (*[]attr, raiser, C.int) {
	switch kind {
	case attrComm:
		x, code := commOf(call, uintptr(h))
		if code != 0 {
			return nil, nil, code
		}
		return &x.uattrs, x, 0
	case attrWin:
		x, code := winOf(call, uintptr(h))
		if code != 0 {
			return nil, nil, code
		}
		return &x.uattrs, x, 0
	}
	if !initialized() {
		return nil, nil, notInit(call)
	}
	x, err := typeOf(uintptr(h))
	if err != nil {
		return nil, nil, raiseSelf(call, err)
	}
	return &x.uattrs, selfRaiser{}, 0
}

// selfRaiser raises on MPI_COMM_SELF's handler (a datatype's errors).
type selfRaiser struct{}

func (selfRaiser) raise(call string, err error) C.int { return raiseSelf(call, err) }

// shmKeyvalCreate is MPI_Comm_create_keyval, MPI_Win_create_keyval and
// MPI_Type_create_keyval (kind).
//
//export shmKeyvalCreate
func shmKeyvalCreate(kind C.int, copyFn, delFn C.uintptr_t, key *C.int, extra C.uintptr_t) C.int {
	call := attrKinds[kind].prefix + "create_keyval"
	if !initialized() {
		return notInit(call)
	}
	tab.Lock()
	kv := &keyvalH{kind: int(kind), copy: copyFn, del: delFn, extra: extra, key: keyvals.next}
	keyvals.m[kv.key] = kv
	keyvals.next++
	tab.Unlock()
	*key = kv.key
	return C.MPI_SUCCESS
}

// shmKeyvalFree is MPI_*_free_keyval (kind): *key becomes
// MPI_KEYVAL_INVALID; the keyval goes once no attribute uses it.
//
//export shmKeyvalFree
func shmKeyvalFree(kind C.int, key *C.int) C.int {
	call := attrKinds[kind].prefix + "free_keyval"
	if !initialized() {
		return notInit(call)
	}
	tab.Lock()
	kv, err := keyvalLocked(int(kind), *key)
	if err == nil && kv.freed {
		err = fmt.Errorf("attribute key %d was freed already: %w", int(*key), errKeyval)
	}
	if err == nil {
		kv.freed = true
		if kv.uses == 0 {
			delete(keyvals.m, kv.key)
		}
	}
	tab.Unlock()
	if err != nil {
		return raiseSelf(call, err)
	}
	*key = C.MPI_KEYVAL_INVALID
	return C.MPI_SUCCESS
}

// shmAttrSet is MPI_*_set_attr (kind) of the object of handle h: a value
// the key has there is deleted first (its delete callback runs).
//
//export shmAttrSet
func shmAttrSet(kind C.int, h C.uintptr_t, key C.int, val C.uintptr_t) C.int {
	call := attrKinds[kind].prefix + "set_attr"
	as, x, code := attrsOf(int(kind), call, h)
	if code != 0 {
		return code
	}
	tab.Lock()
	kv, err := keyvalLocked(int(kind), key)
	if err == nil && kv.freed {
		err = fmt.Errorf("attribute key %d was freed by %sfree_keyval: %w", int(key), attrKinds[kind].prefix, errKeyval)
	}
	i := slices.IndexFunc(*as, func(a attr) bool { return a.kv == kv })
	var old attr
	if i >= 0 {
		old = (*as)[i]
	}
	tab.Unlock()
	if err != nil {
		return x.raise(call, err)
	}
	if i >= 0 {
		if err := deleteAttr(int(kind), uintptr(h), old); err != nil {
			return x.raise(call, err)
		}
	}
	tab.Lock()
	if i := slices.Index(*as, old); i >= 0 && old.kv != nil {
		*as = slices.Delete(*as, i, i+1)
		kv.uses--
	}
	*as = append(*as, attr{kv, val}) // last set: deleted first
	kv.uses++
	tab.Unlock()
	return C.MPI_SUCCESS
}

// shmAttrGet is MPI_*_get_attr (kind) of a key the program made (user
// set: any key from firstKeyval up; the predefined ones are the C side's
// and shmCommGetAttr's, and *user is 0 for them).
//
//export shmAttrGet
func shmAttrGet(kind C.int, h C.uintptr_t, key C.int, val *C.uintptr_t, flag *C.int, user *C.int) C.int {
	if key < firstKeyval && kind != attrType {
		*user = 0
		return C.MPI_SUCCESS
	}
	*user = 1
	call := attrKinds[kind].prefix + "get_attr"
	as, x, code := attrsOf(int(kind), call, h)
	if code != 0 {
		return code
	}
	tab.RLock()
	kv, err := keyvalLocked(int(kind), key)
	i := slices.IndexFunc(*as, func(a attr) bool { return a.kv == kv })
	var v C.uintptr_t
	if i >= 0 {
		v = (*as)[i].val
	}
	tab.RUnlock()
	if err != nil {
		return x.raise(call, err)
	}
	*flag = cbool(i >= 0)
	if i >= 0 {
		*val = v
	}
	return C.MPI_SUCCESS
}

// shmAttrDelete is MPI_*_delete_attr (kind): the key's value on the
// object goes, its delete callback run. A key with no value there is
// nothing to delete (as MPICH has it).
//
//export shmAttrDelete
func shmAttrDelete(kind C.int, h C.uintptr_t, key C.int) C.int {
	call := attrKinds[kind].prefix + "delete_attr"
	as, x, code := attrsOf(int(kind), call, h)
	if code != 0 {
		return code
	}
	tab.RLock()
	kv, err := keyvalLocked(int(kind), key)
	i := slices.IndexFunc(*as, func(a attr) bool { return a.kv == kv })
	var a attr
	if i >= 0 {
		a = (*as)[i]
	}
	tab.RUnlock()
	if err != nil {
		return x.raise(call, err)
	}
	if i < 0 {
		return C.MPI_SUCCESS
	}
	if err := deleteAttr(int(kind), uintptr(h), a); err != nil {
		return x.raise(call, err)
	}
	tab.Lock()
	if i := slices.Index(*as, a); i >= 0 {
		*as = slices.Delete(*as, i, i+1)
		releaseKeyvalLocked(a.kv)
	}
	tab.Unlock()
	return C.MPI_SUCCESS
}

// attrsSnapshot is a copy of *as.
func attrsSnapshot(as *[]attr) []attr {
	tab.RLock()
	defer tab.RUnlock()
	return slices.Clone(*as)
}
