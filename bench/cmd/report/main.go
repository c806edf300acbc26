// Command report turns the rows that bench/run collects into
// bench/RESULTS.md and two SVG plots (bandwidth against message size, and
// small-operation latencies), with shmrun beside Open MPI, MPICH and the
// plain-C limit.
//
//	go run ./bench/cmd/report -in results.txt -out bench/ [-cmd "bench/run"]
//
// Input lines: "# key: value" metadata, "<runtime> <name> <median> <min>
// <max> <iterations>" rows (ns per operation), or "<runtime> <name>
// TIMEOUT|FAILED".
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

type row struct {
	med, lo, hi float64
	iters       int64
	status      string // "" or TIMEOUT/FAILED/WRONG
	lost        string // repetitions without a number, "1 of 3 TIMEOUT"
}

type results struct {
	meta []string
	rows map[string]map[string]row // runtime -> name -> row, repetitions merged
	reps map[string]map[string]int // runtime -> name -> repetitions measured
}

func main() {
	in := flag.String("in", "", "results file written by bench/run")
	out := flag.String("out", "bench", "directory for RESULTS.md and the SVG plots")
	cmd := flag.String("cmd", "bench/run", "the command that produced the results (quoted in RESULTS.md)")
	flag.Parse()
	if *in == "" {
		fmt.Fprintln(os.Stderr, "usage: report -in FILE [-out DIR] [-cmd CMD]")
		os.Exit(2)
	}
	r, err := read(*in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
	if err := write(r, *out, *cmd); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

func read(path string) (*results, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	all := map[string]map[string][]row{}
	seen := map[string]bool{}
	r := &results{rows: map[string]map[string]row{}, reps: map[string]map[string]int{}}
	sc := bufio.NewScanner(f)
	for ln := 1; sc.Scan(); ln++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if m, ok := strings.CutPrefix(line, "#"); ok {
			if m = strings.TrimSpace(m); !seen[m] {
				seen[m] = true
				r.meta = append(r.meta, m)
			}
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 {
			return nil, fmt.Errorf("%s:%d: %q: want runtime, name and values", path, ln, line)
		}
		if all[f[0]] == nil {
			all[f[0]] = map[string][]row{}
		}
		if len(f) == 3 {
			all[f[0]][f[1]] = append(all[f[0]][f[1]], row{status: f[2]})
			continue
		}
		if len(f) != 6 {
			return nil, fmt.Errorf("%s:%d: %q: want 6 fields", path, ln, line)
		}
		var x row
		var errs [4]error
		x.med, errs[0] = strconv.ParseFloat(f[2], 64)
		x.lo, errs[1] = strconv.ParseFloat(f[3], 64)
		x.hi, errs[2] = strconv.ParseFloat(f[4], 64)
		x.iters, errs[3] = strconv.ParseInt(f[5], 10, 64)
		for _, e := range errs {
			if e != nil {
				return nil, fmt.Errorf("%s:%d: %v", path, ln, e)
			}
		}
		all[f[0]][f[1]] = append(all[f[0]][f[1]], x)
	}
	for rt, byName := range all {
		r.rows[rt], r.reps[rt] = map[string]row{}, map[string]int{}
		for name, xs := range byName {
			r.rows[rt][name], r.reps[rt][name] = merge(xs)
		}
	}
	r.markWrong()
	return r, sc.Err()
}

// markWrong gives every row whose answers were checked wrong in any run
// ("# <runtime><suffix>: check <name> WRONG ...") the status WRONG: a
// runtime that moves the wrong data may well be fast, and its time must
// not enter a cell, a ratio or a target.
func (r *results) markWrong() {
	for _, m := range r.meta {
		run, what, found := strings.Cut(m, ": check ")
		f := strings.Fields(what)
		if !found || len(f) < 2 || f[1] != "WRONG" {
			continue
		}
		for rt, byName := range r.rows {
			// bench/run names a run by its runtime and the suffix of
			// its rows ("mpich_n8": the rows NAME_n8 of mpich).
			sfx, ok := strings.CutPrefix(run, rt)
			if !ok || sfx != "" && sfx[0] != '_' {
				continue
			}
			if x, ok := byName[f[0]+sfx]; ok {
				x.status = "WRONG"
				byName[f[0]+sfx] = x
			}
		}
	}
}

// merge combines the repetitions of one measurement: the median of their
// medians, the min of their mins, the max of their maxes. A measurement with
// no numeric repetition keeps the status of its last one; one with some
// says how many repetitions failed, so that a run that timed out twice in
// three shows as more than its one good number.
func merge(xs []row) (row, int) {
	var meds []float64
	m := row{lo: math.Inf(1), hi: math.Inf(-1)}
	lost, why := 0, ""
	for _, x := range xs {
		if x.status != "" {
			lost, why = lost+1, x.status
			continue
		}
		meds = append(meds, x.med)
		m.lo, m.hi = min(m.lo, x.lo), max(m.hi, x.hi)
		m.iters += x.iters
	}
	if len(meds) == 0 {
		return xs[len(xs)-1], 0
	}
	if lost > 0 {
		m.lost = fmt.Sprintf("%d of %d %s", lost, len(xs), why)
	}
	sort.Float64s(meds)
	if n := len(meds); n%2 == 1 {
		m.med = meds[n/2]
	} else {
		m.med = (meds[n/2-1] + meds[n/2]) / 2
	}
	return m, len(meds)
}

// A line of the table: the measurement, how to label it, and the plain-C
// row that is its physical limit.
type line struct {
	name, label, limit string
	bw                 int // bytes per op for bandwidth rows (shown as GB/s too)
}

var lines = []line{
	{"put8_flush", "Put 8 B + Flush (origin side, target idle)", "atomic_fetch_add_fence", 0},
	{"get8_flush", "Get 8 B + Flush (origin side, target idle)", "atomic_fetch_add_fence", 0},
	{"put8_flush_touched", "Put 8 B + Flush, target reads and acks (round trip)", "put8_fence_touched", 0},
	{"create_mem_put8_flush", "Put 8 B + Flush, Create window over AllocMem (MPI_Alloc_mem) memory", "atomic_fetch_add_fence", 0},
	{"create_mem_get8_flush", "Get 8 B + Flush, Create window over AllocMem memory", "atomic_fetch_add_fence", 0},
	{"create_mem_fop_flush", "FetchAndOp(Sum, int64) + Flush, Create window over AllocMem memory", "atomic_fetch_add_fence", 0},
	{"create_priv_put8_flush", "Put 8 B + Flush, Create window over private (malloc'd, Go heap) memory", "cma_write_8", 0},
	{"create_priv_get8_flush", "Get 8 B + Flush, Create window over private memory", "cma_read_8", 0},
	{"create_priv_fop_flush", "FetchAndOp(Sum, int64) + Flush, Create window over private memory", "cma_rmw_8", 0},
	{"dynamic_put8_flush", "Put 8 B + Flush, dynamic window, AllocMem region attached", "atomic_fetch_add_fence", 0},
	{"dynamic_get8_flush", "Get 8 B + Flush, dynamic window, AllocMem region attached", "atomic_fetch_add_fence", 0},
	{"put_type_column", "Put of a 1024×1024 double matrix's column (Vector on both sides) + Flush", "strided_copy_column", 0},
	{"put_type_subarray_64", "Put of a 64×64 block of that matrix (Subarray on both sides) + Flush", "strided_copy_subarray_64", 0},
	{"put_type_contig_64k", "Put 64 KiB as a Contiguous datatype + Flush", "memcpy_65536", 65536},
	{"pingpong_type_column", "Send + Recv of that column (Vector) to rank 1 and back, round trip", "strided_pingpong_column", 0},
	{"acc_sum_i64", "Accumulate(Sum, int64) + Flush (origin side)", "atomic_fetch_add_fence", 0},
	{"fetch_and_op_i64", "FetchAndOp(Sum, int64) + Flush (origin side)", "atomic_fetch_add_fence", 0},
	{"cas_i64", "CompareAndSwap(int64) + Flush (origin side)", "atomic_fetch_add_fence", 0},
	{"get_acc_sum_i64", "GetAccumulate(Sum, int64) + Flush (origin side)", "atomic_fetch_add_fence", 0},
	{"lock_unlock_excl", "Lock(exclusive) + Unlock", "lock_unlock_excl", 0},
	{"lockall_unlockall", "LockAll + UnlockAll", "lockall_unlockall", 0},
	{"barrier", "Barrier, 2 ranks", "flag_barrier", 0},
	{"fence", "Fence, 2 ranks", "flag_barrier", 0},
	{"pscw_put8", "PSCW epoch with one 8 B Put", "flag_handoff_put8", 0},
	{"stencil_4k", "Shared-window stencil sweep: 4096 doubles per rank by load/store, Win_sync + Barrier", "", 0},
	{"put_bw_4096", "Put 4 KiB + Flush", "memcpy_4096", 4096},
	{"put_bw_65536", "Put 64 KiB + Flush", "memcpy_65536", 65536},
	{"put_bw_1048576", "Put 1 MiB + Flush", "memcpy_1048576", 1 << 20},
	{"put_bw_16777216", "Put 16 MiB + Flush", "memcpy_16777216", 16 << 20},
	{"put_bw_67108864", "Put 64 MiB + Flush", "memcpy_67108864", 64 << 20},
	{"alloc_free_1m", "AllocateShared + Free, 1 MiB per rank", "mmap_free_1m", 0},
	{"alloc_touch_free_1m", "AllocateShared + touch every page + Free, 1 MiB", "mmap_touch_free_1m", 0},
	{"alloc_free_256m", "AllocateShared + Free, 256 MiB per rank", "mmap_free_256m", 0},
	{"alloc_touch_free_256m", "AllocateShared + touch every page + Free, 256 MiB", "mmap_touch_free_256m", 0},
	{"fetch_and_op_contended_i64", "FetchAndOp, 2 ranks on one word (per op per rank)", "", 0},
	{"fetch_and_op_distinct_i64", "FetchAndOp, 2 ranks on distinct words", "", 0},
	{"barrier_n8", "Barrier, 8 ranks on 2 cores", "flag_barrier_n8", 0},
	{"fetch_and_op_contended_i64_n8", "FetchAndOp, 8 ranks on 2 cores, one word", "", 0},
	{"fetch_and_op_distinct_i64_n8", "FetchAndOp, 8 ranks on 2 cores, distinct words", "", 0},
	{"barrier_n32", "Barrier, 32 ranks on 2 cores", "flag_barrier_n32", 0},
	{"fetch_and_op_contended_i64_n32", "FetchAndOp, 32 ranks on 2 cores, one word", "", 0},
	{"fetch_and_op_distinct_i64_n32", "FetchAndOp, 32 ranks on 2 cores, distinct words", "", 0},
	{"barrier_n2_noyield", "Barrier, 2 ranks, wait policy without the yield phase (SHMRUN_WAIT=yield=0)", "", 0},
	{"barrier_n2_sleeponly", "Barrier, 2 ranks, futex sleep only (SHMRUN_WAIT=spin=0,yield=0)", "", 0},
	{"barrier_n8_noyield", "Barrier, 8 ranks on 2 cores, without the yield phase", "", 0},
	{"barrier_n8_sleeponly", "Barrier, 8 ranks on 2 cores, futex sleep only", "", 0},
	{"put8_flush_check", "Put 8 B + Flush under shmrun --check", "", 0},
	{"fetch_and_op_i64_check", "FetchAndOp(Sum, int64) + Flush under shmrun --check", "", 0},
	{"put8_flush_stats", "Put 8 B + Flush under shmrun --stats", "", 0},
	{"fetch_and_op_i64_stats", "FetchAndOp(Sum, int64) + Flush under shmrun --stats", "", 0},
	{"allreduce_8", "Allreduce 8 B (sum of one double), 2 ranks, loop", "allreduce_8", 0},
	{"allreduce_8_sync", "Allreduce 8 B, 2 ranks, barrier-separated", "allreduce_8_sync", 0},
	{"bcast_8", "Bcast 8 B, 2 ranks, loop", "bcast_8", 0},
	{"bcast_8_sync", "Bcast 8 B, 2 ranks, barrier-separated", "bcast_8_sync", 0},
	{"reduce_8", "Reduce 8 B, 2 ranks, loop", "reduce_8", 0},
	{"reduce_8_sync", "Reduce 8 B, 2 ranks, barrier-separated", "reduce_8_sync", 0},
	{"gather_8", "Gather 8 B a rank, 2 ranks, loop", "gather_8", 0},
	{"gather_8_sync", "Gather 8 B a rank, 2 ranks, barrier-separated", "gather_8_sync", 0},
	{"scatter_8", "Scatter 8 B a rank, 2 ranks, loop", "scatter_8", 0},
	{"scatter_8_sync", "Scatter 8 B a rank, 2 ranks, barrier-separated", "scatter_8_sync", 0},
	{"allgather_8", "Allgather 8 B a rank, 2 ranks, loop", "allgather_8", 0},
	{"allgather_8_sync", "Allgather 8 B a rank, 2 ranks, barrier-separated", "allgather_8_sync", 0},
	{"alltoall_8", "Alltoall 8 B a block, 2 ranks, loop", "alltoall_8", 0},
	{"alltoall_8_sync", "Alltoall 8 B a block, 2 ranks, barrier-separated", "alltoall_8_sync", 0},
	{"scan_8", "Scan 8 B, 2 ranks, loop", "scan_8", 0},
	{"scan_8_sync", "Scan 8 B, 2 ranks, barrier-separated", "scan_8_sync", 0},
	{"reduce_scatter_block_8", "ReduceScatterBlock 8 B a block, 2 ranks, loop", "reduce_scatter_block_8", 0},
	{"reduce_scatter_block_8_sync", "ReduceScatterBlock 8 B a block, 2 ranks, barrier-separated", "reduce_scatter_block_8_sync", 0},
	{"iallreduce_8", "Iallreduce + Wait 8 B (no issue goal), 2 ranks, loop", "iallreduce_8", 0},
	{"iallreduce_8_sync", "Iallreduce + Wait 8 B, 2 ranks, barrier-separated", "iallreduce_8_sync", 0},
	{"iallreduce_test_8", "Iallreduce + a loop of Test 8 B (no issue goal), 2 ranks, loop", "iallreduce_test_8", 0},
	{"iallreduce_test_8_sync", "Iallreduce + a loop of Test 8 B, 2 ranks, barrier-separated", "iallreduce_test_8_sync", 0},
	{"allreduce_1m", "Allreduce 1 MiB (sum of doubles), 2 ranks, loop", "allreduce_1m", 0},
	{"allreduce_1m_sync", "Allreduce 1 MiB, 2 ranks, barrier-separated", "allreduce_1m_sync", 0},
	{"bcast_1m", "Bcast 1 MiB, 2 ranks, loop", "bcast_1m", 0},
	{"bcast_1m_sync", "Bcast 1 MiB, 2 ranks, barrier-separated", "bcast_1m_sync", 0},
	{"barrier_world", "Barrier, 2 ranks, measured next to the split one below", "flag_barrier", 0},
	{"barrier_subcomm", "Barrier on a split communicator (all ranks, reversed), 2 ranks", "flag_barrier", 0},
	{"allreduce_8_n8", "Allreduce 8 B, 8 ranks on 2 cores, loop", "allreduce_8_n8", 0},
	{"bcast_8_n8", "Bcast 8 B, 8 ranks on 2 cores, loop", "bcast_8_n8", 0},
	{"reduce_8_n8", "Reduce 8 B, 8 ranks on 2 cores, loop", "reduce_8_n8", 0},
	{"gather_8_n8", "Gather 8 B a rank, 8 ranks on 2 cores, loop", "gather_8_n8", 0},
	{"scatter_8_n8", "Scatter 8 B a rank, 8 ranks on 2 cores, loop", "scatter_8_n8", 0},
	{"allgather_8_n8", "Allgather 8 B a rank, 8 ranks on 2 cores, loop", "allgather_8_n8", 0},
	{"alltoall_8_n8", "Alltoall 8 B a block, 8 ranks on 2 cores, loop", "alltoall_8_n8", 0},
	{"scan_8_n8", "Scan 8 B, 8 ranks on 2 cores, loop", "scan_8_n8", 0},
	{"reduce_scatter_block_8_n8", "ReduceScatterBlock 8 B a block, 8 ranks on 2 cores, loop", "reduce_scatter_block_8_n8", 0},
	{"iallreduce_8_n8", "Iallreduce + Wait 8 B, 8 ranks on 2 cores, loop", "iallreduce_8_n8", 0},
	{"iallreduce_test_8_n8", "Iallreduce + a loop of Test 8 B, 8 ranks on 2 cores, loop", "iallreduce_test_8_n8", 0},
	{"barrier_world_n8", "Barrier, 8 ranks on 2 cores, measured next to the split one below", "flag_barrier_n8", 0},
	{"barrier_subcomm_n8", "Barrier on a split communicator, 8 ranks on 2 cores", "flag_barrier_n8", 0},
	{"allreduce_8_n32", "Allreduce 8 B, 32 ranks on 2 cores, loop", "allreduce_8_n32", 0},
	{"bcast_8_n32", "Bcast 8 B, 32 ranks on 2 cores, loop", "bcast_8_n32", 0},
	{"reduce_8_n32", "Reduce 8 B, 32 ranks on 2 cores, loop", "reduce_8_n32", 0},
	{"gather_8_n32", "Gather 8 B a rank, 32 ranks on 2 cores, loop", "gather_8_n32", 0},
	{"scatter_8_n32", "Scatter 8 B a rank, 32 ranks on 2 cores, loop", "scatter_8_n32", 0},
	{"allgather_8_n32", "Allgather 8 B a rank, 32 ranks on 2 cores, loop", "allgather_8_n32", 0},
	{"alltoall_8_n32", "Alltoall 8 B a block, 32 ranks on 2 cores, loop", "alltoall_8_n32", 0},
	{"scan_8_n32", "Scan 8 B, 32 ranks on 2 cores, loop", "scan_8_n32", 0},
	{"reduce_scatter_block_8_n32", "ReduceScatterBlock 8 B a block, 32 ranks on 2 cores, loop", "reduce_scatter_block_8_n32", 0},
	{"iallreduce_8_n32", "Iallreduce + Wait 8 B, 32 ranks on 2 cores, loop", "iallreduce_8_n32", 0},
	{"iallreduce_test_8_n32", "Iallreduce + a loop of Test 8 B, 32 ranks on 2 cores, loop", "iallreduce_test_8_n32", 0},
	{"barrier_world_n32", "Barrier, 32 ranks on 2 cores, measured next to the split one below", "flag_barrier_n32", 0},
	{"barrier_subcomm_n32", "Barrier on a split communicator, 32 ranks on 2 cores", "flag_barrier_n32", 0},
	{"job_start_teardown_n2", "Job of 2 ranks: Init, Barrier, Finalize, start to end", "", 0},
	{"job_start_teardown_n8", "Job of 8 ranks: Init, Barrier, Finalize, start to end", "", 0},
}

// The point-to-point rows (issue 15), in a section of their own; the C
// limit of each is p2plimit's row of the same name. bw is the bytes per
// message (GB/s shown); msgrate rows show millions of messages a second.
var p2pLines = []line{
	{"pingpong_0", "Ping-pong 0 B, one way (half a round trip), 2 ranks", "pingpong_0", 0},
	{"pingpong_8", "Ping-pong 8 B, one way, 2 ranks", "pingpong_8", 0},
	{"pingpong_4k", "Ping-pong 4 KiB, one way, 2 ranks", "pingpong_4k", 4096},
	{"pingpong_8k", "Ping-pong 8 KiB, one way, 2 ranks (the eager limit)", "pingpong_8k", 8192},
	{"pingpong_64k", "Ping-pong 64 KiB, one way, 2 ranks", "pingpong_64k", 64 << 10},
	{"pingpong_1m", "Ping-pong 1 MiB, one way, 2 ranks", "pingpong_1m", 1 << 20},
	{"pingpong_4m", "Ping-pong 4 MiB, one way, 2 ranks", "pingpong_4m", 4 << 20},
	{"pingpong_16m", "Ping-pong 16 MiB, one way, 2 ranks", "pingpong_16m", 16 << 20},
	{"bw_64k", "Bandwidth 64 KiB, window of 64 + ack, per message, 2 ranks", "bw_64k", 64 << 10},
	{"bw_1m", "Bandwidth 1 MiB, window of 64 + ack, per message, 2 ranks", "bw_1m", 1 << 20},
	{"msgrate_8", "Message rate 8 B, window of 64 + ack, per message, 2 ranks", "msgrate_8", 0},
	{"msgrate_8_persistent", "Message rate 8 B as above, persistent requests (Send_init/Recv_init, Startall, Waitall), 2 ranks", "msgrate_8_persistent", 0},
	{"pingpong_8_n8", "Ping-pong 8 B, one way, 8 ranks on 2 cores (four pairs at once)", "pingpong_8_n8", 0},
	{"msgrate_8_n8", "Message rate 8 B, per message, 8 ranks on 2 cores (four pairs at once)", "msgrate_8_n8", 0},
}

// writeTable writes the table of ls: every runtime's cell, the C limit's,
// and shmrun's ratios to the faster MPI and to the limit.
func writeTable(b *strings.Builder, r *results, ls []line) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("| measurement | shmrun | Open MPI | MPICH | C limit | shmrun ÷ best MPI | shmrun ÷ limit |\n")
	p("|---|---|---|---|---|---|---|\n")
	for _, l := range ls {
		s, sok := r.get("shmrun", l.name)
		o, ook := r.get("openmpi", l.name)
		m, mok := r.get("mpich", l.name)
		c, cok := r.get("climit", l.limit)
		if !sok && !ook && !mok {
			continue
		}
		best, bok := o, ook && o.status == ""
		if mok && m.status == "" && (!bok || m.med < best.med) {
			best, bok = m, true
		}
		label := l.label
		switch {
		case !sok || s.status != "" || s.med == 0:
		case l.bw > 0:
			label += fmt.Sprintf(" — shmrun %.1f GB/s", float64(l.bw)/s.med)
		case strings.HasPrefix(l.name, "msgrate_"):
			label += fmt.Sprintf(" — shmrun %.1f M msgs/s", 1e3/s.med)
		}
		p("| %s | %s | %s | %s | %s | %s | %s |\n", label, fmtNS(s, sok), fmtNS(o, ook), fmtNS(m, mok),
			fmtNS(c, cok && l.limit != ""), ratio(s, best, sok, bok), ratio(s, c, sok, cok && l.limit != ""))
	}
}

// writeCTable writes the C twin's rows beside the Go API's and the MPIs'.
func writeCTable(b *strings.Builder, r *results) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("| measurement | shmrun from C | shmrun from Go | Open MPI | MPICH | C ÷ Open MPI | C ÷ Go |\n")
	p("|---|---|---|---|---|---|---|\n")
	for _, l := range append(append([]line{}, lines...), p2pLines...) {
		c, cok := r.get("shmrunc", l.name)
		if !cok {
			continue
		}
		g, gok := r.get("shmrun", l.name)
		o, ook := r.get("openmpi", l.name)
		m, mok := r.get("mpich", l.name)
		p("| %s | %s | %s | %s | %s | %s | %s |\n", l.label, fmtNS(c, cok), fmtNS(g, gok), fmtNS(o, ook), fmtNS(m, mok),
			ratio(c, o, cok, ook), ratio(c, g, cok, gok))
	}
}

