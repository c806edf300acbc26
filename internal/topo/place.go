package topo

import (
	"errors"
	"fmt"
)

// MaxRanks bounds the ranks Place computes bindings for, so that a wild
// count is an error rather than an allocation that fails.
const MaxRanks = 1 << 20

// ErrPlacement is wrapped by every error of Place: the request cannot be
// met on this machine with these allowed CPUs.
var ErrPlacement = errors.New("impossible placement")

// Options say how the launcher places ranks (--map-by, --bind-to,
// --oversubscribe).
type Options struct {
	// Map is the level whose instances ranks go round-robin over: rank i
	// goes to instance i mod k of the k instances that hold allowed CPUs.
	// NoLevel means Core.
	Map Level
	// Bind is the level a rank is bound to: the instance of that level
	// holding the rank's place. NoLevel leaves ranks unbound (they run on
	// every allowed CPU).
	Bind Level
	// Oversubscribe allows more ranks than a resource has room for:
	// hardware threads (cores when binding to Core), overall and in each
	// instance ranks are bound to.
	Oversubscribe bool
}

// Binding is where Place puts one rank.
type Binding struct {
	Rank int
	// CPUs is the rank's CPU set: its binding, or every allowed CPU when
	// it is not bound.
	CPUs CPUSet
	// Bound reports whether the rank is bound (Options.Bind was a level).
	Bound bool
	// Mapped is the instance of Options.Map the rank was mapped to, its
	// CPUs cut to the allowed ones.
	Mapped Instance
}

// Place computes where n ranks go under opts, within the allowed CPUs,
// without touching the machine: the launcher binds rank i to
// Bindings[i].CPUs before it starts it, and --report-bindings prints
// Report of each.
//
// Rank i is mapped to the (i mod k)-th of the k map-level instances that
// hold allowed CPUs (cut to them). When Bind is finer than Map, the rank is
// bound to the j-th bind-level instance inside its mapped instance, j being
// how many ranks that instance got before it (wrapping when it is full,
// which oversubscribes); where the levels do not nest, a bind instance is
// cut to the mapped instance (the part of a socket-wide L3 in one NUMA
// node). When Bind is Map or coarser, the rank is bound to the bind-level
// instance containing its mapped instance. It is an error, naming the
// numbers, when there are more ranks than hardware threads (cores for Bind
// Core) in the allowed CPUs or in one bind instance and Options does not
// allow oversubscription; when the map or bind level has no
// instance among the allowed CPUs (no L3 information in sysfs, say); and
// when a mapped instance spans several instances of a coarser bind level.
func (t *Topology) Place(n int, opts Options) ([]Binding, error) {
	if n < 1 || n > MaxRanks {
		return nil, fmt.Errorf("topo: place %d ranks: need 1 to %d: %w", n, MaxRanks, ErrPlacement)
	}
	mapL, bindL := opts.Map, opts.Bind
	if mapL == NoLevel {
		mapL = Core
	}
	if !mapL.valid() {
		return nil, fmt.Errorf("topo: map by %v: not a level: %w", mapL, ErrPlacement)
	}
	if bindL != NoLevel && !bindL.valid() {
		return nil, fmt.Errorf("topo: bind to %v: not a level: %w", bindL, ErrPlacement)
	}
	slots, slotName := t.capacity(t.allowed, bindL)
	if n > slots && !opts.Oversubscribe {
		return nil, fmt.Errorf("topo: %d ranks but the allowed CPUs %v hold %d %s; allow oversubscription or start fewer ranks: %w",
			n, t.allowed, slots, slotName, ErrPlacement)
	}
	mapped := t.allowedInstances(mapL, t.allowed)
	if len(mapped) == 0 {
		return nil, fmt.Errorf("topo: map by %v: %s: %w", mapL, t.noInstance(mapL), ErrPlacement)
	}

	out := make([]Binding, n)
	uses := make([]int, len(mapped)) // ranks mapped to each instance so far
	for i := range out {
		m := mapped[i%len(mapped)]
		pass := uses[i%len(mapped)]
		uses[i%len(mapped)]++
		b := Binding{Rank: i, CPUs: t.allowed, Mapped: m}
		if bindL != NoLevel {
			cpus, err := t.bindWithin(bindL, mapL, m, pass)
			if err != nil {
				return nil, fmt.Errorf("topo: rank %d: %w", i, err)
			}
			b.CPUs, b.Bound = cpus, true
		}
		out[i] = b
	}

	if bindL != NoLevel && !opts.Oversubscribe {
		count := make(map[string]int)
		for _, b := range out {
			count[b.CPUs.key()]++
		}
		for _, b := range out {
			room, what := t.capacity(b.CPUs, bindL)
			if c := count[b.CPUs.key()]; c > room {
				return nil, fmt.Errorf("topo: %d ranks bound to %v CPUs %v, which hold %d %s; allow oversubscription or start fewer ranks: %w",
					c, bindL, b.CPUs, room, what, ErrPlacement)
			}
		}
	}
	return out, nil
}

