package launcher

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/internal/format"
)

// The deadlock watch. Every rank publishes in its line of the control
// segment how many of its goroutines are asleep in a wait inside shmrun
// (the futex phase, after spinning and yielding), a count of waits that
// ended, and what the last one to fall asleep waits for. When every rank
// still running has been asleep, with no count moving, for DeadlockAfter,
// no rank can complete another's wait: only a running rank (or a waker
// inside the runtime) changes what a waiter waits for, and every waiter
// re-checks its condition at each futex timeout. The launcher then ends
// the job and says who waits for whom. A rank that has not reached Init,
// or that computes, is not asleep: the watch never fires while one runs.
// A rank with a goroutine (or a C thread) asleep may compute on another:
// so a rank whose process used more than a hundredth of the period's CPU
// time since the ranks were all seen asleep counts as running too.

// deadlockAfter is the configured watch period (0: off).
func (j *job) deadlockAfter() time.Duration {
	switch d := j.cfg.DeadlockAfter; {
	case d < 0:
		return 0
	case d == 0:
		return DefaultDeadlockAfter
	default:
		return d
	}
}

// deadlockWatch remembers the running ranks' wake counts since they were
// last all seen asleep.
type deadlockWatch struct {
	after time.Duration
	since time.Time
	wakes []uint32
	cpu   []time.Duration // and their processes' CPU time then
}

// reset forgets what the watch has seen: the job was stopped (SIGTSTP)
// and continued, and nothing moved meanwhile by no fault of the ranks'.
func (w *deadlockWatch) reset() { w.since, w.wakes, w.cpu = time.Time{}, nil, nil }

// stuck reports whether every running rank has been asleep in a wait,
// with no wait ending, for w.after.
func (w *deadlockWatch) stuck(j *job, exited []bool, now time.Time) bool {
	wakes, ok := j.asleep(exited)
	if !ok {
		w.since, w.wakes = time.Time{}, nil
		return false
	}
	cpu := j.cpuTimes(exited)
	if w.since.IsZero() || !slices.Equal(wakes, w.wakes) || computed(w.cpu, cpu, w.after) {
		w.since, w.wakes, w.cpu = now, wakes, cpu
		return false
	}
	return now.Sub(w.since) >= w.after
}

// computed reports whether a rank's process used more CPU time between
// before and after than a rank whose threads all sleep would in period
// (a hundredth of it, at least 20 ms: the kernel counts in 10 ms ticks).
func computed(before, after []time.Duration, period time.Duration) bool {
	busy := max(period/100, 20*time.Millisecond)
	for i := range min(len(before), len(after)) {
		if after[i]-before[i] > busy {
			return true
		}
	}
	return false
}

// cpuTimes returns the running ranks' processes' CPU time (user and
// system, every thread), in the order of asleep's wake counts; 0 where it
// cannot be read (the rank's pid published at Init names its process).
func (j *job) cpuTimes(exited []bool) []time.Duration {
	var cpu []time.Duration
	for r := range exited {
		if !exited[r] {
			cpu = append(cpu, processCPU(int(atomic.LoadUint32(j.ctl.RankWord(r, format.RankPID)))))
		}
	}
	return cpu
}

// processCPU is process pid's CPU time from /proc/<pid>/stat (utime and
// stime, in clock ticks of 1/100 s on Linux), or 0.
func processCPU(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	return statCPU(string(b))
}

// statCPU reads utime and stime out of a /proc/<pid>/stat line: fields 14
// and 15, counted after the command name in parentheses (which may hold
// spaces and parentheses itself); 0 if the line is not one (or counts
// more than 2^32 ticks, 1.4 years).
func statCPU(stat string) time.Duration {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(stat[i+1:]) // from field 3, the state
	if len(f) < 13 {
		return 0
	}
	u, err1 := strconv.ParseUint(f[11], 10, 63)
	s, err2 := strconv.ParseUint(f[12], 10, 63)
	if err1 != nil || err2 != nil || u > 1<<32 || s > 1<<32 {
		return 0
	}
	return time.Duration(u+s) * 10 * time.Millisecond
}

// asleep returns the running ranks' wake counts if every one of them (at
// least one) is past Init and has a goroutine asleep in a wait.
func (j *job) asleep(exited []bool) ([]uint32, bool) {
	c := j.ctl
	var wakes []uint32
	for r := range exited {
		if exited[r] {
			continue
		}
		if atomic.LoadUint32(c.RankState(r)) < format.RankInit || atomic.LoadUint32(c.RankWord(r, format.RankSleepers)) == 0 {
			return nil, false
		}
		wakes = append(wakes, atomic.LoadUint32(c.RankWord(r, format.RankWakes)))
	}
	return wakes, len(wakes) > 0
}

// deadlockReport names what each running rank waits for.
func (j *job) deadlockReport(exited []bool, after time.Duration) string {
	c := j.ctl
	var b strings.Builder
	fmt.Fprintf(&b, "deadlock: every running rank has waited inside shmrun for %v and none can complete another's wait; ending the job:", after)
	for r := range exited {
		state := atomic.LoadUint32(c.RankState(r))
		if exited[r] {
			switch state {
			case format.RankStarted:
				fmt.Fprintf(&b, "\n  rank %d has exited without calling comm.Init (MPI_Init)", r)
			case format.RankFinalized:
				fmt.Fprintf(&b, "\n  rank %d has exited after comm.Finalize (MPI_Finalize)", r)
			}
			continue
		}
		if state == format.RankFinalizing {
			fmt.Fprintf(&b, "\n  rank %d waits in comm.Finalize (MPI_Finalize) for every rank to call it", r)
			continue
		}
		kind := atomic.LoadUint32(c.RankWord(r, format.RankWaitKind))
		peer := int32(atomic.LoadUint32(c.RankWord(r, format.RankWaitPeer)))
		tag := int32(atomic.LoadUint32(c.RankWord(r, format.RankWaitTag)))
		fmt.Fprintf(&b, "\n  rank %d waits %s", r, waitText(kind, peer, tag, exited))
	}
	return b.String()
}

// waitText describes one wait.
func waitText(kind uint32, peer, tag int32, exited []bool) string {
	from := "any rank"
	if peer >= 0 {
		from = fmt.Sprintf("rank %d", peer)
		if int(peer) < len(exited) && exited[peer] {
			from += " (which has exited)"
		}
	}
	tags := "any tag"
	if tag != format.AnyTag {
		tags = fmt.Sprintf("tag %d", tag)
	}
	switch kind {
	case barrier.WaitRecv:
		return fmt.Sprintf("in a receive from %s with %s", from, tags)
	case barrier.WaitSend:
		return fmt.Sprintf("in a send to %s with %s (for its receive)", from, tags)
	case barrier.WaitProbe:
		return fmt.Sprintf("in a probe for a message from %s with %s", from, tags)
	case barrier.WaitMany:
		return "for several requests (Waitall, Waitany or Waitsome)"
	}
	return "in a collective call or a window's synchronization"
}
