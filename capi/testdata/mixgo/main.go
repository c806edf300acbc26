// Command mixgo is the Go half of capi's mixed job (with testdata/c/mixed.c):
// Go and C ranks in one world share windows, load each other's parts, add
// to one word with sync/atomic and C11 atomics, accumulate, lock, send and
// reduce together. The world's rank 0 (this program) reports.
package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sync/atomic"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/win"
)

const (
	words   = 8
	adds    = 1000
	accs    = 200
	locked  = 300
	pairs   = 200
	program = "go"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mixgo:", err)
		os.Exit(1)
	}
}

var failures int

func check(ok bool, format string, args ...any) {
	if !ok {
		fmt.Fprintf(os.Stderr, "mixgo: "+format+"\n", args...)
		failures++
	}
}

// report is testdata/c/check.h's report.
func report(world *comm.Comm, name string) error {
	all := []int32{0}
	if err := comm.Allreduce(world, []int32{int32(failures)}, all, atomics.Sum); err != nil {
		return err
	}
	if world.Rank() == 0 {
		st := "ok"
		if all[0] != 0 {
			st = "FAILED"
		}
		fmt.Println(st, name)
	}
	failures = 0
	return nil
}

func run() error {
	world, err := comm.Init()
	if err != nil {
		return err
	}
	me, n := world.Rank(), world.Size()

	// Every rank's part of one shared window, read by loads.
	w, err := win.AllocateShared(world, words*8, 8, nil)
	if err != nil {
		return err
	}
	mine, err := win.View[int64](w.Local())
	if err != nil {
		return err
	}
	if err := w.LockAll(0); err != nil {
		return err
	}
	for i := range mine {
		mine[i] = int64(me*100 + i)
	}
	if err := w.Sync(); err != nil {
		return err
	}
	if err := world.Barrier(); err != nil {
		return err
	}
	if err := w.Sync(); err != nil {
		return err
	}
	for q := range n {
		seg, err := w.SharedQuery(q)
		if err != nil {
			return err
		}
		v, err := win.View[int64](seg.Bytes)
		if err != nil {
			return err
		}
		for i := range v {
			check(v[i] == int64(q*100+i), "rank %d's word %d is %d", q, i, v[i])
		}
	}
	if err := w.UnlockAll(); err != nil {
		return err
	}
	if err := report(world, "loads of every rank's part"); err != nil {
		return err
	}
	if err := epochs(world, w, mine); err != nil {
		return err
	}

	// One counter window in rank 0: [0] atomic adds by load/store,
	// [1] accumulates, [2] a plain count under an exclusive lock.
	size := 0
	if me == 0 {
		size = 5 * 8
	}
	cw, err := win.AllocateShared(world, size, 8, nil)
	if err != nil {
		return err
	}
	seg, err := cw.SharedQuery(0)
	if err != nil {
		return err
	}
	ctr, err := win.View[int64](seg.Bytes)
	if err != nil {
		return err
	}
	if err := world.Barrier(); err != nil {
		return err
	}
	if err := cw.LockAll(0); err != nil {
		return err
	}
	for range adds {
		atomic.AddInt64(&ctr[0], 1)
	}
	for range accs {
		if err := win.Accumulate(cw, []int64{1}, 0, 1, atomics.Sum); err != nil {
			return err
		}
		if err := cw.Flush(0); err != nil {
			return err
		}
	}
	if err := cw.UnlockAll(); err != nil {
		return err
	}
	for range locked {
		if err := cw.Lock(win.Exclusive, 0, 0); err != nil {
			return err
		}
		v := []int64{0}
		if err := win.GetT(cw, v, 0, 2); err != nil {
			return err
		}
		if err := cw.Flush(0); err != nil {
			return err
		}
		v[0]++
		if err := win.PutT(cw, v, 0, 2); err != nil {
			return err
		}
		if err := cw.Unlock(0); err != nil {
			return err
		}
	}
	for i := range pairs {
		p := []int64{0, 0}
		if i%4 == me%4 {
			if err := cw.Lock(win.Exclusive, 0, 0); err != nil {
				return err
			}
			p[0] = int64(me*1000 + i)
			if err := win.PutT(cw, p[:1], 0, 3); err != nil {
				return err
			}
			if err := cw.Flush(0); err != nil {
				return err
			}
			if err := win.PutT(cw, p[:1], 0, 4); err != nil {
				return err
			}
			if err := cw.Unlock(0); err != nil {
				return err
			}
		} else {
			if err := cw.Lock(win.Shared, 0, 0); err != nil {
				return err
			}
			if err := win.GetT(cw, p, 0, 3); err != nil {
				return err
			}
			if err := cw.Unlock(0); err != nil {
				return err
			}
			check(p[0] == p[1], "a shared lock saw a half-written pair: %d %d", p[0], p[1])
		}
	}
	if err := world.Barrier(); err != nil {
		return err
	}
	if me == 0 {
		check(atomic.LoadInt64(&ctr[0]) == int64(n*adds), "atomic adds: %d, want %d", ctr[0], n*adds)
		check(ctr[1] == int64(n*accs), "accumulates: %d, want %d", ctr[1], n*accs)
		check(ctr[2] == int64(n*locked), "locked increments: %d, want %d", ctr[2], n*locked)
	}
	if err := report(world, "atomics, accumulates and locks of both languages"); err != nil {
		return err
	}

	// A token around the ring and a reduction.
	tok := []int32{0}
	next, prev := (me+1)%n, (me+n-1)%n
	if me == 0 {
		tok[0] = 1
		if err := comm.SendT(world, tok, next, 3); err != nil {
			return err
		}
		if _, err := comm.RecvT(world, tok, prev, 3); err != nil {
			return err
		}
		check(tok[0] == int32(1+n*(n-1)/2), "token %d", tok[0])
	} else {
		if _, err := comm.RecvT(world, tok, prev, 3); err != nil {
			return err
		}
		tok[0] += int32(me)
		if err := comm.SendT(world, tok, next, 3); err != nil {
			return err
		}
	}
	// The token a hundred times more, then a burst (as mixed.c).
	for round := range 100 {
		t := []int32{int32(round)}
		if me == 0 {
			if err := comm.SendT(world, t, next, 4); err != nil {
				return err
			}
			if _, err := comm.RecvT(world, t, prev, 4); err != nil {
				return err
			}
			check(t[0] == int32(round+n*(n-1)/2), "round %d: token %d", round, t[0])
			continue
		}
		if _, err := comm.RecvT(world, t, prev, 4); err != nil {
			return err
		}
		t[0] += int32(me)
		if err := comm.SendT(world, t, next, 4); err != nil {
			return err
		}
	}
	for k := range 20 {
		if err := comm.SendT(world, []float64{float64(me*100 + k)}, next, 7); err != nil {
			return err
		}
	}
	for k := range 20 {
		v := []float64{-1}
		st, err := comm.RecvT(world, v, prev, 7)
		if err != nil {
			return err
		}
		check(v[0] == float64(prev*100+k) && st.Source == prev, "burst %d: %g", k, v[0])
	}
	sum := []float64{0}
	if err := comm.Allreduce(world, []float64{float64(me)}, sum, atomics.Sum); err != nil {
		return err
	}
	check(sum[0] == float64(n*(n-1)/2), "allreduce %g", sum[0])
	if err := report(world, "messages and a reduction across languages"); err != nil {
		return err
	}
	if err := smallColls(world); err != nil {
		return err
	}
	if err := report(world, "small collectives folded in C and in Go give the same bits"); err != nil {
		return err
	}
	if err := loopColls(world); err != nil {
		return err
	}
	if err := report(world, "loops of small rooted collectives across languages"); err != nil {
		return err
	}
	pairColls(world)
	if err := report(world, "pair types across languages, as their halves"); err != nil {
		return err
	}
	if err := cw.Free(); err != nil {
		return err
	}
	if err := w.Free(); err != nil {
		return err
	}
	return comm.Finalize()
}

