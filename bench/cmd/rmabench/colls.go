package main

import (
	"fmt"
	"strings"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
)

// The collective rows, the twins of bench/c/collrows.h: the same calls on
// the same doubles, the same inputs and the same answers checked. Each
// collective is measured two ways: NAME is a loop of back-to-back calls
// (span kind: first rank's start to last rank's end), NAME_sync single
// calls separated by a barrier (separated kind: the slowest rank's time inside
// the calls).

type collOp int

const (
	collAllreduce collOp = iota
	collBcast
	collReduce
	collGather
	collScatter
	collAllgather
	collAlltoall
	collScan
	collReduceScatterBlock
	collIallreduce     // Iallreduce then Wait: Allreduce's data
	collIallreduceTest // Iallreduce then Test until it completes
)

type collRow struct {
	name string
	op   collOp
	m    int // doubles per rank (per block for the block calls)
}

const collBig = 131072 // 1 MiB of doubles

var collRows = []collRow{
	{"allreduce_8", collAllreduce, 1},
	{"allreduce_1m", collAllreduce, collBig},
	{"bcast_8", collBcast, 1},
	{"bcast_1m", collBcast, collBig},
	{"reduce_8", collReduce, 1},
	{"gather_8", collGather, 1},
	{"scatter_8", collScatter, 1},
	{"allgather_8", collAllgather, 1},
	{"alltoall_8", collAlltoall, 1},
	{"scan_8", collScan, 1},
	{"reduce_scatter_block_8", collReduceScatterBlock, 1},
	{"iallreduce_8", collIallreduce, 1},
	{"iallreduce_test_8", collIallreduceTest, 1},
}

func init() { table = append(table, collMeas()...) }

// collMeas is every collective row in both methods, then barrier_world and
// barrier_subcomm.
func collMeas() []meas {
	var ms []meas
	for i, r := range collRows {
		ms = append(ms,
			meas{name: r.name, kind: span, arg: i, setup: collSetup, body: collLoop, teardown: collTeardown},
			meas{name: r.name + "_sync", kind: separated, arg: i, setup: collSetup, body: collSync, teardown: collTeardown})
	}
	// The world's Barrier again, next to the split one: the host's
	// cross-core latency drifts within a run, so the pair is compared
	// measured side by side.
	return append(ms, meas{name: "barrier_world", kind: all, body: barrierBody},
		meas{name: "barrier_subcomm", kind: all, setup: subcommSetup, body: subcommBarrier, teardown: subcommTeardown})
}

func collCall(c *ctx, r *collRow) error {
	w, m := c.c, r.m
	switch r.op {
	case collAllreduce:
		return comm.Allreduce(w, c.cs[:m], c.cr[:m], atomics.Sum)
	case collBcast:
		return comm.Bcast(w, c.cs[:m], 0)
	case collReduce:
		return comm.Reduce(w, c.cs[:m], c.cr[:m], atomics.Sum, 0)
	case collGather:
		return comm.Gather(w, c.cs[:m], c.cr[:c.size*m], 0)
	case collScatter:
		return comm.Scatter(w, c.cs[:c.size*m], c.cr[:m], 0)
	case collAllgather:
		return comm.Allgather(w, c.cs[:m], c.cr[:c.size*m])
	case collAlltoall:
		return comm.Alltoall(w, c.cs[:c.size*m], c.cr[:c.size*m])
	case collScan:
		return comm.Scan(w, c.cs[:m], c.cr[:m], atomics.Sum)
	case collReduceScatterBlock:
		return comm.ReduceScatterBlock(w, c.cs[:c.size*m], c.cr[:m], atomics.Sum)
	case collIallreduce:
		q, err := comm.Iallreduce(w, c.cs[:m], c.cr[:m], atomics.Sum)
		if err != nil {
			return err
		}
		_, err = q.Wait()
		return err
	case collIallreduceTest:
		q, err := comm.Iallreduce(w, c.cs[:m], c.cr[:m], atomics.Sum)
		for done := false; err == nil && !done; {
			_, done, err = q.Test()
		}
		return err
	}
	return fmt.Errorf("unknown collective %d", r.op)
}

func (r *collRow) sendLen(n int) int {
	switch r.op {
	case collScatter, collAlltoall, collReduceScatterBlock:
		return n * r.m
	}
	return r.m
}

func (r *collRow) recvLen(n int) int {
	switch r.op {
	case collBcast:
		return 0
	case collGather, collAllgather, collAlltoall:
		return n * r.m
	}
	return r.m
}

func collInput(rank, i int, stamp float64) float64 {
	return stamp + 1000*float64(rank) + float64(i%977)
}

func (r *collRow) receives(rank int) bool {
	return !((r.op == collReduce || r.op == collGather) && rank != 0)
}

