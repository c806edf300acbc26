package faults

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/shm"
	"github.com/shmrun/shmrun/win"
)

const bigRanks = 4

func init() {
	// big: args bytes-per-rank. Every rank allocates its part, writes a
	// byte on one page of every MiB of it, and after a barrier reads back
	// those bytes in every rank's part; then frees the window. It prints
	// "rank R: ..." with the times.
	ranktest.Register("big", func(c *comm.Comm) error {
		size, err := strconv.Atoi(ranktest.BodyArgs()[0])
		if err != nil {
			return err
		}
		me, n := c.Rank(), c.Size()
		t0 := time.Now()
		w, err := win.AllocateShared(c, size, 1, nil)
		if err != nil {
			return err
		}
		t1 := time.Now()
		mark := func(r, i int) byte { return byte(r*13 + i/(1<<20) + 1) }
		b := w.Local()
		for i := 0; i < len(b); i += 1 << 20 {
			b[i] = mark(me, i)
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		for r := range n {
			seg := mustQuery(w, r).Bytes
			if len(seg) != size {
				return fmt.Errorf("rank %d's part has %d bytes, want %d", r, len(seg), size)
			}
			for i := 0; i < len(seg); i += 1 << 20 {
				if seg[i] != mark(r, i) {
					return fmt.Errorf("rank %d's byte %d is %d, want %d", r, i, seg[i], mark(r, i))
				}
			}
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		t2 := time.Now()
		if err := w.Free(); err != nil {
			return err
		}
		fmt.Printf("rank %d: allocated %d bytes in %v, touched and checked in %v, freed in %v\n",
			me, size, t1.Sub(t0).Round(time.Millisecond), t2.Sub(t1).Round(time.Millisecond), time.Since(t2).Round(time.Millisecond))
		return nil
	})
}

// TestBigWindow: a window of 8 GiB (2 GiB on each of 4 ranks) is reserved,
// touched on a page per MiB by its owner, read back by every rank, freed,
// and nothing is left: the shm directory is empty and its free space is
// back. It needs 8 GiB of memory, so it runs only with SHMRUN_SOAK; CI
// runs the same with 256 MiB.
func TestBigWindow(t *testing.T) {
	per := 64 << 20
	if _, ok := soak(t); ok {
		per = 2 << 30
	}
	dir := jobDir(t)
	free := shm.FreeBytes(dir)
	if need := int64(per) * bigRanks; free < need+need/4 {
		t.Skipf("%s has %d bytes free; the window needs %d", dir, free, need)
	}
	start := time.Now()
	res := ranktest.Run(t, bigRanks, "big", ranktest.Args(strconv.Itoa(per)), ranktest.ShmDir(dir), ranktest.Timeout(5*time.Minute))
	t.Logf("%d bytes in all: job took %v", int64(per)*bigRanks, time.Since(start).Round(time.Millisecond))
	for _, l := range res.Lines() {
		t.Log(l)
	}
	checkNoSIGBUS(t, res)
	checkEmpty(t, dir)
	// Other jobs may use the same tmpfs meanwhile: allow them 1 GiB.
	if after := shm.FreeBytes(dir); after < free-(1<<30) {
		t.Errorf("the tmpfs had %d bytes free before the job and %d after", free, after)
	}
}
