package atomics

import (
	"encoding/binary"
	"fmt"

	"github.com/shmrun/shmrun/internal/raw"
)

// Accumulate is the target side of MPI_Accumulate: for each i, the element
// at mem[off+i*size] becomes (that element) op src[i], atomically per element.
// mem is the whole mapped segment (8-byte aligned, a multiple of 8 bytes
// long, as every mapping is) and off is the byte offset of the first target
// element in it; st are the segment's lock stripes (nil is fine if no element
// needs one). NoOp is not allowed (MPI_Accumulate does not fetch). Only the
// bytes [off, off+len(src)*size) are changed. It is local and blocks only to
// wait for a busy stripe.
func Accumulate[T Elem](mem []byte, off int64, src []T, op Op, st *Stripes) error {
	if len(src) == 1 && op != NoOp {
		if op == Sum {
			if _, ok := raw.FetchAddWord(mem, off, src[0]); ok {
				return nil
			}
		}
		if k := hotWord[T](mem, off); k != 0 {
			x := raw.BitsOf(src[0])
			if _, ok := rmwHot(mem, off, uintptr(raw.SizeOf[T]()), k, op, x); ok {
				return nil
			}
		}
	}
	return accumulate(mem, off, src, op, st)
}

func accumulate[T Elem](mem []byte, off int64, src []T, op Op, st *Stripes) error {
	t := TypeOf[T]()
	if err := Check(op, t, false); err != nil {
		return err
	}
	if len(src) == 0 {
		return nil
	}
	if err := span(mem, off, len(src), t); err != nil {
		return err
	}
	return apply(mem, off, t, op, raw.Bytes(src), nil, len(src), st)
}

// GetAccumulate is the target side of MPI_Get_accumulate: as Accumulate, and
// result[i] receives the element's value from just before its update, taken
// in the same atomic step. With NoOp the targets are only read (atomically;
// an MPI "atomic get") and src is ignored (it may be nil); otherwise src and
// result must have the same length. It is local and blocks only to wait for
// a busy stripe.
func GetAccumulate[T Elem](mem []byte, off int64, src, result []T, op Op, st *Stripes) error {
	if len(result) == 1 && (len(src) == 1 || op == NoOp) {
		if op == Sum {
			if old, ok := raw.FetchAddWord(mem, off, src[0]); ok {
				result[0] = old
				return nil
			}
		}
		if k := hotWord[T](mem, off); k != 0 {
			var x uint64
			if op != NoOp {
				x = raw.BitsOf(src[0])
			}
			if old, ok := rmwHot(mem, off, uintptr(raw.SizeOf[T]()), k, op, x); ok {
				result[0] = raw.FromBits[T](old)
				return nil
			}
		}
	}
	return getAccumulate(mem, off, src, result, op, st)
}

func getAccumulate[T Elem](mem []byte, off int64, src, result []T, op Op, st *Stripes) error {
	t := TypeOf[T]()
	if err := Check(op, t, true); err != nil {
		return err
	}
	var sb []byte
	if op != NoOp {
		if len(src) != len(result) {
			return fmt.Errorf("atomics: %v on %v: %d origin elements but room for %d results: %w", op, t, len(src), len(result), ErrArg)
		}
		sb = raw.Bytes(src)
	}
	if len(result) == 0 {
		return nil
	}
	if err := span(mem, off, len(result), t); err != nil {
		return err
	}
	return apply(mem, off, t, op, sb, raw.Bytes(result), len(result), st)
}

// FetchAndOp is the target side of MPI_Fetch_and_op: one element at mem[off]
// becomes (that element) op v, and its old value is returned, in one atomic
// step. op may be NoOp (an atomic read). Sum on an aligned int64 or uint64 is
// one LOCK XADD after a few compares; other aligned integer and float ops are
// one native atomic or a short CAS loop. It is local and blocks only to wait
// for a busy stripe.
func FetchAndOp[T Elem](mem []byte, off int64, v T, op Op, st *Stripes) (old T, err error) {
	if op == Sum {
		if old, ok := raw.FetchAddWord(mem, off, v); ok {
			return old, nil
		}
	}
	if k := hotWord[T](mem, off); k != 0 {
		if old, ok := rmwHot(mem, off, uintptr(raw.SizeOf[T]()), k, op, raw.BitsOf(v)); ok {
			return raw.FromBits[T](old), nil
		}
	}
	return fetchAndOp(mem, off, v, op, st)
}

func fetchAndOp[T Elem](mem []byte, off int64, v T, op Op, st *Stripes) (T, error) {
	if raw.SizeOf[T]() <= 8 {
		b, err := fetchScalar(mem, off, TypeOf[T](), op, raw.BitsOf(v), st)
		return raw.FromBits[T](b), err
	}
	var in, out [1]T
	in[0] = v
	err := getAccumulate(mem, off, in[:], out[:], op, st)
	return out[0], err
}

// CompareAndSwap is the target side of MPI_Compare_and_swap on an integer
// element: if the element at mem[off] equals compare it becomes v; the old
// value is returned either way, in one atomic step. Aligned elements use a
// hardware compare-and-swap (on the containing 32-bit word for 1- and 2-byte
// integers), unaligned ones their stripe. It is local and blocks only to wait
// for a busy stripe.
func CompareAndSwap[T Integer](mem []byte, off int64, v, compare T, st *Stripes) (old T, err error) {
	if raw.SizeOf[T]() == 8 && raw.Word64OK(mem, off) {
		return raw.FromBits[T](cas64(raw.Word64(mem, off), raw.BitsOf(v), raw.BitsOf(compare))), nil
	}
	if raw.SizeOf[T]() == 4 && hotWord[T](mem, off) == hotInt {
		return raw.FromBits[T](uint64(cas32(raw.Word32(mem, off), uint32(raw.BitsOf(v)), uint32(raw.BitsOf(compare))))), nil
	}
	return compareAndSwap(mem, off, v, compare, st)
}

