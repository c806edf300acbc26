//go:build !mpi

package win_test

import (
	"errors"
	"testing"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/win"
)

func init() { ranktest.Register("create-errors", createErrorsBody) }

// createErrorsBody: the misuses of Create, dynamic windows and AllocMem get
// their class, on every rank for the collective ones, and nothing is lost.
func createErrorsBody(c *comm.Comm) error {
	n, me := c.Size(), c.Rank()
	unit := 8
	if me == n-1 {
		unit = 0
	}
	if w, err := win.Create(c, make([]byte, 64), unit, nil); w != nil || !errors.Is(err, win.ErrArg) {
		return check(false, "Create with disp unit 0 on rank %d = %v, %v; want ErrArg on every rank", n-1, w, err)
	}
	info := win.Info{}
	if me == 0 {
		info["same_size"] = "true"
	}
	if _, err := win.Create(c, make([]byte, 8*(me+1)), 8, info); !errors.Is(err, win.ErrSize) {
		return check(false, "Create breaking same_size = %v, want ErrSize", err)
	}
	mem, err := comm.AllocMem(64, nil)
	if err != nil {
		return err
	}
	w, err := win.Create(c, mem, 8, nil)
	if err != nil {
		return err
	}
	if err := comm.FreeMem(mem); !errors.Is(err, comm.ErrArg) {
		return check(false, "FreeMem of a Create window's memory = %v, want ErrArg", err)
	}
	if err := w.LockAll(0); err != nil {
		return err
	}
	if err := win.PutT(w, []int64{1}, (me+1)%n, 8); !errors.Is(err, win.ErrRMARange) {
		return check(false, "Put past the memory = %v, want ErrRMARange", err)
	}
	if _, err := win.FetchAndOp(w, int64(1), (me+1)%n, 7, atomics.Sum); err != nil {
		return err
	}
	if err := w.UnlockAll(); err != nil {
		return err
	}
	if err := w.Attach(mem); !errors.Is(err, win.ErrRMAFlavor) {
		return check(false, "Attach on a Create window = %v, want ErrRMAFlavor", err)
	}
	if err := w.Free(); err != nil {
		return err
	}
	if err := comm.FreeMem(mem); err != nil {
		return err
	}
	if _, err := win.CreateDynamic(c, win.Info{"shmrun_max_attach": "0"}); !errors.Is(err, win.ErrInfo) {
		return check(false, "shmrun_max_attach=0 = %v, want ErrInfo", err)
	}
	d, err := win.CreateDynamic(c, win.Info{"shmrun_max_attach": "2"})
	if err != nil {
		return err
	}
	if a := d.Attr(); a.Flavor != win.FlavorDynamic || a.Size != 0 || a.Base != nil || a.DispUnit != 1 || d.Info()["shmrun_max_attach"] != "2" {
		return check(false, "dynamic Attr %+v, info %v", a, d.Info())
	}
	if _, err := d.SharedQuery(0); !errors.Is(err, win.ErrRMAFlavor) {
		return check(false, "SharedQuery on a dynamic window = %v, want ErrRMAFlavor", err)
	}
	big := make([]byte, 256)
	if err := d.Attach(big[:128]); err != nil {
		return err
	}
	if err := d.Attach(big[64:192]); !errors.Is(err, win.ErrRMAAttach) {
		return check(false, "overlapping Attach = %v, want ErrRMAAttach", err)
	}
	if err := d.Attach(big[128:192]); err != nil {
		return err
	}
	if err := d.Attach(big[192:]); !errors.Is(err, win.ErrRMAAttach) {
		return check(false, "a third Attach with shmrun_max_attach=2 = %v, want ErrRMAAttach", err)
	}
	if err := d.Detach(big[8:]); !errors.Is(err, win.ErrRMAAttach) {
		return check(false, "Detach where nothing starts = %v, want ErrRMAAttach", err)
	}
	addrs := make([]uint64, n)
	if err := comm.Allgather(c, []uint64{uint64(comm.Address(big))}, addrs); err != nil {
		return err
	}
	t := (me + 1) % n
	if err := d.LockAll(0); err != nil {
		return err
	}
	// Inside the two regions, across their boundary (two regions, not one),
	// past the end, before the start, in nothing.
	if err := win.PutT(d, []int64{7}, t, int(addrs[t])+120); err != nil {
		return err
	}
	for _, disp := range []int{int(addrs[t]) + 124, int(addrs[t]) + 188, int(addrs[t]) - 8, 4096} {
		if err := win.PutT(d, []int64{7}, t, disp); !errors.Is(err, win.ErrRMARange) {
			return check(false, "Put at %#x = %v, want ErrRMARange", disp, err)
		}
	}
	if err := win.PutT(d, []int64{7}, t, -8); !errors.Is(err, win.ErrDisp) {
		return check(false, "Put at a negative address = %v, want ErrDisp", err)
	}
	if err := d.UnlockAll(); err != nil {
		return err
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	v, _ := win.View[int64](big)
	if v[15] != 7 {
		return check(false, "the Put at +120 left %d", v[15])
	}
	if err := d.Detach(big[:128]); err != nil {
		return err
	}
	if err := d.Detach(big[:128]); !errors.Is(err, win.ErrRMAAttach) {
		return check(false, "second Detach = %v, want ErrRMAAttach", err)
	}
	return d.Free() // with big[128:192] still attached: Free lets it go
}

func TestCreateErrors(t *testing.T)      { ranktest.Run(t, 3, "create-errors") }
func TestCreateErrorsLocal(t *testing.T) { runLocal(t, 3, createErrorsBody) }
