// Package topo reads the hardware hierarchy of the machine from Linux sysfs
// and the CPUs a process may run on, and answers the two questions shmrun
// asks of it:
//
//   - the launcher's: where do n ranks go under --map-by and --bind-to, is
//     the request possible at all, and what does --report-bindings print
//     (Topology.Place, Topology.Report, BindThread);
//   - comm's: which instance of a resource level (NUMA node, L3 cache…)
//     holds all of a rank's CPUs, for MPI_COMM_TYPE_HW_GUIDED, and at which
//     level a group of ranks first splits, for MPI_COMM_TYPE_HW_UNGUIDED
//     (Topology.InstanceOf, Topology.Locate, Unguided).
//
// # Place in the layers
//
// topo is a leaf: it imports only x/sys/unix, and launcher and comm import
// it each on its own side. It shares nothing across processes; ranks that
// read the same sysfs compute the same instance numbers (Instance.Index), so
// comm exchanges Locations, fixed arrays of small integers, to agree.
//
// # Model
//
// A Topology holds, for each Level from Machine to HWThread, a partition of
// the online CPUs (or of the part sysfs describes, for NUMA nodes and
// caches) into Instances, numbered in the order of their lowest CPU over the
// whole machine — allowed or not, so a rank's own binding never changes the
// numbers. The levels need not nest. CPUSet is the set type, with the
// kernel's list ("0-3,8") and mask ("ff,00000001") formats.
//
// hwloc is the reference for what is right: the tests compare each level's
// CPU sets with lstopo's on this machine, and with hwloc's reading of the
// fake sysfs trees under testdata/ (a copy of a real machine's files, two
// sockets with two NUMA nodes each and SMT2, a single socket with four NUMA
// nodes and several L3 caches each, and a container whose cpuset is a
// subset). A fifth tree, a VM without cache or node information, with an
// offline CPU and gaps in its CPU ids, is too bare for hwloc and is pinned
// by hand.
//
// # Invariants
//
//   - Reading never panics: a missing or malformed optional file means the
//     fallback documented on Read; only an unreadable list of CPUs, or
//     allowed CPUs none of which is online, is an error.
//   - Place is pure: it reads the Topology and returns bindings or an error
//     wrapping ErrPlacement that names what is impossible.
//   - Every value is immutable after construction and safe to share.
package topo
