// Package typesig digests MPI type signatures — the sequence of basic
// types some data is made of — into a few bits that travel with a message
// or a collective call, so that a receiver can tell whether the sender's
// signature matches its own (MPI 4.1 §3.3.1, §6.1) without the whole
// signature crossing the processes.
//
// A digest is canonical: equal element sequences have equal digests,
// however the types that describe them are built (a vector of 4 doubles,
// 4 doubles, a struct of two pairs of doubles). Data of one basic type
// gets that type's exact code; data mixing basic types a 23-bit
// polynomial hash of the sequence (mod 2^61−1), so a mismatch between two
// mixed signatures escapes detection with a probability of 2^−23; empty
// data and data made only of bytes (dtype.Byte, the byte forms) get Any,
// which matches everything. A pair type (atomics.FloatIntT and its kin)
// counts as its two basic types, as MPI defines it (a struct of a value
// and an int, MPI 4.1 §6.9.4): 2 MPI_2INT are 4 MPI_INT, and MPI_FLOAT_INT
// is a float and an int.
package typesig

import (
	"fmt"
	"math/bits"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/format"
)

// Any is the digest of untyped data (Byte, or nothing): it matches any
// digest.
const Any uint32 = 0

// Hashed marks a 24-bit digest of mixed basic types; the low 23 bits are
// the hash.
const Hashed uint32 = 1 << 23

// Kind is the digest of data made only of basic type k, which is not a
// pair type.
func Kind(k atomics.Type) uint32 { return uint32(k) }

// Uniform is the digest of any nonzero number of elements of basic type k
// when that number does not change it: Kind(k), Kind of the halves of a
// pair type of two equal halves (atomics.TwoIntT: ints); false for the
// other pair types, whose digest is a hash that grows with the data.
func Uniform(k atomics.Type) (uint32, bool) {
	switch a, b := halves(k); {
	case a == 0:
		return Kind(k), true
	case a == b:
		return Kind(a), true
	}
	return 0, false
}

// CollElem is the element type and its bytes under which a data-movement
// collective's signature (a flag line's format.FlagType and FlagCount,
// Bcast, the gathers, scatters and all-to-alls) counts data made only of
// basic type k: k and its size, but a pair of two equal halves as its
// half, twice as many (MPI_2INT as ints), and a pair of two different
// types as mixed data, counted in bytes (format.FlagTypeMixed, 1), which
// meets any data of the same size that mixes basic types.
func CollElem(k atomics.Type) (typ uint8, size int) {
	switch a, b := halves(k); {
	case a == 0:
		return uint8(k), k.Size()
	case a == b:
		return uint8(a), a.Size()
	}
	return format.FlagTypeMixed, 1
}

// halves are the two basic types pair type k is made of, (0, 0) for a
// type that is not a pair.
func halves(k atomics.Type) (a, b atomics.Type) {
	switch k {
	case atomics.FloatIntT:
		return atomics.Float32, atomics.Int32
	case atomics.DoubleIntT:
		return atomics.Float64, atomics.Int32
	case atomics.LongIntT:
		return atomics.Int64, atomics.Int32
	case atomics.TwoIntT:
		return atomics.Int32, atomics.Int32
	case atomics.ShortIntT:
		return atomics.Int16, atomics.Int32
	}
	return 0, 0
}

// Match reports whether a message of digest msg may be received by a
// receive whose data, cut to the message's length, has digest want.
func Match(msg, want uint32) bool { return msg == Any || want == Any || msg == want }

// byteCode is Byte's element code in the hash: distinct from every basic
// type's.
const byteCode = 255

// mod is the hash's prime modulus, 2^61−1; base its base.
const (
	mod  = 1<<61 - 1
	base = 0x0d1e_4c6b_9f2a_3857 % mod
)

func mulmod(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	// a·b = hi·2^64 + lo; 2^61 ≡ 1, so 2^64 ≡ 8.
	r := (hi<<3 | lo>>61) + lo&mod
	for r >= mod {
		r -= mod
	}
	return r
}

// seq is the hash of an element sequence: h = Σ code_i·base^i, p = base^len.
type seq struct{ h, p uint64 }

var empty = seq{0, 1}

// cat is the hash of a followed by b.
func cat(a, b seq) seq {
	h := a.h + mulmod(a.p, b.h)
	if h >= mod {
		h -= mod
	}
	return seq{h, mulmod(a.p, b.p)}
}

