//go:build !mpi

package comm_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/shmrun/shmrun/comm"
)

// worldGroups returns the world group as seen by each of n ranks.
func worldGroups(t *testing.T, n int) []*comm.Group {
	t.Helper()
	cs, err := comm.NewLocalWorld(n)
	if err != nil {
		t.Fatal(err)
	}
	gs := make([]*comm.Group, n)
	for i, c := range cs {
		gs[i] = c.Group()
	}
	return gs
}

// mustGroup returns a function that unpacks a group call's results,
// failing the test on an error: mustGroup(t)(g.Incl(1, 2)).
func mustGroup(t *testing.T) func(*comm.Group, error) *comm.Group {
	return func(g *comm.Group, err error) *comm.Group {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
}

// members lists g's world ranks (world = the group of world rank 0's comm).
func members(g *comm.Group) []int {
	ranks := make([]int, g.Size())
	for r := range ranks {
		ranks[r] = r
	}
	m, err := g.TranslateRanks(ranks, worldGroup)
	if err != nil {
		panic(err)
	}
	return m
}

// worldGroup is a group of every world rank in world order, for members.
var worldGroup = func() *comm.Group {
	cs, err := comm.NewLocalWorld(64)
	if err != nil {
		panic(err)
	}
	return cs[0].Group()
}()

func TestGroupInclExcl(t *testing.T) {
	gs := worldGroups(t, 6)
	tests := []struct {
		name    string
		make    func(g *comm.Group) (*comm.Group, error)
		members []int
	}{
		{"Incl reorders", func(g *comm.Group) (*comm.Group, error) { return g.Incl(4, 2, 0) }, []int{4, 2, 0}},
		{"Incl all", func(g *comm.Group) (*comm.Group, error) { return g.Incl(0, 1, 2, 3, 4, 5) }, []int{0, 1, 2, 3, 4, 5}},
		{"Incl none", func(g *comm.Group) (*comm.Group, error) { return g.Incl() }, nil},
		{"Excl keeps order", func(g *comm.Group) (*comm.Group, error) { return g.Excl(3, 1) }, []int{0, 2, 4, 5}},
		{"Excl none", func(g *comm.Group) (*comm.Group, error) { return g.Excl() }, []int{0, 1, 2, 3, 4, 5}},
		{"Excl all", func(g *comm.Group) (*comm.Group, error) { return g.Excl(5, 4, 3, 2, 1, 0) }, nil},
		{"Incl of Excl", func(g *comm.Group) (*comm.Group, error) {
			h, err := g.Excl(0)
			if err != nil {
				return nil, err
			}
			return h.Incl(3, 0) // group ranks of h: world 4 and 1
		}, []int{4, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for me, g := range gs {
				h := mustGroup(t)(tt.make(g))
				if got := members(h); !slices.Equal(got, tt.members) {
					t.Fatalf("members %v, want %v", got, tt.members)
				}
				wantRank := slices.Index(tt.members, me)
				if wantRank < 0 {
					wantRank = comm.Undefined
				}
				if h.Rank() != wantRank || h.Size() != len(tt.members) {
					t.Errorf("world rank %d: rank %d of %d, want %d of %d", me, h.Rank(), h.Size(), wantRank, len(tt.members))
				}
			}
		})
	}
}

func TestGroupErrors(t *testing.T) {
	g := worldGroups(t, 4)[0]
	for name, err := range map[string]error{
		"Incl out of range": second(g.Incl(4)),
		"Incl negative":     second(g.Incl(-1)),
		"Incl twice":        second(g.Incl(1, 2, 1)),
		"Excl out of range": second(g.Excl(0, 7)),
		"Excl twice":        second(g.Excl(3, 3)),
		"Translate range":   second(g.TranslateRanks([]int{0, 4}, g)),
		"Translate neg":     second(g.TranslateRanks([]int{-1}, g)),
	} {
		if !errors.Is(err, comm.ErrRank) {
			t.Errorf("%s: %v, want ErrRank", name, err)
		}
	}
	if _, err := g.TranslateRanks([]int{0}, nil); !errors.Is(err, comm.ErrGroup) {
		t.Errorf("TranslateRanks to a nil group: %v, want ErrGroup", err)
	}
}

func second[T any](_ T, err error) error { return err }

func TestGroupTranslateRanks(t *testing.T) {
	g := worldGroups(t, 6)[0]
	a := mustGroup(t)(g.Incl(5, 3, 1))
	b := mustGroup(t)(g.Incl(1, 2, 3, 4))
	got, err := a.TranslateRanks([]int{0, 1, 2, 1}, b)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{comm.Undefined, 2, 0, 2}; !slices.Equal(got, want) {
		t.Errorf("TranslateRanks = %v, want %v", got, want)
	}
	// MPI_PROC_NULL translates to itself (MPI 4.1, 7.3.1).
	got, err = a.TranslateRanks([]int{comm.ProcNull, 1}, b)
	if want := []int{comm.ProcNull, 2}; err != nil || !slices.Equal(got, want) {
		t.Errorf("TranslateRanks with ProcNull = %v, %v, want %v", got, err, want)
	}
	if got, err := a.TranslateRanks(nil, b); err != nil || len(got) != 0 {
		t.Errorf("TranslateRanks of none = %v, %v", got, err)
	}
	got, err = a.TranslateRanks([]int{0, 1, 2}, g)
	if err != nil || !slices.Equal(got, []int{5, 3, 1}) {
		t.Errorf("TranslateRanks to the world = %v, %v", got, err)
	}
}

func TestGroupCompare(t *testing.T) {
	g := worldGroups(t, 4)[1]
	tests := []struct {
		a, b []int
		want int
	}{
		{[]int{0, 1, 2, 3}, []int{0, 1, 2, 3}, comm.Ident},
		{[]int{2, 0}, []int{2, 0}, comm.Ident},
		{[]int{}, []int{}, comm.Ident},
		{[]int{2, 0}, []int{0, 2}, comm.Similar},
		{[]int{3, 2, 1, 0}, []int{0, 1, 2, 3}, comm.Similar},
		{[]int{0, 1}, []int{0, 2}, comm.Unequal},
		{[]int{0, 1}, []int{0, 1, 2}, comm.Unequal},
		{[]int{0}, []int{}, comm.Unequal},
	}
	for _, tt := range tests {
		a, b := mustGroup(t)(g.Incl(tt.a...)), mustGroup(t)(g.Incl(tt.b...))
		if got := a.Compare(b); got != tt.want {
			t.Errorf("Compare(%v, %v) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := b.Compare(a); got != tt.want {
			t.Errorf("Compare(%v, %v) = %d, want %d", tt.b, tt.a, got, tt.want)
		}
	}
	if got := g.Compare(nil); got != comm.Unequal {
		t.Errorf("Compare(nil) = %d, want Unequal", got)
	}
}

func TestGroupSetOps(t *testing.T) {
	gs := worldGroups(t, 6)
	must := mustGroup(t)
	for me, w := range gs {
		a := must(w.Incl(4, 1, 3))
		b := must(w.Incl(3, 5, 1, 0))
		for _, tt := range []struct {
			name string
			got  *comm.Group
			want []int
		}{
			{"union", must(a.Union(b)), []int{4, 1, 3, 5, 0}},
			{"union with empty", must(comm.GroupEmpty.Union(a)), []int{4, 1, 3}},
			{"intersection", must(a.Intersection(b)), []int{1, 3}},
			{"intersection with empty", must(a.Intersection(comm.GroupEmpty)), nil},
			{"difference", must(a.Difference(b)), []int{4}},
			{"difference from empty", must(comm.GroupEmpty.Difference(a)), nil},
			{"range incl", must(w.RangeIncl([3]int{5, 1, -2}, [3]int{0, 0, 1})), []int{5, 3, 1, 0}},
			{"range incl away from last", must(w.RangeIncl([3]int{4, 2, 1}, [3]int{2, 3, 1})), []int{2, 3}},
			{"range incl away by less than a stride", must(w.RangeIncl([3]int{0, 1, -3}, [3]int{5, 4, 2}, [3]int{3, 3, -7})), []int{3}},
			{"range excl away by less than a stride", must(w.RangeExcl([3]int{2, 3, -2}, [3]int{4, 2, 3})), []int{0, 1, 2, 3, 4, 5}},
			{"range excl", must(w.RangeExcl([3]int{0, 4, 2})), []int{1, 3, 5}},
			{"range excl nothing", must(w.RangeExcl()), []int{0, 1, 2, 3, 4, 5}},
		} {
			if got := members(tt.got); !slices.Equal(got, tt.want) {
				t.Errorf("rank %d: %s: members %v, want %v", me, tt.name, got, tt.want)
			}
			want := slices.Index(tt.want, me)
			if want < 0 {
				want = comm.Undefined
			}
			if tt.got.Rank() != want {
				t.Errorf("rank %d: %s: Rank %d, want %d", me, tt.name, tt.got.Rank(), want)
			}
		}
	}
	w := gs[0]
	for name, err := range map[string]error{
		"stride 0":        second(w.RangeIncl([3]int{0, 3, 0})),
		"first outside":   second(w.RangeIncl([3]int{6, 0, -1})),
		"last outside":    second(w.RangeExcl([3]int{0, -1, 1})),
		"named twice":     second(w.RangeIncl([3]int{0, 2, 1}, [3]int{2, 2, 1})),
		"excl twice":      second(w.RangeExcl([3]int{0, 4, 2}, [3]int{4, 0, -4})),
		"nil other":       second(w.Union(nil)),
		"nil receiver":    second((*comm.Group)(nil).Intersection(w)),
		"nil difference":  second(w.Difference(nil)),
		"nil range group": second((*comm.Group)(nil).RangeIncl()),
	} {
		if err == nil || !(errors.Is(err, comm.ErrRank) || errors.Is(err, comm.ErrGroup)) {
			t.Errorf("%s: %v, want ErrRank or ErrGroup", name, err)
		}
	}
	if comm.GroupEmpty.Size() != 0 || comm.GroupEmpty.Rank() != comm.Undefined || comm.GroupEmpty.Compare(must(w.Incl())) != comm.Ident {
		t.Error("GroupEmpty is not an empty group")
	}
}
