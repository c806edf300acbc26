package topo

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Affinity returns the CPUs the calling thread may run on
// (sched_getaffinity). In a container it is at most the container's
// cpuset; under shmrun's binding it is the rank's binding.
func Affinity() (CPUSet, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		// x/sys's set holds 1024 CPUs, and the kernel refuses a buffer
		// smaller than its possible CPUs (EINVAL): the thread's status
		// file lists them whatever their number.
		f, rerr := os.Open("/proc/thread-self/status")
		if rerr != nil {
			return CPUSet{}, fmt.Errorf("topo: sched_getaffinity: %w (and %v)", err, rerr)
		}
		defer f.Close()
		s, perr := AllowedFromStatus(f)
		if perr != nil {
			return CPUSet{}, fmt.Errorf("topo: sched_getaffinity: %w (and /proc/thread-self/status: %v)", err, perr)
		}
		return s, nil
	}
	var b builder
	for c := 0; c < len(set)*64 && c < MaxCPUs; c++ {
		if set.IsSet(c) {
			b.add(c)
		}
	}
	return b.set(), nil
}

// Current reads this machine's topology from / and this thread's affinity.
// The launcher calls it before it binds its spawner thread: afterwards
// that thread's affinity is a rank's binding, not the launcher's CPUs.
func Current() (*Topology, error) {
	allowed, err := Affinity()
	if err != nil {
		return nil, err
	}
	return Read("/", allowed)
}

// BindThread restricts the calling OS thread to cpus (sched_setaffinity);
// processes it forks afterwards inherit the binding. The caller must hold
// the thread (runtime.LockOSThread), as the launcher's spawner does.
func BindThread(cpus CPUSet) error {
	if cpus.IsEmpty() {
		return fmt.Errorf("topo: bind to an empty CPU set")
	}
	var set unix.CPUSet
	for _, c := range cpus.CPUs() {
		if c >= len(set)*64 {
			return fmt.Errorf("topo: bind to CPUs %v: CPU %d is beyond the %d sched_setaffinity takes here", cpus, c, len(set)*64)
		}
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("topo: bind to CPUs %v: sched_setaffinity: %w", cpus, err)
	}
	return nil
}
