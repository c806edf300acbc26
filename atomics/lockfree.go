package atomics

import (
	"encoding/binary"
	"sync/atomic"

	"github.com/shmrun/shmrun/internal/raw"
)

// Lock-free kernels for aligned integers and floats. Every element is one
// atomic read-modify-write (or load, or store) of the word that holds it:
// native add/and/or/swap where sync/atomic has them, a CAS loop otherwise.
// A CAS loop whose new value equals the old one does not write: the load it
// started with is then the operation's atomic step.
//
// src holds the origin elements' bit patterns (nil for NoOp); res, if not nil,
// receives the old target elements (fetching calls). n ≥ 1 elements start at
// segment offset off, aligned to their size; the caller checked the range.

func le64(b []byte, i int) uint64     { return binary.LittleEndian.Uint64(b[8*i:]) }
func put64(b []byte, i int, x uint64) { binary.LittleEndian.PutUint64(b[8*i:], x) }
func le32(b []byte, i int) uint32     { return binary.LittleEndian.Uint32(b[4*i:]) }
func put32(b []byte, i int, x uint32) { binary.LittleEndian.PutUint32(b[4*i:], x) }

// apply64 is the kernel for 8-byte integers and float64.
func apply64(mem []byte, off int64, t Type, op Op, src, res []byte, n int) {
	native := t != Float64 // integer ops the hardware has
	fetch := res != nil
	switch {
	case op == Sum && native && !fetch:
		for i := range n {
			atomic.AddUint64(raw.Word64(mem, off+8*int64(i)), le64(src, i))
		}
	case op == Sum && native:
		for i := range n {
			v := le64(src, i)
			put64(res, i, atomic.AddUint64(raw.Word64(mem, off+8*int64(i)), v)-v)
		}
	case op == Replace && !fetch:
		for i := range n {
			atomic.StoreUint64(raw.Word64(mem, off+8*int64(i)), le64(src, i))
		}
	case op == Replace:
		for i := range n {
			put64(res, i, atomic.SwapUint64(raw.Word64(mem, off+8*int64(i)), le64(src, i)))
		}
	case op == NoOp:
		for i := range n {
			put64(res, i, atomic.LoadUint64(raw.Word64(mem, off+8*int64(i))))
		}
	case op == Band && !fetch:
		for i := range n {
			atomic.AndUint64(raw.Word64(mem, off+8*int64(i)), le64(src, i))
		}
	case op == Bor && !fetch:
		for i := range n {
			atomic.OrUint64(raw.Word64(mem, off+8*int64(i)), le64(src, i))
		}
	default:
		for i := range n {
			old := rmw64(raw.Word64(mem, off+8*int64(i)), t, op, le64(src, i))
			if fetch {
				put64(res, i, old)
			}
		}
	}
}

// rmw64 applies op to one 8-byte element and returns its old value.
func rmw64(p *uint64, t Type, op Op, v uint64) uint64 {
	native := t != Float64
	switch {
	case op == Sum && native:
		return atomic.AddUint64(p, v) - v
	case op == Replace:
		return atomic.SwapUint64(p, v)
	case op == NoOp:
		return atomic.LoadUint64(p)
	case op == Band && native:
		return atomic.AndUint64(p, v)
	case op == Bor && native:
		return atomic.OrUint64(p, v)
	}
	for {
		old := atomic.LoadUint64(p)
		r := combine(t, op, old, v)
		if r == old || atomic.CompareAndSwapUint64(p, old, r) {
			return old
		}
	}
}

// apply32 is the kernel for 4-byte integers and float32.
func apply32(mem []byte, off int64, t Type, op Op, src, res []byte, n int) {
	native := t != Float32
	fetch := res != nil
	switch {
	case op == Sum && native && !fetch:
		for i := range n {
			atomic.AddUint32(raw.Word32(mem, off+4*int64(i)), le32(src, i))
		}
	case op == Replace && !fetch:
		for i := range n {
			atomic.StoreUint32(raw.Word32(mem, off+4*int64(i)), le32(src, i))
		}
	case op == NoOp:
		for i := range n {
			put32(res, i, atomic.LoadUint32(raw.Word32(mem, off+4*int64(i))))
		}
	case op == Band && native && !fetch:
		for i := range n {
			atomic.AndUint32(raw.Word32(mem, off+4*int64(i)), le32(src, i))
		}
	case op == Bor && native && !fetch:
		for i := range n {
			atomic.OrUint32(raw.Word32(mem, off+4*int64(i)), le32(src, i))
		}
	default:
		for i := range n {
			old := rmw32(raw.Word32(mem, off+4*int64(i)), t, op, le32(src, i))
			if fetch {
				put32(res, i, old)
			}
		}
	}
}

