package shm

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func TestCopy(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 4096, 1<<20 - 1, 1 << 20, 1<<20 + 3, 3<<20 + 12345, cachedCopyMax, cachedCopyMax + 1} {
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
