package format_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/shm"
)

// checkLayout verifies what every layout promises.
func checkLayout(t *testing.T, l format.WindowLayout) {
	t.Helper()
	p := shm.PageSize
	if l.HeaderLen%p != 0 || l.SyncOff != l.HeaderLen || l.SyncLen%p != 0 || l.Total%p != 0 {
		t.Errorf("header %d, sync %d+%d, total %d: not page multiples", l.HeaderLen, l.SyncOff, l.SyncLen, l.Total)
	}
	dataStart := l.SyncOff + l.SyncLen
	if l.Noncontig || l.MinAlign > 1 {
		dataStart, _ = shm.AlignUp(dataStart, l.Align)
	}
	for i, s := range l.Sizes {
		if s%l.MinAlign != 0 || l.Offsets[i]%l.MinAlign != 0 || l.Asked != nil && (s < l.Asked[i] || s-l.Asked[i] >= l.MinAlign) {
			t.Errorf("rank %d: part [%d, +%d) for %v asked: not padded to a multiple of %d", i, l.Offsets[i], s, l.Asked, l.MinAlign)
		}
	}
	if len(l.Sizes) > 0 && l.Offsets[0] != dataStart {
		t.Errorf("rank 0's data at %d, want %d", l.Offsets[0], dataStart)
	}
	end := dataStart
	for i, s := range l.Sizes {
		off, size := l.Part(i)
		if size != s {
			t.Errorf("Part(%d) size %d, want %d", i, size, s)
		}
		switch {
		case !l.Noncontig && off != end:
			t.Errorf("contiguous: rank %d's data at %d, want right after rank %d's, at %d", i, off, i-1, end)
		case l.Noncontig && (off%l.Align != 0 || off < end):
			t.Errorf("noncontig: rank %d's data at %d: not %d-aligned or overlapping the previous part (ends at %d)", i, off, l.Align, end)
		}
		end = off + size
	}
	if end > l.Total || l.Total-end >= p {
		t.Errorf("total %d for data ending at %d", l.Total, end)
	}

	// Reservations stay inside the segment, are page-aligned and start
	// in their rank's part (none covers padding before it); with the
	// header and sync block (rank 0's when it makes the segment) they
	// cover every byte of data, and Reserved counts them.
	covered := map[int64]bool{} // page number -> reserved
	reserved := l.HeaderLen + l.SyncLen
	for r := range l.Sizes {
		off, n := l.Reservation(r)
		reserved += n
		if off%p != 0 || n%p != 0 || off < 0 || n < 0 || off+n > l.Total {
			t.Errorf("Reservation(%d) = [%d, +%d) in a %d-byte segment", r, off, n, l.Total)
		}
		if n > 0 && off+p <= l.Offsets[r] {
			t.Errorf("Reservation(%d) = [%d, +%d) starts a page or more before its part (at %d)", r, off, n, l.Offsets[r])
		}
		if l.Noncontig && r+1 < len(l.Sizes) && off+n > l.Offsets[r+1] && l.Sizes[r+1] > 0 {
			t.Errorf("noncontig: rank %d reserves into rank %d's part", r, r+1)
		}
		for pg := off / p; pg < (off+n)/p; pg++ {
			covered[pg] = true
		}
	}
	if got := l.Reserved(); got != min(reserved, l.Total) {
		t.Errorf("Reserved() = %d, want %d (the header, sync block and reservations) in a %d-byte segment", got, reserved, l.Total)
	}
	asked := l.Sizes
	if l.Asked != nil {
		asked = l.Asked
	}
	for r, s := range asked {
		if s > 64<<20 {
			continue // the map would be too big; the ends are what matter
		}
		for b := l.Offsets[r]; b < l.Offsets[r]+s; b += p {
			if !covered[b/p] {
				t.Fatalf("byte %d of rank %d's data is in no reservation", b-l.Offsets[r], r)
			}
		}
	}
}

