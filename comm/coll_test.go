//go:build !mpi

package comm_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/launcher"
	"github.com/shmrun/shmrun/win"
)

// The collectives against a sequential reference. Every rank's data is a
// deterministic function of (rank, size, seed), so each rank computes the
// reference by itself; results are compared bit for bit (floating-point
// reductions promise one fold order: x0 op (x1 op (... op x_{n-1}))).

// contribution is rank r's m elements of T for a call: pseudo-random bytes
// (any bit pattern, NaNs and infinities included, is a valid element).
func contribution[T atomics.Elem](r, m int, seed uint64) []T {
	v := make([]T, m)
	b := raw.Bytes(v)
	g := rand.New(rand.NewPCG(seed, uint64(r)+1))
	for i := range b {
		b[i] = byte(g.Uint32())
	}
	clearPadding(v)
	return v
}

// clearPadding zeroes the padding of the pair types' Go structs, which is
// not data: a collective moves pairs without it, as MPI does.
func clearPadding[T any](v []T) {
	var pad [2]int // [from, to) in each element
	switch any(v).(type) {
	case []atomics.DoubleInt, []atomics.LongInt:
		pad = [2]int{12, 16}
	case []atomics.ShortInt:
		pad = [2]int{2, 4}
	default:
		return
	}
	b, s := raw.Bytes(v), raw.SizeOf[T]()
	for i := 0; i < len(b); i += s {
		clear(b[i+pad[0] : i+pad[1]])
	}
}

// refFold is the promised reduction of the contributions of ranks [lo, hi).
func refFold[T atomics.Elem](xs [][]T, lo, hi int, op atomics.Op) []T {
	acc := slices.Clone(xs[hi-1])
	for q := hi - 2; q >= lo; q-- {
		if err := atomics.ReduceLocal(xs[q], acc, op); err != nil {
			panic(err)
		}
	}
	return acc
}

func same[T any](a, b []T) bool { return bytes.Equal(raw.Bytes(a), raw.Bytes(b)) }

// reductionOps are the ops valid for T, Replace and NoOp aside.
func reductionOps[T atomics.Elem]() []atomics.Op {
	var ops []atomics.Op
	for op := atomics.Sum; op <= atomics.MaxLoc; op++ {
		if op != atomics.Replace && op != atomics.NoOp && atomics.Check(op, atomics.TypeOf[T](), false) == nil {
			ops = append(ops, op)
		}
	}
	return ops
}

// checkReductions runs every reducing collective with every valid op on m
// elements and compares with the reference.
func checkReductions[T atomics.Elem](c *comm.Comm, m int, seed uint64) error {
	n, me := c.Size(), c.Rank()
	for _, op := range reductionOps[T]() {
		xs := make([][]T, n)
		for q := range n {
			xs[q] = contribution[T](q, m, seed+uint64(op))
		}
		whole := refFold(xs, 0, n, op)
		recv := make([]T, m)
		if err := comm.Allreduce(c, xs[me], recv, op); err != nil {
			return fmt.Errorf("Allreduce %v: %w", op, err)
		}
		if !same(recv, whole) {
			return fmt.Errorf("Allreduce %v of %d: %v, want %v", op, m, head(recv), head(whole))
		}
		buf := slices.Clone(xs[me])
		if err := comm.AllreduceInPlace(c, buf, op); err != nil || !same(buf, whole) {
			return fmt.Errorf("AllreduceInPlace %v of %d: %v, %v", op, m, err, same(buf, whole))
		}
		root := n - 1
		recv = make([]T, m)
		if err := comm.Reduce(c, xs[me], recv, op, root); err != nil {
			return fmt.Errorf("Reduce %v: %w", op, err)
		}
		if me == root && !same(recv, whole) {
			return fmt.Errorf("Reduce %v of %d at the root: wrong", op, m)
		}
		buf = slices.Clone(xs[me])
		if err := comm.ReduceInPlace(c, buf, op, 0); err != nil {
			return fmt.Errorf("ReduceInPlace %v: %w", op, err)
		}
		if me == 0 && !same(buf, whole) || me != 0 && !same(buf, xs[me]) {
			return fmt.Errorf("ReduceInPlace %v of %d: wrong on rank %d", op, m, me)
		}
		recv = make([]T, m)
		if err := comm.Scan(c, xs[me], recv, op); err != nil || !same(recv, refFold(xs, 0, me+1, op)) {
			return fmt.Errorf("Scan %v of %d: %v", op, m, err)
		}
		buf = slices.Clone(xs[me])
		if err := comm.ScanInPlace(c, buf, op); err != nil || !same(buf, refFold(xs, 0, me+1, op)) {
			return fmt.Errorf("ScanInPlace %v of %d: %v", op, m, err)
		}
		recv = contribution[T](99, m, seed) // rank 0's must stay as it was
		before := slices.Clone(recv)
		if err := comm.Exscan(c, xs[me], recv, op); err != nil {
			return fmt.Errorf("Exscan %v: %w", op, err)
		}
		if me == 0 && !same(recv, before) || me > 0 && !same(recv, refFold(xs, 0, me, op)) {
			return fmt.Errorf("Exscan %v of %d: wrong on rank %d", op, m, me)
		}
		buf = slices.Clone(xs[me])
		if err := comm.ExscanInPlace(c, buf, op); err != nil || me > 0 && !same(buf, refFold(xs, 0, me, op)) || me == 0 && !same(buf, xs[0]) {
			return fmt.Errorf("ExscanInPlace %v of %d: %v", op, m, err)
		}
		// ReduceScatterBlock: blocks of m/n+1 elements.
		b := m/n + 1
		ys := make([][]T, n)
		for q := range n {
			ys[q] = contribution[T](q, n*b, seed+100+uint64(op))
		}
		all := refFold(ys, 0, n, op)
		recv = make([]T, b)
		if err := comm.ReduceScatterBlock(c, ys[me], recv, op); err != nil || !same(recv, all[me*b:(me+1)*b]) {
			return fmt.Errorf("ReduceScatterBlock %v, blocks of %d: %v", op, b, err)
		}
		buf = slices.Clone(ys[me])
		if err := comm.ReduceScatterBlockInPlace(c, buf, op); err != nil || !same(buf[:b], all[me*b:(me+1)*b]) {
			return fmt.Errorf("ReduceScatterBlockInPlace %v, blocks of %d: %v", op, b, err)
		}
	}
	return nil
}

func head[T any](v []T) []T { return v[:min(len(v), 4)] }

// checkMoves runs every collective that moves data without combining it.
func checkMoves[T atomics.Elem](c *comm.Comm, m int, seed uint64) error {
	n, me := c.Size(), c.Rank()
	xs := make([][]T, n)
	for q := range n {
		xs[q] = contribution[T](q, m, seed)
	}
	cat := slices.Concat(xs...)
	for root := range []int{0, n - 1} {
		root *= n - 1
		buf := make([]T, m)
		if me == root {
			copy(buf, xs[root])
		}
		if err := comm.Bcast(c, buf, root); err != nil || !same(buf, xs[root]) {
			return fmt.Errorf("Bcast of %d from %d: %v", m, root, err)
		}
		recv := make([]T, n*m)
		if err := comm.Gather(c, xs[me], recv, root); err != nil || me == root && !same(recv, cat) {
			return fmt.Errorf("Gather of %d to %d: %v", m, root, err)
		}
		g := xs[me]
		if me == root {
			g = make([]T, n*m)
			copy(g[me*m:], xs[me])
		}
		if err := comm.GatherInPlace(c, g, root); err != nil || me == root && !same(g, cat) {
			return fmt.Errorf("GatherInPlace of %d to %d: %v", m, root, err)
		}
		got := make([]T, m)
		if err := comm.Scatter(c, cat, got, root); err != nil || !same(got, xs[me]) {
			return fmt.Errorf("Scatter of %d from %d: %v", m, root, err)
		}
		sb := got
		if me == root {
			sb = slices.Clone(cat)
		}
		if err := comm.ScatterInPlace(c, sb, root); err != nil || me != root && !same(sb, xs[me]) || me == root && !same(sb, cat) {
			return fmt.Errorf("ScatterInPlace of %d from %d: %v", m, root, err)
		}
	}
	recv := make([]T, n*m)
	if err := comm.Allgather(c, xs[me], recv); err != nil || !same(recv, cat) {
		return fmt.Errorf("Allgather of %d: %v", m, err)
	}
	buf := make([]T, n*m)
	copy(buf[me*m:], xs[me])
	if err := comm.AllgatherInPlace(c, buf); err != nil || !same(buf, cat) {
		return fmt.Errorf("AllgatherInPlace of %d: %v", m, err)
	}
	// Alltoall: rank q's block j is contribution(q*n+j).
	blocks := func(q int) []T {
		var v []T
		for j := range n {
			v = append(v, contribution[T](q*n+j, m, seed+7)...)
		}
		return v
	}
	var want []T
	for q := range n {
		want = append(want, contribution[T](q*n+me, m, seed+7)...)
	}
	recv = make([]T, n*m)
	if err := comm.Alltoall(c, blocks(me), recv); err != nil || !same(recv, want) {
		return fmt.Errorf("Alltoall of %d: %v", m, err)
	}
	buf = blocks(me)
	if err := comm.AlltoallInPlace(c, buf); err != nil || !same(buf, want) {
		return fmt.Errorf("AlltoallInPlace of %d: %v", m, err)
	}
	return nil
}

