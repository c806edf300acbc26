package raw_test

import (
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
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			f()
		}()
	}
	if raw.Addr(nil) != 0 {
		t.Error("Addr(nil) != 0")
	}
}
