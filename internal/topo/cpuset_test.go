package topo

import (
	"errors"
	"slices"
	"testing"
)

func mustList(t testing.TB, s string) CPUSet {
	t.Helper()
	set, err := ParseList(s)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestParseList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		cpus []int
		err  bool
	}{
		{in: "", cpus: []int{}},
		{in: "\n", cpus: []int{}},
		{in: "0", cpus: []int{0}},
		{in: "0-3,8,10-11\n", cpus: []int{0, 1, 2, 3, 8, 10, 11}},
		{in: "5,1,1-2", cpus: []int{1, 2, 5}},
		{in: "63-65", cpus: []int{63, 64, 65}},
		{in: "32767", cpus: []int{32767}},
		{in: "32768", err: true},
		{in: "3-1", err: true},
		{in: "1,,2", err: true},
		{in: ",", err: true},
		{in: "-1", err: true},
		{in: "1-", err: true},
		{in: "1-2-3", err: true},
		{in: "a", err: true},
		{in: "+1", err: true},
		{in: "1 ,2", err: true},
		{in: "0x3", err: true},
		{in: "99999999999999999999", err: true},
	} {
		set, err := ParseList(tc.in)
		if tc.err {
			if !errors.Is(err, ErrSyntax) {
				t.Errorf("ParseList(%q) = %v, %v; want ErrSyntax", tc.in, set, err)
			}
			continue
		}
		if err != nil || !slices.Equal(set.CPUs(), tc.cpus) {
			t.Errorf("ParseList(%q) = %v, %v; want %v", tc.in, set.CPUs(), err, tc.cpus)
		}
	}
}

func TestParseMask(t *testing.T) {
	for _, tc := range []struct {
		in   string
		cpus []int
		err  bool
	}{
		{in: "", cpus: []int{}},
		{in: "0", cpus: []int{}},
		{in: "00000000,00000000", cpus: []int{}},
		{in: "3\n", cpus: []int{0, 1}},
		{in: "0ff00ff0", cpus: []int{4, 5, 6, 7, 8, 9, 10, 11, 20, 21, 22, 23, 24, 25, 26, 27}},
		{in: "1,00000001", cpus: []int{0, 32}},
		{in: "80000000,0", cpus: []int{63}},
		{in: "F", cpus: []int{0, 1, 2, 3}},
		{in: "ffffffff,ffffffff,ffffffff", cpus: seq(0, 95)},
		{in: "0x3", err: true},
		{in: "123456789", err: true},
		{in: "3,", err: true},
		{in: ",3", err: true},
		{in: "g", err: true},
		{in: "-1", err: true},
		{in: "+1", err: true},
	} {
		set, err := ParseMask(tc.in)
		if tc.err {
			if !errors.Is(err, ErrSyntax) {
				t.Errorf("ParseMask(%q) = %v, %v; want ErrSyntax", tc.in, set, err)
			}
			continue
		}
		if err != nil || !slices.Equal(set.CPUs(), tc.cpus) {
			t.Errorf("ParseMask(%q) = %v, %v; want %v", tc.in, set.CPUs(), err, tc.cpus)
		}
	}
	// A mask with a CPU at or beyond MaxCPUs is refused, leading zero
	// words are not.
	big := "1"
	for range MaxCPUs / 32 {
		big += ",00000000"
	}
	if _, err := ParseMask(big); !errors.Is(err, ErrSyntax) {
		t.Errorf("ParseMask(CPU %d) = %v; want ErrSyntax", MaxCPUs, err)
	}
	if set, err := ParseMask("0" + big[1:]); err != nil || !set.IsEmpty() {
		t.Errorf("ParseMask(zeros) = %v, %v; want the empty set", set, err)
	}
}

func seq(lo, hi int) []int {
	var out []int
	for c := lo; c <= hi; c++ {
		out = append(out, c)
	}
	return out
}