// vLayout gives rank q a count that depends on q (zero for every third
// rank) and places the blocks in reverse rank order with a gap of g
// elements before each.
func vLayout(n, m, g int) (counts, displs []int, total int) {
	counts, displs = make([]int, n), make([]int, n)
	for q := range n {
		if q%3 != 1 {
			counts[q] = m + q
		}
	}
	for q := n - 1; q >= 0; q-- {
		displs[q] = total + g
		total += g + counts[q]
	}
	return counts, displs, total
}

// checkV runs the v forms with uneven, partly zero counts and gaps.
func checkV[T atomics.Elem](c *comm.Comm, m int, seed uint64) error {
	n, me := c.Size(), c.Rank()
	counts, displs, total := vLayout(n, m, 3)
	xs := make([][]T, n)
	for q := range n {
		xs[q] = contribution[T](q, counts[q], seed)
	}
	full := make([]T, total) // every rank's block in place, gaps zero
	for q := range n {
		copy(full[displs[q]:], xs[q])
	}
	root := n / 2
	recv := make([]T, total)
	if err := comm.Gatherv(c, xs[me], recv, counts, displs, root); err != nil || me == root && !same(recv, full) {
		return fmt.Errorf("Gatherv of %v: %v", counts, err)
	}
	g := xs[me]
	if me == root {
		g = make([]T, total)
		copy(g[displs[me]:], xs[me])
	}
	if err := comm.GathervInPlace(c, g, counts, displs, root); err != nil || me == root && !same(g, full) {
		return fmt.Errorf("GathervInPlace of %v: %v", counts, err)
	}
	got := make([]T, counts[me])
	if err := comm.Scatterv(c, full, counts, displs, got, root); err != nil || !same(got, xs[me]) {
		return fmt.Errorf("Scatterv of %v: %v", counts, err)
	}
	sb := got
	if me == root {
		sb = slices.Clone(full)
	}
	if err := comm.ScattervInPlace(c, sb, counts, displs, root); err != nil || me != root && !same(sb, xs[me]) {
		return fmt.Errorf("ScattervInPlace of %v: %v", counts, err)
	}
	recv = make([]T, total)
	if err := comm.Allgatherv(c, xs[me], recv, counts, displs); err != nil || !same(recv, full) {
		return fmt.Errorf("Allgatherv of %v: %v", counts, err)
	}
	buf := make([]T, total)
	copy(buf[displs[me]:], xs[me])
	if err := comm.AllgathervInPlace(c, buf, counts, displs); err != nil || !same(buf, full) {
		return fmt.Errorf("AllgathervInPlace of %v: %v", counts, err)
	}
	// Alltoallv: rank i sends (i+j)%3 * m/2 elements to rank j (some zero),
	// packed in its send buffer, and receives them packed in reverse order.
	cnt := func(i, j int) int { return (i + j) % 3 * (m/2 + 1) }
	block := func(i, j int) []T { return contribution[T](i*n+j, cnt(i, j), seed+11) }
	var send []T
	sc, sd := make([]int, n), make([]int, n)
	for j := range n {
		sc[j], sd[j] = cnt(me, j), len(send)
		send = append(send, block(me, j)...)
	}
	rc, rd := make([]int, n), make([]int, n)
	var want []T
	off := 0
	for i := n - 1; i >= 0; i-- {
		rc[i], rd[i] = cnt(i, me), off
		off += rc[i]
	}
	want = make([]T, off)
	for i := range n {
		copy(want[rd[i]:], block(i, me))
	}
	recv = make([]T, off)
	if err := comm.Alltoallv(c, send, sc, sd, recv, rc, rd); err != nil || !same(recv, want) {
		return fmt.Errorf("Alltoallv: %v", err)
	}
	// In place: counts are symmetric here (cnt(i, j) = cnt(j, i)).
	buf = slices.Clone(send)
	var wantIn []T
	for i := range n {
		wantIn = append(wantIn, block(i, me)...)
	}
	if err := comm.AlltoallvInPlace(c, buf, sc, sd); err != nil || !same(buf, wantIn) {
		return fmt.Errorf("AlltoallvInPlace: %v", err)
	}
	return nil
}

// sizes exercise every path: nothing, inline in the flag line, one staging
// round, and (with big) several chunks that are not a multiple of anything.
func sizes[T atomics.Elem](big bool) []int {
	s := raw.SizeOf[T]()
	v := []int{0, 1, format.InlineLen / s, format.InlineLen/s + 1, 700}
	if big {
		v = append(v, (3<<16)/s+13)
	}
	return v
}

// checkType is the whole check of one element type at one rank count.
func checkType[T atomics.Elem](c *comm.Comm, big bool) error {
	for _, m := range sizes[T](big) {
		seed := uint64(m)*1000 + uint64(c.Size())
		if err := checkReductions[T](c, m, seed); err != nil {
			return fmt.Errorf("%v, %d ranks, %d elements: %w", atomics.TypeOf[T](), c.Size(), m, err)
		}
		if err := checkMoves[T](c, m, seed); err != nil {
			return fmt.Errorf("%v, %d ranks, %d elements: %w", atomics.TypeOf[T](), c.Size(), m, err)
		}
		if err := checkV[T](c, m, seed); err != nil {
			return fmt.Errorf("%v, %d ranks, %d elements: %w", atomics.TypeOf[T](), c.Size(), m, err)
		}
	}
	return nil
}

// everyType runs checkType for every element type; big payloads for a few.
func everyType(c *comm.Comm) error {
	checks := []func(*comm.Comm, bool) error{
		checkType[int8], checkType[int16], checkType[int32], checkType[int64],
		checkType[uint8], checkType[uint16], checkType[uint32], checkType[uint64],
		checkType[float32], checkType[float64], checkType[complex64], checkType[complex128],
		checkType[atomics.FloatInt], checkType[atomics.DoubleInt], checkType[atomics.LongInt],
		checkType[atomics.TwoInt], checkType[atomics.ShortInt], checkType[meters],
	}
	for i, f := range checks {
		if err := f(c, i == 3 || i == 9 || i == 13); err != nil {
			return err
		}
	}
	return nil
}

type meters float64

// TestCollectivesLocal: every collective, op and type against the
// reference at 1, 2, 3, 7 and 16 goroutine ranks (under -race, the mode in
// which the race detector sees the protocol).
func TestCollectivesLocal(t *testing.T) {
	ns := []int{1, 2, 3, 7, 16}
	if testing.Short() || raceEnabled {
		ns = []int{1, 2, 3, 7}
	}
	for _, n := range ns {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			if n == 16 {
				ranktest.RunLocal(t, n, func(c *comm.Comm) error { return checkType[float64](c, true) })
				return
			}
			ranktest.RunLocal(t, n, everyType)
		})
	}
}

func init() {
	// colls: the reference check of float64, int32 and DoubleInt data, as
	// real processes.
	ranktest.Register("colls", func(c *comm.Comm) error {
		if err := checkType[float64](c, true); err != nil {
			return err
		}
		if err := checkType[int32](c, c.Size() <= 3); err != nil {
			return err
		}
		if err := checkType[atomics.DoubleInt](c, false); err != nil {
			return err
		}
		// An Allreduce big enough for single copy (every op, against the
		// reference), where the kernel allows it.
		if err := checkReductions[float64](c, format.SingleAllreduce/8+5, 99); err != nil {
			return fmt.Errorf("float64, %d ranks, an Allreduce by single copy: %w", c.Size(), err)
		}
		// The big payloads above went by single copy wherever the kernel
		// lets a process read a sibling's memory.
		if want := ptraceAllowed(); comm.SingleCopy(c) != want {
			return fmt.Errorf("single copy in use: %v, want %v", comm.SingleCopy(c), want)
		}
		return nil
	})
}

// ptraceAllowed says whether process_vm_readv between sibling processes of
// one user is allowed: no Yama, or Yama's ptrace_scope 0.
func ptraceAllowed() bool {
	b, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope")
	return err != nil || strings.TrimSpace(string(b)) == "0"
}