func (r *collRow) expect(rank, n, i int, stamp float64) float64 {
	sum := 0.0
	switch r.op {
	case collAllreduce, collIallreduce, collIallreduceTest, collReduce:
		for q := range n {
			sum += collInput(q, i, stamp)
		}
		return sum
	case collBcast:
		return collInput(0, i, stamp)
	case collGather, collAllgather:
		return collInput(i/r.m, i%r.m, stamp)
	case collScatter:
		return collInput(0, rank*r.m+i, stamp)
	case collAlltoall:
		return collInput(i/r.m, rank*r.m+i%r.m, stamp)
	case collScan:
		for q := range rank + 1 {
			sum += collInput(q, i, stamp)
		}
		return sum
	case collReduceScatterBlock:
		for q := range n {
			sum += collInput(q, rank*r.m+i, stamp)
		}
		return sum
	}
	return -1
}

const collPoison = -1.0

func collPrepare(c *ctx, r *collRow, stamp float64) {
	for i := range r.sendLen(c.size) {
		c.cs[i] = collInput(c.rank, i, stamp)
		if r.op == collBcast && c.rank != 0 {
			c.cs[i] = collPoison
		}
	}
	for i := range r.recvLen(c.size) {
		c.cr[i] = collPoison
	}
}

func collVerify(c *ctx, m *meas, stamp float64) {
	r := &collRows[m.arg]
	got := c.cr[:r.recvLen(c.size)]
	if r.op == collBcast {
		got = c.cs[:r.m]
	}
	if !r.receives(c.rank) {
		return
	}
	for i, g := range got {
		if want := r.expect(c.rank, c.size, i, stamp); g != want {
			fmt.Printf("INFO check %s WRONG on rank %d: element %d is %g, want %g\n", m.name, c.rank, i, g, want)
			c.wrong++
			return
		}
	}
}

func collSetup(c *ctx, m *meas) error {
	if strings.TrimSuffix(m.name, "_sync") != collRows[m.arg].name {
		return fmt.Errorf("row %s is not the collective %s", m.name, collRows[m.arg].name)
	}
	if c.cs == nil {
		n := max(collBig, c.size)
		c.cs, c.cr = make([]float64, n), make([]float64, n)
	}
	c.wrong = 0
	collPrepare(c, &collRows[m.arg], 1)
	return nil
}

// collTeardown checks the answer of the last timed call, then makes one
// more call with fresh inputs and poisoned outputs; rank 0 says whether
// every rank got it right.
func collTeardown(c *ctx, m *meas) error {
	r := &collRows[m.arg]
	collVerify(c, m, 1)
	collPrepare(c, r, 7)
	if err := collCall(c, r); err != nil {
		return err
	}
	collVerify(c, m, 7)
	in, out := []int64{c.wrong}, []int64{0}
	if err := comm.Reduce(c.c, in, out, atomics.Sum, 0); err != nil {
		return err
	}
	if c.rank == 0 {
		verdict := "ok"
		if out[0] != 0 {
			verdict = "WRONG"
		}
		fmt.Printf("INFO check %s %s\n", m.name, verdict)
	}
	return nil
}

func collLoop(c *ctx, m *meas, k int64) error {
	r := &collRows[m.arg]
	for range k {
		if err := collCall(c, r); err != nil {
			return err
		}
	}
	return nil
}

func collSync(c *ctx, m *meas, k int64) error {
	r := &collRows[m.arg]
	sum := int64(0)
	for range k {
		if err := c.c.Barrier(); err != nil {
			return err
		}
		t0 := now()
		if err := collCall(c, r); err != nil {
			return err
		}
		sum += now() - t0
	}
	c.syncNS = sum
	return nil
}

// subcommSetup makes barrier_subcomm's communicator: the world's ranks in
// reverse order, split off (MPI_Comm_split). Its answer (subcommTeardown):
// each rank's place in the split, then an Allgather over it of the world
// ranks, which must come back reversed.
func subcommSetup(c *ctx, _ *meas) error {
	sub, err := c.c.Split(0, c.size-c.rank)
	if err != nil {
		return err
	}
	c.sub = sub
	return nil
}

func subcommBarrier(c *ctx, _ *meas, k int64) error {
	for range k {
		if err := c.sub.Barrier(); err != nil {
			return err
		}
	}
	return nil
}

func subcommTeardown(c *ctx, m *meas) error {
	var wrong int64
	if r, n := c.sub.Rank(), c.sub.Size(); r != c.size-1-c.rank || n != c.size {
		fmt.Printf("INFO check %s WRONG on rank %d: rank %d of %d in the split\n", m.name, c.rank, r, n)
		wrong++
	} else {
		all := make([]int64, n)
		if err := comm.Allgather(c.sub, []int64{int64(c.rank)}, all); err != nil {
			return err
		}
		for q, w := range all {
			if w != int64(c.size-1-q) {
				if wrong == 0 {
					fmt.Printf("INFO check %s WRONG on rank %d: rank %d of the split is world rank %d, want %d\n", m.name, c.rank, q, w, c.size-1-q)
				}
				wrong++
			}
		}
	}
	if err := reportCheck(c, m.name, wrong); err != nil {
		return err
	}
	err := c.sub.Free()
	c.sub = nil
	return err
}
