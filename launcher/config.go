package launcher

import (
	"errors"
	"fmt"
	"go/build"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/topo"
)

// ErrUsage marks a bad job description: the CLI exits 2 and nothing was
// started or created.
var ErrUsage = errors.New("usage error")

// Part is one program of an MPMD job, run as N consecutive ranks.
type Part struct {
	N    int
	Prog string // a binary (path or $PATH name), a Go package directory, or a .go file
	Args []string
}

// Config describes a job.
type Config struct {
	Parts         []Part
	Oversubscribe bool          // allow more ranks than CPUs
	TagOutput     bool          // prefix each output line with [rank]
	Timeout       time.Duration // 0: none; else kill the job and exit 124
	Env           []string      // NAME=VALUE pairs added to every rank's environment
	// BindTo binds each rank to the instance of a hardware level holding
	// its place: "none" (the default), "hwthread", "core", "l3cache",
	// "numa" or "package".
	BindTo string
	// MapBy places rank i on the (i mod k)-th of the k instances of a
	// level that hold CPUs shmrun may use: "core" (the default), "l3cache",
	// "numa" or "package".
	MapBy          string
	ReportBindings bool
	StdinTo        string // "rank0" or "none"
	ShmDir         string // directory for segments and the lock file
	// Shm is where window segments live: "auto" (or ""), the shm directory
	// when it has room for the window and a memfd when it has not; "dir",
	// always the directory; "memfd", always a memfd (nothing counts against
	// the directory's mount, nothing can leak by name; the memory cgroup's
	// limit is checked first).
	Shm string
	// NoSingleCopy keeps the ranks from letting each other read their
	// memory (PR_SET_PTRACER, which lets any process of the user attach
	// to them): large messages then move through shared memory.
	NoSingleCopy bool
	// DeadlockAfter ends the job when every running rank has been asleep
	// in a wait inside shmrun for this long with nothing moving: none of
	// them can be completed by another (0: DefaultDeadlockAfter; negative:
	// never). A rank that computes is not asleep in a wait.
	DeadlockAfter time.Duration
	// Stats prints each rank's statistics (RMA calls per window, time in
	// synchronization and collectives, lock contention, messages per peer)
	// as a table on Stderr when the job ends; StatsJSON writes them to that
	// file as JSON (docs/STATS.md); Trace writes the job's timeline to that
	// file in the Chrome trace-event format. Ranks record only when one of
	// them is set, and only what reaches Finalize is reported.
	Stats     bool
	StatsJSON string
	Trace     string
	// Check turns on the RMA conflict checker (shmrun --check): "error"
	// prints the conflicting access pairs found when the job ends and
	// makes its exit status 1 if it would have been 0; "warn" only prints
	// them; "" (the default) checks nothing.
	Check          string
	Grace          time.Duration    // SIGTERM to SIGKILL; 0 means 2s
	Stdin          io.Reader        // nil: os.Stdin
	Stdout, Stderr io.Writer        // nil: os.Stdout, os.Stderr
	Signals        <-chan os.Signal // SIGUSR1/2 are forwarded; any other ends the job, exit 128+signal
}

// EnvWait is the one SHMRUN_ variable a user sets: the ranks' wait policy
// (barrier.ParsePolicy). shmrun passes it on from its own environment or -x
// and refuses a malformed value before starting anything.
const EnvWait = format.EnvWait

// DefaultGrace is the time between SIGTERM and SIGKILL.
const DefaultGrace = 2 * time.Second

// TimeoutExitCode is the job's exit code when --timeout fires.
const TimeoutExitCode = 124

// DeadlockExitCode is the job's exit code when the deadlock watch ends it.
const DeadlockExitCode = 125

// DefaultDeadlockAfter is how long every rank must wait, with nothing
// moving, before the job is ended as deadlocked.
const DefaultDeadlockAfter = 5 * time.Second