func init() {
	// staging: big payloads between processes with single copy off (as
	// under Yama's ptrace_scope 1): the same reference checks, through the
	// staging buffers.
	ranktest.Register("staging", func(c *comm.Comm) error {
		comm.SetSingleOff(true)
		if err := checkReductions[float64](c, format.SingleAllreduce/8+5, 7); err != nil {
			return err
		}
		if err := checkMoves[float64](c, format.SingleBcast/8+5, 7); err != nil {
			return err
		}
		if comm.SingleCopy(c) {
			return errors.New("single copy in use after SetSingleOff")
		}
		return nil
	})
}

func TestStagingProcs(t *testing.T) { ranktest.Run(t, 3, "staging") }

func init() {
	// readfail: rank 1's single-copy reads fail. Bcast: an error on rank 1
	// and on the root (which waits for its readers), not on rank 2, which
	// has its data; Allreduce: an error on every rank. Then all works.
	ranktest.Register("readfail", func(c *comm.Comm) error {
		if err := c.Barrier(); err != nil { // the area, probed, before the fault
			return err
		}
		if !comm.SingleCopy(c) {
			return nil // nothing to fail (Yama): the staging test covers this
		}
		if c.Rank() == 1 {
			comm.SetReadFault(errors.New("injected read failure"))
		}
		buf := make([]byte, format.SingleBcast)
		err := comm.Bcast(c, buf, 0)
		switch {
		case c.Rank() == 2 && err != nil:
			return fmt.Errorf("Bcast on a rank whose read worked: %v", err)
		case c.Rank() != 2 && !errors.Is(err, comm.ErrOther):
			return fmt.Errorf("Bcast: %v, want ErrOther", err)
		}
		x := make([]float64, format.SingleAllreduce/8)
		if err := wantAll(comm.ErrOther, comm.AllreduceInPlace(c, x, atomics.Sum), "Allreduce with a failed read"); err != nil {
			return err
		}
		comm.SetReadFault(nil)
		return stillWorks(c)
	})
}

func TestReadFailProcs(t *testing.T) { ranktest.Run(t, 3, "readfail") }

func init() {
	// pairfail: a single-copy Bcast between two ranks, where the reader
	// reads half and the root writes half (bcastPair), with each copy
	// failing in turn: a root whose write fails leaves its half to the
	// reader (no error, the data whole); a reader whose read fails is an
	// error on both ranks, whatever the root's write did. Then all works.
	ranktest.Register("pairfail", func(c *comm.Comm) error {
		if err := c.Barrier(); err != nil {
			return err
		}
		if !comm.SingleCopy(c) {
			return nil // nothing to fail (Yama): the staging test covers this
		}
		const n = 1 << 20
		for k, tc := range []struct {
			root             int
			writeFail, rFail bool
		}{{0, true, false}, {1, true, false}, {0, false, true}, {1, true, true}, {0, false, false}} {
			reader := 1 - tc.root
			if c.Rank() == tc.root && tc.writeFail {
				comm.SetWriteFaultIn(1)
			}
			if c.Rank() == reader && tc.rFail {
				comm.SetReadFault(errors.New("injected read failure"))
			}
			buf := pattern(tc.root, 200+k, n)
			if c.Rank() == reader {
				buf = make([]byte, n)
			}
			err := comm.Bcast(c, buf, tc.root)
			comm.SetWriteFaultIn(0)
			comm.SetReadFault(nil)
			switch {
			case tc.rFail && !errors.Is(err, comm.ErrOther):
				return fmt.Errorf("case %d: Bcast with a failed read: %v, want ErrOther", k, err)
			case !tc.rFail && err != nil:
				return fmt.Errorf("case %d: Bcast: %v", k, err)
			case !tc.rFail && !bytes.Equal(buf, pattern(tc.root, 200+k, n)):
				return fmt.Errorf("case %d: Bcast: wrong bytes on rank %d", k, c.Rank())
			}
		}
		return stillWorks(c)
	})
}

func TestBcastPairFailProcs(t *testing.T) { ranktest.Run(t, 2, "pairfail") }

func TestCollectivesProcs(t *testing.T) {
	for _, n := range []int{2, 3, 7, 16} {
		// 16 race-built ranks on 2 cores take 55 s alone, and CI runs
		// other packages' tests beside them: the default minute is too
		// tight there.
		limit := ranktest.DefaultTimeout
		if raceEnabled {
			limit = 4 * ranktest.DefaultTimeout
		}
		t.Run(fmt.Sprint(n), func(t *testing.T) { ranktest.Run(t, n, "colls", ranktest.Timeout(limit)) })
	}
}

// affine is an affine map x → V·x + I stored in a TwoInt; composition is
// associative and not commutative, so it shows the fold's order.
func compose(in, inout []atomics.TwoInt) {
	for i, f := range in {
		g := inout[i]
		inout[i] = atomics.TwoInt{V: f.V * g.V, I: f.V*g.I + f.I}
	}
}

func TestUserOps(t *testing.T) {
	if _, err := comm.OpCreate[int64](nil, true); !errors.Is(err, comm.ErrOp) {
		t.Errorf("OpCreate(nil) = %v, want ErrOp", err)
	}
	op, err := comm.OpCreate(compose, false)
	if err != nil || op.Commutative() {
		t.Fatalf("OpCreate: %v, commutative %v", err, op.Commutative())
	}
	first, _ := comm.OpCreate(func(in, inout []float64) { copy(inout, in) }, false)
	for _, n := range []int{1, 2, 3, 7} {
		ranktest.RunLocal(t, n, func(c *comm.Comm) error {
			me := c.Rank()
			for _, m := range []int{1, 13, 5000} {
				mine := make([]atomics.TwoInt, m)
				for i := range mine {
					mine[i] = atomics.TwoInt{V: int32(me + 2), I: int32(i + me)}
				}
				// x0 ∘ (x1 ∘ (... ∘ x_{n-1})) computed directly.
				want := make([]atomics.TwoInt, m)
				for i := range want {
					acc := atomics.TwoInt{V: 1, I: 0}
					for q := n - 1; q >= 0; q-- {
						f := atomics.TwoInt{V: int32(q + 2), I: int32(i + q)}
						acc = atomics.TwoInt{V: f.V * acc.V, I: f.V*acc.I + f.I}
					}
					want[i] = acc
				}
				got := make([]atomics.TwoInt, m)
				if err := comm.Allreduce(c, mine, got, op); err != nil {
					return err
				}
				if !slices.Equal(got, want) {
					return fmt.Errorf("Allreduce of a non-commutative op, %d elements: %v, want %v", m, head(got), head(want))
				}
				if err := comm.Scan(c, mine, got, op); err != nil {
					return err
				}
				x := []float64{float64(me)}
				if err := comm.AllreduceInPlace(c, x, first); err != nil || x[0] != 0 {
					return fmt.Errorf("left projection: %v, %v; want rank 0's 0", x, err)
				}
			}
			return nil
		})
	}
}

// wantAll checks that every rank's error is of class want.
func wantAll(class error, err error, what string) error {
	if !errors.Is(err, class) {
		return fmt.Errorf("%s: %v, want %v", what, err, class)
	}
	return nil
}

// After every mismatch the communicator must still work.
func stillWorks(c *comm.Comm) error {
	x := []int64{int64(c.Rank())}
	if err := comm.AllreduceInPlace(c, x, atomics.Sum); err != nil || x[0] != int64(c.Size()*(c.Size()-1)/2) {
		return fmt.Errorf("an Allreduce after the mismatch: %v, %v", x, err)
	}
	return nil
}

// waitNBC waits for a nonblocking collective just started.
func waitNBC(q *comm.Request, err error) error {
	if err != nil {
		return err
	}
	_, err = q.Wait()
	return err
}

// mismatchCase is a call every rank makes, differently: each must return
// an error of class.
type mismatchCase struct {
	name  string
	class error
	call  func(c *comm.Comm) error
}

