package atomics

import (
	"fmt"
	"sync/atomic"

	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/shm"
)

// StripeLen is the bytes one lock stripe occupies in the sync block: one
// shm.CacheLine, so that two stripes never share a line (nor a pair of lines
// the adjacent-line prefetcher moves together).
const StripeLen = shm.CacheLine

// Stripe layout in its StripeLen bytes (little-endian 32-bit words, all
// accessed atomically; the rest of the line is reserved and stays zero):
//
//	0  lock:     StripeFree or StripeHeld
//	4  seq:      futex word, bumped by an unlock that sees sleepers
//	8  sleepers: waiters in (or entering) the futex sleep
//
// The full protocol is in doc.go. The offsets, states and hash constants
// are exported for C code that takes a stripe (include/shmrun/format.h is
// generated from them).
const (
	StripeOffLock     = 0 // uint32 lock word: StripeFree or StripeHeld
	StripeOffSeq      = 4 // uint32 futex word
	StripeOffSleepers = 8 // uint32 sleepers
)

// Stripe lock word states.
const (
	StripeFree = 0
	StripeHeld = 1
)

// Stripe hash: the data granule of an element is its segment offset >> 6
// (64 bytes: elements in one cache line of data share a stripe, so a batch
// takes each stripe once per line), and the granule picks its stripe by
// Fibonacci hashing, so that offsets a large power of two apart (the same
// element in every rank's page-aligned part) do not all collide.
const (
	StripeGranuleShift = 6                  // offset >> StripeGranuleShift is the granule
	StripeHashK        = 0x9E3779B97F4A7C15 // Fibonacci multiplier of the granule
)

// Stripes is a set of lock stripes in a region of a shared segment's sync
// block. Each element that cannot be updated lock-free (complex and pair
// types, unaligned elements) is updated under the stripe picked by its byte
// offset in the segment — never its address, which differs in every process.
// Each process builds its own Stripes over the same region. A Stripes value
// is safe for concurrent use by any number of goroutines.
type Stripes struct {
	region []byte
	mask   uint64
	abort  *uint32
	policy barrier.Policy
	race   raceOrder // race builds: the order the locks make (stripes_race.go)
}

// NewStripes returns the stripes in region: len(region)/StripeLen of them,
// which must be a power of two ≥ 1 with no bytes left over. region must be
// 8-byte aligned and zeroed by its creator before any process uses it. abort
// is the job's abort word (or nil): a wait for a stripe gives up with
// barrier.ErrAborted once it is nonzero. p says how waiters spin, yield and
// sleep.
func NewStripes(region []byte, abort *uint32, p barrier.Policy) (*Stripes, error) {
	n := len(region) / StripeLen
	if n < 1 || n&(n-1) != 0 || len(region)%StripeLen != 0 {
		return nil, fmt.Errorf("atomics: stripe region of %d bytes: need a power of two ≥ 1 of %d-byte stripes: %w", len(region), StripeLen, ErrArg)
	}
	if a := raw.Addr(region); a%8 != 0 {
		return nil, fmt.Errorf("atomics: stripe region at %#x is not 8-byte aligned: %w", a, ErrArg)
	}
	return &Stripes{region: region, mask: uint64(n - 1), abort: abort, policy: p, race: newRaceOrder(n)}, nil
}

// Len returns the number of stripes.
func (s *Stripes) Len() int { return int(s.mask) + 1 }

// Index returns the stripe that guards the element starting at byte offset
// off of the segment: ((off>>6) * 0x9E3779B97F4A7C15 mod 2^64) >> 32, masked
// to the number of stripes. off must be ≥ 0.
func (s *Stripes) Index(off int64) int {
	return int(((uint64(off) >> StripeGranuleShift) * StripeHashK) >> 32 & s.mask)
}

// Lock takes the stripe of the element at segment offset off and returns its
// index for Unlock. It blocks while another process or goroutine holds the
// stripe, spinning, yielding and then sleeping as the policy says, and
// returns an error wrapping barrier.ErrAborted (with the stripe unheld) if the
// job's abort word is set meanwhile. Holding two stripes at once is not
// allowed (the kernels never do), so stripes cannot deadlock.
func (s *Stripes) Lock(off int64) (int, error) {
	i := s.Index(off)
	return i, s.lock(i)
}

// Unlock releases stripe i, taken by Lock, and wakes its sleepers. Unlocking
// a stripe that is not held means the sync block is corrupt: it panics.
func (s *Stripes) Unlock(i int) {
	s.unlock(i)
}

func (s *Stripes) word(i, field int) *uint32 {
	return raw.Uint32At(s.region, int64(i)*StripeLen+int64(field))
}

func (s *Stripes) lock(i int) error {
	lk := s.word(i, StripeOffLock)
	if atomic.CompareAndSwapUint32(lk, StripeFree, StripeHeld) {
		s.race.acquire(i)
		return nil
	}
	ev := barrier.Event{Seq: s.word(i, StripeOffSeq), Sleepers: s.word(i, StripeOffSleepers)}
	// done takes the lock: Await returns nil only once we hold it. Testing
	// before the CAS keeps waiters from bouncing the line while it is held.
	err := ev.Await(s.abort, s.policy, func() bool {
		return atomic.LoadUint32(lk) == StripeFree && atomic.CompareAndSwapUint32(lk, StripeFree, StripeHeld)
	})
	if err != nil {
		return fmt.Errorf("atomics: waiting for lock stripe %d: %w", i, err)
	}
	s.race.acquire(i)
	return nil
}

func (s *Stripes) unlock(i int) {
	lk := s.word(i, StripeOffLock)
	// Swap, not Store: the release must be a full barrier before the load of
	// sleepers (a waiter announces itself, then reads lock; we write lock,
	// then read sleepers — Dekker, so at least one of us sees the other).
	if old := atomic.SwapUint32(lk, StripeFree); old != StripeHeld {
		panic(fmt.Sprintf("atomics: unlock of lock stripe %d whose lock word is %d, not %d: the sync block is corrupt", i, old, StripeHeld))
	}
	s.race.release(i) // after the word: a goroutine that takes it next may wait here a moment
	if atomic.LoadUint32(s.word(i, StripeOffSleepers)) != 0 {
		barrier.Event{Seq: s.word(i, StripeOffSeq), Sleepers: s.word(i, StripeOffSleepers)}.Notify()
	}
}
