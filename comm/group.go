package comm

import (
	"fmt"
	"slices"

	"github.com/shmrun/shmrun/internal/format"
)

// Special ranks and tags, with the values the MPI 5.0 standard ABI fixes
// (so C code on the ABI passes them through unchanged).
const (
	// Undefined is the rank of a process outside a group, and the color
	// of a rank that joins no communicator (MPI_UNDEFINED).
	Undefined = format.Undefined
	// ProcNull is the null process (MPI_PROC_NULL): a valid peer of
	// communication calls, which then do nothing.
	ProcNull = format.ProcNull
	// AnySource matches a message from any source (MPI_ANY_SOURCE).
	AnySource = format.AnySource
	// AnyTag matches a message with any tag (MPI_ANY_TAG).
	AnyTag = format.AnyTag
)

// Comparison results of Group.Compare and Compare (MPI_IDENT,
// MPI_CONGRUENT, MPI_SIMILAR, MPI_UNEQUAL), with the MPI 5.0 ABI's values.
const (
	Ident     = format.Ident     // same members in the same order (communicators: the same one)
	Congruent = format.Congruent // communicators only: same members, same order, another context
	Similar   = format.Similar   // same members, another order
	Unequal   = format.Unequal   // other members
)

// Group is an ordered set of processes (MPI_Group). It is a local object:
// every operation on it is local and never blocks. Members are kept as world
// ranks, so groups from one job compare and translate directly.
type Group struct {
	members []int // world rank of each group rank
	me      int   // this process's world rank
}

func newGroup(members []int, me int) *Group { return &Group{members: members, me: me} }

// GroupEmpty is the group with no members (MPI_GROUP_EMPTY). Its Rank is
// Undefined; a set operation with it gives the other group's members.
var GroupEmpty = &Group{me: Undefined}

// other is the calling process's world rank as the groups know it: from g,
// or from o when g is the empty group (which does not know it).
func (g *Group) with(o *Group) int {
	if g.me != Undefined {
		return g.me
	}
	return o.me
}

// check2 tests the groups of a two-group call.
func check2(call string, g, o *Group) error {
	if g == nil || o == nil {
		return fmt.Errorf("comm: Group.%s: nil group: %w", call, ErrGroup)
	}
	return nil
}

// Union is the group of g's members, then o's members that are not in g
// (MPI_Group_union). Local.
func (g *Group) Union(o *Group) (*Group, error) {
	if err := check2("Union", g, o); err != nil {
		return nil, err
	}
	m := slices.Clone(g.members)
	for _, w := range o.members {
		if !slices.Contains(g.members, w) {
			m = append(m, w)
		}
	}
	return newGroup(m, g.with(o)), nil
}

// Intersection is the group of g's members that are also in o, in g's
// order (MPI_Group_intersection). Local.
func (g *Group) Intersection(o *Group) (*Group, error) {
	if err := check2("Intersection", g, o); err != nil {
		return nil, err
	}
	return g.filter(o, true), nil
}

// Difference is the group of g's members that are not in o, in g's order
// (MPI_Group_difference). Local.
func (g *Group) Difference(o *Group) (*Group, error) {
	if err := check2("Difference", g, o); err != nil {
		return nil, err
	}
	return g.filter(o, false), nil
}

// filter is the group of g's members whose membership in o is in.
func (g *Group) filter(o *Group, in bool) *Group {
	var m []int
	for _, w := range g.members {
		if slices.Contains(o.members, w) == in {
			m = append(m, w)
		}
	}
	return newGroup(m, g.with(o))
}

// RangeIncl makes the group of g's ranks named by the triplets (first,
// last, stride), in the order they name them (MPI_Group_range_incl). Local.
// A stride of 0, a first or last outside g, or a rank named twice is
// ErrRank (MPI's ranks "must be distinct"); first may exceed last with a
// negative stride, and a triplet whose stride leads away from last names
// no rank.
func (g *Group) RangeIncl(ranges ...[3]int) (*Group, error) {
	ranks, err := g.expand("RangeIncl", ranges)
	if err != nil {
		return nil, err
	}
	return g.Incl(ranks...)
}

// RangeExcl makes the group of g's ranks not named by the triplets, in g's
// order (MPI_Group_range_excl). Local. Errors as RangeIncl.
func (g *Group) RangeExcl(ranges ...[3]int) (*Group, error) {
	ranks, err := g.expand("RangeExcl", ranges)
	if err != nil {
		return nil, err
	}
	return g.Excl(ranks...)
}

