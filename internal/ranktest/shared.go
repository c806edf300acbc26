//go:build !mpi

package ranktest

import (
	"fmt"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/team"
	"github.com/shmrun/shmrun/shm"
)

// MapShared is a collective call, for rank bodies that need a scratch block
// of memory shared by every rank of c before windows exist (or to check
// windows against): rank 0 creates an object of size bytes in the job's shm
// directory, the others open it, everyone maps it, and rank 0 unlinks it once
// all have mapped, so nothing is left in the directory even if the job dies.
// The memory starts zeroed and page-aligned. unmap releases this rank's
// mapping. name must be unique among the job's concurrent MapShared calls.
func MapShared(c *comm.Comm, name string, size int) (mem []byte, unmap func(), err error) {
	t, err := team.OfComm(c, "MapShared")
	if err != nil {
		return nil, nil, err
	}
	objName := format.ObjectName(t.Job(), "ranktest-"+name)
	var obj *shm.Object
	if c.Rank() == 0 {
		obj, err = shm.Create(t.Dir(), objName, int64(size))
	}
	// Everyone learns whether rank 0 made it before trying to open it.
	if first, aerr := t.Agree(err != nil); aerr != nil {
		return nil, nil, aerr
	} else if first >= 0 {
		return nil, nil, fmt.Errorf("ranktest: MapShared %s: rank 0 could not create it: %v", name, err)
	}
	if c.Rank() != 0 {
		obj, err = shm.Open(t.Dir(), objName, int64(size))
	}
	if err == nil {
		mem, err = obj.Map(int64(size))
		obj.Close()
	}
	first, aerr := t.Agree(err != nil)
	if c.Rank() == 0 {
		_ = obj.Unlink() // everyone has mapped it, or given up
	}
	switch {
	case aerr != nil:
		err = aerr
	case err != nil:
		err = fmt.Errorf("ranktest: MapShared %s: %w", name, err)
	case first >= 0:
		err = fmt.Errorf("ranktest: MapShared %s: rank %d could not map it", name, first)
	}
	if err != nil {
		_ = shm.Unmap(mem)
		return nil, nil, err
	}
	return mem, func() { _ = shm.Unmap(mem) }, nil
}
