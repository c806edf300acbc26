// Command shmrun runs an MPI-style job of N processes (ranks) on this machine,
// whose ranks share memory through shmrun's windows.
//
//	shmrun [flags] prog [args...] [: -n N prog2 [args...]]...
//
// See shmrun --help, and the README.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/shmrun/shmrun/launcher"
	"github.com/shmrun/shmrun/shm"
)

// Version is shmrun's version.
const Version = "0.1.0"

const usageHead = `shmrun runs N processes (ranks) of a program on this machine as one MPI-style
job; the ranks share memory through shmrun windows (package win).

Usage:
  shmrun [flags] prog [args...]
  shmrun [flags] -n N progA [args...] : -n M progB [args...]   (MPMD: ranks in order)
  shmrun --cleanup [--shm-dir DIR]

prog is a binary (a path, a name in $PATH, or one in the current directory), or
a Go main package (directory) or .go file of package main, which shmrun builds
once (in its own module) into a temporary directory before starting.

Examples:
  shmrun -n 4 --oversubscribe ./examples/pi
  shmrun -n 8 --oversubscribe --tag-output ./myprog -v
  shmrun -n 2 --bind-to core --report-bindings ./bench/cmd/rmabench
  shmrun -n 1 ./server : -n 3 ./client
  shmrun --timeout 30s -x GODEBUG=gctrace=1 -n 2 ./prog
  shmrun -n 4 --stats --trace job.trace.json ./prog

Flags:
`

const usageTail = `
Exit status: 0 if every rank exited 0 after comm.Finalize; the failing rank's
status when one fails (128+N for signal N, 1 for a rank that exited 0 without
comm.Finalize; the first failure decides); 1 when a Go program does not build;
for comm.Abort(code), code mod 256, or 1 when that is 0; 124 on --timeout; 125
when the deadlock watch ends the job; 2 for bad usage (nothing is started:
a Go rank's panic also exits 2, and then shmrun's message names the rank).

Environment: SHMRUN_WAIT=spin=N,yield=D,sleep=D (or oversubscribed) sets how
ranks wait (-x passes it; shmrun sets oversubscribed when ranks outnumber
CPUs); SHMRUN_CHECK=1|error|warn in shmrun's environment is --check. Every
other SHMRUN_ variable is shmrun's own, given to the ranks, and -x refuses it.
`

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

type options struct {
	np             int
	oversubscribe  bool
	tagOutput      bool
	timeout        string
	env            []string
	bindTo         string
	mapBy          string
	reportBindings bool
	stdin          string
	shmDir         string
	shm            string
	version        bool
	help           bool
	cleanup        bool
	noSingleCopy   bool
	deadlock       string
	stats          bool
	statsJSON      string
	trace          string
	check          string
}

func newFlagSet(o *options, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet("shmrun", pflag.ContinueOnError)
	fs.SetInterspersed(false) // flags after prog belong to prog
	fs.SetOutput(io.Discard)
	fs.IntVarP(&o.np, "np", "n", 0, "number of ranks (default: the number of CPUs shmrun may use)")
	fs.BoolVar(&o.oversubscribe, "oversubscribe", false, "allow more ranks than CPUs")
	fs.BoolVar(&o.tagOutput, "tag-output", false, "prefix every output line with [rank]")
	fs.StringVar(&o.timeout, "timeout", "", "kill the job after DURATION (e.g. 30s, 5m) and exit 124")
	fs.StringArrayVarP(&o.env, "env", "x", nil, "NAME[=VALUE]: set NAME in every rank's environment (repeatable)")
	fs.StringVar(&o.bindTo, "bind-to", "none", "none, hwthread, core, l3cache, numa or package: bind each rank to the instance of that level holding its place")
	fs.StringVar(&o.mapBy, "map-by", "core", "core, l3cache, numa or package: place rank i on the (i mod k)-th of the k instances of that level")
	fs.BoolVar(&o.reportBindings, "report-bindings", false, "print each rank's CPU binding on stderr")
	fs.StringVar(&o.stdin, "stdin", "rank0", "who reads shmrun's stdin: rank0 or none")
	fs.StringVar(&o.shmDir, "shm-dir", shm.DefaultDir, "directory for shared-memory segments (a tmpfs)")
	fs.StringVar(&o.shm, "shm", "auto", "where windows live: dir (the shm directory), memfd (no name, not counted against the directory's mount), or auto (dir when it has room, else memfd)")
	fs.BoolVar(&o.noSingleCopy, "no-single-copy", false, "ranks do not let each other read their memory (PR_SET_PTRACER, which lets any process of your user attach to them): large messages go through shared memory, in two copies")
	fs.StringVar(&o.deadlock, "deadlock-after", "5s", "end the job (exit 125) when every rank has waited inside shmrun this long with nothing moving, naming who waits for whom; 0 turns the watch off")
	fs.BoolVar(&o.stats, "stats", false, "print each rank's statistics when the job ends: RMA calls and bytes per window, time in Fence, Lock, PSCW, Barrier and each collective, lock contention, messages per peer")
	fs.StringVar(&o.statsJSON, "stats-json", "", "write the statistics to FILE as JSON (schema: docs/STATS.md)")
	fs.StringVar(&o.check, "check", "", "find conflicting RMA accesses (and checked loads and stores, win.Checked): error (the default with --check: report them and exit 1) or warn (only report); also SHMRUN_CHECK=1 in shmrun's environment")
	fs.Lookup("check").NoOptDefVal = "error"
	fs.StringVar(&o.trace, "trace", "", "write the job's timeline to FILE in the Chrome trace-event format (open it in ui.perfetto.dev or chrome://tracing)")
	fs.BoolVar(&o.cleanup, "cleanup", false, "remove segments (and build directories) of jobs whose shmrun is gone, list them and the jobs skipped and why, and exit")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	fs.BoolVarP(&o.help, "help", "h", false, "show this help")
	return fs
}

