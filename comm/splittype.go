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
// ranks that no level splits. A rank may pass SplitKind(Undefined) where
// the others pass a kind: it gets nil, and the others split among
// themselves. For TypeHWUnguided the level chosen is written into info
// (which must then be non-nil to receive it). An unknown kind, or ranks
// passing different kinds, is ErrArg on every rank.
func (c *Comm) SplitType(kind SplitKind, key int, info Info) (*Comm, error) {
	if err := c.check("SplitType"); err != nil {
		return nil, err
	}
	if err := c.agreeCall("SplitType", format.CollSplitType); err != nil {
		return nil, err
	}
	// Every rank first publishes its kind, and for TypeHWUnguided its
	// location: a rank passing Undefined cannot know which kind the others
	// pass, so all take the same rounds whatever the kind, and the
	// unguided level is found among the ranks that ask for it.
	le := binary.LittleEndian
	var mine [4 + 4*len(topo.Location{})]byte
	le.PutUint32(mine[:], uint32(int32(kind)))
	var loc topo.Location
	var lerr error
	switch kind {
	case SplitKind(Undefined), TypeShared, TypeHWGuided:
	case TypeHWUnguided:
		if loc, lerr = c.location(); lerr != nil {
			lerr = fmt.Errorf("comm: SplitType on rank %d: reading the hardware: %v: %w", c.Rank(), lerr, ErrOther)
		}
		for i, v := range loc {
			le.PutUint32(mine[4+4*i:], uint32(v))
		}
	default:
		lerr = fmt.Errorf("comm: SplitType on rank %d: split kind %d: %w", c.Rank(), int(kind), ErrArg)
	}
	slots, first, err := c.t.Exchange(mine[:], lerr != nil)
	if err != nil {
		return nil, c.wrapWait("SplitType", err)
	}
	kindOf := func(r int) SplitKind { return SplitKind(int32(le.Uint32(slots[r*format.SlotLen:]))) }
	switch {
	case lerr != nil:
		return nil, lerr
	case first >= 0 && kindOf(first) == TypeHWUnguided:
		return nil, fmt.Errorf("comm: SplitType on rank %d: rank %d could not read the hardware: %w", c.Rank(), first, ErrOther)
	case first >= 0:
		return nil, fmt.Errorf("comm: SplitType on rank %d: rank %d passed split kind %d: %w", c.Rank(), first, int(kindOf(first)), ErrArg)
	}
	var all SplitKind // the kind of the ranks that pass one
	for r := range c.Size() {
		k := kindOf(r)
		switch {
		case k == SplitKind(Undefined):
		case all == 0:
			all = k
		case k != all:
			return nil, fmt.Errorf("comm: SplitType on rank %d: ranks passed split kinds %d and %d: %w", c.Rank(), int(all), int(k), ErrArg)
		}
	}
	color := Undefined
	switch kind {
	case TypeShared:
		color = 0
	case TypeHWGuided:
		color, err = c.guidedColor(info[HWResourceType])
	case TypeHWUnguided:
		var locs []topo.Location
		for r := range c.Size() {
			if kindOf(r) != TypeHWUnguided {
				continue
			}
			var l topo.Location
			for i := range l {
				l[i] = int32(le.Uint32(slots[r*format.SlotLen+4+4*i:]))
			}
			locs = append(locs, l)
		}
		level, ok := topo.Unguided(locs)
		if ok && loc.At(level) >= 0 {
			color = loc.At(level)
		}
		nc, err := c.splitChecked("SplitType", color, key, nil)
		if nc != nil && info != nil {
			info[HWResourceType] = levelName(level)
		}
		return nc, err
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

// topoState is the world's cached reading of the hardware.
type topoState struct {
	topoOnce sync.Once
	topoLoc  topo.Location
	topoErr  error
}
