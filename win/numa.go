//go:build !mpi

package win

import (
	"os"
	"strings"

	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/internal/topo"
	"github.com/shmrun/shmrun/shm"
)

// maxNodes bounds node:N (the kernel's MAX_NUMNODES is at most 1024).
const maxNodes = 1024

// onlineNodes reads the NUMA nodes this machine has (one node 0 when the
// kernel has no node directory).
func onlineNodes() (topo.CPUSet, error) {
	b, err := os.ReadFile("/sys/devices/system/node/online")
	if err != nil {
		return topo.NewCPUSet(0)
	}
	return topo.ParseList(strings.TrimSpace(string(b)))
}

// applyPolicy sets the memory policy of the info shmrun_mempolicy on part
// (a range of this rank's mapping), before its pages are reserved.
// With an empty part it only checks the policy against the machine.
func (c config) applyPolicy(part []byte) error {
	if c.mempolicy == "local" {
		return nil
	}
	nodes, err := onlineNodes()
	if err != nil {
		return errorf(ErrInfo, "info shmrun_mempolicy=%s: reading the NUMA nodes: %v", c.mempolicy, err)
	}
	mode := raw.MpolInterleave
	if c.mempolicy != "interleave" {
		if !nodes.Contains(c.policyNode) {
			return errorf(ErrInfo, "info shmrun_mempolicy=%s: this machine's NUMA nodes are %v", c.mempolicy, nodes)
		}
		mode, nodes = raw.MpolBind, mustSet(c.policyNode)
	}
	if len(part) == 0 {
		return nil
	}
	mask := make([]uint64, maxNodes/64)
	for _, n := range nodes.CPUs() {
		mask[n/64] |= 1 << (n % 64)
	}
	if err := raw.Mbind(part, mode, mask); err != nil {
		return errorf(ErrInfo, "info shmrun_mempolicy=%s: mbind refused (%v): this system does not let processes set a memory policy (a container without CAP_SYS_NICE?)", c.mempolicy, err)
	}
	return nil
}

func mustSet(n int) topo.CPUSet {
	s, _ := topo.NewCPUSet(n)
	return s
}

// pageRange is the whole pages covering b within mem (b a sub-slice of mem).
func pageRange(mem, b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	off := int64(raw.Addr(b) - raw.Addr(mem))
	start := off &^ (shm.PageSize - 1)
	end, _ := shm.AlignUp(off+int64(len(b)), shm.PageSize)
	return mem[start:min(end, int64(len(mem)))]
}

// Placement reports, for each rank's part of w as mapped in this process,
// how many of its pages sit on which NUMA node (move_pages, which moves
// nothing when asked no target); pages that exist but this process has not
// touched are mapped in first (never allocated). Local; it blocks only for
// the system calls.
// A Create window's parts are the memory mapped from their owners (none for
// private memory); a dynamic window's are empty.
// Where the kernel refuses move_pages it falls back to /proc/self/numa_maps,
// which counts the whole window: one PartPlacement with Rank -1. Pages
// shared by two parts (contiguous layout) count for both.
func Placement(w *Win) ([]PartPlacement, error) {
	if err := w.live("Placement"); err != nil {
		return nil, err
	}
	out := make([]PartPlacement, 0, w.size)
	page := int(shm.PageSize)
	for r := range w.size {
		pp := PartPlacement{Rank: r, Nodes: map[int]int{}}
		p := &w.parts[r]
		if raw.Addr(p.amem)%uintptr(page) != 0 {
			// Memory not in a mapping of this process (a Create window's
			// private or Go-heap memory): nothing to count.
			out = append(out, pp)
			continue
		}
		ok, err := countPart(&pp, pageRange(p.amem, p.data), page)
		if !ok {
			return placementFromMaps(w.rank, w.mem, err)
		}
		if err != nil {
			return nil, errorf(ErrOther, "Placement on rank %d: %v", w.rank, err)
		}
		out = append(out, pp)
	}
	return out, nil
}
