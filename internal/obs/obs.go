// Package obs is what a rank records for shmrun --stats and --trace: the
// count and bytes of each RMA call per window, the time spent in each
// synchronization call, collective and blocking receive, lock contention,
// messages per peer, and (with --trace) a timeline of those calls in a
// bounded ring. The launcher asks for it through the rank's environment
// (format.EnvStats, format.EnvTrace: directories); at Finalize the rank
// writes its record there as JSON and the launcher merges the ranks'.
//
// When neither is asked for, On is false, no Rank exists, and the callers
// (win, comm) keep their fast paths: they test a nil pointer or On once per
// call off the fast path, and route every call through the paths that
// record only when observing.
package obs

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/shmrun/shmrun/internal/format"
)

// on is fixed at start from the environment.
var (
	statsDir = os.Getenv(format.EnvStats)
	traceDir = os.Getenv(format.EnvTrace)
	on       = statsDir != "" || traceDir != ""
)

// On reports whether this process observes (--stats or --trace).
func On() bool { return on }

// Rank is one rank's record.
type Rank struct {
	mu       sync.Mutex
	rank     int
	pid      int
	start    time.Time
	wins     []*Win
	waits    map[string]*Timing
	sent     map[int]*Count
	received map[int]*Count
	trace    *ring
	done     bool
	clock    func() time.Time // nil: time.Now (tests set a clock bursts can be judged by)
}

var (
	selfMu sync.Mutex
	self   *Rank
)

// Start begins this rank's record (comm.Init, once the rank knows its
// place); nil when not observing.
func Start(rank int) *Rank {
	if !on {
		return nil
	}
	selfMu.Lock()
	defer selfMu.Unlock()
	if self == nil {
		self = &Rank{rank: rank, pid: os.Getpid(), start: time.Now(),
			waits: map[string]*Timing{}, sent: map[int]*Count{}, received: map[int]*Count{}}
		if traceDir != "" {
			self.trace = newRing(TraceEvents)
		}
	}
	return self
}

// Self is the rank's record, or nil.
func Self() *Rank {
	if !on {
		return nil
	}
	selfMu.Lock()
	defer selfMu.Unlock()
	return self
}

// Count is how many calls and their bytes.
type Count struct {
	Count int64 `json:"count"`
	Bytes int64 `json:"bytes"`
}

// Timing is how many calls and the time spent in them (nanoseconds).
type Timing struct {
	Count   int64 `json:"count"`
	TotalNs int64 `json:"total_ns"`
	MaxNs   int64 `json:"max_ns"`
}

func (t *Timing) add(d time.Duration) {
	t.Count++
	t.TotalNs += int64(d)
	t.MaxNs = max(t.MaxNs, int64(d))
}

// Win is one window's record on this rank.
type Win struct {
	r        *Rank
	id       int
	desc     WinDesc
	created  time.Time
	freed    time.Time
	calls    map[string]*Count
	sync     map[string]*Timing
	locks    LockStats
	lastRMA  int // index in the trace ring of the burst RMA calls extend, -1: none
	lastCall string
}

// WinDesc is what a window is: set at its creation.
type WinDesc struct {
	Flavor   string `json:"flavor"` // shared, allocate, create or dynamic
	Ranks    int    `json:"ranks"`
	Size     int64  `json:"size"`      // this rank's part, bytes
	Total    int64  `json:"total"`     // every rank's parts, bytes
	DispUnit int64  `json:"disp_unit"` // this rank's
	Layout   string `json:"layout"`    // contiguous, noncontig, own memory, dynamic
}

// LockStats is the contention of Lock and LockAll on a window: how many
// acquisitions, how many of them waited for another rank, the longest
// wait.
type LockStats struct {
	Acquired      int64 `json:"acquired"`
	Waited        int64 `json:"waited"`
	LongestWaitNs int64 `json:"longest_wait_ns"`
}

// NewWin records a window's creation; nil when not observing.
func (r *Rank) NewWin(d WinDesc) *Win {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	w := &Win{r: r, id: len(r.wins), desc: d, created: time.Now(), calls: map[string]*Count{}, sync: map[string]*Timing{}, lastRMA: -1}
	r.wins = append(r.wins, w)
	return w
}

// Exposed records the memory of a window whose ranks give their own
// (Create), known only once they have told each other, after NewWin:
// this rank's part, every rank's parts and this rank's disp unit. Safe on
// nil.
func (w *Win) Exposed(size, total, dispUnit int64) {
	if w == nil {
		return
	}
	w.r.mu.Lock()
	defer w.r.mu.Unlock()
	w.desc.Size, w.desc.Total, w.desc.DispUnit = size, total, dispUnit
}

// ID is the window's number on this rank (creation order).
func (w *Win) ID() int { return w.id }

// RMA records one RMA call of n bytes to target (call: "Put", "Get",
// "Accumulate", ...). With a trace, consecutive calls of one kind on the
// window less than BurstGap apart are one burst event.
func (w *Win) RMA(call string, target, n int) {
	if w == nil {
		return
	}
	r := w.r
	r.mu.Lock()
	defer r.mu.Unlock()
	c := w.calls[call]
	if c == nil {
		c = &Count{}
		w.calls[call] = c
	}
	c.Count++
	c.Bytes += int64(n)
	if r.trace == nil {
		return
	}
	now := r.since(r.now())
	if e := r.trace.at(w.lastRMA); e != nil && w.lastCall == call && now-e.end() < int64(BurstGap) {
		e.Dur = now - e.Ts
		e.N++
		e.Bytes += int64(n)
		return
	}
	w.lastCall = call
	w.lastRMA = r.trace.add(Event{Name: call, Cat: "rma", Ts: now, Win: w.id, N: 1, Bytes: int64(n), Target: target})
}

