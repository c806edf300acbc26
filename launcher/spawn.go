package launcher

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/topo"
	"golang.org/x/sys/unix"
)

// userWait reports whether the user chose the wait policy: a SHMRUN_WAIT
// with a value in shmrun's environment or a -x. An empty one is no choice
// (`export SHMRUN_WAIT=` is how a shell user clears it): the ranks get
// the launcher's policy, not DefaultPolicy's long spin (with which 32
// ranks on 2 cores ran a Bcast 190x slower).
func (j *job) userWait() bool {
	if v := os.Getenv(EnvWait); v != "" {
		return true
	}
	for _, kv := range j.cfg.Env {
		if strings.HasPrefix(kv, EnvWait+"=") && !emptyWait(kv) {
			return true
		}
	}
	return false
}

// emptyWait reports whether kv is SHMRUN_WAIT with no value (dropped from
// the ranks' environment: userWait).
func emptyWait(kv string) bool { return kv == EnvWait+"=" }

func (j *job) rankEnv(rank, size, app int) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, format.EnvPrefix) || (strings.HasPrefix(kv, EnvWait+"=") && !emptyWait(kv)) {
			env = append(env, kv)
		}
	}
	for _, kv := range j.cfg.Env {
		if !emptyWait(kv) {
			env = append(env, kv)
		}
	}
	env = append(env, j.obs.env()...)
	if j.oversubscribed && !j.userWait() {
		// More ranks than CPUs: spin briefly, then yield (barrier package).
		env = append(env, EnvWait+"=oversubscribed")
	}
	return append(env,
		format.EnvJob+"="+j.id,
		format.EnvRank+"="+strconv.Itoa(rank),
		format.EnvSize+"="+strconv.Itoa(size),
		format.EnvLocalRank+"="+strconv.Itoa(rank),
		format.EnvAppNum+"="+strconv.Itoa(app),
		format.EnvControlFD+"="+strconv.Itoa(format.ControlFD), // ExtraFiles[0]
		format.EnvShmDir+"="+j.dir,
		format.EnvShm+"="+j.backing.String(),
		format.EnvSingleCopy+"="+map[bool]string{true: "off", false: "on"}[j.cfg.NoSingleCopy],
	)
}

// start builds every rank's command and starts them all from one goroutine
// locked to its OS thread; it returns the channel of rank exits.
func (j *job) start(progs []string, cpus []int) (<-chan exitEvent, error) {
	n := j.cfg.Ranks()
	// The *os.File gets a descriptor of its own: an os.File closes its fd
	// when the garbage collector finds it unreachable, and that must never
	// be the fd that ctl owns (closed by ctl.Close and then reused, e.g. by
	// the next job's control segment).
	dup, err := unix.FcntlInt(uintptr(j.ctl.FD()), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("control segment: dup: %w", err)
	}
	ctlFile := os.NewFile(uintptr(dup), "shmrun-control")
	j.ctlFile = ctlFile
	stdout, stderr := j.stdout, j.stderr
	if j.cfg.TagOutput {
		j.out = newTagger(stdout, stderr)
	}
	rank := 0
	for i, p := range j.cfg.Parts {
		for range p.N {
			cmd := exec.Command(progs[i], p.Args...)
			cmd.Args[0] = p.Prog
			cmd.Env = j.rankEnv(rank, n, i)
			cmd.ExtraFiles = []*os.File{ctlFile}
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
			if rank == 0 && j.cfg.StdinTo != "none" {
				cmd.Stdin = j.cfg.Stdin
				if cmd.Stdin == nil {
					cmd.Stdin = os.Stdin
				}
				if f, ok := cmd.Stdin.(*os.File); ok {
					if j.stdin = newStdinRelay(f); j.stdin != nil {
						cmd.Stdin = j.stdin.rank0
					}
				}
			}
			if j.out != nil {
				cmd.Stdout, cmd.Stderr = j.out.writer(rank, false), j.out.writer(rank, true)
			} else {
				cmd.Stdout, cmd.Stderr = stdout, stderr
			}
			// Output that is not a file goes through pipes, which a
			// rank's own children may hold open after it exits (a
			// daemon, `sleep 20 &`): its exit must not wait for them.
			cmd.WaitDelay = outputDrain
			j.cmds = append(j.cmds, cmd)
			rank++
		}
	}

	started := make(chan error)
	j.spawnerDone = make(chan struct{})
	go j.spawn(cpus, started)
	err = <-started
	j.stdin.started()
	if err != nil {
		return nil, err
	}
	exits := make(chan exitEvent, n)
	for r, cmd := range j.cmds {
		go func() {
			err := cmd.Wait()
			if j.out != nil {
				j.out.flush(r)
			}
			exits <- exitEvent{rank: r, state: cmd.ProcessState, err: err}
		}()
	}
	return exits, nil
}

// outputDrain is how long a rank's exit waits for the pipes of its
// output to close (its children may hold them), relaying what comes
// meanwhile; then they are closed and the exit is judged.
const outputDrain = 500 * time.Millisecond

// spawn runs on its own OS thread for the whole job: Pdeathsig fires when the
// thread that forked a child exits, so this thread must outlive every rank.
// Binding is set on this thread before each fork, so it holds for any program.
func (j *job) spawn(cpus []int, started chan<- error) {
	runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
	var orig unix.CPUSet
	_ = unix.SchedGetaffinity(0, &orig)
	for r, cmd := range j.cmds {
		if j.bindings != nil {
			b := j.bindings[r]
			set := b.CPUs
			if b.Bound {
				if err := topo.BindThread(set); err != nil {
					j.abandon(fmt.Errorf("binding rank %d to CPUs %v: %w", r, set, err), started)
					return
				}
			}
			if j.cfg.ReportBindings {
				fmt.Fprintf(j.stderr, "shmrun: %s\n", j.topo.Report(b))
			}
		} else if j.cfg.ReportBindings && r == 0 {
			fmt.Fprintf(j.stderr, "shmrun: ranks not bound (--bind-to none): CPUs %v\n", cpus)
		}
		if r > 0 {
			cmd.SysProcAttr.Pgid = j.pgid
		}
		if err := cmd.Start(); err != nil {
			j.abandon(fmt.Errorf("starting rank %d (%s): %w", r, cmd.Args[0], err), started)
			return
		}
		if r == 0 {
			j.pgid = cmd.Process.Pid
		}
	}
	_ = unix.SchedSetaffinity(0, &orig)
	started <- nil
	<-j.spawnerDone
}

// abandon kills and reaps the ranks started before a failed start, then
// reports the failure; the spawner thread may exit since no child is left.
func (j *job) abandon(err error, started chan<- error) {
	j.killAll(syscall.SIGKILL)
	for _, cmd := range j.cmds {
		if cmd.Process != nil && cmd.ProcessState == nil {
			_ = cmd.Wait()
		}
	}
	started <- err
}
