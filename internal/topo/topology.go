package topo

import (
	"fmt"
	"slices"
	"strings"
)

// Instance is one resource of a level: a package, a NUMA node, an L3
// cache, a core…
type Instance struct {
	Level Level
	// Index numbers the level's instances 0, 1, … in the order of their
	// lowest CPU, over every online CPU (allowed or not), so every process
	// that reads the same sysfs gives an instance the same Index whatever
	// its own binding: comm compares Indexes across ranks. It is not
	// hwloc's logical index (L#), which follows hwloc's tree: on a machine
	// with SMT, hwloc's PU L#1 is often CPU 8 where HWThread Index 1 is CPU 1.
	Index int
	// OSIndex is the kernel's number for the instance: the package id, the
	// node number, the cache id, the core id (unique only within its
	// package), the CPU id; -1 when sysfs does not say.
	OSIndex int
	// CPUs holds the instance's online CPUs, allowed or not.
	CPUs CPUSet
}

// String names the instance the way reports print it: "NUMANode 1 (CPUs 8-15)".
func (in Instance) String() string {
	return fmt.Sprintf("%v %d (CPUs %v)", in.Level, in.Index, in.CPUs)
}

// Topology is the hardware of one machine as Linux sysfs describes it, and
// the CPUs this process may run on. It is immutable once read and safe to
// share between goroutines.
type Topology struct {
	online  CPUSet
	allowed CPUSet
	levels  [numLevels][]Instance
	// of maps a level and a CPU to the Index of the instance holding it,
	// -1 when the level says nothing about that CPU.
	of [numLevels]map[int]int
}

// Online returns every online CPU of the machine.
func (t *Topology) Online() CPUSet { return t.online }

// Allowed returns the CPUs this process may run on (its affinity, which a
// container's cpuset restricts), always a non-empty subset of Online.
func (t *Topology) Allowed() CPUSet { return t.allowed }

// Instances returns the instances of level l over the whole machine, by
// Index. Machine, Package, Core and HWThread cover every online CPU; NUMANode
// may leave out CPUs sysfs puts in no node, and the cache levels the CPUs
// whose caches sysfs does not describe (many VMs): a machine without any L3
// information has no L3Cache instance at all.
func (t *Topology) Instances(l Level) []Instance {
	if !l.valid() {
		return nil
	}
	return slices.Clone(t.levels[l.index()])
}

// InstanceOf returns the instance of level l that contains every CPU of
// cpus: what MPI_COMM_TYPE_HW_GUIDED asks for a rank's CPU set. It reports
// false when cpus is empty, spans several instances, or holds a CPU the
// level does not describe: a rank not bound inside one instance gets no
// communicator.
func (t *Topology) InstanceOf(l Level, cpus CPUSet) (Instance, bool) {
	if !l.valid() || cpus.IsEmpty() {
		return Instance{}, false
	}
	idx := -1
	ok := true
	of := t.of[l.index()]
	cpus.each(func(c int) {
		i, found := of[c]
		switch {
		case !found:
			ok = false
		case idx == -1:
			idx = i
		case idx != i:
			ok = false
		}
	})
	if !ok || idx < 0 {
		return Instance{}, false
	}
	return t.levels[l.index()][idx], true
}

// Location holds, for each level from Machine to HWThread (Location[0] is
// Machine; use At), the Index of the instance containing a CPU set, or -1
// when no instance contains it all. It is a fixed-size array of small
// numbers so that ranks can exchange it through a slot and agree on a split.
type Location [numLevels]int32

// At returns the Index of the instance at level l, or -1.
func (loc Location) At(l Level) int {
	if !l.valid() {
		return -1
	}
	return int(loc[l.index()])
}

// String lists the levels a Location has an instance for:
// "Machine 0, Package 1, NUMANode 2, L3Cache 5".
func (loc Location) String() string {
	var parts []string
	for _, l := range allLevels {
		if i := loc.At(l); i >= 0 {
			parts = append(parts, fmt.Sprintf("%v %d", l, i))
		}
	}
	if len(parts) == 0 {
		return "nowhere"
	}
	return strings.Join(parts, ", ")
}

// Locate returns the Location of cpus: at each level, the instance that
// contains all of cpus.
func (t *Topology) Locate(cpus CPUSet) Location {
	var loc Location
	for _, l := range allLevels {
		loc[l.index()] = -1
		if in, ok := t.InstanceOf(l, cpus); ok {
			loc[l.index()] = int32(in.Index)
		}
	}
	return loc
}

// Unguided decides MPI_COMM_TYPE_HW_UNGUIDED for a set of ranks from their
// Locations: it returns the first level, from Machine down to HWThread, at
// which no single instance holds every rank — the level where the group
// actually splits. Each rank's new communicator is then the ranks with the
// same At(level); a rank with -1 there gets none. Levels no rank has an
// instance at (no L3 information, say) are skipped. It reports false when
// the ranks never split (one rank, or all bound to one hardware thread):
// then every rank gets no communicator.
func Unguided(locs []Location) (Level, bool) {
	if len(locs) == 0 {
		return NoLevel, false
	}
	for _, l := range allLevels {
		first := locs[0].At(l)
		split := false
		any := false
		for _, loc := range locs {
			i := loc.At(l)
			if i >= 0 {
				any = true
			}
			if i < 0 || i != first {
				split = true
			}
		}
		if any && split {
			return l, true
		}
	}
	return NoLevel, false
}

// String describes the topology one level a line, for reports and tests:
// "Package: 0-7 8-15" (each instance's CPUs by Index), then the allowed set.
func (t *Topology) String() string {
	var sb strings.Builder
	for _, l := range allLevels {
		fmt.Fprintf(&sb, "%v:", l)
		for _, in := range t.levels[l.index()] {
			fmt.Fprintf(&sb, " %v", in.CPUs)
		}
		sb.WriteByte('\n')
	}
	fmt.Fprintf(&sb, "Allowed: %v\n", t.allowed)
	return sb.String()
}
