package launcher

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/obs"
)

// observer is the launcher's side of --stats, --stats-json and --trace:
// the directories the ranks write their records into at Finalize, and the
// files the merged records go to, created before any rank starts (a path
// that cannot be written fails the job's start, not its end).
type observer struct {
	statsDir, traceDir, checkDir string
	statsJSON, trace             *os.File
}

// observing reports whether cfg asks for --stats, --stats-json, --trace or
// --check.
func observing(cfg Config) bool {
	return cfg.Stats || cfg.StatsJSON != "" || cfg.Trace != "" || cfg.Check != ""
}

// newObserver sets up what cfg asks for, the ranks' directories inside
// parent (the job's directory, which its lock file names, so that --cleanup
// removes them when a killed launcher could not); nil when cfg asks for
// nothing.
func newObserver(cfg Config, parent string) (*observer, error) {
	if !observing(cfg) {
		return nil, nil
	}
	o := &observer{}
	var err error
	create := func(path, flag string) *os.File {
		if err != nil || path == "" {
			return nil
		}
		var f *os.File
		if f, err = os.Create(path); err != nil {
			err = fmt.Errorf("%s %s: %v: %w", flag, path, err, ErrUsage)
		}
		return f
	}
	mkdir := func(want bool, pattern string) string {
		if err != nil || !want {
			return ""
		}
		var d string
		d, err = os.MkdirTemp(parent, pattern)
		return d
	}
	o.statsJSON = create(cfg.StatsJSON, "--stats-json")
	o.trace = create(cfg.Trace, "--trace")
	o.statsDir = mkdir(cfg.Stats || cfg.StatsJSON != "", "shmrun-stats-")
	o.traceDir = mkdir(cfg.Trace != "", "shmrun-trace-")
	o.checkDir = mkdir(cfg.Check != "", "shmrun-check-")
	if err != nil {
		o.close()
		return nil, err
	}
	return o, nil
}

// env is what the ranks' environment gets.
func (o *observer) env() []string {
	var env []string
	if o == nil {
		return nil
	}
	if o.statsDir != "" {
		env = append(env, format.EnvStats+"="+o.statsDir)
	}
	if o.traceDir != "" {
		env = append(env, format.EnvTrace+"="+o.traceDir)
	}
	if o.checkDir != "" {
		env = append(env, format.EnvCheck+"="+o.checkDir)
	}
	return env
}

// report merges the n ranks' records into the table, the JSON file and
// the trace file, once every rank is reaped.
func (o *observer) report(cfg Config, n int, stderr interface{ Write([]byte) (int, error) }) error {
	if o == nil {
		return nil
	}
	if o.statsDir != "" {
		s, err := obs.ReadStats(o.statsDir, n)
		if err != nil {
			return fmt.Errorf("--stats: %v", err)
		}
		if cfg.Stats {
			fmt.Fprintf(stderr, "shmrun: statistics of %d rank(s)\n", len(s.Ranks))
			if err := s.Table(stderr); err != nil {
				return err
			}
		}
		if o.statsJSON != nil {
			if err := writeIndented(o.statsJSON, s); err != nil {
				return fmt.Errorf("--stats-json %s: %v", o.statsJSON.Name(), err)
			}
		}
	}
	if o.trace != nil {
		missing, err := obs.WriteTrace(o.traceDir, n, o.trace)
		if err != nil {
			return fmt.Errorf("--trace %s: %v", o.trace.Name(), err)
		}
		if len(missing) > 0 {
			fmt.Fprintf(stderr, "shmrun: --trace: rank(s) %v wrote no trace (they did not reach Finalize)\n", missing)
		}
	}
	return nil
}

// conflicts reads the conflicting access pairs the n ranks found, each
// distinct pair once, in rank order. A rank's file that cannot be read is
// named in the error, and the other ranks' pairs are still returned.
func (o *observer) conflicts(n int) ([]string, error) {
	if o == nil || o.checkDir == "" {
		return nil, nil
	}
	var out []string
	var errs []error
	seen := map[string]bool{}
	for r := range n {
		b, err := os.ReadFile(filepath.Join(o.checkDir, fmt.Sprintf("rank-%d.txt", r)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("rank %d's reports: %v", r, err))
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			key, text, ok := strings.Cut(line, "\t")
			if !ok || seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, text)
		}
	}
	return out, errors.Join(errs...)
}

// close removes the ranks' directories and closes the files.
func (o *observer) close() {
	if o == nil {
		return
	}
	for _, d := range []string{o.statsDir, o.traceDir, o.checkDir} {
		if d != "" {
			_ = os.RemoveAll(d)
		}
	}
	for _, f := range []*os.File{o.statsJSON, o.trace} {
		if f != nil {
			_ = f.Close()
		}
	}
}
