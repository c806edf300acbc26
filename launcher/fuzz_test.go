package launcher_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

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