func compareAndSwap[T Integer](mem []byte, off int64, v, compare T, st *Stripes) (old T, err error) {
	t := TypeOf[T]()
	if err := span(mem, off, 1, t); err != nil {
		return old, err
	}
	nv, cmp := raw.BitsOf(v), raw.BitsOf(compare)
	var o uint64
	switch size := int64(t.Size()); {
	case off&(size-1) != 0:
		o, err = casStriped(mem, off, t, nv, cmp, st)
	case size == 8:
		o = cas64(raw.Word64(mem, off), nv, cmp)
	case size == 4:
		o = uint64(cas32(raw.Word32(mem, off), uint32(nv), uint32(cmp)))
	default:
		o = casSub(mem, off, int(size), nv, cmp)
	}
	return raw.FromBits[T](o), err
}

// segmentOK reports whether mem is a usable segment: 8-byte aligned, so that
// an offset's alignment is its address's alignment in every process, and a
// multiple of 8 bytes long, so that the aligned word containing any byte of
// mem lies inside mem.
func segmentOK(mem []byte) bool { // raw.Word64OK asks the same of mem
	return raw.Addr(mem)&7 == 0 && len(mem)&7 == 0
}

// span checks mem and that n ≥ 1 elements of type t at off lie inside it.
func span(mem []byte, off int64, n int, t Type) error {
	if !segmentOK(mem) {
		return fmt.Errorf("atomics: segment of %d bytes at %#x: need 8-byte alignment and a multiple of 8 bytes: %w", len(mem), raw.Addr(mem), ErrArg)
	}
	size := int64(t.Size())
	if off < 0 || off > int64(len(mem)) || int64(n) > (int64(len(mem))-off)/size {
		return fmt.Errorf("atomics: %d × %v (%d bytes each) at offset %d: outside the %d-byte segment: %w", n, t, size, off, len(mem), ErrRange)
	}
	return nil
}

// apply runs op over n elements of type t at off: lock-free for aligned
// integers and floats, under the stripes for everything else. See lockfree.go
// for src and res.
func apply(mem []byte, off int64, t Type, op Op, src, res []byte, n int, st *Stripes) error {
	size := t.Size()
	if t.class() > classFloat || off&int64(size-1) != 0 {
		return applyStriped(mem, off, t, op, src, res, n, st)
	}
	switch size {
	case 8:
		apply64(mem, off, t, op, src, res, n)
	case 4:
		apply32(mem, off, t, op, src, res, n)
	default:
		applySub(mem, off, t, op, src, res, n)
	}
	return nil
}

// fetchScalar is FetchAndOp for elements of at most 8 bytes, on bit patterns.
func fetchScalar(mem []byte, off int64, t Type, op Op, v uint64, st *Stripes) (uint64, error) {
	if err := Check(op, t, true); err != nil {
		return 0, err
	}
	if err := span(mem, off, 1, t); err != nil {
		return 0, err
	}
	size := t.Size()
	if t.class() > classFloat || off&int64(size-1) != 0 {
		var vb, rb [8]byte
		binary.LittleEndian.PutUint64(vb[:], v)
		err := applyStriped(mem, off, t, op, vb[:size], rb[:size], 1, st)
		return binary.LittleEndian.Uint64(rb[:]), err
	}
	switch size {
	case 8:
		return rmw64(raw.Word64(mem, off), t, op, v), nil
	case 4:
		return uint64(rmw32(raw.Word32(mem, off), t, op, uint32(v))), nil
	}
	return rmwSub(mem, off, size, t, op, v), nil
}

// applyStriped runs op over n elements under their stripes: each element is
// read, combined and written with plain loads and stores while its stripe is
// held. Consecutive elements with the same stripe share one acquisition; at
// most one stripe is held at a time.
func applyStriped(mem []byte, off int64, t Type, op Op, src, res []byte, n int, st *Stripes) error {
	if st == nil {
		return fmt.Errorf("atomics: %v on %v at offset %d needs a lock stripe, and the window has none: %w", op, t, off, ErrArg)
	}
	size := t.Size()
	held := -1
	for i := range n {
		eo := off + int64(i*size)
		if k := st.Index(eo); k != held {
			if held >= 0 {
				st.unlock(held)
				held = -1
			}
			if err := st.lock(k); err != nil {
				return err
			}
			held = k
		}
		e := mem[eo : eo+int64(size) : eo+int64(size)]
		if res != nil {
			copy(res[i*size:(i+1)*size], e)
		}
		if op != NoOp {
			combineInPlace(t, op, e, src[i*size:(i+1)*size])
		}
	}
	if held >= 0 {
		st.unlock(held)
	}
	return nil
}

// casStriped is CompareAndSwap for an unaligned integer, under its stripe.
func casStriped(mem []byte, off int64, t Type, v, cmp uint64, st *Stripes) (uint64, error) {
	if st == nil {
		return 0, fmt.Errorf("atomics: MPI_Compare_and_swap on %v at unaligned offset %d needs a lock stripe, and the window has none: %w", t, off, ErrArg)
	}
	k, err := st.Lock(off)
	if err != nil {
		return 0, err
	}
	size := t.Size()
	e := mem[off : off+int64(size)]
	old := loadLE(e, size)
	if old == cmp&sizeMask(size) {
		storeLE(e, size, v)
	}
	st.unlock(k)
	return old, nil
}
