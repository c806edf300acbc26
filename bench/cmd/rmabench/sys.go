package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/shmrun/shmrun/internal/raw"
	"golang.org/x/sys/unix"
)

func goVersion() string { return runtime.Version() }

// affinity returns this process's CPU set as a bit mask (CPUs 0-63).
func affinity() uint64 {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil {
		return 0
	}
	var m uint64
	for i := range 64 {
		if set.IsSet(i) {
			m |= 1 << i
		}
	}
	return m
}

func cpuList(m int64) string {
	var cpus []string
	for i := range 64 {
		if uint64(m)&(1<<i) != 0 {
			cpus = append(cpus, fmt.Sprint(i))
		}
	}
	return strings.Join(cpus, ",")
}

// backing names the mapping that holds b (from /proc/self/maps).
func backing(b []byte) string {
	a := raw.Addr(b)
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(maps), "\n") {
		var lo, hi uintptr
		if _, err := fmt.Sscanf(l, "%x-%x", &lo, &hi); err == nil && a >= lo && a < hi {
			f := strings.Fields(l)
			if len(f) >= 6 {
				return strings.Join(f[5:], " ")
			}
			return "anonymous"
		}
	}
	return "?"
}