// epochs mirrors mixed.c's fence, PSCW and epoch-state sections call for
// call (the collective ones must match; the C side checks that its C and
// Go paths share one epoch state, this side the same rules in Go).
func epochs(world *comm.Comm, w *win.Win, mine []int64) error {
	me, n := world.Rank(), world.Size()
	peer, prev := (me+1)%n, (me+n-1)%n
	if err := w.Fence(win.ModeNoPrecede); err != nil {
		return err
	}
	if err := win.PutT(w, []int64{int64(me*10 + 1)}, peer, 0); err != nil {
		return err
	}
	if err := w.Fence(win.ModeNoSucceed); err != nil {
		return err
	}
	check(mine[0] == int64(prev*10+1), "fence: word 0 is %d, want %d", mine[0], prev*10+1)
	from, err := w.Group().Incl(prev)
	if err != nil {
		return err
	}
	to, err := w.Group().Incl(peer)
	if err != nil {
		return err
	}
	for i := range 20 {
		if err := w.Post(from, 0); err != nil {
			return err
		}
		if err := w.Start(to, 0); err != nil {
			return err
		}
		if err := win.PutT(w, []int64{int64(me*10 + 2 + i*1000)}, peer, 1); err != nil {
			return err
		}
		if err := w.Complete(); err != nil {
			return err
		}
		if err := w.Wait(); err != nil {
			return err
		}
		check(mine[1] == int64(prev*10+2+i*1000), "PSCW: word 1 is %d, want %d", mine[1], prev*10+2+i*1000)
	}
	if err := report(world, "fence and PSCW epochs across languages"); err != nil {
		return err
	}

	ok := func(err error, what string) { check(err == nil, "%s: %v", what, err) }
	sync := func(err error, what string) {
		check(errors.Is(err, win.ErrRMASync), "%s: %v, want ErrRMASync", what, err)
	}
	put := func(v int64, disp int) error { return win.PutT(w, []int64{v}, peer, disp) }
	strided := func() error {
		if err := put(int64(me), 4); err != nil {
			return err
		}
		return put(int64(me), 6)
	}
	ok(w.Lock(win.Exclusive, peer, 0), "lock")
	sync(w.LockAll(0), "LockAll inside a lock")
	sync(w.Lock(win.Shared, peer, 0), "lock twice")
	ok(strided(), "strided put in a lock epoch")
	sync(w.Fence(0), "fence inside a lock")
	ok(w.Unlock(peer), "unlock")
	sync(w.Unlock(peer), "unlock twice")
	ok(w.Lock(win.Shared, peer, win.ModeNoCheck), "nocheck lock")
	ok(put(42, 7), "put in a nocheck epoch")
	ok(w.Unlock(peer), "nocheck unlock")
	sync(put(42, 7), "put outside an epoch")
	ok(w.LockAll(0), "LockAll")
	sync(w.Lock(win.Exclusive, peer, 0), "lock inside LockAll")
	ok(strided(), "strided put in LockAll")
	ok(w.Flush(peer), "flush in LockAll")
	ok(w.UnlockAll(), "UnlockAll")
	sync(w.UnlockAll(), "UnlockAll twice")
	sync(w.Flush(peer), "flush outside an epoch")
	if me%2 == 1 {
		ok(w.Lock(win.Shared, peer, 0), "lock before a failing fence")
	}
	sync(w.Fence(0), "fence that fails elsewhere")
	if me%2 == 1 {
		ok(w.Unlock(peer), "unlock after a failing fence")
	}
	ok(w.Fence(0), "fence")
	ok(put(42, 7), "put in a fence epoch")
	sync(w.Lock(win.Shared, peer, 0), "lock in a used fence epoch")
	ok(w.Fence(win.ModeNoSucceed), "closing fence")
	check(mine[4] == int64(prev) && mine[5] == int64(me*100+5) && mine[6] == int64(prev) && mine[7] == 42,
		"words 4..7: %v", mine[4:8])
	if err := report(world, "one epoch state for calls in C and in Go"); err != nil {
		return err
	}

	dup, err := world.Dup()
	if err != nil {
		return err
	}
	ok(dup.Barrier(), "first barrier")
	ok(dup.Barrier(), "second barrier")
	if me%2 == 0 {
		err = dup.Barrier()
	} else {
		err = comm.Bcast(dup, []int32{7}, 0)
	}
	check(err != nil, "a Barrier matched with a Bcast succeeded")
	for range 3 {
		ok(dup.Barrier(), "barrier after the mismatch")
	}
	v := []int32{int32(me)}
	ok(comm.Bcast(dup, v, 1), "bcast after the mismatch")
	check(v[0] == 1, "bcast after the mismatch: %d", v[0])
	ok(dup.Barrier(), "barrier after a bcast")
	if err := dup.Free(); err != nil {
		return err
	}
	// The same in pairs of a Go and a C rank, whose Barrier waits on the
	// flag lines instead of the Barrier line.
	pair, err := world.Split(me%2, me)
	if err != nil {
		return err
	}
	for range 3 {
		ok(pair.Barrier(), "pair barrier")
	}
	if pair.Rank() == 0 {
		err = pair.Barrier()
	} else {
		err = comm.Bcast(pair, []int32{7}, 0)
	}
	check(errors.Is(err, comm.ErrArg), "a pair's Barrier matched with a Bcast: %v", err)
	for range 3 {
		ok(pair.Barrier(), "pair barrier after the mismatch")
	}
	v = []int32{int32(pair.Rank())}
	ok(comm.Bcast(pair, v, 1), "pair bcast after the mismatch")
	check(v[0] == 1, "pair bcast after the mismatch: %d", v[0])
	// Loops of rooted calls, each rank root in turn: a Go root runs a call
	// ahead of a C reader (and checks its signature a call late).
	pr0 := int32(pair.Rank())
	for i := range int32(50) {
		root := int(i % 2)
		b := []int32{-1}
		if pair.Rank() == root {
			b[0] = 1000 + i
		}
		ok(comm.Bcast(pair, b, root), "pair bcast")
		check(b[0] == 1000+i, "pair bcast %d: %d", i, b[0])
		x, s := []int32{pr0 + i}, []int32{0}
		ok(comm.Reduce(pair, x, s, atomics.Sum, root), "pair reduce")
		check(pair.Rank() != root || s[0] == 2*i+1, "pair reduce %d: %d", i, s[0])
		ok(comm.Scan(pair, x, s, atomics.Sum), "pair scan")
		check(s[0] == map[bool]int32{true: i, false: 2*i + 1}[pr0 == 0], "pair scan %d: %d", i, s[0])
	}
	// A count mismatch in a Bcast: the root may learn of it from its next
	// call (a Go root does), the other rank in the Bcast itself.
	err = comm.Bcast(pair, make([]int32, 1+pair.Rank()), 0)
	err2 := pair.Barrier()
	if err == nil {
		check(pair.Rank() == 0 && errors.Is(err2, comm.ErrCount), "a Bcast's count mismatch, found late: %v", err2)
	} else {
		check(errors.Is(err, comm.ErrCount) && err2 == nil, "a Bcast's count mismatch: %v, then %v", err, err2)
	}
	ok(pair.Barrier(), "pair barrier after the count mismatch")
	// A Gather's sender learns of a count mismatch late (it reads
	// nothing): here from Free, which frees all the same.
	pd, err := pair.Dup()
	if err != nil {
		return err
	}
	err = comm.Gather(pd, make([]int32, 1+pair.Rank()), make([]int32, 4), 0)
	check(pair.Rank() == 1 && err == nil || pair.Rank() == 0 && errors.Is(err, comm.ErrCount), "a Gather's count mismatch: %v", err)
	err = pd.Free()
	check(pair.Rank() == 1 && errors.Is(err, comm.ErrEarlierCall) && errors.Is(err, comm.ErrCount) || pair.Rank() == 0 && err == nil, "Free after the Gather: %v", err)
	check(errors.Is(pd.Free(), comm.ErrComm), "a communicator freed with a late error is freed")
	pw, err := win.AllocateShared(pair, 8, 8, nil)
	if err != nil {
		return err
	}
	pr := pair.Rank()
	pmine, _ := win.View[int64](pw.Local())
	ok(pw.Fence(0), "pair fence")
	for i := range int64(20) {
		ok(win.PutT(pw, []int64{int64(100*pr) + i}, 1-pr, 0), "pair put")
		ok(pw.Fence(0), "pair fence")
		check(pmine[0] == int64(100*(1-pr))+i, "pair round %d: %d", i, pmine[0])
		ok(pw.Fence(0), "pair fence")
	}
	if pr == 1 {
		ok(pw.Lock(win.Shared, 0, 0), "pair lock")
	}
	check(errors.Is(pw.Fence(0), win.ErrRMASync), "a pair fence failed by rank 1")
	if pr == 1 {
		ok(pw.Unlock(0), "pair unlock")
	}
	ok(pw.Fence(win.ModeNoSucceed), "pair closing fence")
	if err := pw.Free(); err != nil {
		return err
	}
	if err := pair.Free(); err != nil {
		return err
	}
	return report(world, "a mismatched collective fails everywhere, then the communicator works")
}

