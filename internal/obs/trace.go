package obs

import "time"

// TraceEvents is how many events a rank's trace keeps: a ring that drops
// its oldest when full and counts what it dropped.
const TraceEvents = 1 << 16

// BurstGap is the longest pause between two RMA calls of one kind on one
// window that the trace still draws as one burst.
const BurstGap = 20 * time.Microsecond

// Event is one interval of a rank's timeline: a call (Cat "sync" on a
// window, "wait" for the rank's collectives and receives), a burst of RMA
// calls (Cat "rma": N calls, Bytes in all, the first one's Target) or a
// window's lifetime (Cat "window"). Ts and Dur are nanoseconds from the
// rank's start.
type Event struct {
	Name   string `json:"name"`
	Cat    string `json:"cat"`
	Ts     int64  `json:"ts"`
	Dur    int64  `json:"dur"`
	Win    int    `json:"win"` // the window's ID, -1 for none
	N      int64  `json:"n,omitempty"`
	Bytes  int64  `json:"bytes,omitempty"`
	Target int    `json:"target,omitempty"`
}

func (e *Event) end() int64 { return e.Ts + e.Dur }

// ring holds the newest len(ev) events; seq counts every event added.
type ring struct {
	ev  []Event
	seq int
}

func newRing(n int) *ring { return &ring{ev: make([]Event, 0, n)} }

// add appends e (dropping the oldest when full) and returns its sequence
// number.
func (g *ring) add(e Event) int {
	if len(g.ev) < cap(g.ev) {
		g.ev = append(g.ev, e)
	} else {
		g.ev[g.seq%cap(g.ev)] = e
	}
	g.seq++
	return g.seq - 1
}

// at is the event of sequence number s while the ring still holds it.
func (g *ring) at(s int) *Event {
	if s < 0 || s >= g.seq || g.seq-s > cap(g.ev) {
		return nil
	}
	return &g.ev[s%cap(g.ev)]
}

// dropped is how many events the ring lost.
func (g *ring) dropped() int { return g.seq - len(g.ev) }

// ordered is the events held, oldest first.
func (g *ring) ordered() []Event {
	if len(g.ev) < cap(g.ev) {
		return g.ev
	}
	i := g.seq % cap(g.ev)
	return append(append([]Event(nil), g.ev[i:]...), g.ev[:i]...)
}

// RankTrace is one rank's trace as written at Finalize.
type RankTrace struct {
	Rank        int     `json:"rank"`
	Pid         int     `json:"pid"`
	StartUnixNs int64   `json:"start_unix_ns"`
	Dropped     int     `json:"dropped"`
	Events      []Event `json:"events"`
}

func (r *Rank) traceLocked() RankTrace {
	now := time.Now()
	for _, w := range r.wins {
		if w.freed.IsZero() { // alive at Finalize: its lifetime ends there
			r.trace.add(Event{Name: w.traceName() + " (not freed)", Cat: "window", Ts: r.since(w.created), Dur: int64(now.Sub(w.created)), Win: w.id})
		}
	}
	return RankTrace{Rank: r.rank, Pid: r.pid, StartUnixNs: r.start.UnixNano(), Dropped: r.trace.dropped(), Events: r.trace.ordered()}
}
