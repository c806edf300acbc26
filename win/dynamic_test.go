//go:build !mpi

package win_test

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/win"
	"golang.org/x/sys/unix"
)

func init() {
	ranktest.Register("linked-list", linkedListBody)
	ranktest.Register("detach-race-allocmem", func(c *comm.Comm) error { return detachRaceBody(c, true) })
	ranktest.Register("detach-race-private", func(c *comm.Comm) error { return detachRaceBody(c, false) })
	ranktest.Register("create-over-freed", createOverFreedBody)
	ranktest.Register("create-forbidden", createForbiddenBody)
}

// A list node in a dynamic window: its value and a pointer to the next
// node, (rank+1)<<48 | address, 0 at the end.
const (
	nodeValue = 0
	nodeNext  = 8
	nodeLen   = 16
)

func ptr(rank int, addr uintptr) int64 { return int64(rank+1)<<48 | int64(addr) }
func unptr(p int64) (int, int)         { return int(p>>48) - 1, int(p & (1<<48 - 1)) }

const listPerRank = 40

// linkedListBody is the standard's dynamic-window example: every rank
// appends nodes it allocates and attaches (alternately from AllocMem and
// from the Go heap) to one list whose head is on rank 0, by
// compare-and-swap on the last node's next pointer, under LockAll; then
// every rank walks the whole list remotely and checks it.
func linkedListBody(c *comm.Comm) error {
	n, me := c.Size(), c.Rank()
	w, err := win.CreateDynamic(c, nil)
	if err != nil {
		return err
	}
	var nodes [][]byte
	newNode := func(v int64) ([]byte, error) {
		var b []byte
		var err error
		if len(nodes)%2 == 0 {
			b, err = comm.AllocMem(nodeLen, nil)
		} else {
			b = make([]byte, nodeLen)
		}
		if err != nil {
			return nil, err
		}
		view, _ := win.View[int64](b)
		view[nodeValue/8] = v
		nodes = append(nodes, b)
		return b, w.Attach(b)
	}
	head := []int64{0}
	if me == 0 {
		h, err := newNode(-1)
		if err != nil {
			return err
		}
		head[0] = ptr(0, comm.Address(h))
	}
	if err := comm.Bcast(c, head, 0); err != nil {
		return err
	}
	if err := w.LockAll(0); err != nil {
		return err
	}
	tail := head[0]
	for i := range listPerRank {
		nd, err := newNode(int64(me*1000 + i))
		if err != nil {
			return err
		}
		mine := ptr(me, comm.Address(nd))
		for {
			r, a := unptr(tail)
			got, err := win.CompareAndSwap(w, mine, 0, r, a+nodeNext)
			if err != nil {
				return fmt.Errorf("append %d: %w", i, err)
			}
			if err := w.Flush(r); err != nil {
				return err
			}
			if got == 0 {
				tail = mine
				break
			}
			tail = got // someone appended first: follow
		}
	}
	if err := w.UnlockAll(); err != nil {
		return err
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	// Walk it.
	if err := w.LockAll(0); err != nil {
		return err
	}
	count := 0
	last := make([]int64, n)
	for i := range last {
		last[i] = -1
	}
	for p := head[0]; p != 0; count++ {
		r, a := unptr(p)
		nd := make([]int64, 2)
		if err := win.GetT(w, nd, r, a); err != nil {
			return fmt.Errorf("node %d (rank %d at %#x): %w", count, r, a, err)
		}
		if count > 0 {
			owner, idx := int(nd[0]/1000), nd[0]%1000
			if owner != r || idx <= last[r] {
				return fmt.Errorf("node %d on rank %d holds %d after %d", count, r, nd[0], last[r])
			}
			last[r] = idx
		}
		p = nd[1]
	}
	if err := w.UnlockAll(); err != nil {
		return err
	}
	if count != 1+n*listPerRank {
		return fmt.Errorf("the list has %d nodes, want %d", count, 1+n*listPerRank)
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	for i, nd := range nodes {
		if err := w.Detach(nd); err != nil {
			return err
		}
		if i%2 == 0 {
			if err := comm.FreeMem(nd); err != nil {
				return err
			}
		}
	}
	return w.Free()
}

func TestLinkedList(t *testing.T)      { ranktest.Run(t, 4, "linked-list") }
func TestLinkedListLocal(t *testing.T) { runLocal(t, 4, linkedListBody) }

// detachRaceGoroutines is the goroutines of each origin in detachRaceBody.
const detachRaceGoroutines = 6

// detachRaceBody: rank 0 attaches a region; the other ranks Put into it in
// a passive epoch as fast as they can, from several goroutines each, until
// a Put fails with ErrRMARange.
// Rank 0 detaches it meanwhile and then writes its own pattern there: no
// Put may land after Detach returned. Then the region is freed and the
// heap hands its memory out again, still untouched.
func detachRaceBody(c *comm.Comm, allocMem bool) error {
	me := c.Rank()
	w, err := win.CreateDynamic(c, nil)
	if err != nil {
		return err
	}
	const size = 8192
	addr := []uint64{0}
	var region []byte
	if me == 0 {
		if allocMem {
			region, err = comm.AllocMem(size, nil)
		} else {
			region = make([]byte, size)
		}
		if err != nil {
			return err
		}
		if err := w.Attach(region); err != nil {
			return err
		}
		addr[0] = uint64(comm.Address(region))
	}
	if err := comm.Bcast(c, addr, 0); err != nil {
		return err
	}
	if err := w.LockAll(0); err != nil {
		return err
	}
	if me != 0 {
		// Several goroutines at once, of 8, 4096 and 8192 bytes: each
		// claims an access slot of its own (its processor's for up to
		// 4096 bytes, else by compare-and-swap) and none may write
		// after Detach returned.
		errs := make(chan error, detachRaceGoroutines)
		for g := range detachRaceGoroutines {
			go func() {
				src := make([]byte, []int{8, size / 2, size}[g%3])
				for i := range src {
					src[i] = byte(me)
				}
				for {
					err := w.Put(src, 0, int(addr[0])+(size-len(src))*(g%2))
					if errors.Is(err, win.ErrRMARange) {
						break
					}
					if err != nil {
						errs <- err
						return
					}
					if _, err := win.FetchAndOp(w, int64(1), 0, int(addr[0])+8*me, atomics.Sum); err != nil && !errors.Is(err, win.ErrRMARange) {
						errs <- err
						return
					}
				}
				errs <- nil
			}()
		}
		for range detachRaceGoroutines {
			if err := <-errs; err != nil {
				return err
			}
		}
		if err := w.UnlockAll(); err != nil {
			return err
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		return w.Free()
	}
	time.Sleep(20 * time.Millisecond) // let the Puts run
	if err := w.Detach(region); err != nil {
		return err
	}
	for i := range region {
		region[i] = 0xEE
	}
	if err := w.UnlockAll(); err != nil {
		return err
	}
	if err := c.Barrier(); err != nil { // every origin has seen ErrRMARange
		return err
	}
	for i, b := range region {
		if b != 0xEE {
			return fmt.Errorf("byte %d of the detached region is %#x: a Put landed after Detach returned", i, b)
		}
	}
	if allocMem {
		if err := comm.FreeMem(region); err != nil {
			return err
		}
	}
	return w.Free()
}

func TestDetachRace(t *testing.T) {
	for _, kind := range []string{"allocmem", "private"} {
		t.Run(kind, func(t *testing.T) { ranktest.Run(t, 3, "detach-race-"+kind) })
	}
}

func TestDetachRaceLocal(t *testing.T) {
	runLocal(t, 3, func(c *comm.Comm) error { return detachRaceBody(c, true) })
}

// createOverFreedBody: a window made by Create over another window's
// memory keeps working after that window is freed (its mapping lives as
// long as a window uses it), and its memory is read back by load/store.
func createOverFreedBody(c *comm.Comm) error {
	n, me := c.Size(), c.Rank()
	under, err := win.AllocateShared(c, 64, 8, nil)
	if err != nil {
		return err
	}
	w, err := win.Create(c, under.Local(), 8, nil)
	if err != nil {
		return err
	}
	if err := under.Free(); err != nil {
		return err
	}
	if a := w.Attr(); a.Flavor != win.FlavorCreate || a.Size != 64 || a.DispUnit != 8 {
		return fmt.Errorf("Attr = %+v", a)
	}
	if err := w.Fence(0); err != nil {
		return err
	}
	if err := win.PutT(w, []int64{int64(me + 100)}, (me+1)%n, 1); err != nil {
		return err
	}
	if err := w.Fence(0); err != nil {
		return err
	}
	seg, err := w.SharedQuery((me + 2) % n)
	if err != nil {
		return err
	}
	v, err := win.View[int64](seg)
	if err != nil {
		return err
	}
	if want := int64((me+1)%n + 100); v[1] != want {
		return fmt.Errorf("rank %d's word 1 by load: %d, want %d", (me+2)%n, v[1], want)
	}
	if err := w.Fence(0); err != nil {
		return err
	}
	return w.Free()
}

func TestCreateOverFreedWindow(t *testing.T) { ranktest.Run(t, 3, "create-over-freed") }

// createForbiddenBody takes away this process's right to reach the other
// ranks' memory (and theirs to reach its own): not dumpable, and, for
// root, no CAP_SYS_PTRACE on the thread that calls Create. Create over
// private memory must then fail on every rank, at creation, naming
// comm.AllocMem.
func createForbiddenBody(c *comm.Comm) error {
	if err := c.Barrier(); err != nil { // the barrier's area is mapped while we may
		return err
	}
	runtime.LockOSThread() // capabilities are per thread
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return err
	}
	if os.Geteuid() == 0 {
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		if err := unix.Capget(&hdr, &data[0]); err != nil {
			return err
		}
		data[0].Effective &^= 1 << unix.CAP_SYS_PTRACE
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			return err
		}
	}
	if err := c.Barrier(); err != nil { // every rank is locked down
		return err
	}
	w, err := win.Create(c, make([]byte, 64), 8, nil)
	if err == nil {
		w.Free()
		return errors.New("Create over private memory succeeded where the kernel forbids reaching it")
	}
	if !strings.Contains(err.Error(), "comm.AllocMem") {
		return fmt.Errorf("the error does not name comm.AllocMem: %v", err)
	}
	// A dynamic window still works; attaching private memory is refused.
	d, err := win.CreateDynamic(c, nil)
	if err != nil {
		return err
	}
	if err := d.Attach(make([]byte, 64)); !errors.Is(err, win.ErrRMAAttach) || !strings.Contains(err.Error(), "comm.AllocMem") {
		return fmt.Errorf("Attach of private memory = %v, want ErrRMAAttach naming comm.AllocMem", err)
	}
	return d.Free()
}

func TestCreateForbidden(t *testing.T) { ranktest.Run(t, 3, "create-forbidden") }

func init() { ranktest.Register("dynamic-maps-flat", dynamicMapsFlatBody) }

// dynamicMapsFlatBody: rank 1 attaches a large block (an object of its
// own), rank 0 puts into it, rank 1 detaches and frees it, 150 times; rank
// 0's mappings stay flat (it unmaps the objects rank 1 no longer lists),
// and so does rank 1's (FreeMem gives the object back).
func dynamicMapsFlatBody(c *comm.Comm) error {
	const rounds, size = 150, 300 << 10
	me := c.Rank()
	d, err := win.CreateDynamic(c, nil)
	if err != nil {
		return err
	}
	if err := d.LockAll(0); err != nil {
		return err
	}
	var before int
	for i := range rounds {
		if i == 10 {
			before = mapCount()
		}
		addr := []uint64{0}
		var blk []byte
		if me == 1 {
			if blk, err = comm.AllocMem(size, nil); err != nil {
				return err
			}
			if err := d.Attach(blk); err != nil {
				return err
			}
			addr[0] = uint64(comm.Address(blk))
		}
		if err := comm.Bcast(c, addr, 1); err != nil {
			return err
		}
		if me == 0 {
			if err := win.PutT(d, []int64{int64(i)}, 1, int(addr[0])+size-8); err != nil {
				return err
			}
			if err := d.Flush(1); err != nil {
				return err
			}
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		if me == 1 {
			if v, _ := win.View[int64](blk[size-8:]); v[0] != int64(i) {
				return fmt.Errorf("round %d: the block holds %d", i, v[0])
			}
			if err := d.Detach(blk); err != nil {
				return err
			}
			if err := comm.FreeMem(blk); err != nil {
				return err
			}
		}
	}
	if after := mapCount(); after > before+16 {
		return fmt.Errorf("mappings grew from %d to %d over %d attach/detach rounds", before, after, rounds-10)
	}
	if err := d.UnlockAll(); err != nil {
		return err
	}
	return d.Free()
}

func mapCount() int {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return -1
	}
	return strings.Count(string(b), "\n")
}

func TestDynamicMapsFlat(t *testing.T) { ranktest.Run(t, 2, "dynamic-maps-flat") }

func init() { ranktest.Register("create-cycles-flat", createCyclesFlatBody) }

// createCyclesFlatBody: Create over AllocMem memory, over a window's
// memory and over private memory, used and freed 100 times each: every
// rank's mappings and descriptors stay flat.
func createCyclesFlatBody(c *comm.Comm) error {
	n, me := c.Size(), c.Rank()
	var maps0, fds0 int
	for i := range 110 {
		if i == 10 {
			maps0, fds0 = mapCount(), fdCount()
		}
		under, err := win.Allocate(c, 4096, 1, nil)
		if err != nil {
			return err
		}
		heapMem, err := comm.AllocMem(4096, nil)
		if err != nil {
			return err
		}
		for _, mem := range [][]byte{heapMem, under.Local()[64:], make([]byte, 4096)} {
			w, err := win.Create(c, mem, 1, nil)
			if err != nil {
				return err
			}
			if err := w.Fence(0); err != nil {
				return err
			}
			if err := win.PutT(w, []int64{int64(i)}, (me+1)%n, 8); err != nil {
				return err
			}
			if err := w.Fence(0); err != nil {
				return err
			}
			if v, _ := win.View[int64](mem[8:16]); v[0] != int64(i) {
				return fmt.Errorf("cycle %d: my memory holds %d", i, v[0])
			}
			if err := w.Free(); err != nil {
				return err
			}
		}
		if err := comm.FreeMem(heapMem); err != nil {
			return err
		}
		if err := under.Free(); err != nil {
			return err
		}
	}
	if m, f := mapCount(), fdCount(); m > maps0+16 || f > fds0+2 {
		return fmt.Errorf("over 100 cycles mappings went from %d to %d, descriptors from %d to %d", maps0, m, fds0, f)
	}
	return nil
}

func fdCount() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

func TestCreateCyclesFlat(t *testing.T) { ranktest.Run(t, 3, "create-cycles-flat") }

func init() { ranktest.Register("create-over-query", createOverQueryBody) }

// createOverQueryBody: each rank makes a Create window over the memory
// SharedQuery gives it of its right neighbour's part of another Create
// window (a mapping of the neighbour's object in this process), frees the
// first window, and the second still works, by RMA and by load.
func createOverQueryBody(c *comm.Comm) error {
	n, me := c.Size(), c.Rank()
	mem, err := comm.AllocMem(256, nil)
	if err != nil {
		return err
	}
	w1, err := win.Create(c, mem, 8, nil)
	if err != nil {
		return err
	}
	seg, err := w1.SharedQuery((me + 1) % n)
	if err != nil {
		return err
	}
	w2, err := win.Create(c, seg.Bytes[128:], 8, nil) // my right neighbour's memory, exposed by me
	if err != nil {
		return err
	}
	if err := w1.Free(); err != nil {
		return err
	}
	if err := w2.Fence(0); err != nil {
		return err
	}
	// Into what rank me+1 exposes in w2: the memory of rank me+2.
	if err := win.PutT(w2, []int64{int64(100 + me)}, (me+1)%n, 1); err != nil {
		return err
	}
	if err := w2.Fence(0); err != nil {
		return err
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	// Rank me-2 put into what rank me-1 exposes in w2, which is my own
	// memory: mem[128+8 : 128+16].
	v, _ := win.View[int64](mem[136:144])
	if want := int64(100 + (me+n-2)%n); v[0] != want {
		return fmt.Errorf("my memory holds %d, want %d", v[0], want)
	}
	if err := w2.Free(); err != nil {
		return err
	}
	if err := comm.FreeMem(mem); err != nil {
		return err
	}
	return nil
}

func TestCreateOverQuery(t *testing.T) { ranktest.Run(t, 3, "create-over-query") }