// expand lists the ranks the triplets name, checking each against g.
func (g *Group) expand(call string, ranges [][3]int) ([]int, error) {
	if g == nil {
		return nil, fmt.Errorf("comm: Group.%s: nil group: %w", call, ErrGroup)
	}
	var ranks []int
	for _, r := range ranges {
		first, last, stride := r[0], r[1], r[2]
		switch {
		case stride == 0:
			return nil, fmt.Errorf("comm: Group.%s: range %v: stride 0: %w", call, r, ErrRank)
		case first < 0 || first >= len(g.members) || last < 0 || last >= len(g.members):
			return nil, fmt.Errorf("comm: Group.%s: range %v: outside a group of %d: %w", call, r, len(g.members), ErrRank)
		}
		// MPI's count, floor((last-first)/stride)+1: a triplet whose stride
		// leads away from last names no rank. Go's division truncates
		// toward zero, which would give (0, 1, -3) one rank: the quotient
		// is rounded down when the signs differ and there is a remainder.
		q := (last - first) / stride
		if (last-first)%stride != 0 && (last-first < 0) != (stride < 0) {
			q--
		}
		for k := range max(q+1, 0) {
			ranks = append(ranks, first+k*stride)
		}
	}
	return ranks, nil
}

// Size is the number of processes in the group (MPI_Group_size). Local. A
// nil group has size 0.
func (g *Group) Size() int {
	if g == nil {
		return 0
	}
	return len(g.members)
}

// Rank is the calling process's rank in the group, or Undefined if it is not
// a member (MPI_Group_rank). Local.
func (g *Group) Rank() int {
	if g == nil {
		return Undefined
	}
	if i := slices.Index(g.members, g.me); i >= 0 {
		return i
	}
	return Undefined
}

// Incl makes the group of g's ranks listed, in that order (MPI_Group_incl).
// Local. A rank out of range or listed twice is ErrRank.
func (g *Group) Incl(ranks ...int) (*Group, error) {
	if err := g.checkDistinct("Incl", ranks); err != nil {
		return nil, err
	}
	m := make([]int, len(ranks))
	for i, r := range ranks {
		m[i] = g.members[r]
	}
	return newGroup(m, g.me), nil
}

// Excl makes the group of g's ranks not listed, in g's order
// (MPI_Group_excl). Local. A rank out of range or listed twice is ErrRank.
func (g *Group) Excl(ranks ...int) (*Group, error) {
	if err := g.checkDistinct("Excl", ranks); err != nil {
		return nil, err
	}
	var m []int
	for i, w := range g.members {
		if !slices.Contains(ranks, i) {
			m = append(m, w)
		}
	}
	return newGroup(m, g.me), nil
}

// TranslateRanks returns, for each rank of g listed, its rank in other, or
// Undefined where it is not a member, and ProcNull for ProcNull
// (MPI_Group_translate_ranks). Local.
func (g *Group) TranslateRanks(ranks []int, other *Group) ([]int, error) {
	if g == nil || other == nil {
		return nil, fmt.Errorf("comm: TranslateRanks: nil group: %w", ErrGroup)
	}
	out := make([]int, len(ranks))
	for i, r := range ranks {
		if r == ProcNull {
			// MPI 4.1, 7.3.1: the null process translates to itself.
			out[i] = ProcNull
			continue
		}
		if r < 0 || r >= len(g.members) {
			return nil, fmt.Errorf("comm: TranslateRanks: rank %d outside a group of %d: %w", r, len(g.members), ErrRank)
		}
		out[i] = Undefined
		if j := slices.Index(other.members, g.members[r]); j >= 0 {
			out[i] = j
		}
	}
	return out, nil
}

// Compare tells whether g and other have the same members in the same order
// (Ident), the same members in another order (Similar), or not (Unequal)
// (MPI_Group_compare). Local. A nil group is Unequal to any group.
func (g *Group) Compare(other *Group) int {
	if g == nil || other == nil {
		return Unequal
	}
	if slices.Equal(g.members, other.members) {
		return Ident
	}
	if len(g.members) == len(other.members) {
		a, b := slices.Clone(g.members), slices.Clone(other.members)
		slices.Sort(a)
		slices.Sort(b)
		if slices.Equal(a, b) {
			return Similar
		}
	}
	return Unequal
}

func (g *Group) checkDistinct(call string, ranks []int) error {
	if g == nil {
		return fmt.Errorf("comm: Group.%s: nil group: %w", call, ErrGroup)
	}
	seen := make(map[int]bool, len(ranks))
	for _, r := range ranks {
		if r < 0 || r >= len(g.members) {
			return fmt.Errorf("comm: Group.%s: rank %d outside a group of %d: %w", call, r, len(g.members), ErrRank)
		}
		if seen[r] {
			return fmt.Errorf("comm: Group.%s: rank %d listed twice: %w", call, r, ErrRank)
		}
		seen[r] = true
	}
	return nil
}
