package shm_test

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"runtime/debug"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/shmrun/shmrun/shm"
)

// sealed returns a header page of kind for a segment of total bytes, with
// kind-specific bytes after the fixed part, sealed by WriteHeader.
func sealed(t testing.TB, kind uint32, headerLen, total int) []byte {
	t.Helper()
	m := make([]byte, headerLen)
	for i := shm.FixedHeaderLen; i < headerLen; i++ {
		m[i] = byte(i * 7)
	}
	if err := shm.WriteHeader(m, shm.Header{Kind: kind, HeaderLen: uint64(headerLen), TotalSize: uint64(total)}); err != nil {
		t.Fatal(err)
	}
	return m
}

// reseal recomputes the checksum of a header whose length field is in m,
// as a writer that means what it wrote would.
func reseal(m []byte) []byte {
	le := binary.LittleEndian
	hl := le.Uint64(m[shm.OffHeaderLen:])
	le.PutUint32(m[shm.OffChecksum:], 0)
	le.PutUint32(m[shm.OffChecksum:], crc32.Checksum(m[:hl], crc32.MakeTable(crc32.Castagnoli)))
	return m
}

func TestHeaderRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		kind             uint32
		headerLen, total int
	}{
		{shm.KindControl, 4096, 8192},
		{shm.KindWindow, shm.FixedHeaderLen, shm.FixedHeaderLen},
		{shm.KindWindow, 100, 1 << 40},
	} {
		m := sealed(t, tt.kind, tt.headerLen, tt.total)
		h, err := shm.ReadHeader(m, tt.kind, int64(tt.total))
		if err != nil {
			t.Fatalf("ReadHeader of a sealed header: %v", err)
		}
		want := shm.Header{Version: shm.FormatVersion, Kind: tt.kind, HeaderLen: uint64(tt.headerLen), TotalSize: uint64(tt.total)}
		if h != want {
			t.Errorf("ReadHeader = %+v, want %+v", h, want)
		}
		if _, err := shm.ReadHeader(m, tt.kind, -1); err != nil {
			t.Errorf("ReadHeader with unknown object size: %v", err)
		}
		if string(m[:8]) != string(shm.Magic[:]) {
			t.Errorf("magic %q", m[:8])
		}
	}
}

func TestWriteHeaderRefusesBadLengths(t *testing.T) {
	m := make([]byte, 4096)
	for _, h := range []shm.Header{
		{Kind: 1, HeaderLen: shm.FixedHeaderLen - 1, TotalSize: 4096},
		{Kind: 1, HeaderLen: 4097, TotalSize: 8192},
		{Kind: 1, HeaderLen: 4096, TotalSize: 4095},
	} {
		if err := shm.WriteHeader(m, h); !errors.Is(err, shm.ErrHeaderSize) {
			t.Errorf("WriteHeader(%+v) = %v, want ErrHeaderSize", h, err)
		}
	}
}

func TestReadHeaderErrors(t *testing.T) {
	const headerLen, total = 256, 8192
	le := binary.LittleEndian
	tests := []struct {
		name   string
		mutate func(m []byte) []byte
		kind   uint32
		size   int64
		want   error
	}{
		{"empty", func(m []byte) []byte { return nil }, shm.KindWindow, total, shm.ErrTruncated},
		{"shorter than the fixed header", func(m []byte) []byte { return m[:shm.FixedHeaderLen-1] }, shm.KindWindow, total, shm.ErrTruncated},
		{"bad magic", func(m []byte) []byte { m[0] = 'X'; return m }, shm.KindWindow, total, shm.ErrBadMagic},
		{"zero page", func(m []byte) []byte { clear(m); return m }, shm.KindWindow, total, shm.ErrBadMagic},
		{"magic of another version", func(m []byte) []byte { m[7]++; return m }, shm.KindWindow, total, shm.ErrBadMagic},
		{"version", func(m []byte) []byte { le.PutUint32(m[8:], shm.FormatVersion+1); return m }, shm.KindWindow, total, shm.ErrVersion},
		{"kind", func(m []byte) []byte { return m }, shm.KindControl, total, shm.ErrKind},
		{"kind field changed", func(m []byte) []byte { m[12] ^= 3; return m }, shm.KindWindow, total, shm.ErrCorrupt},
		{"kind field changed, resealed", func(m []byte) []byte { m[12] ^= 3; return reseal(m) }, shm.KindWindow, total, shm.ErrKind},
		{"header length below the fixed part", func(m []byte) []byte { le.PutUint64(m[16:], shm.FixedHeaderLen-1); return m }, shm.KindWindow, total, shm.ErrHeaderSize},
		{"header length beyond the mapping", func(m []byte) []byte { return m[:headerLen-1] }, shm.KindWindow, total, shm.ErrHeaderSize},
		{"header length beyond the total", func(m []byte) []byte { le.PutUint64(m[24:], headerLen-1); return reseal(m) }, shm.KindWindow, -1, shm.ErrHeaderSize},
		{"total size changed", func(m []byte) []byte { le.PutUint64(m[24:], headerLen-1); return m }, shm.KindWindow, -1, shm.ErrCorrupt},
		{"total size beyond the object, resealed", func(m []byte) []byte { le.PutUint64(m[24:], total+1); return reseal(m) }, shm.KindWindow, total, shm.ErrTruncated},
		{"header length huge", func(m []byte) []byte { le.PutUint64(m[16:], 1<<63); return m }, shm.KindWindow, total, shm.ErrHeaderSize},
		{"object smaller than the total", func(m []byte) []byte { return m }, shm.KindWindow, total - 1, shm.ErrTruncated},
		{"checksum", func(m []byte) []byte { m[32] ^= 1; return m }, shm.KindWindow, total, shm.ErrCorrupt},
		{"kind-specific byte", func(m []byte) []byte { m[headerLen-1] ^= 0x80; return m }, shm.KindWindow, total, shm.ErrCorrupt},
		{"reserved field", func(m []byte) []byte { m[36] = 1; return m }, shm.KindWindow, total, shm.ErrCorrupt},
		{"reserved field, resealed", func(m []byte) []byte { m[36] = 1; return reseal(m) }, shm.KindWindow, total, shm.ErrMismatch},
		{"total size", func(m []byte) []byte { le.PutUint64(m[24:], total-4096); return m }, shm.KindWindow, total, shm.ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.mutate(sealed(t, shm.KindWindow, headerLen, total))
			_, err := shm.ReadHeader(m, tt.kind, tt.size)
			if !errors.Is(err, tt.want) {
				t.Errorf("ReadHeader = %v, want %v", err, tt.want)
			}
			// Only a checksum error may speak of the checksum.
			if err != nil && tt.want != shm.ErrCorrupt && strings.Contains(err.Error(), "checksum") {
				t.Errorf("ReadHeader = %v: a %v error mentions the checksum", err, tt.want)
			}
		})
	}
}

