package raw

// All of the module's pointer arithmetic is in this file (the futex call's
// is in futex_linux.go).

import (
	"fmt"
	"reflect"
	"unsafe"
)

// Uint32At returns a pointer to the 32-bit word at m[off:off+4].
//
// Invariant: off is 4-byte aligned relative to an aligned mapping (mappings
// are page-aligned, so the layout's offsets decide), and the word is inside m;
// the pointer is valid while m stays mapped. Violations are bugs in a layout
// and panic loudly. Callers touch the word only through sync/atomic.
func Uint32At(m []byte, off int64) *uint32 {
	if off < 0 || off+4 > int64(len(m)) || off%4 != 0 {
		panic(wordError{32, off, len(m)})
	}
	return (*uint32)(unsafe.Pointer(&m[off]))
}

// Uint64At returns a pointer to the 64-bit word at m[off:off+8].
//
// Invariant: as Uint32At, with 8-byte alignment (required for 64-bit atomics
// on every supported architecture).
func Uint64At(m []byte, off int64) *uint64 {
	if off < 0 || off+8 > int64(len(m)) || off%8 != 0 {
		panic(wordError{64, off, len(m)})
	}
	return (*uint64)(unsafe.Pointer(&m[off]))
}

// wordError is Uint32At's and Uint64At's panic: a value whose message is
// built only if it is printed (with fmt.Sprintf in them they were too
// large to inline, and a ring's stamp went through a call).
type wordError struct {
	bits int
	off  int64
	n    int
}

func (e wordError) Error() string {
	return fmt.Sprintf("raw: %d-bit word at %d of a %d-byte mapping", e.bits, e.off, e.n)
}

// Word64 returns the 64-bit word at mem[off:off+8] for sync/atomic, with no
// checks of its own: it is for kernels that checked already.
//
// Invariant: the caller checked that mem starts 8-byte aligned (a mapping is
// page-aligned), that off%8 == 0 and that off+8 <= len(mem); the index
// expression still bounds-checks off. The pointer is used only during the
// call, while the caller keeps mem mapped.
func Word64(mem []byte, off int64) *uint64 {
	return (*uint64)(unsafe.Pointer(&mem[off]))
}

// Word32 returns the 32-bit word at mem[off:off+4] for sync/atomic.
//
// Invariant: as Word64, with off%4 == 0 and off+4 <= len(mem).
func Word32(mem []byte, off int64) *uint32 {
	return (*uint32)(unsafe.Pointer(&mem[off]))
}

// Addr returns the address b starts at as an integer (0 for a nil slice; an
// empty slice cut from a mapping gives the place it was cut at). Addresses
// differ in every process: one goes into shared memory only as what its own
// process means by it (a dynamic window's attach table, a single-copy
// buffer for process_vm_readv), never to be dereferenced by another.
func Addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// AddrOf returns p's address as an integer, for a descriptor that C code
// reads (internal/winc's P2P).
//
// Invariant: *p is shared memory or other memory outside the Go heap
// (a mapping), which no collector moves or frees while the address is
// in use.
func AddrOf[T any](p *T) uintptr { return uintptr(unsafe.Pointer(p)) }

// At returns the n bytes at address a of this process (nil for n == 0).
//
// Invariant: [a, a+n) is memory this process keeps alive and in place for
// as long as the slice is used: memory a window pinned (runtime.Pinner)
// until its Free or Detach, or a mapping it holds. Windows call it only for
// addresses their own process published (a rank's own attached regions, and
// every rank's in the goroutine test mode, where all share one process).
func At(a uintptr, n int) []byte {
	if n <= 0 {
		return nil
	}
	return unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&a))), n)
}

// Words returns the smallest run of whole aligned 8-byte words holding b,
// and b's offset in it: the segment the atomics kernels want (they update a
// sub-word element by compare-and-swap of its word, which leaves the
// word's other bytes as they are).
//
// Invariant: every word touching b is memory of the same object: Go's
// allocator hands out 8-byte aligned blocks whose sizes are multiples of 8
// (tiny objects share 16-byte blocks), and mappings are page-aligned.
func Words(b []byte) ([]byte, int64) {
	if len(b) == 0 {
		return nil, 0
	}
	a := Addr(b)
	lo := a &^ 7
	hi := (a + uintptr(len(b)) + 7) &^ 7
	return At(lo, int(hi-lo)), int64(a - lo)
}

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
		return nil, fmt.Errorf("view as %v: type holds pointers or has size 0: %w", t, ErrView)
	}
	if len(b) == 0 {
		return []T{}, nil
	}
	if a := Addr(b); a%align != 0 {
		return nil, fmt.Errorf("view as %v: address %#x is not %d-byte aligned: %w", t, a, align, ErrView)
	}
	if len(b)%size != 0 {
		return nil, fmt.Errorf("view as %v: %d bytes is not a multiple of %d: %w", t, len(b), size, ErrView)
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/size), nil
}

// Bytes returns the memory of s as bytes (for copying typed data into and out
// of segments). The result aliases s.
//
// Invariant: T is pointer-free (callers pass numeric element types, or types
// View accepted).
func Bytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
}

// Elems returns b as a slice of T without View's checks, for hot paths
// over memory whose layout was checked when it was made (a collective
// area's staging buffers: page aligned, cut at multiples of T's size).
// The result aliases b and lives as long as b's mapping.
//
// Invariant: T is pointer-free, b's address is aligned for T, and len(b)
// is a multiple of T's size (the tail that is not is left out).
func Elems[T any](b []byte) []T {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if len(b) < size {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/size)
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

// SizeOf is the size in bytes of one T: a constant in each instantiation.
func SizeOf[T any]() int {
	var zero T
	return int(unsafe.Sizeof(zero))
}

// BitsOf returns v's bytes as the low bytes of a uint64.
//
// Invariant: unsafe.Sizeof(v) <= 8 (callers test that constant or the type
// first; a violation panics rather than read past v). Each load is of v's
// own size and alignment (a wider load of a narrower store defeats
// store-to-load forwarding); the one exception, an 8-byte type with 4-byte
// alignment (complex64, the 8-byte pair types), is copied into an aligned
// uint64 instead.
func BitsOf[T any](v T) uint64 {
	p := unsafe.Pointer(&v)
	switch {
	case unsafe.Sizeof(v) == 1:
		return uint64(*(*uint8)(p))
	case unsafe.Sizeof(v) == 2:
		return uint64(*(*uint16)(p))
	case unsafe.Sizeof(v) == 4:
		return uint64(*(*uint32)(p))
	case unsafe.Sizeof(v) == 8 && unsafe.Alignof(v) == 8:
		return *(*uint64)(p)
	case unsafe.Sizeof(v) == 8:
		var b uint64
		*(*T)(unsafe.Pointer(&b)) = v
		return b
	}
	panic("raw: BitsOf of an element wider than 8 bytes")
}

// Bits64 is BitsOf for an 8-byte, 8-aligned T in one load, cheap enough to
// inline into FetchAddWord and SwapIfWord.
//
// Invariant: T is int64 or uint64 (the callers test that first).
func Bits64[T any](v T) uint64 {
	return *(*uint64)(unsafe.Pointer(&v))
}

// FromBits is the inverse of BitsOf.
//
// Invariant: as BitsOf.
func FromBits[T any](b uint64) T {
	if unsafe.Sizeof(*new(T)) > 8 {
		panic("raw: FromBits to an element wider than 8 bytes")
	}
	return *(*T)(unsafe.Pointer(&b))
}
