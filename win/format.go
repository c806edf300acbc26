//go:build !mpi

package win

import (
	"encoding/binary"
	"fmt"

	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/shm"
)

// The window segment's header and sync block formats are package format's
// (internal/format, docs/FORMAT.md); this file writes and checks headers.

// segmentSpec is everything the header records.
type segmentSpec struct {
	flavor    Flavor
	flags     uint32
	layout    format.WindowLayout
	dispUnits []int64
}

func writeWindowHeader(mem []byte, sp segmentSpec) error {
	le := binary.LittleEndian
	n := len(sp.layout.Sizes)
	le.PutUint32(mem[format.WinRanks:], uint32(n))
	le.PutUint32(mem[format.WinFlavor:], uint32(sp.flavor))
	le.PutUint32(mem[format.WinFlags:], sp.flags)
	le.PutUint32(mem[format.WinStripes:], format.NumStripes)
	le.PutUint64(mem[format.WinSyncOff:], uint64(sp.layout.SyncOff))
	le.PutUint64(mem[format.WinSyncLen:], uint64(sp.layout.SyncLen))
	le.PutUint64(mem[format.WinAlign:], uint64(sp.layout.Align))
	for i := range n {
		le.PutUint64(mem[format.WinSizeOff(i):], uint64(sp.layout.Sizes[i]))
		le.PutUint64(mem[format.WinDispUnitOff(n, i):], uint64(sp.dispUnits[i]))
		le.PutUint64(mem[format.WinDataOffOff(n, i):], uint64(sp.layout.Offsets[i]))
	}
	return shm.WriteHeader(mem, shm.Header{Kind: shm.KindWindow, HeaderLen: uint64(format.WinHeaderLen(n)), TotalSize: uint64(sp.layout.Total)})
}

// checkWindowHeader validates the header a peer wrote against the layout this
// rank computed from the same agreed inputs. shm.ReadHeader has checked the
// checksum first, so a changed byte is shm.ErrCorrupt; a field of an intact
// header that differs is shm.ErrMismatch naming the field (a foreign segment,
// or ranks that disagree on the layout).
func checkWindowHeader(mem []byte, size int64, sp segmentSpec) error {
	h, err := shm.ReadHeader(mem, shm.KindWindow, size)
	if err != nil {
		return err
	}
	le := binary.LittleEndian
	n := len(sp.layout.Sizes)
	want := func(what string, got, exp uint64) error {
		if got != exp {
			return fmt.Errorf("window header: %s is %d, expected %d: %w", what, got, exp, shm.ErrMismatch)
		}
		return nil
	}
	checks := []error{
		want("header length", h.HeaderLen, uint64(format.WinHeaderLen(n))),
		want("total size", h.TotalSize, uint64(sp.layout.Total)),
		want("ranks", uint64(le.Uint32(mem[format.WinRanks:])), uint64(n)),
		want("flavor", uint64(le.Uint32(mem[format.WinFlavor:])), uint64(sp.flavor)),
		want("flags", uint64(le.Uint32(mem[format.WinFlags:])), uint64(sp.flags)),
		want("stripes", uint64(le.Uint32(mem[format.WinStripes:])), format.NumStripes),
		want("sync offset", le.Uint64(mem[format.WinSyncOff:]), uint64(sp.layout.SyncOff)),
		want("sync length", le.Uint64(mem[format.WinSyncLen:]), uint64(sp.layout.SyncLen)),
		want("alignment", le.Uint64(mem[format.WinAlign:]), uint64(sp.layout.Align)),
	}
	for i := range n {
		checks = append(checks,
			want(fmt.Sprintf("size of rank %d", i), le.Uint64(mem[format.WinSizeOff(i):]), uint64(sp.layout.Sizes[i])),
			want(fmt.Sprintf("disp unit of rank %d", i), le.Uint64(mem[format.WinDispUnitOff(n, i):]), uint64(sp.dispUnits[i])),
			want(fmt.Sprintf("offset of rank %d", i), le.Uint64(mem[format.WinDataOffOff(n, i):]), uint64(sp.layout.Offsets[i])))
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	return nil
}
