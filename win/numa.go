//go:build !mpi

package win

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/internal/topo"
	"github.com/shmrun/shmrun/shm"
	"golang.org/x/sys/unix"
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

// PartPlacement is where one rank's part of a window sits: pages per NUMA
// node, and pages not yet allocated (never touched, or shmrun_no_reserve).
// Rank is -1 for a whole-window count (the numa_maps fallback).
type PartPlacement struct {
	Rank      int
	Nodes     map[int]int // node → pages on it
	Untouched int
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
		rng := pageRange(p.amem, p.data)
		resident, err := mapResident(rng, page)
		if err != nil {
			return nil, errorf(ErrOther, "Placement on rank %d: %v", w.rank, err)
		}
		status, err := raw.PageNodes(rng, page)
		if err != nil {
			return placementFromMaps(w, err)
		}
		for i, s := range status {
			if resident[i]&1 != 0 && s >= 0 {
				pp.Nodes[int(s)]++
			} else {
				pp.Untouched++
			}
		}
		out = append(out, pp)
	}
	return out, nil
}

// madvPopulateRead is MADV_POPULATE_READ (Linux 5.14): map pages in.
const madvPopulateRead = 22

// mapResident finds which pages of rng exist (mincore: in the segment's page
// cache, allocated by whichever process touched them) and maps those into
// this process, which move_pages needs to see them; pages that do not exist
// stay so (mapping them in would allocate them).
func mapResident(rng []byte, page int) ([]byte, error) {
	vec := make([]byte, len(rng)/page)
	if len(vec) == 0 {
		return vec, nil
	}
	if err := raw.Mincore(rng, vec); err != nil {
		return nil, fmt.Errorf("mincore: %w", err)
	}
	for i := 0; i < len(vec); {
		if vec[i]&1 == 0 {
			i++
			continue
		}
		j := i
		for j < len(vec) && vec[j]&1 != 0 {
			j++
		}
		// Best effort: an older kernel leaves the run unmapped, and
		// move_pages then counts it untouched.
		_ = unix.Madvise(rng[i*page:j*page], madvPopulateRead)
		i = j
	}
	return vec, nil
}

// placementFromMaps counts the window's pages per node from numa_maps.
func placementFromMaps(w *Win, cause error) ([]PartPlacement, error) {
	f, err := os.Open("/proc/self/numa_maps")
	if err != nil {
		return nil, errorf(ErrOther, "Placement on rank %d: move_pages: %v; numa_maps: %v", w.rank, cause, err)
	}
	defer f.Close()
	start := uint64(raw.Addr(w.mem))
	pp := PartPlacement{Rank: -1, Nodes: map[int]int{}}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		addr, err := strconv.ParseUint(fields[0], 16, 64)
		if err != nil || addr < start || addr >= start+uint64(len(w.mem)) {
			continue
		}
		for _, f := range fields[1:] {
			if k, v, ok := strings.Cut(f, "="); ok && len(k) > 1 && k[0] == 'N' {
				node, err1 := strconv.Atoi(k[1:])
				pages, err2 := strconv.Atoi(v)
				if err1 == nil && err2 == nil {
					pp.Nodes[node] += pages
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, errorf(ErrOther, "Placement on rank %d: numa_maps: %v", w.rank, err)
	}
	return []PartPlacement{pp}, nil
}