func run(args []string, stdout, stderr io.Writer) int {
	usageErr := func(err error) int {
		fmt.Fprintln(stderr, usageLine(err))
		return 2
	}
	o, fs, cfg, err := parseArgs(args, stderr)
	if err != nil {
		return usageErr(err)
	}
	switch {
	case o.help:
		fmt.Fprint(stdout, usageHead+fs.FlagUsages()+usageTail)
		return 0
	case o.version:
		fmt.Fprintf(stdout, "shmrun %s (segment format %d)\n", Version, shm.FormatVersion)
		return 0
	case o.cleanup:
		rep, err := launcher.Cleanup(o.shmDir)
		if err != nil {
			fmt.Fprintf(stderr, "shmrun: %v\n", err)
			return 1
		}
		for _, n := range rep.Removed {
			fmt.Fprintf(stdout, "removed %s\n", n)
		}
		for _, s := range rep.Skipped {
			fmt.Fprintf(stdout, "skipped job %s (%d object(s)): %s\n", s.Job, len(s.Names), s.Reason)
		}
		fmt.Fprintf(stdout, "shmrun: removed %d object(s) of finished jobs from %s; skipped %d job(s)\n", len(rep.Removed), o.shmDir, len(rep.Skipped))
		return 0
	}
	cfg.Stdout, cfg.Stderr = stdout, stderr
	sigs := make(chan os.Signal, 4)
	// SIGQUIT too: left to the Go runtime it would dump goroutines and exit
	// 2 (the usage-error code) without removing the job's objects. And
	// SIGPIPE (the reader of shmrun's output went away, as in shmrun | head):
	// left to the runtime it kills the launcher before its cleanup.
	// A signal shmrun was started with ignored stays ignored, for the
	// ranks too (they inherit it): nohup's SIGHUP, and SIGINT for a job
	// a script runs in the background.
	// SIGTSTP (^Z) stops the ranks, then shmrun; SIGCONT (fg, bg)
	// continues them: the ranks are a process group of their own, which
	// the terminal's job control does not reach.
	for _, s := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE,
		syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGTSTP, syscall.SIGCONT} {
		if !signal.Ignored(s) {
			signal.Notify(sigs, s)
		}
	}
	// The ranks write to shmrun's terminal from their own process
	// group, a background one to the terminal: with stty tostop each
	// write would stop them (SIGTTOU). Ignored, which they inherit, the
	// writes go through, as from a foreground job.
	signal.Ignore(syscall.SIGTTOU)
	defer signal.Stop(sigs)
	cfg.Signals = sigs
	res, err := launcher.Run(context.Background(), cfg)
	if errors.Is(err, launcher.ErrUsage) {
		return usageErr(err)
	}
	if err != nil {
		fmt.Fprintf(stderr, "shmrun: %v\n", err)
		return 1
	}
	return res.ExitCode
}

// usageLine is the one line shmrun prints for a usage error. Control
// characters from the arguments (pflag quotes some, not all) are escaped so
// that it stays one line.
func usageLine(err error) string {
	msg := strings.TrimSuffix(err.Error(), ": "+launcher.ErrUsage.Error())
	msg = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return '?'
		}
		return r
	}, msg)
	return "shmrun: " + msg + " (see shmrun --help)"
}

