package topo

import (
	"fmt"
	"slices"
	"strings"
)

// Level is a kind of hardware resource. The levels run from coarse to fine
// in the order of MPI's hardware resource types (MPI 4.0, 7.4.2):
// Machine > Package > NUMANode > L3Cache > L2Cache > Core > HWThread.
// Finer is greater. On some parts the levels do not nest (a NUMA node of a
// sub-NUMA-clustered package holds half of an L3): every level is a
// partition of the CPUs of its own, and nothing here assumes nesting.
type Level int

// The levels. NoLevel is the zero Level: "no binding" for Options.Bind.
const (
	NoLevel Level = iota
	Machine
	Package
	NUMANode
	L3Cache
	L2Cache
	Core
	HWThread
)

// numLevels counts the levels from Machine to HWThread.
const numLevels = int(HWThread - NoLevel)

var allLevels = [numLevels]Level{Machine, Package, NUMANode, L3Cache, L2Cache, Core, HWThread}

// Levels returns the levels from coarse to fine, Machine to HWThread.
func Levels() []Level { return slices.Clone(allLevels[:]) }

var levelNames = [...]string{
	NoLevel:  "none",
	Machine:  "Machine",
	Package:  "Package",
	NUMANode: "NUMANode",
	L3Cache:  "L3Cache",
	L2Cache:  "L2Cache",
	Core:     "Core",
	HWThread: "HWThread",
}

// String returns the MPI resource name ("NUMANode"), "none" for NoLevel.
func (l Level) String() string {
	if l < NoLevel || l > HWThread {
		return fmt.Sprintf("Level(%d)", int(l))
	}
	return levelNames[l]
}

func (l Level) valid() bool { return l >= Machine && l <= HWThread }

// index is l's position in Levels and in a Location.
func (l Level) index() int { return int(l - Machine) }

// ParseLevel maps a resource name to its Level. It accepts, case
// insensitively, the MPI names of mpi_hw_resource_type ("NUMANode",
// "L3Cache", "HWThread"…), the launcher's flag values ("numa", "l3cache",
// "hwthread", "none"…) and hwloc's ("PU", "Socket", "L3"). The MPI value
// "mpi_shared_memory" is Machine: on one node every rank shares memory with
// every other. An unknown name is an error (comm turns it into "no
// communicator", as the standard asks).
func ParseLevel(name string) (Level, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "none":
		return NoLevel, nil
	case "machine", "mpi_shared_memory", "board":
		return Machine, nil
	case "package", "socket":
		return Package, nil
	case "numanode", "numa":
		return NUMANode, nil
	case "l3cache", "l3":
		return L3Cache, nil
	case "l2cache", "l2":
		return L2Cache, nil
	case "core":
		return Core, nil
	case "hwthread", "pu", "thread":
		return HWThread, nil
	}
	return NoLevel, fmt.Errorf("topo: unknown hardware resource %q (want Machine, Package, NUMANode, L3Cache, L2Cache, Core, HWThread, mpi_shared_memory or none)", name)
}