// loopColls mirrors mixed.c's loop_colls.
func loopColls(world *comm.Comm) error {
	me, n := world.Rank(), world.Size()
	for i := range 600 {
		root := i % n
		switch {
		case i < 200:
			root = 0
		case i < 400:
			root = n - 1
		}
		v := []int64{-1}
		if me == root {
			v[0] = int64(1000*i + root)
		}
		if err := comm.Bcast(world, v, root); err != nil {
			return err
		}
		check(v[0] == int64(1000*i+root), "bcast %d from %d: %d", i, root, v[0])
	}
	for i := range 200 {
		s := []int64{-1}
		if err := comm.Reduce(world, []int64{int64(me + i)}, s, atomics.Sum, 0); err != nil {
			return err
		}
		if me == 0 {
			check(s[0] == int64(n*i+n*(n-1)/2), "reduce %d: %d", i, s[0])
		}
	}
	// The other small collectives, as mixed.c runs them.
	got, blocks, one := make([]int64, n), make([]int64, n), []int64{0}
	for i := range 200 {
		root := i % n
		one[0] = int64(100000*i + me)
		if err := comm.Gather(world, one, got, root); err != nil {
			return err
		}
		for q := 0; me == root && q < n; q++ {
			check(got[q] == int64(100000*i+q), "gather %d from %d: block %d is %d", i, root, q, got[q])
		}
		for q := range n {
			blocks[q] = int64(100000*i + 100*me + q)
		}
		one[0] = -1
		if err := comm.Scatter(world, blocks, one, root); err != nil {
			return err
		}
		check(one[0] == int64(100000*i+100*root+me), "scatter %d from %d: %d", i, root, one[0])
		one[0] = int64(100000*i + me)
		if err := comm.Allgather(world, one, got); err != nil {
			return err
		}
		for q := range n {
			check(got[q] == int64(100000*i+q), "allgather %d: block %d is %d", i, q, got[q])
		}
		if err := comm.Alltoall(world, blocks, got); err != nil {
			return err
		}
		for q := range n {
			check(got[q] == int64(100000*i+100*q+me), "alltoall %d: block %d is %d", i, q, got[q])
		}
		v, s := []int64{int64(me + i)}, []int64{-1}
		if err := comm.Scan(world, v, s, atomics.Sum); err != nil {
			return err
		}
		check(s[0] == int64((me+1)*i+me*(me+1)/2), "scan %d: %d", i, s[0])
		s[0] = -1
		if err := comm.Exscan(world, v, s, atomics.Sum); err != nil {
			return err
		}
		check(me == 0 && s[0] == -1 || me > 0 && s[0] == int64(me*i+me*(me-1)/2), "exscan %d: %d", i, s[0])
		if err := comm.ReduceScatterBlock(world, blocks, s, atomics.Sum); err != nil {
			return err
		}
		check(s[0] == int64(n*(100000*i+me)+100*n*(n-1)/2), "reduce_scatter_block %d: %d", i, s[0])
	}
	// The count mismatches of mixed.c's loop_colls.
	dd, err := world.Dup()
	if err != nil {
		return err
	}
	if err := dd.Barrier(); err != nil {
		return err
	}
	c := 1
	if me == n-1 {
		c = 2
	}
	sb, rb := make([]int64, n*c), make([]int64, n*c)
	err = comm.Allgather(dd, sb[:c], rb)
	check(errors.Is(err, comm.ErrCount), "an Allgather's count mismatch: %v", err)
	err = comm.Alltoall(dd, sb, rb)
	check(errors.Is(err, comm.ErrCount), "an Alltoall's count mismatch: %v", err)
	err = comm.ReduceScatterBlock(dd, sb, rb[:c], atomics.Sum)
	check(errors.Is(err, comm.ErrCount), "a ReduceScatterBlock's count mismatch: %v", err)
	one[0] = int64(me)
	err = comm.Allgather(dd, one, got)
	check(err == nil && got[n-1] == int64(n-1), "allgather after the mismatches: %v", err)
	return dd.Free()
}

