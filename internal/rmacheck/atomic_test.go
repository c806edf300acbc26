package rmacheck

import (
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
		for w := range mems {
			l[r] = append(l[r], p[r].NewLog(mems[w], []int{0, 1}, r, w+1, false))
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
		fop(l[1][0], 1, 8, siteB) // joins target 1's atomics clock
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
		fop(l[1][0], 1, 8, siteB)
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
		fop(l[1][0], 1, 8, siteB) // releases the Put's completion into target 1's atomics clock
		fop(l[0][0], 1, 0, siteA) // must join it
		l[0][0].Complete(1)
		l[0][0].Access(&Access{Target: 1, Lo: 16, Hi: 24, Kind: Read, Call: 3, Site: siteA})
		if reported(p[0]) {
			t.Error("rank 0's Get after a FetchAndOp that follows rank 1's completed Put and FetchAndOp: reported")
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
		fop(l[1][0], 0, 8, siteB) // joins target 0's atomics clock
		put(l[1][0], 1, 0, siteP)
		if reported(p[1]) {
			t.Error("rank 1's Put after learning rank 0's FetchAndOp on target 1 completed: reported")
		}
	})
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