// rmw32 applies op to one 4-byte element and returns its old value.
func rmw32(p *uint32, t Type, op Op, v uint32) uint32 {
	native := t != Float32
	switch {
	case op == Sum && native:
		return atomic.AddUint32(p, v) - v
	case op == Replace:
		return atomic.SwapUint32(p, v)
	case op == NoOp:
		return atomic.LoadUint32(p)
	case op == Band && native:
		return atomic.AndUint32(p, v)
	case op == Bor && native:
		return atomic.OrUint32(p, v)
	}
	for {
		old := atomic.LoadUint32(p)
		r := uint32(combine(t, op, uint64(old), uint64(v)))
		if r == old || atomic.CompareAndSwapUint32(p, old, r) {
			return old
		}
	}
}

// applySub is the kernel for 1- and 2-byte integers: each element is updated
// by an atomic operation on the aligned 32-bit word that contains it, which
// leaves the word's other bytes as they are (a CAS fails and retries if a
// neighbour changed meanwhile; and/or use an identity mask for them).
func applySub(mem []byte, off int64, t Type, op Op, src, res []byte, n int) {
	size := t.Size()
	for i := range n {
		var v uint64
		if src != nil {
			v = loadLE(src[i*size:], size)
		}
		old := rmwSub(mem, off+int64(i*size), size, t, op, v)
		if res != nil {
			storeLE(res[i*size:], size, old)
		}
	}
}

// rmwSub applies op to the size-byte element at segment offset eo (aligned to
// size, so inside one aligned 32-bit word) and returns its old value.
func rmwSub(mem []byte, eo int64, size int, t Type, op Op, v uint64) uint64 {
	w := raw.Word32(mem, eo&^3)
	sh := uint(eo&3) * 8
	m := uint32(sizeMask(size))
	v &= uint64(m) // the other bytes of the word are not ours
	switch op {
	case NoOp:
		return uint64(atomic.LoadUint32(w) >> sh & m)
	case Band:
		return uint64(atomic.AndUint32(w, uint32(v)<<sh|^(m<<sh)) >> sh & m)
	case Bor:
		return uint64(atomic.OrUint32(w, uint32(v)<<sh) >> sh & m)
	}
	for {
		ow := atomic.LoadUint32(w)
		old := ow >> sh & m
		r := uint32(combine(t, op, uint64(old), v))
		if r == old || atomic.CompareAndSwapUint32(w, ow, ow&^(m<<sh)|r<<sh) {
			return uint64(old)
		}
	}
}

// cas64, cas32 and casSub are MPI_Compare_and_swap on one aligned element:
// if it equals cmp it becomes v; the old value is returned either way.
func cas64(p *uint64, v, cmp uint64) uint64 {
	for {
		if atomic.CompareAndSwapUint64(p, cmp, v) {
			return cmp
		}
		if old := atomic.LoadUint64(p); old != cmp {
			return old
		}
	}
}

func cas32(p *uint32, v, cmp uint32) uint32 {
	for {
		if atomic.CompareAndSwapUint32(p, cmp, v) {
			return cmp
		}
		if old := atomic.LoadUint32(p); old != cmp {
			return old
		}
	}
}

func casSub(mem []byte, eo int64, size int, v, cmp uint64) uint64 {
	w := raw.Word32(mem, eo&^3)
	sh := uint(eo&3) * 8
	m := uint32(sizeMask(size))
	v32, cmp32 := uint32(v)&m, uint32(cmp)&m
	for {
		ow := atomic.LoadUint32(w)
		old := ow >> sh & m
		if old != cmp32 {
			return uint64(old)
		}
		if atomic.CompareAndSwapUint32(w, ow, ow&^(m<<sh)|v32<<sh) {
			return uint64(old)
		}
	}
}