func TestMismatches(t *testing.T) {
	cases := []mismatchCase{
		{"counts", comm.ErrCount, func(c *comm.Comm) error {
			return comm.AllreduceInPlace(c, make([]float64, 3+c.Rank()%2), atomics.Sum)
		}},
		{"big counts", comm.ErrCount, func(c *comm.Comm) error {
			return comm.Bcast(c, make([]byte, 200_000+c.Rank()), 0)
		}},
		{"types", comm.ErrType, func(c *comm.Comm) error {
			if c.Rank() == 1 {
				return comm.AllreduceInPlace(c, make([]int64, 3), atomics.Sum)
			}
			return comm.AllreduceInPlace(c, make([]float64, 3), atomics.Sum)
		}},
		{"ops", comm.ErrOp, func(c *comm.Comm) error {
			return comm.AllreduceInPlace(c, make([]float64, 3), []atomics.Op{atomics.Sum, atomics.Max}[c.Rank()%2])
		}},
		{"roots", comm.ErrRoot, func(c *comm.Comm) error { return comm.Bcast(c, make([]int32, 5), c.Rank()%2) }},
		{"kinds", comm.ErrArg, func(c *comm.Comm) error {
			if c.Rank() == 0 {
				return comm.Bcast(c, make([]float64, 1), 0)
			}
			return comm.AllreduceInPlace(c, make([]float64, 1), atomics.Sum)
		}},
		{"barrier and bcast", comm.ErrArg, func(c *comm.Comm) error {
			if c.Rank() == 2 {
				return c.Barrier()
			}
			return comm.Bcast(c, make([]float64, 1), 0)
		}},
		{"two in barrier, one in allreduce", comm.ErrArg, func(c *comm.Comm) error {
			if c.Rank() != 1 {
				return c.Barrier()
			}
			return comm.AllreduceInPlace(c, make([]float64, 1), atomics.Sum)
		}},
		{"barrier and a refused argument", comm.ErrOp, func(c *comm.Comm) error {
			switch c.Rank() {
			case 0:
				return c.Barrier()
			case 1:
				return comm.AllreduceInPlace(c, make([]float64, 2), atomics.Replace) // named first everywhere
			}
			return comm.AllreduceInPlace(c, make([]float64, 2), atomics.Sum)
		}},
		{"a bad root on one rank", comm.ErrRoot, func(c *comm.Comm) error {
			return comm.Reduce(c, make([]float64, 2), make([]float64, 2), atomics.Sum, []int{0, 7, 0}[c.Rank()])
		}},
		// Send and receive buffers that share memory (MPI 4.1 §2.3), on
		// every rank or only where the receive is used: ErrBuffer on
		// every rank.
		{"aliased Allreduce", comm.ErrBuffer, func(c *comm.Comm) error {
			b := make([]float64, 2)
			return comm.Allreduce(c, b, b, atomics.Sum)
		}},
		{"aliased Reduce at the root", comm.ErrBuffer, func(c *comm.Comm) error {
			b := make([]float64, 3)
			if c.Rank() == 1 {
				return comm.Reduce(c, b[:2], b[1:], atomics.Sum, 1)
			}
			return comm.Reduce(c, b[:2], b[:2], atomics.Sum, 1) // recv unused off the root
		}},
		{"aliased Scan", comm.ErrBuffer, func(c *comm.Comm) error {
			b := make([]int64, 4)
			return comm.Scan(c, b[:2], b[1:3], atomics.Sum)
		}},
		{"overlapping Alltoall", comm.ErrBuffer, func(c *comm.Comm) error {
			b := make([]int32, c.Size()+1)
			return comm.Alltoall(c, b[:c.Size()], b[1:])
		}},
		{"a Gatherv block over the root's send", comm.ErrBuffer, func(c *comm.Comm) error {
			b := make([]float64, 6)
			if c.Rank() == 0 {
				return comm.Gatherv(c, b[4:5], b, []int{1, 1, 1}, []int{0, 2, 4}, 0)
			}
			return comm.Gatherv(c, b[:1], nil, nil, nil, 0)
		}},
		{"a Scatter's root sends what it receives", comm.ErrBuffer, func(c *comm.Comm) error {
			b := make([]float64, 3)
			return comm.Scatter(c, b, b[2:], 0)
		}},
		{"a short recv", comm.ErrCount, func(c *comm.Comm) error {
			return comm.Allgather(c, make([]float64, 2), make([]float64, 6-c.Rank()/2))
		}},
		{"Replace", comm.ErrOp, func(c *comm.Comm) error {
			return comm.AllreduceInPlace(c, make([]float64, 2), atomics.Replace)
		}},
		{"Band on float64", comm.ErrOp, func(c *comm.Comm) error {
			return comm.AllreduceInPlace(c, make([]float64, 2), atomics.Band)
		}},
		{"v counts out of range", comm.ErrCount, func(c *comm.Comm) error {
			counts := []int{1, 1, 1}
			if c.Rank() == 1 {
				counts[2] = 9
			}
			return comm.Allgatherv(c, make([]float64, 1), make([]float64, 3), counts, []int{0, 1, 2})
		}},
		{"v counts that disagree", comm.ErrCount, func(c *comm.Comm) error {
			counts := []int{1, 1, 1}
			if c.Rank() == 0 {
				counts = []int{1, 2, 0}
			}
			return comm.Allgatherv(c, make([]float64, 1), make([]float64, 3), counts, []int{0, 1, 2})
		}},
		{"a root's counts", comm.ErrCount, func(c *comm.Comm) error {
			return comm.Gatherv(c, make([]float64, 1), make([]float64, 4), []int{1, 2, 1}, []int{0, 1, 3}, 0)
		}},
		{"nonblocking counts", comm.ErrCount, func(c *comm.Comm) error {
			return waitNBC(comm.IallreduceInPlace(c, make([]float64, 3+c.Rank()%2), atomics.Sum))
		}},
		{"persistent counts", comm.ErrCount, func(c *comm.Comm) error {
			q, err := comm.AllreduceInitInPlace(c, make([]float64, 3+c.Rank()%2), atomics.Sum)
			if err != nil {
				return err
			}
			defer q.Free()
			if err := q.Start(); err != nil {
				return err
			}
			_, err = q.Wait()
			return err
		}},
		{"nonblocking against blocking", comm.ErrArg, func(c *comm.Comm) error {
			if c.Rank() == 1 {
				return comm.AllreduceInPlace(c, make([]float64, 1), atomics.Sum)
			}
			return waitNBC(comm.Ibcast(c, make([]float64, 1), 0))
		}},
		{"alltoallv matrix", comm.ErrCount, func(c *comm.Comm) error {
			sc := []int{1, 1, 1}
			if c.Rank() == 2 {
				sc[0] = 2
			}
			return comm.Alltoallv(c, make([]float64, 4), sc, []int{0, 1, 2}, make([]float64, 3), []int{1, 1, 1}, []int{0, 1, 2})
		}},
	}
	// Warm (after a Barrier has made the collective area), the small
	// calls take the fast path (coll_fast.go) on this many of the three
	// ranks, the others the general path; the verdict must not change. A
	// nonblocking or persistent call's job takes it too (its own call,
	// with nothing queued before it).
	fastRanks := map[string]int{
		"counts": 3, "types": 3, "ops": 3, "roots": 3, "kinds": 3, "barrier and bcast": 3,
		"two in barrier, one in allreduce": 3, "barrier and a refused argument": 2,
		"a bad root on one rank": 2, "a short recv": 2, "nonblocking against blocking": 3,
		"nonblocking counts": 3, "persistent counts": 3,
		"aliased Reduce at the root": 2, "a Scatter's root sends what it receives": 2,
	}
	for _, tc := range cases {
		for _, warm := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/warm=%v", tc.name, warm), func(t *testing.T) {
				var fast atomic.Int32
				ranktest.RunLocal(t, 3, func(c *comm.Comm) error {
					if warm {
						if err := c.Barrier(); err != nil {
							return err
						}
					}
					n0 := comm.FastRounds(c)
					err := tc.call(c)
					if comm.FastRounds(c) > n0 {
						fast.Add(1)
					}
					if err := wantAll(tc.class, reported(c, err), tc.name); err != nil {
						return err
					}
					return stillWorks(c)
				})
				want := 0
				if warm {
					want = fastRanks[tc.name]
				}
				if got := int(fast.Load()); got != want {
					t.Errorf("%s: %d ranks took the fast path, want %d", tc.name, got, want)
				}
			})
		}
	}
}

func init() {
	// mismatch: the counts mismatch with a payload bigger than a chunk, as
	// processes.
	ranktest.Register("mismatch", func(c *comm.Comm) error {
		err := comm.Bcast(c, make([]float64, 30_000+c.Rank()), 0)
		if err := wantAll(comm.ErrCount, err, "Bcast of different lengths"); err != nil {
			return err
		}
		if err := stillWorks(c); err != nil {
			return err
		}
		// A rank in Barrier against ranks in Gather: the root and the
		// Barrier find it in the call, the other sender (which reads
		// nothing) in the next one.
		if c.Rank() == 1 {
			err = c.Barrier()
		} else {
			err = comm.Gather(c, []float64{1}, make([]float64, c.Size()), 0)
		}
		if err := wantAll(comm.ErrArg, reported(c, err), "Barrier against Gather"); err != nil {
			return err
		}
		if err := stillWorks(c); err != nil {
			return err
		}
		// A rank splitting (the control segment's exchange) against ranks
		// in Bcast (the flag lines).
		if c.Rank() == 0 {
			_, err = c.Split(0, 0)
		} else {
			err = comm.Bcast(c, make([]float64, 2), 0)
		}
		if err := wantAll(comm.ErrArg, reported(c, err), "Split against Bcast"); err != nil {
			return err
		}
		if err := stillWorks(c); err != nil {
			return err
		}
		// A Scatter's root and ranks in Gather: the Gather's senders and
		// the Scatter's root read nothing, and find the mismatch in their
		// next call.
		if c.Rank() == 0 {
			err = comm.Scatter(c, make([]float64, c.Size()), make([]float64, 1), 0)
		} else {
			err = comm.Gather(c, []float64{1}, nil, 0)
		}
		if err := wantAll(comm.ErrArg, reported(c, err), "Scatter against Gather"); err != nil {
			return err
		}
		return stillWorks(c)
	})
}

