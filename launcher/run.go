package launcher

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/team"
	"github.com/shmrun/shmrun/shm"
)

// Result is how a job ended.
type Result struct {
	ExitCode int    // the launcher's exit code
	Reason   string // "" on success; else what ended the job, as printed
}

// job is one running job.
type job struct {
	cfg     Config
	id      string
	dir     string
	ctl     *team.Control
	ctlFile *os.File // a dup of the control memfd, handed to every rank as fd 3
	lock    *os.File
	stdout  io.Writer
	stderr  io.Writer
	cmds    []*exec.Cmd
	pgid    int
	buildTo string
	out     *tagger

	spawnerDone chan struct{} // closed when every rank is reaped: the spawner thread may exit

	oversubscribed bool // more ranks than CPUs in shmrun's affinity set
}

type exitEvent struct {
	rank  int
	state *os.ProcessState
	err   error
}

// Run runs the job to its end and returns how it ended. An error means the
// job could not be set up (ErrUsage: a bad description; nothing started).
// Everything the job created is removed before Run returns.
func Run(ctx context.Context, cfg Config) (Result, error) {
	cpus := CPUs()
	if err := cfg.Validate(len(cpus)); err != nil {
		return Result{}, err
	}
	// Ranks are told the directory in SHMRUN_SHM_DIR, which must be absolute.
	dir, err := filepath.Abs(cfg.shmDir())
	if err != nil {
		return Result{}, fmt.Errorf("--shm-dir %s: %w", cfg.shmDir(), err)
	}
	j := &job{cfg: cfg, dir: dir}
	j.stdout, j.stderr = serialize(cfg.Stdout, os.Stdout), serialize(cfg.Stderr, os.Stderr)
	defer j.cleanup()
	progs, err := j.buildPrograms(ctx)
	if err != nil {
		return Result{}, err
	}
	if err := j.setup(); err != nil {
		return Result{}, err
	}
	j.oversubscribed = cfg.Ranks() > len(cpus)
	exits, err := j.start(progs, cpus)
	if err != nil {
		return Result{}, err
	}
	return j.supervise(ctx, exits), nil
}

// buildPrograms builds each distinct Go package or file once into a temp dir
// (before the timeout starts) and returns the binary of each part.
func (j *job) buildPrograms(ctx context.Context) ([]string, error) {
	built := map[string]string{}
	progs := make([]string, len(j.cfg.Parts))
	for i, p := range j.cfg.Parts {
		path, goBuild, err := resolveProgram(p.Prog)
		if err != nil {
			return nil, err
		}
		if !goBuild {
			progs[i] = path
			continue
		}
		if bin, ok := built[path]; ok {
			progs[i] = bin
			continue
		}
		if j.buildTo == "" {
			if j.buildTo, err = os.MkdirTemp("", "shmrun-build-"); err != nil {
				return nil, err
			}
		}
		name := strings.TrimSuffix(filepath.Base(filepath.Clean(path)), ".go")
		bin := filepath.Join(j.buildTo, fmt.Sprintf("%d-%s", i, name))
		target := path
		if !strings.HasSuffix(path, ".go") && !filepath.IsAbs(path) && !strings.HasPrefix(path, ".") {
			target = "./" + path
		}
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, target)
		cmd.Stdout, cmd.Stderr = j.stderr, j.stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("building Go program %s: %v", p.Prog, err)
		}
		built[path], progs[i] = bin, bin
	}
	return progs, nil
}

// setup makes the job id, the lock file (held for the job's life, so
// `shmrun --cleanup` can tell a live job from a dead one without pid races)
// and the control segment.
func (j *job) setup() error {
	j.id = shm.NewJobID()
	lockPath := LockPath(j.dir, j.id)
	f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("creating the job's lock file: %w", err)
	}
	j.lock = f
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return fmt.Errorf("locking %s: %w", lockPath, err)
	}
	j.ctl, err = team.NewControl(j.id, j.cfg.Ranks())
	return err
}

// outputMu serializes writes to the job's output writers that are not files.
var outputMu sync.Mutex

// serialize returns w (or def if w is nil) safe for the concurrent writes
// that every rank's output copier and the launcher itself make. A file is
// passed to the ranks as their own descriptor, unchanged; any other writer
// (a buffer in a test) gets its writes serialized.
func serialize(w, def io.Writer) io.Writer {
	if w == nil {
		w = def
	}
	if _, ok := w.(*os.File); ok {
		return w
	}
	return lockedWriter{w}
}

type lockedWriter struct{ w io.Writer }

func (l lockedWriter) Write(p []byte) (int, error) {
	outputMu.Lock()
	defer outputMu.Unlock()
	return l.w.Write(p)
}

// LockPath is the lock file of job id in dir.
func LockPath(dir, job string) string { return filepath.Join(dir, shm.ObjectName(job, "lock")) }

// userWait reports whether the user chose the wait policy (SHMRUN_WAIT in
// shmrun's environment or a -x).
func (j *job) userWait() bool {
	if _, ok := os.LookupEnv(EnvWait); ok {
		return true
	}
	for _, kv := range j.cfg.Env {
		if strings.HasPrefix(kv, EnvWait+"=") {
			return true
		}
	}
	return false
}

