package rmacheck

import (
	"testing"

	"github.com/shmrun/shmrun/atomics"
)

// TestConflictRules holds the compatibility table: which two accesses to
// the same bytes may run concurrently.
func TestConflictRules(t *testing.T) {
	i64, f64 := uint8(atomics.Int64), uint8(atomics.Float64)
	sum, max_, rep := uint8(atomics.Sum), uint8(atomics.Max), uint8(atomics.Replace)
	acc := func(op, typ uint8) Access { return Access{Kind: Atomic, Op: op, Typ: typ} }
	at := func(a Access, lo uint64) Access { a.Lo, a.Hi = lo, lo+8; return a }
	read, write := Access{Kind: Read}, Access{Kind: Write}
	load, store := Access{Kind: Read, Local: true}, Access{Kind: Write, Local: true}
	for _, c := range []struct {
		name       string
		a, b       Access
		sameOrigin bool
		sameOp     bool // accumulate_ops=same_op
		want       bool
	}{
		{"get/get", read, read, false, false, false},
		{"put/get", write, read, false, false, true},
		{"put/put", write, write, false, false, true},
		{"put/put, one origin, one epoch", write, write, true, false, true},
		{"store/store, one rank", store, store, true, false, false},
		{"load/put", load, write, false, false, true},
		{"sum/sum", acc(sum, i64), acc(sum, i64), false, false, false},
		{"sum/max", acc(sum, i64), acc(max_, i64), false, false, true},
		{"sum int64/sum float64", acc(sum, i64), acc(sum, f64), false, false, true},
		{"sum/no_op", acc(sum, i64), acc(OpNoOp, i64), false, false, false},
		{"sum/no_op, same_op", acc(sum, i64), acc(OpNoOp, i64), false, true, true},
		{"replace/cas", acc(rep, i64), acc(OpCAS, i64), false, false, false},
		{"replace/cas, same_op", acc(rep, i64), acc(OpCAS, i64), false, true, true},
		{"sum/max, one origin", acc(sum, i64), acc(max_, i64), true, false, false},
		{"sum int64/sum float64, one origin", acc(sum, i64), acc(sum, f64), true, false, true},
		{"sum/sum, elements straddling (bytes 0 and 4)", at(acc(sum, i64), 0), at(acc(sum, i64), 4), false, false, true},
		{"sum/sum, one origin, elements straddling", at(acc(sum, i64), 0), at(acc(sum, i64), 4), true, false, true},
		{"sum/sum, elements aligned (bytes 0 and 8)", at(acc(sum, i64), 0), at(acc(sum, i64), 8), false, false, false},
		{"sum/put", acc(sum, i64), write, false, false, true},
		{"no_op/get", acc(OpNoOp, i64), read, false, false, false},
		{"sum/get", acc(sum, i64), read, false, false, true},
	} {
		l := &Log{p: newProc(0, 2, make([]byte, MsgAreaLen(2)), nil), sameOp: c.sameOp}
		origin := Threads // rank 1's thread 0
		if c.sameOrigin {
			origin = 0
		}
		if got := l.conflict(c.a, c.b, origin); got != c.want {
			t.Errorf("%s: conflict %v, want %v", c.name, got, c.want)
		}
		if got := l.conflict(c.b, c.a, origin); got != c.want {
			t.Errorf("%s (swapped): conflict %v, want %v", c.name, got, c.want)
		}
	}
}

// TestThreadsAccumulates: MPI applies a process's accumulates in the order
// they were made, so another thread's (of the same rank) made before this
// one is ordered; one this thread does not know was made first is not.
func TestThreadsAccumulates(t *testing.T) {
	i64 := uint8(atomics.Int64)
	sum, rep := Access{Kind: Atomic, Op: uint8(atomics.Sum), Typ: i64, Hi: 8}, Access{Kind: Atomic, Op: uint8(atomics.Replace), Typ: i64, Hi: 8}
	l := &Log{p: newProc(0, 2, make([]byte, MsgAreaLen(2)), nil)}
	other := 1 // rank 0's thread 1
	sum.issue = 3
	if !l.conflict(sum, rep, other) {
		t.Error("thread 1's Sum made at its clock 3, unknown here: no conflict")
	}
	l.p.vc[other] = 3
	if l.conflict(sum, rep, other) {
		t.Error("thread 1's Sum made at its clock 3, known here: a conflict")
	}
	if !l.conflict(sum, rep, Threads+1) {
		t.Error("rank 1's thread 1's Sum: no conflict")
	}
}

// TestAccumulateOrdering: one origin's accumulates to the same bytes are
// ordered only as the window's accumulate_ordering says; under none (or
// without waw) a Sum and a Max of one origin are concurrent, which
// accumulate_ops=same_op_no_op does not allow.
func TestAccumulateOrdering(t *testing.T) {
	i64 := uint8(atomics.Int64)
	sum := Access{Kind: Atomic, Op: uint8(atomics.Sum), Typ: i64, Hi: 8}
	max_ := Access{Kind: Atomic, Op: uint8(atomics.Max), Typ: i64, Hi: 8}
	read := Access{Kind: Atomic, Op: OpNoOp, Typ: i64, Hi: 8}
	for _, c := range []struct {
		ordering string
		sameOp   bool
		a, b     Access
		want     bool
	}{
		{"", false, sum, max_, false},
		{"rar,raw,war,waw", false, sum, max_, false},
		{"none", false, sum, max_, true},
		{"rar,raw,war", false, sum, max_, true},
		{"waw", false, sum, max_, false},
		{"none", false, sum, sum, false},  // one op: atomic, in any order
		{"none", false, sum, read, false}, // same_op_no_op allows NoOp
		{"none", true, sum, read, true},   // same_op does not
		{"raw", true, sum, read, false},   // ordered: read after write
		{"raw", true, read, sum, true},    // war is not kept
	} {
		l := &Log{p: newProc(0, 2, make([]byte, MsgAreaLen(2)), nil), sameOp: c.sameOp}
		l.SetOrdering(c.ordering)
		if got := l.conflict(c.a, c.b, 0); got != c.want {
			t.Errorf("ordering %q, same_op %v, op %d then op %d from one origin: conflict %v, want %v", c.ordering, c.sameOp, c.a.Op, c.b.Op, got, c.want)
		}
	}
}
