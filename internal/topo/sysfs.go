package topo

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The files Read looks at, relative to the root. Everything but the cpu
// directory itself is optional: see Read for what a missing file means.
const (
	cpuDir  = "sys/devices/system/cpu"
	nodeDir = "sys/devices/system/node"
)

// maxFileSize bounds what Read takes from one sysfs file: the longest, a
// mask of 8192 CPUs, is about 2.3 kB.
const maxFileSize = 64 << 10

// Read reads the machine's topology from the sysfs tree under root ("/" in
// production, a directory of testdata in tests) and restricts the process
// to allowed (its affinity; see Affinity and AllowedFromStatus). An empty
// allowed means every online CPU. allowed is intersected with the online
// CPUs; an empty intersection is an error.
//
// Read is robust to what real machines leave out:
//   - no cpu/online file: the CPUs are the cpuN directories whose own
//     online file, if any, is not 0; CPU ids may have gaps;
//   - offline CPUs are left out of every level, whatever other CPUs' lists
//     say about them;
//   - no package_cpus_list (old kernels: core_siblings_list): CPUs with the
//     same physical_package_id share a package; no id either: one package;
//   - no core_cpus_list (old kernels: thread_siblings_list): CPUs with the
//     same package and core_id share a core; no core_id either: one core
//     per CPU;
//   - no cache directory (many VMs): no L2Cache or L3Cache instance for that
//     CPU;
//   - no node directory (kernels without NUMA), or nodes that hold no
//     online CPU: one NUMA node with every CPU.
//
// Lists that disagree (CPU 0 says it shares with 1, CPU 1 says with 2) are
// merged into one instance, so each level is always a partition.
func Read(root string, allowed CPUSet) (*Topology, error) {
	r := sysfs{root: root}
	online, err := r.online()
	if err != nil {
		return nil, err
	}
	if online.IsEmpty() {
		return nil, fmt.Errorf("topo: %s: no online CPU", filepath.Join(root, cpuDir))
	}
	t := &Topology{online: online}
	if allowed.IsEmpty() {
		t.allowed = online
	} else {
		t.allowed = allowed.Intersect(online)
		if t.allowed.IsEmpty() {
			return nil, fmt.Errorf("topo: allowed CPUs %v hold no online CPU (online: %v)", allowed, online)
		}
	}

	cpus := online.CPUs()
	info := make(map[int]*cpuInfo, len(cpus))
	for _, c := range cpus {
		info[c] = r.cpu(c)
	}

	// Machine and HWThread need no file.
	t.set(Machine, []part{{cpus: online, os: 0}})
	var threads []part
	for _, c := range cpus {
		threads = append(threads, part{cpus: single(c), os: c})
	}
	t.set(HWThread, threads)

	// Package: the list, else the id, else everything.
	t.set(Package, partition(online, cpus, func(c int) (CPUSet, int, bool) {
		ci := info[c]
		if !ci.pkgSet.IsEmpty() {
			return ci.pkgSet, ci.pkgID, true
		}
		if ci.pkgID >= 0 {
			return sameKey(cpus, info, c, func(o *cpuInfo) int64 { return int64(o.pkgID) }), ci.pkgID, true
		}
		return online, -1, true
	}))

	// Core: the list, else (package, core_id), else the CPU alone.
	t.set(Core, partition(online, cpus, func(c int) (CPUSet, int, bool) {
		ci := info[c]
		if !ci.coreSet.IsEmpty() {
			return ci.coreSet, ci.coreID, true
		}
		if ci.coreID >= 0 {
			return sameKey(cpus, info, c, func(o *cpuInfo) int64 { return int64(o.pkgID)<<32 | int64(uint32(o.coreID)) }), ci.coreID, true
		}
		return single(c), -1, true
	}))

	for _, lv := range []struct {
		level Level
		cache int
	}{{L3Cache, 3}, {L2Cache, 2}} {
		t.set(lv.level, partition(online, cpus, func(c int) (CPUSet, int, bool) {
			ca, ok := info[c].caches[lv.cache]
			return ca.cpus, ca.id, ok
		}))
	}

	nodes := r.nodes(online)
	if len(nodes) == 0 {
		nodes = []part{{cpus: online, os: 0}}
	}
	t.set(NUMANode, nodes)
	return t, nil
}

// part is one instance before it gets its Index.
type part struct {
	cpus CPUSet
	os   int
}