// guarded returns a copy of data that ends exactly where an inaccessible
// page begins: a read past its end faults instead of passing unnoticed.
func guarded(t testing.TB, data []byte) []byte {
	t.Helper()
	page := int(shm.PageSize)
	n := (len(data) + page - 1) / page * page
	mem, err := unix.Mmap(-1, 0, n+page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(mem) })
	if err := unix.Mprotect(mem[n:], unix.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	b := mem[n-len(data) : n : n]
	copy(b, data)
	return b
}

// FuzzReadHeader: ReadHeader never panics or reads outside the bytes it is
// given, whatever they hold; what it accepts is consistent; and it accepts
// any header WriteHeader sealed, returning its fields.
func FuzzReadHeader(f *testing.F) {
	valid := sealed(f, shm.KindWindow, 64, 4096)
	f.Add(valid, shm.KindWindow, int64(4096))
	f.Add(valid[:shm.FixedHeaderLen], shm.KindWindow, int64(-1))
	f.Add(valid[:63], shm.KindWindow, int64(4096))
	f.Add(sealed(f, shm.KindControl, 4096, 8192), shm.KindControl, int64(8192))
	f.Add([]byte("SHMRUN\x00\x01"), shm.KindControl, int64(0))
	f.Add(make([]byte, 100), uint32(0), int64(1<<62))
	f.Fuzz(func(t *testing.T, data []byte, kind uint32, size int64) {
		m := guarded(t, data)
		h, err := shm.ReadHeader(m, kind, size)
		if errors.Is(err, shm.ErrKind) || errors.Is(err, shm.ErrTruncated) && len(m) >= shm.FixedHeaderLen {
			// Checked after the checksum: the header is intact, so it
			// reads as a header of its own kind and unknown object size,
			// unless only its length exceeds its total.
			if _, err2 := shm.ReadHeader(m, h.Kind, -1); err2 != nil && !errors.Is(err2, shm.ErrHeaderSize) {
				t.Fatalf("ReadHeader said %v, but the header is not intact: %v", err, err2)
			}
		}
		if err == nil {
			if h.Version != shm.FormatVersion || h.Kind != kind || h.HeaderLen < shm.FixedHeaderLen ||
				h.HeaderLen > uint64(len(m)) || h.HeaderLen > h.TotalSize || size >= 0 && h.TotalSize > uint64(size) {
				t.Fatalf("accepted an inconsistent header %+v (mapping %d bytes, object %d)", h, len(m), size)
			}
		}

		// Seal the same bytes as a header of their full length: accepted.
		if len(data) < shm.FixedHeaderLen {
			return
		}
		total := uint64(len(data)) + uint64(kind%4096)
		want := shm.Header{Version: shm.FormatVersion, Kind: kind, HeaderLen: uint64(len(data)), TotalSize: total}
		if err := shm.WriteHeader(m, want); err != nil {
			t.Fatalf("WriteHeader(%+v): %v", want, err)
		}
		if h, err := shm.ReadHeader(m, kind, int64(total)); err != nil || h != want {
			t.Fatalf("ReadHeader of a sealed header = %+v, %v; want %+v", h, err, want)
		}
	})
}

// TestReadHeaderBeyondTheObject: a header whose length field reaches past
// the end of the object (a foreign or truncated segment mapped at the size
// its reader expected) is refused, not read: the pages of a mapping past
// the object's end fault (SIGBUS) when touched.
func TestReadHeaderBeyondTheObject(t *testing.T) {
	o, err := shm.NewMemfd("shm-test", shm.PageSize, false)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	m, err := o.Map(3 * shm.PageSize)
	if err != nil {
		t.Fatal(err)
	}
	defer shm.Unmap(m)
	le := binary.LittleEndian
	copy(m, shm.Magic[:])
	le.PutUint32(m[shm.OffVersion:], shm.FormatVersion)
	le.PutUint32(m[shm.OffKind:], shm.KindWindow)
	le.PutUint64(m[shm.OffHeaderLen:], uint64(2*shm.PageSize+64))
	le.PutUint64(m[shm.OffTotalSize:], uint64(3*shm.PageSize))
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("ReadHeader of a %d-byte object mapped as %d: %v", shm.PageSize, len(m), p)
		}
	}()
	if _, err := shm.ReadHeader(m, shm.KindWindow, shm.PageSize); !errors.Is(err, shm.ErrHeaderSize) {
		t.Errorf("ReadHeader = %v, want ErrHeaderSize", err)
	}
}
