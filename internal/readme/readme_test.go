package readme

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shmrun/shmrun/launcher"
)

// ranks is how many ranks each README program runs with; the README says so
// next to each program's output.
const ranks = 4

// block is one fenced code block of a Markdown file.
type block struct {
	lang    string // the word after the opening fence
	section string // the last "## " heading above it
	line    int    // of the opening fence, 1-based
	text    string
}

// moduleRoot is the directory holding go.mod, found upward from the test's
// working directory (its package directory), so the test runs from any clone.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// blocks returns the fenced code blocks of a Markdown document.
func blocks(t testing.TB, doc string) []block {
	t.Helper()
	var out []block
	var cur *block
	var body strings.Builder
	section := ""
	sc := bufio.NewScanner(strings.NewReader(doc))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &block{lang: strings.TrimSpace(line[3:]), section: section, line: n}
			body.Reset()
		case cur != nil && strings.TrimSpace(line) == "```":
			cur.text = body.String()
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			body.WriteString(line)
			body.WriteByte('\n')
		case strings.HasPrefix(line, "## "):
			section = strings.TrimSpace(line[3:])
		}
	}
	if cur != nil {
		t.Fatalf("code block opened at line %d is never closed", cur.line)
	}
	return out
}

// TestGoPrograms builds every ```go block of README.md as a program of its
// own and runs it under the launcher; the ```text block right after it is
// its expected output. The program is written into a temporary directory
// under testdata, inside this module, so its imports of shmrun resolve to
// this tree with no network and no go.mod of its own (go build ./... skips
// testdata directories).
func TestGoPrograms(t *testing.T) {
	root := moduleRoot(t)
	bs := blocks(t, readFile(t, filepath.Join(root, "README.md")))
	found := 0
	for i, b := range bs {
		if b.lang != "go" {
			continue
		}
		found++
		if i+1 >= len(bs) || bs[i+1].lang != "text" {
			t.Errorf("README.md:%d: a Go program must be followed by a ```text block with its output under %d ranks", b.line, ranks)
			continue
		}
		want := bs[i+1].text
		t.Run(strings.ReplaceAll(b.section, " ", "_"), func(t *testing.T) {
			runProgram(t, b, want)
		})
	}
	if found == 0 {
		t.Fatal("README.md has no ```go block; this test checks nothing")
	}
}

func runProgram(t *testing.T, b block, want string) {
	if err := os.Mkdir("testdata", 0o755); err == nil {
		t.Cleanup(func() { _ = os.Remove("testdata") }) // only if empty: never ours to empty
	} else if !os.IsExist(err) {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("testdata", "readme-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(b.text), 0o644); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	res, err := launcher.Run(context.Background(), launcher.Config{
		Parts:         []launcher.Part{{N: ranks, Prog: abs}},
		Oversubscribe: true,
		Timeout:       2 * time.Minute, // the first build of a clean clone is most of it
		Stdin:         strings.NewReader(""),
		Stdout:        &stdout,
		Stderr:        &stderr,
	})
	if err != nil {
		t.Fatalf("README.md:%d: %v\n%s", b.line, err, stderr.String())
	}
	if res.ExitCode != 0 {
		t.Fatalf("README.md:%d: exit code %d (%s)\nstderr:\n%s", b.line, res.ExitCode, res.Reason, stderr.String())
	}
	if got := stdout.String(); got != want {
		t.Errorf("README.md:%d: with %d ranks the program printed\n%s\nthe README says\n%s", b.line, ranks, got, want)
	}
}

// quickStart returns the command lines of the README's quick-start block.
func quickStart(t *testing.T, root string) []string {
	t.Helper()
	for _, b := range blocks(t, readFile(t, filepath.Join(root, "README.md"))) {
		if b.section == "Quick start" && b.lang == "sh" {
			var lines []string
			for l := range strings.Lines(b.text) {
				if l = strings.TrimSpace(l); l != "" {
					lines = append(lines, l)
				}
			}
			return lines
		}
	}
	t.Fatal("README.md has no ```sh block under ## Quick start")
	return nil
}

