//go:build !mpi

package main

/*
#include "mpi.h"
*/
import "C"

import (
	"fmt"
	"math"
	"slices"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/win"
)

// An infoH is an info object: keys in the order they were first set.
type infoH struct {
	keys []string
	vals map[string]string
}

// infoMap is info handle h's contents as a map (nil for MPI_INFO_NULL).
func infoMap(h uintptr) (map[string]string, error) {
	if h == hInfoNull {
		return nil, nil
	}
	x, err := infoOf(h)
	if err != nil {
		return nil, err
	}
	tab.RLock()
	defer tab.RUnlock()
	m := make(map[string]string, len(x.vals))
	for k, v := range x.vals {
		m[k] = v
	}
	return m, nil
}

// infoOf is info handle h's object. MPI_INFO_ENV is one once MPI_Init
// has made it: MPI 4.1 §12.2.1 gives access to it after initialization
// (the info calls themselves may be made before, §12.4.1, on objects the
// program makes, such as MPI_Info_create_env's).
func infoOf(h uintptr) (*infoH, error) {
	if x, ok := get(tab.infos, h); ok {
		return x, nil
	}
	switch h {
	case hInfoEnv:
		return nil, fmt.Errorf("MPI_INFO_ENV before MPI_Init: MPI initialization makes it (MPI_Info_create_env gives its keys before): %w", errInfo)
	case hInfoNull:
		return nil, fmt.Errorf("MPI_INFO_NULL: %w", errInfo)
	}
	return nil, fmt.Errorf("an invalid info object (handle %#x): %w", h, errInfo)
}

// newInfo registers an info object with m's entries (sorted keys).
func newInfo(m map[string]string) C.uintptr_t {
	x := &infoH{vals: map[string]string{}}
	for k, v := range m {
		x.keys = append(x.keys, k)
		x.vals[k] = v
	}
	slices.Sort(x.keys)
	return C.uintptr_t(add(tab.infos, x))
}

func infoCall(call string, h C.uintptr_t, f func(*infoH) error) C.int {
	x, err := infoOf(uintptr(h))
	if err == nil {
		tab.Lock()
		err = f(x)
		tab.Unlock()
	}
	if err != nil {
		return raiseSelf(call, err)
	}
	return C.MPI_SUCCESS
}

//export shmInfoCreate
func shmInfoCreate(out *C.uintptr_t) C.int {
	*out = newInfo(nil)
	return C.MPI_SUCCESS
}

func checkKey(k string) error {
	if k == "" || len(k) >= C.MPI_MAX_INFO_KEY {
		return fmt.Errorf("key %q: empty or longer than %d: %w", k, C.MPI_MAX_INFO_KEY-1, errInfoKey)
	}
	return nil
}

//export shmInfoSet
func shmInfoSet(h C.uintptr_t, key, val *C.char) C.int {
	k, v := goString(key), goString(val)
	return infoCall("MPI_Info_set", h, func(x *infoH) error {
		if err := checkKey(k); err != nil {
			return err
		}
		if len(v) >= C.MPI_MAX_INFO_VAL {
			return fmt.Errorf("value of key %q longer than %d: %w", k, C.MPI_MAX_INFO_VAL-1, win.ErrInfo)
		}
		if _, ok := x.vals[k]; !ok {
			x.keys = append(x.keys, k)
		}
		x.vals[k] = v
		return nil
	})
}

//export shmInfoDelete
func shmInfoDelete(h C.uintptr_t, key *C.char) C.int {
	k := goString(key)
	return infoCall("MPI_Info_delete", h, func(x *infoH) error {
		if err := checkKey(k); err != nil {
			return err
		}
		if _, ok := x.vals[k]; !ok {
			return fmt.Errorf("key %q: %w", k, errInfoNoKey)
		}
		delete(x.vals, k)
		x.keys = slices.DeleteFunc(x.keys, func(s string) bool { return s == k })
		return nil
	})
}

