package shm

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// CgroupRoom reports how many more bytes this process's memory cgroup lets
// it charge: the least, over its cgroup and every ancestor, of the limit
// minus the usage (cgroup v2: memory.max and memory.current; v1:
// memory.limit_in_bytes and memory.usage_in_bytes). It is -1 when no limit
// applies or none can be read. Shared memory that is not in a size-limited
// tmpfs (a memfd, say) is charged there, and a charge past the limit is an
// OOM kill, not an error: check before reserving.
func CgroupRoom() int64 { return cgroupRoom("/proc/self/cgroup", "/sys/fs/cgroup") }

// cgroupFiles names a hierarchy's limit and usage files.
type cgroupFiles struct{ limit, usage string }

var (
	cgroupV2 = cgroupFiles{"memory.max", "memory.current"}
	cgroupV1 = cgroupFiles{"memory.limit_in_bytes", "memory.usage_in_bytes"}
)

func cgroupRoom(selfCgroup, root string) int64 {
	f, err := os.Open(selfCgroup)
	if err != nil {
		return -1
	}
	defer f.Close()
	room := int64(-1)
	least := func(r int64) {
		if r >= 0 && (room < 0 || r < room) {
			room = r
		}
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// hierarchy-ID:controllers:path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 || !strings.HasPrefix(parts[2], "/") {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			least(cgroupRoomUp(root, parts[2], cgroupV2))
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			least(cgroupRoomUp(filepath.Join(root, "memory"), parts[2], cgroupV1))
		}
	}
	return room
}

// cgroupRoomUp is the least room of path and its ancestors under root. A
// path that does not exist under root (a cgroup namespace shows the
// process's own cgroup as the root) counts as the root.
func cgroupRoomUp(root, path string, files cgroupFiles) int64 {
	p := filepath.Clean(path)
	if _, err := os.Stat(filepath.Join(root, p)); err != nil {
		p = "/"
	}
	room := int64(-1)
	for ; ; p = filepath.Dir(p) {
		if r := cgroupRoomAt(filepath.Join(root, p), files); r >= 0 && (room < 0 || r < room) {
			room = r
		}
		if p == "/" {
			return room
		}
	}
}

// unlimited is where a cgroup v1 limit means "none" (the kernel reports
// the largest page multiple below 2^63).
const unlimited = 1 << 62

// cgroupRoomAt is limit - usage of one cgroup directory (0 when over), or
// -1 for no limit or nothing readable.
func cgroupRoomAt(dir string, files cgroupFiles) int64 {
	read := func(name string) (int64, bool) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return 0, false
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return v, err == nil // "max": no limit
	}
	limit, ok := read(files.limit)
	if !ok || limit >= unlimited {
		return -1
	}
	used, ok := read(files.usage)
	if !ok {
		return -1
	}
	return max(limit-used, 0)
}
