//go:build !mpi

package win

import (
	"fmt"

	"github.com/shmrun/shmrun/comm"
)

// Local returns the calling rank's part of the window (its MPI_WIN_BASE and
// MPI_WIN_SIZE as a slice): length and capacity are its size, so an append
// copies rather than writing into the next rank's part; nil for size 0.
// Local. The slice is valid until Free.
func (w *Win) Local() []byte {
	if w == nil || w.t == nil || w.freed.Load() {
		return nil
	}
	if w.ext != nil {
		return w.ext.own
	}
	return w.parts[w.rank].data
}

// SharedQuery returns rank's part of the window as mapped in this process
// (MPI_Win_shared_query): any rank, or ProcNull for the lowest rank whose size
// is nonzero (all sizes zero: rank 0's empty segment). Local. Bytes has
// capacity Size; a rank of size 0 gets nil Bytes in both layouts, and its
// position, for the contiguous layout's base-pointer arithmetic, is
// Segment.Offset. Works on Allocate windows too (MPI 4.1 allows it where
// the memory is shared), and on Create windows, where it returns the
// memory this process can map (comm.AllocMem memory, memory of another
// window, the caller's own) and, for private memory of another rank, size 0
// and nil Bytes; Offset is then 0. ProcNull picks the lowest rank whose
// Segment has a nonzero size. On a dynamic window it is ErrRMAFlavor.
func (w *Win) SharedQuery(rank int) (Segment, error) {
	if err := w.live("SharedQuery"); err != nil {
		return Segment{}, err
	}
	if w.dyn != nil {
		return Segment{}, errorf(ErrRMAFlavor, "SharedQuery on rank %d: a dynamic window has no memory of its own to query", w.rank)
	}
	rank = w.queryRank(rank)
	if rank < 0 || rank >= w.size {
		return Segment{}, errorf(ErrRank, "SharedQuery on rank %d: rank %d outside a window of %d ranks", w.rank, rank, w.size)
	}
	return w.segment(rank), nil
}

// queryRank is the rank SharedQuery(rank) answers for: ProcNull is the
// lowest rank whose part is not empty (rank 0 when all are).
func (w *Win) queryRank(rank int) int {
	if rank != ProcNull {
		return rank
	}
	for r := range w.size {
		if w.segment(r).Size > 0 {
			return r
		}
	}
	return 0
}

func (w *Win) segment(rank int) Segment {
	p := &w.parts[rank]
	if w.ext != nil {
		if rank == w.rank {
			return Segment{Size: len(w.ext.own), DispUnit: int(p.dispUnit), Bytes: w.ext.own}
		}
		return Segment{Size: len(p.data), DispUnit: int(p.dispUnit), Bytes: p.data}
	}
	return Segment{Size: len(p.data), DispUnit: int(p.dispUnit), Bytes: p.data, Offset: int(p.off - w.parts[0].off)}
}

// Attr returns the calling rank's window attributes. Local. A nil or freed
// window gives the zero Attr.
func (w *Win) Attr() Attr {
	if w == nil || w.t == nil || w.freed.Load() {
		return Attr{}
	}
	s := w.segment(w.rank)
	return Attr{Base: s.Bytes, Size: s.Size, DispUnit: s.DispUnit, Flavor: w.flavor, Model: Unified, Offset: s.Offset}
}

// Info returns the hints in effect, defaults included (MPI_Win_get_info).
// Local. A nil or freed window gives nil.
func (w *Win) Info() Info {
	if w == nil || w.t == nil || w.freed.Load() {
		return nil
	}
	in := w.cfg.info()
	if w.dyn != nil {
		in["shmrun_max_attach"] = fmt.Sprint(w.dyn.maxes[w.rank])
	}
	return in
}

// Size is the number of ranks of the window's group. Local. A nil or freed
// window gives 0.
func (w *Win) Size() int {
	if w == nil || w.freed.Load() {
		return 0
	}
	return w.size
}

// Rank is the calling rank in the window's group. Local. A nil or freed
// window gives 0 (its calls with an error result say ErrWin).
func (w *Win) Rank() int {
	if w == nil || w.freed.Load() {
		return 0
	}
	return w.rank
}

// Group returns the window's group (MPI_Win_get_group). Local. A nil or
// freed window gives nil.
func (w *Win) Group() *comm.Group {
	if w == nil || w.t == nil || w.freed.Load() {
		return nil
	}
	return w.c.Group()
}