// shmInfoGetString is MPI_Info_get_string: *buflen in, the value's length
// plus one out; the value is copied (truncated) when *buflen > 0.
//
//export shmInfoGetString
func shmInfoGetString(h C.uintptr_t, key *C.char, buflen *C.int, value *C.char, flag *C.int) C.int {
	k := goString(key)
	return infoCall("MPI_Info_get_string", h, func(x *infoH) error {
		if err := checkKey(k); err != nil {
			return err
		}
		v, ok := x.vals[k]
		*flag = cbool(ok)
		if !ok {
			return nil
		}
		if *buflen > 0 {
			putString(value, int(*buflen), v)
		}
		*buflen = C.int(len(v) + 1)
		return nil
	})
}

// shmInfoGet is the deprecated MPI_Info_get: valuelen is the buffer's
// length less one.
//
//export shmInfoGet
func shmInfoGet(h C.uintptr_t, key *C.char, valuelen C.int, value *C.char, flag *C.int) C.int {
	if valuelen < 0 {
		return infoCall("MPI_Info_get", h, func(*infoH) error {
			return fmt.Errorf("valuelen %d is negative: %w", valuelen, comm.ErrArg)
		})
	}
	// The buffer holds valuelen characters and the terminating NUL:
	// INT_MAX + 1 would wrap to a negative length, and nothing be copied.
	n := min(valuelen, math.MaxInt32-1) + 1
	return shmInfoGetString(h, key, &n, value, flag)
}

//export shmInfoGetValuelen
func shmInfoGetValuelen(h C.uintptr_t, key *C.char, valuelen *C.int, flag *C.int) C.int {
	k := goString(key)
	return infoCall("MPI_Info_get_valuelen", h, func(x *infoH) error {
		if err := checkKey(k); err != nil {
			return err
		}
		v, ok := x.vals[k]
		*flag = cbool(ok)
		if ok {
			*valuelen = C.int(len(v))
		}
		return nil
	})
}

//export shmInfoGetNkeys
func shmInfoGetNkeys(h C.uintptr_t, n *C.int) C.int {
	return infoCall("MPI_Info_get_nkeys", h, func(x *infoH) error {
		*n = C.int(len(x.keys))
		return nil
	})
}

//export shmInfoGetNthkey
func shmInfoGetNthkey(h C.uintptr_t, i C.int, key *C.char) C.int {
	return infoCall("MPI_Info_get_nthkey", h, func(x *infoH) error {
		if i < 0 || int(i) >= len(x.keys) {
			return fmt.Errorf("key number %d of %d: %w", int(i), len(x.keys), comm.ErrArg)
		}
		putString(key, C.MPI_MAX_INFO_KEY, x.keys[i])
		return nil
	})
}

//export shmInfoDup
func shmInfoDup(h C.uintptr_t, out *C.uintptr_t) C.int {
	x, err := infoOf(uintptr(h)) // MPI_INFO_NULL is no info object to copy
	if err != nil {
		return raiseSelf("MPI_Info_dup", err)
	}
	m, err := infoMap(uintptr(h))
	if err != nil {
		return raiseSelf("MPI_Info_dup", err)
	}
	*out = newInfo(m)
	if y, err := infoOf(uintptr(*out)); err == nil {
		tab.Lock()
		y.keys = slices.Clone(x.keys)
		tab.Unlock()
	}
	return C.MPI_SUCCESS
}

//export shmInfoFree
func shmInfoFree(h *C.uintptr_t) C.int {
	if *h == hInfoEnv {
		return raiseSelf("MPI_Info_free", fmt.Errorf("MPI_INFO_ENV is predefined: %w", comm.ErrArg))
	}
	if _, err := infoOf(uintptr(*h)); err != nil {
		return raiseSelf("MPI_Info_free", err)
	}
	drop(tab.infos, uintptr(*h))
	*h = hInfoNull
	return C.MPI_SUCCESS
}
