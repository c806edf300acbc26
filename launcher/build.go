package launcher

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/shmrun/shmrun/internal/format"
)

// buildPrograms builds each distinct Go package or file once into the job's
// build directory (before the timeout starts) and returns the binary of each
// part.
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
			if err := j.makeBuildDir(); err != nil {
				return nil, err
			}
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("building Go program %s: %w", p.Prog, err)
		}
		name := strings.TrimSuffix(filepath.Base(abs), ".go")
		bin := filepath.Join(j.buildTo, fmt.Sprintf("%d-%s", i, name))
		// Built where it lives, so that its own module is the one used
		// (a package outside the current directory's module builds).
		dir, target := abs, "."
		if strings.HasSuffix(abs, ".go") {
			dir, target = filepath.Dir(abs), filepath.Base(abs)
		}
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, target)
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = j.stderr, j.stderr
		// Cancelled (a signal to shmrun), go build is interrupted as by
		// ^C, so it stops its compilers and removes its work directory;
		// killed only if it has not ended a few seconds later.
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		cmd.WaitDelay = 5 * time.Second
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("building Go program %s: %w", p.Prog, err)
		}
		built[path], progs[i] = bin, bin
	}
	return progs, nil
}

// makeBuildDir creates the job's build directory, shmrun-build.<job> in the
// temporary directory (it also holds the directories the ranks write their
// --stats, --trace and --check records into), and writes its path into the
// job's lock file, where
// --cleanup finds it if this launcher is killed before it removes it. The
// path is written first: a launcher killed between the two leaves a lock
// file naming a directory that may not exist (cleanup skips it), never a
// directory no lock file names.
func (j *job) makeBuildDir() error {
	dir := filepath.Join(os.TempDir(), format.BuildDirName(j.id))
	if !filepath.IsAbs(dir) {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return fmt.Errorf("build directory: %w", err)
		}
		dir = abs
	}
	if _, err := j.lock.WriteString(dir + "\n"); err != nil {
		return fmt.Errorf("recording the build directory in %s: %w", j.lock.Name(), err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("build directory: %w", err)
	}
	j.buildTo = dir
	return nil
}
