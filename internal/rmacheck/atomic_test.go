package rmacheck

import (
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/shmrun/shmrun/atomics"
)

// twoRanks is world ranks 0 and 1 of a two-rank world in this process,
// each with its Log of windows over the same areas (one a window).
func twoRanks(windows int) (p [2]*Proc, l [2][]*Log) {
	msg := make([]byte, MsgAreaLen(2))
	mems := make([][]byte, windows)
	for w := range mems {
		mems[w] = make([]byte, LogAreaLen(2, 2))
	}
	for r := range 2 {
		p[r] = newProc(r, 2, msg, nil)
	}
	for w := range mems {
		_ = p[0].InitLog(mems[w], 2) // as rank 0 makes each area
		for r := range 2 {
			l[r] = append(l[r], p[r].NewLog(mems[w], []int{0, 1}, r, false))
		}
	}
	return p, l
}

func fop(l *Log, target int, lo uint64, site uint32) {
	l.Access(&Access{Target: target, Lo: lo, Hi: lo + 8, Kind: Atomic, Op: uint8(atomics.Sum), Typ: uint8(atomics.Int64), Call: 1, Site: site})
}

func put(l *Log, target int, lo uint64, site uint32) {
	l.Access(&Access{Target: target, Lo: lo, Hi: lo + 8, Kind: Write, Call: 2, Site: site})
}

func reported(p *Proc) bool { return len(p.seenIDs) != 0 }

// repeated reports whether rank 0's memo of target t counted repeats: the
// lock-free path was taken.
func repeated(l *Log, t int) bool {
	m := l.tg[t].memo.Load()
	return m != nil && m.atomic && loadRelaxed(&m.made) > 0
}

// TestAtomicRepeats holds the verdicts of atomic repeats (atomic.go) to
// those of the full model, where every FetchAndOp releases.
func TestAtomicRepeats(t *testing.T) {
	siteA, siteB, siteP := Name("atomic_test.go:1"), Name("atomic_test.go:2"), Name("atomic_test.go:3")
	t.Run("outstanding repeat against a Put after an atomic join", func(t *testing.T) {
		p, l := twoRanks(1)
		for range 5 {
			fop(l[0][0], 1, 0, siteA)
			l[0][0].Complete(1)
		}
		fop(l[0][0], 1, 0, siteA) // not complete
		if !repeated(l[0][0], 1) {
			t.Fatal("no repeat: the lock-free path was not taken")
		}
		fop(l[1][0], 1, 0, siteB) // joins the atomics clock of target 1's word 0
		put(l[1][0], 1, 0, siteP)
		if !reported(p[1]) {
			t.Error("rank 1's Put after rank 0's last FetchAndOp, not complete: not reported")
		}
	})
	t.Run("completed repeats, then a release", func(t *testing.T) {
		p, l := twoRanks(1)
		for range 5 {
			fop(l[0][0], 1, 0, siteA)
			l[0][0].Complete(1)
		}
		if !repeated(l[0][0], 1) {
			t.Fatal("no repeat")
		}
		l[0][0].Unlock(1, false)
		l[1][0].Lock(1, true)
		put(l[1][0], 1, 0, siteP)
		if reported(p[1]) {
			t.Error("rank 1's Put under a lock taken after rank 0's completed FetchAndOps: reported")
		}
	})
	t.Run("outstanding repeat, then a release", func(t *testing.T) {
		p, l := twoRanks(1)
		for range 5 {
			fop(l[0][0], 1, 0, siteA)
			l[0][0].Complete(1)
		}
		fop(l[0][0], 1, 0, siteA) // not complete
		p[0].Send()
		p[1].Recv(0)
		put(l[1][0], 1, 0, siteP)
		if !reported(p[1]) {
			t.Error("rank 1's Put after a message sent while rank 0's FetchAndOp was not complete: not reported")
		}
	})
	t.Run("a completion elsewhere is news", func(t *testing.T) {
		p, l := twoRanks(2)
		fop(l[0][0], 1, 0, siteA)
		l[0][0].Complete(1)
		put(l[0][1], 1, 0, siteP) // the other window
		l[0][1].Complete(1)
		fop(l[0][0], 1, 0, siteA) // must release: the Put's completion
		l[0][0].Complete(1)
		fop(l[1][0], 1, 0, siteB)
		l[1][1].Access(&Access{Target: 1, Lo: 0, Hi: 8, Kind: Read, Call: 3, Site: siteB})
		if reported(p[1]) {
			t.Error("rank 1's Get after learning rank 0's Put completed (through a FetchAndOp): reported")
		}
	})
	t.Run("a repeat joins what another rank released there", func(t *testing.T) {
		p, l := twoRanks(1)
		for range 3 {
			fop(l[0][0], 1, 0, siteA)
			l[0][0].Complete(1)
		}
		put(l[1][0], 1, 16, siteP)
		l[1][0].Complete(1)
		fop(l[1][0], 1, 0, siteB) // releases the Put's completion into the atomics clock of target 1's word 0
		fop(l[0][0], 1, 0, siteA) // must join it
		l[0][0].Complete(1)
		l[0][0].Access(&Access{Target: 1, Lo: 16, Hi: 24, Kind: Read, Call: 3, Site: siteA})
		if reported(p[0]) {
			t.Error("rank 0's Get after a FetchAndOp that follows rank 1's completed Put and FetchAndOp: reported")
		}
	})
	t.Run("a newer atomic read's completion is news", func(t *testing.T) {
		p, l := twoRanks(1)
		fop(l[0][0], 0, 0, siteA) // releases, ticks
		l[0][0].Complete(0)
		l[0][0].Access(&Access{Target: 1, Lo: 0, Hi: 8, Kind: Atomic, Op: OpNoOp, Typ: uint8(atomics.Int64), Call: 4, Site: siteB})
		l[0][0].Complete(1)       // the read completes at the same clock (a read does not tick)
		fop(l[0][0], 0, 0, siteA) // must release: the read's completion
		l[0][0].Complete(0)
		fop(l[1][0], 0, 0, siteB) // joins the atomics clock of target 0's word 0
		put(l[1][0], 1, 0, siteP) // the word rank 0 read
		if reported(p[1]) {
			t.Error("rank 1's Put after learning (through a FetchAndOp) that rank 0's atomic read completed: reported")
		}
	})
	t.Run("two atomic streams", func(t *testing.T) {
		p, l := twoRanks(1)
		fop(l[0][0], 1, 0, siteA)
		fop(l[0][0], 0, 0, siteB)
		l[0][0].Complete(1)
		l[0][0].Complete(0)
		fop(l[0][0], 0, 0, siteB) // must release: target 1's record completed
		l[0][0].Complete(0)
		fop(l[1][0], 0, 0, siteB) // joins the atomics clock of target 0's word 0
		put(l[1][0], 1, 0, siteP)
		if reported(p[1]) {
			t.Error("rank 1's Put after learning rank 0's FetchAndOp on target 1 completed: reported")
		}
	})
}