// smallColls mirrors mixed.c's small_colls: the same calls, the same
// values, the same results gathered and compared bit for bit.
func smallColls(world *comm.Comm) error {
	me, n := world.Rank(), world.Size()
	d := []float64{0, float64(me) + 0.25, float64(me) * 1.5, 0.1 * float64(me+1)}
	if me == 0 {
		d[0] = math.Copysign(0, -1)
	}
	if me == 1 {
		d[1] = math.Float64frombits(0x7FF8000000000123)
	}
	if me == n-1 {
		d[2] = math.Inf(-1)
	}
	sum, mn, mx, red := make([]float64, 4), make([]float64, 4), slices.Clone(d), slices.Clone(d)
	steps := []error{
		comm.Allreduce(world, d, sum, atomics.Sum),
		comm.Allreduce(world, d, mn, atomics.Min),
		comm.AllreduceInPlace(world, mx, atomics.Max),
	}
	f := []float32{float32(me) - 0.5}
	if me == 1 {
		f[0] = math.Float32frombits(0x7FC00123)
	}
	fs, fm := []float32{0}, []float32{0}
	steps = append(steps, comm.Allreduce(world, f, fs, atomics.Sum), comm.Allreduce(world, f, fm, atomics.Max))
	pr, s8r, ur, lr := []int32{0}, []int8{0}, []uint16{0}, make([]int32, 3)
	lx := []int32{int32(me % 2)}
	steps = append(steps,
		comm.Allreduce(world, []int32{int32(me+1) * 100000}, pr, atomics.Prod),
		comm.Allreduce(world, []int8{100}, s8r, atomics.Sum),
		comm.Allreduce(world, []uint16{uint16(300 + me)}, ur, atomics.Prod),
		comm.Allreduce(world, lx, lr[0:1], atomics.Lxor))
	lx[0] = 0
	if me != 1 {
		lx[0] = 1
	}
	steps = append(steps, comm.Allreduce(world, lx, lr[1:2], atomics.Land), comm.Allreduce(world, lx, lr[2:3], atomics.Lor))
	if me == n-1 {
		steps = append(steps, comm.ReduceInPlace(world, red, atomics.Sum, n-1))
	} else {
		steps = append(steps, comm.Reduce(world, d, red, atomics.Sum, n-1))
	}
	bc := make([]int64, 5)
	if me == 1%n {
		for i := range bc {
			bc[i] = -int64(i) * 1000003
		}
	}
	steps = append(steps, comm.Bcast(world, bc, 1%n))
	if err := errors.Join(steps...); err != nil {
		return err
	}
	if me == n-1 {
		check(slices.Equal(bits(red), bits(sum)), "Reduce and Allreduce differ")
	}
	r := make([]uint64, 25)
	copy(r[0:], bits(sum))
	copy(r[4:], bits(mn))
	copy(r[8:], bits(mx))
	r[12], r[13] = uint64(math.Float32bits(fs[0])), uint64(math.Float32bits(fm[0]))
	r[14], r[15], r[16] = uint64(uint32(pr[0])), uint64(uint8(s8r[0])), uint64(ur[0])
	for i := range 3 {
		r[17+i] = uint64(uint32(lr[i]))
	}
	for i, v := range bc {
		r[20+i] = uint64(v)
	}
	check(math.Signbit(mn[0]) && !math.Signbit(mx[0]), "signed zeros: min %g max %g", mn[0], mx[0])
	check(r[5] == 0x7FF8000000000001 && r[9] == r[5], "min, max with a NaN: %#x %#x", r[5], r[9])
	check(s8r[0] == int8(100*n) && bc[4] == -4000012, "int8 sum %d, bcast %d", s8r[0], bc[4])
	all := make([]uint64, 25*n)
	if err := comm.Allgather(world, r, all); err != nil {
		return err
	}
	for q := range n {
		for i := range 25 {
			check(all[q*25+i] == r[i], "rank %d's result %d: %#x, mine %#x", q, i, all[q*25+i], r[i])
		}
	}
	return nil
}