func TestCPUSetFormats(t *testing.T) {
	for _, tc := range []struct{ list, mask string }{
		{"", "0"},
		{"0", "1"},
		{"0-1", "3"},
		{"4-11,20-27", "ff00ff0"},
		{"0,32", "1,00000001"},
		{"63", "80000000,00000000"},
		{"64", "1,00000000,00000000"},
		{"0-2,4,8-9", "317"},
	} {
		set := mustList(t, tc.list)
		if got := set.String(); got != tc.list {
			t.Errorf("String(%q) = %q", tc.list, got)
		}
		if got := set.Mask(); got != tc.mask {
			t.Errorf("Mask(%q) = %q; want %q", tc.list, got, tc.mask)
		}
		if back, err := ParseMask(set.Mask()); err != nil || !back.Equal(set) {
			t.Errorf("ParseMask(Mask(%q)) = %v, %v", tc.list, back, err)
		}
	}
}

func TestCPUSetOps(t *testing.T) {
	a := mustList(t, "0-3,64-65")
	b := mustList(t, "2-5")
	if got := a.Union(b).String(); got != "0-5,64-65" {
		t.Errorf("Union = %q", got)
	}
	if got := a.Intersect(b).String(); got != "2-3" {
		t.Errorf("Intersect = %q", got)
	}
	if got := a.Difference(b).String(); got != "0-1,64-65" {
		t.Errorf("Difference = %q", got)
	}
	if got := a.Intersect(mustList(t, "64")); !got.Equal(mustList(t, "64")) {
		t.Errorf("Intersect high word = %v", got)
	}
	if !a.Intersect(mustList(t, "8")).Equal(CPUSet{}) {
		t.Error("empty intersection is not the zero CPUSet")
	}
	if a.Len() != 6 || a.First() != 0 || (CPUSet{}).First() != -1 || !(CPUSet{}).IsEmpty() {
		t.Errorf("Len %d First %d", a.Len(), a.First())
	}
	if !a.Contains(65) || a.Contains(66) || a.Contains(-1) || a.Contains(1<<40) {
		t.Error("Contains")
	}
	if !mustList(t, "2-3").SubsetOf(a) || b.SubsetOf(a) || !(CPUSet{}).SubsetOf(b) || a.SubsetOf(b) {
		t.Error("SubsetOf")
	}
	if !a.Intersects(b) || a.Intersects(mustList(t, "10")) {
		t.Error("Intersects")
	}
	if s, err := NewCPUSet(3, 1, 3); err != nil || s.String() != "1,3" {
		t.Errorf("NewCPUSet = %v, %v", s, err)
	}
	if _, err := NewCPUSet(-1); err == nil {
		t.Error("NewCPUSet(-1) succeeded")
	}
	if _, err := NewCPUSet(MaxCPUs); err == nil {
		t.Error("NewCPUSet(MaxCPUs) succeeded")
	}
}

// FuzzParseList checks that ParseList never panics and that what it
// accepts survives a trip through both formats.
func FuzzParseList(f *testing.F) {
	for _, s := range []string{"", "0", "0-3,8,10-11", "3-1", "1,,2", "32767", "0-32767", "7\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		set, err := ParseList(s)
		if err != nil {
			return
		}
		roundTrip(t, set)
	})
}

// FuzzParseMask checks that ParseMask never panics and that what it
// accepts survives a trip through both formats.
func FuzzParseMask(f *testing.F) {
	for _, s := range []string{"", "0", "3", "ffffffff,00000001", "0ff00ff0", "1,", "123456789", "fffffffff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		set, err := ParseMask(s)
		if err != nil {
			return
		}
		roundTrip(t, set)
	})
}

func roundTrip(t *testing.T, set CPUSet) {
	t.Helper()
	l, err := ParseList(set.String())
	if err != nil || !l.Equal(set) {
		t.Fatalf("ParseList(%q) = %v, %v; want %v", set.String(), l, err, set)
	}
	m, err := ParseMask(set.Mask())
	if err != nil || !m.Equal(set) {
		t.Fatalf("ParseMask(%q) = %v, %v; want %v", set.Mask(), m, err, set)
	}
	if n := len(set.CPUs()); n != set.Len() {
		t.Fatalf("len(CPUs) %d != Len %d", n, set.Len())
	}
}
