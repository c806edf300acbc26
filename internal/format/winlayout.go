package format

import (
	"fmt"
	"math"

	"github.com/shmrun/shmrun/shm"
)

// WindowLayout places a window's parts in its segment:
//
//	[0, HeaderLen)          header page(s): fixed header + per-rank tables
//	[SyncOff, +SyncLen)     sync block: lock words, counters, stripes
//	[Offsets[0], Total)     rank data
//
// Contiguous: rank i's data starts right after rank i-1's last byte (rank 0's
// starts page-aligned), as MPI_Win_allocate_shared requires. Noncontig: each
// rank's data starts on its own Align boundary, so first touch by the owner
// places it on the owner's NUMA node and no two ranks share a page.
type WindowLayout struct {
	HeaderLen int64
	SyncOff   int64
	SyncLen   int64
	Align     int64 // per-rank alignment when Noncontig
	Noncontig bool
	Sizes     []int64
	Offsets   []int64 // data offset of each rank in the segment
	Total     int64   // segment size, a page multiple
}

// NewWindowLayout computes a layout for the per-rank data sizes. headerLen and
// syncLen are rounded up to pages. align is the per-rank alignment for the
// noncontig layout (shm.PageSize or shm.HugePageSize). Sizes above 4 GiB are fine.
func NewWindowLayout(sizes []int64, headerLen, syncLen int64, noncontig bool, align int64) (WindowLayout, error) {
	l := WindowLayout{Noncontig: noncontig, Align: align, Sizes: sizes, Offsets: make([]int64, len(sizes))}
	if align <= 0 || align&(align-1) != 0 || align < shm.PageSize {
		return l, fmt.Errorf("format: window layout: alignment %d is not a power-of-two multiple of the page size: %w", align, shm.ErrSize)
	}
	var ok bool
	if l.HeaderLen, ok = shm.AlignUp(headerLen, shm.PageSize); !ok {
		return l, fmt.Errorf("format: window layout: header %d bytes: %w", headerLen, shm.ErrSize)
	}
	l.SyncOff = l.HeaderLen
	if l.SyncLen, ok = shm.AlignUp(syncLen, shm.PageSize); !ok {
		return l, fmt.Errorf("format: window layout: sync block %d bytes: %w", syncLen, shm.ErrSize)
	}
	at := l.SyncOff + l.SyncLen
	if noncontig {
		if at, ok = shm.AlignUp(at, align); !ok {
			return l, fmt.Errorf("format: window layout: %w", shm.ErrSize)
		}
	}
	for i, s := range sizes {
		if s < 0 {
			return l, fmt.Errorf("format: window layout: rank %d size %d is negative: %w", i, s, shm.ErrSize)
		}
		if noncontig {
			if at, ok = shm.AlignUp(at, align); !ok {
				return l, fmt.Errorf("format: window layout: rank %d: total overflows: %w", i, shm.ErrSize)
			}
		}
		l.Offsets[i] = at
		if s > math.MaxInt64-at {
			return l, fmt.Errorf("format: window layout: rank %d size %d: total overflows: %w", i, s, shm.ErrSize)
		}
		at += s
	}
	if l.Total, ok = shm.AlignUp(at, shm.PageSize); !ok {
		return l, fmt.Errorf("format: window layout: total %d: %w", at, shm.ErrSize)
	}
	return l, nil
}

// Part returns rank's data range [off, off+size) in the segment.
func (l WindowLayout) Part(rank int) (off, size int64) { return l.Offsets[rank], l.Sizes[rank] }

// Reservation returns the range rank reserves (fallocates) itself. In the
// noncontig layout a rank reserves its padded part; in the contiguous layout
// the pages of its bytes. Rank 0 also reserves the header and sync block.
func (l WindowLayout) Reservation(rank int) (off, length int64) {
	off, size := l.Part(rank)
	end := off + size
	if l.Noncontig && size > 0 {
		end, _ = shm.AlignUp(end, l.Align)
		end = min(end, l.Total)
	}
	if rank == 0 {
		off = 0
	}
	off = off &^ (shm.PageSize - 1)
	end, _ = shm.AlignUp(end, shm.PageSize)
	return off, max(0, min(end, l.Total)-off)
}