// Ranks is the total number of ranks of the job.
func (c *Config) Ranks() int {
	n := 0
	for _, p := range c.Parts {
		n += p.N
	}
	return n
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ParseEnvSpec turns a -x argument, NAME or NAME=VALUE, into NAME=VALUE. A
// bare NAME takes the value from lookup and must be set there.
func ParseEnvSpec(spec string, lookup func(string) (string, bool)) (string, error) {
	name, value, hasValue := strings.Cut(spec, "=")
	if !envName.MatchString(name) {
		return "", fmt.Errorf("-x %q: %q is not a valid environment variable name: %w", spec, name, ErrUsage)
	}
	if name == format.EnvShmDir {
		return "", fmt.Errorf("-x %q: use --shm-dir to choose the shm directory: %w", spec, ErrUsage)
	}
	if name == format.EnvSingleCopy {
		return "", fmt.Errorf("-x %q: use --no-single-copy to keep ranks from reading each other: %w", spec, ErrUsage)
	}
	if name == format.EnvShm {
		return "", fmt.Errorf("-x %q: use --shm to choose the window backing: %w", spec, ErrUsage)
	}
	if strings.HasPrefix(name, format.EnvPrefix) && name != EnvWait {
		return "", fmt.Errorf("-x %q: %s is set by shmrun itself: %w", spec, name, ErrUsage)
	}
	if !hasValue {
		v, ok := lookup(name)
		if !ok {
			return "", fmt.Errorf("-x %s: %s is not set in shmrun's environment (use -x %s=VALUE): %w", name, name, name, ErrUsage)
		}
		value = v
	}
	if name == EnvWait {
		if _, err := barrier.ParsePolicy(value); err != nil {
			return "", fmt.Errorf("-x %q: %v: %w", spec, err, ErrUsage)
		}
	}
	return name + "=" + value, nil
}

// Validate checks the job description without side effects: rank counts,
// oversubscription, options, and that each program exists and can run (a Go
// package or file is checked to exist and, when its package clause can be
// read, to be package main; it is built by Run).
func (c *Config) Validate(cpus int) error {
	if len(c.Parts) == 0 {
		return fmt.Errorf("no program given: %w", ErrUsage)
	}
	if c.Check != "" && c.Check != "error" && c.Check != "warn" {
		return fmt.Errorf("--check=%s: want error or warn: %w", c.Check, ErrUsage)
	}
	n := 0
	for i, p := range c.Parts {
		if p.N < 1 {
			return fmt.Errorf("part %d (%s): -n %d: need at least 1 rank: %w", i+1, p.Prog, p.N, ErrUsage)
		}
		// Summed part by part, so that huge counts cannot wrap around.
		if n += p.N; p.N > MaxRanks || n > MaxRanks {
			return fmt.Errorf("%s ranks: a job has at most %d ranks (MaxRanks): %w", rankCount(c.Parts[:i+1]), MaxRanks, ErrUsage)
		}
		if p.Prog == "" {
			return fmt.Errorf("part %d: empty program: %w", i+1, ErrUsage)
		}
		if _, _, err := resolveProgram(p.Prog); err != nil {
			return err
		}
	}
	if n > cpus && !c.Oversubscribe {
		return fmt.Errorf("%d ranks but only %d CPUs are available to shmrun; add --oversubscribe to run more ranks than CPUs: %w", n, cpus, ErrUsage)
	}
	if _, err := c.placement(); err != nil {
		return err
	}
	if _, err := format.ParseBacking(c.Shm); err != nil {
		return fmt.Errorf("--shm: %v: %w", err, ErrUsage)
	}
	switch c.StdinTo {
	case "", "rank0", "none":
	default:
		return fmt.Errorf("--stdin %q: want rank0 or none: %w", c.StdinTo, ErrUsage)
	}
	if c.Timeout < 0 {
		return fmt.Errorf("--timeout %v: negative: %w", c.Timeout, ErrUsage)
	}
	if c.Grace < 0 {
		return fmt.Errorf("grace %v: negative: %w", c.Grace, ErrUsage)
	}
	if v, ok := os.LookupEnv(EnvWait); ok {
		if _, err := barrier.ParsePolicy(v); err != nil {
			return fmt.Errorf("environment %s: %v: %w", EnvWait, err, ErrUsage)
		}
	}
	dir := c.shmDir()
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("--shm-dir %s: not a directory: %w", dir, ErrUsage)
	}
	if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
		return fmt.Errorf("--shm-dir %s: not writable: %w", dir, ErrUsage)
	}
	return nil
}

func (c *Config) shmDir() string {
	if c.ShmDir == "" {
		return "/dev/shm"
	}
	return c.ShmDir
}

