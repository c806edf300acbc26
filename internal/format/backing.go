package format

import "fmt"

// Backing is where window segments live (shmrun --shm, SHMRUN_SHM).
type Backing uint8

// Backings. The zero Backing is BackingAuto.
const (
	// BackingAuto: a named object in the shm directory when the directory
	// has room for the window, else a memfd.
	BackingAuto Backing = iota
	// BackingDir: always a named object in the shm directory (a full
	// directory is ErrNoMem).
	BackingDir
	// BackingMemfd: always a memfd, made by the window's rank 0 and opened
	// by the others through /proc/<pid>/fd/<fd>: it has no name, does not
	// count against the shm directory's mount, and cannot leak; it still
	// counts against the job's memory cgroup, which is checked first.
	BackingMemfd
)

var backingNames = [...]string{BackingAuto: "auto", BackingDir: "dir", BackingMemfd: "memfd"}

func (b Backing) String() string {
	if int(b) < len(backingNames) {
		return backingNames[b]
	}
	return fmt.Sprintf("Backing(%d)", uint8(b))
}

// ParseBacking reads a backing name: "auto" (or empty), "dir" or "memfd".
func ParseBacking(s string) (Backing, error) {
	if s == "" {
		return BackingAuto, nil
	}
	for b, name := range backingNames {
		if s == name {
			return Backing(b), nil
		}
	}
	return 0, fmt.Errorf("window backing %q: want auto, dir or memfd", s)
}
