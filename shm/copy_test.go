package shm

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func TestCopy(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 4096, copyRepMin - 1, copyRepMin, 64<<10 + 5, 1<<20 - 1, 1 << 20, 1<<20 + 3, 3<<20 + 12345, cachedCopyMax, cachedCopyMax + 1} {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(r.Uint32())
		}
		for _, dn := range []int{n, n + 100, n / 2} {
			dst := bytes.Repeat([]byte{0xEE}, dn)
			got := Copy(dst, src)
			want := min(n, dn)
			if got != want {
				t.Fatalf("n=%d dst=%d: copied %d, want %d", n, dn, got, want)
			}
			if !bytes.Equal(dst[:want], src[:want]) {
				t.Fatalf("n=%d dst=%d: bytes differ", n, dn)
			}
			if !bytes.Equal(dst[want:], bytes.Repeat([]byte{0xEE}, dn-want)) {
				t.Fatalf("n=%d dst=%d: wrote past the copy", n, dn)
			}
		}
	}
}

// TestCopyOverlap: Copy between overlapping ranges of one buffer gives
// copy's result, in both directions and on every path, and misaligned
// non-overlapping copies are exact.
func TestCopyOverlap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{100, copyRepMin, 64 << 10, 1<<20 + 7, 3 << 20} {
		for _, shift := range []int{-4097, -1, 1, 63, 4096, n / 2, n + 1} {
			buf := make([]byte, 2*n+2*4097+8)
			for i := range buf {
				buf[i] = byte(r.Uint32())
			}
			want := bytes.Clone(buf)
			s0 := 4097 + 3
			d0 := s0 + shift
			copy(want[d0:d0+n], want[s0:s0+n])
			if got := Copy(buf[d0:d0+n], buf[s0:s0+n]); got != n {
				t.Fatalf("n=%d shift=%d: copied %d", n, shift, got)
			}
			if !bytes.Equal(buf, want) {
				t.Fatalf("n=%d shift=%d: result differs from copy's", n, shift)
			}
		}
	}
}

// TestCopyCached: the piece copier alone, at every length up to a few
// vectors and at a piece, from misaligned addresses.
func TestCopyCached(t *testing.T) {
	src := make([]byte, copyPiece+64)
	for i := range src {
		src[i] = byte(i*7 + 1)
	}
	for _, n := range append([]int{copyPiece}, func() []int {
		var ns []int
		for n := 0; n <= 300; n++ {
			ns = append(ns, n)
		}
		return ns
	}()...) {
		for _, off := range []int{0, 1, 31} {
			dst := bytes.Repeat([]byte{0xEE}, n+64)
			copyCached(dst[off:off+n], src[3:3+n])
			if !bytes.Equal(dst[off:off+n], src[3:3+n]) || !bytes.Equal(dst[:off], bytes.Repeat([]byte{0xEE}, off)) ||
				!bytes.Equal(dst[off+n:], bytes.Repeat([]byte{0xEE}, 64-off)) {
				t.Fatalf("copyCached n=%d off=%d: wrong bytes", n, off)
			}
		}
	}
}

// TestCopyRun: the run copier at every length around its vector loop's
// steps and switches (32, 128, 256, 4096), from misaligned addresses, and
// on overlapping ranges (both directions), against copy.
func TestCopyRun(t *testing.T) {
	var ns []int
	for n := 0; n <= 700; n++ {
		ns = append(ns, n)
	}
	ns = append(ns, 1000, 4095, 4096, 4097, 10000)
	src := make([]byte, 10064)
	for i := range src {
		src[i] = byte(i*13 + 5)
	}
	for _, n := range ns {
		for _, off := range []int{0, 1, 31} {
			dst := bytes.Repeat([]byte{0xEE}, n+64)
			if got := CopyRun(dst[off:off+n], src[3:3+n]); got != n {
				t.Fatalf("CopyRun n=%d returned %d", n, got)
			}
			if !bytes.Equal(dst[off:off+n], src[3:3+n]) || !bytes.Equal(dst[:off], bytes.Repeat([]byte{0xEE}, off)) ||
				!bytes.Equal(dst[off+n:], bytes.Repeat([]byte{0xEE}, 64-off)) {
				t.Fatalf("CopyRun n=%d off=%d: wrong bytes", n, off)
			}
		}
		for _, shift := range []int{-17, 17} { // overlapping: memmove's result
			buf, want := append([]byte(nil), src[:n+40]...), append([]byte(nil), src[:n+40]...)
			lo := 20
			copy(want[lo+shift:lo+shift+n], want[lo:lo+n])
			CopyRun(buf[lo+shift:lo+shift+n], buf[lo:lo+n])
			if !bytes.Equal(buf, want) {
				t.Fatalf("CopyRun n=%d overlapping by %d: wrong bytes", n, shift)
			}
		}
	}
}

func TestParseCacheSize(t *testing.T) {
	for in, want := range map[string]int{"32768K": 32 << 20, "2M": 2 << 20, "512": 512} {
		if got, err := parseCacheSize(in); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", in, got, err, want)
		}
	}
	if _, err := parseCacheSize("lots"); err == nil {
		t.Error("a malformed size parsed")
	}
}
