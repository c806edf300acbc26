package launcher_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/launcher"
)

var fuzzEnvName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// FuzzParseEnvSpec: a -x argument is either refused as a usage error whose
// message is one line (the CLI prints it as one), or turned into NAME=VALUE
// with a valid name that is not shmrun's own (but SHMRUN_WAIT, with a valid
// policy), the value given or, for a bare NAME, the one shmrun's
// environment holds.
func FuzzParseEnvSpec(f *testing.F) {
	for _, s := range []string{"A=1", "A=", "A=b=c", "SET", "EMPTY", "UNSET", "", "=v", "1A=v", "A B=v",
		"SHMRUN_WAIT=spin=10", "SHMRUN_WAIT=spin=-1", "SHMRUN_WAIT=oversubscribed", "SHMRUN_WAIT=fast\nx",
		"SHMRUN_RANK=3", "SHMRUN_SHM_DIR=/tmp", "SHMRUN_WAIT", "A=\n", "A\n=1", "é=1"} {
		f.Add(s, "value")
	}
	f.Add("SHMRUN_WAIT", "spin=1,yield=1ms,sleep=50ms")
	f.Add("SHMRUN_WAIT", "spin=\n")
	f.Fuzz(func(t *testing.T, spec, env string) {
		lookup := func(name string) (string, bool) {
			switch name {
			case "SET", "SHMRUN_WAIT":
				return env, true
			case "EMPTY":
				return "", true
			}
			return "", false
		}
		kv, err := launcher.ParseEnvSpec(spec, lookup)
		if err != nil {
			if !errors.Is(err, launcher.ErrUsage) {
				t.Fatalf("ParseEnvSpec(%q) = %v: not ErrUsage", spec, err)
			}
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("ParseEnvSpec(%q): message of more than one line: %q", spec, err)
			}
			return
		}
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !fuzzEnvName.MatchString(name) {
			t.Fatalf("ParseEnvSpec(%q) = %q: not NAME=VALUE", spec, kv)
		}
		if strings.HasPrefix(name, "SHMRUN_") && name != launcher.EnvWait {
			t.Fatalf("ParseEnvSpec(%q) = %q: sets shmrun's own variable", spec, kv)
		}
		if name == launcher.EnvWait {
			if _, err := barrier.ParsePolicy(value); err != nil {
				t.Fatalf("ParseEnvSpec(%q) = %q: a wait policy ParsePolicy refuses: %v", spec, kv, err)
			}
		}
		switch sn, sv, hasValue := strings.Cut(spec, "="); {
		case sn != name:
			t.Fatalf("ParseEnvSpec(%q) = %q: another name", spec, kv)
		case hasValue && sv != value:
			t.Fatalf("ParseEnvSpec(%q) = %q: another value", spec, kv)
		case !hasValue:
			if v, _ := lookup(name); v != value {
				t.Fatalf("ParseEnvSpec(%q) = %q: want the environment's value %q", spec, kv, v)
			}
		}
	})
}

// FuzzStatCPU: the deadlock watch's reader of /proc/<pid>/stat never
// panics and never returns a negative time, whatever the line (a command
// name may hold spaces and parentheses); a real line gives utime + stime.
func FuzzStatCPU(f *testing.F) {
	real := "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 120 0 0 0 250 37 0 0 20 0 3 0 900 1000 20 18446744073709551615"
	if got := launcher.StatCPU(real); got != 2870*time.Millisecond {
		f.Fatalf("utime 250 + stime 37 ticks read as %v, want 2.87s", got)
	}
	for _, s := range []string{real, "", ")", "1 (x) S", "1 (x) S 1 2 3 4 5 6 7 8 9 10 -1 -2", "1 (x)) S 1 2 3 4 5 6 7 8 9 10 99999999999999999999 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stat string) {
		if d := launcher.StatCPU(stat); d < 0 {
			t.Fatalf("%q: CPU time %v", stat, d)
		}
	})
}
