package shm

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCgroupRoom(t *testing.T) {
	root := t.TempDir()
	write := func(rel, s string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	self := filepath.Join(root, "self-cgroup")
	write("self-cgroup", "0::/job.slice/rank\n")
	// No files at all: no limit known.
	if r := cgroupRoom(self, root); r != -1 {
		t.Fatalf("no cgroup files: room %d, want -1", r)
	}
	write("job.slice/rank/memory.max", "max\n")
	write("job.slice/rank/memory.current", "1000\n")
	if r := cgroupRoom(self, root); r != -1 {
		t.Fatalf("memory.max=max: room %d, want -1", r)
	}
	// The parent's limit is the tighter one.
	write("job.slice/memory.max", "5000\n")
	write("job.slice/memory.current", "4000\n")
	write("job.slice/rank/memory.max", "1000000\n")
	if r := cgroupRoom(self, root); r != 1000 {
		t.Fatalf("room %d, want the parent's 1000", r)
	}
	// Over the limit: no room, not a negative number.
	write("job.slice/memory.current", "6000\n")
	if r := cgroupRoom(self, root); r != 0 {
		t.Fatalf("over the limit: room %d, want 0", r)
	}
	// cgroup v1: the memory controller's hierarchy, its own file names, and
	// the "unlimited" value; a path the namespace hides counts as the root.
	write("self-cgroup", "4:memory:/hidden/by/namespace\n9:name=systemd:/\n")
	write("memory/memory.limit_in_bytes", "9223372036854771712\n")
	write("memory/memory.usage_in_bytes", "592941056\n")
	if r := cgroupRoom(self, root); r != -1 {
		t.Fatalf("cgroup v1 unlimited: room %d, want -1", r)
	}
	write("memory/memory.limit_in_bytes", "1000000000\n")
	if r := cgroupRoom(self, root); r != 1000000000-592941056 {
		t.Fatalf("cgroup v1: room %d, want %d", r, 1000000000-592941056)
	}
	if r := cgroupRoom(filepath.Join(root, "missing"), root); r != -1 {
		t.Fatalf("no /proc/self/cgroup: room %d, want -1", r)
	}
}
