package topo_test

import (
	"fmt"

	"github.com/shmrun/shmrun/internal/topo"
)

// The launcher's view: four ranks mapped round-robin over the packages of a
// two-socket machine and bound to a core each, as --map-by package
// --bind-to core asks.
func ExampleTopology_Place() {
	allowed, _ := topo.ParseList("0-15")
	t, err := topo.Read("testdata/twosocket", allowed)
	if err != nil {
		fmt.Println(err)
		return
	}
	bindings, err := t.Place(4, topo.Options{Map: topo.Package, Bind: topo.Core})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, b := range bindings {
		fmt.Println(t.Report(b))
	}
	_, err = t.Place(9, topo.Options{Map: topo.Core, Bind: topo.Core})
	fmt.Println(err)
	// Output:
	// rank 0 bound to CPUs 0,8 (Machine 0, Package 0, NUMANode 0, L3Cache 0, L2Cache 0, Core 0)
	// rank 1 bound to CPUs 4,12 (Machine 0, Package 1, NUMANode 2, L3Cache 1, L2Cache 4, Core 4)
	// rank 2 bound to CPUs 1,9 (Machine 0, Package 0, NUMANode 0, L3Cache 0, L2Cache 1, Core 1)
	// rank 3 bound to CPUs 5,13 (Machine 0, Package 1, NUMANode 2, L3Cache 1, L2Cache 5, Core 5)
	// topo: 9 ranks but the allowed CPUs 0-15 hold 8 cores; allow oversubscription or start fewer ranks: impossible placement
}

// comm's view: which NUMA node holds all of a rank's CPUs
// (MPI_COMM_TYPE_HW_GUIDED with mpi_hw_resource_type NUMANode), and where a
// group of ranks first splits (MPI_COMM_TYPE_HW_UNGUIDED).
func ExampleUnguided() {
	t, err := topo.Read("testdata/fournuma", topo.CPUSet{})
	if err != nil {
		fmt.Println(err)
		return
	}
	var locs []topo.Location
	for _, cpus := range []string{"4,20", "5,21", "8,24", "12-15"} {
		set, _ := topo.ParseList(cpus)
		node, ok := t.InstanceOf(topo.NUMANode, set)
		fmt.Println(cpus, "->", node, ok)
		locs = append(locs, t.Locate(set))
	}
	fmt.Println(topo.Unguided(locs))
	// Output:
	// 4,20 -> NUMANode 1 (CPUs 4-7,20-23) true
	// 5,21 -> NUMANode 1 (CPUs 4-7,20-23) true
	// 8,24 -> NUMANode 2 (CPUs 8-11,24-27) true
	// 12-15 -> NUMANode 3 (CPUs 12-15,28-31) true
	// NUMANode true
}