func bits(v []float64) []uint64 {
	b := make([]uint64, len(v))
	for i, x := range v {
		b[i] = math.Float64bits(x)
	}
	return b
}

// pairColls moves pair types where the C ranks pass their equivalents
// (mixed.c's pair_colls): a DoubleInt broadcast (MPI_DOUBLE_INT in C:
// packed without the struct's padding), TwoInt gathered (2 MPI_INT a
// rank in C), and a MaxLoc over DoubleInt.
func pairColls(world *comm.Comm) {
	me, n := world.Rank(), world.Size()
	b := []atomics.DoubleInt{{}, {}}
	if me == 1 {
		b = []atomics.DoubleInt{{V: 2.5, I: 7}, {V: -1, I: 8}}
	}
	err := comm.Bcast(world, b, 1)
	check(err == nil && b[0] == atomics.DoubleInt{V: 2.5, I: 7} && b[1] == atomics.DoubleInt{V: -1, I: 8}, "pair bcast: %v %v", b, err)
	all := make([]atomics.TwoInt, n)
	err = comm.Allgather(world, []atomics.TwoInt{{V: int32(me), I: int32(10 * me)}}, all)
	for q, p := range all {
		check(err == nil && p == atomics.TwoInt{V: int32(q), I: int32(10 * q)}, "pair allgather: rank %d's %v, %v", q, p, err)
	}
	ml := []atomics.DoubleInt{{}}
	err = comm.Allreduce(world, []atomics.DoubleInt{{V: float64(me % 2), I: int32(me)}}, ml, atomics.MaxLoc)
	check(err == nil && ml[0] == atomics.DoubleInt{V: 1, I: 1}, "maxloc: %v %v", ml, err)
}
