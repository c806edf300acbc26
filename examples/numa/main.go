// The MPI backend (-tags mpi) has no win.Placement (docs/MPI.md).

//go:build !mpi

// Command numa walks the hardware hierarchy the way NUMA-aware programs on
// shared windows do: world → shared memory → NUMA node → L3 cache, one
// communicator per level (comm.SplitType), then one noncontig shared window
// per NUMA communicator whose parts each rank first-touches, and the
// Placement report of where those pages landed.
//
//	go run ./cmd/shmrun -n 4 --oversubscribe ./examples/numa
//	go run ./cmd/shmrun -n 2 --bind-to core ./examples/numa
//
// A rank that is not bound inside one NUMA node (or L3 cache) gets no
// communicator at that level, as the standard says; bind the ranks to see
// the levels split.
package main

import (
	"fmt"
	"log"
	"maps"
	"slices"
	"strings"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/win"
)

func main() {
	world, err := comm.Init()
	if err != nil {
		log.Fatal(err)
	}
	if err := run(world); err != nil {
		log.Fatal(err)
	}
	if err := comm.Finalize(); err != nil {
		log.Fatal(err)
	}
}

func run(world *comm.Comm) error {
	shared, err := world.SplitType(comm.TypeShared, 0, nil)
	if err != nil {
		return err
	}
	levels := []struct {
		name string
		c    *comm.Comm
	}{{"world", world}, {"shared", shared}}
	for _, res := range []string{"NUMANode", "L3Cache"} {
		c, err := shared.SplitType(comm.TypeHWGuided, 0, comm.Info{comm.HWResourceType: res})
		if err != nil {
			return err
		}
		levels = append(levels, struct {
			name string
			c    *comm.Comm
		}{res, c})
	}
	var line []string
	for _, l := range levels {
		if l.c == nil {
			line = append(line, l.name+" -")
			continue
		}
		line = append(line, fmt.Sprintf("%s %d/%d", l.name, l.c.Rank(), l.c.Size()))
	}
	// One line per rank, in rank order.
	for r := range world.Size() {
		if r == world.Rank() {
			fmt.Printf("rank %d: %s\n", r, strings.Join(line, ", "))
		}
		if err := world.Barrier(); err != nil {
			return err
		}
	}
	numa := levels[2].c
	if numa != nil {
		if err := placeOnNode(numa, world.Rank()); err != nil {
			return err
		}
	}
	if err := world.Barrier(); err != nil {
		return err
	}
	for _, l := range levels[1:] {
		if l.c != nil {
			if err := l.c.Free(); err != nil {
				return err
			}
		}
	}
	return nil
}

// placeOnNode allocates a noncontig window on a NUMA communicator; each rank
// writes every page of its own part (first touch: the pages land on its
// node), and the communicator's rank 0 prints where every part's pages are.
func placeOnNode(numa *comm.Comm, worldRank int) error {
	const size = 1 << 20
	w, err := win.AllocateShared(numa, size, 1, win.Info{"alloc_shared_noncontig": "true", "shmrun_no_reserve": "true"})
	if err != nil {
		return err
	}
	mine := w.Local()
	for i := 0; i < len(mine); i += 4096 {
		mine[i] = byte(worldRank)
	}
	if err := numa.Barrier(); err != nil {
		return err
	}
	if numa.Rank() == 0 {
		pl, err := win.Placement(w)
		if err != nil {
			return err
		}
		for _, p := range pl {
			nodes := make([]string, 0, len(p.Nodes))
			for _, n := range slices.Sorted(maps.Keys(p.Nodes)) {
				nodes = append(nodes, fmt.Sprintf("node %d: %d pages", n, p.Nodes[n]))
			}
			fmt.Printf("window of world rank %d's NUMA communicator: part %d: %s; %d untouched\n",
				worldRank, p.Rank, strings.Join(nodes, ", "), p.Untouched)
		}
	}
	if err := numa.Barrier(); err != nil {
		return err
	}
	return w.Free()
}