func TestMismatchProcs(t *testing.T) { ranktest.Run(t, 3, "mismatch") }

// TestMismatchProcsPair: two ranks, whose Barrier waits on the flag lines
// (format.FlagBarrierRanks), not on the Barrier line.
func TestMismatchProcsPair(t *testing.T) { ranktest.Run(t, 2, "mismatch") }

// TestBarrierMismatchesPair: the Barrier mismatches of TestMismatches on a
// communicator of two ranks, whose Barrier is a round on the flag lines.
func TestBarrierMismatchesPair(t *testing.T) {
	cases := []mismatchCase{
		{"barrier and bcast", comm.ErrArg, func(c *comm.Comm) error {
			if c.Rank() == 1 {
				return c.Barrier()
			}
			return comm.Bcast(c, make([]float64, 1), 0)
		}},
		{"barrier and a large bcast", comm.ErrArg, func(c *comm.Comm) error {
			if c.Rank() == 0 {
				return c.Barrier()
			}
			return comm.Bcast(c, make([]float64, 50_000), 1)
		}},
		{"barrier and a refused argument", comm.ErrOp, func(c *comm.Comm) error {
			if c.Rank() == 0 {
				return c.Barrier()
			}
			return comm.AllreduceInPlace(c, make([]float64, 2), atomics.Replace)
		}},
		{"barrier and split", comm.ErrArg, func(c *comm.Comm) error {
			if c.Rank() == 0 {
				return c.Barrier()
			}
			_, err := c.Split(0, 0)
			return err
		}},
		{"barrier and allgather", comm.ErrArg, func(c *comm.Comm) error {
			if c.Rank() == 0 {
				return c.Barrier()
			}
			return comm.Allgather(c, []int32{1}, make([]int32, 2))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ranktest.RunLocal(t, 2, func(c *comm.Comm) error {
				if err := c.Barrier(); err != nil { // the area exists, rounds under way
					return err
				}
				if err := wantAll(tc.class, reported(c, tc.call(c)), tc.name); err != nil {
					return err
				}
				for range 3 {
					if err := c.Barrier(); err != nil {
						return fmt.Errorf("a Barrier after the mismatch: %w", err)
					}
				}
				return stillWorks(c)
			})
		})
	}
}

// TestRootedMismatchesPair: on two ranks a rank that reads no other
// rank's data (offer) returns before the other has checked anything; each
// mismatch is still an error on both ranks, in the call or in the next
// one, which names the call and still does its work.
func TestRootedMismatchesPair(t *testing.T) {
	other := func(c *comm.Comm) int { return 1 - c.Rank() }
	cases := []mismatchCase{
		{"bcast counts", comm.ErrCount, func(c *comm.Comm) error {
			return comm.Bcast(c, make([]float64, 2+c.Rank()), 0)
		}},
		{"bcast, both roots", comm.ErrRoot, func(c *comm.Comm) error {
			return comm.Bcast(c, make([]int32, 5), c.Rank())
		}},
		{"bcast, neither root", comm.ErrRoot, func(c *comm.Comm) error {
			return comm.Bcast(c, make([]int32, 5), other(c))
		}},
		{"bcast, a chunk", comm.ErrCount, func(c *comm.Comm) error {
			return comm.Bcast(c, make([]byte, 1000+c.Rank()), 1)
		}},
		{"reduce counts", comm.ErrCount, func(c *comm.Comm) error {
			return comm.Reduce(c, make([]float64, 2+c.Rank()), make([]float64, 3), atomics.Sum, 0)
		}},
		{"reduce ops", comm.ErrOp, func(c *comm.Comm) error {
			return comm.Reduce(c, make([]int64, 2), make([]int64, 2), []atomics.Op{atomics.Sum, atomics.Max}[c.Rank()], 1)
		}},
		{"gather counts", comm.ErrCount, func(c *comm.Comm) error {
			return comm.Gather(c, make([]float64, 1+c.Rank()), make([]float64, 4), 1)
		}},
		{"scatter counts", comm.ErrCount, func(c *comm.Comm) error {
			return comm.Scatter(c, make([]float64, 4), make([]float64, 1+c.Rank()), 0)
		}},
		{"scan ops", comm.ErrOp, func(c *comm.Comm) error {
			return comm.ScanInPlace(c, make([]int64, 2), []atomics.Op{atomics.Sum, atomics.Max}[c.Rank()])
		}},
		{"exscan and scan", comm.ErrArg, func(c *comm.Comm) error {
			if c.Rank() == 0 {
				return comm.ExscanInPlace(c, make([]int64, 2), atomics.Sum)
			}
			return comm.ScanInPlace(c, make([]int64, 2), atomics.Sum)
		}},
		{"a bcast root and a reduce sender", comm.ErrArg, func(c *comm.Comm) error {
			if c.Rank() == 0 {
				return comm.Bcast(c, make([]float64, 1), 0)
			}
			return comm.Reduce(c, make([]float64, 1), nil, atomics.Sum, 0)
		}},
		{"a gather sender and barrier", comm.ErrArg, func(c *comm.Comm) error {
			if c.Rank() == 0 {
				return comm.Gather(c, make([]float64, 1), nil, 1)
			}
			return c.Barrier()
		}},
		{"a scatter root and a refused argument", comm.ErrRoot, func(c *comm.Comm) error {
			if c.Rank() == 0 {
				return comm.Scatter(c, make([]float64, 2), make([]float64, 1), 0)
			}
			return comm.Scatter(c, nil, make([]float64, 1), 7)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ranktest.RunLocal(t, 2, func(c *comm.Comm) error {
				if err := c.Barrier(); err != nil {
					return err
				}
				err := tc.call(c)
				late := err == nil
				err = reported(c, err)
				if err := wantAll(tc.class, err, tc.name); err != nil {
					return err
				}
				if late && !strings.Contains(err.Error(), "a later collective call here, Barrier") {
					return fmt.Errorf("%s: the late report does not say so: %v", tc.name, err)
				}
				return stillWorks(c)
			})
		})
	}
}

// TestRootedMismatchesMany: on more than two ranks, the ranks that read
// only some ranks' data, or none, return without comparing every rank's
// signature; each mismatch is still an error on every rank, in the call
// or by the next Barrier at the latest, whether some rank sees it at once
// (a reader whose root differs, a root or a Barrier that waits for all)
// or none does (two groups, each with a root of its own).
func TestRootedMismatchesMany(t *testing.T) {
	const n = 5
	cases := []mismatchCase{
		{"bcast, one reader's count", comm.ErrCount, func(c *comm.Comm) error {
			m := 2
			if c.Rank() == 3 {
				m = 3
			}
			return comm.Bcast(c, make([]float64, m), 0)
		}},
		{"bcast, two groups with a root each", comm.ErrRoot, func(c *comm.Comm) error {
			root := 0
			if c.Rank() >= 3 {
				root = 4
			}
			return comm.Bcast(c, make([]int32, 3), root)
		}},
		{"bcast, a chunk and a reader's count", comm.ErrCount, func(c *comm.Comm) error {
			m := 1000
			if c.Rank() == 2 {
				m = 1001
			}
			return comm.Bcast(c, make([]byte, m), 1)
		}},
		{"reduce, one sender's op", comm.ErrOp, func(c *comm.Comm) error {
			op := atomics.Sum
			if c.Rank() == 2 {
				op = atomics.Max
			}
			return comm.Reduce(c, make([]int64, 2), make([]int64, 2), op, 0)
		}},
		{"scan, one rank's op", comm.ErrOp, func(c *comm.Comm) error {
			op := atomics.Sum
			if c.Rank() == 2 {
				op = atomics.Max
			}
			return comm.ScanInPlace(c, make([]int64, 2), op)
		}},
		{"gather senders and a barrier", comm.ErrArg, func(c *comm.Comm) error {
			if c.Rank() == 2 {
				return c.Barrier()
			}
			return comm.Gather(c, []float64{1}, make([]float64, n), 0)
		}},
		{"scatter and a refused root", comm.ErrRoot, func(c *comm.Comm) error {
			root := 0
			if c.Rank() == 3 {
				root = 7
			}
			return comm.Scatter(c, make([]float64, n), make([]float64, 1), root)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ranktest.RunLocal(t, n, func(c *comm.Comm) error {
				if err := c.Barrier(); err != nil {
					return err
				}
				if err := wantAll(tc.class, reported(c, tc.call(c)), tc.name); err != nil {
					return err
				}
				return stillWorks(c)
			})
		})
	}
}

