package shm

// All of shmrun's unsafe code outside atomics kernels lives in this file.

import (
	"fmt"
	"reflect"
	"unsafe"
)

// Uint32At returns a pointer to the 32-bit word at m[off:off+4].
//
// Invariant: off is 4-byte aligned relative to an aligned mapping (mappings
// are page-aligned, so the layout's offsets decide), and the word is inside m;
// the pointer is valid while m stays mapped. Violations are bugs in our layout
// code and panic loudly. Callers touch the word only through sync/atomic.
func Uint32At(m []byte, off int64) *uint32 {
	if off < 0 || off+4 > int64(len(m)) || off%4 != 0 {
		panic(fmt.Sprintf("shm: 32-bit word at %d of a %d-byte mapping", off, len(m)))
	}
	return (*uint32)(unsafe.Pointer(&m[off]))
}

// Uint64At returns a pointer to the 64-bit word at m[off:off+8].
//
// Invariant: as Uint32At, with 8-byte alignment (required for 64-bit atomics
// on every supported architecture).
func Uint64At(m []byte, off int64) *uint64 {
	if off < 0 || off+8 > int64(len(m)) || off%8 != 0 {
		panic(fmt.Sprintf("shm: 64-bit word at %d of a %d-byte mapping", off, len(m)))
	}
	return (*uint64)(unsafe.Pointer(&m[off]))
}

// Addr returns the address b starts at as an integer (0 for a nil slice; an
// empty slice cut from a mapping gives the place it was cut at). It is for
// alignment and placement checks only: addresses differ in every process and
// never go into shared memory.
func Addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// ErrView marks a typed view that cannot be made.
var ErrView = fmt.Errorf("bad typed view")

// View returns b as a slice of T. It refuses a T that holds Go pointers (the
// garbage collector does not scan shared memory, and addresses differ per
// process), a b whose address is not aligned for T, and a length that is not a
// multiple of T's size. The view aliases b and lives as long as b's mapping.
func View[T any](b []byte) ([]T, error) {
	var zero T
	size, align := int(unsafe.Sizeof(zero)), uintptr(unsafe.Alignof(zero))
	t := reflect.TypeFor[T]()
	if size == 0 || hasPointers(t) {
		return nil, fmt.Errorf("shm: view as %v: type holds pointers or has size 0: %w", t, ErrView)
	}
	if len(b) == 0 {
		return []T{}, nil
	}
	if a := Addr(b); a%align != 0 {
		return nil, fmt.Errorf("shm: view as %v: address %#x is not %d-byte aligned: %w", t, a, align, ErrView)
	}
	if len(b)%size != 0 {
		return nil, fmt.Errorf("shm: view as %v: %d bytes is not a multiple of %d: %w", t, len(b), size, ErrView)
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/size), nil
}

// Bytes returns the memory of s as bytes (for copying typed data into and out
// of segments). The result aliases s. T must be pointer-free; callers pass
// only the numeric element types of the win package.
func Bytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
}

func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
		return false
	default:
		return true
	}
}
