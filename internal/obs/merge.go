package obs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// StatsVersion is the version of the --stats-json schema (docs/STATS.md).
const StatsVersion = 1

// Stats is a job's statistics: every rank's that reached Finalize, and the
// ranks that wrote none (they died, or never finalized).
type Stats struct {
	Version int         `json:"version"`
	Ranks   []RankStats `json:"ranks"`
	Missing []int       `json:"missing"`
}

// ReadStats merges the statistics n ranks wrote into dir.
func ReadStats(dir string, n int) (Stats, error) {
	s := Stats{Version: StatsVersion, Ranks: []RankStats{}, Missing: []int{}}
	for r := range n {
		var rs RankStats
		switch err := readJSON(dir, r, &rs); {
		case errors.Is(err, fs.ErrNotExist):
			s.Missing = append(s.Missing, r)
		case err != nil:
			return s, err
		default:
			if err := rs.check(r); err != nil {
				return s, err
			}
			s.Ranks = append(s.Ranks, rs)
		}
	}
	return s, nil
}

// check reports what in rank r's record no rank writes: another rank's
// number, or a null count (which Table would dereference). The file is
// another process's, so it is checked before it is used.
func (rs *RankStats) check(r int) error {
	if rs.Rank != r {
		return fmt.Errorf("rank %d's record: it says it is rank %d's", r, rs.Rank)
	}
	for name, t := range rs.Waits {
		if t == nil {
			return fmt.Errorf("rank %d's record: %s has no timing", r, name)
		}
	}
	for _, w := range rs.Windows {
		for name, c := range w.Calls {
			if c == nil {
				return fmt.Errorf("rank %d's record: window %d: %s has no count", r, w.ID, name)
			}
		}
		for name, t := range w.Sync {
			if t == nil {
				return fmt.Errorf("rank %d's record: window %d: %s has no timing", r, w.ID, name)
			}
		}
	}
	return nil
}

func readJSON(dir string, r int, v any) error {
	b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("rank-%d.json", r)))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("rank %d's record: %v", r, err)
	}
	return nil
}