// resolveProgram says how to run prog: as a binary at path, or by building
// the Go package or file at path first (goBuild).
func resolveProgram(prog string) (path string, goBuild bool, err error) {
	if strings.HasSuffix(prog, ".go") {
		if st, err := os.Stat(prog); err != nil || !st.Mode().IsRegular() {
			return "", false, fmt.Errorf("program %s: no such Go file: %w", prog, ErrUsage)
		}
		// A file that does not parse is left to go build, which says why.
		if f, err := parser.ParseFile(token.NewFileSet(), prog, nil, parser.PackageClauseOnly); err == nil && f.Name.Name != "main" {
			return "", false, notMain(prog, f.Name.Name)
		}
		return prog, true, nil
	}
	if !strings.Contains(prog, "/") && prog != "." && prog != ".." {
		p, err := exec.LookPath(prog)
		if err == nil {
			return p, false, nil
		}
		if _, serr := os.Stat(prog); serr != nil {
			return "", false, fmt.Errorf("program %s: not found in $PATH or the current directory: %w", prog, ErrUsage)
		}
		// Not in $PATH, but here: a binary or a Go package of the current
		// directory, as mpirun finds them.
		prog = "./" + prog
	}
	st, err := os.Stat(prog)
	if err != nil {
		return "", false, fmt.Errorf("program %s: no such file or directory: %w", prog, ErrUsage)
	}
	if st.IsDir() {
		if m, _ := filepath.Glob(filepath.Join(prog, "*.go")); len(m) > 0 {
			// Only a package known not to be main is refused here; any
			// other trouble (syntax, mixed packages) is go build's to report.
			if pkg, err := build.ImportDir(prog, 0); err == nil && pkg.Name != "main" {
				return "", false, notMain(prog, pkg.Name)
			}
			return prog, true, nil
		}
		return "", false, fmt.Errorf("program %s: a directory without Go files: %w", prog, ErrUsage)
	}
	if st.Mode()&0o111 == 0 || unix.Access(prog, unix.X_OK) != nil {
		return "", false, fmt.Errorf("program %s: not executable: %w", prog, ErrUsage)
	}
	return prog, false, nil
}

// notMain is the error for a Go program that is a library: go build would
// make an archive of it, which cannot be run.
func notMain(prog, pkg string) error {
	return fmt.Errorf("program %s: package %s is not a main package (shmrun runs commands: package main with a func main): %w", prog, pkg, ErrUsage)
}

// MaxRanks is the most ranks one job may have, all MPMD parts together: the
// control segment's limit (internal/format), checked by Validate.
const MaxRanks = format.MaxRanks

// rankCount spells the ranks of parts for a message: "70000", or
// "65535+1" for several parts (their sum may not fit an int).
func rankCount(parts []Part) string {
	s := make([]string, len(parts))
	for i, p := range parts {
		s[i] = strconv.Itoa(p.N)
	}
	return strings.Join(s, "+")
}

// CPUs returns the CPUs in the launcher's own affinity set (containers
// restrict it), in ascending order: topo.Affinity's, which also reads
// machines of more CPUs than x/sys's 1024-CPU set holds. Where even that
// fails, the first runtime.NumCPU CPUs (the Go runtime counts the set
// with a larger buffer).
func CPUs() []int {
	if set, err := topo.Affinity(); err == nil && !set.IsEmpty() {
		return set.CPUs()
	}
	cpus := make([]int, max(1, runtime.NumCPU()))
	for i := range cpus {
		cpus[i] = i
	}
	return cpus
}

// placement parses --map-by and --bind-to into topo.Options.
func (c *Config) placement() (topo.Options, error) {
	opts := topo.Options{Map: topo.Core, Bind: topo.NoLevel, Oversubscribe: c.Oversubscribe}
	levels := map[string]topo.Level{"hwthread": topo.HWThread, "core": topo.Core, "l3cache": topo.L3Cache,
		"numa": topo.NUMANode, "package": topo.Package}
	switch l, ok := levels[c.BindTo]; {
	case c.BindTo == "" || c.BindTo == "none":
	case ok:
		opts.Bind = l
	default:
		return opts, fmt.Errorf("--bind-to %q: want none, hwthread, core, l3cache, numa or package: %w", c.BindTo, ErrUsage)
	}
	switch l, ok := levels[c.MapBy]; {
	case c.MapBy == "":
	case ok && c.MapBy != "hwthread":
		opts.Map = l
	default:
		return opts, fmt.Errorf("--map-by %q: want core, l3cache, numa or package: %w", c.MapBy, ErrUsage)
	}
	return opts, nil
}

// place computes every rank's binding from the machine's topology (read
// before the spawner thread binds anything: its affinity is shmrun's). An
// impossible request is ErrUsage, before anything starts. Unbound jobs on a
// machine whose sysfs cannot be read run unbound on every allowed CPU.
func (c *Config) place() (*topo.Topology, []topo.Binding, error) {
	opts, err := c.placement()
	if err != nil {
		return nil, nil, err
	}
	t, err := topo.Current()
	if err != nil {
		if opts.Bind == topo.NoLevel {
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("--bind-to %s: reading the machine's topology: %v: %w", c.BindTo, err, ErrUsage)
	}
	b, err := t.Place(c.Ranks(), opts)
	if err != nil {
		return nil, nil, fmt.Errorf("--map-by %s --bind-to %s: %v: %w", opts.Map, c.BindTo, err, ErrUsage)
	}
	return t, b, nil
}
