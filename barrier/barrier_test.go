package barrier_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/shm"
)

// newLine returns a zeroed, 8-byte aligned barrier line on the Go heap,
// where the race detector sees every access to it.
func newLine() []byte { return shm.Bytes(make([]uint64, barrier.LineLen/8)) }

// newBarriers returns n handles on one heap barrier, one per goroutine rank.
func newBarriers(t testing.TB, n int, abort *uint32, p barrier.Policy) []*barrier.Barrier {
	t.Helper()
	line := newLine()
	bs := make([]*barrier.Barrier, n)
	for i := range bs {
		b, err := barrier.New(line, n, abort, p)
		if err != nil {
			t.Fatal(err)
		}
		bs[i] = b
	}
	return bs
}

// runRanks runs body as n goroutine ranks and fails the test with their
// first error. A generous deadline turns a hang into a failure.
func runRanks(t *testing.T, n int, body func(rank int) error) {
	t.Helper()
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Go(func() {
			if err := body(r); err != nil {
				errs <- fmt.Errorf("rank %d: %w", r, err)
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("ranks hung")
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// policies make the waiters of a test wait mostly in one phase. A goroutine
// that spins or yields (sched_yield) keeps its P, so with more goroutine
// ranks than Ps those phases only waste time: maxN keeps them small.
var policies = []struct {
	name string
	p    barrier.Policy
	maxN int
}{
	{"default", barrier.DefaultPolicy, 1 << 30},
	{"futex", barrier.Policy{Sleep: 10 * time.Millisecond}, 1 << 30},
	{"spin", barrier.Policy{Spin: 1 << 16, Sleep: 10 * time.Millisecond}, 2},
	{"yield", barrier.Policy{Yield: 200 * time.Microsecond, Sleep: 10 * time.Millisecond}, 3},
}

// TestBarrierNoEarlyRelease: no rank leaves barrier k before every rank has
// arrived at it, checked two ways. Counted: each rank increments round k's
// arrival counter before the barrier and, after it, finds all n arrivals.
// Ordered: each rank writes its slot of round k's buffer with plain stores
// before the barrier and reads every slot with plain loads after it; the
// barrier's atomics must order those accesses, or the race detector reports
// them (buffers alternate, so a slot is rewritten only two barriers later).
func TestBarrierNoEarlyRelease(t *testing.T) {
	for _, pol := range policies {
		for _, n := range []int{1, 2, 3, 8, 17} {
			if n > pol.maxN {
				continue
			}
			t.Run(fmt.Sprintf("%s/n=%d", pol.name, n), func(t *testing.T) {
				rounds := min(300, 2000/n) // rank-rounds bound the time on 2 cores
				bs := newBarriers(t, n, nil, pol.p)
				arrived := make([]atomic.Int32, rounds)
				var slots [2][]int
				slots[0], slots[1] = make([]int, n), make([]int, n)
				runRanks(t, n, func(r int) error {
					for k := range rounds {
						slots[k%2][r] = k
						arrived[k].Add(1)
						if err := bs[r].Wait(); err != nil {
							return err
						}
						if a := arrived[k].Load(); a != int32(n) {
							return fmt.Errorf("left barrier %d with %d of %d arrived", k, a, n)
						}
						for p, v := range slots[k%2] {
							if v != k {
								return fmt.Errorf("after barrier %d, rank %d's slot holds round %d", k, p, v)
							}
						}
					}
					return nil
				})
			})
		}
	}
}

// TestAgree: in every round all ranks get the same answer: -1 when no rank
// failed, else one of the ranks that failed in that round.
func TestAgree(t *testing.T) {
	const n, rounds = 6, 400
	bs := newBarriers(t, n, nil, barrier.DefaultPolicy)
	// failing[k] is the set of ranks that fail in round k (a bit mask):
	// none, one, several or all, chosen by a seeded generator.
	rng := rand.New(rand.NewPCG(1, 2))
	failing := make([]uint32, rounds)
	for k := range failing {
		switch rng.IntN(4) {
		case 0:
		case 1:
			failing[k] = 1 << rng.IntN(n)
		case 2:
			failing[k] = rng.Uint32() & (1<<n - 1)
		case 3:
			failing[k] = 1<<n - 1
		}
	}
	answers := make([][]int, n)
	runRanks(t, n, func(r int) error {
		for k := range rounds {
			failed := -1
			if failing[k]&(1<<r) != 0 {
				failed = r
			}
			got, err := bs[r].Agree(failed)
			if err != nil {
				return err
			}
			answers[r] = append(answers[r], got)
		}
		return nil
	})
	for k := range rounds {
		a := answers[0][k]
		for r := 1; r < n; r++ {
			if answers[r][k] != a {
				t.Fatalf("round %d: rank 0 was told %d, rank %d %d", k, a, r, answers[r][k])
			}
		}
		switch {
		case failing[k] == 0 && a != -1:
			t.Fatalf("round %d: nobody failed, Agree said rank %d", k, a)
		case failing[k] != 0 && (a < 0 || failing[k]&(1<<a) == 0):
			t.Fatalf("round %d: ranks %b failed, Agree said %d", k, failing[k], a)
		}
	}
}

// TestAbortWakesWaiters: waiters of a barrier that will never complete
// return ErrAborted once the abort word is set, in every wait phase: woken
// by WakeAll, or by their own periodic check of the abort word.
func TestAbortWakesWaiters(t *testing.T) {
	for _, tt := range []struct {
		name   string
		p      barrier.Policy
		wake   bool
		asleep bool // wait until every waiter sleeps on the futex
	}{
		{"default policy", barrier.DefaultPolicy, true, false},
		{"asleep, woken", barrier.Policy{Sleep: 10 * time.Second}, true, true},
		{"asleep, periodic check", barrier.Policy{Sleep: 5 * time.Millisecond}, false, true},
		{"yielding", barrier.Policy{Yield: time.Hour, Sleep: time.Second}, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			const n = 4
			var abort uint32
			line := newLine()
			sleepers := raw.Uint32At(line, 8) // see docs/FORMAT.md
			errs := make(chan error, n)
			for range n - 1 { // one rank never comes
				b, err := barrier.New(line, n, &abort, tt.p)
				if err != nil {
					t.Fatal(err)
				}
				go func() { errs <- b.Wait() }()
			}
			if tt.asleep {
				for atomic.LoadUint32(sleepers) != n-1 {
					runtime.Gosched()
				}
			}
			atomic.StoreUint32(&abort, 1)
			if tt.wake {
				raw.WakeAll(raw.Uint32At(line, 4))
			}
			for range n - 1 {
				select {
				case err := <-errs:
					if !errors.Is(err, barrier.ErrAborted) {
						t.Errorf("Wait = %v, want ErrAborted", err)
					}
				case <-time.After(time.Minute):
					t.Fatal("a waiter did not notice the abort")
				}
			}
			if s := atomic.LoadUint32(sleepers); s != 0 {
				t.Errorf("%d sleepers left counted", s)
			}
		})
	}
}

func TestAbortedBeforeWait(t *testing.T) {
	abort := uint32(1)
	bs := newBarriers(t, 2, &abort, barrier.DefaultPolicy)
	if err := bs[0].Wait(); !errors.Is(err, barrier.ErrAborted) {
		t.Errorf("Wait in an aborted job = %v, want ErrAborted", err)
	}
}

func TestNewErrors(t *testing.T) {
	line := newLine()
	for _, tt := range []struct {
		name string
		line []byte
		n    int
	}{
		{"short line", line[:barrier.LineLen-1], 2},
		{"misaligned line", shm.Bytes(make([]uint64, barrier.LineLen/8+1))[4 : 4+barrier.LineLen], 2},
		{"no ranks", line, 0},
		{"negative ranks", line, -1},
		{"too many ranks", line, 1<<30 + 1},
	} {
		if _, err := barrier.New(tt.line, tt.n, nil, barrier.DefaultPolicy); err == nil {
			t.Errorf("%s: New succeeded", tt.name)
		}
	}
}

// TestCorruptLinePanics: more arrivals than ranks means the line is shared
// by another group or overwritten: a loud failure, not a silent hang.
func TestCorruptLinePanics(t *testing.T) {
	line := newLine()
	atomic.StoreUint64(raw.Uint64At(line, 0), 2) // two arrivals already
	b, err := barrier.New(line, 2, nil, barrier.DefaultPolicy)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if recover() == nil {
			t.Error("no panic on a corrupt barrier line")
		}
	}()
	b.Wait()
}

// TestEvent: Notify after a state change always reaches Await, whichever
// phase the waiter is in (counted: every value published is seen).
func TestEvent(t *testing.T) {
	for _, pol := range policies {
		t.Run(pol.name, func(t *testing.T) {
			p := pol.p
			words := shm.Bytes(make([]uint64, 2))
			ev := barrier.Event{Seq: raw.Uint32At(words, 0), Sleepers: raw.Uint32At(words, 4)}
			state := raw.Uint64At(words, 8)
			const rounds = 200
			ack := make(chan struct{})
			done := make(chan error, 1)
			go func() {
				for k := uint64(1); k <= rounds; k++ {
					if err := ev.Await(nil, p, func() bool { return atomic.LoadUint64(state) >= k }); err != nil {
						done <- err
						return
					}
					ack <- struct{}{}
				}
				done <- nil
			}()
			for k := uint64(1); k <= rounds; k++ {
				atomic.StoreUint64(state, k)
				ev.Notify()
				select {
				case <-ack:
				case <-time.After(time.Minute):
					t.Fatalf("round %d: the waiter missed a Notify", k)
				}
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// BenchmarkBarrier2 is a barrier of two goroutines over heap memory; see
// BenchmarkBarrier2Proc for two processes.
func BenchmarkBarrier2(b *testing.B) {
	bs := newBarriers(b, 2, nil, barrier.DefaultPolicy)
	var wg sync.WaitGroup
	wg.Go(func() {
		for range b.N {
			bs[1].Wait()
		}
	})
	for range b.N {
		bs[0].Wait()
	}
	wg.Wait()
}
