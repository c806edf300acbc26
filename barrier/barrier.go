package barrier

import (
	"fmt"
	"sync/atomic"

	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/shm"
)

// LineLen is the bytes a Barrier occupies: one cache line of its own.
const LineLen = shm.CacheLine

// Barrier layout in its line (little-endian, offsets in bytes):
//
//	0  uint64 state:
//	     bits  0-30  arrivals in this round
//	     bit   31    a rank reported a failure in this round
//	     bits 32-63  generation G (the 32-bit word at offset 4: the futex
//	                 word); G>>1 counts rounds, G&1 says whether the round
//	                 that ended with G had a failure
//	8  uint32 sleepers: waiters in the futex phase
//	12 uint32 failure code of rounds with an even number (G>>1 even)
//	16 uint32 failure code of odd rounds
//
// Arrive: read G; a failing rank CASes its code into its round's failure
// word (first one wins) and ORs bit 31 into state; then add 1 to state. The
// rank whose add makes arrivals == n is last: if the previous round failed
// (bit 0 of G), it clears that round's failure word, which the next round
// reuses; then with one add it resets arrivals and bit 31 and sets
// the next G (round+1, failure bit = bit 31), which releases everyone, and
// wakes sleepers. The others wait until G changes. Only if the new G has its
// failure bit does anyone read the failure word, so a round without failure
// touches nothing but the state word: it is a centralized sense-reversing
// barrier at the cost of one line transfer per arrival and one for the
// release.
//
// The offsets and bits are exported for C code that joins a barrier in a
// shmrun segment (include/shmrun/format.h is generated from them).
const (
	OffState    = 0  // uint64 state word
	OffGen      = 4  // uint32 generation: the high half of state, the futex word
	OffSleepers = 8  // uint32 sleepers
	OffFail     = 12 // [2]uint32 failure codes of even and odd rounds

	CountMask = 1<<31 - 1 // arrivals in the state word
	FailedBit = 1 << 31   // a failure was reported in this round
)

// Barrier is a reusable barrier for n ranks over one line of shared memory.
// Each rank builds its own Barrier value over the same line.
type Barrier struct {
	state  *uint64
	ev     Event
	fail   [2]*uint32
	n      uint32
	abort  *uint32
	policy Policy
}

// New returns a barrier for n ranks over line (LineLen bytes, 8-byte aligned,
// zeroed before any rank uses it). abort is the job's abort word or nil.
func New(line []byte, n int, abort *uint32, p Policy) (*Barrier, error) {
	if len(line) < LineLen || raw.Addr(line)%8 != 0 {
		return nil, fmt.Errorf("barrier: line of %d bytes at %#x: need %d bytes, 8-byte aligned", len(line), raw.Addr(line), LineLen)
	}
	if n < 1 || n > 1<<30 {
		return nil, fmt.Errorf("barrier: %d ranks", n)
	}
	return &Barrier{
		state:  raw.Uint64At(line, OffState),
		ev:     Event{Seq: raw.Uint32At(line, OffGen), Sleepers: raw.Uint32At(line, OffSleepers)},
		fail:   [2]*uint32{raw.Uint32At(line, OffFail), raw.Uint32At(line, OffFail+4)},
		n:      uint32(n),
		abort:  abort,
		policy: p,
	}, nil
}

// Wait blocks until all n ranks have called Wait (or Agree) for this round.
func (b *Barrier) Wait() error {
	_, err := b.AgreeCode(0)
	return err
}

// Agree is a barrier that also agrees on failure: a rank that failed passes
// its rank number (>= 0), the others pass -1. Every rank gets back the same
// answer: the rank of the first failure reported in this round, or -1.
func (b *Barrier) Agree(failed int) (int, error) {
	code := uint32(0)
	if failed >= 0 {
		code = uint32(failed) + 1
	}
	got, err := b.AgreeCode(code)
	return int(got) - 1, err
}