// parseArgs reads the command line: its options and, unless they ask for
// help, the version or a cleanup, the job it describes. Every error is a
// usage error (exit 2).
func parseArgs(args []string, stderr io.Writer) (*options, *pflag.FlagSet, launcher.Config, error) {
	var o options
	fs := newFlagSet(&o, stderr)
	parts := splitParts(args)
	if err := fs.Parse(parts[0]); err != nil {
		return &o, fs, launcher.Config{}, err
	}
	var empty []string
	fs.Visit(func(f *pflag.Flag) {
		if f.Value.Type() == "string" && f.Value.String() == "" {
			empty = append(empty, "--"+f.Name)
		}
	})
	if len(empty) > 0 {
		return &o, fs, launcher.Config{}, fmt.Errorf("%s given an empty value: %w", strings.Join(empty, ", "), launcher.ErrUsage)
	}
	if o.cleanup && fs.NArg() > 0 && !o.help && !o.version {
		return &o, fs, launcher.Config{}, fmt.Errorf("--cleanup takes no program (got %q): %w", fs.Arg(0), launcher.ErrUsage)
	}
	if o.help || o.version || o.cleanup {
		return &o, fs, launcher.Config{}, nil
	}
	cfg, err := buildConfig(&o, fs, parts)
	return &o, fs, cfg, err
}

// splitParts splits the arguments at lone ":" tokens (MPMD).
func splitParts(args []string) [][]string {
	parts := [][]string{{}}
	for _, a := range args {
		if a == ":" {
			parts = append(parts, []string{})
			continue
		}
		parts[len(parts)-1] = append(parts[len(parts)-1], a)
	}
	return parts
}

func buildConfig(o *options, fs *pflag.FlagSet, parts [][]string) (launcher.Config, error) {
	cfg := launcher.Config{
		Oversubscribe:  o.oversubscribe,
		TagOutput:      o.tagOutput,
		BindTo:         o.bindTo,
		MapBy:          o.mapBy,
		ReportBindings: o.reportBindings,
		StdinTo:        o.stdin,
		ShmDir:         o.shmDir,
		Shm:            o.shm,
		NoSingleCopy:   o.noSingleCopy,
		Stats:          o.stats,
		StatsJSON:      o.statsJSON,
		Trace:          o.trace,
		Check:          o.check,
	}
	if cfg.Check == "" {
		switch v := os.Getenv("SHMRUN_CHECK"); v {
		case "":
		case "1", "error":
			cfg.Check = "error"
		case "warn":
			cfg.Check = "warn"
		default:
			return cfg, fmt.Errorf("SHMRUN_CHECK=%q: want 1, error or warn: %w", v, launcher.ErrUsage)
		}
	}
	if o.deadlock == "0" {
		cfg.DeadlockAfter = -1
	} else {
		d, err := time.ParseDuration(o.deadlock)
		if err != nil || d < 0 {
			return cfg, fmt.Errorf("--deadlock-after %q: want a positive duration such as 5s, or 0 for no watch: %w", o.deadlock, launcher.ErrUsage)
		}
		cfg.DeadlockAfter = d
		if d == 0 {
			cfg.DeadlockAfter = -1 // 0s, 0ms: no watch, as 0
		}
	}
	if o.timeout != "" {
		d, err := parseDuration(o.timeout)
		if err != nil {
			return cfg, err
		}
		cfg.Timeout = d
	}
	for _, spec := range o.env {
		kv, err := launcher.ParseEnvSpec(spec, os.LookupEnv)
		if err != nil {
			return cfg, err
		}
		cfg.Env = append(cfg.Env, kv)
	}
	npSet := fs.Changed("np")
	first := fs.Args()
	if len(first) == 0 {
		if len(parts) > 1 {
			return cfg, fmt.Errorf("MPMD part 1 is empty: %w", launcher.ErrUsage)
		}
		return cfg, fmt.Errorf("no program given: %w", launcher.ErrUsage)
	}
	n := o.np
	if !npSet {
		n = len(launcher.CPUs())
		if len(parts) > 1 {
			n = 1
		}
	}
	cfg.Parts = append(cfg.Parts, launcher.Part{N: n, Prog: first[0], Args: first[1:]})
	for i, p := range parts[1:] {
		var po options
		pfs := pflag.NewFlagSet("part", pflag.ContinueOnError)
		pfs.SetInterspersed(false)
		pfs.SetOutput(io.Discard)
		pfs.IntVarP(&po.np, "np", "n", 1, "")
		if err := pfs.Parse(p); err != nil {
			return cfg, fmt.Errorf("MPMD part %d: %v: %w", i+2, err, launcher.ErrUsage)
		}
		if pfs.NArg() == 0 {
			return cfg, fmt.Errorf("MPMD part %d is empty: %w", i+2, launcher.ErrUsage)
		}
		cfg.Parts = append(cfg.Parts, launcher.Part{N: po.np, Prog: pfs.Arg(0), Args: pfs.Args()[1:]})
	}
	return cfg, nil
}
