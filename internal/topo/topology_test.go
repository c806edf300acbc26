package topo

import (
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// readTree reads testdata/name with the allowed CPUs of its status file.
func readTree(t testing.TB, name string) *Topology {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name, "status"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	allowed, err := AllowedFromStatus(f)
	if err != nil {
		t.Fatal(err)
	}
	tp, err := Read(filepath.Join("testdata", name), allowed)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// levelSets lists the CPU sets of level l's instances by Index.
func levelSets(tp *Topology, l Level) string {
	var out []string
	for _, in := range tp.Instances(l) {
		out = append(out, in.CPUs.String())
	}
	return strings.Join(out, " ")
}

// TestReadTrees pins what Read makes of each fake tree, level by level,
// with the OS numbers of the instances.
func TestReadTrees(t *testing.T) {
	for _, tc := range []struct {
		tree    string
		allowed string
		levels  map[Level]string
		os      map[Level][]int
	}{{
		tree:    "host",
		allowed: "0-1",
		levels: map[Level]string{
			Machine: "0-1", Package: "0-1", NUMANode: "0-1", L3Cache: "0-1",
			L2Cache: "0 1", Core: "0 1", HWThread: "0 1",
		},
	}, {
		tree:    "twosocket",
		allowed: "0-15",
		levels: map[Level]string{
			Machine:  "0-15",
			Package:  "0-3,8-11 4-7,12-15",
			NUMANode: "0-1,8-9 2-3,10-11 4-5,12-13 6-7,14-15",
			L3Cache:  "0-3,8-11 4-7,12-15",
			L2Cache:  "0,8 1,9 2,10 3,11 4,12 5,13 6,14 7,15",
			Core:     "0,8 1,9 2,10 3,11 4,12 5,13 6,14 7,15",
			HWThread: "0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15",
		},
		os: map[Level][]int{Package: {0, 1}, NUMANode: {0, 1, 2, 3}, Core: {0, 1, 2, 3, 0, 1, 2, 3}},
	}, {
		tree:    "fournuma",
		allowed: "0-31",
		levels: map[Level]string{
			Package:  "0-31",
			NUMANode: "0-3,16-19 4-7,20-23 8-11,24-27 12-15,28-31",
			L3Cache:  "0-1,16-17 2-3,18-19 4-5,20-21 6-7,22-23 8-9,24-25 10-11,26-27 12-13,28-29 14-15,30-31",
		},
		os: map[Level][]int{L3Cache: {0, 1, 2, 3, 4, 5, 6, 7}},
	}, {
		tree:    "container",
		allowed: "4-11,20-27",
		levels: map[Level]string{
			NUMANode: "0-3,16-19 4-7,20-23 8-11,24-27 12-15,28-31",
		},
	}, {
		tree:    "vm",
		allowed: "0-2,4,8-9",
		levels: map[Level]string{
			Machine:  "0-2,4,8-9",
			Package:  "0-2,4 8-9",
			NUMANode: "0-2,4,8-9",
			L3Cache:  "",
			L2Cache:  "",
			Core:     "0 1 2 4 8-9",
			HWThread: "0 1 2 4 8 9",
		},
		os: map[Level][]int{Package: {0, 1}, NUMANode: {0}, Core: {0, 1, 2, 4, 0}, HWThread: {0, 1, 2, 4, 8, 9}},
	}} {
		t.Run(tc.tree, func(t *testing.T) {
			tp := readTree(t, tc.tree)
			if got := tp.Allowed().String(); got != tc.allowed {
				t.Errorf("Allowed = %q; want %q", got, tc.allowed)
			}
			for l, want := range tc.levels {
				if got := levelSets(tp, l); got != want {
					t.Errorf("%v = %q; want %q", l, got, want)
				}
			}
			for l, want := range tc.os {
				var got []int
				for i, in := range tp.Instances(l) {
					got = append(got, in.OSIndex)
					if in.Index != i || in.Level != l {
						t.Errorf("%v instance %d says Index %d, Level %v", l, i, in.Index, in.Level)
					}
				}
				if !slices.Equal(got, want) {
					t.Errorf("%v OS indexes = %v; want %v", l, got, want)
				}
			}
		})
	}
}

// hwlocObject is the part of lstopo's XML the tests compare.
type hwlocObject struct {
	Type     string        `xml:"type,attr"`
	Depth    string        `xml:"depth,attr"`
	CPUSet   string        `xml:"cpuset,attr"`
	Complete string        `xml:"complete_cpuset,attr"`
	Children []hwlocObject `xml:"object"`
}

// hwlocLevels returns, for each level, the sorted CPU sets of lstopo's
// objects of that kind (their cpuset: the allowed CPUs), and the machine's
// complete CPU set.
func hwlocLevels(t *testing.T, data []byte) (map[Level][]string, CPUSet) {
	t.Helper()
	var doc struct {
		Objects []hwlocObject `xml:"object"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("lstopo XML: %v", err)
	}
	out := make(map[Level][]string)
	var complete CPUSet
	var walk func(o hwlocObject)
	walk = func(o hwlocObject) {
		typ := o.Type
		if typ == "Cache" { // hwloc 1.x
			typ = "L" + o.Depth + "Cache"
		}
		var l Level
		switch typ {
		case "Machine":
			l = Machine
			complete = hwlocSet(t, o.Complete)
		case "Package":
			l = Package
		case "NUMANode":
			l = NUMANode
		case "L3Cache":
			l = L3Cache
		case "L2Cache":
			l = L2Cache
		case "Core":
			l = Core
		case "PU":
			l = HWThread
		}
		// hwloc keeps a NUMA node without allowed CPUs for its memory;
		// topo has no use for it.
		if set := hwlocSet(t, o.CPUSet); l != NoLevel && !set.IsEmpty() {
			out[l] = append(out[l], set.String())
		}
		for _, c := range o.Children {
			walk(c)
		}
	}
	for _, o := range doc.Objects {
		walk(o)
	}
	for l := range out {
		slices.Sort(out[l])
	}
	return out, complete
}

// hwlocSet parses hwloc's bitmap format, "0x0000000f,0xffffffff".
func hwlocSet(t *testing.T, s string) CPUSet {
	t.Helper()
	words := strings.Split(s, ",")
	for i, w := range words {
		words[i] = strings.TrimPrefix(w, "0x")
	}
	set, err := ParseMask(strings.Join(words, ","))
	if err != nil {
		t.Fatalf("hwloc cpuset %q: %v", s, err)
	}
	return set
}

// compareHwloc checks each level's instances, cut to the allowed CPUs,
// against lstopo's objects of that kind.
func compareHwloc(t *testing.T, tp *Topology, lstopoXML []byte) {
	t.Helper()
	want, complete := hwlocLevels(t, lstopoXML)
	// lstopo --restrict (the container's reference) cuts even the
	// complete set to the allowed CPUs; on a live machine hwloc's complete
	// set may also hold offline CPUs.
	if !tp.Online().SubsetOf(complete) && !complete.Equal(tp.Allowed()) {
		t.Errorf("online CPUs %v, allowed %v; hwloc's complete cpuset %v", tp.Online(), tp.Allowed(), complete)
	}
	for _, l := range allLevels {
		var got []string
		for _, in := range tp.allowedInstances(l, tp.Allowed()) {
			got = append(got, in.CPUs.String())
		}
		slices.Sort(got)
		if !slices.Equal(got, want[l]) {
			t.Errorf("%v: topo has %q; hwloc has %q", l, got, want[l])
		}
	}
}

// TestTreesMatchHwloc compares each fake tree with what hwloc 2.9 made of
// the same files (mktrees.sh ran lstopo with HWLOC_FSROOT on each tree).
func TestTreesMatchHwloc(t *testing.T) {
	for _, tree := range []string{"host", "twosocket", "fournuma", "container"} {
		t.Run(tree, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tree, "lstopo.xml"))
			if err != nil {
				t.Fatal(err)
			}
			compareHwloc(t, readTree(t, tree), data)
		})
	}
}

// TestLiveMatchesLstopo compares this machine's sysfs with lstopo run
// now, when lstopo is installed. Both look at the whole machine:
// lstopo --whole-system, and Read with every online CPU allowed.
func TestLiveMatchesLstopo(t *testing.T) {
	var bin string
	for _, name := range []string{"lstopo-no-graphics", "lstopo", "hwloc-ls"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Skip("lstopo is not installed")
	}
	out, err := exec.Command(bin, "--whole-system", "--of", "xml").Output()
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	tp, err := Read("/", CPUSet{})
	if err != nil {
		t.Fatal(err)
	}
	compareHwloc(t, tp, out)

	cur, err := Current()
	if err != nil {
		t.Fatal(err)
	}
	if !cur.Allowed().SubsetOf(cur.Online()) || cur.Allowed().IsEmpty() {
		t.Errorf("Current: allowed %v, online %v", cur.Allowed(), cur.Online())
	}
}

func TestAllowedFromStatus(t *testing.T) {
	for _, tc := range []struct {
		status, want string
		err          bool
	}{
		{status: "Name:\tx\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\n", want: "0-1"},
		{status: "Cpus_allowed:\tff00ff0\n", want: "4-11,20-27"},
		{status: "Cpus_allowed_list:\t0-1\nCpus_allowed:\tf\n", want: "0-1"},
		{status: "Name:\tx\n", err: true},
		{status: "Cpus_allowed_list:\t1-0\n", err: true},
		{status: "Cpus_allowed:\tzz\n", err: true},
	} {
		got, err := AllowedFromStatus(strings.NewReader(tc.status))
		if (err != nil) != tc.err || (err == nil && got.String() != tc.want) {
			t.Errorf("AllowedFromStatus(%q) = %v, %v; want %q (error %v)", tc.status, got, err, tc.want, tc.err)
		}
	}
}

// writeTree makes a sysfs tree from a map of path → content.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestReadBrokenTrees feeds Read missing, malformed and contradictory
// files: it must fall back as documented, or fail with an error, and
// never panic.
func TestReadBrokenTrees(t *testing.T) {
	const cpu = "sys/devices/system/cpu/"
	for _, tc := range []struct {
		name   string
		files  map[string]string
		err    bool
		levels map[Level]string
	}{{
		name: "no sysfs",
		err:  true,
	}, {
		name:  "garbage online",
		files: map[string]string{cpu + "online": "zero-one\n"},
		err:   true,
	}, {
		name:  "no CPU",
		files: map[string]string{cpu + "online": "\n"},
		err:   true,
	}, {
		name: "only an online file",
		files: map[string]string{
			cpu + "online": "0-3\n",
		},
		levels: map[Level]string{Package: "0-3", NUMANode: "0-3", Core: "0 1 2 3", L3Cache: ""},
	}, {
		name: "garbage in optional files",
		files: map[string]string{
			cpu + "online":                                  "0-1\n",
			cpu + "cpu0/topology/package_cpus_list":         "x\n",
			cpu + "cpu0/topology/physical_package_id":       "-7\n",
			cpu + "cpu1/topology/core_cpus_list":            "1-0\n",
			cpu + "cpu0/cache/index3/level":                 "three\n",
			cpu + "cpu1/cache/index3/level":                 "3\n",
			cpu + "cpu1/cache/index3/type":                  "Unified\n",
			cpu + "cpu1/cache/index3/shared_cpu_list":       "\n",
			"sys/devices/system/node/node0/cpulist":         "9\n",
			"sys/devices/system/node/nodeX/cpulist":         "0-1\n",
			"sys/devices/system/node/node00000000/cpulist/": "",
		},
		levels: map[Level]string{Package: "0-1", NUMANode: "0-1", Core: "0 1", L3Cache: "1"},
	}, {
		name: "lists that disagree and name offline CPUs",
		files: map[string]string{
			cpu + "online":                          "0-2,4\n",
			cpu + "cpu0/topology/package_cpus_list": "0-1\n",
			cpu + "cpu1/topology/package_cpus_list": "1-2\n",
			cpu + "cpu2/topology/package_cpus_list": "2-3\n",
			cpu + "cpu4/topology/package_cpus_list": "3-4\n",
			cpu + "cpu0/topology/core_cpus_list":    "3\n",
		},
		levels: map[Level]string{Package: "0-2 4", Core: "0 1 2 4"},
	}, {
		name: "node with CPUs and memory-only node",
		files: map[string]string{
			cpu + "online":                          "0-3\n",
			"sys/devices/system/node/node0/cpulist": "0-1\n",
			"sys/devices/system/node/node1/cpulist": "\n",
			"sys/devices/system/node/node2/cpumap":  "c\n",
		},
		levels: map[Level]string{NUMANode: "0-1 2-3"},
	}, {
		name: "node lists leave CPUs out",
		files: map[string]string{
			cpu + "online":                          "0-3\n",
			"sys/devices/system/node/node1/cpulist": "2-3\n",
		},
		levels: map[Level]string{NUMANode: "2-3"},
	}, {
		name: "no online file, a cpu directory offline",
		files: map[string]string{
			cpu + "cpu0/online":    "1\n",
			cpu + "cpu2/online":    "0\n",
			cpu + "cpu5/uevent":    "",
			cpu + "cpufreq/x":      "",
			cpu + "cpu99999999/x":  "",
			cpu + "cpu/x":          "",
			cpu + "cpu7x/uevent":   "",
			cpu + "cpu6/topology/": "",
		},
		levels: map[Level]string{HWThread: "0 5 6", Machine: "0,5-6"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			root := writeTree(t, tc.files)
			tp, err := Read(root, CPUSet{})
			if tc.err {
				if err == nil {
					t.Fatalf("Read succeeded:\n%v", tp)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for l, want := range tc.levels {
				if got := levelSets(tp, l); got != want {
					t.Errorf("%v = %q; want %q", l, got, want)
				}
			}
		})
	}
}

func TestReadAllowed(t *testing.T) {
	if _, err := Read("testdata/twosocket", mustList(t, "16-20")); err == nil {
		t.Error("Read with allowed CPUs all offline succeeded")
	}
	tp, err := Read("testdata/twosocket", mustList(t, "1-2,40"))
	if err != nil {
		t.Fatal(err)
	}
	if got := tp.Allowed().String(); got != "1-2" {
		t.Errorf("Allowed = %q; want 1-2", got)
	}
	if got := levelSets(tp, Package); got != "0-3,8-11 4-7,12-15" {
		t.Errorf("instances depend on the allowed CPUs: %q", got)
	}
}

// FuzzAllowedFromStatus checks that reading a status file never panics and
// that what it accepts is a set that prints back.
func FuzzAllowedFromStatus(f *testing.F) {
	f.Add("Cpus_allowed:\t3\nCpus_allowed_list:\t0-1\n")
	f.Add("Cpus_allowed:\tff00ff0\n")
	f.Add("Name:\tx\n")
	f.Fuzz(func(t *testing.T, s string) {
		set, err := AllowedFromStatus(strings.NewReader(s))
		if err != nil {
			return
		}
		roundTrip(t, set)
	})
}

// TestBindThread binds a locked thread and reads its affinity back. The
// thread is never unlocked, so it dies with its goroutine and the binding
// with it.
func TestBindThread(t *testing.T) {
	allowed, err := Affinity()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		runtime.LockOSThread()
		one, _ := NewCPUSet(allowed.First())
		if err := BindThread(one); err != nil {
			done <- err
			return
		}
		got, err := Affinity()
		if err == nil && !got.Equal(one) {
			err = fmt.Errorf("affinity after binding to %v is %v", one, got)
		}
		if err == nil {
			if e := BindThread(CPUSet{}); e == nil {
				err = errors.New("binding to the empty set succeeded")
			}
		}
		done <- err
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if again, err := Affinity(); err != nil || again.IsEmpty() {
		t.Fatalf("Affinity = %v, %v", again, err)
	}
}

// FuzzRead writes fuzzed contents into the files Read looks at and checks
// that it returns a topology whose levels partition what they cover, or an
// error, and never panics.
func FuzzRead(f *testing.F) {
	f.Add("0-3", "0-1", "0", "3", "0-3", "0", "2-3")
	f.Add("0,2", "x", "2,0", "", "\n", "7", "0000000f")
	f.Add("", "", "", "", "", "", "")
	root := f.TempDir()
	const cpu = "sys/devices/system/cpu/"
	paths := []string{
		cpu + "online",
		cpu + "cpu0/topology/package_cpus_list",
		cpu + "cpu0/topology/core_cpus_list",
		cpu + "cpu0/cache/index3/level",
		cpu + "cpu0/cache/index3/shared_cpu_list",
		cpu + "cpu2/topology/physical_package_id",
		"sys/devices/system/node/node1/cpumap",
	}
	for _, p := range paths {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755); err != nil {
			f.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, cpu, "cpu0/cache/index3/type"), []byte("Unified\n"), 0o644); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, online, pkg, core, level, shared, pkgID, node string) {
		for i, content := range []string{online, pkg, core, level, shared, pkgID, node} {
			if err := os.WriteFile(filepath.Join(root, paths[i]), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		tp, err := Read(root, CPUSet{})
		if err != nil {
			return
		}
		for _, l := range allLevels {
			var covered CPUSet
			for _, in := range tp.Instances(l) {
				if in.CPUs.IsEmpty() || covered.Intersects(in.CPUs) || !in.CPUs.SubsetOf(tp.Online()) {
					t.Fatalf("%v instance %v overlaps, is empty or holds offline CPUs:\n%v", l, in, tp)
				}
				covered = covered.Union(in.CPUs)
			}
		}
		tp.Place(3, Options{Map: L3Cache, Bind: Core, Oversubscribe: true})
		tp.Locate(tp.Online())
	})
}