// TestQuickStart keeps the README's two quick-start commands honest: the
// first (a job of the launcher on an example) runs as written from the
// module root, and the second is the test command CI runs, word for word.
func TestQuickStart(t *testing.T) {
	root := moduleRoot(t)
	lines := quickStart(t, root)
	if len(lines) != 2 {
		t.Fatalf("the quick start has %d commands, want 2 (a job, then the test command): %q", len(lines), lines)
	}
	run, test := lines[0], lines[1]

	ci := readFile(t, filepath.Join(root, ".ci", "run"))
	ciLines := slices.Collect(func(yield func(string) bool) {
		for l := range strings.Lines(ci) {
			if !yield(strings.TrimSpace(l)) {
				return
			}
		}
	})
	if !slices.Contains(ciLines, test) {
		t.Errorf("README's quick-start test command %q is not a command of .ci/run", test)
	}

	if testing.Short() {
		t.Skip("-short: not running the quick-start job")
	}
	if !strings.HasPrefix(run, "go run ./cmd/shmrun ") {
		t.Fatalf("the first quick-start command should start a job with go run ./cmd/shmrun: %q", run)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", run)
	cmd.Dir = root
	cmd.Stdin = strings.NewReader("")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", run, err, out)
	}
}

// exampleRow matches a row of the README's table of examples.
var exampleRow = regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)` \\|")

// TestExamples runs every example the README lists, the way it says to, and
// checks that the table lists every directory of examples/.
func TestExamples(t *testing.T) {
	root := moduleRoot(t)
	readme := readFile(t, filepath.Join(root, "README.md"))
	var listed []string
	for _, m := range exampleRow.FindAllStringSubmatch(readme, -1) {
		listed = append(listed, m[1])
	}
	ents, err := os.ReadDir(filepath.Join(root, "examples"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range ents {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	slices.Sort(listed)
	if !slices.Equal(listed, dirs) {
		t.Errorf("README lists examples %v, examples/ holds %v", listed, dirs)
	}
	if testing.Short() {
		t.Skip("-short: not running the examples")
	}
	shmrun := filepath.Join(t.TempDir(), "shmrun")
	build := exec.Command("go", "build", "-o", shmrun, "./cmd/shmrun")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/shmrun: %v\n%s", err, out)
	}
	for _, name := range dirs {
		t.Run(name, func(t *testing.T) {
			bin := filepath.Join(t.TempDir(), name)
			build := exec.Command("go", "build", "-o", bin, "./examples/"+name)
			build.Dir = root
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("go build ./examples/%s: %v\n%s", name, err, out)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, shmrun, "-n", "4", "--oversubscribe", bin)
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("shmrun -n 4 --oversubscribe %s: %v\n%s", name, err, out)
			}
		})
	}
}

// mdLink matches the target of an inline Markdown link.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// codeSpan matches a fenced code block or an inline code span, where
// "](x)" is code, not a link.
var codeSpan = regexp.MustCompile("(?s)```.*?```|`[^`\n]*`")

// prose is a Markdown document without its code.
func prose(doc string) string { return codeSpan.ReplaceAllString(doc, "") }

// TestLinks checks that README.md and docs/*.md link only to files of this
// repository, and that each target exists: the documents must stand alone
// in any clone.
func TestLinks(t *testing.T) {
	root := moduleRoot(t)
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append([]string{filepath.Join(root, "README.md")}, docs...)
	for _, doc := range docs {
		rel, _ := filepath.Rel(root, doc)
		for _, m := range mdLink.FindAllStringSubmatch(prose(readFile(t, doc)), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" {
				continue // a link within the same document
			}
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				t.Errorf("%s links outside the repository: %s", rel, m[1])
				continue
			}
			path := filepath.Clean(filepath.Join(filepath.Dir(doc), target))
			if r, err := filepath.Rel(root, path); err != nil || r == ".." || strings.HasPrefix(r, "../") {
				t.Errorf("%s links outside the repository: %s", rel, m[1])
				continue
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s links to %s, which does not exist", rel, m[1])
			}
		}
	}
}
