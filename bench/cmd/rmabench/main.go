// Command rmabench is the Go twin of bench/c/rmabench.c: the same
// measurements, the same timing plan and statistics, the same output lines,
// on shmrun's API, so that bench/run can put shmrun beside Open MPI and MPICH.
//
//	shmrun -n 2 --bind-to core rmabench [--quick] [--list] [--nodes] all | NAME...
//
// It prints "RESULT <name> <median_ns_per_op> <min_ns> <max_ns> <iterations>"
// per measurement and "INFO ..." lines describing the run. See benchutil.h for
// the method: rank 0 works against rank 1 while the others idle in the
// runtime (origin rows), or every rank works (all and span rows); batches of
// k operations last at least the plan's batch length; the median of per-round
// medians is reported, min and max over every batch.
package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/win"
)

const (
	cacheLine = 64
	page      = 4096
	kib       = 1024
	mib       = 1024 * kib

	offPut     = 0
	offAcc     = 64
	offFop     = 128
	offCAS     = 192
	offGAcc    = 256
	offTouch   = 320
	offAck     = 384
	offContend = 4096
)

type plan struct {
	rounds, batches int
	batchNS         int64
	slowBatches     int
}

var (
	planQuick = plan{3, 7, 1_000_000, 1}
	planFull  = plan{5, 21, 2_000_000, 7}
)

type kind int

const (
	origin    kind = iota // rank 0 works, the others idle in the barrier
	all                   // every rank runs the body, rank 0's time
	span                  // every rank runs the body, first start to last end
	separated             // every rank runs the body, which times its calls alone
)

type ctx struct {
	c       *comm.Comm
	rank    int
	size    int
	w       *win.Win
	base    []byte // my part
	part0   []byte // rank 0's part
	src     []byte // rank 0's pre-faulted put source
	gOrigin *comm.Group
	gTarget *comm.Group
	seq     int64
	casFail int
	ops     int64           // operations of the row this rank made (atomic rows' answers)
	cs, cr  []float64       // collective rows: send and receive buffers
	syncNS  int64           // sync rows: this rank's time inside the calls
	sub     *comm.Comm      // barrier_subcomm's communicator
	wrong   int64           // answers found wrong on this rank (collective, p2p)
	ps, pr  []byte          // p2p rows: send and receive buffers
	pseq    int64           // p2p rows: operations so far, in step in a pair
	preq    []*comm.Request // msgrate_8, bw_SIZE: the window's requests
	pers    []*comm.Request // msgrate_8_persistent: its persistent requests
	psts    []comm.Status   // the statuses of either
	stencil *stencil        // stencil_4k's window and parts
	//lint:ignore U1000 empty, and so unused, under -tags mpi (backend_mpi.go)
	shmRows // the state of the rows only the shared-memory backend runs (backend.go)
}

type meas struct {
	name     string
	kind     kind
	need2    bool
	fullOnly bool
	arg      int
	msgs     int // messages per timed operation (p2p rows report per message); 0: 1
	setup    func(*ctx, *meas) error
	body     func(*ctx, *meas, int64) error
	teardown func(*ctx, *meas) error
}

func main() { os.Exit(run()) }

// nodeRows are the rows --nodes offers: those that reach other ranks only
// through the API (RMA, messages, collectives), so that the ranks may be
// on different nodes; the main window is then Allocate's, not shared.
// bench/run runs them on two pseudo-nodes under MPICH.
var nodeRows = []string{"put8_flush", "get8_flush", "put_bw_4096", "put_bw_65536", "put_bw_1048576",
	"acc_sum_i64", "fetch_and_op_i64", "lock_unlock_excl", "barrier", "allreduce_8", "allreduce_1m",
	"bcast_8", "pingpong_8", "pingpong_4k", "pingpong_64k", "pingpong_1m", "bw_1m", "msgrate_8", "cgo_call"}

func run() int {
	world, err := comm.Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, "rmabench:", err)
		return 1
	}
	// RMABENCH_CPUPROFILE=FILE: each rank writes a CPU profile to
	// FILE.RANK (a developer's tool; no row needs it).
	if f := os.Getenv("RMABENCH_CPUPROFILE"); f != "" {
		stop, err := startProfile(fmt.Sprintf("%s.%d", f, world.Rank()))
		if err != nil {
			fmt.Fprintln(os.Stderr, "rmabench:", err)
			return 1
		}
		defer stop()
	}
	code := bench(world)
	if err := comm.Finalize(); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, "rmabench:", err)
		return 1
	}
	return code
}

