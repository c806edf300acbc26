//go:build mpi

package mpi

// #include <mpi.h>
// #include <stdint.h>
// int shmc_user_op(int unit, int commute, MPI_Datatype *dt, MPI_Op *op, uintptr_t *key);
import "C"

import (
	"sync"
	"unsafe"
)

// UserFn applies a user op to n units: inout[i] = in[i] ∘ inout[i].
type UserFn func(in, inout unsafe.Pointer, n int)

// userFns finds a user op's function by its datatype, which MPI hands to
// the op's C function: the one place that tells the ops apart, whatever
// thread the MPI reduces on.
var userFns sync.Map // uintptr → UserFn

// NewUserOp makes the MPI op of fn (MPI_Op_create) over a datatype of its
// own, unit bytes of contiguous MPI_BYTE, which its reductions use. Ops
// live as long as the process, as the Go op that made them.
func NewUserOp(unit int, commute bool, fn UserFn) (Red, error) {
	var r Red
	var key C.uintptr_t
	com := C.int(0)
	if commute {
		com = 1
	}
	if err := check(C.shmc_user_op(C.int(unit), com, &r.dt, &r.op, &key), "MPI_Op_create"); err != nil {
		return Red{}, err
	}
	userFns.Store(uintptr(key), fn)
	r.user = true
	return r, nil
}

//export shmcUserApply
func shmcUserApply(dt C.uintptr_t, in, inout unsafe.Pointer, n C.int) {
	f, ok := userFns.Load(uintptr(dt))
	if !ok {
		panic("mpi: a user op called with an unknown datatype")
	}
	f.(UserFn)(in, inout, int(n))
}
