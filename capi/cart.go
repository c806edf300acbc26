//go:build !mpi

package main

/*
#include "mpi.h"
*/
import "C"

import (
	"fmt"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/winc"
)

// The Cartesian topology calls (MPI 4.1 §8.5), over package comm's.
// The two that make communicators are collective: an argument this rank
// refuses before package comm sees it (a negative ndims, a NULL array or
// output) fails the other ranks' calls too, by taking part as refused in
// the Allreduce with which comm.CartCreate and CartSub agree on their
// arguments.

// refuseCart raises err from call on x's handler once this rank has
// taken part as refused in the argument agreement of the collective
// topology call the other ranks make.
func refuseCart(x *commH, call string, err error) C.int {
	return x.raise(call, winc.RefuseColl(x.c, call, format.CollAllreduce, err))
}

// cBools is the C int array of n flags at p as bools (nonzero is true).
func cBools(p *C.int, n int) []bool {
	v := cArray(p, n)
	out := make([]bool, len(v))
	for i, x := range v {
		out[i] = x != 0
	}
	return out
}

// putInts stores v into the C array at p of at least len(v) ints.
func putInts(p *C.int, v []int) {
	c := cArray(p, len(v))
	for i, x := range v {
		c[i] = C.int(x)
	}
}

//export shmCartCreate
func shmCartCreate(h C.uintptr_t, ndims C.int, dims, periods *C.int, reorder C.int, out *C.uintptr_t) C.int {
	const call = "MPI_Cart_create"
	x, code := commOf(call, uintptr(h))
	if code != 0 {
		return code
	}
	switch {
	case ndims < 0:
		return refuseCart(x, call, fmt.Errorf("ndims %d is negative: %w", int(ndims), comm.ErrArg))
	case ndims > 0 && dims == nil:
		return refuseCart(x, call, fmt.Errorf("dims is NULL: %w", comm.ErrArg))
	case ndims > 0 && periods == nil:
		return refuseCart(x, call, fmt.Errorf("periods is NULL: %w", comm.ErrArg))
	case out == nil:
		return refuseCart(x, call, fmt.Errorf("comm_cart is NULL: %w", comm.ErrArg))
	}
	c, err := x.c.CartCreate(goInts(dims, ndims), cBools(periods, int(ndims)), reorder != 0)
	if err != nil {
		return x.raise(call, err)
	}
	*out = newComm(c, x)
	return C.MPI_SUCCESS
}

//export shmCartSub
func shmCartSub(h C.uintptr_t, remain *C.int, out *C.uintptr_t) C.int {
	const call = "MPI_Cart_sub"
	x, code := commOf(call, uintptr(h))
	if code != 0 {
		return code
	}
	// Without a topology every rank fails alike, at once: no rank may be
	// left in the agreement (CartSub itself checks first, too).
	dims, _, _, err := x.c.CartGet()
	if err != nil {
		return x.raise(call, err)
	}
	switch {
	case len(dims) > 0 && remain == nil:
		return refuseCart(x, call, fmt.Errorf("remain_dims is NULL: %w", comm.ErrArg))
	case out == nil:
		return refuseCart(x, call, fmt.Errorf("newcomm is NULL: %w", comm.ErrArg))
	}
	c, err := x.c.CartSub(cBools(remain, len(dims)))
	if err != nil {
		return x.raise(call, err)
	}
	*out = newComm(c, x)
	return C.MPI_SUCCESS
}

// cartDims is communicator h's Cartesian topology's number of
// dimensions, for call, or the code call's error returned.
func cartDims(call string, h C.uintptr_t) (*commH, int, C.int) {
	x, code := commOf(call, uintptr(h))
	if code != 0 {
		return nil, 0, code
	}
	dims, _, _, err := x.c.CartGet()
	if err != nil {
		return nil, 0, x.raise(call, err)
	}
	return x, len(dims), 0
}

// roomFor is the error of an array of max entries where call needs n,
// or nil if they fit.
func roomFor(what string, max C.int, n int) error {
	if int(max) < n {
		return fmt.Errorf("maxdims %d is less than the topology's %d dimensions (%s): %w", int(max), n, what, comm.ErrArg)
	}
	return nil
}

//export shmCartdimGet
func shmCartdimGet(h C.uintptr_t, ndims *C.int) C.int {
	_, n, code := cartDims("MPI_Cartdim_get", h)
	if code != 0 {
		return code
	}
	*ndims = C.int(n)
	return C.MPI_SUCCESS
}

//export shmCartGet
func shmCartGet(h C.uintptr_t, maxdims C.int, dims, periods, coords *C.int) C.int {
	const call = "MPI_Cart_get"
	x, code := commOf(call, uintptr(h))
	if code != 0 {
		return code
	}
	d, p, co, err := x.c.CartGet()
	if err == nil {
		err = roomFor("dims, periods, coords", maxdims, len(d))
	}
	if err == nil && len(d) > 0 && (dims == nil || periods == nil || coords == nil) {
		err = fmt.Errorf("dims, periods or coords is NULL: %w", comm.ErrArg)
	}
	if err != nil {
		return x.raise(call, err)
	}
	putInts(dims, d)
	putInts(coords, co)
	pc := cArray(periods, len(p))
	for i, b := range p {
		pc[i] = 0
		if b {
			pc[i] = 1
		}
	}
	return C.MPI_SUCCESS
}

