//go:build !mpi

package main

/*
#include "mpi.h"
*/
import "C"

import (
	"fmt"
	"strings"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/dtypehook"
)

// A typeH is a datatype handle's object.
type typeH struct {
	t    *dtype.Type
	name string
	pre  bool // predefined: Type_free refuses it
	// logical: a predefined type of MPI's Logical class (MPI_C_BOOL,
	// MPI_CXX_BOOL, MPI_LOGICAL and its sized kin), which the reductions
	// and accumulates take under MPI_LAND, MPI_LOR and MPI_LXOR only
	// (MPI_REPLACE and MPI_NO_OP too in the accumulates): logicalOp.
	logical bool
	made    *madeBy // a derived type's constructor call (MPI_Type_get_contents)
	// dead: freed by the program while a pending collective uses it
	// (dropPinned); only that collective's job may still use it.
	dead bool
	// uattrs are the attributes of the program's keys (attrcache.go).
	uattrs []attr
}

// predefined datatypes on this platform (Linux, LP64): the standard's
// handle value, the name, the element (0 for types the reductions and
// accumulates do not take) and the size in bytes.
var predefTypes = []struct {
	h    uintptr
	name string
	elem atomics.Type
	size int
}{
	{0x201, "MPI_AINT", atomics.Int64, 8},
	{0x202, "MPI_COUNT", atomics.Int64, 8},
	{0x203, "MPI_OFFSET", atomics.Int64, 8},
	{0x207, "MPI_PACKED", 0, 1},
	{0x208, "MPI_SHORT", atomics.Int16, 2},
	{0x209, "MPI_INT", atomics.Int32, 4},
	{0x20a, "MPI_LONG", atomics.Int64, 8},
	{0x20b, "MPI_LONG_LONG", atomics.Int64, 8},
	{0x20c, "MPI_UNSIGNED_SHORT", atomics.Uint16, 2},
	{0x20d, "MPI_UNSIGNED", atomics.Uint32, 4},
	{0x20e, "MPI_UNSIGNED_LONG", atomics.Uint64, 8},
	{0x20f, "MPI_UNSIGNED_LONG_LONG", atomics.Uint64, 8},
	{0x210, "MPI_FLOAT", atomics.Float32, 4},
	{0x212, "MPI_C_FLOAT_COMPLEX", atomics.Complex64, 8},
	{0x213, "MPI_CXX_FLOAT_COMPLEX", atomics.Complex64, 8},
	{0x214, "MPI_DOUBLE", atomics.Float64, 8},
	{0x216, "MPI_C_DOUBLE_COMPLEX", atomics.Complex128, 16},
	{0x217, "MPI_CXX_DOUBLE_COMPLEX", atomics.Complex128, 16},
	{0x218, "MPI_LOGICAL", atomics.Int32, 4},
	{0x219, "MPI_INTEGER", atomics.Int32, 4},
	{0x21a, "MPI_REAL", atomics.Float32, 4},
	{0x21b, "MPI_COMPLEX", atomics.Complex64, 8},
	{0x21c, "MPI_DOUBLE_PRECISION", atomics.Float64, 8},
	{0x21d, "MPI_DOUBLE_COMPLEX", atomics.Complex128, 16},
	{0x21e, "MPI_CHARACTER", atomics.Uint8, 1},
	{0x220, "MPI_LONG_DOUBLE", 0, 16},
	{0x224, "MPI_C_LONG_DOUBLE_COMPLEX", 0, 32},
	{0x225, "MPI_CXX_LONG_DOUBLE_COMPLEX", 0, 32},
	{0x228, "MPI_FLOAT_INT", atomics.FloatIntT, 8},
	{0x229, "MPI_DOUBLE_INT", atomics.DoubleIntT, 16},
	{0x22a, "MPI_LONG_INT", atomics.LongIntT, 16},
	{0x22b, "MPI_2INT", atomics.TwoIntT, 8},
	{0x22c, "MPI_SHORT_INT", atomics.ShortIntT, 8},
	{0x22d, "MPI_LONG_DOUBLE_INT", 0, 32},
	{0x230, "MPI_2REAL", 0, 8},
	{0x231, "MPI_2DOUBLE_PRECISION", 0, 16},
	{0x232, "MPI_2INTEGER", atomics.TwoIntT, 8},
	{0x238, "MPI_C_BOOL", atomics.Uint8, 1},
	{0x239, "MPI_CXX_BOOL", atomics.Uint8, 1},
	{0x23c, "MPI_WCHAR", atomics.Int32, 4},
	{0x240, "MPI_INT8_T", atomics.Int8, 1},
	{0x241, "MPI_UINT8_T", atomics.Uint8, 1},
	{0x243, "MPI_CHAR", atomics.Int8, 1},
	{0x244, "MPI_SIGNED_CHAR", atomics.Int8, 1},
	{0x245, "MPI_UNSIGNED_CHAR", atomics.Uint8, 1},
	{0x247, "MPI_BYTE", 0, 1},
	{0x248, "MPI_INT16_T", atomics.Int16, 2},
	{0x249, "MPI_UINT16_T", atomics.Uint16, 2},
	{0x250, "MPI_INT32_T", atomics.Int32, 4},
	{0x251, "MPI_UINT32_T", atomics.Uint32, 4},
	{0x258, "MPI_INT64_T", atomics.Int64, 8},
	{0x259, "MPI_UINT64_T", atomics.Uint64, 8},
	{0x2c0, "MPI_LOGICAL1", atomics.Int8, 1},
	{0x2c1, "MPI_INTEGER1", atomics.Int8, 1},
	{0x2c8, "MPI_LOGICAL2", atomics.Int16, 2},
	{0x2c9, "MPI_INTEGER2", atomics.Int16, 2},
	{0x2ca, "MPI_REAL2", 0, 2},
	{0x2d0, "MPI_LOGICAL4", atomics.Int32, 4},
	{0x2d1, "MPI_INTEGER4", atomics.Int32, 4},
	{0x2d2, "MPI_REAL4", atomics.Float32, 4},
	{0x2d3, "MPI_COMPLEX4", 0, 4},
	{0x2d8, "MPI_LOGICAL8", atomics.Int64, 8},
	{0x2d9, "MPI_INTEGER8", atomics.Int64, 8},
	{0x2da, "MPI_REAL8", atomics.Float64, 8},
	{0x2db, "MPI_COMPLEX8", atomics.Complex64, 8},
	{0x2e0, "MPI_LOGICAL16", 0, 16},
	{0x2e1, "MPI_INTEGER16", 0, 16},
	{0x2e2, "MPI_REAL16", 0, 16},
	{0x2e3, "MPI_COMPLEX16", atomics.Complex128, 16},
	{0x2eb, "MPI_COMPLEX32", 0, 32},
}