// mpiRows are the rows of the MPI backend's targets, with the number of
// MPI calls each of its operations makes (a row's goal below 1 µs is the
// time of Open MPI's C program at MPI_THREAD_MULTIPLE, rows _mt, plus
// that many cgo calls). bench/run's gompi_rows lists the same names.
var mpiRows = []callRow{
	{"put8_flush", 2}, {"get8_flush", 2}, {"acc_sum_i64", 2}, {"fetch_and_op_i64", 2}, {"cas_i64", 2},
	{"get_acc_sum_i64", 2}, {"lock_unlock_excl", 2}, {"lockall_unlockall", 2}, {"barrier", 1}, {"fence", 1},
	{"pscw_put8", 5}, {"allreduce_8", 1}, {"bcast_8", 1}, {"pingpong_8", 2}, {"msgrate_8", 2},
	{"msgrate_8_persistent", 1}, {"pingpong_64k", 2}, {"pingpong_1m", 2}, {"bw_1m", 2}, {"allreduce_1m", 1},
	{"bcast_1m", 1}, {"put_bw_1048576", 2},
}

// writeMPITable writes the MPI backend's rows beside Open MPI's, as the
// C program runs by default and at MPI_THREAD_MULTIPLE (rows _mt), the
// level the Go API needs and the yardstick of its targets.
func writeMPITable(b *strings.Builder, r *results) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	cgo, cok := r.get("gompi", "cgo_call")
	p("One cgo call (an empty C function) in this run: %s. Open MPI (C, MULTIPLE) is the C program initialized with\n", fmtNS(cgo, cok))
	p("MPI_THREAD_MULTIPLE, the thread level the Go API needs, and with the backend's one-sided components\n")
	p("(`--mca osc sm,ucx`); the difference and the ratio are against it.\n\n")
	p("| measurement | Go API over Open MPI | Open MPI (C, MULTIPLE) | Open MPI (C) | difference | ratio |\n|---|---|---|---|---|---|\n")
	for _, l := range append(append([]line{}, lines...), p2pLines...) {
		g, gok := r.get("gompi", l.name)
		m, mok := r.get("openmpi", l.name+"_mt")
		o, ook := r.get("openmpi", l.name)
		if !gok {
			continue
		}
		diff := "—"
		if gok && mok && g.status == "" && m.status == "" {
			diff = fmt.Sprintf("%+.1f ns", g.med-m.med)
		}
		p("| %s | %s | %s | %s | %s | %s |\n", l.label, fmtNS(g, gok), fmtNS(m, mok), fmtNS(o, ook), diff, ratio(g, m, gok, mok))
	}
}

