package comm

import "github.com/shmrun/shmrun/internal/topo"

// SplitKind is the split_type of SplitType (MPI_COMM_TYPE_*).
type SplitKind int

// Split kinds.
const (
	// TypeShared groups the ranks that can share memory
	// (MPI_COMM_TYPE_SHARED): every rank of a job, on one node.
	TypeShared SplitKind = iota + 1
	// TypeHWGuided groups the ranks whose CPUs lie in one instance of the
	// hardware resource named by info["mpi_hw_resource_type"]
	// (MPI_COMM_TYPE_HW_GUIDED): "mpi_shared_memory", "NUMANode",
	// "Package", "L3Cache", "L2Cache", "Core" or "HWThread".
	TypeHWGuided
	// TypeHWUnguided splits at the next finer hardware level at which the
	// ranks actually split (MPI_COMM_TYPE_HW_UNGUIDED), and writes that
	// level's name into info["mpi_hw_resource_type"].
	TypeHWUnguided
)

// Info holds hints and results of communicator calls (MPI_Info): keys and
// values as strings.
type Info map[string]string

// HWResourceType is the info key of TypeHWGuided and TypeHWUnguided.
const HWResourceType = "mpi_hw_resource_type"

// readLocation reads where this process's allowed CPUs lie in the
// machine's hardware (sysfs): what the hardware split kinds split by.
func readLocation() (topo.Location, error) {
	t, err := topo.Current()
	if err != nil {
		return topo.Location{}, err
	}
	return t.Locate(t.Allowed()), nil
}

// levelName is a level's name as TypeHWUnguided writes it into info: the
// standard's "mpi_shared_memory" for the whole machine (node).
func levelName(l topo.Level) string {
	if l == topo.Machine {
		return "mpi_shared_memory"
	}
	return l.String()
}