// registerTypes fills the datatype table with the predefined types.
// A type with an element is that element's dtype; MPI_BYTE and
// MPI_PACKED are dtype.Byte; the rest (long double and its kin, 2-byte
// reals, Fortran pairs of reals) move as opaque bytes (opaqueType), which
// the reductions and accumulates combine by C functions.
func registerTypes() {
	for _, p := range predefTypes {
		var t *dtype.Type
		switch {
		case p.elem != 0:
			t = dtype.Basic(p.elem)
		case p.size == 1:
			t = dtype.Byte
		default:
			var err error
			if t, err = opaqueType(p.name, p.size); err != nil {
				panic(fmt.Sprintf("capi: predefined %s: %v", p.name, err))
			}
			noteOpaque(p.h, p.name, t)
		}
		x := &typeH{t: t, name: p.name, pre: true, logical: isLogicalName(p.name)}
		tab.types[p.h] = x
		predefTypeArr[p.h-hDatatypeNull] = x
	}
}

// opaqueType is the dtype of a predefined type without a Go element:
// size opaque bytes with C's alignment (opaqueAlign), but for
// MPI_LONG_DOUBLE_INT, which is "as if" the struct of a long double and
// an int (MPI 4.1 §6.9.4) as C lays it out: 16 bytes and an int32 at 16,
// 20 bytes of data in an extent of size (the alignment's ε, not an upper
// bound set, which a struct holding it would keep as its own), so that
// it matches that struct and moves no padding.
func opaqueType(name string, size int) (*dtype.Type, error) {
	var t *dtype.Type
	var err error
	if name == "MPI_LONG_DOUBLE_INT" {
		var ld *dtype.Type
		if ld, err = dtype.Contiguous(16, dtype.Byte); err == nil {
			t, err = dtype.Struct([]int{1, 1}, []int64{0, 16}, []*dtype.Type{ld, dtype.Basic(atomics.Int32)})
		}
	} else {
		t, err = dtype.Contiguous(size, dtype.Byte)
	}
	if err == nil {
		err = dtypehook.SetAlign(t, opaqueAlign(name, size))
	}
	if err == nil && t.Extent() != int64(size) {
		err = fmt.Errorf("extent %d, want %d", t.Extent(), size)
	}
	if err == nil {
		err = t.Commit()
	}
	return t, err
}

