package launcher_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shmrun/shmrun/launcher"
)

func TestParseEnvSpec(t *testing.T) {
	lookup := func(name string) (string, bool) {
		if name == "SET" {
			return "from shmrun", true
		}
		if name == "EMPTY" {
			return "", true
		}
		return "", false
	}
	tests := []struct {
		spec, want string
		ok         bool
	}{
		{"A=1", "A=1", true},
		{"A=", "A=", true},
		{"A=b=c", "A=b=c", true},
		{"_x9=y z", "_x9=y z", true},
		{"SET", "SET=from shmrun", true},
		{"EMPTY", "EMPTY=", true},
		{"SHMRUN_WAIT=spin=10", "SHMRUN_WAIT=spin=10", true},
		{"SHMRUN_WAIT=", "SHMRUN_WAIT=", true},
		{"SHMRUN_WAIT=spin=-1", "", false},
		{"SHMRUN_WAIT=fast", "", false},
		{"SHMRUN_SHM_DIR=/tmp", "", false}, // --shm-dir says where; -x would be overridden
		{"SHMRUN_SHM=memfd", "", false},    // --shm says which
		{"UNSET", "", false},
		{"", "", false},
		{"=v", "", false},
		{"1A=v", "", false},
		{"A-B=v", "", false},
		{"A B=v", "", false},
		{"SHMRUN_JOB=abc", "", false},
		{"SHMRUN_RANK", "", false},
	}
	for _, tt := range tests {
		got, err := launcher.ParseEnvSpec(tt.spec, lookup)
		if tt.ok && (err != nil || got != tt.want) {
			t.Errorf("ParseEnvSpec(%q) = %q, %v; want %q", tt.spec, got, err, tt.want)
		}
		if !tt.ok && !errors.Is(err, launcher.ErrUsage) {
			t.Errorf("ParseEnvSpec(%q) = %q, %v; want ErrUsage", tt.spec, got, err)
		}
	}
}

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "prog")
	noexec := filepath.Join(dir, "noexec")
	goDir := filepath.Join(dir, "gopkg")
	emptyDir := filepath.Join(dir, "empty")
	goFile := filepath.Join(goDir, "main.go")
	for _, d := range []string{goDir, emptyDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for path, mode := range map[string]os.FileMode{exe: 0o755, noexec: 0o644, goFile: 0o644} {
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	one := func(prog string) []launcher.Part { return []launcher.Part{{N: 1, Prog: prog}} }
	tests := []struct {
		name string
		cfg  launcher.Config
		ok   bool
	}{
		{"binary", launcher.Config{Parts: one(exe)}, true},
		{"in PATH", launcher.Config{Parts: one("sh")}, true},
		{"Go dir", launcher.Config{Parts: one(goDir)}, true},
		{"Go file", launcher.Config{Parts: one(goFile)}, true},
		{"MPMD", launcher.Config{Parts: []launcher.Part{{N: 1, Prog: exe}, {N: 1, Prog: "sh"}}}, true},
		{"all options", launcher.Config{Parts: one(exe), BindTo: "core", StdinTo: "none", Timeout: time.Second, ShmDir: dir}, true},
		{"oversubscribed", launcher.Config{Parts: []launcher.Part{{N: 3, Prog: exe}}, Oversubscribe: true}, true},

		{"no parts", launcher.Config{}, false},
		{"n=0", launcher.Config{Parts: []launcher.Part{{N: 0, Prog: exe}}}, false},
		{"n=-1", launcher.Config{Parts: []launcher.Part{{N: -1, Prog: exe}}}, false},
		{"second part n=0", launcher.Config{Parts: []launcher.Part{{N: 1, Prog: exe}, {N: 0, Prog: exe}}}, false},
		{"empty program", launcher.Config{Parts: one("")}, false},
		{"missing", launcher.Config{Parts: one(filepath.Join(dir, "nope"))}, false},
		{"not in PATH", launcher.Config{Parts: one("no-such-program-for-shmrun")}, false},
		{"not executable", launcher.Config{Parts: one(noexec)}, false},
		{"dir without Go", launcher.Config{Parts: one(emptyDir)}, false},
		{"missing .go", launcher.Config{Parts: one(filepath.Join(dir, "nope.go"))}, false},
		{"more ranks than CPUs", launcher.Config{Parts: []launcher.Part{{N: 3, Prog: exe}}}, false},
		{"too many ranks", launcher.Config{Parts: []launcher.Part{{N: 1<<16 + 1, Prog: exe}}, Oversubscribe: true}, false},
		{"MaxRanks", launcher.Config{Parts: []launcher.Part{{N: launcher.MaxRanks, Prog: exe}}, Oversubscribe: true}, true},
		{"MaxRanks+1", launcher.Config{Parts: []launcher.Part{{N: launcher.MaxRanks + 1, Prog: exe}}, Oversubscribe: true}, false},
		{"MPMD MaxRanks+1", launcher.Config{Parts: []launcher.Part{{N: launcher.MaxRanks, Prog: exe}, {N: 1, Prog: exe}}, Oversubscribe: true}, false},
		{"MPMD sum wraps", launcher.Config{Parts: []launcher.Part{{N: math.MaxInt, Prog: exe}, {N: math.MaxInt, Prog: exe}, {N: 2, Prog: exe}}, Oversubscribe: true}, false},
		{"bind-to", launcher.Config{Parts: one(exe), BindTo: "socket"}, false},
		{"stdin", launcher.Config{Parts: one(exe), StdinTo: "all"}, false},
		{"negative timeout", launcher.Config{Parts: one(exe), Timeout: -time.Second}, false},
		{"negative grace", launcher.Config{Parts: one(exe), Grace: -time.Second}, false},
		{"missing shm dir", launcher.Config{Parts: one(exe), ShmDir: filepath.Join(dir, "nope")}, false},
		{"shm dir is a file", launcher.Config{Parts: one(exe), ShmDir: exe}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate(2)
			if tt.ok && err != nil {
				t.Errorf("Validate: %v", err)
			}
			if !tt.ok {
				if !errors.Is(err, launcher.ErrUsage) {
					t.Errorf("Validate = %v, want ErrUsage", err)
				} else if strings.Contains(err.Error(), "\n") {
					t.Errorf("message of more than one line: %q", err)
				}
			}
		})
	}
}

// TestRunRefusesBadConfig: Run validates first and creates nothing.
func TestRunRefusesBadConfig(t *testing.T) {
	dir := shmDir(t)
	_, err := launcher.Run(t.Context(), launcher.Config{Parts: []launcher.Part{{N: 0, Prog: "sh"}}, ShmDir: dir})
	if !errors.Is(err, launcher.ErrUsage) {
		t.Errorf("Run = %v, want ErrUsage", err)
	}
	if got := names(t, dir); len(got) != 0 {
		t.Errorf("Run left %q", got)
	}
}

func TestCPUs(t *testing.T) {
	cpus := launcher.CPUs()
	if len(cpus) == 0 {
		t.Fatal("no CPUs")
	}
	for i := 1; i < len(cpus); i++ {
		if cpus[i] <= cpus[i-1] {
			t.Fatalf("CPUs not ascending: %v", cpus)
		}
	}
}