// pow is the hash of n copies of x, by doubling.
func pow(x seq, n int64) seq {
	r := empty
	for i := 63 - bits.LeadingZeros64(uint64(n)); i >= 0 && n > 0; i-- {
		r = cat(r, r)
		if n>>i&1 != 0 {
			r = cat(r, x)
		}
	}
	return r
}

// elemSize is the data bytes of one element of run r (both halves of a
// pair type).
func elemSize(r dtype.SigRun) int64 {
	if r.IsByte {
		return 1
	}
	return dtype.Basic(r.T).Size()
}

func code(r dtype.SigRun) uint64 {
	if r.IsByte {
		return byteCode
	}
	return uint64(r.T)
}

// digest accumulates a sequence: its hash, and whether it is empty, all
// Byte, or all one basic type.
type digest struct {
	s     seq
	n     int64
	first dtype.SigRun
	mixed bool
}

func (d *digest) add(r dtype.SigRun, n int64) {
	if n == 0 {
		return
	}
	a, b := halves(r.T)
	switch {
	case r.IsByte || a == 0:
		d.note(r)
		d.n += n
		d.s = cat(d.s, pow(seq{code(r), base}, n))
	case a == b:
		d.add(dtype.SigRun{T: a, N: 2 * n}, 2*n)
	default:
		d.note(dtype.SigRun{T: a})
		d.mixed = true
		d.n += 2 * n
		d.s = cat(d.s, pow(cat(seq{uint64(a), base}, seq{uint64(b), base}), n))
	}
}

// note records that the sequence goes on with an element of run r.
func (d *digest) note(r dtype.SigRun) {
	if d.n == 0 {
		d.first = r
	} else if r.T != d.first.T || r.IsByte != d.first.IsByte {
		d.mixed = true
	}
}

func (d *digest) repeat(k int64) {
	if k != 1 {
		d.s = pow(d.s, k)
		d.n *= k
	}
}

func (d *digest) value() uint32 {
	switch {
	case d.n == 0, !d.mixed && d.first.IsByte:
		return Any
	case !d.mixed:
		return Kind(d.first.T)
	}
	return Hashed | uint32(d.s.h)&(Hashed-1)
}

// Of is the digest of count instances of a type whose one-instance
// signature is sig (dtype's Signature).
func Of(sig []dtype.SigRun, count int) uint32 {
	if count <= 0 {
		return Any
	}
	d := digestOf(sig, int64(count))
	return d.value()
}

// Prefix is the digest of the first n bytes of the data of count
// instances of a type of size bytes whose one-instance signature is sig:
// what a receive of that type holds after an n-byte message. ok is false
// when n bytes end inside an element, or reach past the data.
func Prefix(sig []dtype.SigRun, size int64, count int, n int64) (digest uint32, ok bool) {
	if n == 0 {
		return Any, true
	}
	if size <= 0 || count < 0 || n > size*int64(count) {
		return 0, false
	}
	d := digestOf(sig, n/size)
	rem := n % size
	for _, r := range sig {
		if rem == 0 {
			break
		}
		es := elemSize(r)
		k := min(r.N, rem/es)
		d.add(r, k)
		rem -= k * es
		if k < r.N && rem > 0 {
			if a, _ := halves(r.T); a != 0 && !r.IsByte && rem == dtype.Basic(a).Size() {
				d.add(dtype.SigRun{T: a, N: 1}, 1) // the value of a pair, without its int
				rem = 0
				break
			}
			return 0, false // the cut falls inside an element
		}
	}
	if rem != 0 {
		return 0, false
	}
	return d.value(), true
}

func digestOf(sig []dtype.SigRun, k int64) digest {
	d := digest{s: empty}
	if k == 0 {
		return d
	}
	for _, r := range sig {
		d.add(r, r.N)
	}
	d.repeat(k)
	return d
}

// Describe names a digest for an error message: "untyped bytes", a basic
// type's name, or "mixed basic types (digest 0x…)".
func Describe(d uint32) string {
	switch {
	case d == Any:
		return "untyped bytes"
	case d&Hashed != 0:
		return fmt.Sprintf("mixed basic types (digest %#06x)", d&(Hashed-1))
	}
	return atomics.Type(d).String()
}