func TestWindowLayout(t *testing.T) {
	p := shm.PageSize
	tests := []struct {
		name      string
		sizes     []int64
		noncontig bool
		align     int64
		header    int64
		offsets   []int64 // nil: only the invariants are checked
		total     int64
	}{
		{"contiguous", []int64{100, 0, 4097, 8}, false, p, 100, []int64{2 * p, 2*p + 100, 2*p + 100, 2*p + 4197}, 4 * p},
		{"noncontig", []int64{100, 0, 4097, 8}, true, p, 100, []int64{2 * p, 3 * p, 3 * p, 5 * p}, 6 * p},
		{"noncontig huge pages", []int64{1, 3 << 20, 1}, true, shm.HugePageSize, p, []int64{2 << 20, 4 << 20, 8 << 20}, 8<<20 + p},
		{"all zero", []int64{0, 0, 0}, false, p, 1, []int64{2 * p, 2 * p, 2 * p}, 2 * p},
		{"all zero noncontig", []int64{0, 0, 0}, true, p, 1, []int64{2 * p, 2 * p, 2 * p}, 2 * p},
		{"no ranks", nil, false, p, 1, nil, 2 * p},
		{"one rank", []int64{1}, false, p, 1, []int64{2 * p}, 3 * p},
		{"over 4 GiB", []int64{5 << 30, 3 << 30, 7}, false, p, 1, []int64{2 * p, 2*p + 5<<30, 2*p + 8<<30}, 3*p + 8<<30},
		{"over 4 GiB noncontig", []int64{5<<30 + 1, 3 << 30}, true, shm.HugePageSize, 1, []int64{2 << 20, 2<<20 + 5<<30 + 2<<20}, 4<<20 + 8<<30},
		{"odd sizes", []int64{1, 2, 3, 5, 8, 13, 4095, 4096, 4097}, false, p, 40, nil, 0},
		{"odd sizes noncontig", []int64{1, 2, 3, 5, 8, 13, 4095, 4096, 4097}, true, p, 40, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := format.NewWindowLayout(tt.sizes, tt.header, 1, tt.noncontig, tt.align, 1)
			if err != nil {
				t.Fatal(err)
			}
			checkLayout(t, l)
			if tt.offsets != nil {
				for i, want := range tt.offsets {
					if l.Offsets[i] != want {
						t.Errorf("rank %d at %d, want %d", i, l.Offsets[i], want)
					}
				}
			}
			if tt.total != 0 && l.Total != tt.total {
				t.Errorf("total %d, want %d", l.Total, tt.total)
			}
		})
	}
}

// TestWindowLayoutMinAlign: a minimum alignment pads every part to a
// multiple of it, starts every part on one, keeps the contiguous layout
// contiguous over the padded sizes and reserves only the bytes asked for
// (checkLayout); the caller's sizes are left alone.
func TestWindowLayoutMinAlign(t *testing.T) {
	p := shm.PageSize
	for _, a := range []int64{1, 8, 64, 256, p, 2 * p, 2 << 20, 1 << 30} {
		for _, nc := range []bool{false, true} {
			sizes := []int64{1, 0, 100, 4097, 0, 3 << 20, 7}
			keep := slices.Clone(sizes)
			l, err := format.NewWindowLayout(sizes, 100, 1, nc, p, a)
			if err != nil {
				t.Fatalf("align %d noncontig %v: %v", a, nc, err)
			}
			checkLayout(t, l)
			if !slices.Equal(sizes, keep) {
				t.Errorf("align %d: the caller's sizes changed to %v", a, sizes)
			}
			if l.MapAlign() != max(p, a) {
				t.Errorf("align %d: MapAlign %d", a, l.MapAlign())
			}
			if a > p {
				// Padding is address space: nobody reserves a whole aligned part for 1 byte.
				if _, n := l.Reservation(6); n > p {
					t.Errorf("align %d: rank 6 asked 7 bytes and reserves %d", a, n)
				}
			}
		}
	}
	for _, a := range []int64{0, -64, 3, 96, format.MaxMinAlign * 2} {
		if _, err := format.NewWindowLayout([]int64{1}, 1, 1, false, p, a); !errors.Is(err, shm.ErrSize) {
			t.Errorf("minimum alignment %d: %v, want ErrSize", a, err)
		}
	}
	if _, err := format.NewWindowLayout([]int64{math.MaxInt64 - 10}, 1, 1, false, p, 64); !errors.Is(err, shm.ErrSize) {
		t.Errorf("a size that overflows when padded: %v, want ErrSize", err)
	}
}

func TestWindowLayoutErrors(t *testing.T) {
	p := shm.PageSize
	const big = math.MaxInt64 / 2
	tests := []struct {
		name         string
		sizes        []int64
		header, sync int64
		noncontig    bool
		align        int64
	}{
		{"negative size", []int64{1, -1}, 1, 1, false, p},
		{"sum overflows", []int64{big, big, big}, 1, 1, false, p},
		{"one size overflows", []int64{math.MaxInt64}, 1, 1, false, p},
		{"overflow by padding", []int64{math.MaxInt64 - 2*p - 1}, 1, 1, false, p},
		{"noncontig padding overflows", []int64{math.MaxInt64 - 2*p - 10, 1}, 1, 1, true, p},
		{"header overflows", []int64{1}, math.MaxInt64, 1, false, p},
		{"sync overflows", []int64{1}, 1, math.MaxInt64, false, p},
		{"align zero", []int64{1}, 1, 1, true, 0},
		{"align not a power of two", []int64{1}, 1, 1, true, 3 * p},
		{"align below a page", []int64{1}, 1, 1, true, p / 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := format.NewWindowLayout(tt.sizes, tt.header, tt.sync, tt.noncontig, tt.align, 1)
			if !errors.Is(err, shm.ErrSize) {
				t.Errorf("NewWindowLayout = %v, want ErrSize", err)
			}
		})
	}
}
