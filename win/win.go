//go:build !mpi

package win

import (
	"fmt"
	"sync/atomic"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/obs"
	"github.com/shmrun/shmrun/internal/rmacheck"
	"github.com/shmrun/shmrun/internal/team"
	"github.com/shmrun/shmrun/internal/winc"
)

// part is a rank's data as the RMA paths use it.
type part struct {
	data     []byte // the rank's bytes in this mapping: cap == len, nil when empty
	amem     []byte // the mapping data is in, as the atomics kernels see it
	off      int64  // offset of data in amem (for lock stripes: the same in every process)
	dispUnit int64
	maxDisp  uint // len(data) / dispUnit: the largest disp that can be in range
}

// Win is a window (MPI_Win): one shared segment mapped by every member, this
// rank's epoch state, and pointers to the sync block's words. Only the
// calls that make a window (Allocate, AllocateShared, Create,
// CreateDynamic) give a usable one: on a zero Win (declared, not made)
// the calls return ErrWin, but for Flush, whose fast path is one compare
// (the cost of a Put + Flush), which panics there as on a nil pointer; a
// zero Win never gets that far without an error, as no epoch opens on it.
type Win struct {
	c      *comm.Comm
	t      *team.Team
	rank   int
	size   int
	flavor Flavor
	cfg    config
	mem    []byte // the whole segment in this process
	mapped bool   // mem is an mmap (false: heap, local mode)
	layout format.WindowLayout
	sl     format.SyncLayout
	parts  []part
	// fast is parts for the RMA fast paths, nil on an observed window
	// (obs: shmrun --stats or --trace; chk: --check), whose calls all
	// take the slow paths, which record them.
	fast []part

	fence    *barrier.Barrier
	ff       *flagFence // the fence of a window of 1 or 2 ranks, instead of fence
	global   *uint64
	globalEv barrier.Event
	locks    []lockLine
	bells    []barrier.Event
	stripes  *atomics.Stripes

	ep         epochState
	hot        *winc.Epoch                   // ep.h, one load nearer for Flush's inlined path
	groupCache [2]atomic.Pointer[groupRanks] // the last groups given to Post and Start (pscw.go)
	freed      atomic.Bool

	obs *obs.Win
	// chk is the window's log for shmrun --check (nil when off), over
	// chkMem, one more collective area; clocks are its communicator's.
	chk    *rmacheck.Log
	chkMem []byte
	clocks *rmacheck.Clocks
	fences uint64 // Fences so far: their clock slots alternate
	// lockWaits counts the waits of Lock and LockAll for another rank
	// (lock contention, recorded on an observed window).
	lockWaits int64

	regID uint64   // this process's registration of the segment (heap), 0 if none
	ext   *extern  // Create windows: the ranks' own memory
	dyn   *dynamic // dynamic windows: attach tables

	// fenceWord is a rank-private word on a line of its own: a locked add on
	// it is the cheapest full fence on amd64 (sync/atomic has no bare fence).
	_         [format.Line]byte
	fenceWord uint64
	_         [format.Line]byte
}

type lockLine struct {
	word *uint64
	ev   barrier.Event // Seq is the low half of word
}

func (w *Win) live(call string) error {
	if w == nil {
		return errorf(ErrWin, "%s: nil window", call)
	}
	if w.t == nil {
		return errorf(ErrWin, "%s: a zero Win (not made by Allocate, AllocateShared, Create or CreateDynamic)", call)
	}
	if w.freed.Load() {
		return errorf(ErrWin, "%s on rank %d: window was freed", call, w.rank)
	}
	return nil
}

// checkEpoch is the invariant check of the goroutine test mode (gateCheck):
// it panics naming the call and the broken invariant, a bug of this package.
// The synchronization calls run it on their way out (the fast paths of
// UnlockAll, Flush and the RMA calls do not: the next call's check sees
// what they left).
func (w *Win) checkEpoch(call string) {
	if w == nil || w.ep.h == nil || w.ep.h.Gate&gateCheck == 0 {
		return
	}
	if err := w.ep.check(w.freed.Load(), w.cfg.noLocks); err != nil {
		panic(fmt.Sprintf("win: %s on rank %d: broken epoch state: %v", call, w.rank, err))
	}
}

// fullFence orders every earlier load and store of this process before every
// later one (a locked add on a private line).
func (w *Win) fullFence() { atomic.AddUint64(&w.fenceWord, 1) }