// set stores the parts of level l ordered by lowest CPU and indexes them.
func (t *Topology) set(l Level, parts []part) {
	slices.SortFunc(parts, func(a, b part) int { return a.cpus.First() - b.cpus.First() })
	ins := make([]Instance, len(parts))
	of := make(map[int]int)
	for i, p := range parts {
		ins[i] = Instance{Level: l, Index: i, OSIndex: p.os, CPUs: p.cpus}
		p.cpus.each(func(c int) { of[c] = i })
	}
	t.levels[l.index()] = ins
	t.of[l.index()] = of
}

func single(c int) CPUSet {
	var b builder
	b.add(c)
	return b.set()
}

// sameKey returns the CPUs whose key equals c's.
func sameKey(cpus []int, info map[int]*cpuInfo, c int, key func(*cpuInfo) int64) CPUSet {
	var b builder
	k := key(info[c])
	for _, d := range cpus {
		if key(info[d]) == k {
			b.add(d)
		}
	}
	return b.set()
}

// partition builds a level from each CPU's view of the instance it is in:
// of(c) returns that set, the instance's OS number, and false when c has
// no view. The sets are cut to the online CPUs, always contain c itself,
// and overlapping sets are merged, so the result is a partition of the CPUs
// that some view covers. The OS number is the one of the lowest CPU with a
// view, or -1 when CPUs of one instance disagree about it.
func partition(online CPUSet, cpus []int, of func(c int) (CPUSet, int, bool)) []part {
	parent := make(map[int]int)
	find := func(c int) int {
		for parent[c] != c {
			parent[c] = parent[parent[c]]
			c = parent[c]
		}
		return c
	}
	union := func(a, b int) {
		ra, rb := find(a), find(b)
		if ra != rb {
			parent[max(ra, rb)] = min(ra, rb)
		}
	}
	osOf := make(map[int]int)
	seen := make(map[string]bool)
	for _, c := range cpus {
		set, os, ok := of(c)
		if !ok {
			continue
		}
		osOf[c] = os
		if _, in := parent[c]; !in {
			parent[c] = c
		}
		set = set.Intersect(online).Union(single(c))
		if key := set.key(); seen[key] {
			// Same view as a CPU already merged: only c needs joining.
			union(c, set.First())
			continue
		} else {
			seen[key] = true
		}
		set.each(func(d int) {
			if _, in := parent[d]; !in {
				parent[d] = d
			}
			union(c, d)
		})
	}
	groups := make(map[int]*builder)
	var roots []int
	for _, c := range cpus {
		if _, in := parent[c]; !in {
			continue
		}
		r := find(c)
		b, ok := groups[r]
		if !ok {
			b = &builder{}
			groups[r] = b
			roots = append(roots, r)
		}
		b.add(c)
	}
	parts := make([]part, 0, len(roots))
	for _, r := range roots {
		set := groups[r].set()
		os, first := -1, true
		set.each(func(c int) {
			o, ok := osOf[c]
			switch {
			case !ok:
			case first:
				os, first = o, false
			case o != os:
				os = -1
			}
		})
		parts = append(parts, part{cpus: set, os: os})
	}
	return parts
}

// cpuInfo is what sysfs says about one CPU; missing values are -1 or empty.
type cpuInfo struct {
	pkgID, coreID   int
	pkgSet, coreSet CPUSet
	caches          map[int]cache // by level; data and unified caches only
}

type cache struct {
	cpus CPUSet
	id   int
}

type sysfs struct{ root string }

func (r sysfs) path(parts ...string) string {
	return filepath.Join(append([]string{r.root}, parts...)...)
}

// read returns a file's content without surrounding white space.
func (r sysfs) read(parts ...string) (string, error) {
	f, err := os.Open(r.path(parts...))
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxFileSize {
		return "", fmt.Errorf("topo: %s: longer than %d bytes", f.Name(), maxFileSize)
	}
	return strings.TrimSpace(string(b)), nil
}

// int reads a decimal file; -1 when it is missing or not a number.
func (r sysfs) int(parts ...string) int {
	s, err := r.read(parts...)
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < -1 {
		return -1
	}
	return n
}

// list reads a set from a list file, else from a mask file; empty when
// neither is there or parses.
func (r sysfs) list(dir, listName, maskName string) CPUSet {
	if s, err := r.read(dir, listName); err == nil {
		if set, err := ParseList(s); err == nil {
			return set
		}
	}
	if maskName == "" {
		return CPUSet{}
	}
	if s, err := r.read(dir, maskName); err == nil {
		if set, err := ParseMask(s); err == nil {
			return set
		}
	}
	return CPUSet{}
}

// numbered lists the entries of dir named prefix followed by a number, by
// number.
func (r sysfs) numbered(dir, prefix string) ([]int, error) {
	ents, err := os.ReadDir(r.path(dir))
	if err != nil {
		return nil, err
	}
	var ns []int
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || rest == "" || len(rest) > 6 || strings.TrimLeft(rest, "0123456789") != "" {
			continue
		}
		n, _ := strconv.Atoi(rest)
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return ns, nil
}