// callRow is a row of the Go API over an MPI and the MPI calls one of its
// operations makes.
type callRow struct {
	name  string
	calls int
}

// nodeRows are the pseudo-node rows (bench/run's node_rows), with the
// MPI calls each operation makes.
var nodeRows = []callRow{
	{"put8_flush", 2}, {"get8_flush", 2}, {"put_bw_1048576", 2}, {"fetch_and_op_i64", 2}, {"pingpong_8", 2},
	{"pingpong_64k", 2}, {"pingpong_1m", 2}, {"bw_1m", 2}, {"allreduce_8", 1}, {"allreduce_1m", 1},
}

// labelOf is a row's label in the tables, or its name.
func labelOf(name string) string {
	for _, l := range append(append([]line{}, lines...), p2pLines...) {
		if l.name == name {
			return l.label
		}
	}
	return name
}

// callSide is one column of a table of the Go API over an MPI: a runtime
// and the suffix of its row names.
type callSide struct{ rt, sfx string }

// writeCallTable writes rows of the Go API over an MPI (g) beside the
// MPI's C program (c), after the cgo call of the same runs; what names
// the table's first column and its two heads.
func writeCallTable(b *strings.Builder, r *results, rows []callRow, what, gHead, cHead string, g, c callSide) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	cgo, cok := r.get(g.rt, "cgo_call"+g.sfx)
	p("One cgo call in the same runs: %s.\n\n", fmtNS(cgo, cok))
	p("| measurement, %s | %s | %s | difference | ratio |\n|---|---|---|---|---|\n", what, gHead, cHead)
	for _, n := range rows {
		gv, gok := r.get(g.rt, n.name+g.sfx)
		cv, cvok := r.get(c.rt, n.name+c.sfx)
		diff := "—"
		if gok && cvok && gv.status == "" && cv.status == "" {
			diff = fmt.Sprintf("%+.1f ns", gv.med-cv.med)
		}
		p("| %s | %s | %s | %s | %s |\n", labelOf(n.name), fmtNS(gv, gok), fmtNS(cv, cvok), diff, ratio(gv, cv, gok, cvok))
	}
}

