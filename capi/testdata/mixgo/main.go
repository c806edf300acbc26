// Command mixgo is the Go half of capi's mixed job (with testdata/c/mixed.c):
// Go and C ranks in one world share windows, load each other's parts, add
// to one word with sync/atomic and C11 atomics, accumulate, lock, send and
// reduce together. The world's rank 0 (this program) reports.
package main

import (
	"fmt"
	"os"
	"sync/atomic"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/win"
)

const (
	words   = 8
	adds    = 1000
	accs    = 200
	locked  = 50
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

	// One counter window in rank 0: [0] atomic adds by load/store,
	// [1] accumulates, [2] a plain count under an exclusive lock.
	size := 0
	if me == 0 {
		size = 3 * 8
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
	sum := []float64{0}
	if err := comm.Allreduce(world, []float64{float64(me)}, sum, atomics.Sum); err != nil {
		return err
	}
	check(sum[0] == float64(n*(n-1)/2), "allreduce %g", sum[0])
	if err := report(world, "messages and a reduction across languages"); err != nil {
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