func init() {
	// lag: loops of calls of one round, in which roots and senders run
	// ahead of the others (up to half the line parities), mixed with
	// calls whose first round writes a staging buffer (which wait for
	// the round before) and calls of several rounds, roots rotating:
	// every result is checked.
	ranktest.Register("lag", func(c *comm.Comm) error {
		n, me := c.Size(), c.Rank()
		big := make([]byte, 150_000) // several rounds
		for i := range 600 {
			root := (i / 7) % n
			v := int64(i)
			// Every other pass, data that does not ride inline: one
			// round through the staging buffers' slots.
			m := 1 + i/7%2*29
			switch i % 7 {
			case 0, 5:
				b := make([]int64, m+1)
				if me == root {
					for j := range b {
						b[j] = v*3 + int64(j)
					}
				}
				if err := comm.Bcast(c, b, root); err != nil || b[0] != v*3 || b[m] != v*3+int64(m) {
					return fmt.Errorf("call %d: Bcast from %d: %v, %v", i, root, b, err)
				}
			case 1:
				send, recv := make([]int64, m), make([]int64, m)
				for j := range send {
					send[j] = v + int64(me+j)
				}
				if err := comm.Reduce(c, send, recv, atomics.Sum, root); err != nil {
					return fmt.Errorf("call %d: Reduce: %v", i, err)
				}
				if want := int64(n)*(v+int64(m-1)) + int64(n*(n-1)/2); me == root && recv[m-1] != want {
					return fmt.Errorf("call %d: Reduce at %d: %d, want %d", i, root, recv[m-1], want)
				}
			case 2:
				send, recv := make([]int32, m), make([]int32, n*m)
				for j := range send {
					send[j] = int32(i*100 + me + j)
				}
				if err := comm.Gather(c, send, recv, root); err != nil {
					return fmt.Errorf("call %d: Gather: %v", i, err)
				}
				for q := range n {
					if me == root && (recv[q*m] != int32(i*100+q) || recv[q*m+m-1] != int32(i*100+q+m-1)) {
						return fmt.Errorf("call %d: Gather at %d: %v", i, root, recv)
					}
				}
			case 3:
				send := make([]int32, n*m)
				for q := range send {
					send[q] = int32(i*100 + q)
				}
				recv := make([]int32, m)
				if err := comm.Scatter(c, send, recv, root); err != nil || recv[0] != int32(i*100+me*m) || recv[m-1] != int32(i*100+me*m+m-1) {
					return fmt.Errorf("call %d: Scatter from %d: %v, %v", i, root, recv, err)
				}
			case 4:
				x := make([]int64, m)
				for j := range x {
					x[j] = v + int64(me)
				}
				want := int64(me+1)*v + int64(me*(me+1)/2)
				if err := comm.ScanInPlace(c, x, atomics.Sum); err != nil || x[0] != want || x[m-1] != want {
					return fmt.Errorf("call %d: Scan: %v, want %d, %v", i, x, want, err)
				}
			case 6:
				// Rounds through the root's staging buffers, back to
				// back (one round each: a large one, then two that fit
				// a slot), or one call of several.
				calls := 3
				if i%3 == 0 {
					calls = 1
				}
				for k := range calls {
					b := big[:40_000]
					switch {
					case calls == 1:
						b = big
					case k > 0:
						b = big[:1000]
					}
					if me == root {
						for j := range b {
							b[j] = byte(i + j + k)
						}
					}
					if err := comm.Bcast(c, b, root); err != nil {
						return fmt.Errorf("call %d: Bcast of %d bytes: %v", i, len(b), err)
					}
					for j := range b {
						if b[j] != byte(i+j+k) {
							return fmt.Errorf("call %d: Bcast of %d bytes: byte %d is %d", i, len(b), j, b[j])
						}
					}
				}
			}
		}
		return c.Barrier()
	})
}

func init() {
	// ahead: loops of one-round calls with one root, in which one reader
	// (rank 1) stops now and then, so that the root and the other ranks
	// run as far ahead as the area lets them (half the line parities with
	// inline data, 2S-1 rounds through a staging slot: format.CollSlots)
	// and reuse lines and slots the slow rank may still be reading: every
	// result is checked, so a rule that let a writer in too early shows
	// as wrong data.
	ranktest.Register("ahead", func(c *comm.Comm) error {
		n, me := c.Size(), c.Rank()
		slow := func(i int) {
			if me == 1 && i%37 == 5 {
				time.Sleep(2 * time.Millisecond)
			}
		}
		for _, m := range []int{1, 40} { // inline, then through a slot
			for i := range 300 {
				slow(i)
				v := int64(i*1000 + m)
				b := make([]int64, m)
				if me == 0 {
					for j := range b {
						b[j] = v + int64(j)
					}
				}
				if err := comm.Bcast(c, b, 0); err != nil || b[0] != v || b[m-1] != v+int64(m-1) {
					return fmt.Errorf("Bcast %d of %d: %v, %v", i, m, b[:min(m, 3)], err)
				}
			}
			for i := range 300 {
				slow(i)
				send := make([]int64, m)
				for j := range send {
					send[j] = int64(i*100+me) + int64(j)
				}
				recv := make([]int64, n*m)
				if err := comm.Gather(c, send, recv, 1); err != nil {
					return fmt.Errorf("Gather %d of %d: %v", i, m, err)
				}
				for q := range n {
					if me == 1 && (recv[q*m] != int64(i*100+q) || recv[q*m+m-1] != int64(i*100+q+m-1)) {
						return fmt.Errorf("Gather %d of %d: block %d is %v", i, m, q, recv[q*m:q*m+min(m, 3)])
					}
				}
			}
			for i := range 300 {
				slow(i)
				send := make([]int64, n*m)
				for j := range send {
					send[j] = int64(i*10000 + j)
				}
				recv := make([]int64, m)
				if err := comm.Scatter(c, send, recv, 0); err != nil || recv[0] != int64(i*10000+me*m) || recv[m-1] != int64(i*10000+me*m+m-1) {
					return fmt.Errorf("Scatter %d of %d: %v, %v", i, m, recv[:min(m, 3)], err)
				}
			}
			for i := range 300 {
				slow(i)
				x := make([]int64, m)
				for j := range x {
					x[j] = int64(i + me + j)
				}
				if err := comm.ScanInPlace(c, x, atomics.Sum); err != nil ||
					x[0] != int64((me+1)*i+me*(me+1)/2) || x[m-1] != int64((me+1)*(i+m-1)+me*(me+1)/2) {
					return fmt.Errorf("Scan %d of %d: %v, %v", i, m, x[:min(m, 3)], err)
				}
			}
		}
		return c.Barrier()
	})
}

// TestAheadProcs runs "ahead" at 3 ranks (the most line parities) and 8
// (ranks that outnumber the cores here).
func TestAheadProcs(t *testing.T) {
	for _, n := range []int{3, 8} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { ranktest.Run(t, n, "ahead") })
	}
}

func TestLagProcs(t *testing.T) {
	for _, n := range []int{3, 8, 16} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { ranktest.Run(t, n, "lag") })
	}
}

// TestLateMismatchReported: a mismatch a Bcast's root finds late is
// returned by its next call that moves data, not by Dup (whose result the
// other rank has too), and by Free if nothing else came first (the
// communicator freed all the same).
func TestLateMismatchReported(t *testing.T) {
	ranktest.RunLocal(t, 2, func(c *comm.Comm) error {
		mismatch := func(d *comm.Comm) error {
			err := comm.Bcast(d, make([]float64, 2+d.Rank()), 0)
			if d.Rank() == 0 && err != nil || d.Rank() == 1 && !errors.Is(err, comm.ErrCount) {
				return fmt.Errorf("rank %d: the mismatched Bcast: %v", d.Rank(), err)
			}
			return nil
		}
		if err := mismatch(c); err != nil {
			return err
		}
		d, err := c.Dup()
		if err != nil {
			return fmt.Errorf("Dup after the mismatch: %w", err)
		}
		x := []int64{int64(c.Rank() + 1)}
		err = comm.AllreduceInPlace(c, x, atomics.Sum)
		if x[0] != 3 || (c.Rank() == 0) != errors.Is(err, comm.ErrCount) {
			return fmt.Errorf("rank %d: the Allreduce after Dup: %v, %v", c.Rank(), x, err)
		}
		if err := mismatch(d); err != nil {
			return err
		}
		if err := d.Free(); (c.Rank() == 0) != errors.Is(err, comm.ErrCount) {
			return fmt.Errorf("rank %d: Free after the mismatch: %v", c.Rank(), err)
		}
		if err := d.Free(); !errors.Is(err, comm.ErrComm) {
			return fmt.Errorf("a second Free: %v, want ErrComm", err)
		}
		return stillWorks(c)
	})
}

