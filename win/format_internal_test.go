//go:build !mpi

package win

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/shm"
)

func specFor(t testing.TB, sizes []int64, noncontig bool) segmentSpec {
	t.Helper()
	n := len(sizes)
	units := make([]int64, n)
	for i := range units {
		units[i] = int64(1 + i%8)
	}
	l, err := format.NewWindowLayout(sizes, format.WinHeaderLen(n), format.NewSyncLayout(n).Total, noncontig, shm.PageSize, 1)
	if err != nil {
		t.Fatal(err)
	}
	var flags uint32
	if noncontig {
		flags = format.FlagNoncontig
	}
	return segmentSpec{flavor: FlavorShared, flags: flags, layout: l, dispUnits: units}
}

// TestWindowHeaderRoundTrip: what rank 0 writes the others accept, and a
// header for a different layout is refused, naming the field.
func TestWindowHeaderRoundTrip(t *testing.T) {
	sp := specFor(t, []int64{100, 0, 4096}, false)
	mem := make([]byte, sp.layout.Total)
	if err := writeWindowHeader(mem, sp); err != nil {
		t.Fatal(err)
	}
	if err := checkWindowHeader(mem, sp.layout.Total, sp); err != nil {
		t.Fatalf("own header refused: %v", err)
	}
	other := specFor(t, []int64{100, 8, 4096}, false)
	err := checkWindowHeader(mem, sp.layout.Total, other)
	if !errors.Is(err, shm.ErrMismatch) || !strings.Contains(err.Error(), "rank 1") || strings.Contains(err.Error(), "checksum") {
		t.Errorf("header of another layout: %v, want ErrMismatch naming rank 1's field and not the checksum", err)
	}
	// An intact header whose flavor differs names the flavor.
	binary.LittleEndian.PutUint32(mem[format.WinFlavor:], uint32(FlavorAllocate))
	resealWindow(mem, len(sp.layout.Sizes))
	err = checkWindowHeader(mem, sp.layout.Total, sp)
	if !errors.Is(err, shm.ErrMismatch) || !strings.Contains(err.Error(), "flavor") || strings.Contains(err.Error(), "checksum") {
		t.Errorf("resealed header with another flavor: %v, want ErrMismatch naming the flavor", err)
	}
	// A changed byte without a new checksum is corruption.
	mem[format.WinFlavor]++
	if err := checkWindowHeader(mem, sp.layout.Total, sp); !errors.Is(err, shm.ErrCorrupt) {
		t.Errorf("changed flavor byte: %v, want ErrCorrupt", err)
	}
}

// resealWindow recomputes the checksum of a window header of n ranks.
func resealWindow(mem []byte, n int) {
	hl := format.WinHeaderLen(n)
	binary.LittleEndian.PutUint32(mem[shm.OffChecksum:], 0)
	binary.LittleEndian.PutUint32(mem[shm.OffChecksum:], crc32.Checksum(mem[:hl], crc32.MakeTable(crc32.Castagnoli)))
}

// FuzzCheckWindowHeader: a header changed anywhere in its checksummed area is
// refused, and no input makes the check panic or read outside the mapping.
func FuzzCheckWindowHeader(f *testing.F) {
	f.Add(uint16(0), []byte{1})
	f.Add(uint16(40), []byte{0xff, 0xff, 0xff, 0xff})
	f.Add(uint16(80), []byte{8})
	f.Add(uint16(4090), bytes.Repeat([]byte{7}, 20))
	f.Fuzz(func(t *testing.T, at uint16, patch []byte) {
		sp := specFor(t, []int64{24, 0, 1000, 7}, at%2 == 0)
		mem := make([]byte, sp.layout.Total)
		if err := writeWindowHeader(mem, sp); err != nil {
			t.Fatal(err)
		}
		orig := append([]byte(nil), mem[:shm.PageSize]...)
		start := int(at) % int(shm.PageSize)
		copy(mem[start:shm.PageSize], patch)
		err := checkWindowHeader(mem, sp.layout.Total, sp)
		hl := int(format.WinHeaderLen(len(sp.layout.Sizes)))
		changed := !bytes.Equal(orig[:hl], mem[:hl])
		if changed && err == nil {
			t.Fatalf("a header changed at %d..%d was accepted", start, start+len(patch))
		}
		if !changed && err != nil {
			t.Fatalf("an unchanged header was refused: %v", err)
		}
		// Magic, version and header length are checked before the
		// checksum (it needs the length); any other change is corruption.
		before := bytes.Equal(orig[:shm.OffKind], mem[:shm.OffKind]) &&
			bytes.Equal(orig[shm.OffHeaderLen:shm.OffTotalSize], mem[shm.OffHeaderLen:shm.OffTotalSize])
		if changed && before && !errors.Is(err, shm.ErrCorrupt) {
			t.Fatalf("a header changed without a new checksum: %v, want ErrCorrupt", err)
		}
		// The same bytes resealed: an intact header that differs is
		// refused naming a field, never as a checksum error.
		if int(binary.LittleEndian.Uint64(mem[shm.OffHeaderLen:])) > len(mem) {
			return
		}
		resealWindow(mem, len(sp.layout.Sizes))
		if hl2 := binary.LittleEndian.Uint64(mem[shm.OffHeaderLen:]); hl2 != uint64(hl) {
			return // the reseal above covered hl bytes, the header says otherwise
		}
		err = checkWindowHeader(mem, sp.layout.Total, sp)
		if changed = !bytes.Equal(orig[:hl], mem[:hl]); changed && (err == nil || errors.Is(err, shm.ErrCorrupt)) {
			t.Fatalf("an intact header changed at %d..%d: %v, want an error naming a field", start, start+len(patch), err)
		}
	})
}
