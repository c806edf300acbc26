package rmacheck_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

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
	siteRE := regexp.MustCompile(`corpus/main\.go:(\d+)`)
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
			var reports []string
			for _, l := range strings.Split(out, "\n") {
				if strings.Contains(l, "are not ordered by any synchronization") {
					reports = append(reports, l)
				}
			}
			if len(marked) == 0 {
				if len(reports) > 0 {
					t.Errorf("a race-free case reported:\n%s", strings.Join(reports, "\n"))
				}
				return
			}
			if len(reports) == 0 {
				t.Fatalf("no report; want lines %v\n%s", marked, out)
			}
			for _, r := range reports {
				var lines []int
				for _, m := range siteRE.FindAllStringSubmatch(r, -1) {
					var l int
					fmt.Sscan(m[1], &l)
					lines = append(lines, l)
				}
				slices.Sort(lines)
				lines = slices.Compact(lines)
				if !slices.Equal(lines, marked) {
					t.Errorf("report names lines %v, want %v:\n%s", lines, marked, r)
				}
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