func (j *job) rankEnv(rank, size int) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, format.EnvPrefix) || strings.HasPrefix(kv, EnvWait+"=") {
			env = append(env, kv)
		}
	}
	env = append(env, j.cfg.Env...)
	if j.oversubscribed && !j.userWait() {
		// More ranks than CPUs: spin briefly, then yield (barrier package).
		env = append(env, EnvWait+"=oversubscribed")
	}
	return append(env,
		format.EnvJob+"="+j.id,
		format.EnvRank+"="+strconv.Itoa(rank),
		format.EnvSize+"="+strconv.Itoa(size),
		format.EnvLocalRank+"="+strconv.Itoa(rank),
		format.EnvControlFD+"="+strconv.Itoa(format.ControlFD), // ExtraFiles[0]
		format.EnvShmDir+"="+j.dir,
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
			cmd.Env = j.rankEnv(rank, n)
			cmd.ExtraFiles = []*os.File{ctlFile}
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
			if rank == 0 && j.cfg.StdinTo != "none" {
				cmd.Stdin = j.cfg.Stdin
				if cmd.Stdin == nil {
					cmd.Stdin = os.Stdin
				}
			}
			if j.out != nil {
				cmd.Stdout, cmd.Stderr = j.out.writer(rank, false), j.out.writer(rank, true)
			} else {
				cmd.Stdout, cmd.Stderr = stdout, stderr
			}
			j.cmds = append(j.cmds, cmd)
			rank++
		}
	}

	started := make(chan error)
	j.spawnerDone = make(chan struct{})
	go j.spawn(cpus, started)
	if err := <-started; err != nil {
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

// spawn runs on its own OS thread for the whole job: Pdeathsig fires when the
// thread that forked a child exits, so this thread must outlive every rank.
// Binding is set on this thread before each fork, so it holds for any program.
func (j *job) spawn(cpus []int, started chan<- error) {
	runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
	var orig unix.CPUSet
	_ = unix.SchedGetaffinity(0, &orig)
	for r, cmd := range j.cmds {
		if j.cfg.BindTo == "core" {
			cpu := cpus[r%len(cpus)]
			var set unix.CPUSet
			set.Set(cpu)
			if err := unix.SchedSetaffinity(0, &set); err != nil {
				j.abandon(fmt.Errorf("binding rank %d to CPU %d: %w", r, cpu, err), started)
				return
			}
			if j.cfg.ReportBindings {
				fmt.Fprintf(j.stderr, "shmrun: rank %d bound to CPU %d\n", r, cpu)
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
			default:
				fail(128+int(s), fmt.Sprintf("received %s; ending the job", signalName(s)))
			}
		case <-done:
			done = nil
			fail(1, fmt.Sprintf("job cancelled: %v", ctx.Err()))
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
	if ctl := j.ctl; atomic.LoadUint32(ctl.AbortWord()) == format.AbortByRank {
		code := int(atomic.LoadUint32(ctl.AbortCode()))
		r := atomic.LoadUint32(ctl.AbortRank())
		return code, fmt.Sprintf("rank %d called Abort(%d); ending the job with exit code %d", r, code, code), true
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
	case atomic.LoadUint32(j.ctl.RankState(ev.rank)) == format.RankInit:
		return 1, fmt.Sprintf("rank %d (pid %d) exited with status 0 after comm.Init without comm.Finalize; its peers could wait for it forever", ev.rank, pid), true
	}
	return 0, "", false
}

// abort tells the ranks the job is ending and starts the grace period.
func (j *job) abort() {
	atomic.CompareAndSwapUint32(j.ctl.AbortWord(), format.AbortNone, format.AbortLauncher)
	barrier.WakeAll(j.ctl.WakeWord())
	j.killAll(syscall.SIGTERM)
}

// cleanup removes everything the job made. It runs after every rank is reaped.
func (j *job) cleanup() {
	if j.id != "" {
		RemoveJobObjects(j.dir, j.id)
	}
	if j.lock != nil {
		_ = os.Remove(j.lock.Name())
		j.lock.Close()
	}
	if j.ctlFile != nil {
		j.ctlFile.Close()
	}
	if j.ctl != nil {
		j.ctl.Close()
	}
	if j.buildTo != "" {
		_ = os.RemoveAll(j.buildTo)
	}
}

// RemoveJobObjects removes every shmrun.<job>.* object in dir except the lock
// file, and returns the names removed.
func RemoveJobObjects(dir, job string) []string {
	var removed []string
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, e := range ents {
		jb, id, ok := shm.SplitName(e.Name())
		if !ok || jb != job || id == "lock" {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err == nil {
			removed = append(removed, e.Name())
		}
	}
	return removed
}

func signalName(s syscall.Signal) string {
	name := unix.SignalName(s)
	if name == "" {
		return fmt.Sprintf("signal %d", int(s))
	}
	return fmt.Sprintf("%s (%s)", name, s.String())
}
