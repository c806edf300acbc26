//go:build mpi

package win_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/win"
)

func TestMain(m *testing.M) { ranktest.Main(m) }

// mpiBackend: these tests run over an MPI (-tags mpi).
const mpiBackend = true

func init() { ranktest.Register("mpi_typecache", mpiTypeCache) }

// TestMPITypeCache: the MPI datatypes the backend makes for the target
// types of RMA calls go once the program drops the types, so a program
// that makes a type per call does not grow for ever.
func TestMPITypeCache(t *testing.T) { ranktest.Run(t, 2, "mpi_typecache") }

func mpiTypeCache(c *comm.Comm) error {
	w, err := win.Allocate(c, 1<<10, 8, nil)
	if err != nil {
		return err
	}
	i64 := dtype.Basic(atomics.Int64)
	if err := w.LockAll(0); err != nil {
		return err
	}
	for i := range 2000 {
		v, err := dtype.Vector(1+i%7, 1, 2, i64)
		if err == nil {
			err = v.Commit()
		}
		if err == nil {
			err = win.PutType(w, make([]byte, 8*(1+i%7)), 1+i%7, i64, (c.Rank()+1)%c.Size(), 0, 1, v)
		}
		if err == nil {
			err = w.FlushAll()
		}
		if err != nil {
			return err
		}
	}
	if err := w.UnlockAll(); err != nil {
		return err
	}
	for range 5 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := win.MPITypesCached(); n > 100 {
		return fmt.Errorf("%d MPI datatypes cached after 2000 dropped types", n)
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	return w.Free()
}