// Sync records a synchronization call on the window that began at t0
// (call: "Fence", "Lock", "Start", "Wait", ...).
func (w *Win) Sync(call string, t0 time.Time) {
	if w == nil {
		return
	}
	d := time.Since(t0)
	w.r.mu.Lock()
	defer w.r.mu.Unlock()
	w.r.timedLocked(w.sync, call, "sync", w.id, t0, d)
	w.lastRMA = -1 // the next RMA call starts a burst
}

// Lock records an acquisition of a lock (Lock or LockAll) that began at
// t0 and waited for another rank or not.
func (w *Win) Lock(t0 time.Time, waited bool) {
	if w == nil {
		return
	}
	d := time.Since(t0)
	w.r.mu.Lock()
	defer w.r.mu.Unlock()
	w.locks.Acquired++
	if waited {
		w.locks.Waited++
		w.locks.LongestWaitNs = max(w.locks.LongestWaitNs, int64(d))
	}
}

// Free records the window's end.
func (w *Win) Free() {
	if w == nil {
		return
	}
	w.r.mu.Lock()
	defer w.r.mu.Unlock()
	w.freed = time.Now()
	if w.r.trace != nil {
		w.r.trace.add(Event{Name: w.traceName(), Cat: "window",
			Ts: w.r.since(w.created), Dur: int64(w.freed.Sub(w.created)), Win: w.id})
	}
}

func (w *Win) traceName() string { return fmt.Sprintf("window %d (%s)", w.id, w.desc.Flavor) }

// Wait records a call of the rank's that is not a window's (a collective,
// a blocking receive or wait) that began at t0.
func (r *Rank) Wait(call string, t0 time.Time) {
	if r == nil {
		return
	}
	r.timed(r.waits, call, "wait", -1, t0)
}

func (r *Rank) timed(m map[string]*Timing, call, cat string, win int, t0 time.Time) {
	d := time.Since(t0)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.timedLocked(m, call, cat, win, t0, d)
}

// timedLocked records a call of d that began at t0; r.mu is held.
func (r *Rank) timedLocked(m map[string]*Timing, call, cat string, win int, t0 time.Time, d time.Duration) {
	t := m[call]
	if t == nil {
		t = &Timing{}
		m[call] = t
	}
	t.add(d)
	if r.trace != nil {
		r.trace.add(Event{Name: call, Cat: cat, Ts: r.since(t0), Dur: int64(d), Win: win})
	}
}

// Message records a message of n bytes sent to (send) or received from
// world rank peer.
func (r *Rank) Message(peer, n int, send bool) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.received
	if send {
		m = r.sent
	}
	c := m[peer]
	if c == nil {
		c = &Count{}
		m[peer] = c
	}
	c.Count++
	c.Bytes += int64(n)
}

// since is t in nanoseconds from the rank's start.
func (r *Rank) since(t time.Time) int64 { return int64(t.Sub(r.start)) }

func (r *Rank) now() time.Time {
	if r.clock != nil {
		return r.clock()
	}
	return time.Now()
}

// Finish writes the record where the launcher asked (Finalize); later
// calls do nothing.
func (r *Rank) Finish() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return nil
	}
	r.done = true
	if statsDir != "" {
		if err := writeJSON(filepath.Join(statsDir, fmt.Sprintf("rank-%d.json", r.rank)), r.statsLocked()); err != nil {
			return err
		}
	}
	if traceDir != "" {
		if err := writeJSON(filepath.Join(traceDir, fmt.Sprintf("rank-%d.json", r.rank)), r.traceLocked()); err != nil {
			return err
		}
	}
	return nil
}

func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("obs: writing %s: %w", path, err)
	}
	return os.Rename(tmp, path)
}

// RankStats is one rank's statistics as written at Finalize (the launcher
// merges them into Stats).
type RankStats struct {
	Rank      int                `json:"rank"`
	Pid       int                `json:"pid"`
	ElapsedNs int64              `json:"elapsed_ns"`
	Windows   []WinStats         `json:"windows"`
	Waits     map[string]*Timing `json:"waits"`
	Sent      []PeerCount        `json:"sent"`
	Received  []PeerCount        `json:"received"`
}

// WinStats is one window's statistics on one rank.
type WinStats struct {
	ID int `json:"id"`
	WinDesc
	LifetimeNs int64              `json:"lifetime_ns"` // to Free, or to Finalize
	Freed      bool               `json:"freed"`
	Calls      map[string]*Count  `json:"calls"`
	Sync       map[string]*Timing `json:"sync"`
	Locks      LockStats          `json:"locks"`
}

// PeerCount is the messages to or from one world rank.
type PeerCount struct {
	Peer int `json:"peer"`
	Count
}

func (r *Rank) statsLocked() RankStats {
	now := time.Now()
	s := RankStats{Rank: r.rank, Pid: r.pid, ElapsedNs: int64(now.Sub(r.start)), Waits: r.waits,
		Sent: peers(r.sent), Received: peers(r.received), Windows: []WinStats{}}
	for _, w := range r.wins {
		end := w.freed
		if end.IsZero() {
			end = now
		}
		s.Windows = append(s.Windows, WinStats{ID: w.id, WinDesc: w.desc, LifetimeNs: int64(end.Sub(w.created)),
			Freed: !w.freed.IsZero(), Calls: w.calls, Sync: w.sync, Locks: w.locks})
	}
	return s
}

func peers(m map[int]*Count) []PeerCount {
	out := []PeerCount{}
	for p, c := range m {
		out = append(out, PeerCount{Peer: p, Count: *c})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Peer < out[j].Peer })
	return out
}
