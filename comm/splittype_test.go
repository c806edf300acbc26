//go:build !mpi

package comm_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/internal/topo"
	"github.com/shmrun/shmrun/launcher"
	"github.com/shmrun/shmrun/win"
)

// allLocations gathers every rank's hardware location through a window
// (each rank writes its own, a fence, everyone reads all), an independent
// way to know which ranks SplitType should put together.
func allLocations(w *comm.Comm) ([]topo.Location, error) {
	t, err := topo.Current()
	if err != nil {
		return nil, err
	}
	mine := t.Locate(t.Allowed())
	n := len(mine)
	win0, err := win.AllocateShared(w, 4*n, 4, nil)
	if err != nil {
		return nil, err
	}
	defer win0.Free()
	if err := win0.Fence(0); err != nil {
		return nil, err
	}
	// Each rank's own part holds its own location; read them all after a fence.
	own := make([]int32, n)
	copy(own, mine[:])
	if err := win.PutT(win0, own, w.Rank(), 0); err != nil {
		return nil, err
	}
	if err := win0.Fence(0); err != nil {
		return nil, err
	}
	locs := make([]topo.Location, w.Size())
	for r := range locs {
		buf := make([]int32, n)
		if err := win.GetT(win0, buf, r, 0); err != nil {
			return nil, err
		}
		copy(locs[r][:], buf)
	}
	return locs, win0.Fence(win.ModeNoSucceed)
}

func splitType(w *comm.Comm) error {
	me := w.Rank()
	locs, err := allLocations(w)
	if err != nil {
		return err
	}
	// TypeShared: everyone, ranked by key.
	sh, err := w.SplitType(comm.TypeShared, -me, nil)
	if err != nil {
		return err
	}
	if sh == nil || sh.Size() != w.Size() || sh.Rank() != w.Size()-1-me {
		return fmt.Errorf("rank %d: TypeShared gave %v", me, sh)
	}
	// Guided, every level: the members are exactly the ranks in my instance.
	for _, level := range []string{"mpi_shared_memory", "Package", "NUMANode", "L3Cache", "L2Cache", "Core", "HWThread"} {
		lv, _ := topo.ParseLevel(level)
		c, err := w.SplitType(comm.TypeHWGuided, 0, comm.Info{comm.HWResourceType: level})
		if err != nil {
			return err
		}
		var want []int
		if locs[me].At(lv) >= 0 {
			for r, l := range locs {
				if l.At(lv) == locs[me].At(lv) {
					want = append(want, r)
				}
			}
		}
		got, err := worldRanks(c, w)
		if c == nil {
			got, err = nil, nil
		}
		if err != nil {
			return err
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("rank %d: guided %s: members %v, want %v (locations %v)", me, level, got, want, locs)
		}
		if c != nil {
			if err := c.Free(); err != nil {
				return err
			}
		}
	}
	// No key, an unknown resource: no communicator, no error.
	for _, info := range []comm.Info{nil, {}, {comm.HWResourceType: "Gizmo"}} {
		if c, err := w.SplitType(comm.TypeHWGuided, 0, info); c != nil || err != nil {
			return fmt.Errorf("rank %d: guided with %v = %v, %v; want nil, nil", me, info, c, err)
		}
	}
	// Unguided: split again until nothing splits; each step strictly smaller.
	cur, size := w, w.Size()
	for steps := 0; ; steps++ {
		info := comm.Info{}
		next, err := cur.SplitType(comm.TypeHWUnguided, 0, info)
		if err != nil {
			return err
		}
		if cur != w {
			if err := cur.Free(); err != nil {
				return err
			}
		}
		if next == nil {
			break
		}
		if _, err := topo.ParseLevel(info[comm.HWResourceType]); err != nil || next.Size() >= size || steps > 8 {
			return fmt.Errorf("rank %d: unguided step %d gave %d of %d ranks at %q", me, steps, next.Size(), size, info[comm.HWResourceType])
		}
		cur, size = next, next.Size()
	}
	if _, err := w.SplitType(comm.SplitKind(99), 0, nil); !errors.Is(err, comm.ErrArg) {
		return fmt.Errorf("rank %d: SplitType(99) = %v, want ErrArg", me, err)
	}
	return nil
}

func init() { ranktest.Register("splittype", splitType) }

// TestSplitType: unbound ranks, and ranks bound one per core, split by
// every kind; the expected groups come from the ranks' own locations.
func TestSplitType(t *testing.T) {
	ranktest.Run(t, 3, "splittype", ranktest.Configure(func(c *launcher.Config) { c.Oversubscribe = true }))
	if len(launcher.CPUs()) >= 2 {
		ranktest.Run(t, 2, "splittype", ranktest.Configure(func(c *launcher.Config) { c.BindTo = "core" }))
	}
	runWorld(t, 3, splitType)
}

// TestSplitTypeUndefined: be_splittype_undefined (TestBackends runs it
// as processes) in one process.
func TestSplitTypeUndefined(t *testing.T) { runWorld(t, 3, beSplitTypeUndefined) }
