//go:build mpi

package win

import (
	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/shm"
)

// localParts returns the parts of w this process can reach by load and
// store, by rank: every rank's of a shared window, this rank's own
// otherwise (the others nil).
func (w *Win) localParts() ([][]byte, error) {
	out := make([][]byte, w.size)
	if w.flavor != FlavorShared {
		out[w.rank] = w.mem
		return out, nil
	}
	for r := range w.size {
		s, err := w.SharedQuery(r)
		if err != nil {
			return nil, err
		}
		out[r] = s.Bytes
	}
	return out, nil
}

// Placement reports, for each rank's part of w that this process maps,
// how many of its pages sit on which NUMA node (move_pages, which moves
// nothing when asked no target); pages that exist but this process has
// not touched are mapped in first. Local; it blocks only for the system
// calls. Under the MPI backend those are every part of an AllocateShared
// window and this rank's own part of the others (other ranks' parts
// report no pages: they may be on other nodes). Where the kernel refuses
// move_pages it falls back to /proc/self/numa_maps for this rank's part:
// one PartPlacement with Rank -1.
func Placement(w *Win) ([]PartPlacement, error) {
	if err := w.usable("Placement"); err != nil {
		return nil, err
	}
	parts, err := w.localParts()
	if err != nil {
		return nil, err
	}
	page := int(shm.PageSize)
	out := make([]PartPlacement, 0, w.size)
	for r, b := range parts {
		pp := PartPlacement{Rank: r, Nodes: map[int]int{}}
		if len(b) > 0 {
			// The whole pages the part touches: all mapped, as the part is.
			lo := raw.Addr(b) &^ uintptr(page-1)
			hi := (raw.Addr(b) + uintptr(len(b)) + uintptr(page-1)) &^ uintptr(page-1)
			ok, err := countPart(&pp, raw.At(lo, int(hi-lo)), page)
			if !ok {
				return placementFromMaps(w.rank, w.mem, err)
			}
			if err != nil {
				return nil, errorf(ErrOther, "Placement on rank %d: %v", w.rank, err)
			}
		}
		out = append(out, pp)
	}
	return out, nil
}

// Checked is checked load/store access to one rank's part of a window
// (shmrun --check on the shmrun backend). Under the MPI backend nothing
// checks accesses, so its methods are a slice's: the same program builds
// and runs on both backends. Like a View, it aliases the window's memory:
// not to be used after Free; an index out of range panics as a slice's
// does.
type Checked[T atomics.Elem] struct {
	s []T
}

// NewChecked returns access to rank target's part of w: this rank's own,
// or, on an AllocateShared window, another rank's mapped here. Local.
// Errors as SharedQuery's (another rank's part of a window that is not
// shared: ErrRMAFlavor) and View's.
func NewChecked[T atomics.Elem](w *Win, target int) (Checked[T], error) {
	var b []byte
	if err := w.usable("NewChecked"); err != nil {
		return Checked[T]{}, err
	}
	if target == w.rank && w.flavor != FlavorShared {
		b = w.mem
	} else {
		seg, err := w.SharedQuery(target)
		if err != nil {
			return Checked[T]{}, err
		}
		b = seg.Bytes
	}
	s, err := View[T](b)
	if err != nil {
		return Checked[T]{}, err
	}
	return Checked[T]{s: s}, nil
}

// Len is the number of elements.
func (c Checked[T]) Len() int { return len(c.s) }

// Load returns element i.
func (c Checked[T]) Load(i int) T { return c.s[i] }

// Store sets element i.
func (c Checked[T]) Store(i int, v T) { c.s[i] = v }

// LoadSlice copies elements [i, i+len(dst)) into dst.
func (c Checked[T]) LoadSlice(dst []T, i int) { copy(dst, c.s[i:i+len(dst)]) }

// StoreSlice copies src into elements [i, i+len(src)).
func (c Checked[T]) StoreSlice(i int, src []T) { copy(c.s[i:i+len(src)], src) }
