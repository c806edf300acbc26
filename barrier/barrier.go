package barrier

import (
	"fmt"
	"sync/atomic"

	"github.com/shmrun/shmrun/shm"
)

// LineLen is the bytes a Barrier occupies: one cache line of its own.
const LineLen = shm.CacheLine

// Barrier layout in its line (little-endian, offsets in bytes):
//
//	0  uint64 state: arrivals in the low 32 bits, generation in the high 32
//	   (so the generation is the 32-bit word at offset 4: the futex word)
//	8  uint32 sleepers: waiters in the futex phase
//	12 uint32 failure word of even generations
//	16 uint32 failure word of odd generations
//
// Arrive: add 1 to state. The rank whose add makes arrivals == n is last: it
// clears the failure word of the next generation, then adds (1<<32 - n) to
// state — one atomic step that resets the count and bumps the generation,
// which releases everyone — and wakes sleepers. The others wait until the
// generation differs from the one they arrived in. It is a centralized
// sense-reversing barrier; keeping all words in one line means the last
// arrival and the release cost a single line transfer each.
const (
	offState    = 0
	offGen      = 4
	offSleepers = 8
	offFail0    = 12
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
	if len(line) < LineLen || shm.Addr(line)%8 != 0 {
		return nil, fmt.Errorf("barrier: line of %d bytes at %#x: need %d bytes, 8-byte aligned", len(line), shm.Addr(line), LineLen)
	}
	if n < 1 || n > 1<<30 {
		return nil, fmt.Errorf("barrier: %d ranks", n)
	}
	return &Barrier{
		state:  shm.Uint64At(line, offState),
		ev:     Event{Seq: shm.Uint32At(line, offGen), Sleepers: shm.Uint32At(line, offSleepers)},
		fail:   [2]*uint32{shm.Uint32At(line, offFail0), shm.Uint32At(line, offFail0+4)},
		n:      uint32(n),
		abort:  abort,
		policy: p,
	}, nil
}

// Wait blocks until all n ranks have called Wait (or Agree) for this round.
func (b *Barrier) Wait() error {
	_, err := b.Agree(-1)
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
	gen := atomic.LoadUint64(b.state) >> 32
	fail := b.fail[gen&1]
	if code != 0 {
		atomic.CompareAndSwapUint32(fail, 0, code)
	}
	v := atomic.AddUint64(b.state, 1)
	if uint32(v) == b.n {
		atomic.StoreUint32(b.fail[(gen+1)&1], 0)
		atomic.AddUint64(b.state, 1<<32-uint64(b.n))
		if atomic.LoadUint32(b.ev.Sleepers) != 0 {
			WakeAll(b.ev.Seq)
		}
	} else if uint32(v) > b.n {
		panic(fmt.Sprintf("barrier: %d arrivals for %d ranks: the barrier line is corrupt or shared by a different group", uint32(v), b.n))
	} else {
		g := uint32(gen)
		if err := b.ev.Await(b.abort, b.policy, func() bool {
			return uint32(atomic.LoadUint64(b.state)>>32) != g
		}); err != nil {
			return 0, err
		}
	}
	return atomic.LoadUint32(fail), nil
}
