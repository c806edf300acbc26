package launcher

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"
)

// tagger relays ranks' output with a "[rank] " prefix on every line. Lines are
// written whole, one Write each, under one lock: lines of different ranks
// never interleave mid-line. A line longer than maxLine is cut into pieces of
// maxLine bytes, each tagged.
type tagger struct {
	mu       sync.Mutex
	out, err io.Writer
	bufs     sync.Map // key{rank, stderr} -> *lineWriter
}

const maxLine = 64 << 10

type lineKey struct {
	rank   int
	stderr bool
}

type lineWriter struct {
	t      *tagger
	dst    io.Writer
	prefix []byte
	mu     sync.Mutex
	buf    []byte
}

func newTagger(out, err io.Writer) *tagger { return &tagger{out: out, err: err} }

func (t *tagger) writer(rank int, stderr bool) io.Writer {
	dst := t.out
	if stderr {
		dst = t.err
	}
	w := &lineWriter{t: t, dst: dst, prefix: fmt.Appendf(nil, "[%d] ", rank)}
	t.bufs.Store(lineKey{rank, stderr}, w)
	return w
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.buf = append(w.buf, p...)
			w.cut()
			break
		}
		w.buf = append(w.buf, p[:i]...)
		w.cut()
		w.emit(w.buf, true)
		w.buf = w.buf[:0]
		p = p[i+1:]
	}
	return n, nil
}

// cut emits the leading maxLine-byte pieces of a line longer than maxLine,
// keeping the rest (at least one byte) for the next newline: a line of L
// bytes becomes ceil(L/maxLine) tagged lines however its bytes arrive.
// w.mu is held.
func (w *lineWriter) cut() {
	for len(w.buf) > maxLine {
		w.emit(w.buf[:maxLine], true)
		w.buf = append(w.buf[:0], w.buf[maxLine:]...)
	}
}

// emit writes one tagged line; w.mu is held.
func (w *lineWriter) emit(line []byte, newline bool) {
	out := make([]byte, 0, len(w.prefix)+len(line)+1)
	out = append(append(out, w.prefix...), line...)
	if newline {
		out = append(out, '\n')
	}
	w.t.mu.Lock()
	_, _ = w.dst.Write(out)
	w.t.mu.Unlock()
}

// flush writes a last line that had no newline (the rank has exited).
func (t *tagger) flush(rank int) {
	for _, stderr := range []bool{false, true} {
		if v, ok := t.bufs.Load(lineKey{rank, stderr}); ok {
			w := v.(*lineWriter)
			w.mu.Lock()
			if len(w.buf) > 0 {
				w.emit(w.buf, true)
				w.buf = w.buf[:0]
			}
			w.mu.Unlock()
		}
	}
}

// outputMu serializes writes to the job's output writers that are not files.
var outputMu sync.Mutex

// serialize returns w (or def if w is nil) safe for the concurrent writes
// that every rank's output copier and the launcher itself make. A file is
// passed to the ranks as their own descriptor, unchanged; any other writer
// (a buffer in a test) gets its writes serialized.
func serialize(w, def io.Writer) io.Writer {
	if w == nil {
		w = def
	}
	if _, ok := w.(*os.File); ok {
		return w
	}
	return lockedWriter{w}
}

type lockedWriter struct{ w io.Writer }

func (l lockedWriter) Write(p []byte) (int, error) {
	outputMu.Lock()
	defer outputMu.Unlock()
	return l.w.Write(p)
}