// online returns the online CPUs: cpu/online, else the cpuN directories
// not marked offline.
func (r sysfs) online() (CPUSet, error) {
	if s, err := r.read(cpuDir, "online"); err == nil {
		set, err := ParseList(s)
		if err != nil {
			return CPUSet{}, fmt.Errorf("topo: %s: %w", r.path(cpuDir, "online"), err)
		}
		return set, nil
	}
	ns, err := r.numbered(cpuDir, "cpu")
	if err != nil {
		return CPUSet{}, fmt.Errorf("topo: reading the CPUs: %w", err)
	}
	var b builder
	for _, n := range ns {
		if n >= MaxCPUs {
			continue
		}
		if s, err := r.read(cpuDir, "cpu"+strconv.Itoa(n), "online"); err == nil && s == "0" {
			continue
		}
		b.add(n)
	}
	return b.set(), nil
}

func (r sysfs) cpu(c int) *cpuInfo {
	dir := filepath.Join(cpuDir, "cpu"+strconv.Itoa(c))
	topo := filepath.Join(dir, "topology")
	ci := &cpuInfo{
		pkgID:   r.int(topo, "physical_package_id"),
		coreID:  r.int(topo, "core_id"),
		pkgSet:  r.list(topo, "package_cpus_list", "package_cpus"),
		coreSet: r.list(topo, "core_cpus_list", "core_cpus"),
		caches:  make(map[int]cache),
	}
	if ci.pkgSet.IsEmpty() {
		ci.pkgSet = r.list(topo, "core_siblings_list", "core_siblings")
	}
	if ci.coreSet.IsEmpty() {
		ci.coreSet = r.list(topo, "thread_siblings_list", "thread_siblings")
	}
	idx, err := r.numbered(filepath.Join(dir, "cache"), "index")
	if err != nil {
		return ci
	}
	for _, i := range idx {
		d := filepath.Join(dir, "cache", "index"+strconv.Itoa(i))
		level := r.int(d, "level")
		if level != 2 && level != 3 {
			continue
		}
		if typ, err := r.read(d, "type"); err != nil || typ == "Instruction" {
			continue
		}
		set := r.list(d, "shared_cpu_list", "shared_cpu_map")
		if set.IsEmpty() {
			set = single(c)
		}
		ci.caches[level] = cache{cpus: set, id: r.int(d, "id")}
	}
	return ci
}

// nodes returns the NUMA nodes that hold online CPUs; none when sysfs has
// no node directory or lists no online CPU in any node.
func (r sysfs) nodes(online CPUSet) []part {
	ns, err := r.numbered(nodeDir, "node")
	if err != nil {
		return nil
	}
	cpus := online.CPUs()
	view := make(map[int]CPUSet)
	nodeOf := make(map[int]int)
	for _, n := range ns {
		set := r.list(filepath.Join(nodeDir, "node"+strconv.Itoa(n)), "cpulist", "cpumap").Intersect(online)
		set.each(func(c int) {
			if _, dup := view[c]; !dup {
				view[c], nodeOf[c] = set, n
			}
		})
	}
	if len(view) == 0 {
		return nil
	}
	return partition(online, cpus, func(c int) (CPUSet, int, bool) {
		set, ok := view[c]
		return set, nodeOf[c], ok
	})
}

// AllowedFromStatus reads the CPUs a process may run on from its
// /proc/<pid>/status text: the Cpus_allowed_list line, else Cpus_allowed.
func AllowedFromStatus(status io.Reader) (CPUSet, error) {
	sc := bufio.NewScanner(io.LimitReader(status, 1<<20))
	var mask string
	haveMask := false
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch key {
		case "Cpus_allowed_list":
			set, err := ParseList(val)
			if err != nil {
				return CPUSet{}, fmt.Errorf("topo: status: Cpus_allowed_list: %w", err)
			}
			return set, nil
		case "Cpus_allowed":
			mask, haveMask = val, true
		}
	}
	if err := sc.Err(); err != nil {
		return CPUSet{}, fmt.Errorf("topo: status: %w", err)
	}
	if !haveMask {
		return CPUSet{}, fmt.Errorf("topo: status: no Cpus_allowed_list or Cpus_allowed line: %w", fs.ErrNotExist)
	}
	set, err := ParseMask(mask)
	if err != nil {
		return CPUSet{}, fmt.Errorf("topo: status: Cpus_allowed: %w", err)
	}
	return set, nil
}