//export shmCartRank
func shmCartRank(h C.uintptr_t, coords *C.int, rank *C.int) C.int {
	const call = "MPI_Cart_rank"
	x, n, code := cartDims(call, h)
	if code != 0 {
		return code
	}
	if n > 0 && coords == nil {
		return x.raise(call, fmt.Errorf("coords is NULL: %w", comm.ErrArg))
	}
	r, err := x.c.CartRank(goInts(coords, C.int(n)))
	if err != nil {
		return x.raise(call, err)
	}
	*rank = C.int(r)
	return C.MPI_SUCCESS
}

//export shmCartCoords
func shmCartCoords(h C.uintptr_t, rank, maxdims C.int, coords *C.int) C.int {
	const call = "MPI_Cart_coords"
	x, n, code := cartDims(call, h)
	if code != 0 {
		return code
	}
	err := roomFor("coords", maxdims, n)
	if err == nil && n > 0 && coords == nil {
		err = fmt.Errorf("coords is NULL: %w", comm.ErrArg)
	}
	if err != nil {
		return x.raise(call, err)
	}
	co, err := x.c.CartCoords(int(rank))
	if err != nil {
		return x.raise(call, err)
	}
	putInts(coords, co)
	return C.MPI_SUCCESS
}

//export shmCartShift
func shmCartShift(h C.uintptr_t, dir, disp C.int, source, dest *C.int) C.int {
	const call = "MPI_Cart_shift"
	x, code := commOf(call, uintptr(h))
	if code != 0 {
		return code
	}
	s, d, err := x.c.CartShift(int(dir), int(disp))
	if err != nil {
		return x.raise(call, err)
	}
	*source, *dest = cRank(s), cRank(d)
	return C.MPI_SUCCESS
}

// shmCartMap is MPI_Cart_map: the rank this process would have in a
// Cartesian topology of ndims dims over communicator h, as
// MPI_Cart_create lays ranks out (in h's order, the first product(dims)
// ranks), or MPI_UNDEFINED beyond them. Local.
//
//export shmCartMap
func shmCartMap(h C.uintptr_t, ndims C.int, dims, periods *C.int, newrank *C.int) C.int {
	const call = "MPI_Cart_map"
	x, code := commOf(call, uintptr(h))
	if code != 0 {
		return code
	}
	var err error
	switch {
	case ndims < 0:
		err = fmt.Errorf("ndims %d is negative: %w", int(ndims), comm.ErrArg)
	case ndims > 0 && (dims == nil || periods == nil):
		err = fmt.Errorf("dims or periods is NULL: %w", comm.ErrArg)
	}
	if err != nil {
		return x.raise(call, err)
	}
	size, p := x.c.Size(), 1
	for i, d := range cArray(dims, int(ndims)) {
		if d < 1 {
			return x.raise(call, fmt.Errorf("dims[%d] = %d is below 1: %w", i, int(d), comm.ErrArg))
		}
		if p > size/int(d) {
			return x.raise(call, fmt.Errorf("dims hold more ranks than the communicator's %d: %w", size, comm.ErrArg))
		}
		p *= int(d)
	}
	*newrank = C.MPI_UNDEFINED
	if r := x.c.Rank(); r < p {
		*newrank = C.int(r)
	}
	return C.MPI_SUCCESS
}

//export shmDimsCreate
func shmDimsCreate(nnodes, ndims C.int, dims *C.int) C.int {
	const call = "MPI_Dims_create"
	if !initialized() {
		return notInit(call)
	}
	// Impossible dimensions are MPI_ERR_DIMS, as Open MPI and MPICH say
	// (MPI 4.1 §9.4: "invalid dimension argument").
	if ndims < 0 {
		return raiseSelf(call, &classError{class: C.MPI_ERR_DIMS, msg: fmt.Sprintf("ndims %d is negative", int(ndims))})
	}
	if ndims > 0 && dims == nil {
		return raiseSelf(call, fmt.Errorf("dims is NULL: %w", comm.ErrArg))
	}
	d := goInts(dims, ndims)
	if err := comm.DimsCreate(int(nnodes), d); err != nil {
		return raiseSelf(call, &classError{class: C.MPI_ERR_DIMS, msg: err.Error()})
	}
	putInts(dims, d)
	return C.MPI_SUCCESS
}

//export shmTopoTest
func shmTopoTest(h C.uintptr_t, status *C.int) C.int {
	x, code := commOf("MPI_Topo_test", uintptr(h))
	if code != 0 {
		return code
	}
	*status = C.MPI_UNDEFINED
	if x.c.Topology() == comm.TopoCart {
		*status = C.MPI_CART
	}
	return C.MPI_SUCCESS
}
