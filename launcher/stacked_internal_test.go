package launcher

import (
	"testing"

	"github.com/shmrun/shmrun/internal/topo"
)

// TestStacked: bound ranks sharing a CPU set count as oversubscribed when
// they outnumber its CPUs, whatever the job's total.
func TestStacked(t *testing.T) {
	set := func(s string) topo.CPUSet {
		c, err := topo.ParseList(s)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, tc := range []struct {
		name string
		bs   []topo.Binding
		want bool
	}{
		{"one a CPU", []topo.Binding{{CPUs: set("0"), Bound: true}, {CPUs: set("1"), Bound: true}}, false},
		{"two on CPU 4", []topo.Binding{{CPUs: set("0-3"), Bound: true}, {CPUs: set("4"), Bound: true}, {CPUs: set("4"), Bound: true}}, true},
		{"two in a package of two", []topo.Binding{{CPUs: set("0-1"), Bound: true}, {CPUs: set("0-1"), Bound: true}}, false},
		{"unbound", []topo.Binding{{CPUs: set("0"), Bound: false}, {CPUs: set("0"), Bound: false}}, false},
	} {
		if got := stacked(tc.bs); got != tc.want {
			t.Errorf("%s: stacked = %v, want %v", tc.name, got, tc.want)
		}
	}
}
