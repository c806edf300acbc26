package rmacheck_test

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shmrun/shmrun/internal/rmacheck"
	"github.com/shmrun/shmrun/launcher"
)

// TestCorpus runs every case of testdata/corpus under shmrun --check=warn:
// a racy case must be reported with exactly the lines it marks, a race-free
// case not at all. Then --check (error) turns a report into exit status 1.
func TestCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs jobs")
	}
	src, err := os.ReadFile("testdata/corpus/main.go")
	if err != nil {
		t.Fatal(err)
	}
	cases := corpusCases(t, string(src))
	if len(cases) < 10 {
		t.Fatalf("%d cases parsed", len(cases))
	}
	for name, marked := range cases {
		t.Run(name, func(t *testing.T) {
			n := 2
			if strings.HasSuffix(name, "3") {
				n = 3
			}
			out, code := runCase(t, name, n, "warn")
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, out)
			}
			if msg := rmacheck.Verdict(out, "corpus/main.go", marked); msg != "" {
				t.Error(msg)
			}
		})
	}
	// --check (error): the same report ends the job with status 1.
	if out, code := runCase(t, "fence_putput", 2, "error"); code != 1 || !strings.Contains(out, "conflicting accesses") {
		t.Errorf("--check=error: exit %d\n%s", code, out)
	}
}

// corpusCases maps each case of the corpus to the sorted lines its
// function marks "// race".
func corpusCases(t *testing.T, src string) map[string][]int {
	lines := strings.Split(src, "\n")
	entry := regexp.MustCompile(`^\s+"(\w+)":\s+(\w+),$`)
	funcs := map[string]string{}
	for _, l := range lines {
		if m := entry.FindStringSubmatch(l); m != nil {
			funcs[m[2]] = m[1]
		}
	}
	out := map[string][]int{}
	cur := ""
	for i, l := range lines {
		if strings.HasPrefix(l, "func ") {
			cur = ""
			for fn, name := range funcs {
				if strings.HasPrefix(l, "func "+fn+"(") {
					cur = name
					out[name] = []int{}
				}
			}
		}
		if cur != "" && strings.HasSuffix(l, "// race") {
			out[cur] = append(out[cur], i+1)
		}
	}
	if len(out) != len(funcs) {
		t.Fatalf("found the functions of %d of %d cases", len(out), len(funcs))
	}
	return out
}

func runCase(t *testing.T, name string, n int, mode string) (string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	res, err := launcher.Run(context.Background(), launcher.Config{
		Parts: []launcher.Part{{N: n, Prog: "./testdata/corpus", Args: []string{name}}},
		Check: mode, Oversubscribe: true, Timeout: time.Minute, Stdout: &stdout, Stderr: &stderr,
	})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return stdout.String() + stderr.String(), res.ExitCode
}
