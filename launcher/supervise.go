package launcher

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/internal/team"
)

func (j *job) killAll(sig syscall.Signal) {
	if j.pgid > 0 {
		_ = syscall.Kill(-j.pgid, sig)
	}
	// Not cmd.ProcessState: the reaper goroutines write it. os.Process
	// knows itself whether it was waited for and never signals a reaped pid.
	for _, cmd := range j.cmds {
		if cmd.Process != nil {
			_ = cmd.Process.Signal(sig)
		}
	}
}

// supervise waits for the ranks; the first failure ends the job.
func (j *job) supervise(ctx context.Context, exits <-chan exitEvent) Result {
	defer close(j.spawnerDone)
	var timeout <-chan time.Time
	if j.cfg.Timeout > 0 {
		t := time.NewTimer(j.cfg.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	// Channels that stay ready once fired (a cancelled ctx, a closed
	// Signals) are set to nil after their first event, or the loop would spin.
	done, sigs := ctx.Done(), j.cfg.Signals
	remaining := len(j.cmds)
	var res Result
	failed := false
	var kill <-chan time.Time
	exited := make([]bool, len(j.cmds))
	var watch <-chan time.Time
	var dl deadlockWatch
	suspended := false // SIGTSTP came and no SIGCONT since: the ranks are stopped
	if after := j.deadlockAfter(); after > 0 {
		// At least 1 ms: a period under 4 ns (--deadlock-after 3ns) would
		// make the tick 0, which time.NewTicker refuses with a panic.
		t := time.NewTicker(max(min(after/4, 250*time.Millisecond), time.Millisecond))
		defer t.Stop()
		watch, dl.after = t.C, after
	}
	fail := func(code int, reason string) {
		if failed {
			return
		}
		failed = true
		res = Result{ExitCode: code, Reason: reason}
		fmt.Fprintf(j.stderr, "shmrun: %s\n", reason)
		j.abort()
		grace := j.cfg.Grace
		if grace == 0 {
			grace = DefaultGrace
		}
		kill = time.After(grace)
	}
	for remaining > 0 {
		select {
		case ev := <-exits:
			remaining--
			exited[ev.rank] = true
			if failed {
				continue
			}
			if code, reason, bad := j.judge(ev); bad {
				fail(code, reason)
			}
		case <-timeout:
			timeout = nil
			fail(TimeoutExitCode, fmt.Sprintf("job timed out after %v (--timeout); killing %d rank(s)", j.cfg.Timeout, remaining))
		case sig, ok := <-sigs:
			if !ok {
				sigs = nil
				continue
			}
			s, _ := sig.(syscall.Signal)
			switch s {
			case syscall.SIGUSR1, syscall.SIGUSR2:
				if j.pgid > 0 {
					_ = syscall.Kill(-j.pgid, s)
				}
			case syscall.SIGTSTP:
				j.suspend()
				suspended = true
			case syscall.SIGCONT:
				j.resume()
				suspended = false
				dl.reset() // stopped is not blocked: the watch starts over
			default:
				fail(128+int(s), fmt.Sprintf("received %s; ending the job", signalName(s)))
			}
		case <-done:
			done = nil
			fail(1, fmt.Sprintf("job cancelled: %v", ctx.Err()))
		case now := <-watch:
			if suspended {
				dl.reset()
			} else if !failed && dl.stuck(j, exited, now) {
				fail(DeadlockExitCode, j.deadlockReport(exited, dl.after))
			}
		case <-kill:
			kill = nil
			j.killAll(syscall.SIGKILL)
		}
	}
	return res
}

// judge decides whether a rank's exit fails the job.
func (j *job) judge(ev exitEvent) (code int, reason string, bad bool) {
	pid := 0
	if ev.state != nil {
		pid = ev.state.Pid()
	}
	if ctl := j.ctl; abortState(ctl) == format.AbortByRank {
		// The word holds Abort's int code truncated to 32 bits: read it back
		// signed, so Abort(-1) is named as such.
		code := int(int32(atomic.LoadUint32(ctl.AbortCode())))
		r := atomic.LoadUint32(ctl.AbortRank())
		status := format.AbortExitStatus(code)
		return status, fmt.Sprintf("rank %d called Abort(%d); ending the job with exit code %d", r, code, status), true
	}
	if ev.state == nil {
		return 1, fmt.Sprintf("rank %d: %v", ev.rank, ev.err), true
	}
	ws, _ := ev.state.Sys().(syscall.WaitStatus)
	switch {
	case ws.Signaled():
		sig := ws.Signal()
		return 128 + int(sig), fmt.Sprintf("rank %d (pid %d) was killed by %s", ev.rank, pid, signalName(sig)), true
	case ws.ExitStatus() != 0:
		return ws.ExitStatus(), fmt.Sprintf("rank %d (pid %d) exited with status %d", ev.rank, pid, ws.ExitStatus()), true
	case unfinalized(atomic.LoadUint32(j.ctl.RankState(ev.rank))):
		return 1, fmt.Sprintf("rank %d (pid %d) exited with status 0 after comm.Init (MPI_Init) without comm.Finalize (MPI_Finalize); its peers could wait for it forever", ev.rank, pid), true
	}
	return 0, "", false
}

// unfinalized reports whether a rank in state s called Init and did not
// finish Finalize (it may be in it).
func unfinalized(s uint32) bool { return s == format.RankInit || s == format.RankFinalizing }

// abortState is the abort line's state once no Abort is midway: a rank
// that claimed it (format.AbortClaimed) stores its code and rank and then
// AbortByRank, a few stores, while its peers may already be leaving; wait
// up to a second for them, in case the claiming rank was killed midway.
func abortState(ctl *team.Control) uint32 {
	s := atomic.LoadUint32(ctl.AbortWord())
	for deadline := time.Now().Add(time.Second); s == format.AbortClaimed && time.Now().Before(deadline); {
		time.Sleep(50 * time.Microsecond)
		s = atomic.LoadUint32(ctl.AbortWord())
	}
	return s
}

// abort tells the ranks the job is ending and starts the grace period.
func (j *job) abort() {
	atomic.CompareAndSwapUint32(j.ctl.AbortWord(), format.AbortNone, format.AbortLauncher)
	raw.WakeAll(j.ctl.WakeWord())
	j.killAll(syscall.SIGTERM)
	j.killAll(syscall.SIGCONT) // a stopped rank handles its SIGTERM only once continued
}

// suspend stops the ranks and then the launcher itself (^Z: SIGTSTP comes
// to the launcher's process group, the terminal's foreground, and not to
// the ranks', which is their own). The stop may take effect a moment
// after the call returns: the SIGCONT of fg or bg continues the ranks
// (resume), not the return.
func (j *job) suspend() {
	j.killAll(syscall.SIGSTOP)
	_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
}

// resume continues the ranks after a SIGCONT to the launcher.
func (j *job) resume() { j.killAll(syscall.SIGCONT) }

func signalName(s syscall.Signal) string {
	name := unix.SignalName(s)
	if name == "" {
		return fmt.Sprintf("signal %d", int(s))
	}
	return fmt.Sprintf("%s (%s)", name, s.String())
}
