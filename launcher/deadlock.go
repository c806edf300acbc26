package launcher

import (
	"fmt"
	"slices"
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
}

// stuck reports whether every running rank has been asleep in a wait,
// with no wait ending, for w.after.
func (w *deadlockWatch) stuck(j *job, exited []bool, now time.Time) bool {
	wakes, ok := j.asleep(exited)
	switch {
	case !ok:
		w.since, w.wakes = time.Time{}, nil
		return false
	case w.since.IsZero() || !slices.Equal(wakes, w.wakes):
		w.since, w.wakes = now, wakes
		return false
	}
	return now.Sub(w.since) >= w.after
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
		if exited[r] {
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
