package topo

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestPlace(t *testing.T) {
	for _, tc := range []struct {
		tree    string
		allowed string // "" keeps the tree's status
		n       int
		opts    Options
		want    string // each rank's CPUs, separated by " | "
		err     string // a part of the error message
	}{
		{tree: "twosocket", n: 4, opts: Options{Map: Core, Bind: Core}, want: "0,8 | 1,9 | 2,10 | 3,11"},
		{tree: "twosocket", n: 4, opts: Options{Bind: Core}, want: "0,8 | 1,9 | 2,10 | 3,11"},
		{tree: "twosocket", n: 4, opts: Options{Map: Package, Bind: Core}, want: "0,8 | 4,12 | 1,9 | 5,13"},
		{tree: "twosocket", n: 5, opts: Options{Map: NUMANode, Bind: NUMANode},
			want: "0-1,8-9 | 2-3,10-11 | 4-5,12-13 | 6-7,14-15 | 0-1,8-9"},
		{tree: "twosocket", n: 6, opts: Options{Map: NUMANode, Bind: Core},
			want: "0,8 | 2,10 | 4,12 | 6,14 | 1,9 | 3,11"},
		{tree: "twosocket", n: 2, opts: Options{Map: Core, Bind: Package}, want: "0-3,8-11 | 0-3,8-11"},
		{tree: "twosocket", n: 3, opts: Options{Map: Core, Bind: L3Cache}, want: "0-3,8-11 | 0-3,8-11 | 0-3,8-11"},
		// An L3 here spans two NUMA nodes: mapping by L3 cannot bind to one.
		{tree: "twosocket", n: 1, opts: Options{Map: L3Cache, Bind: NUMANode}, err: "L3Cache 0 (CPUs 0-3,8-11) is not inside one NUMANode"},
		{tree: "twosocket", n: 2, opts: Options{Map: NUMANode, Bind: L3Cache}, want: "0-1,8-9 | 2-3,10-11"},
		{tree: "twosocket", n: 16, opts: Options{Map: Core, Bind: HWThread},
			want: "0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10 | 11 | 12 | 13 | 14 | 15"},
		{tree: "twosocket", n: 17, opts: Options{Map: Core, Bind: HWThread}, err: "17 ranks but the allowed CPUs 0-15 hold 16 hardware threads"},
		{tree: "twosocket", n: 9, opts: Options{Map: Core, Bind: Core}, err: "9 ranks but the allowed CPUs 0-15 hold 8 cores"},
		// Unbound ranks count hardware threads: 16 here.
		{tree: "twosocket", n: 9, opts: Options{Map: Core}, want: "0-15 | 0-15 | 0-15 | 0-15 | 0-15 | 0-15 | 0-15 | 0-15 | 0-15"},
		{tree: "twosocket", n: 17, opts: Options{Map: Core}, err: "17 ranks but the allowed CPUs 0-15 hold 16 hardware threads"},
		{tree: "twosocket", n: 9, opts: Options{Map: Core, Bind: Core, Oversubscribe: true},
			want: "0,8 | 1,9 | 2,10 | 3,11 | 4,12 | 5,13 | 6,14 | 7,15 | 0,8"},
		{tree: "twosocket", n: 2, opts: Options{Map: Core}, want: "0-15 | 0-15"},
		// Five cores allowed, one of them in package 1: round-robin over
		// packages puts two ranks on it.
		{tree: "twosocket", allowed: "0-4", n: 5, opts: Options{Map: Package, Bind: Package},
			err: "2 ranks bound to Package CPUs 4, which hold 1 hardware thread"},
		{tree: "twosocket", allowed: "0-4", n: 5, opts: Options{Map: Package, Bind: Package, Oversubscribe: true},
			want: "0-3 | 4 | 0-3 | 4 | 0-3"},
		{tree: "twosocket", allowed: "0-4", n: 3, opts: Options{Map: NUMANode, Bind: NUMANode}, want: "0-1 | 2-3 | 4"},
		{tree: "fournuma", n: 4, opts: Options{Map: L3Cache, Bind: L3Cache},
			want: "0-1,16-17 | 2-3,18-19 | 4-5,20-21 | 6-7,22-23"},
		{tree: "fournuma", n: 5, opts: Options{Map: NUMANode, Bind: L3Cache},
			want: "0-1,16-17 | 4-5,20-21 | 8-9,24-25 | 12-13,28-29 | 2-3,18-19"},
		{tree: "fournuma", n: 2, opts: Options{Map: L3Cache, Bind: NUMANode}, want: "0-3,16-19 | 0-3,16-19"},
		{tree: "container", n: 4, opts: Options{Map: NUMANode, Bind: Core}, want: "4,20 | 8,24 | 5,21 | 9,25"},
		{tree: "container", n: 4, opts: Options{Map: L3Cache, Bind: L3Cache},
			want: "4-5,20-21 | 6-7,22-23 | 8-9,24-25 | 10-11,26-27"},
		{tree: "container", n: 1, opts: Options{Map: Package, Bind: Package}, want: "4-11,20-27"},
		{tree: "container", n: 9, opts: Options{Map: Core, Bind: Core}, err: "9 ranks but the allowed CPUs 4-11,20-27 hold 8 cores"},
		{tree: "vm", n: 1, opts: Options{Map: L3Cache}, err: "map by L3Cache: sysfs describes no L3Cache on this machine"},
		{tree: "vm", n: 1, opts: Options{Map: Core, Bind: L2Cache}, err: "bind to L2Cache: sysfs describes no L2Cache on this machine"},
		{tree: "vm", n: 1, opts: Options{Map: Package, Bind: L2Cache}, err: "bind to L2Cache: sysfs describes no L2Cache on this machine"},
		{tree: "vm", n: 5, opts: Options{Map: Core, Bind: Core}, want: "0 | 1 | 2 | 4 | 8-9"},
		// The VM's one NUMA node spans both packages: a rank mapped to a
		// package is bound to the part of the node inside it.
		{tree: "vm", n: 3, opts: Options{Map: Package, Bind: NUMANode}, want: "0-2,4 | 8-9 | 0-2,4"},
		{tree: "host", n: 0, opts: Options{}, err: "place 0 ranks: need 1 to"},
		{tree: "host", n: MaxRanks + 1, opts: Options{Oversubscribe: true}, err: "need 1 to"},
		{tree: "host", n: 1, opts: Options{Map: Level(42)}, err: "not a level"},
		{tree: "host", n: 1, opts: Options{Bind: Level(-1)}, err: "not a level"},
		{tree: "host", n: 2, opts: Options{Map: Core, Bind: Core}, want: "0 | 1"},
		{tree: "host", n: 3, opts: Options{Map: Core, Bind: Core}, err: "3 ranks but the allowed CPUs 0-1 hold 2 cores"},
	} {
		name := fmt.Sprintf("%s/%s/n=%d/map=%v/bind=%v/over=%v", tc.tree, tc.allowed, tc.n, tc.opts.Map, tc.opts.Bind, tc.opts.Oversubscribe)
		t.Run(name, func(t *testing.T) {
			tp := readTree(t, tc.tree)
			if tc.allowed != "" {
				var err error
				if tp, err = Read("testdata/"+tc.tree, mustList(t, tc.allowed)); err != nil {
					t.Fatal(err)
				}
			}
			bs, err := tp.Place(tc.n, tc.opts)
			if tc.err != "" {
				if !errors.Is(err, ErrPlacement) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Place = %v; want an ErrPlacement saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for i, b := range bs {
				got = append(got, b.CPUs.String())
				if b.Rank != i || b.Bound != (tc.opts.Bind != NoLevel) || !b.CPUs.SubsetOf(tp.Allowed()) {
					t.Errorf("binding %d = %+v", i, b)
				}
				if !b.Mapped.CPUs.SubsetOf(tp.Allowed()) || b.Mapped.CPUs.IsEmpty() {
					t.Errorf("rank %d mapped to %v outside the allowed CPUs", i, b.Mapped)
				}
			}
			if s := strings.Join(got, " | "); s != tc.want {
				t.Errorf("Place = %q; want %q", s, tc.want)
			}
		})
	}
}

func TestReport(t *testing.T) {
	tp := readTree(t, "twosocket")
	bs, err := tp.Place(2, Options{Map: Package, Bind: Core})
	if err != nil {
		t.Fatal(err)
	}
	want := "rank 1 bound to CPUs 4,12 (Machine 0, Package 1, NUMANode 2, L3Cache 1, L2Cache 4, Core 4)"
	if got := tp.Report(bs[1]); got != want {
		t.Errorf("Report = %q; want %q", got, want)
	}
	bs, err = tp.Place(1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want = "rank 0 not bound (CPUs 0-15: Machine 0)"
	if got := tp.Report(bs[0]); got != want {
		t.Errorf("Report = %q; want %q", got, want)
	}
}

// TestGuided checks InstanceOf and Locate, what comm's SplitType with
// TypeHWGuided asks for each rank.
func TestGuided(t *testing.T) {
	for _, tc := range []struct {
		tree  string
		level Level
		cpus  string
		index int // -1: no instance
		os    int
	}{
		{"fournuma", NUMANode, "4-7", 1, 1},
		{"fournuma", NUMANode, "4-7,20-23", 1, 1},
		{"fournuma", NUMANode, "3-4", -1, 0},
		{"fournuma", L3Cache, "4,20", 2, 2},
		{"fournuma", L3Cache, "4-7", -1, 0},
		{"fournuma", Core, "5,21", 5, 5},
		{"fournuma", HWThread, "21", 21, 21},
		{"fournuma", HWThread, "5,21", -1, 0},
		{"fournuma", Machine, "0-31", 0, 0},
		{"fournuma", Package, "", -1, 0},
		{"fournuma", Package, "40", -1, 0},
		{"fournuma", NoLevel, "0", -1, 0},
		{"twosocket", NUMANode, "2,10", 1, 1},
		{"twosocket", L3Cache, "2,10", 0, 0},
		{"twosocket", Package, "4,12", 1, 1},
		{"vm", L3Cache, "0", -1, 0},
		{"vm", NUMANode, "8-9", 0, 0},
		{"vm", Core, "8-9", 4, 0},
	} {
		tp := readTree(t, tc.tree)
		in, ok := tp.InstanceOf(tc.level, mustList(t, tc.cpus))
		if tc.index < 0 {
			if ok {
				t.Errorf("%s: InstanceOf(%v, %q) = %v; want none", tc.tree, tc.level, tc.cpus, in)
			}
		} else if !ok || in.Index != tc.index || in.OSIndex != tc.os || in.Level != tc.level {
			t.Errorf("%s: InstanceOf(%v, %q) = %+v, %v; want Index %d, OSIndex %d", tc.tree, tc.level, tc.cpus, in, ok, tc.index, tc.os)
		}
		if tc.level.valid() {
			if got := tp.Locate(mustList(t, tc.cpus)).At(tc.level); got != tc.index {
				t.Errorf("%s: Locate(%q).At(%v) = %d; want %d", tc.tree, tc.cpus, tc.level, got, tc.index)
			}
		}
	}
	tp := readTree(t, "fournuma")
	if got := tp.Locate(mustList(t, "4-5")).String(); got != "Machine 0, Package 0, NUMANode 1, L3Cache 2" {
		t.Errorf("Locate = %q", got)
	}
	if got := tp.Locate(CPUSet{}).String(); got != "nowhere" {
		t.Errorf("Locate(empty) = %q", got)
	}
}

// TestUnguided checks the level at which ranks bound as given first split.
func TestUnguided(t *testing.T) {
	for _, tc := range []struct {
		tree string
		cpus []string
		want Level // NoLevel: no split
	}{
		{"container", []string{"4,20", "5,21", "8,24", "9,25"}, NUMANode},
		{"container", []string{"4,20", "5,21", "6,22", "7,23"}, L3Cache},
		{"container", []string{"4,20", "5,21"}, L2Cache},
		{"container", []string{"4", "20"}, HWThread},
		{"container", []string{"4,20", "4,20"}, NoLevel},
		{"container", []string{"4"}, NoLevel},
		{"container", []string{"4-11,20-27", "4-11,20-27"}, NoLevel},
		{"container", []string{"4-11,20-27", "4-7,20-23"}, NUMANode},
		// NUMA nodes split a socket-wide L3: the split is at NUMANode even
		// though both ranks share their L3.
		{"twosocket", []string{"0,8", "2,10"}, NUMANode},
		{"twosocket", []string{"0,8", "4,12"}, Package},
		{"twosocket", []string{"0,8", "1,9"}, L2Cache},
		{"vm", []string{"0", "1"}, Core},
		{"vm", []string{"8", "9"}, HWThread},
		{"vm", nil, NoLevel},
	} {
		tp := readTree(t, tc.tree)
		var locs []Location
		for _, c := range tc.cpus {
			locs = append(locs, tp.Locate(mustList(t, c)))
		}
		got, ok := Unguided(locs)
		if ok != (tc.want != NoLevel) || got != tc.want {
			t.Errorf("%s: Unguided(%q) = %v, %v; want %v", tc.tree, tc.cpus, got, ok, tc.want)
		}
	}
}

func TestParseLevel(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Level
		err  bool
	}{
		{"NUMANode", NUMANode, false}, {"numa", NUMANode, false}, {"Package", Package, false},
		{"socket", Package, false}, {"L3Cache", L3Cache, false}, {"l3cache", L3Cache, false},
		{"L2Cache", L2Cache, false}, {"Core", Core, false}, {"HWThread", HWThread, false},
		{"hwthread", HWThread, false}, {"PU", HWThread, false}, {"mpi_shared_memory", Machine, false},
		{"Machine", Machine, false}, {"none", NoLevel, false}, {"L1Cache", NoLevel, true},
		{"", NoLevel, true}, {"node", NoLevel, true},
	} {
		got, err := ParseLevel(tc.in)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
	for _, l := range allLevels {
		if back, err := ParseLevel(l.String()); err != nil || back != l {
			t.Errorf("ParseLevel(%v.String()) = %v, %v", l, back, err)
		}
	}
	ls := Levels()
	if len(ls) != 7 || ls[0] != Machine || ls[6] != HWThread || !slices.IsSorted(ls) {
		t.Errorf("Levels() = %v", ls)
	}
	ls[0] = HWThread
	if Levels()[0] != Machine {
		t.Error("Levels() returns the package's own array")
	}
	if s := Level(99).String(); s != "Level(99)" {
		t.Errorf("Level(99) = %q", s)
	}
}

// TestPlaceOneRankPerCPU checks that as many ranks as allowed CPUs need no
// oversubscription unless they are bound to cores: shmrun's default -n is
// the number of allowed CPUs, and its --oversubscribe is documented as
// needed only for more ranks than CPUs. On a machine with SMT there are
// fewer cores than CPUs, and counting cores refused the default job.
func TestPlaceOneRankPerCPU(t *testing.T) {
	tp := readTree(t, "twosocket")
	n := tp.Allowed().Len()
	for _, opts := range []Options{
		{},
		{Map: Core},
		{Map: Package, Bind: Package},
		{Map: NUMANode, Bind: NUMANode},
		{Map: Core, Bind: L3Cache},
		{Map: Core, Bind: HWThread},
	} {
		if _, err := tp.Place(n, opts); err != nil {
			t.Errorf("Place(%d, %+v) = %v; want no error", n, opts, err)
		}
		if _, err := tp.Place(n+1, opts); !errors.Is(err, ErrPlacement) {
			t.Errorf("Place(%d, %+v) = %v; want ErrPlacement", n+1, opts, err)
		}
	}
	if _, err := tp.Place(n, Options{Map: Core, Bind: Core}); !errors.Is(err, ErrPlacement) {
		t.Errorf("Place(%d) bound to cores = %v; want ErrPlacement (8 cores)", n, err)
	}
}

// FuzzPlace places ranks on the fake trees with any allowed CPUs and
// options, and checks that Place never panics, fails only with
// ErrPlacement, and binds every rank inside the allowed CPUs.
func FuzzPlace(f *testing.F) {
	f.Add(uint8(0), "0-15", uint16(4), uint8(Core), uint8(Core), false)
	f.Add(uint8(1), "4-11", uint16(9), uint8(NUMANode), uint8(L3Cache), true)
	f.Add(uint8(2), "1,3,5", uint16(3), uint8(L3Cache), uint8(NUMANode), false)
	f.Add(uint8(3), "8", uint16(2), uint8(Package), uint8(HWThread), true)
	trees := []string{"twosocket", "container", "fournuma", "vm", "host"}
	f.Fuzz(func(t *testing.T, tree uint8, allowed string, n uint16, mapL, bindL uint8, over bool) {
		set, err := ParseList(allowed)
		if err != nil {
			return
		}
		tp, err := Read("testdata/"+trees[int(tree)%len(trees)], set)
		if err != nil {
			return
		}
		bs, err := tp.Place(int(n), Options{Map: Level(mapL % 9), Bind: Level(bindL % 9), Oversubscribe: over})
		if err != nil {
			if !errors.Is(err, ErrPlacement) {
				t.Fatalf("Place: %v is not an ErrPlacement", err)
			}
			return
		}
		if len(bs) != int(n) {
			t.Fatalf("Place(%d) made %d bindings", n, len(bs))
		}
		for _, b := range bs {
			if b.CPUs.IsEmpty() || !b.CPUs.SubsetOf(tp.Allowed()) {
				t.Fatalf("rank %d bound to %v, allowed %v", b.Rank, b.CPUs, tp.Allowed())
			}
		}
	})
}
