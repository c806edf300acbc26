package win

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/shmrun/shmrun/internal/raw"
	"golang.org/x/sys/unix"
)

// PartPlacement is where one rank's part of a window sits: pages per NUMA
// node, and pages not yet allocated (never touched, or shmrun_no_reserve).
// Rank is -1 for a whole-window count (the numa_maps fallback).
type PartPlacement struct {
	Rank      int
	Nodes     map[int]int // node → pages on it
	Untouched int
}

// countPart counts the pages of rng (whole pages of a part) per NUMA node
// into pp: those that exist are mapped in first (mapResident), the others
// are Untouched. ok is false, with the cause in err, where the kernel
// refuses move_pages (the caller falls back to numa_maps); another error
// is mincore's.
func countPart(pp *PartPlacement, rng []byte, page int) (ok bool, err error) {
	resident, err := mapResident(rng, page)
	if err != nil {
		return true, err
	}
	status, err := raw.PageNodes(rng, page)
	if err != nil {
		return false, err
	}
	for i, s := range status {
		if resident[i]&1 != 0 && s >= 0 {
			pp.Nodes[int(s)]++
		} else {
			pp.Untouched++
		}
	}
	return true, nil
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

// placementFromMaps counts the pages per node of mem (a window's memory
// in this process) from numa_maps; rank is the caller's, for errors.
func placementFromMaps(rank int, mem []byte, cause error) ([]PartPlacement, error) {
	f, err := os.Open("/proc/self/numa_maps")
	if err != nil {
		return nil, errorf(ErrOther, "Placement on rank %d: move_pages: %v; numa_maps: %v", rank, cause, err)
	}
	defer f.Close()
	start := uint64(raw.Addr(mem))
	pp := PartPlacement{Rank: -1, Nodes: map[int]int{}}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		addr, err := strconv.ParseUint(fields[0], 16, 64)
		if err != nil || addr < start || addr >= start+uint64(len(mem)) {
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
		return nil, errorf(ErrOther, "Placement on rank %d: numa_maps: %v", rank, err)
	}
	return []PartPlacement{pp}, nil
}
