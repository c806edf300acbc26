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
// places it on the owner's NUMA node and no two ranks share a page. With a
// minimum alignment (info mpi_minimum_memory_alignment) every part is
// padded to a multiple of it and starts on one, contiguous or not: Sizes
// are the padded sizes, each at least what its rank asked for, as
// MPI_Win_allocate's "at least size bytes" allows, and contiguity holds
// over them.
type WindowLayout struct {
	HeaderLen int64
	SyncOff   int64
	SyncLen   int64
	Align     int64   // per-rank alignment when Noncontig, or MinAlign if larger
	MinAlign  int64   // every part's size and start are multiples of it (1: none)
	Asked     []int64 // the sizes the ranks asked for, when MinAlign padded them
	resAlign  int64   // noncontig reservations end on it (align, not MinAlign)
	Noncontig bool
	Sizes     []int64
	Offsets   []int64 // data offset of each rank in the segment
	Total     int64   // segment size, a page multiple
}

// NewWindowLayout computes a layout for the per-rank data sizes. headerLen and
// syncLen are rounded up to pages. align is the per-rank alignment for the
// noncontig layout (shm.PageSize or shm.HugePageSize); minAlign is the
// minimum alignment of every part (a power of two up to MaxMinAlign; 1 for
// none), which pads the sizes. The segment must then be mapped at an
// address aligned to MapAlign. Sizes above 4 GiB are fine.
func NewWindowLayout(sizes []int64, headerLen, syncLen int64, noncontig bool, align, minAlign int64) (WindowLayout, error) {
	l := WindowLayout{Noncontig: noncontig, Align: align, MinAlign: minAlign, Sizes: sizes, Offsets: make([]int64, len(sizes))}
	if align <= 0 || align&(align-1) != 0 || align < shm.PageSize {
		return l, fmt.Errorf("format: window layout: alignment %d is not a power-of-two multiple of the page size: %w", align, shm.ErrSize)
	}
	if minAlign <= 0 || minAlign&(minAlign-1) != 0 || minAlign > MaxMinAlign {
		return l, fmt.Errorf("format: window layout: minimum alignment %d is not a power of two up to %d: %w", minAlign, int64(MaxMinAlign), shm.ErrSize)
	}
	l.Align, l.resAlign = max(align, minAlign), align
	var ok bool
	if minAlign > 1 {
		l.Asked, l.Sizes = sizes, make([]int64, len(sizes))
		for i, s := range sizes {
			if s < 0 {
				return l, fmt.Errorf("format: window layout: rank %d size %d is negative: %w", i, s, shm.ErrSize)
			}
			if l.Sizes[i], ok = shm.AlignUp(s, minAlign); !ok {
				return l, fmt.Errorf("format: window layout: rank %d size %d padded to %d: %w", i, s, minAlign, shm.ErrSize)
			}
		}
		sizes = l.Sizes
	}
	if l.HeaderLen, ok = shm.AlignUp(headerLen, shm.PageSize); !ok {
		return l, fmt.Errorf("format: window layout: header %d bytes: %w", headerLen, shm.ErrSize)
	}
	l.SyncOff = l.HeaderLen
	if l.SyncLen, ok = shm.AlignUp(syncLen, shm.PageSize); !ok {
		return l, fmt.Errorf("format: window layout: sync block %d bytes: %w", syncLen, shm.ErrSize)
	}
	at := l.SyncOff + l.SyncLen
	if noncontig || minAlign > 1 {
		if at, ok = shm.AlignUp(at, l.Align); !ok {
			return l, fmt.Errorf("format: window layout: %w", shm.ErrSize)
		}
	}
	for i, s := range sizes {
		if s < 0 {
			return l, fmt.Errorf("format: window layout: rank %d size %d is negative: %w", i, s, shm.ErrSize)
		}
		if noncontig {
			if at, ok = shm.AlignUp(at, l.Align); !ok {
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

// MaxMinAlign is the largest minimum alignment a window's parts may ask
// for (info mpi_minimum_memory_alignment), as for AllocMem.
const MaxMinAlign = 1 << 30

// MapAlign is the alignment the segment's mapping needs in every process
// for the parts' offsets to be aligned addresses.
func (l WindowLayout) MapAlign() int64 { return max(shm.PageSize, l.MinAlign) }

// Part returns rank's data range [off, off+size) in the segment.
func (l WindowLayout) Part(rank int) (off, size int64) { return l.Offsets[rank], l.Sizes[rank] }

// Reservation returns the range rank reserves (fallocates) itself. In the
// noncontig layout a rank reserves its padded part; in the contiguous layout
// the pages of its bytes. The header and sync block are rank 0's, reserved
// when it makes the segment; the padding an alignment puts between them and
// the first part, or between parts, is nobody's: address space, never
// touched.
func (l WindowLayout) Reservation(rank int) (off, length int64) {
	off, size := l.Part(rank)
	if l.Asked != nil {
		// The padding a minimum alignment added is the rank's address
		// space, not memory it asked for: a 1 GiB alignment must not
		// reserve a GiB per rank.
		size = l.Asked[rank]
	}
	end := off + size
	if l.Noncontig && size > 0 {
		end, _ = shm.AlignUp(end, max(l.resAlign, shm.PageSize))
		end = min(end, l.Total)
	}
	off = off &^ (shm.PageSize - 1)
	end, _ = shm.AlignUp(end, shm.PageSize)
	return off, max(0, min(end, l.Total)-off)
}

// Reserved is the most memory the segment takes once every rank has
// reserved its part: the header and sync block and every rank's
// Reservation (pages two contiguous parts share counted twice), at most
// Total. With a large alignment it is far less than Total, whose padding
// is never backed: the shm directory needs room for this, not for Total.
func (l WindowLayout) Reserved() int64 {
	n := l.HeaderLen + l.SyncLen
	for r := range l.Sizes {
		_, k := l.Reservation(r)
		n += k
	}
	return min(n, l.Total)
}