// writeNodesTable writes the pseudo-node rows: the Go API over MPICH
// beside MPICH's C program.
func writeNodesTable(b *strings.Builder, r *results) {
	writeCallTable(b, r, nodeRows, "two pseudo-nodes", "Go API over MPICH", "MPICH (C, MULTIPLE)",
		callSide{"gompich", "_2n"}, callSide{"mpich", "_2n"})
}

// allocRows are the rows of an Allocate window on one node (bench/run's
// alloc_rows), with the MPI calls each operation makes.
var allocRows = []callRow{{"put8_flush", 2}, {"get8_flush", 2}, {"fetch_and_op_i64", 2}}

// writeAllocTable writes the rows of an Allocate window on one node: the
// Go API over Open MPI beside Open MPI's C at MPI_THREAD_MULTIPLE.
func writeAllocTable(b *strings.Builder, r *results) {
	writeCallTable(b, r, allocRows, "Allocate window, one node", "Go API over Open MPI", "Open MPI (C, MULTIPLE)",
		callSide{"gompi", "_1n"}, callSide{"openmpi", "_1n_mt"})
}

// allocTargets are issue 21's goals for an Allocate window on one node.
func allocTargets() []target {
	return callTargets("Go API over Open MPI, Allocate window on one node", "Open MPI", allocRows, "gompi", "_1n", "openmpi", "_1n_mt")
}

// nodeTargets are issue 21's goals on two pseudo-nodes: as mpiTargets,
// against MPICH's C program.
func nodeTargets() []target {
	return callTargets("Go API over MPICH, two pseudo-nodes", "MPICH", nodeRows, "gompich", "_2n", "mpich", "_2n")
}

// mpiTargets are issue 21's goals for the MPI backend's rows.
func mpiTargets() []target {
	return callTargets("Go API over Open MPI", "Open MPI", mpiRows, "gompi", "", "openmpi", "_mt")
}

// callTargets are issue 21's goals for rows of the Go API over an MPI
// (runtime gort, row names with gsfx) against the MPI's C program at
// MPI_THREAD_MULTIPLE (runtime crt, csfx): below 1 µs that time plus one
// cgo call (the row cgo_call of gort) per MPI call of the row, from 1 µs
// 1.1× it.
func callTargets(who, mpiName string, rows []callRow, gort, gsfx, crt, csfx string) []target {
	var ts []target
	for _, row := range rows {
		name, calls := row.name, row.calls
		ts = append(ts, target{
			text: fmt.Sprintf("%s: %s ≤ %s at MPI_THREAD_MULTIPLE + %d cgo call(s) below 1 µs, ≤ 1.1× from 1 µs (issue 21)",
				who, labelOf(name), mpiName, calls),
			limit: 1,
			eval: func(r *results) (float64, bool) {
				g, gok := r.get(gort, name+gsfx)
				o, ook := r.get(crt, name+csfx)
				c, cok := r.get(gort, "cgo_call"+gsfx)
				if !gok || !ook || !cok || g.status != "" || o.status != "" || o.med == 0 {
					return 0, false
				}
				if o.med >= 1000 {
					return g.med / (1.1 * o.med), true
				}
				return g.med / (o.med + float64(calls)*c.med), true
			},
		})
	}
	return ts
}

// writeCCheckTable writes the plain C rows beside the instrumented ones.
func writeCCheckTable(b *strings.Builder, r *results) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("| measurement | plain (shmcc) | shmcc --check, run without --check | ÷ plain | under shmrun --check | ÷ plain |\n")
	p("|---|---|---|---|---|---|\n")
	for _, l := range lines {
		i, iok := r.get("shmrunc", l.name+"_instr")
		if !iok {
			continue
		}
		c, cok := r.get("shmrunc", l.name)
		k, kok := r.get("shmrunc", l.name+"_ccheck")
		p("| %s | %s | %s | %s | %s | %s |\n", l.label, fmtNS(c, cok), fmtNS(i, iok), ratio(i, c, iok, cok),
			fmtNS(k, kok), ratio(k, c, kok, cok))
	}
}

