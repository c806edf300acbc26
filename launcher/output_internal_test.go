package launcher

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestTaggerLinesWhole: writers of many ranks, each writing its lines in
// arbitrary pieces from its own goroutine, never tear or mix a line.
func TestTaggerLinesWhole(t *testing.T) {
	const ranks, lines = 8, 300
	var out, errOut bytes.Buffer
	tg := newTagger(&out, &errOut)
	var wg sync.WaitGroup
	for r := range ranks {
		w := tg.writer(r, false)
		wg.Go(func() {
			var all []byte
			for i := range lines {
				all = fmt.Appendf(all, "rank %d line %d %s\n", r, i, strings.Repeat("x", (r*31+i*7)%500))
			}
			for k := 1; len(all) > 0; k = k%13 + 1 { // pieces of 1..13 bytes, then more
				n := min(len(all), k*k*k)
				w.Write(all[:n])
				all = all[n:]
			}
		})
	}
	wg.Wait()
	next := make([]int, ranks)
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var r, r2, i int
		if _, err := fmt.Sscanf(l, "[%d] rank %d line %d ", &r, &r2, &i); err != nil || r != r2 || i != next[r] {
			t.Fatalf("torn or misordered line %q (next of rank %d is %d)", l, r, next[r])
		}
		if want := fmt.Sprintf("[%d] rank %d line %d %s", r, r, i, strings.Repeat("x", (r*31+i*7)%500)); l != want {
			t.Fatalf("line %q, want %q", l, want)
		}
		next[r]++
	}
	for r, n := range next {
		if n != lines {
			t.Errorf("rank %d: %d lines, want %d", r, n, lines)
		}
	}
	if errOut.Len() != 0 {
		t.Errorf("stdout lines went to stderr: %q", errOut.String())
	}
}

func TestTaggerLongLineAndFlush(t *testing.T) {
	var out, errOut bytes.Buffer
	tg := newTagger(&out, &errOut)
	w := tg.writer(3, false)
	e := tg.writer(3, true)
	long := strings.Repeat("y", maxLine+10)
	w.Write([]byte(long + "\nno newline"))
	e.Write([]byte("err line\npartial"))
	tg.flush(3)
	tg.flush(4) // a rank that wrote nothing
	want := "[3] " + long[:maxLine] + "\n[3] " + long[maxLine:] + "\n[3] no newline\n"
	if out.String() != want {
		t.Errorf("stdout:\n%.200q\nwant\n%.200q", out.String(), want)
	}
	if want := "[3] err line\n[3] partial\n"; errOut.String() != want {
		t.Errorf("stderr %q, want %q", errOut.String(), want)
	}
}

// TestTaggerCutsLongLines: a line of L bytes becomes ceil(L/maxLine) tagged
// lines (one if empty), however its bytes arrive.
func TestTaggerCutsLongLines(t *testing.T) {
	for _, l := range []int{0, 1, maxLine - 1, maxLine, maxLine + 1, 2 * maxLine, 2*maxLine + 5} {
		line := strings.Repeat("z", l)
		var want strings.Builder
		for off := 0; ; off += maxLine {
			want.WriteString("[0] " + line[off:min(l, off+maxLine)] + "\n")
			if off+maxLine >= l {
				break
			}
		}
		for _, piece := range []int{1 << 30, 1, 1000, maxLine, maxLine + 1} {
			var out bytes.Buffer
			w := newTagger(&out, &out).writer(0, false)
			data := []byte(line + "\n")
			for len(data) > 0 {
				n := min(len(data), piece)
				w.Write(data[:n])
				data = data[n:]
			}
			if out.String() != want.String() {
				t.Errorf("line of %d bytes written in pieces of %d: %d bytes out, want %d (%d lines, want %d)",
					l, piece, out.Len(), want.Len(), strings.Count(out.String(), "\n"), strings.Count(want.String(), "\n"))
			}
		}
	}
}
