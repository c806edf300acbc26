package launcher

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

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
			return nil, fmt.Errorf("building Go program %s: %w", p.Prog, err)
		}
		built[path], progs[i] = bin, bin
	}
	return progs, nil
}
