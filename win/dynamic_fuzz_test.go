//go:build !mpi

package win

import (
	"encoding/binary"
	"sync/atomic"
	"testing"

	"github.com/shmrun/shmrun/internal/format"
)

// FuzzAttachTable: an origin's lookup in an attach table written by another
// process (a C program, or memory gone bad) never panics or reads outside
// the table, and a region it reports holds the whole range asked for.
func FuzzAttachTable(f *testing.F) {
	const max = 4
	good := make([]byte, format.AttachTableLen(max))
	le := binary.LittleEndian
	le.PutUint64(good[format.AttachCount:], 2)
	for i, r := range [][2]uint64{{0x1000, 64}, {0x2000, 4096}} {
		e := good[format.AttachEntries+i*format.AttachEntryLen:]
		le.PutUint64(e[format.AttachBase:], r[0])
		le.PutUint64(e[format.AttachLen:], r[1])
	}
	f.Add(good, uint64(0x2010), 8)
	f.Add(good, uint64(0x1038), 16)
	f.Add(good, ^uint64(0), 1)
	f.Fuzz(func(t *testing.T, table []byte, addr uint64, n int) {
		if n < 0 || n > 1<<20 {
			return
		}
		tab := make([]byte, format.AttachTableLen(max)) // aligned, whole
		copy(tab, table)
		le.PutUint64(tab[format.AttachSeq:], le.Uint64(tab[format.AttachSeq:])&^1) // a stable table
		d := &dynamic{tables: [][]byte{tab}, maxes: []int{max}}
		var abort uint32
		e, found, _, err := d.lookup(&abort, 0, addr, n)
		if err != nil {
			t.Fatal(err)
		}
		if found && (addr < e.base || addr-e.base > e.n || uint64(n) > e.n-(addr-e.base)) {
			t.Fatalf("lookup of %d bytes at %#x found the region of %d bytes at %#x", n, addr, e.n, e.base)
		}
	})
}

// FuzzHotRegion: the fast paths' bounds checks against the last region
// found never let a range out of it, and leave every access slot free.
func FuzzHotRegion(f *testing.F) {
	f.Add(uint64(0x1000), uint16(64), uint64(0x1040), 16)
	f.Add(uint64(0x1000), uint16(64), uint64(0x1038), 8)
	f.Fuzz(func(t *testing.T, base uint64, size uint16, addr uint64, n int) {
		if n < 0 || n > 1<<17 || base+uint64(size) < base {
			return // n: the pinned path copies from or into n real bytes
		}
		var seq uint64
		var slots [accessSlots]uint64
		var abort uint32
		d := &dynamic{seqs: []*uint64{&seq}, hot: make([]atomic.Pointer[hotRegion], 1), abort: &abort, plain: true}
		for i := range slots {
			d.slots[i] = &slots[i]
		}
		d.hot[0].Store(&hotRegion{base: base, end: base + uint64(size), data: make([]byte, size)})
		inside := addr >= base && uint64(n) <= uint64(size) && addr-base <= uint64(size)-uint64(n)
		// The pinned path (which may also refuse for want of a slot of
		// this processor) copies only inside the region.
		for _, put := range []bool{true, false} {
			if d.copyPinned(0, addr, make([]byte, n), put) && !inside {
				t.Fatalf("copyPinned took %d bytes at %#x from the %d-byte region at %#x", n, addr, size, base)
			}
		}
		if b, slot, sv, ok := d.hotData(0, addr, n); ok {
			leaveSlot(slot, sv)
			if len(b) != n || !inside {
				t.Fatalf("%d bytes at %#x taken from the %d-byte region at %#x", n, addr, size, base)
			}
		}
		for i, s := range slots {
			if uint32(s) != 0 {
				t.Fatalf("access slot %d still claimed: %#x", i, s)
			}
		}
	})
}