// opaqueAlign is the alignment C gives the predefined type of that name
// and size that moves as opaque bytes (x86-64 and AArch64 alike): a pair
// or a complex number its half's, MPI_LONG_DOUBLE_INT its long double's,
// any other its size (long double, REAL16: 16; REAL2: 2).
func opaqueAlign(name string, size int) int64 {
	switch {
	case name == "MPI_LONG_DOUBLE_INT":
		return 16
	case strings.Contains(name, "COMPLEX") || strings.HasPrefix(name, "MPI_2"):
		return int64(size / 2)
	}
	return int64(min(size, 16))
}

// isLogicalName reports whether the predefined type of that name is of
// MPI's Logical class (MPI 4.1, 7.9.2).
func isLogicalName(name string) bool {
	return name == "MPI_C_BOOL" || name == "MPI_CXX_BOOL" || strings.HasPrefix(name, "MPI_LOGICAL")
}

// logicalOp refuses a predefined op other than the logical ones (and, in
// the accumulates, rma, MPI_REPLACE and MPI_NO_OP) on a type of MPI's
// Logical class: its values are true and false, which arithmetic and
// bitwise ops would turn into other bytes (2 in a C _Bool).
func logicalOp(t *typeH, op *opH, rma bool) error {
	if !t.logical || op.user != nil {
		return nil
	}
	switch op.op {
	case atomics.Land, atomics.Lor, atomics.Lxor:
		return nil
	case atomics.Replace, atomics.NoOp:
		if rma {
			return nil
		}
	}
	return fmt.Errorf("%s does not apply to %s (a logical type: MPI_LAND, MPI_LOR and MPI_LXOR do): %w", op.name, t.name, comm.ErrOp)
}

// opaqueLeaf returns the predefined type x is made of when that is one
// the runtime moves as opaque bytes (long double and its kin:
// opaqueElems), found true; a derived type made of one of them and
// anything else is ErrType (the accumulates need one predefined type).
func opaqueLeaf(x *typeH) (leaf *typeH, found bool, err error) {
	var other bool
	var walk func(y *typeH)
	walk = func(y *typeH) {
		switch {
		case y == nil:
		case y.pre || y.made == nil:
			if _, ok := opaqueElems[y.t]; !ok {
				other = true
			} else if leaf == nil || leaf == y {
				leaf = y
			} else {
				other = true
			}
		default:
			for _, o := range y.made.olds {
				z := o.x
				if z == nil {
					z, _ = typeOf(o.h)
				}
				walk(z)
			}
		}
	}
	walk(x)
	if leaf != nil && other {
		return nil, true, fmt.Errorf("%s is made of %s and other types (an accumulate's type has one predefined type): %w", x.name, leaf.name, comm.ErrType)
	}
	return leaf, leaf != nil, nil
}

// The predefined types and ops by handle value: looked up without the
// tables' lock (they never change).
var (
	predefTypeArr [0x100]*typeH // handle - hDatatypeNull
	predefOpArr   [0x20]*opH    // handle - hOpNull
)

func init() { registerTypes(); registerOps() }

// typeOf is datatype handle h's object.
func typeOf(h uintptr) (*typeH, error) {
	if i := h - hDatatypeNull; i < uintptr(len(predefTypeArr)) && predefTypeArr[i] != nil {
		return predefTypeArr[i], nil
	}
	tab.RLock()
	x, ok := tab.types[h]
	dead := ok && x.dead
	tab.RUnlock()
	if ok && (!dead || onJob()) {
		return x, nil
	}
	if dead {
		return nil, fmt.Errorf("a freed datatype (handle %#x): %w", h, comm.ErrType)
	}
	if h == hDatatypeNull {
		return nil, fmt.Errorf("MPI_DATATYPE_NULL: %w", comm.ErrType)
	}
	return nil, fmt.Errorf("an invalid datatype (handle %#x): %w", h, comm.ErrType)
}

// An opH is an op handle's object.
type opH struct {
	op   atomics.Op // a predefined op
	name string
	user *userOp // an op made by MPI_Op_create
	dead bool    // as typeH's
}

