package rmacheck

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shmrun/shmrun/internal/raw"
)

// FuzzRing: a window's rings hold whatever other processes wrote; checking
// an access against records of any bytes must not panic, and reports of
// them must stay one line each.
func FuzzRing(f *testing.F) {
	f.Add([]byte{1, 2, 3}, uint64(0), uint64(8))
	f.Add(make([]byte, recLen*4), uint64(16), uint64(24))
	f.Fuzz(func(t *testing.T, junk []byte, lo, hi uint64) {
		n := 2
		out, err := os.CreateTemp(t.TempDir(), "reports")
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		p := newProc(0, n, make([]byte, MsgAreaLen(n)), out)
		mem := make([]byte, LogAreaLen(n, n))
		for i := 0; i < len(mem) && len(junk) > 0; i++ {
			mem[i] = junk[i%len(junk)]
		}
		l := p.NewLog(mem, []int{0, 1}, 0, false)
		for _, k := range []Kind{Read, Write, Atomic} {
			l.Access(&Access{Target: 1, Lo: lo, Hi: hi, Kind: k, Call: Name("Put")})
			l.Access(&Access{Target: 0, Lo: lo, Hi: hi, Kind: k, Local: true, Call: Name("Store")})
		}
		l.Complete(-1)
		l.LockAll()
		l.UnlockAll()
	})
}

// FuzzNames: a names file is another process's; reading any bytes as one
// must not panic, and what it reads back from a well-formed file is what
// was written.
func FuzzNames(f *testing.F) {
	f.Add([]byte("1\t\"Put\"\n2\t\"main/x.go:12\"\n"), "a\tb\nc")
	f.Add([]byte("x\t\"\n\t\t\n4294967296\t\"a\"\n"), "")
	f.Fuzz(func(t *testing.T, junk []byte, s string) {
		_ = parseNames(junk)
		path := filepath.Join(t.TempDir(), "names")
		w, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		writeName(w, 7, s)
		w.Close()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := parseNames(append(junk, append([]byte{'\n'}, b...)...))[7]; got != s {
			t.Fatalf("name 7 read back as %q, written %q", got, s)
		}
	})
}

// TestRingHeadBackwards: a ring's head word is shared memory; one that
// goes back below a rank's watermark (a stray store of the program) must
// not send the scan round all 2^32 ids.
func TestRingHeadBackwards(t *testing.T) {
	out, err := os.CreateTemp(t.TempDir(), "reports")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	p := newProc(0, 2, make([]byte, MsgAreaLen(2)), out)
	l := p.NewLog(make([]byte, LogAreaLen(2, 2)), []int{0, 1}, 0, false)
	for i := range 20 {
		l.Access(&Access{Target: 1, Lo: uint64(8 * i), Hi: uint64(8*i + 8), Kind: Write, Call: Name("Put")})
		l.Complete(1)
	}
	atomic.StoreUint64(raw.Word64(l.mem, l.base(1)), 2)
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.Access(&Access{Target: 1, Lo: 0, Hi: 8, Kind: Write, Call: Name("Put")})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("an access after the ring's head went back: still scanning after 10 s")
	}
}