// cTwinTargets are issue 18's goals for the C twin of each small-op row:
// at most 0.5× Open MPI (with the C-limit rule), and at most 1.2× the Go
// API's row.
func cTwinTargets() []target {
	var ts []target
	for _, l := range append(append([]line{}, lines...), p2pLines...) {
		if !cTwinRows[l.name] {
			continue
		}
		n := l.name
		t := target{text: "C twin: " + l.label + " ≤ 0.5× Open MPI (issue 18)", limit: 0.5,
			eval: over("shmrunc", n, "openmpi", n)}
		if l.limit != "" {
			t.floor, t.cLimit = over("climit", l.limit, "openmpi", n), over("shmrunc", n, "climit", l.limit)
		}
		ts = append(ts, t, target{text: "C twin: " + l.label + " ≤ 1.2× the Go API's row (issue 18)", limit: 1.2,
			eval: over("shmrunc", n, "shmrun", n)})
	}
	return ts
}

// cTwinRows are the rows bench/run measures for the C twin (its capi_rows).
var cTwinRows = map[string]bool{"put8_flush": true, "get8_flush": true, "acc_sum_i64": true, "fetch_and_op_i64": true,
	"cas_i64": true, "get_acc_sum_i64": true, "lock_unlock_excl": true, "lockall_unlockall": true, "barrier": true,
	"fence": true, "pscw_put8": true, "allreduce_8": true, "bcast_8": true, "reduce_8": true, "gather_8": true, "scatter_8": true,
	"allgather_8": true, "alltoall_8": true, "scan_8": true, "reduce_scatter_block_8": true, "pingpong_8": true, "msgrate_8": true,
	"msgrate_8_persistent": true}

func (r *results) get(rt, name string) (row, bool) {
	x, ok := r.rows[rt][name]
	return x, ok
}

func fmtNS(x row, ok bool) string {
	switch {
	case !ok:
		return "—"
	case x.status != "":
		return x.status
	}
	s := dur(x.med) + " <sub>" + dur(x.lo) + "–" + dur(x.hi) + "</sub>"
	if x.lost != "" {
		s += " <sub>(" + x.lost + ")</sub>"
	}
	return s
}

func dur(ns float64) string {
	switch {
	case ns >= 1e9:
		return fmt.Sprintf("%.2f s", ns/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e4:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	case ns >= 1e3:
		return fmt.Sprintf("%.2f µs", ns/1e3)
	}
	return fmt.Sprintf("%.1f ns", ns)
}

func ratio(a, b row, aok, bok bool) string {
	if !aok || !bok || a.status != "" || b.status != "" || b.med == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", a.med/b.med)
}

func write(r *results, dir, cmd string) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# shmrun benchmark results\n\n")
	p("Produced by `%s` (all runtimes measured in one run on one machine; this file is\n", cmd)
	p("written by `go run ./bench/cmd/report`). Each cell is the **median of per-round\n")
	p("medians** in ns per operation, with the min–max over every batch in small print;\n")
	p("every suite but job start and the wait-policy rows runs %d times, interleaved across\n", r.maxReps())
	p("runtimes, and a cell is then the\n")
	p("median over the repetitions (speed on this machine drifts over minutes).\n")
	p("Origin-side rows run rank 0 → rank 1 with the target idle inside the runtime, ranks\n")
	p("bound one per core; every RMA latency includes the call that completes it. Ratios\n")
	p("below 1 mean shmrun is faster. The C limit is a plain-C program doing the same work\n")
	p("over the same kind of shared memory with no runtime at all.\n\n")
	// NOTES.md is written by hand; this file is rewritten on every run.
	p("The measurements behind particular shapes of the code (copy thresholds, wait\n")
	p("policies, release stores) are kept in [NOTES.md](NOTES.md), which no run rewrites.\n\n")
	p("![small-operation latencies](latency.svg)\n\n![Put bandwidth](bandwidth.svg)\n\n")
	writeTable(&b, r, lines)
	p("\n## Point-to-point\n\n")
	p("Send and Recv between the ranks of each pair (r, r^1): with 8 ranks four pairs run at\n")
	p("once (the OSU multi-pair method). Every figure is the time per message, first rank's\n")
	p("start to last rank's end. A ping-pong row is half a round trip of blocking Send and\n")
	p("Recv (osu_latency); a bandwidth or message-rate row is a window of 64 Isends into 64\n")
	p("posted Irecvs, Waitall on both sides and a 0-byte ack (osu_bw), divided by 64. The C\n")
	p("limit (bench/c/p2plimit.c) moves the same messages with a flag and a copy each: through\n")
	p("a shared slot below 64 KiB (two memcpys), by process_vm_readv from the sender's private\n")
	p("buffer from 64 KiB on (one copy).\n\n")
	writeTable(&b, r, p2pLines)
	if len(r.rows["shmrunc"]) > 0 {
		p("\n## C programs on shmrun (libmpi_abi, the MPI 5.0 standard ABI)\n\n")
		p("bench/c/rmabench.c — the very source of the Open MPI and MPICH columns — built\n")
		p("with shmcc against shmrun's libmpi_abi and run under shmrun: what a C program gets\n")
		p("(issue 18). The Go column is the Go API's row of the same name.\n\n")
		writeCTable(&b, r)
	}
	if len(r.rows["gompi"]) > 0 {
		p("\n## The Go API over Open MPI (go build -tags mpi)\n\n")
		p("bench/cmd/rmabench built with `-tags mpi` and run by mpirun.openmpi like the C\n")
		p("program of the Open MPI column (issue 21): the same rows, through the MPI backend.\n")
		p("One cgo call is the `cgo_call` row of the same run; the goal is at most the time of\n")
		p("Open MPI's C program at MPI_THREAD_MULTIPLE plus one cgo call for each MPI call a row\n")
		p("makes below 1 µs, and 1.1× that time from 1 µs on. Windows run on Open MPI's default\n")
		p("osc selection (osc/sm for the shared window, osc/ucx for the twin window the backend\n")
		p("adds), the C columns on osc/sm.\n\n")
		writeMPITable(&b, r)
	}
	if _, ok := r.get("gompi", "put8_flush_1n"); ok {
		p("\n## An Allocate window on one node: the Go API over Open MPI beside its C\n\n")
		p("rmabench --nodes on one node: the window is MPI_Win_allocate's (Allocate), and only\n")
		p("rows that reach the other rank through RMA calls run. The backend makes an Allocate\n")
		p("window whose ranks share a node with MPI_Win_allocate_shared and serves it by load and\n")
		p("store (issue 21); Open MPI's osc/sm does the same inside MPI_Win_allocate. The C\n")
		p("column is bench/c/rmabench.c at MPI_THREAD_MULTIPLE (`--mca osc sm,ucx`). Goals as above.\n\n")
		writeAllocTable(&b, r)
	}
	if len(r.rows["gompich"]) > 0 {
		p("\n## Two pseudo-nodes: the Go API over MPICH beside MPICH's C\n\n")
		p("MPICH's hydra starts one rank on each of two hosts named by loopback addresses (a\n")
		p("stand-in for ssh runs the \"remote\" command here), so MPI_Comm_split_type sees two\n")
		p("nodes and every row goes through the MPI's path between nodes (issue 21). rmabench\n")
		p("--nodes: the window is MPI_Win_allocate's (Allocate), and only rows that reach the other\n")
		p("rank through MPI calls run. The C column is bench/c/rmabench.c at MPI_THREAD_MULTIPLE;\n")
		p("the Go column is bench/cmd/rmabench built with `-tags mpi,mpich`. Goals as above.\n\n")
		writeNodesTable(&b, r)
	}
	if _, ok := r.get("shmrunc", "put8_flush_instr"); ok {
		p("\n## shmcc --check: C loads and stores checked against RMA\n\n")
		p("The same bench/c/rmabench.c built with `shmcc --check` (issue 20): every load and\n")
		p("store of the program calls libmpi_abi's hooks. Run under shmrun without --check, the\n")
		p("hooks only test an empty table (the instrumentation's own cost); under `shmrun\n")
		p("--check=warn`, accesses to window memory are gathered into runs and checked, and every\n")
		p("RMA call's buffers are entered until the call completes.\n\n")
		writeCCheckTable(&b, r)
	}
	p("\n## Targets from the issues, checked against this run\n\n")
	p("The last column is the same ratio with the plain-C limit in shmrun's place: what a\n")
	p("runtime with no overhead at all over the hardware would score. A target below it\n")
	p("cannot be met on this machine by any implementation of the same work.\n\n")
	p("| target | measured | met | C limit would score |\n|---|---|---|---|\n")
	for _, tg := range append(append(append(append(append([]target{}, targets...), cTwinTargets()...), mpiTargets()...), allocTargets()...), nodeTargets()...) {
		floor := "—"
		if tg.floor != nil {
			if f, ok := tg.floor(r); ok {
				floor = fmt.Sprintf("%.3f×", f)
			}
		}
		text, lim, eval := tg.text, tg.limit, tg.eval
		if tg.floor != nil && tg.cLimit != nil {
			if f, ok := tg.floor(r); ok && f > 0.8*tg.limit {
				text += fmt.Sprintf(" → the C limit scores %.3f× > 0.8 × %.2f×, so: within %.2f× of the C limit", f, tg.limit, cRule)
				lim, eval = cRule, tg.cLimit
			}
		}
		got, ok := eval(r)
		if !ok {
			p("| %s | not measured | — | %s |\n", text, floor)
			continue
		}
		verdict := "no"
		if got <= lim {
			verdict = "yes"
		}
		p("| %s | %.3f× (limit %.3f×) | %s | %s |\n", text, got, lim, verdict, floor)
	}
	p("\n## Answers checked\n\n")
	p("Every collective row checks its answers on every rank after the timed calls: the result\n")
	p("of the last timed call, then one call with fresh inputs and poisoned outputs\n")
	p("(bench/c/collrows.h). Every point-to-point row checks the stamp in the first and last\n")
	p("8 bytes of every message it receives, then one more operation with full patterns into\n")
	p("poisoned buffers, every byte and status (bench/c/p2prows.h). The Put and Get rows\n")
	p("move one more pattern after the timed calls and check it where it landed; so does\n")
	p("pscw_put8, in one more epoch. The atomic rows (Accumulate, FetchAndOp, GetAccumulate,\n")
	p("contended and distinct FetchAndOp, the FetchAndOp rows of the other window flavors)\n")
	p("count their operations and check the words hold that count, and the values a few more\n")
	p("fetch after the timed calls; CompareAndSwap checks every swap. stencil_4k computes\n")
	p("its last sweep again from messages. A row whose answer was wrong says so here, and\n")
	p("its cells show WRONG instead of a time.\n\n")
	checks, rest := splitChecks(r.meta)
	if len(checks) == 0 {
		p("No answers were checked in this run.\n")
	}
	for _, c := range checks {
		p("- %s\n", c)
	}
	p("\n## Machine and versions\n\n")
	for _, m := range rest {
		p("- %s\n", m)
	}
	if err := os.WriteFile(filepath.Join(dir, "RESULTS.md"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "bandwidth.svg"), []byte(bandwidthSVG(r)), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "latency.svg"), []byte(latencySVG(r)), 0o644)
}

