//go:build !mpi

package win_test

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// The hot paths depend on inlining: Flush sits at the inlining budget, and
// the one-instruction accumulates (raw.FetchAddWord, raw.SwapIfWord) must
// inline into win's generic calls (compiled where the program instantiates
// them), so FetchAndOp on an int64 makes one call and no other. TestIntendedInlining builds testdata/inlining, a package that calls
// them as a program does, with -gcflags=-m and fails when the compiler stops
// inlining one of them (as cmd/compile's own TestIntendedInlining does), so
// a change that costs the hot path a call is caught here, not in a
// benchmark run.
func TestIntendedInlining(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a package with -gcflags=-m")
	}
	// go test puts its own GOROOT/bin first in the test's PATH.
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go tool in PATH: %v", err)
	}
	out, err := exec.Command(gotool, "build", "-o", "/dev/null", "-gcflags=-m", "./testdata/inlining").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m: %v\n%s", err, out)
	}
	text := string(out)
	// Each entry: a call the compiler must report inlining, at the probe or
	// inside an inlined body.
	want := []string{
		`inlining call to win.\(\*Win\).Flush`,
		`inlining call to raw.FetchAddWord\[go.shape.int64\]`,
		`inlining call to raw.FetchAddWord\[go.shape.uint64\]`,
		`inlining call to raw.SwapIfWord\[go.shape.int64\]`,
		`inlining call to win.\(\*epochState\).canAccess`,
		`inlining call to win.\(\*part\).span`,
	}
	for _, w := range want {
		if !regexp.MustCompile(w).MatchString(text) {
			t.Errorf("the compiler no longer reports %q", strings.ReplaceAll(w, `\`, ""))
		}
	}
	if t.Failed() {
		t.Logf("why, from -gcflags=-m=2: go build -gcflags=-m=2 ./win/testdata/inlining 2>&1 | grep 'cannot inline'")
	}
}