// AgreeCode is Agree with a caller-defined failure code: 0 means success, and
// every rank gets back the first nonzero code reported in this round, or 0.
func (b *Barrier) AgreeCode(code uint32) (uint32, error) {
	if code != 0 {
		gen := uint32(atomic.LoadUint64(b.state) >> 32)
		atomic.CompareAndSwapUint32(b.fail[(gen>>1)&1], 0, code)
		atomic.OrUint64(b.state, FailedBit)
	}
	// The generation comes from the arrival's own result, not from a load
	// before it: a load would fetch the line shared and the add then pay a
	// second transfer to own it. The round cannot end before this arrival.
	v := atomic.AddUint64(b.state, 1)
	gen := uint32(v >> 32)
	round := gen >> 1
	fail := b.fail[round&1]
	switch cnt := uint32(v) & CountMask; {
	case cnt == b.n:
		// The next round's failure word last served round-1, whose
		// failure bit is gen&1: clear it only then. Nothing else may come
		// between the arrival add and the release add, or a spinning peer
		// takes the line away in between and the release pays a transfer.
		if gen&1 != 0 {
			atomic.StoreUint32(b.fail[(round+1)&1], 0)
		}
		next := (round+1)<<1 | uint32(v&FailedBit)>>31
		// One add: arrivals and bit 31 to zero, G to next (all mod 2^64).
		delta := uint64(next-gen)<<32 - uint64(b.n) - v&FailedBit
		gen = uint32(atomic.AddUint64(b.state, delta) >> 32)
		if atomic.LoadUint32(b.ev.Sleepers) != 0 {
			raw.WakeAll(b.ev.Seq)
		}
	case cnt > b.n:
		panic(fmt.Sprintf("barrier: %d arrivals for %d ranks: the barrier line is corrupt or shared by a different group", cnt, b.n))
	default:
		// The spin phase inline: a peer on another core usually releases
		// us within it, without a call per check.
		old := gen
		pause := b.policy.Spin >= PauseFrom
		for range b.policy.Spin {
			if g := uint32(atomic.LoadUint64(b.state) >> 32); g != old {
				gen = g
				break
			}
			if pause {
				raw.Pause()
			}
		}
		if gen == old {
			var err error
			if gen, err = b.WaitPast(old); err != nil {
				return 0, err
			}
		}
	}
	if gen&1 == 0 {
		return 0, nil
	}
	return atomic.LoadUint32(fail), nil
}

// Words returns the barrier's state word and its sleepers word, for C
// code in this process that arrives by the same protocol (the C
// interface's MPI_Win_fence), the failure words of even and odd rounds,
// the number of ranks and the spins before the futex phase.
func (b *Barrier) Words() (state *uint64, sleepers *uint32, fail [2]*uint32, n uint32, spin int) {
	return b.state, b.ev.Sleepers, b.fail, b.n, b.policy.Spin
}

// WaitPast is the waiting half of a non-last arrival whose add saw
// generation old and whose spin phase has passed: it yields, then sleeps on
// the futex, until the generation moves, and returns the new one. It fails
// when the job is aborted.
func (b *Barrier) WaitPast(old uint32) (uint32, error) {
	p := b.policy
	p.Spin = 0
	if err := b.ev.Await(b.abort, p, func() bool {
		return uint32(atomic.LoadUint64(b.state)>>32) != old
	}); err != nil {
		return 0, err
	}
	// G cannot move again before this rank arrives once more.
	return uint32(atomic.LoadUint64(b.state) >> 32), nil
}

// Failure is the failure code of the round that ended with generation gen
// (0 if it had none).
func (b *Barrier) Failure(gen uint32) uint32 {
	if gen&1 == 0 {
		return 0
	}
	return atomic.LoadUint32(b.fail[(gen>>1-1)&1])
}

// Wake wakes the barrier's sleepers (after a release add; call it when the
// sleepers word is nonzero).
func (b *Barrier) Wake() { raw.WakeAll(b.ev.Seq) }
