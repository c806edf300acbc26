package raw_test

import (
	"bytes"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/shmrun/shmrun/internal/raw"
)

func TestWordAt(t *testing.T) {
	b := raw.Bytes(make([]uint64, 4))
	w := raw.Uint64At(b, 8)
	atomic.StoreUint64(w, 0x0807060504030201)
	if b[8] != 1 || b[15] != 8 {
		t.Errorf("Uint64At(8) is not bytes 8..15: % x", b[8:16])
	}
	u := raw.Uint32At(b, 28)
	atomic.StoreUint32(u, 7)
	if b[28] != 7 {
		t.Errorf("Uint32At(28) is not bytes 28..31: % x", b[28:32])
	}
	// A bad offset is a bug in layout code: a loud panic, never a wild
	// pointer.
	for name, f := range map[string]func(){
		"Uint64At misaligned": func() { raw.Uint64At(b, 4) },
		"Uint64At past end":   func() { raw.Uint64At(b, 32) },
		"Uint64At negative":   func() { raw.Uint64At(b, -8) },
		"Uint32At misaligned": func() { raw.Uint32At(b, 2) },
		"Uint32At past end":   func() { raw.Uint32At(b, 30) },
		"Uint32At negative":   func() { raw.Uint32At(b, -4) },
	} {
		func() {
			defer func() {
				// The panic names the word and the mapping (not an
				// index out of range from the slice expression).
				r := recover()
				if err, ok := r.(error); !ok || !strings.Contains(err.Error(), "-bit word at") || !strings.Contains(err.Error(), "of a 32-byte mapping") {
					t.Errorf("%s: panic %v, want the word and the mapping named", name, r)
				}
			}()
			f()
		}()
	}
	if raw.Addr(nil) != 0 {
		t.Error("Addr(nil) != 0")
	}
}

// TestFrameReturns: the frame-pointer walk gives the goroutine's physical
// frames, innermost first, down to its first.
func TestFrameReturns(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("frame pointers are walked on amd64 only")
	}
	names := func(pcs []uintptr) []string {
		var out []string
		for _, pc := range pcs {
			f, _ := runtime.CallersFrames([]uintptr{pc}).Next()
			out = append(out, f.Function)
		}
		return out
	}
	got := names(frameWalk())
	want := []string{"raw_test.frameWalk", "raw_test.TestFrameReturns", "testing.tRunner", "runtime.goexit"}
	j := 0
	for _, fn := range got {
		if j < len(want) && strings.HasSuffix(fn, want[j]) {
			j++
		}
	}
	if j < len(want) || !strings.HasSuffix(got[0], want[0]) || !strings.HasSuffix(got[len(got)-1], "runtime.goexit") {
		t.Fatalf("walked %q, want the frames %q in order, innermost first", got, want)
	}
	done := make(chan []string)
	go func() { done <- names(frameWalk()) }()
	if g := <-done; len(g) != 3 || !strings.HasSuffix(g[0], want[0]) || !strings.HasSuffix(g[2], "runtime.goexit") {
		t.Errorf("a new goroutine's walk is %q", g)
	}
}

//go:noinline
func frameWalk() []uintptr {
	var a [64]uintptr
	return a[:raw.FrameReturns(a[:])]
}

// TestReturnPC: ReturnPC, called by a function with a frame, gives where
// that function returns to in its caller.
func TestReturnPC(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		if returnPC() != 0 {
			t.Fatal("ReturnPC is not 0 where frames are not walked")
		}
		t.Skip("frame pointers are walked on amd64 only")
	}
	pc := returnPC()
	f, _ := runtime.CallersFrames([]uintptr{pc}).Next()
	if !strings.HasSuffix(f.Function, "raw_test.TestReturnPC") {
		t.Fatalf("ReturnPC in returnPC gave %#x in %s, want a return address in TestReturnPC", pc, f.Function)
	}
	if pc2 := returnPC(); pc2 == pc {
		t.Errorf("two calls from two lines gave one return address %#x", pc)
	}
}

//go:noinline
func returnPC() uintptr { return raw.ReturnPC() }

// TestProcessVM copies within this process both ways, and at most
// raw.ProcessVMMax bytes a call.
func TestProcessVM(t *testing.T) {
	src := make([]byte, raw.ProcessVMMax+100)
	for i := range src {
		src[i] = byte(i * 7)
	}
	dst := make([]byte, len(src))
	n, err := raw.ProcessVM(os.Getpid(), dst, uint64(raw.Addr(src)), false)
	if err != nil || n != raw.ProcessVMMax || !bytes.Equal(dst[:n], src[:n]) || dst[n] != 0 {
		t.Fatalf("read of %d bytes: %d, %v, equal %v", len(src), n, err, bytes.Equal(dst[:n], src[:n]))
	}
	back := make([]byte, 100)
	n, err = raw.ProcessVM(os.Getpid(), src[raw.ProcessVMMax:], uint64(raw.Addr(back)), true)
	if err != nil || n != 100 || !bytes.Equal(back, src[raw.ProcessVMMax:]) {
		t.Fatalf("write of 100 bytes: %d, %v", n, err)
	}
	if n, err := raw.ProcessVM(os.Getpid(), nil, 0, false); n != 0 || err != nil {
		t.Errorf("empty copy: %d, %v", n, err)
	}
	if _, err := raw.ProcessVM(os.Getpid(), dst[:8], 8, false); err == nil {
		t.Error("a read at address 8 worked")
	}
}

// TestLightFence: where the kernel offers the global expedited
// membarrier, registering succeeds and the heavy fence runs; either way
// both calls return.
func TestLightFence(t *testing.T) {
	ok := raw.RegisterLightFence()
	if ok != raw.LightFence() {
		t.Fatalf("RegisterLightFence %v, LightFence %v", ok, raw.LightFence())
	}
	if !raw.HeavyFence() {
		t.Error("HeavyFence failed")
	}
	t.Logf("registered: %v", ok)
}

// TestGoroutine checks that Goroutine tells goroutines apart and is
// stable within one, across a stack growth and a reschedule.
func TestGoroutine(t *testing.T) {
	me := raw.Goroutine()
	if me == 0 {
		t.Fatal("Goroutine() = 0")
	}
	var grow func(n int) uintptr
	grow = func(n int) uintptr {
		var pad [256]byte
		_ = pad
		if n == 0 {
			runtime.Gosched()
			return raw.Goroutine()
		}
		return grow(n - 1)
	}
	if got := grow(200); got != me {
		t.Fatalf("Goroutine() moved from %#x to %#x within one goroutine", me, got)
	}
	const n = 16
	ids := make(chan uintptr, n)
	hold := make(chan struct{})
	for range n {
		go func() {
			ids <- raw.Goroutine()
			<-hold // alive until every id is read
		}()
	}
	seen := map[uintptr]bool{me: true}
	for range n {
		id := <-ids
		if seen[id] {
			t.Fatalf("two live goroutines share %#x", id)
		}
		seen[id] = true
	}
	close(hold)
}
