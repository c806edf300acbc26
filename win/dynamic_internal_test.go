//go:build !mpi

package win

import (
	"bytes"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/ranktest"
)

func init() { ranktest.Register("attach-table-scribbled", attachTableScribbledBody) }

// attachTableScribbledBody: rank 0's attach table lives in the window's
// segment, where any process of the job can write. With its count word
// set past the table and its sequence word left odd, rank 0's next Attach
// neither indexes outside the table nor leaves it looking mid-edit, and
// rank 1 reaches both regions; with the count set to 0, a Detach leaves
// one region listed (not 2^64 - 1), which rank 1 still reaches while the
// detached one is ErrRMARange.
func attachTableScribbledBody(c *comm.Comm) error {
	w, err := CreateDynamic(c, nil)
	if err != nil {
		return err
	}
	const size = 4096
	addrs := []uint64{0, 0}
	var regions [2][]byte
	table := func() (seq, count uint64) {
		d := w.dyn
		return atomic.LoadUint64(d.word(0, format.AttachSeq)), atomic.LoadUint64(d.word(0, format.AttachCount))
	}
	if c.Rank() == 0 {
		for i := range regions {
			if regions[i], err = comm.AllocMem(size, nil); err != nil {
				return err
			}
			addrs[i] = uint64(comm.Address(regions[i]))
		}
		if err := w.Attach(regions[0]); err != nil {
			return err
		}
		seq, _ := table()
		atomic.StoreUint64(w.dyn.word(0, format.AttachCount), 1<<40)
		atomic.StoreUint64(w.dyn.word(0, format.AttachSeq), seq+1)
		if err := w.Attach(regions[1]); err != nil {
			return err
		}
		if seq, count := table(); seq%2 != 0 || count != 2 {
			return fmt.Errorf("after Attach over a scribbled table: sequence %d, count %d; want even and 2", seq, count)
		}
	}
	if err := comm.Bcast(c, addrs, 0); err != nil {
		return err
	}
	put := func(i int, b byte) error {
		if err := w.LockAll(0); err != nil {
			return err
		}
		perr := w.Put(bytes.Repeat([]byte{b}, 64), 0, int(addrs[i]))
		if err := w.UnlockAll(); err != nil {
			return err
		}
		return perr
	}
	if c.Rank() == 1 {
		for i := range regions {
			if err := put(i, byte(0xA0+i)); err != nil {
				return fmt.Errorf("Put into region %d: %w", i, err)
			}
		}
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	if c.Rank() == 0 {
		for i, r := range regions {
			if !bytes.Equal(r[:64], bytes.Repeat([]byte{byte(0xA0 + i)}, 64)) {
				return fmt.Errorf("region %d holds % x, not rank 1's Put", i, r[:8])
			}
		}
		atomic.StoreUint64(w.dyn.word(0, format.AttachCount), 0)
		if err := w.Detach(regions[0]); err != nil {
			return err
		}
		if seq, count := table(); seq%2 != 0 || count != 1 {
			return fmt.Errorf("after Detach over a scribbled count: sequence %d, count %d; want even and 1", seq, count)
		}
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	if c.Rank() == 1 {
		if err := put(0, 0xB0); !errors.Is(err, ErrRMARange) {
			return fmt.Errorf("Put into the detached region: %v, want ErrRMARange", err)
		}
		if err := put(1, 0xB1); err != nil {
			return fmt.Errorf("Put into the region still attached: %w", err)
		}
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	if c.Rank() == 0 {
		if regions[1][0] != 0xB1 {
			return fmt.Errorf("the region still attached holds %#x, not rank 1's second Put", regions[1][0])
		}
		if err := w.Detach(regions[1]); err != nil {
			return err
		}
		for _, r := range regions {
			if err := comm.FreeMem(r); err != nil {
				return err
			}
		}
	}
	return w.Free()
}

func TestAttachTableScribbled(t *testing.T) { ranktest.Run(t, 2, "attach-table-scribbled") }

func init() { ranktest.Register("attach-table-self", attachTableSelfBody) }

// attachTableSelfBody: an RMA call of a rank to itself finds its regions
// in its own record of them, not in the shared table: with its row there
// rewritten to name another buffer of the process, a Put to that buffer's
// address is ErrRMARange and leaves it alone, and a Put to the attached
// region still lands.
func attachTableSelfBody(c *comm.Comm) error {
	w, err := CreateDynamic(c, nil)
	if err != nil {
		return err
	}
	region, other := make([]byte, 4096), make([]byte, 4096)
	if err := w.Attach(region); err != nil {
		return err
	}
	atomic.StoreUint64(w.dyn.entryWord(0, 0, format.AttachBase), uint64(comm.Address(other)))
	if err := w.LockAll(0); err != nil {
		return err
	}
	src := bytes.Repeat([]byte{0x5A}, 64)
	if err := w.Put(src, 0, int(comm.Address(other))); !errors.Is(err, ErrRMARange) {
		return fmt.Errorf("Put to an address only the scribbled row names: %v, want ErrRMARange", err)
	}
	if err := w.Put(src, 0, int(comm.Address(region))); err != nil {
		return fmt.Errorf("Put into the attached region: %w", err)
	}
	if err := w.UnlockAll(); err != nil {
		return err
	}
	if other[0] != 0 || region[0] != 0x5A {
		return fmt.Errorf("after the Puts: the other buffer starts %#x (want 0), the region %#x (want 0x5a)", other[0], region[0])
	}
	if err := w.Detach(region); err != nil {
		return err
	}
	return w.Free()
}

func TestAttachTableSelf(t *testing.T) { ranktest.Run(t, 1, "attach-table-self") }