var colors = map[string]string{"shmrun": "#0b7a3e", "openmpi": "#1f5fbf", "mpich": "#c2410c", "climit": "#6b7280"}
var names = map[string]string{"shmrun": "shmrun", "openmpi": "Open MPI", "mpich": "MPICH", "climit": "C memcpy"}

func bandwidthSVG(r *results) string {
	const w, h, l, t, rt, bt = 720, 420, 70, 40, 170, 50
	sizes := []int{4096, 65536, 1 << 20, 16 << 20, 64 << 20}
	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`, w, h)
	fmt.Fprintf(&s, `<rect width="100%%" height="100%%" fill="white"/><text x="%d" y="24" font-size="15">Put + Flush bandwidth (GB/s) vs message size</text>`, l)
	maxBW := 1.0
	series := map[string][][2]float64{}
	for _, rtName := range []string{"shmrun", "openmpi", "mpich", "climit"} {
		for i, sz := range sizes {
			name := fmt.Sprintf("put_bw_%d", sz)
			if rtName == "climit" {
				name = fmt.Sprintf("memcpy_%d", sz)
			}
			if x, ok := r.get(rtName, name); ok && x.status == "" && x.med > 0 {
				bw := float64(sz) / x.med
				maxBW = max(maxBW, bw)
				series[rtName] = append(series[rtName], [2]float64{float64(i), bw})
			}
		}
	}
	step := 10.0
	if maxBW > 60 {
		step = 20
	}
	maxBW = math.Ceil(maxBW/step) * step
	pw, ph := float64(w-l-rt), float64(h-t-bt)
	xOf := func(i float64) float64 { return float64(l) + i*pw/float64(len(sizes)-1) }
	yOf := func(bw float64) float64 { return float64(t) + ph - bw/maxBW*ph }
	for g := 0.0; g <= maxBW; g += step {
		fmt.Fprintf(&s, `<line x1="%d" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%.0f</text>`, l, float64(l)+pw, yOf(g), yOf(g), l-6, yOf(g)+4, g)
	}
	labels := []string{"4 KiB", "64 KiB", "1 MiB", "16 MiB", "64 MiB"}
	for i, lb := range labels {
		fmt.Fprintf(&s, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`, xOf(float64(i)), h-bt+18, lb)
	}
	k := 0
	for _, rtName := range []string{"shmrun", "openmpi", "mpich", "climit"} {
		pts := series[rtName]
		if len(pts) == 0 {
			continue
		}
		var path []string
		for _, pt := range pts {
			path = append(path, fmt.Sprintf("%.1f,%.1f", xOf(pt[0]), yOf(pt[1])))
			fmt.Fprintf(&s, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`, xOf(pt[0]), yOf(pt[1]), colors[rtName])
		}
		dash := ""
		if rtName == "climit" {
			dash = ` stroke-dasharray="5,4"`
		}
		fmt.Fprintf(&s, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`, strings.Join(path, " "), colors[rtName], dash)
		fmt.Fprintf(&s, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>`, w-rt+15, t+k*20, colors[rtName], w-rt+32, t+k*20+10, names[rtName])
		k++
	}
	s.WriteString(`</svg>`)
	return s.String()
}

func latencySVG(r *results) string {
	ops := []struct{ name, label string }{
		{"put8_flush", "Put 8B+Flush"}, {"get8_flush", "Get 8B+Flush"}, {"acc_sum_i64", "Accumulate"},
		{"fetch_and_op_i64", "FetchAndOp"}, {"cas_i64", "CAS"}, {"get_acc_sum_i64", "GetAccumulate"},
		{"lock_unlock_excl", "Lock+Unlock"}, {"lockall_unlockall", "LockAll+UnlockAll"},
		{"barrier", "Barrier"}, {"fence", "Fence"}, {"pscw_put8", "PSCW epoch"},
	}
	rts := []string{"shmrun", "openmpi", "mpich"}
	const w, rowH, l, t = 760, 46, 140, 50
	h := t + len(ops)*rowH + 30
	// Log scale from 1 ns to the largest value.
	maxV := 10.0
	for _, op := range ops {
		for _, rt := range rts {
			if x, ok := r.get(rt, op.name); ok && x.status == "" {
				maxV = max(maxV, x.med)
			}
		}
	}
	decades := math.Ceil(math.Log10(maxV))
	pw := float64(w - l - 120)
	xOf := func(v float64) float64 { return float64(l) + math.Log10(max(v, 1))/decades*pw }
	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`, w, h)
	fmt.Fprintf(&s, `<rect width="100%%" height="100%%" fill="white"/><text x="%d" y="22" font-size="15">Small-operation latency, 2 ranks (ns, log scale; lower is better)</text>`, l)
	for d := 0.0; d <= decades; d++ {
		x := xOf(math.Pow(10, d))
		fmt.Fprintf(&s, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#ddd"/><text x="%.1f" y="%d" text-anchor="middle">%s</text>`, x, x, t-8, h-24, x, h-8, dur(math.Pow(10, d)))
	}
	for i, op := range ops {
		y0 := t + i*rowH
		fmt.Fprintf(&s, `<text x="%d" y="%d" text-anchor="end">%s</text>`, l-8, y0+rowH/2+4, op.label)
		for j, rt := range rts {
			x, ok := r.get(rt, op.name)
			if !ok || x.status != "" {
				continue
			}
			y := y0 + 4 + j*13
			fmt.Fprintf(&s, `<rect x="%d" y="%d" width="%.1f" height="11" fill="%s"/><text x="%.1f" y="%d" font-size="10">%s</text>`, l, y, xOf(x.med)-float64(l), colors[rt], xOf(x.med)+4, y+9, dur(x.med))
		}
	}
	for j, rt := range rts {
		fmt.Fprintf(&s, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>`, w-110, t+j*20, colors[rt], w-93, t+j*20+10, names[rt])
	}
	s.WriteString(`</svg>`)
	return s.String()
}

// A target from the issues: eval returns the measured ratio, limit the
// largest ratio that meets it, floor (if any) the ratio the plain-C limit
// scores in shmrun's place.
type target struct {
	text  string
	limit float64
	eval  func(*results) (float64, bool)
	floor func(*results) (float64, bool)
	// cLimit, when set, is the ratio to the plain-C limit of the same
	// work: where the limit itself scores above 0.8× the goal (floor >
	// 0.8·limit), the goal becomes cLimit ≤ 1.25 (the one rule for goals).
	cLimit func(*results) (float64, bool)
}

// cRule is the goal a target falls back to: within 1.25× of the C limit.
const cRule = 1.25

// goal is a target against Open MPI with the C-limit rule: name's shmrun
// row over Open MPI's at most ratio, unless climit's row limit already
// scores above 0.8·ratio, then shmrun within 1.25× of climit's row.
func goal(text string, ratio float64, name, limit string) target {
	return target{text: text, limit: ratio, eval: over("shmrun", name, "openmpi", name),
		floor: over("climit", limit, "openmpi", name), cLimit: over("shmrun", name, "climit", limit)}
}

// over is a.med / b.med for two rows of this run.
func over(ra, na, rb, nb string) func(*results) (float64, bool) {
	return func(r *results) (float64, bool) {
		a, aok := r.get(ra, na)
		b, bok := r.get(rb, nb)
		if !aok || !bok || a.status != "" || b.status != "" || b.med == 0 {
			return 0, false
		}
		return a.med / b.med, true
	}
}

// overBestMPI divides by the faster of Open MPI and MPICH.
func overBestMPI(name string) func(*results) (float64, bool) {
	return func(r *results) (float64, bool) {
		x, ok1 := over("shmrun", name, "openmpi", name)(r)
		y, ok2 := over("shmrun", name, "mpich", name)(r)
		switch {
		case ok1 && ok2:
			return max(x, y), true
		case ok1:
			return x, true
		}
		return y, ok2
	}
}

// Every target against Open MPI whose work has a C limit is a goal, so that
// the C-limit rule holds for each of them, not only for those of the
// issues that stated it.
var targets = []target{
	{"Put 8 B + Flush under --check ≤ 3× the row without it (issue 19)", 3, over("shmrun", "put8_flush_check", "shmrun", "put8_flush"), nil, nil},
	{"FetchAndOp + Flush under --check ≤ 3× the row without it (issue 19)", 3, over("shmrun", "fetch_and_op_i64_check", "shmrun", "fetch_and_op_i64"), nil, nil},
	goal("Put 8 B + Flush ≤ 0.5× Open MPI (issue 3)", 0.5, "put8_flush", "atomic_fetch_add_fence"),
	goal("Get 8 B + Flush ≤ 0.5× Open MPI (issue 3)", 0.5, "get8_flush", "atomic_fetch_add_fence"),
	goal("Lock(exclusive) + Unlock ≤ 0.5× Open MPI (issue 3)", 0.5, "lock_unlock_excl", "lock_unlock_excl"),
	goal("LockAll + UnlockAll ≤ 0.5× Open MPI (issue 3)", 0.5, "lockall_unlockall", "lockall_unlockall"),
	{"Fence ≤ 1.2× shmrun's Barrier (issue 3)", 1.2, over("shmrun", "fence", "shmrun", "barrier"), nil, nil},
	{"PSCW epoch with one 8 B Put ≤ 1.2× the bare C flag hand-off (issue 3)", 1.2, over("shmrun", "pscw_put8", "climit", "flag_handoff_put8"), nil, nil},
	{"Put 64 KiB at ≥ 95% of memcpy bandwidth (issue 3)", 1 / 0.95, over("shmrun", "put_bw_65536", "climit", "memcpy_65536"), nil, nil},
	{"Put 1 MiB at ≥ 95% of memcpy bandwidth (issue 3)", 1 / 0.95, over("shmrun", "put_bw_1048576", "climit", "memcpy_1048576"), nil, nil},
	{"Put 64 MiB at ≥ 95% of memcpy bandwidth (issue 3)", 1 / 0.95, over("shmrun", "put_bw_67108864", "climit", "memcpy_67108864"), nil, nil},
	goal("AllocateShared + touch + Free, 1 MiB, no slower than Open MPI (issue 3)", 1, "alloc_touch_free_1m", "mmap_touch_free_1m"),
	goal("AllocateShared + touch + Free, 256 MiB, no slower than Open MPI (issue 3)", 1, "alloc_touch_free_256m", "mmap_touch_free_256m"),
	goal("Accumulate + Flush ≤ 0.5× Open MPI (issue 4)", 0.5, "acc_sum_i64", "atomic_fetch_add_fence"),
	goal("FetchAndOp + Flush ≤ 0.5× Open MPI (issue 4)", 0.5, "fetch_and_op_i64", "atomic_fetch_add_fence"),
	goal("CompareAndSwap + Flush ≤ 0.5× Open MPI (issue 4)", 0.5, "cas_i64", "atomic_fetch_add_fence"),
	goal("GetAccumulate + Flush ≤ 0.5× Open MPI (issue 4)", 0.5, "get_acc_sum_i64", "atomic_fetch_add_fence"),
	{"FetchAndOp + Flush ≤ 1.5× C __atomic_fetch_add + fence (issue 4)", 1.5, over("shmrun", "fetch_and_op_i64", "climit", "atomic_fetch_add_fence"), nil, nil},
	goal("Barrier, 2 ranks ≤ 0.6× Open MPI (issue 2)", 0.6, "barrier", "flag_barrier"),
	goal("Barrier, 8 ranks on 2 cores ≤ 0.6× Open MPI (issue 2)", 0.6, "barrier_n8", "flag_barrier_n8"),
	{"Job of 8 ranks ≤ 0.2× the faster MPI (issue 2)", 0.2, overBestMPI("job_start_teardown_n8"), nil, nil},
	goal("Allreduce 8 B, 2 ranks, loop ≤ 0.6× Open MPI (issue 14)", 0.6, "allreduce_8", "allreduce_8"),
	goal("Bcast 8 B, 2 ranks, loop ≤ 0.6× Open MPI (issue 14)", 0.6, "bcast_8", "bcast_8"),
	goal("Reduce 8 B, 2 ranks, loop ≤ 0.6× Open MPI (issue 14)", 0.6, "reduce_8", "reduce_8"),
	goal("Gather 8 B, 2 ranks, loop ≤ 0.6× Open MPI (issue 14)", 0.6, "gather_8", "gather_8"),
	goal("Scatter 8 B, 2 ranks, loop ≤ 0.6× Open MPI (issue 14)", 0.6, "scatter_8", "scatter_8"),
	goal("Allgather 8 B, 2 ranks, loop ≤ 0.6× Open MPI (issue 14)", 0.6, "allgather_8", "allgather_8"),
	goal("Alltoall 8 B, 2 ranks, loop ≤ 0.6× Open MPI (issue 14)", 0.6, "alltoall_8", "alltoall_8"),
	goal("Scan 8 B, 2 ranks, loop ≤ 0.6× Open MPI (issue 14)", 0.6, "scan_8", "scan_8"),
	goal("ReduceScatterBlock 8 B, 2 ranks, loop ≤ 0.6× Open MPI (issue 14)", 0.6, "reduce_scatter_block_8", "reduce_scatter_block_8"),
	goal("Allreduce 8 B, 8 ranks on 2 cores, loop ≤ 0.5× Open MPI (issue 14)", 0.5, "allreduce_8_n8", "allreduce_8_n8"),
	goal("Bcast 8 B, 8 ranks on 2 cores, loop ≤ 0.5× Open MPI (issue 14)", 0.5, "bcast_8_n8", "bcast_8_n8"),
	goal("Reduce 8 B, 8 ranks on 2 cores, loop ≤ 0.5× Open MPI (issue 14)", 0.5, "reduce_8_n8", "reduce_8_n8"),
	goal("Gather 8 B, 8 ranks on 2 cores, loop ≤ 0.5× Open MPI (issue 14)", 0.5, "gather_8_n8", "gather_8_n8"),
	goal("Scatter 8 B, 8 ranks on 2 cores, loop ≤ 0.5× Open MPI (issue 14)", 0.5, "scatter_8_n8", "scatter_8_n8"),
	goal("Allgather 8 B, 8 ranks on 2 cores, loop ≤ 0.5× Open MPI (issue 14)", 0.5, "allgather_8_n8", "allgather_8_n8"),
	goal("Alltoall 8 B, 8 ranks on 2 cores, loop ≤ 0.5× Open MPI (issue 14)", 0.5, "alltoall_8_n8", "alltoall_8_n8"),
	goal("Scan 8 B, 8 ranks on 2 cores, loop ≤ 0.5× Open MPI (issue 14)", 0.5, "scan_8_n8", "scan_8_n8"),
	goal("ReduceScatterBlock 8 B, 8 ranks on 2 cores, loop ≤ 0.5× Open MPI (issue 14)", 0.5, "reduce_scatter_block_8_n8", "reduce_scatter_block_8_n8"),
	goal("Allreduce 8 B, 32 ranks on 2 cores, loop ≤ 0.5× Open MPI (issue 14)", 0.5, "allreduce_8_n32", "allreduce_8_n32"),
	goal("Bcast 8 B, 32 ranks on 2 cores, loop ≤ 0.5× Open MPI (issue 14)", 0.5, "bcast_8_n32", "bcast_8_n32"),
	goal("Reduce 8 B, 32 ranks on 2 cores, loop ≤ 0.5× Open MPI (issue 14)", 0.5, "reduce_8_n32", "reduce_8_n32"),
	goal("Gather 8 B, 32 ranks on 2 cores, loop ≤ 0.5× Open MPI (issue 14)", 0.5, "gather_8_n32", "gather_8_n32"),
	goal("Scatter 8 B, 32 ranks on 2 cores, loop ≤ 0.5× Open MPI (issue 14)", 0.5, "scatter_8_n32", "scatter_8_n32"),
	goal("Allgather 8 B, 32 ranks on 2 cores, loop ≤ 0.5× Open MPI (issue 14)", 0.5, "allgather_8_n32", "allgather_8_n32"),
	goal("Alltoall 8 B, 32 ranks on 2 cores, loop ≤ 0.5× Open MPI (issue 14)", 0.5, "alltoall_8_n32", "alltoall_8_n32"),
	goal("Scan 8 B, 32 ranks on 2 cores, loop ≤ 0.5× Open MPI (issue 14)", 0.5, "scan_8_n32", "scan_8_n32"),
	goal("ReduceScatterBlock 8 B, 32 ranks on 2 cores, loop ≤ 0.5× Open MPI (issue 14)", 0.5, "reduce_scatter_block_8_n32", "reduce_scatter_block_8_n32"),
	goal("Bcast 1 MiB, 2 ranks, loop ≤ 0.7× Open MPI (issue 14)", 0.7, "bcast_1m", "bcast_1m"),
	goal("Allreduce 1 MiB, 2 ranks, loop ≤ 0.7× Open MPI (issue 14)", 0.7, "allreduce_1m", "allreduce_1m"),
	{"Barrier on a split communicator, 2 ranks ≤ 1.1× the world's, measured next to it (issue 14)", 1.1, over("shmrun", "barrier_subcomm", "shmrun", "barrier_world"), nil, nil},
	{"Barrier on a split communicator, 8 ranks on 2 cores ≤ 1.1× the world's, measured next to it (issue 14)", 1.1, over("shmrun", "barrier_subcomm_n8", "shmrun", "barrier_world_n8"), nil, nil},
	{"Barrier on a split communicator, 32 ranks on 2 cores ≤ 1.1× the world's, measured next to it (issue 14)", 1.1, over("shmrun", "barrier_subcomm_n32", "shmrun", "barrier_world_n32"), nil, nil},
	{"Ping-pong 8 B, 2 ranks ≤ 1.1× the C limit (issue 15)", 1.1, over("shmrun", "pingpong_8", "climit", "pingpong_8"), nil, nil},
	goal("Ping-pong 8 B, 2 ranks, no slower than Open MPI (issue 15)", 1, "pingpong_8", "pingpong_8"),
	goal("Ping-pong 64 KiB, 2 ranks ≤ 0.6× Open MPI (issue 15)", 0.6, "pingpong_64k", "pingpong_64k"),
	goal("Ping-pong 1 MiB, 2 ranks ≤ 0.6× Open MPI (issue 15)", 0.6, "pingpong_1m", "pingpong_1m"),
	goal("Ping-pong 4 MiB, 2 ranks ≤ 0.6× Open MPI (issue 15)", 0.6, "pingpong_4m", "pingpong_4m"),
	goal("Ping-pong 16 MiB, 2 ranks ≤ 0.6× Open MPI (issue 15)", 0.6, "pingpong_16m", "pingpong_16m"),
	goal("Message rate 8 B, 2 ranks ≥ 1.5× Open MPI's: time per message ≤ 1/1.5 of Open MPI's (issue 15)", 1/1.5, "msgrate_8", "msgrate_8"),
	{"Put 8 B + Flush on a Create window over AllocMem ≤ 1.1× ours on AllocateShared (issue 16)", 1.1, over("shmrun", "create_mem_put8_flush", "shmrun", "put8_flush"), nil, nil},
	{"Get 8 B + Flush on a Create window over AllocMem ≤ 1.1× ours on AllocateShared (issue 16)", 1.1, over("shmrun", "create_mem_get8_flush", "shmrun", "get8_flush"), nil, nil},
	{"FetchAndOp + Flush on a Create window over AllocMem ≤ 1.1× ours on AllocateShared (issue 16)", 1.1, over("shmrun", "create_mem_fop_flush", "shmrun", "fetch_and_op_i64"), nil, nil},
	goal("Put 8 B + Flush on a Create window over private memory, no slower than Open MPI's over malloc (issue 16)", 1, "create_priv_put8_flush", "cma_write_8"),
	goal("Get 8 B + Flush on a Create window over private memory, no slower than Open MPI's over malloc (issue 16)", 1, "create_priv_get8_flush", "cma_read_8"),
	{"Dynamic window Put 8 B + Flush over AllocMem ≤ 1.5× ours on AllocateShared (issue 16)", 1.5, over("shmrun", "dynamic_put8_flush", "shmrun", "put8_flush"), nil, nil},
	goal("Put of a matrix column (Vector) + Flush ≤ 0.7× Open MPI (issue 17)", 0.7, "put_type_column", "strided_copy_column"),
	goal("Put of a 64×64 Subarray + Flush ≤ 0.7× Open MPI (issue 17)", 0.7, "put_type_subarray_64", "strided_copy_subarray_64"),
	{"Contiguous datatype Put 64 KiB ≤ 1.05× the plain Put of 64 KiB (issue 17)", 1.05, over("shmrun", "put_type_contig_64k", "shmrun", "put_bw_65536"), nil, nil},
}

// splitChecks takes the answer checks out of the metadata ("<run>: check
// <row> ok|WRONG ...") and sums them up per run: how many rows were
// right, and every wrong one in full.
func splitChecks(meta []string) (sum, rest []string) {
	ok := map[string]int{}
	var runs, wrong []string
	for _, m := range meta {
		run, what, found := strings.Cut(m, ": check ")
		if !found {
			rest = append(rest, m)
			continue
		}
		if _, seen := ok[run]; !seen {
			runs = append(runs, run)
			ok[run] = 0
		}
		if f := strings.Fields(what); len(f) == 2 && f[1] == "ok" {
			ok[run]++
		} else {
			wrong = append(wrong, fmt.Sprintf("**%s: %s**", run, what))
		}
	}
	for _, run := range runs {
		sum = append(sum, fmt.Sprintf("%s: %d rows right", run, ok[run]))
	}
	return append(sum, wrong...), rest
}

// maxReps is the largest number of repetitions of any measurement.
func (r *results) maxReps() int {
	n := 1
	for _, byName := range r.reps {
		for _, k := range byName {
			n = max(n, k)
		}
	}
	return n
}
