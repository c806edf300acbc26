//go:build !mpi

package win_test

import (
	"fmt"
	"testing"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/win"
)

// The flavor matrix: every way of making a window (Allocate, AllocateShared,
// Create over AllocMem memory, over another window's memory and over
// private memory, CreateDynamic with AllocMem and private regions) × every
// synchronization mode × Put, Get and every accumulate, data checked.

var memKinds = []string{"shared", "allocate", "create-allocmem", "create-window", "create-private", "dynamic-allocmem", "dynamic-private"}
var syncModes = []string{"fence", "pscw", "lock", "lockall"}

func init() {
	for _, k := range memKinds {
		for _, m := range syncModes {
			ranktest.Register("flavor-"+k+"-"+m, func(c *comm.Comm) error { return flavorBody(c, k, m, false) })
		}
	}
}

// flavorWin is a window of one kind over 8*words bytes a rank, and the
// displacement of word i at a rank.
type flavorWin struct {
	w     *win.Win
	local []int64 // the caller's memory
	disp  func(target, i int) int
	free  func() error
}

func makeFlavorWin(c *comm.Comm, kind string, words int) (*flavorWin, error) {
	f := &flavorWin{disp: func(_, i int) int { return i }}
	var err error
	var mem []byte
	var frees []func() error
	f.free = func() error {
		var first error
		for i := len(frees) - 1; i >= 0; i-- {
			if err := frees[i](); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	switch kind {
	case "shared", "allocate":
		alloc := win.AllocateShared
		if kind == "allocate" {
			alloc = win.Allocate
		}
		if f.w, err = alloc(c, 8*words, 8, nil); err != nil {
			return nil, err
		}
		mem = f.w.Local()
		frees = append(frees, f.w.Free)
	case "create-allocmem", "dynamic-allocmem":
		if mem, err = comm.AllocMem(8*words, nil); err != nil {
			return nil, err
		}
		frees = append(frees, func() error { return comm.FreeMem(mem) })
	case "create-window":
		under, err := win.AllocateShared(c, 8*words+8, 8, nil) // offset by a word: not the window's base
		if err != nil {
			return nil, err
		}
		frees = append(frees, under.Free)
		mem = under.Local()[8:]
	case "create-private", "dynamic-private":
		mem = make([]byte, 8*words)
	default:
		return nil, fmt.Errorf("kind %q", kind)
	}
	switch kind {
	case "create-allocmem", "create-window", "create-private":
		if f.w, err = win.Create(c, mem, 8, nil); err != nil {
			return nil, err
		}
		frees = append(frees, f.w.Free)
	case "dynamic-allocmem", "dynamic-private":
		if f.w, err = win.CreateDynamic(c, nil); err != nil {
			return nil, err
		}
		frees = append(frees, f.w.Free)
		if err := f.w.Attach(mem); err != nil {
			return nil, err
		}
		frees = append(frees, func() error { return f.w.Detach(mem) })
		addrs := make([]uint64, c.Size())
		if err := comm.Allgather(c, []uint64{uint64(comm.Address(mem))}, addrs); err != nil {
			return nil, err
		}
		f.disp = func(t, i int) int { return int(addrs[t]) + 8*i }
	}
	f.local, err = win.View[int64](mem)
	return f, err
}

// epoch runs body inside an access epoch to every rank of mode's kind, and
// returns once every rank's epoch is over and its results visible.
func epoch(c *comm.Comm, w *win.Win, mode string, body func() error) error {
	var err error
	switch mode {
	case "fence":
		if err = w.Fence(0); err == nil {
			err = body()
		}
		if ferr := w.Fence(0); err == nil {
			err = ferr
		}
		return err
	case "pscw":
		all := c.Group()
		if err = w.Post(all, 0); err == nil {
			err = w.Start(all, 0)
		}
		if err == nil {
			err = body()
		}
		if err == nil {
			err = w.Complete()
		}
		if err == nil {
			err = w.Wait()
		}
		return err
	case "lock":
		for t := range c.Size() {
			if err := w.Lock(win.Shared, t, 0); err != nil {
				return err
			}
		}
		err = body()
		for t := range c.Size() {
			if uerr := w.Unlock(t); err == nil {
				err = uerr
			}
		}
	case "lockall":
		if err = w.LockAll(0); err == nil {
			err = body()
		}
		if uerr := w.UnlockAll(); err == nil {
			err = uerr
		}
	}
	if err != nil {
		return err
	}
	return c.Barrier()
}

const flavorRounds = 12

func flavorBody(c *comm.Comm, kind, mode string, local bool) error {
	n, me := c.Size(), c.Rank()
	right, left := (me+1)%n, (me+n-1)%n
	words := 2*n + 4
	cnt, fop, ga, cas := 2*n, 2*n+1, 2*n+2, 2*n+3
	f, err := makeFlavorWin(c, kind, words)
	if err != nil {
		return err
	}
	w := f.w
	for r := range flavorRounds {
		err := epoch(c, w, mode, func() error {
			if r > 0 { // what this rank put into right last round
				got := []int64{-1}
				if err := win.GetT(w, got, right, f.disp(right, me+n*((r-1)%2))); err != nil {
					return err
				}
				if want := int64(me*1000 + r - 1); got[0] != want {
					return fmt.Errorf("round %d: Get from rank %d: %d, want %d", r, right, got[0], want)
				}
			}
			if err := win.PutT(w, []int64{int64(me*1000 + r)}, right, f.disp(right, me+n*(r%2))); err != nil {
				return err
			}
			for t := range n {
				if err := win.Accumulate(w, []int64{1}, t, f.disp(t, cnt), atomics.Sum); err != nil {
					return err
				}
			}
			if _, err := win.FetchAndOp(w, int64(1), 0, f.disp(0, fop), atomics.Sum); err != nil {
				return err
			}
			res := []int64{0}
			if err := win.GetAccumulate(w, []int64{1}, res, (me+2)%n, f.disp((me+2)%n, ga), atomics.Sum); err != nil {
				return err
			}
			if res[0] < 0 || res[0] >= flavorRounds {
				return fmt.Errorf("round %d: GetAccumulate returned %d", r, res[0])
			}
			for {
				old, err := win.FetchAndOp(w, int64(0), 1%n, f.disp(1%n, cas), atomics.NoOp)
				if err != nil {
					return err
				}
				got, err := win.CompareAndSwap(w, old+1, old, 1%n, f.disp(1%n, cas))
				if err != nil {
					return err
				}
				if got == old {
					return nil
				}
			}
		})
		if err != nil {
			return fmt.Errorf("%s/%s round %d: %w", kind, mode, r, err)
		}
		if got, want := f.local[left+n*(r%2)], int64(left*1000+r); got != want {
			return fmt.Errorf("%s/%s round %d: word %d holds %d, want %d (put by rank %d)", kind, mode, r, left+n*(r%2), got, want, left)
		}
	}
	checks := []struct {
		word int
		want int64
		on   bool
	}{{cnt, int64(n * flavorRounds), true}, {fop, int64(n * flavorRounds), me == 0}, {ga, flavorRounds, true}, {cas, int64(n * flavorRounds), me == 1%n}}
	for _, k := range checks {
		if k.on && f.local[k.word] != k.want {
			return fmt.Errorf("%s/%s: counter word %d holds %d, want %d", kind, mode, k.word, f.local[k.word], k.want)
		}
	}
	// Load/store where the memory is shared: the neighbour's counter.
	if kind != "dynamic-allocmem" && kind != "dynamic-private" {
		seg, err := w.SharedQuery(right)
		if err != nil {
			return err
		}
		switch {
		case kind == "create-private" && n > 1 && !local && seg.Size != 0:
			return fmt.Errorf("SharedQuery of rank %d's private memory: size %d, want 0", right, seg.Size)
		case seg.Size > 0:
			v, err := win.View[int64](seg)
			if err != nil {
				return err
			}
			if v[cnt] != int64(n*flavorRounds) {
				return fmt.Errorf("%s: rank %d's counter by load: %d", kind, right, v[cnt])
			}
		}
	}
	if _, err := win.Placement(w); err != nil {
		return fmt.Errorf("%s: Placement: %w", kind, err)
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	return f.free()
}

func TestFlavors(t *testing.T) {
	for _, k := range memKinds {
		for _, m := range syncModes {
			t.Run(k+"/"+m, func(t *testing.T) {
				ranktest.Run(t, 3, "flavor-"+k+"-"+m)
			})
		}
	}
}

func TestFlavorsLocal(t *testing.T) {
	for _, k := range memKinds {
		for _, m := range syncModes {
			t.Run(k+"/"+m, func(t *testing.T) {
				runLocal(t, 3, func(c *comm.Comm) error { return flavorBody(c, k, m, true) })
			})
		}
	}
}