// Table writes the short human summary: per rank, each window's RMA calls
// and synchronization, its lock contention, the rank's collectives and
// waits, and its messages.
func (s Stats) Table(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "rank\twhere\tcall\tcount\tbytes\ttime\tmax\t")
	for _, r := range s.Ranks {
		for _, win := range r.Windows {
			where := fmt.Sprintf("win %d %s", win.ID, win.Flavor)
			for _, name := range sortedKeys(win.Calls) {
				c := win.Calls[name]
				fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t\t\t\n", r.Rank, where, name, c.Count, bytesStr(c.Bytes))
			}
			for _, name := range sortedKeys(win.Sync) {
				t := win.Sync[name]
				fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t\t%s\t%s\t\n", r.Rank, where, name, t.Count, durStr(t.TotalNs), durStr(t.MaxNs))
			}
			if l := win.Locks; l.Acquired > 0 {
				fmt.Fprintf(tw, "%d\t%s\tlocks waited\t%d/%d\t\t\t%s\t\n", r.Rank, where, l.Waited, l.Acquired, durStr(l.LongestWaitNs))
			}
		}
		for _, name := range sortedKeys(r.Waits) {
			t := r.Waits[name]
			fmt.Fprintf(tw, "%d\t\t%s\t%d\t\t%s\t%s\t\n", r.Rank, name, t.Count, durStr(t.TotalNs), durStr(t.MaxNs))
		}
		for _, p := range r.Sent {
			fmt.Fprintf(tw, "%d\tto %d\tmessages\t%d\t%s\t\t\t\n", r.Rank, p.Peer, p.Count.Count, bytesStr(p.Bytes))
		}
		for _, p := range r.Received {
			fmt.Fprintf(tw, "%d\tfrom %d\tmessages\t%d\t%s\t\t\t\n", r.Rank, p.Peer, p.Count.Count, bytesStr(p.Bytes))
		}
	}
	if len(s.Missing) > 0 {
		fmt.Fprintf(tw, "ranks without statistics (they did not reach Finalize): %v\n", s.Missing)
	}
	return tw.Flush()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func bytesStr(n int64) string {
	switch {
	case n >= 10<<30:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 10<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 10<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

func durStr(ns int64) string { return time.Duration(ns).Round(durRound(ns)).String() }

func durRound(ns int64) time.Duration {
	switch {
	case ns >= int64(time.Second):
		return time.Millisecond
	case ns >= int64(time.Millisecond):
		return time.Microsecond
	}
	return time.Nanosecond
}

// chromeEvent is one event of the Chrome trace-event format (the "JSON
// object format": traceEvents, ts and dur in microseconds).
type chromeEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Dur  *float64       `json:"dur,omitempty"` // set on every X event: Perfetto drops one without it, even of 0 µs
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	S    string         `json:"s,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

// WriteTrace merges the traces n ranks wrote into dir into one file of
// the Chrome trace-event format, which Perfetto (ui.perfetto.dev) and
// chrome://tracing open: a process per rank, a thread for its collectives
// and receives (tid 0) and one per window (tid 1 + the window's id) with
// the window's lifetime, its synchronization calls and its RMA bursts.
// Times are microseconds from the first rank's start. It returns the
// ranks that wrote no trace.
func WriteTrace(dir string, n int, out io.Writer) ([]int, error) {
	var ranks []RankTrace
	var missing []int
	for r := range n {
		var rt RankTrace
		switch err := readJSON(dir, r, &rt); {
		case errors.Is(err, fs.ErrNotExist):
			missing = append(missing, r)
		case err != nil:
			return missing, err
		case rt.Rank != r:
			return missing, fmt.Errorf("rank %d's trace: it says it is rank %d's", r, rt.Rank)
		default:
			ranks = append(ranks, rt)
		}
	}
	var t0 int64
	for i, rt := range ranks {
		if i == 0 || rt.StartUnixNs < t0 {
			t0 = rt.StartUnixNs
		}
	}
	evs := []chromeEvent{}
	for _, rt := range ranks {
		us := func(ns int64) float64 { return float64(rt.StartUnixNs-t0+ns) / 1e3 }
		evs = append(evs,
			chromeEvent{Name: "process_name", Ph: "M", Pid: rt.Rank, Args: map[string]any{"name": fmt.Sprintf("rank %d (pid %d)", rt.Rank, rt.Pid)}},
			chromeEvent{Name: "process_sort_index", Ph: "M", Pid: rt.Rank, Args: map[string]any{"sort_index": rt.Rank}},
			chromeEvent{Name: "thread_name", Ph: "M", Pid: rt.Rank, Tid: 0, Args: map[string]any{"name": "collectives and messages"}})
		named := map[int]bool{}
		if rt.Dropped > 0 && len(rt.Events) > 0 {
			evs = append(evs, chromeEvent{Name: fmt.Sprintf("trace ring full: %d older events dropped", rt.Dropped), Ph: "i", S: "p",
				Ts: us(rt.Events[0].Ts), Pid: rt.Rank})
		}
		for _, e := range rt.Events {
			tid := 0
			if e.Win >= 0 {
				tid = 1 + e.Win
				if !named[e.Win] {
					named[e.Win] = true
					evs = append(evs, chromeEvent{Name: "thread_name", Ph: "M", Pid: rt.Rank, Tid: tid, Args: map[string]any{"name": fmt.Sprintf("window %d", e.Win)}})
				}
			}
			dur := float64(e.Dur) / 1e3
			ce := chromeEvent{Name: e.Name, Cat: e.Cat, Ph: "X", Ts: us(e.Ts), Dur: &dur, Pid: rt.Rank, Tid: tid}
			if e.Cat == "rma" {
				ce.Name = fmt.Sprintf("%s ×%d", e.Name, e.N)
				ce.Args = map[string]any{"calls": e.N, "bytes": e.Bytes, "first_target": e.Target}
			}
			evs = append(evs, ce)
		}
	}
	other := map[string]any{"producer": "shmrun --trace"}
	if len(missing) > 0 {
		other["ranks_without_trace"] = strings.Trim(fmt.Sprint(missing), "[]")
	}
	enc := json.NewEncoder(out)
	return missing, enc.Encode(map[string]any{"traceEvents": evs, "displayTimeUnit": "ns", "otherData": other})
}
