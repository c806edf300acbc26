package obs

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRing(t *testing.T) {
	g := newRing(4)
	for i := range 6 {
		if s := g.add(Event{Ts: int64(i)}); s != i {
			t.Fatalf("add %d returned %d", i, s)
		}
	}
	if g.dropped() != 2 {
		t.Errorf("dropped %d, want 2", g.dropped())
	}
	var ts []int64
	for _, e := range g.ordered() {
		ts = append(ts, e.Ts)
	}
	if want := []int64{2, 3, 4, 5}; !equal(ts, want) {
		t.Errorf("ordered %v, want %v", ts, want)
	}
	if g.at(1) != nil || g.at(6) != nil || g.at(-1) != nil {
		t.Error("at returned a dropped or future event")
	}
	if e := g.at(5); e == nil || e.Ts != 5 {
		t.Errorf("at(5) = %v", e)
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// newTestRank is a Rank recording a trace, as Start makes one.
func newTestRank() *Rank {
	return &Rank{rank: 0, start: time.Now(), waits: map[string]*Timing{}, sent: map[int]*Count{}, received: map[int]*Count{}, trace: newRing(64)}
}

func TestRecordAndBursts(t *testing.T) {
	r := newTestRank()
	// RMA calls 1 µs apart on the clock bursts are judged by, whatever
	// the machine's scheduling does between them.
	tick := r.start
	r.clock = func() time.Time { tick = tick.Add(time.Microsecond); return tick }
	w := r.NewWin(WinDesc{Flavor: "allocate", Ranks: 2, Size: 64, Total: 128, DispUnit: 8, Layout: "contiguous"})
	for range 3 {
		w.RMA("Put", 1, 8)
	}
	w.RMA("Get", 1, 16) // another kind: a new burst
	w.Sync("Fence", time.Now())
	w.RMA("Get", 1, 16) // after a sync call: a new burst
	w.Lock(time.Now(), true)
	w.Lock(time.Now(), false)
	r.Wait("Barrier", time.Now().Add(-time.Millisecond))
	r.Message(1, 100, true)
	r.Message(1, 50, true)
	r.Message(1, 7, false)
	w.Free()
	s := r.statsLocked()
	ws := s.Windows[0]
	if c := ws.Calls["Put"]; c.Count != 3 || c.Bytes != 24 {
		t.Errorf("Put %+v, want 3 calls, 24 B", *c)
	}
	if c := ws.Calls["Get"]; c.Count != 2 || c.Bytes != 32 {
		t.Errorf("Get %+v", *c)
	}
	if ws.Locks.Acquired != 2 || ws.Locks.Waited != 1 || !ws.Freed {
		t.Errorf("locks %+v freed %v", ws.Locks, ws.Freed)
	}
	if b := s.Waits["Barrier"]; b.Count != 1 || b.MaxNs < int64(time.Millisecond) {
		t.Errorf("Barrier %+v", *b)
	}
	if len(s.Sent) != 1 || s.Sent[0].Count.Count != 2 || s.Sent[0].Bytes != 150 || s.Received[0].Bytes != 7 {
		t.Errorf("messages %+v %+v", s.Sent, s.Received)
	}
	var bursts []string
	for _, e := range r.trace.ordered() {
		if e.Cat == "rma" {
			bursts = append(bursts, e.Name+":"+string(rune('0'+e.N)))
		}
	}
	if got := strings.Join(bursts, " "); got != "Put:3 Get:1 Get:1" {
		t.Errorf("RMA bursts %q, want Put:3 Get:1 Get:1", got)
	}
}

func TestMergeAndTrace(t *testing.T) {
	dir := t.TempDir()
	r := newTestRank()
	w := r.NewWin(WinDesc{Flavor: "shared", Ranks: 2})
	w.RMA("Put", 1, 8)
	w.Sync("Fence", time.Now())
	r.Wait("Allreduce", time.Now())
	if err := writeJSON(filepath.Join(dir, "rank-0.json"), r.statsLocked()); err != nil {
		t.Fatal(err)
	}
	s, err := ReadStats(dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Ranks) != 1 || len(s.Missing) != 1 || s.Missing[0] != 1 || s.Version != StatsVersion {
		t.Fatalf("merged %+v", s)
	}
	var tab bytes.Buffer
	if err := s.Table(&tab); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"win 0 shared", "Put", "Fence", "Allreduce", "did not reach Finalize): [1]"} {
		if !strings.Contains(tab.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, tab.String())
		}
	}
	// A corrupt record is an error, not a silent gap.
	if err := os.WriteFile(filepath.Join(dir, "rank-1.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadStats(dir, 2); err == nil {
		t.Error("ReadStats accepted a corrupt record")
	}

	tdir := t.TempDir()
	if err := writeJSON(filepath.Join(tdir, "rank-0.json"), r.traceLocked()); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	missing, err := WriteTrace(tdir, 2, &out)
	if err != nil || len(missing) != 1 {
		t.Fatalf("WriteTrace: %v, missing %v", err, missing)
	}
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, e := range doc.TraceEvents {
		names[e["name"].(string)] = true
	}
	for _, want := range []string{"process_name", "Put ×1", "Fence", "Allreduce", "window 0 (shared) (not freed)"} {
		if !names[want] {
			t.Errorf("trace lacks %q: %v", want, names)
		}
	}
}

// TestTraceZeroDuration: a burst of one RMA call lasts 0 ns, and its
// complete event ("ph": "X") must still carry "dur": Perfetto's JSON
// importer drops an X event without one, so every single Put between a
// Lock and an Unlock would vanish from the picture.
func TestTraceZeroDuration(t *testing.T) {
	r := newTestRank()
	w := r.NewWin(WinDesc{Flavor: "allocate", Ranks: 2})
	w.Sync("Lock", time.Now())
	w.RMA("Put", 1, 8)
	w.Sync("Unlock", time.Now())
	dir := t.TempDir()
	if err := writeJSON(filepath.Join(dir, "rank-0.json"), r.traceLocked()); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := WriteTrace(dir, 1, &out); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	puts := 0
	for _, e := range doc.TraceEvents {
		if e["ph"] != "X" {
			continue
		}
		if _, ok := e["dur"]; !ok {
			t.Errorf("complete event without dur (Perfetto drops it): %v", e)
		}
		if e["name"] == "Put ×1" {
			puts++
		}
	}
	if puts != 1 {
		t.Errorf("%d Put ×1 events, want 1", puts)
	}
}

// TestHostileRecords: a rank's record is a file another process wrote; one
// whose counts are null (or that is otherwise not what a rank writes) is
// an error naming the rank, never a panic of the launcher.
func TestHostileRecords(t *testing.T) {
	for _, rec := range []string{
		`{"rank":0,"waits":{"Barrier":null}}`,
		`{"rank":0,"windows":[{"id":0,"calls":{"Put":null}}]}`,
		`{"rank":0,"windows":[{"id":0,"sync":{"Fence":null}}]}`,
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "rank-0.json"), []byte(rec), 0o600); err != nil {
			t.Fatal(err)
		}
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("record %s: panic %v", rec, p)
				}
			}()
			s, err := ReadStats(dir, 1)
			if err != nil {
				if !strings.Contains(err.Error(), "rank 0") {
					t.Errorf("record %s: error %v does not name the rank", rec, err)
				}
				return
			}
			var tab bytes.Buffer
			_ = s.Table(&tab)
			t.Errorf("record %s: accepted", rec)
		}()
	}
}