// lateReduce mismatches a Reduce's counts on two ranks: rank 0, the
// root, gets ErrCount; rank 1 sends, reads nothing, and so learns of the
// mismatch only in its next call.
func lateReduce(c *comm.Comm) error {
	err := comm.Reduce(c, make([]int64, 1+c.Rank()), make([]int64, 2), atomics.Sum, 0)
	if c.Rank() == 0 && !errors.Is(err, comm.ErrCount) || c.Rank() == 1 && err != nil {
		return fmt.Errorf("rank %d: the mismatched Reduce: %v", c.Rank(), err)
	}
	return nil
}

// TestLateMismatchTyped: a typed call that returns an earlier call's
// mismatch (found late) still delivers its own data.
func TestLateMismatchTyped(t *testing.T) {
	ranktest.RunLocal(t, 2, func(c *comm.Comm) error {
		if err := lateReduce(c); err != nil {
			return err
		}
		vec := mustType(dtype.Vector(3, 1, 2, dtype.Basic(atomics.Int64)))
		buf := make([]byte, 5*8)
		if c.Rank() == 0 {
			for i := range 5 {
				binary.LittleEndian.PutUint64(buf[8*i:], uint64(10+i))
			}
		}
		err := comm.BcastType(c, buf, 1, vec, 0)
		if c.Rank() == 0 && err != nil || c.Rank() == 1 && !errors.Is(err, comm.ErrCount) {
			return fmt.Errorf("rank %d: BcastType after the mismatch: %v", c.Rank(), err)
		}
		if c.Rank() == 1 {
			for i, want := range []uint64{10, 0, 12, 0, 14} {
				if got := binary.LittleEndian.Uint64(buf[8*i:]); got != want {
					return fmt.Errorf("BcastType's data on rank 1, element %d: %d, want %d", i, got, want)
				}
			}
		}
		return stillWorks(c)
	})
}

// TestLateMismatchJoined: a late mismatch returned by a call that fails
// itself is joined to the call's error, without ErrEarlierCall.
func TestLateMismatchJoined(t *testing.T) {
	ranktest.RunLocal(t, 2, func(c *comm.Comm) error {
		if err := lateReduce(c); err != nil {
			return err
		}
		// Rank 1 names a root out of range: its own error, which rank 0 (a
		// reader here) sees in the call.
		err := comm.Bcast(c, make([]int64, 1), []int{1, 7}[c.Rank()])
		switch {
		case !errors.Is(err, comm.ErrRoot):
			return fmt.Errorf("rank %d: the Bcast with a bad root: %v, want ErrRoot", c.Rank(), err)
		case c.Rank() == 1 && (!errors.Is(err, comm.ErrCount) || errors.Is(err, comm.ErrEarlierCall)):
			return fmt.Errorf("rank 1: the Bcast's error should join the late ErrCount without ErrEarlierCall: %v", err)
		case c.Rank() == 1 && !firstIs(err, comm.ErrRoot):
			return fmt.Errorf("rank 1: the Bcast's own error should come first (the C interface reports its class): %v", err)
		}
		return stillWorks(c)
	})
}

// firstIs reports whether err's first joined error (err itself if it
// joins none) is target.
func firstIs(err, target error) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok && len(j.Unwrap()) > 0 {
		err = j.Unwrap()[0]
	}
	return errors.Is(err, target)
}

// TestIbarrierThenFree: an Ibarrier pending when its communicator is
// freed completes normally (MPI 4.1 §7.4.3), and its Wait says so, even
// once the area serves a communicator made after.
func TestIbarrierThenFree(t *testing.T) {
	ranktest.RunLocal(t, 3, func(c *comm.Comm) error {
		d, err := c.Dup()
		if err != nil {
			return err
		}
		req, err := d.Ibarrier()
		if err != nil {
			return err
		}
		if err := d.Free(); err != nil {
			return err
		}
		e, err := c.Dup() // may take the freed one's area
		if err != nil {
			return err
		}
		if _, err := req.Wait(); err != nil {
			return fmt.Errorf("Wait of an Ibarrier whose communicator was freed: %v", err)
		}
		if _, done, err := req.Test(); !done || err != nil {
			return fmt.Errorf("Test after Wait: %v, %v", done, err)
		}
		return e.Free()
	})
}

func TestIbarrier(t *testing.T) {
	var late atomic.Bool // rank 3 has called Ibarrier
	ranktest.RunLocal(t, 4, func(c *comm.Comm) error {
		// Rank 3 arrives late: nobody's request may complete before.
		if c.Rank() == 3 {
			time.Sleep(50 * time.Millisecond)
			late.Store(true)
		}
		req, err := c.Ibarrier()
		if err != nil {
			return err
		}
		if _, err := req.Wait(); err != nil {
			return err
		}
		if !late.Load() {
			return errors.New("Ibarrier completed before rank 3 called it")
		}
		if _, done, err := req.Test(); !done || err != nil {
			return fmt.Errorf("Test after Wait: %v, %v", done, err)
		}
		// Several outstanding, mixed with blocking collectives.
		reqs := make([]*comm.Request, 3)
		for i := range reqs {
			if reqs[i], err = c.Ibarrier(); err != nil {
				return err
			}
			x := []int64{1}
			if err := comm.AllreduceInPlace(c, x, atomics.Sum); err != nil || x[0] != 4 {
				return fmt.Errorf("Allreduce between Ibarriers: %v %v", x, err)
			}
		}
		for i := len(reqs) - 1; i >= 0; i-- {
			for {
				_, done, err := reqs[i].Test()
				if err != nil {
					return err
				}
				if done {
					break
				}
				time.Sleep(time.Millisecond)
			}
		}
		return nil
	})
}

func init() {
	// disjoint: two halves of the world loop collectives concurrently on
	// their own communicators; each counts what it saw.
	ranktest.Register("disjoint", func(c *comm.Comm) error {
		half, err := c.Split(c.Rank()%2, c.Rank())
		if err != nil {
			return err
		}
		defer half.Free()
		n := half.Size()
		const rounds = 500
		total := int64(0)
		for i := range rounds {
			x := []int64{int64(half.Rank() + i)}
			if err := comm.AllreduceInPlace(half, x, atomics.Sum); err != nil {
				return err
			}
			if want := int64(n*(n-1)/2 + n*i); x[0] != want {
				return fmt.Errorf("round %d: %d, want %d", i, x[0], want)
			}
			total += x[0]
			b := make([]int64, 20_000)
			if half.Rank() == i%n {
				for j := range b {
					b[j] = int64(i + j)
				}
			}
			if i%50 == 0 {
				if err := comm.Bcast(half, b, i%n); err != nil {
					return err
				}
				if b[19_999] != int64(i+19_999) {
					return fmt.Errorf("round %d: Bcast gave %d", i, b[19_999])
				}
			}
		}
		fmt.Printf("rank %d color %d: %d\n", c.Rank(), c.Rank()%2, total)
		return c.Barrier()
	})
}

func TestDisjointCommunicators(t *testing.T) {
	res := ranktest.Run(t, 8, "disjoint")
	if lines := res.Lines(); len(lines) != 8 {
		t.Fatalf("%d lines of output, want 8:\n%s", len(lines), res.Stdout)
	}
}

// TestFinalizeMismatch: a rank in Finalize while the others are in Bcast
// (the world has an area by then) is an error on every rank; nobody is
// finalized, and the world still works.
func TestFinalizeMismatch(t *testing.T) {
	ranktest.RunLocal(t, 3, func(c *comm.Comm) error {
		if err := c.Barrier(); err != nil {
			return err
		}
		var err error
		if c.Rank() == 2 {
			err = c.Finalize()
		} else {
			err = comm.Bcast(c, make([]float64, 3), 0)
		}
		if err := wantAll(comm.ErrArg, reported(c, err), "Finalize against Bcast"); err != nil {
			return err
		}
		return stillWorks(c)
	})
}

