//go:build !mpi

package comm

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/topo"
)

// SplitType partitions c by the hardware (MPI_Comm_split_type). Collective
// over c; ranks in a new communicator are ordered by key, then by rank in c.
// A rank gets nil and no error when the kind gives it no communicator: a
// rank whose CPUs span several instances of the guided resource (it is not
// bound inside one), an info without the resource key or with a name this
// runtime does not know (the standard's answer), or an unguided split of
// ranks that no level splits. For TypeHWUnguided the level chosen is written
// into info (which must then be non-nil to receive it). An unknown kind is
// ErrArg on every rank.
func (c *Comm) SplitType(kind SplitKind, key int, info Info) (*Comm, error) {
	if err := c.check("SplitType"); err != nil {
		return nil, err
	}
	if err := c.agreeCall("SplitType", format.CollSplitType); err != nil {
		return nil, err
	}
	color := Undefined
	var err error
	switch kind {
	case TypeShared:
		color = 0
	case TypeHWGuided:
		color, err = c.guidedColor(info[HWResourceType])
	case TypeHWUnguided:
		return c.splitUnguided(key, info)
	default:
		err = fmt.Errorf("comm: SplitType on rank %d: split kind %d: %w", c.Rank(), int(kind), ErrArg)
	}
	return c.splitChecked("SplitType", color, key, err)
}

// location is this process's place in the hardware: read once per world.
func (c *Comm) location() (topo.Location, error) {
	w := c.world
	w.topoOnce.Do(func() { w.topoLoc, w.topoErr = readLocation() })
	return w.topoLoc, w.topoErr
}

func (c *Comm) guidedColor(resource string) (int, error) {
	if resource == "" {
		return Undefined, nil
	}
	level, err := topo.ParseLevel(resource)
	if err != nil {
		return Undefined, nil // a name this runtime does not know: no communicator
	}
	loc, err := c.location()
	if err != nil {
		return Undefined, fmt.Errorf("comm: SplitType on rank %d: reading the hardware: %v: %w", c.Rank(), err, ErrOther)
	}
	if i := loc.At(level); i >= 0 {
		return i, nil
	}
	return Undefined, nil
}

// splitUnguided exchanges every rank's location, finds the level at which
// they first split, and splits there.
func (c *Comm) splitUnguided(key int, info Info) (*Comm, error) {
	loc, lerr := c.location()
	var mine [4 * len(topo.Location{})]byte
	for i, v := range loc {
		binary.LittleEndian.PutUint32(mine[4*i:], uint32(v))
	}
	slots, first, err := c.t.Exchange(mine[:], lerr != nil)
	if err != nil {
		return nil, c.wrapWait("SplitType", err)
	}
	if first >= 0 {
		return nil, fmt.Errorf("comm: SplitType on rank %d: rank %d could not read the hardware: %w", c.Rank(), first, ErrOther)
	}
	locs := make([]topo.Location, c.Size())
	for r := range locs {
		for i := range locs[r] {
			locs[r][i] = int32(binary.LittleEndian.Uint32(slots[r*format.SlotLen+4*i:]))
		}
	}
	level, ok := topo.Unguided(locs)
	color := Undefined
	if ok && loc.At(level) >= 0 {
		color = loc.At(level)
	}
	nc, err := c.splitChecked("SplitType", color, key, nil)
	if nc != nil && info != nil {
		info[HWResourceType] = levelName(level)
	}
	return nc, err
}

// topoState is the world's cached reading of the hardware.
type topoState struct {
	topoOnce sync.Once
	topoLoc  topo.Location
	topoErr  error
}