var predefOps = []struct {
	h  uintptr
	op atomics.Op
}{
	{0x21, atomics.Sum}, {0x22, atomics.Min}, {0x23, atomics.Max}, {0x24, atomics.Prod},
	{0x28, atomics.Band}, {0x29, atomics.Bor}, {0x2a, atomics.Bxor},
	{0x30, atomics.Land}, {0x31, atomics.Lor}, {0x32, atomics.Lxor},
	{0x38, atomics.MinLoc}, {0x39, atomics.MaxLoc}, {0x3c, atomics.Replace}, {0x3d, atomics.NoOp},
}

func registerOps() {
	for _, p := range predefOps {
		x := &opH{op: p.op, name: p.op.String()}
		tab.ops[p.h] = x
		predefOpArr[p.h-hOpNull] = x
	}
}

// opOf is op handle h's object.
func opOf(h uintptr) (*opH, error) {
	if i := h - hOpNull; i < uintptr(len(predefOpArr)) && predefOpArr[i] != nil {
		return predefOpArr[i], nil
	}
	tab.RLock()
	x, ok := tab.ops[h]
	dead := ok && x.dead
	tab.RUnlock()
	if ok && (!dead || onJob()) {
		return x, nil
	}
	if dead {
		return nil, fmt.Errorf("a freed op (handle %#x): %w", h, comm.ErrOp)
	}
	if h == hOpNull {
		return nil, fmt.Errorf("MPI_OP_NULL: %w", comm.ErrOp)
	}
	return nil, fmt.Errorf("an invalid op (handle %#x): %w", h, comm.ErrOp)
}

// inPlaceAddr is MPI_IN_PLACE's address in the standard ABI.
const inPlaceAddr = 1

// maxSpan bounds the bytes a buffer spans: 2^48, 256 TiB, the most a
// process's user addresses reach on x86-64 (2^47) and arm64 (2^48) unless
// it asks the kernel for more, and the Go heap's own bound. A count or a
// displacement in range of an int64 may still reach far past any memory:
// made into a slice (bytesAt), it would let the runtime write there.
const maxSpan = 1 << 48

// buf is count instances of t at p as the byte slice the runtime's typed
// calls take, with the type the call takes them with: from p to where
// the instances end, and t itself; or, where they reach before p (a
// negative lower bound: a vector of negative stride, a block at a
// negative displacement, which MPI allows), from their first byte, and
// t's type map moved up by as many bytes (the same signature and
// extent), made for this call.
func buf(p *C.char, count int64, t *dtype.Type) ([]byte, *dtype.Type, error) {
	if count < 0 {
		return nil, nil, fmt.Errorf("count %d is negative: %w", count, comm.ErrCount)
	}
	lo, hi, err := t.Span(int(count))
	if err != nil {
		return nil, nil, err
	}
	if isInPlace(p) && (hi > 0 || lo < 0) {
		// Not memory: the caller passed MPI_IN_PLACE where the call does
		// not take it (off a rooted collective's root, say).
		return nil, nil, fmt.Errorf("MPI_IN_PLACE as the buffer of %d × %v, where this call and rank do not take it: %w", count, t, comm.ErrBuffer)
	}
	if hi-lo > maxSpan || hi > maxSpan || p != nil && !addressable(p, min(lo, 0)) {
		return nil, nil, fmt.Errorf("%d × %v span %d bytes from %d, more than an address space holds: %w", count, t, hi-min(lo, 0), min(lo, 0), comm.ErrCount)
	}
	if (hi > 0 || lo < 0) && p == nil {
		return nil, nil, fmt.Errorf("a NULL buffer (MPI_BOTTOM with absolute addresses is not supported) for %d × %v: %w", count, t, comm.ErrBuffer)
	}
	if lo >= 0 {
		return bytesAt(p, hi), t, nil
	}
	moved, err := moveType(t, -lo)
	if err != nil {
		return nil, nil, err
	}
	return bytesBefore(p, -lo, hi-lo), moved, nil
}

// moveType is t with its type map moved up by `by` bytes, committed: the
// same signature, extent and stride between instances, its data `by`
// bytes further from an instance's address.
func moveType(t *dtype.Type, by int64) (*dtype.Type, error) {
	moved, err := dtype.Hindexed([]int{1}, []int64{by}, t)
	if err == nil {
		moved, err = dtype.Resized(moved, t.LB()+by, t.Extent())
	}
	if err == nil {
		err = moved.Commit()
	}
	return moved, err
}