// TestCallMismatches: a rank in Free, Dup, Split, SplitType or a window's
// creation while the others are in a collective (or in another of these)
// is an error on every rank, and the communicator stays usable.
func TestCallMismatches(t *testing.T) {
	bcast := func(d *comm.Comm) error { return comm.Bcast(d, make([]float64, 3), 0) }
	cases := []struct {
		name     string
		odd, all func(d *comm.Comm) error // rank 1's call, the others'
	}{
		{"free and bcast", (*comm.Comm).Free, bcast},
		{"dup and allreduce", func(d *comm.Comm) error { _, err := d.Dup(); return err },
			func(d *comm.Comm) error { return comm.AllreduceInPlace(d, make([]int32, 2), atomics.Sum) }},
		{"split and barrier", func(d *comm.Comm) error { _, err := d.Split(0, 0); return err }, (*comm.Comm).Barrier},
		{"split type and free", func(d *comm.Comm) error { _, err := d.SplitType(comm.TypeShared, 0, nil); return err },
			(*comm.Comm).Free},
		{"a window's creation and gather", func(d *comm.Comm) error { _, err := win.AllocateShared(d, 64, 8, nil); return err },
			func(d *comm.Comm) error { return comm.Gather(d, []float64{1}, make([]float64, d.Size()), 0) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ranktest.RunLocal(t, 3, func(c *comm.Comm) error {
				d, err := c.Dup()
				if err != nil {
					return err
				}
				call := tc.all
				if c.Rank() == 1 {
					call = tc.odd
				}
				if err := wantAll(comm.ErrArg, reported(d, call(d)), tc.name); err != nil {
					return err
				}
				if err := stillWorks(d); err != nil {
					return err
				}
				return d.Free()
			})
		})
	}
}

// unitData is rank me's data for the unit tests: m = 3·units int64s, each
// 3·payload + its position in its unit, so an op that is handed a slice
// beginning inside a unit sees the wrong positions.
func unitData(me, m int) []int64 {
	x := make([]int64, m)
	for j := range x {
		x[j] = int64(3*(me+1+j%5) + j%3)
	}
	return x
}

// unitSum is a user op over units of 3 int64s: it sums the payloads and
// records, in bad, a slice that is not whole units from a unit's start.
func unitSum(bad *atomic.Bool) func(in, inout []int64) {
	return func(in, inout []int64) {
		if len(in)%3 != 0 || len(inout) != len(in) {
			bad.Store(true)
		}
		for j := range in {
			k := int64(j % 3)
			if in[j]%3 != k || inout[j]%3 != k {
				bad.Store(true)
			}
			inout[j] = (in[j]/3+inout[j]/3)*3 + k
		}
	}
}

// checkUnits runs every reducing call with a user op in units of 3 (made
// by InUnits, and by a typed form over a 3-element datatype) at sizes
// from one unit to past a chunk and the single-copy threshold.
func checkUnits(c *comm.Comm) error {
	n, me := c.Size(), c.Rank()
	var bad atomic.Bool
	plain, err := comm.OpCreate(unitSum(&bad), true)
	if err != nil {
		return err
	}
	if _, err := plain.InUnits(0); !errors.Is(err, comm.ErrArg) {
		return fmt.Errorf("InUnits(0) = %v, want ErrArg", err)
	}
	op, err := plain.InUnits(3)
	if err != nil {
		return err
	}
	// want is the fold over ranks [lo, hi) of element j.
	want := func(j, lo, hi int) int64 {
		var p int64
		for q := lo; q < hi; q++ {
			p += int64(q + 1 + j%5)
		}
		return 3*p + int64(j%3)
	}
	check := func(what string, got []int64, base, lo, hi int) error {
		if bad.Load() {
			return fmt.Errorf("%s: the op was handed a slice that is not whole units", what)
		}
		for j, v := range got {
			if w := want(base+j, lo, hi); v != w {
				return fmt.Errorf("%s: element %d = %d, want %d", what, base+j, v, w)
			}
		}
		return nil
	}
	vec3, err := dtype.Contiguous(3, dtype.Basic(atomics.Int64))
	if err == nil {
		err = vec3.Commit()
	}
	if err != nil {
		return err
	}
	for _, units := range []int{1, 5, 3000, format.SingleAllreduce/24 + 7} {
		m := 3 * units
		what := func(call string) string { return fmt.Sprintf("%s of %d units on %d ranks", call, units, n) }
		send, recv := unitData(me, m), make([]int64, m)
		if err := comm.Allreduce(c, send, recv, op); err != nil {
			return err
		}
		if err := check(what("Allreduce"), recv, 0, 0, n); err != nil {
			return err
		}
		clear(recv)
		if err := comm.Reduce(c, send, recv, op, n-1); err != nil {
			return err
		}
		if me == n-1 {
			if err := check(what("Reduce"), recv, 0, 0, n); err != nil {
				return err
			}
		}
		if err := comm.Scan(c, send, recv, op); err != nil {
			return err
		}
		if err := check(what("Scan"), recv, 0, 0, me+1); err != nil {
			return err
		}
		if err := comm.Exscan(c, send, recv, op); err != nil {
			return err
		}
		if me > 0 {
			if err := check(what("Exscan"), recv, 0, 0, me); err != nil {
				return err
			}
		}
		if units <= 3000 {
			// Every block of rank me's send is unitData(me, m).
			all := make([]int64, 0, n*m)
			for range n {
				all = append(all, send...)
			}
			if err := comm.ReduceScatterBlock(c, all, recv, op); err != nil {
				return err
			}
			if err := check(what("ReduceScatterBlock"), recv, 0, 0, n); err != nil {
				return err
			}
		}
		// The typed form over 3-element instances, with the op made
		// without units: it applies it to whole instances by itself.
		got := make([]byte, 8*m)
		if err := comm.AllreduceType[int64](c, raw.Bytes(send), got, units, vec3, plain); err != nil {
			return err
		}
		if err := check(what("AllreduceType"), raw.Elems[int64](got), 0, 0, n); err != nil {
			return err
		}
	}
	// Data that is not whole units: an error on every rank.
	x := unitData(me, 4)
	if err := wantAll(comm.ErrType, comm.AllreduceInPlace(c, x, op), "Allreduce of 4 elements in units of 3"); err != nil {
		return err
	}
	// A Scan that fits its staging slot but whose unit is larger than a
	// chunk (it gives the slot back before it fails): the same.
	huge, err := plain.InUnits(1 << 20)
	if err != nil {
		return err
	}
	if err := wantAll(comm.ErrType, comm.ScanInPlace(c, unitData(me, 100), huge), "Scan of 100 elements in units of 2^20"); err != nil {
		return err
	}
	return stillWorks(c)
}

func init() { ranktest.Register("units", checkUnits) }

func TestUserOpUnits(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7} {
		ranktest.RunLocal(t, n, checkUnits)
	}
	ranktest.Run(t, 3, "units")
}

func init() {
	// wakeups: collectives and messages of two ranks where each rank in
	// turn comes late, so the other, with a one-poll spin and no yield
	// phase, sleeps in the futex phase and must be woken. The wakers skip
	// their full fence where the process is registered for the sleepers'
	// heavy fence (internal/raw's LightFence); a wake-up lost to a
	// reordering would cost the sleeper its whole futex timeout (1 s
	// here), which no call whose peer is 3 ms late comes near.
	ranktest.Register("wakeups", func(c *comm.Comm) error {
		for i := range 30 {
			late := c.Rank() == i%2
			for call := range 5 {
				if late {
					time.Sleep(3 * time.Millisecond)
				}
				t0 := time.Now()
				var err error
				x := []int64{int64(i)}
				switch call {
				case 0:
					err = c.Barrier()
				case 1:
					err = comm.Bcast(c, x, i%2)
				case 2:
					err = comm.AllreduceInPlace(c, x, atomics.Sum)
				case 3: // the late rank sends; the other sleeps in Recv
					if late {
						err = comm.SendT(c, x, 1-c.Rank(), 7)
					} else {
						_, err = comm.RecvT(c, x, 1-c.Rank(), 7)
					}
				case 4: // and in Wait, on a request
					var r *comm.Request
					if late {
						r, err = comm.IsendT(c, x, 1-c.Rank(), 8)
					} else {
						r, err = comm.IrecvT(c, x, 1-c.Rank(), 8)
					}
					if err == nil {
						_, err = r.Wait()
					}
				}
				if err != nil {
					return err
				}
				if d := time.Since(t0); !late && d > 500*time.Millisecond {
					return fmt.Errorf("round %d, call %d: rank %d waited %v for a peer 3 ms late: a lost wake-up", i, call, c.Rank(), d)
				}
			}
		}
		return nil
	})
}

// TestWakeupsPair: no wake-up of a collective's or a receive's sleeper is
// lost (see "wakeups"), with ranks as processes.
func TestWakeupsPair(t *testing.T) {
	ranktest.Run(t, 2, "wakeups", ranktest.Configure(func(cfg *launcher.Config) {
		cfg.Env = append(cfg.Env, launcher.EnvWait+"=spin=1,yield=0,sleep=1s")
	}))
}
