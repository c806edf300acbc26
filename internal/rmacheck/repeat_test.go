package rmacheck

import (
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/internal/raw"
)

// benchLog is rank 0's log of a two-rank window in a two-rank world, over
// private memory (the checker's costs without another process).
func benchLog(b *testing.B) *Log {
	p := newProc(0, 2, make([]byte, MsgAreaLen(2)), nil)
	return p.NewLog(make([]byte, LogAreaLen(2, 2)), []int{0, 1}, 0, false)
}

// BenchmarkAccessComplete is a checked Put 8 B + Flush's work in the
// checker, a repeat each time (the site given: the frame walk is not
// measured here).
func BenchmarkAccessComplete(b *testing.B) {
	l := benchLog(b)
	site := Name("bench.go:1")
	for b.Loop() {
		l.Access(&Access{Target: 1, Lo: 64, Hi: 72, Kind: Write, Call: 1, Site: site})
		l.Complete(1)
	}
}

// BenchmarkAtomicComplete is FetchAndOp + Flush's.
func BenchmarkAtomicComplete(b *testing.B) {
	l := benchLog(b)
	site := Name("bench.go:2")
	for b.Loop() {
		l.Access(&Access{Target: 1, Lo: 64, Hi: 72, Kind: Atomic, Op: uint8(atomics.Sum), Typ: uint8(atomics.Int64), Call: 1, Site: site})
		l.Complete(1)
	}
}

// TestRepeatsConcurrent races goroutines repeating Put + Flush (each its
// own bytes) and one repeating FetchAndOp + Flush on another target
// against releases (messages sent): no conflict may be reported, and once
// every goroutine has flushed, every record of this rank is complete and
// nothing is pending.
func TestRepeatsConcurrent(t *testing.T) {
	out, err := os.CreateTemp(t.TempDir(), "reports")
	if err != nil {
		t.Fatal(err)
	}
	p := newProc(0, 2, make([]byte, MsgAreaLen(2)), out)
	l := p.NewLog(make([]byte, LogAreaLen(2, 2)), []int{0, 1}, 0, false)
	site := Name("repeat_test.go:1")
	const workers, rounds = 3, 20000
	var wg sync.WaitGroup
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lo := uint64(8 * g)
			for i := range rounds {
				l.Access(&Access{Target: 1, Lo: lo, Hi: lo + 8, Kind: Write, Call: 1, Site: site})
				l.Complete(1)
				if i%7 == 3 {
					l.Access(&Access{Target: 1, Lo: lo, Hi: lo + 8, Kind: Atomic, Op: uint8(atomics.Sum), Typ: uint8(atomics.Int64), Call: 2, Site: site})
					l.Complete(1)
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range rounds {
			l.Access(&Access{Target: 0, Lo: 0, Hi: 8, Kind: Atomic, Op: uint8(atomics.Sum), Typ: uint8(atomics.Int64), Call: 2, Site: site})
			l.Complete(0)
		}
	}()
	stop := make(chan struct{})
	released := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				released <- n
				return
			default:
				p.Send()
				n++
			}
		}
	}()
	wg.Wait()
	close(stop)
	if n := <-released; n == 0 {
		t.Fatal("no release raced the repeats")
	}
	l.Complete(-1)
	p.Send() // settles what a racing Complete left
	if len(p.seen) != 0 || len(p.seenIDs) != 0 {
		text, _ := os.ReadFile(out.Name())
		t.Errorf("conflicts reported:\n%s", text)
	}
	for tg := range 2 {
		if n := len(l.pending[tg]); n != 0 || loadRelaxed(&l.tg[tg].npend) != 0 {
			t.Errorf("target %d: %d pending (npend %d) after the last Complete", tg, n, loadRelaxed(&l.tg[tg].npend))
		}
		ring := l.ringOff(tg)
		head := uint32(atomic.LoadUint64(raw.Word64(l.mem, l.base(tg))))
		for id := max(1, int64(head)-RingLen+1); id <= int64(head); id++ {
			v := atomic.LoadUint64(raw.Word64(l.mem, ring+(id-1)%RingLen*recLen))
			if uint32(v>>32) == uint32(id) && uint32(v) == 0 {
				t.Errorf("target %d: record %d not complete", tg, id)
			}
		}
	}
	if m := l.tg[0].memo.Load(); m == nil || loadRelaxed(&m.made) == 0 {
		t.Log("the FetchAndOps made no repeat") // a loaded host may release between each
	}
}

// TestAccessKey: a key gives back the access it was made from, and
// KeyOf's keys are accessKey's for RMA calls.
func TestAccessKey(t *testing.T) {
	for _, a := range []Access{
		{Target: 1, Lo: 8, Hi: 16, Kind: Write, Epoch: EpochLockAll, Call: 7},
		{Target: 0, Lo: 0, Hi: 8, Kind: Atomic, Op: OpCAS, Typ: uint8(atomics.Int64), Epoch: EpochFence, Call: 1 << 31},
		{Target: 2, Lo: 3, Hi: 4, Kind: Read, Local: true, Epoch: nEpochs - 1, Call: 42},
	} {
		if got := keyAccess(accessKey(&a), a.Target, a.Lo, a.Hi); got != a {
			t.Errorf("keyAccess(accessKey(%+v)) = %+v", a, got)
		}
		if !a.Local && KeyOf(a.Kind, a.Op, a.Typ, a.Call, a.Epoch) != accessKey(&a) {
			t.Errorf("KeyOf and accessKey differ for %+v", a)
		}
	}
}

// TestRepeatPutUnflushed: two Puts of one origin from one line to the
// same bytes with no completion between conflict (MPI orders no two RMA
// calls before the first completes), whether the first is a record still
// pending or a repeat counted on the lock-free path; flushed between, or
// Gets, they do not.
func TestRepeatPutUnflushed(t *testing.T) {
	site := Name("repeat_test.go:2")
	key := KeyOf(Write, 0, 0, 2, EpochLockAll)
	for _, c := range []struct {
		name string
		run  func(l *Log)
		want bool
	}{
		{"two pending", func(l *Log) { put(l, 1, 0, site); put(l, 1, 0, site) }, true},
		{"two repeats after flushed ones", func(l *Log) {
			for range 3 {
				put(l, 1, 0, site)
				l.Complete(1)
			}
			put(l, 1, 0, site)
			put(l, 1, 0, site)
		}, true},
		{"two repeats by RMA after flushed ones", func(l *Log) {
			for i := range 5 {
				l.RMA(1, 0, 8, key, 0) // one line: the same site
				if i < 3 {
					l.Complete(1)
				}
			}
		}, true},
		{"each flushed", func(l *Log) {
			for range 4 {
				put(l, 1, 0, site)
				l.Complete(1)
			}
		}, false},
		{"gets", func(l *Log) {
			for range 4 {
				l.Access(&Access{Target: 1, Lo: 0, Hi: 8, Kind: Read, Call: 3, Site: site})
			}
		}, false},
	} {
		p, l := twoRanks(1)
		c.run(l[0][0])
		if got := reported(p[0]); got != c.want {
			t.Errorf("%s: reported %v, want %v", c.name, got, c.want)
		}
	}
}
