package obs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shmrun/shmrun/internal/obs"
	"github.com/shmrun/shmrun/launcher"
)

// TestCountsJob runs testdata/counts as 2 ranks under --stats,
// --stats-json and --trace and checks every number it knows: the RMA calls
// and bytes per window, the synchronization and collective counts, the
// messages, and in the trace the calls, bursts, lifetimes and the Barrier
// rank 1 waits in while rank 0 sleeps.
func TestCountsJob(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a job")
	}
	dir := t.TempDir()
	statsFile, traceFile := filepath.Join(dir, "stats.json"), filepath.Join(dir, "trace.json")
	var stdout, stderr bytes.Buffer
	res, err := launcher.Run(context.Background(), launcher.Config{
		Parts: []launcher.Part{{N: 2, Prog: "./testdata/counts"}},
		Stats: true, StatsJSON: statsFile, Trace: traceFile,
		Oversubscribe: true, Timeout: 2 * time.Minute,
		Stdout: &stdout, Stderr: &stderr,
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("job: %v, exit %d %s\n%s%s", err, res.ExitCode, res.Reason, stdout.String(), stderr.String())
	}
	for _, want := range []string{"statistics of 2 rank(s)", "win 0 allocate", "CompareAndSwap", "locks waited"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, stderr.String())
		}
	}
	b, err := os.ReadFile(statsFile)
	if err != nil {
		t.Fatal(err)
	}
	var s obs.Stats
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.Version != obs.StatsVersion || len(s.Ranks) != 2 || len(s.Missing) != 0 {
		t.Fatalf("stats: version %d, %d ranks, missing %v", s.Version, len(s.Ranks), s.Missing)
	}
	calls := map[string][2]int64{"Put": {10, 80}, "Get": {5, 40}, "Accumulate": {7, 56}, "FetchAndOp": {7, 56},
		"CompareAndSwap": {7, 56}, "GetAccumulate": {3, 24}}
	syncs := map[string]int64{"Fence": 3, "Lock": 7, "Unlock": 7, "LockAll": 1, "UnlockAll": 1}
	waits := map[string]int64{"Barrier": 4, "Allreduce": 6}
	for _, r := range s.Ranks {
		if len(r.Windows) != 2 {
			t.Fatalf("rank %d: %d windows, want 2", r.Rank, len(r.Windows))
		}
		if cw := r.Windows[1]; cw.Flavor != "create" || cw.Size != int64(256*(r.Rank+1)) || cw.Total != 768 || cw.DispUnit != 4 || !cw.Freed {
			t.Errorf("rank %d: Create window %+v, want its parts (256 and 512 bytes, disp unit 4)", r.Rank, cw.WinDesc)
		}
		w := r.Windows[0]
		if w.Flavor != "allocate" || w.Ranks != 2 || w.Size != 512 || w.Total != 1024 || w.DispUnit != 8 || !w.Freed {
			t.Errorf("rank %d: window %+v", r.Rank, w.WinDesc)
		}
		for name, want := range calls {
			if c := w.Calls[name]; c == nil || c.Count != want[0] || c.Bytes != want[1] {
				t.Errorf("rank %d: %s %+v, want %d calls, %d B", r.Rank, name, c, want[0], want[1])
			}
		}
		if len(w.Calls) != len(calls) {
			t.Errorf("rank %d: calls %v", r.Rank, w.Calls)
		}
		for name, want := range syncs {
			if c := w.Sync[name]; c == nil || c.Count != want {
				t.Errorf("rank %d: %s %+v, want %d", r.Rank, name, c, want)
			}
		}
		if w.Locks.Acquired != 8 || w.Locks.Waited > 8 {
			t.Errorf("rank %d: locks %+v, want 8 acquisitions", r.Rank, w.Locks)
		}
		for name, want := range waits {
			if c := r.Waits[name]; c == nil || c.Count != want {
				t.Errorf("rank %d: %s %+v, want %d", r.Rank, name, c, want)
			}
		}
		peers, want := r.Sent, 9
		if r.Rank == 1 {
			peers = r.Received
		}
		if len(peers) != 1 || peers[0].Peer != 1-r.Rank || peers[0].Count.Count != int64(want) || peers[0].Bytes != 144 {
			t.Errorf("rank %d: messages sent %+v received %+v", r.Rank, r.Sent, r.Received)
		}
	}
	if b := s.Ranks[1].Waits["Barrier"]; b.MaxNs < int64(25*time.Millisecond) {
		t.Errorf("rank 1 waited %v at most in Barrier while rank 0 slept 30ms", time.Duration(b.MaxNs))
	}

	// The trace: parsed back, its events per rank and track.
	tb, err := os.ReadFile(traceFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Name string         `json:"name"`
			Cat  string         `json:"cat"`
			Ph   string         `json:"ph"`
			Ts   float64        `json:"ts"`
			Dur  float64        `json:"dur"`
			Pid  int            `json:"pid"`
			Tid  int            `json:"tid"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(tb, &doc); err != nil {
		t.Fatalf("the trace is not JSON: %v", err)
	}
	type key struct {
		pid  int
		name string
	}
	n := map[key]int{}
	puts := map[int]float64{}
	var barrier1 float64
	lifetimes := 0
	for _, e := range doc.TraceEvents {
		if e.Ph != "X" {
			continue
		}
		if e.Ts < 0 || e.Dur < 0 {
			t.Errorf("event %+v: negative time", e)
		}
		switch e.Cat {
		case "rma":
			if e.Tid != 1 {
				t.Errorf("RMA burst %s on track %d, want window 0's (1)", e.Name, e.Tid)
			}
			if strings.HasPrefix(e.Name, "Put ") {
				puts[e.Pid] += e.Args["calls"].(float64)
			}
		case "window":
			lifetimes++
		case "sync":
			if e.Tid != 1 {
				t.Errorf("%s on track %d, want window 0's (1)", e.Name, e.Tid)
			}
			n[key{e.Pid, e.Name}]++
		case "wait":
			if e.Tid != 0 {
				t.Errorf("%s on track %d, want 0", e.Name, e.Tid)
			}
			n[key{e.Pid, e.Name}]++
			if e.Pid == 1 && e.Name == "Barrier" {
				barrier1 = max(barrier1, e.Dur)
			}
		}
	}
	for pid := range 2 {
		if puts[pid] != 10 {
			t.Errorf("rank %d: the Put bursts hold %v calls, want 10", pid, puts[pid])
		}
		for name, want := range map[string]int{"Fence": 3, "Lock": 7, "Barrier": 4, "Allreduce": 6} {
			if got := n[key{pid, name}]; got != want {
				t.Errorf("rank %d: %d %s events, want %d", pid, got, name, want)
			}
		}
	}
	if lifetimes != 4 { // two windows on each rank
		t.Errorf("%d window lifetimes, want 4", lifetimes)
	}
	if barrier1 < 25_000 {
		t.Errorf("rank 1's longest Barrier is %vµs in the trace, want ≥ 25ms (rank 0 slept 30ms)", barrier1)
	}
}

// TestUnwritableOutput: a --stats-json or --trace file that cannot be
// created fails the job before any rank starts.
func TestUnwritableOutput(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "no-such-dir", "out.json")
	for _, cfg := range []launcher.Config{{StatsJSON: bad}, {Trace: bad}} {
		cfg.Parts = []launcher.Part{{N: 1, Prog: "/bin/true"}}
		var stderr bytes.Buffer
		cfg.Stderr = &stderr
		if _, err := launcher.Run(context.Background(), cfg); !errors.Is(err, launcher.ErrUsage) || !strings.Contains(err.Error(), "no-such-dir") {
			t.Errorf("%+v: %v, want a usage error naming the path", cfg, err)
		}
	}
}

// TestRankDies: a rank that exits before Finalize writes no record; the
// job's status is its failure, and the statistics of the ranks that
// finalized (if any did before the job ended) are still written, with the
// dead rank listed as missing.
func TestRankDies(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a job")
	}
	statsFile := filepath.Join(t.TempDir(), "stats.json")
	var stdout, stderr bytes.Buffer
	res, err := launcher.Run(context.Background(), launcher.Config{
		Parts:     []launcher.Part{{N: 3, Prog: "./testdata/dies"}},
		StatsJSON: statsFile, Oversubscribe: true, Timeout: time.Minute,
		Stdout: &stdout, Stderr: &stderr,
	})
	if err != nil || res.ExitCode != 3 {
		t.Fatalf("job: %v, exit %d, want 3\n%s", err, res.ExitCode, stderr.String())
	}
	b, err := os.ReadFile(statsFile)
	if err != nil {
		t.Fatal(err)
	}
	var s obs.Stats
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("the stats of a failed job are not JSON: %v\n%s", err, b)
	}
	if !slices.Contains(s.Missing, 1) || len(s.Ranks)+len(s.Missing) != 3 {
		t.Errorf("ranks %d, missing %v: want rank 1 missing and every rank accounted for", len(s.Ranks), s.Missing)
	}
}