func bench(world *comm.Comm) int {
	c := &ctx{c: world, rank: world.Rank(), size: world.Size()}
	p := planFull
	quick, list, every, nodes := false, false, false, false
	sel := map[string]bool{}
	for _, a := range os.Args[1:] {
		switch a {
		case "--quick":
			quick = true
		case "--nodes":
			nodes = true
		case "--list":
			list = true
		case "all":
			every = true
		default:
			if !slices.ContainsFunc(table, func(m meas) bool { return m.name == a }) {
				if c.rank == 0 {
					fmt.Fprintf(os.Stderr, "rmabench: unknown measurement %s\n", a)
				}
				return 2
			}
			sel[a] = true
		}
	}
	if nodes {
		for name := range sel {
			if !slices.Contains(nodeRows, name) {
				if c.rank == 0 {
					fmt.Fprintf(os.Stderr, "rmabench: %s is not a --nodes row (%s)\n", name, strings.Join(nodeRows, " "))
				}
				return 2
			}
		}
	}
	if list {
		if c.rank == 0 {
			for _, m := range table {
				if !(quick && m.fullOnly) && (!nodes || slices.Contains(nodeRows, m.name)) {
					fmt.Println(m.name)
				}
			}
		}
		return 0
	}
	if quick {
		p = planQuick
	}
	var chosen []*meas
	bwmax := 0
	for i := range table {
		m := &table[i]
		if (every && !(quick && m.fullOnly) && (!nodes || slices.Contains(nodeRows, m.name))) || sel[m.name] {
			if m.need2 && c.size < 2 {
				if c.rank == 0 {
					fmt.Fprintf(os.Stderr, "rmabench: %s needs at least 2 ranks\n", m.name)
				}
				continue
			}
			chosen = append(chosen, m)
			if m.name[:min(6, len(m.name))] == "put_bw" {
				bwmax = max(bwmax, m.arg)
			}
		}
	}
	if len(chosen) == 0 {
		if c.rank == 0 {
			fmt.Fprintln(os.Stderr, "usage: shmrun -n N rmabench [--quick] [--list] [--nodes] all | NAME...")
		}
		return 2
	}
	var err error
	if c.rank == 0 {
		fmt.Printf("INFO library %s (Go %s)\n", library, strings.TrimPrefix(goVersion(), "go"))
		fmt.Printf("INFO ranks %d\n", c.size)
		mode := "full"
		if quick {
			mode = "quick"
		}
		fmt.Printf("INFO mode %s rounds %d batches %d batch_ns %d\n", mode, p.rounds, p.batches, p.batchNS)
	}
	part := 2 * page
	if c.rank == 0 {
		part = offContend + (c.size*cacheLine+page-1)/page*page
	}
	if c.rank == 1 && bwmax > part {
		part = bwmax
	}
	if nodes {
		// The ranks may be on different nodes: a window of MPI_Win_allocate,
		// and no load/store view of rank 0's part.
		c.w, err = win.Allocate(world, part, 1, nil)
	} else {
		c.w, err = win.AllocateShared(world, part, 1, nil)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "rmabench:", err)
		return 1
	}
	c.base = c.w.Local()
	clear(c.base) // pre-fault my part
	if !nodes {
		seg, _ := c.w.SharedQuery(0)
		c.part0 = seg.Bytes
	} else {
		// Say how the ranks share nodes (SplitType(TypeShared)).
		node, err := world.SplitType(comm.TypeShared, 0, nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, "rmabench:", err)
			return 1
		}
		if c.rank == 0 {
			fmt.Printf("INFO window Allocate (--nodes); rank 0's node holds %d of %d ranks\n", node.Size(), c.size)
		}
		if err := node.Free(); err != nil {
			fmt.Fprintln(os.Stderr, "rmabench:", err)
			return 1
		}
	}
	if c.rank == 0 {
		c.src = make([]byte, max(bwmax, page))
		for i := range c.src {
			c.src[i] = 0x5a
		}
	}
	if c.size > 1 {
		g := world.Group()
		c.gOrigin, _ = g.Incl(0)
		c.gTarget, _ = g.Incl(1)
	}
	printAffinity(c)
	if err := world.Barrier(); err != nil {
		return 1
	}
	for _, m := range chosen {
		if err := runOne(c, m, p); err != nil {
			fmt.Fprintf(os.Stderr, "rmabench: %s on rank %d: %v\n", m.name, c.rank, err)
			return 1
		}
	}
	if err := c.w.Free(); err != nil {
		fmt.Fprintln(os.Stderr, "rmabench:", err)
		return 1
	}
	return 0
}