// TestAtomicsOfOtherLocations: an atomic call learns what the atomic
// writers of its own locations released, not those of another location
// of the same target (a helper probe: a FetchAndOp of a word nobody
// wrote hid a Put/Get race, since one clock per target joined them all).
func TestAtomicsOfOtherLocations(t *testing.T) {
	siteA, siteB, siteP := Name("atomic_test.go:21"), Name("atomic_test.go:22"), Name("atomic_test.go:23")
	for _, tc := range []struct {
		at       uint64
		reported bool
	}{{32, true}, {16, false}} {
		p, l := twoRanks(1)
		put(l[1][0], 0, 0, siteP)
		l[1][0].Complete(0)
		fop(l[1][0], 0, 16, siteA) // releases the Put's completion into word 2's bucket
		fop(l[0][0], 0, tc.at, siteB)
		l[0][0].Access(&Access{Target: 0, Lo: 0, Hi: 8, Kind: Read, Call: 3, Site: siteB})
		if reported(p[0]) != tc.reported {
			t.Errorf("rank 0's Get of the Put's bytes after a FetchAndOp of bytes [%d, %d): reported %v, want %v", tc.at, tc.at+8, reported(p[0]), tc.reported)
		}
	}
}

// TestBuckets: a word's bucket, a range's, and a long range's (all).
func TestBuckets(t *testing.T) {
	if b0, b2, b4 := buckets(0, 8), buckets(16, 24), buckets(32, 40); b0 == b2 || b2 == b4 || b0&(b0-1) != 0 {
		t.Errorf("buckets of words 0, 2, 4: %08b %08b %08b: want one bit each, words 2 and 4 apart", b0, b2, b4)
	}
	if got := buckets(4, 12); got != buckets(0, 8)|buckets(8, 16) {
		t.Errorf("bytes [4, 12): %08b, want words 0 and 1's", got)
	}
	if got := buckets(0, 1<<20); got != allBuckets {
		t.Errorf("a long range: %08b, want every bucket", got)
	}
}

