package shm_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/shm"
)

// TestProcessPiecesRefusesBadLengths: pieces whose lengths are negative, or
// whose sum wraps, are an error, and no byte outside the local buffer
// changes. Only positive pieces go to the kernel, so a negative one that
// makes the sum match the buffer would otherwise send more bytes than the
// buffer holds.
func TestProcessPiecesRefusesBadLengths(t *testing.T) {
	src := make([]byte, 64)
	for i := range src {
		src[i] = byte(i + 1)
	}
	at := uint64(raw.Addr(src))
	const guard = 0xee
	for _, tt := range []struct {
		name   string
		local  int
		pieces []shm.Piece
	}{
		{"negative piece", 8, []shm.Piece{{at, -8}, {at, 16}}},
		{"sum wraps", 0, []shm.Piece{{at, 1<<63 - 1}, {at, 1<<63 - 1}, {at, 2}}},
	} {
		for _, write := range []bool{false, true} {
			buf := bytes.Repeat([]byte{guard}, 32)
			local := buf[:tt.local]
			var err error
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Errorf("%s (write %v): panic %v", tt.name, write, p)
					}
				}()
				if write {
					err = shm.WriteProcessPieces(os.Getpid(), tt.pieces, local)
				} else {
					err = shm.ReadProcessPieces(os.Getpid(), local, tt.pieces)
				}
			}()
			if err == nil {
				t.Errorf("%s (write %v): no error", tt.name, write)
			}
			for i, b := range buf[tt.local:] {
				if b != guard {
					t.Fatalf("%s (write %v): byte %d past the %d-byte buffer changed to %#x", tt.name, write, i, tt.local, b)
				}
			}
		}
	}
	// The source must not have been written either.
	for i, b := range src {
		if b != byte(i+1) {
			t.Fatalf("source byte %d changed to %#x", i, b)
		}
	}
}
