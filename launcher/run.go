package launcher

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/team"
	"github.com/shmrun/shmrun/internal/topo"
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
	stdin   *stdinRelay // rank 0's stdin when shmrun's is its terminal; nil if not

	spawnerDone chan struct{} // closed when every rank is reaped: the spawner thread may exit

	oversubscribed bool           // more ranks than CPUs in shmrun's affinity set, or in a bound rank's set (stacked)
	backing        format.Backing // Config.Shm, parsed
	topo           *topo.Topology // nil: unknown (ranks run unbound)
	obs            *observer      // --stats, --trace: nil when off
	bindings       []topo.Binding // rank i's place, from Config.place
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
	topology, bindings, err := cfg.place()
	if err != nil {
		return Result{}, err
	}
	// Ranks are told the directory in SHMRUN_SHM_DIR, which must be absolute.
	dir, err := filepath.Abs(cfg.shmDir())
	if err != nil {
		return Result{}, fmt.Errorf("--shm-dir %s: %w", cfg.shmDir(), err)
	}
	j := &job{cfg: cfg, dir: dir, topo: topology, bindings: bindings}
	j.backing, _ = format.ParseBacking(cfg.Shm) // Validate checked it
	j.stdout, j.stderr = serialize(cfg.Stdout, os.Stdout), serialize(cfg.Stderr, os.Stderr)
	defer j.cleanup()
	// The lock comes before the build: the build directory is the job's,
	// and --cleanup removes it once the lock is free (a SIGKILLed launcher
	// cannot).
	if err := j.lockJob(); err != nil {
		return Result{}, err
	}
	progs, sig, err := j.buildWatched(ctx)
	if sig != nil {
		// A signal that ends the job came while the programs were built:
		// no rank is started only to be killed.
		s, _ := sig.(syscall.Signal)
		reason := fmt.Sprintf("received %s during the build; no rank was started", signalName(s))
		fmt.Fprintf(j.stderr, "shmrun: %s\n", reason)
		return Result{ExitCode: 128 + int(s), Reason: reason}, nil
	}
	if err != nil {
		return Result{}, err
	}
	if j.ctl, err = team.NewControl(j.id, j.cfg.Ranks()); err != nil {
		return Result{}, err
	}
	j.oversubscribed = cfg.Ranks() > len(cpus) || stacked(bindings)
	if observing(cfg) && j.buildTo == "" {
		if err := j.makeBuildDir(); err != nil {
			return Result{}, err
		}
	}
	if j.obs, err = newObserver(cfg, j.buildTo); err != nil {
		return Result{}, err
	}
	defer j.obs.close()
	exits, err := j.start(progs, cpus)
	if err != nil {
		return Result{}, err
	}
	res := j.supervise(ctx, exits)
	if err := j.obs.report(cfg, cfg.Ranks(), j.stderr); err != nil {
		fmt.Fprintf(j.stderr, "shmrun: %v\n", err)
		if res.ExitCode == 0 {
			res = Result{ExitCode: 1, Reason: err.Error()}
		}
	}
	found, err := j.obs.conflicts(cfg.Ranks())
	if err != nil {
		// A rank's verdict is unknown: under --check (not warn) the job
		// cannot be called race-free.
		fmt.Fprintf(j.stderr, "shmrun: --check: %v\n", err)
		if cfg.Check != "warn" && res.ExitCode == 0 {
			res = Result{ExitCode: 1, Reason: "--check could not read every rank's reports"}
		}
	}
	if len(found) > 0 {
		fmt.Fprintf(j.stderr, "shmrun --check: %d pair(s) of conflicting accesses:\n", len(found))
		for _, f := range found {
			fmt.Fprintf(j.stderr, "  %s\n", f)
		}
		if cfg.Check != "warn" && res.ExitCode == 0 {
			res = Result{ExitCode: 1, Reason: fmt.Sprintf("--check found %d pair(s) of conflicting accesses", len(found))}
		}
	}
	return res, nil
}

// stacked reports whether more bound ranks share a CPU set than it has
// CPUs: round-robin over uneven instances (--oversubscribe with an
// instance cut down by the allowed CPUs) can put two ranks on one CPU
// while the job as a whole has a CPU a rank. Such ranks wait as
// oversubscribed ones must (they take turns on a core), not by spinning.
func stacked(bs []topo.Binding) bool {
	on := map[string]int{}
	for _, b := range bs {
		if !b.Bound {
			continue
		}
		k := b.CPUs.String()
		if on[k]++; on[k] > b.CPUs.Len() {
			return true
		}
	}
	return false
}

// buildWatched is buildPrograms with the job's signals watched: one that
// would end the job (any but SIGUSR1/2, which have no rank to go to yet,
// and SIGTSTP and SIGCONT, which stop and continue the launcher) cancels
// the build and is returned. Once the build is over the signals
// are supervise's again.
func (j *job) buildWatched(ctx context.Context) ([]string, os.Signal, error) {
	if j.cfg.Signals == nil {
		progs, err := j.buildPrograms(ctx)
		return progs, nil, err
	}
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop, got := make(chan struct{}), make(chan os.Signal, 1)
	go func() {
		defer close(got)
		for {
			select {
			case <-stop:
				return
			case sig, ok := <-j.cfg.Signals:
				if !ok {
					return
				}
				switch s, _ := sig.(syscall.Signal); s {
				case syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGCONT:
					continue
				case syscall.SIGTSTP:
					_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP) // no rank yet: stop the launcher alone
					continue
				}
				got <- sig
				cancel()
				return
			}
		}
	}()
	progs, err := j.buildPrograms(bctx)
	close(stop)
	if sig, ok := <-got; ok {
		return nil, sig, err
	}
	return progs, nil, err
}

// writeIndented writes v to f as indented JSON.
func writeIndented(f *os.File, v any) error {
	enc := json.NewEncoder(f)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// lockJob makes the job id and its lock file, held for the job's life so
// that `shmrun --cleanup` can tell a live job from a dead one without pid
// races. The file is made mode 0600 whatever the umask: --cleanup must be
// able to open it.
func (j *job) lockJob() error {
	j.id = format.NewJobID()
	lockPath := jobLockPath(j.dir, j.id)
	f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("creating the job's lock file: %w", err)
	}
	j.lock = f
	if err := unix.Fchmod(int(f.Fd()), 0o600); err != nil {
		return fmt.Errorf("chmod %s: %w", lockPath, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return fmt.Errorf("locking %s: %w", lockPath, err)
	}
	return nil
}

// lockPath is the lock file of job id in dir.
func jobLockPath(dir, job string) string { return filepath.Join(dir, format.ObjectName(job, "lock")) }

// cleanup removes everything the job made. It runs after every rank is reaped.
func (j *job) cleanup() {
	// The build directory goes first: once the lock file is gone, nothing
	// would lead --cleanup to it.
	if j.buildTo != "" {
		_ = os.RemoveAll(j.buildTo)
	}
	if j.id != "" {
		removeJobObjects(j.dir, j.id)
	}
	if j.lock != nil {
		_ = os.Remove(j.lock.Name())
		j.lock.Close()
	}
	j.stdin.close()
	if j.ctlFile != nil {
		j.ctlFile.Close()
	}
	if j.ctl != nil {
		j.ctl.Close()
	}
}

// removeJobObjects removes every shmrun.<job>.* object in dir except the lock
// file, and returns the names removed.
func removeJobObjects(dir, job string) []string {
	var removed []string
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, e := range ents {
		jb, id, ok := format.SplitName(e.Name())
		if !ok || jb != job || id == "lock" {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err == nil {
			removed = append(removed, e.Name())
		}
	}
	return removed
}