// TestRepeatOutlivesMemo: a repeat still outstanding when another access
// to the same target takes its memo's place stays outstanding: a release
// before its Flush does not make it known as complete.
func TestRepeatOutlivesMemo(t *testing.T) {
	siteA, siteB, siteG := Name("atomic_test.go:11"), Name("atomic_test.go:12"), Name("atomic_test.go:13")
	for _, kind := range []string{"Put", "FetchAndOp"} {
		t.Run(kind, func(t *testing.T) {
			p, l := twoRanks(1)
			do := func(lo uint64, site uint32) {
				if kind == "Put" {
					put(l[0][0], 1, lo, site)
				} else {
					fop(l[0][0], 1, lo, site)
				}
			}
			do(0, siteA)
			l[0][0].Complete(1)
			do(0, siteA) // a repeat, not flushed
			if m := l[0][0].tg[1].memo.Load(); m == nil || loadRelaxed(&m.made) == 0 {
				t.Fatal("no repeat")
			}
			put(l[0][0], 1, 16, siteB) // elsewhere: takes the memo's place
			p[0].Send()
			p[1].Recv(0)
			l[1][0].Access(&Access{Target: 1, Lo: 0, Hi: 8, Kind: Read, Call: 3, Site: siteG})
			if !reported(p[1]) {
				t.Error("rank 1's Get after a message sent while rank 0's repeat was not flushed: not reported")
			}
		})
	}
}

// fopKey is the key of FetchAndOp(op) on int64 for Log.AtomicBefore and
// Log.AtomicAfter.
func fopKey(op uint8) uint64 { return KeyOf(Atomic, op, uint8(atomics.Int64), 1, EpochLockAll) }

// userPC stands for the return address package win gives the checker
// (raw.ReturnPC: its caller's line): an address in a function outside
// shmrun, so that it is a call site.
func userPC(f any) uintptr { return reflect.ValueOf(f).Pointer() + 1 }

var pcFlag, pcSpin = userPC(strings.ToUpper), userPC(strings.ToLower)

// splitFOP is FetchAndOp(op) on 8 bytes at lo of target as package win
// makes it under --check: the release, the memory operation (mem), then
// the record.
func splitFOP(l *Log, target int, lo uint64, op uint8, pc uintptr, mem func()) {
	rep := l.AtomicBefore(target, lo, lo+8, fopKey(op), pc)
	mem()
	l.AtomicAfter(target, lo, lo+8, fopKey(op), pc, rep)
}

// TestAtomicJoinAfter: a repeated atomic read that reads a write whose
// release was made while the read's memo stood joins that release (the
// count moved), though nothing was recorded at the target yet.
func TestAtomicJoinAfter(t *testing.T) {
	siteP, siteG := Name("atomic_test.go:31"), Name("atomic_test.go:32")
	p, l := twoRanks(1)
	// Spinning on the flag, one call site: the third read reads it set.
	rep := false
	for i := range 3 {
		if i == 2 {
			put(l[1][0], 0, 16, siteP) // the data, on another target than the flag
			l[1][0].Complete(0)
			rep = l[1][0].AtomicBefore(1, 0, 8, fopKey(uint8(atomics.Replace)), pcFlag) // then its swap sets the flag
		}
		splitFOP(l[0][0], 1, 0, OpNoOp, pcSpin, func() {})
		l[0][0].Complete(1)
		if i == 1 && !repeated(l[0][0], 1) {
			t.Fatal("no repeat: the lock-free path was not taken")
		}
	}
	l[0][0].Access(&Access{Target: 0, Lo: 16, Hi: 24, Kind: Read, Call: 3, Site: siteG})
	l[1][0].AtomicAfter(1, 0, 8, fopKey(uint8(atomics.Replace)), pcFlag, rep)
	if reported(p[0]) {
		t.Error("rank 0's Get after reading rank 1's flag, set after its flushed Put: reported")
	}
}

// TestAtomicFlagSpin: rank 1 puts data, flushes, then swaps a flag; rank
// 0 spins reading the flag with FetchAndOp(NoOp) + Flush, then gets the
// data: correct, so no report, however the two interleave. A join made
// before the memory operation misses the release of a write the
// operation then reads (found in review: ~10% of trials reported).
func TestAtomicFlagSpin(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two threads running at once")
	}
	if raceOn {
		t.Skip("two ranks in one process read each other's records racily, as processes do")
	}
	siteP, siteG := Name("atomic_test.go:21"), Name("atomic_test.go:22")
	const trials = 4000
	alarms := 0
	for range trials {
		p, l := twoRanks(1)
		var flag atomic.Int64
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			put(l[1][0], 0, 16, siteP) // the data on rank 0, the flag on rank 1
			l[1][0].Complete(0)
			splitFOP(l[1][0], 1, 0, uint8(atomics.Replace), pcFlag, func() { flag.Store(1) })
			l[1][0].Complete(1)
		}()
		go func() {
			defer wg.Done()
			for v := int64(0); v == 0; {
				splitFOP(l[0][0], 1, 0, OpNoOp, pcSpin, func() { v = flag.Load() })
				l[0][0].Complete(1)
			}
			l[0][0].Access(&Access{Target: 0, Lo: 16, Hi: 24, Kind: Read, Call: 3, Site: siteG})
		}()
		wg.Wait()
		if reported(p[0]) {
			alarms++
		}
	}
	if alarms > 0 {
		t.Errorf("%d reports in %d trials of a correct program", alarms, trials)
	}
}