func now() int64 { return time.Now().UnixNano() }

// timedBatch runs one batch of k operations; meaningful on rank 0.
func timedBatch(c *ctx, m *meas, k int64) (int64, error) {
	if err := c.c.Barrier(); err != nil {
		return 0, err
	}
	works := m.kind != origin || c.rank == 0
	t0 := now()
	if works {
		if err := m.body(c, m, k); err != nil {
			return 0, err
		}
	}
	t1 := now()
	if works {
		c.ops += k
	}
	switch m.kind {
	case span:
		in, out := []int64{-t0, t1}, []int64{0, 0}
		err := comm.Reduce(c.c, in, out, atomics.Max, 0)
		return out[0] + out[1], err // latest end - earliest start
	case separated:
		in, out := []int64{c.syncNS}, []int64{0}
		err := comm.Reduce(c.c, in, out, atomics.Max, 0)
		return out[0], err
	}
	return t1 - t0, nil
}

func runOne(c *ctx, m *meas, p plan) error {
	c.ops = 0
	if m.setup != nil {
		if err := m.setup(c, m); err != nil {
			return err
		}
	}
	if err := c.c.Barrier(); err != nil {
		return err
	}
	if _, err := timedBatch(c, m, 1); err != nil {
		return err
	}
	k, t := int64(1), int64(0)
	for {
		t1, err := timedBatch(c, m, k)
		if err != nil {
			return err
		}
		t2, err := timedBatch(c, m, k)
		if err != nil {
			return err
		}
		t = min(t1, t2)
		next := int64(0)
		if c.rank == 0 && t < p.batchNS {
			next = grow(k, t, p.batchNS)
		}
		v := []int64{next}
		if err := comm.Bcast(c.c, v, 0); err != nil {
			return err
		}
		next = v[0]
		if next == 0 {
			break
		}
		k = next
	}
	batches := int64(p.batches)
	if c.rank == 0 && k == 1 && t >= 20*p.batchNS && p.batches > p.slowBatches {
		batches = int64(p.slowBatches)
	}
	bv := []int64{batches}
	if err := comm.Bcast(c.c, bv, 0); err != nil {
		return err
	}
	p.batches = int(bv[0])
	per := int64(max(m.msgs, 1))
	v := make([]float64, p.rounds*p.batches)
	for i := range v {
		t, err := timedBatch(c, m, k)
		if err != nil {
			return err
		}
		v[i] = float64(t) / float64(k) / float64(per)
	}
	if err := c.c.Barrier(); err != nil {
		return err
	}
	if m.teardown != nil {
		if err := m.teardown(c, m); err != nil {
			return err
		}
	}
	if err := c.c.Barrier(); err != nil {
		return err
	}
	if c.rank == 0 {
		report(m.name, p, v, k*per)
	}
	return nil
}

// grow is benchutil.h's plan_grow.
func grow(k, elapsed, target int64) int64 {
	if elapsed <= 0 {
		return k * 64
	}
	next := int64(float64(k)*1.25*float64(target)/float64(elapsed)) + 1
	return min(max(next, 2*k), 64*k)
}

func median(v []float64) float64 {
	sort.Float64s(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

func report(name string, p plan, v []float64, k int64) {
	lo, hi := slices.Min(v), slices.Max(v)
	meds := make([]float64, p.rounds)
	for r := range p.rounds {
		meds[r] = median(slices.Clone(v[r*p.batches : (r+1)*p.batches]))
	}
	fmt.Printf("RESULT %s %.2f %.2f %.2f %d\n", name, median(meds), lo, hi, int64(len(v))*k)
	shorter := 0
	for _, x := range v {
		if x*float64(k) < float64(p.batchNS)/2 {
			shorter++
		}
	}
	if shorter > len(v)/2 {
		fmt.Printf("INFO warning %s: %d of %d batches shorter than %d ns\n", name, shorter, len(v), p.batchNS/2)
	}
}

func printAffinity(c *ctx) {
	cpus := affinity()
	all := make([]int64, c.size)
	if err := comm.Gather(c.c, []int64{int64(cpus)}, all, 0); err != nil || c.rank != 0 {
		return
	}
	var parts []string
	for r, a := range all {
		parts = append(parts, fmt.Sprintf("%d:%s", r, cpuList(a)))
	}
	fmt.Printf("INFO affinity %s\n", strings.Join(parts, " "))
	fmt.Printf("INFO window_backing %s\n", backing(c.base))
}

// startProfile writes a CPU profile to name until stop is called.
func startProfile(name string) (stop func(), err error) {
	f, err := os.Create(name)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