// capacity is how many ranks cpus holds without oversubscription: its
// cores when ranks are bound to cores, else its hardware threads. Counting
// cores for unbound ranks too would refuse, on any machine with SMT, the
// launcher's default job of one rank per allowed CPU, which the launcher
// (and its documentation) does not count as oversubscribed.
func (t *Topology) capacity(cpus CPUSet, bind Level) (int, string) {
	n, what := cpus.Len(), "hardware thread"
	if bind == Core {
		n, what = len(t.allowedInstances(Core, cpus)), "core"
	}
	if n != 1 {
		what += "s"
	}
	return n, what
}

// allowedInstances returns the instances of l that hold CPUs of within,
// cut to within, by Index.
func (t *Topology) allowedInstances(l Level, within CPUSet) []Instance {
	var out []Instance
	for _, in := range t.levels[l.index()] {
		if cut := in.CPUs.Intersect(within); !cut.IsEmpty() {
			in.CPUs = cut
			out = append(out, in)
		}
	}
	return out
}

// bindWithin returns the CPUs a rank mapped to m (for the pass-th time) is
// bound to at level bind.
func (t *Topology) bindWithin(bind, mapL Level, m Instance, pass int) (CPUSet, error) {
	if bind > mapL {
		subs := t.allowedInstances(bind, m.CPUs)
		if len(subs) == 0 {
			return CPUSet{}, fmt.Errorf("bind to %v: %s: %w", bind, t.noInstance(bind), ErrPlacement)
		}
		return subs[pass%len(subs)].CPUs, nil
	}
	in, ok := t.InstanceOf(bind, m.CPUs)
	if !ok {
		if len(t.levels[bind.index()]) == 0 {
			return CPUSet{}, fmt.Errorf("bind to %v: %s: %w", bind, t.noInstance(bind), ErrPlacement)
		}
		return CPUSet{}, fmt.Errorf("bind to %v: mapped %v %d (CPUs %v) is not inside one %v: %w",
			bind, mapL, m.Index, m.CPUs, bind, ErrPlacement)
	}
	return in.CPUs.Intersect(t.allowed), nil
}

func (t *Topology) noInstance(l Level) string {
	if len(t.levels[l.index()]) == 0 {
		return fmt.Sprintf("sysfs describes no %v on this machine", l)
	}
	return fmt.Sprintf("no %v holds an allowed CPU (allowed: %v)", l, t.allowed)
}

// Report describes a binding for --report-bindings: "rank 3 bound to CPUs
// 6-7 (Machine 0, Package 0, NUMANode 1, L3Cache 1, Core 3)", or "rank 3
// not bound (CPUs 0-15: Machine 0, Package 0)".
func (t *Topology) Report(b Binding) string {
	if !b.Bound {
		return fmt.Sprintf("rank %d not bound (CPUs %v: %v)", b.Rank, b.CPUs, t.Locate(b.CPUs))
	}
	return fmt.Sprintf("rank %d bound to CPUs %v (%v)", b.Rank, b.CPUs, t.Locate(b.CPUs))
}
