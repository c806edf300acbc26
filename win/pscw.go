//go:build !mpi

package win

import (
	"sync/atomic"
	"time"

	"github.com/shmrun/shmrun/internal/rmacheck"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/raw"
)

// PSCW protocol (generalized active target), documented in docs/FORMAT.md:
//
// post[o][t] counts the Posts by target t whose group held origin o, and
// complete[t][o] the Completes by origin o toward target t. Each origin keeps
// locally how many Starts it made toward each target (startsFrom[t]); each
// target how many Posts it made to each origin (postsTo[o]). Start toward t
// waits until post[me][t] > startsFrom[t]; Wait waits until complete[me][o]
// reaches postsTo[o] for every o of its group. Counting per pair matches the
// k-th Start with the k-th Post of that pair, so back-to-back epochs and
// overlapping groups never mix. Counters are 32-bit and compared modulo 2^32.
// Each counter has one writer (post[o][t] is t's, complete[t][o] is o's),
// which stores its own count (postsTo[o]; startsFrom[t], equal to the
// Completes toward t once this one is counted) with a release store. Not a
// locked add, and no load of the line first: the peer is polling that line,
// and either one steals the line from the poller once more per hand-off
// (atomics.StoreRelease32; bench/NOTES.md has the measurement). A full fence after the stores orders them before
// the doorbells' sleepers loads; then the Post or Complete rings the doorbell
// of each rank it wrote for.

// Post opens an exposure epoch of the window to the origins in g
// (MPI_Win_post). Local: it does not wait. It releases: the caller's stores
// before Post are visible to an origin whose Start returns. assert: 0 or an
// OR of ModeNoCheck, ModeNoStore, ModeNoPut. A second Post before Wait, a
// Post while this rank holds a lock on the window, and a Post right after a
// Fence epoch with RMA calls are ErrRMASync.
func (w *Win) Post(g *comm.Group, assert int) error {
	if w != nil && w.obs != nil {
		defer w.obs.Sync("Post", time.Now())
	}
	defer w.checkEpoch("Post")
	origins, err := w.checkPSCW("Post", g, assert, ModeNoCheck|ModeNoStore|ModeNoPut)
	if err != nil {
		return err
	}
	if w.ep.postOpen() {
		return errorf(ErrRMASync, "Post on rank %d: an exposure epoch is open already (Post without Wait)", w.rank)
	}
	if w.ep.h.LockAll || w.ep.anyLocked() {
		return errorf(ErrRMASync, "Post on rank %d: %s (a window cannot be exposed while this rank holds its locks)", w.rank, w.ep.describeOpen())
	}
	w.closeFenceEpoch()
	if w.chk != nil {
		w.clocks.Release(rmacheck.SlotPost) // shmrun --check: to the origins' Start
	}
	sync := w.sync()
	for _, o := range origins {
		w.ep.postsTo[o]++
		atomics.StoreRelease32(raw.Uint32At(sync, w.sl.PostOff(o, w.rank)), w.ep.postsTo[o])
	}
	w.fullFence()
	for _, o := range origins {
		w.bells[o].Notify()
	}
	w.ep.setPost(origins)
	return nil
}

// Start opens an access epoch to the targets in g (MPI_Win_start). It blocks
// until every target has posted to this rank (skipped with ModeNoCheck, the
// caller's promise that the Posts are done), and acquires: the targets'
// stores before their Post are visible after Start. A Start while an access
// epoch is open is ErrRMASync.
func (w *Win) Start(g *comm.Group, assert int) error {
	if w != nil && w.obs != nil {
		defer w.obs.Sync("Start", time.Now())
	}
	defer w.checkEpoch("Start")
	targets, err := w.checkPSCW("Start", g, assert, ModeNoCheck)
	if err != nil {
		return err
	}
	if w.ep.startOpen() || w.ep.h.LockAll || w.ep.anyLocked() {
		return errorf(ErrRMASync, "Start on rank %d: %s (access epochs must not overlap)", w.rank, w.ep.describeOpen())
	}
	w.closeFenceEpoch()
	sync := w.sync()
	if assert&ModeNoCheck == 0 {
		ready := func() bool {
			for _, t := range targets {
				if int32(atomic.LoadUint32(raw.Uint32At(sync, w.sl.PostOff(w.rank, t)))-(w.ep.startsFrom[t]+1)) < 0 {
					return false
				}
			}
			return true
		}
		if err := w.bells[w.rank].Await(w.t.Abort(), w.t.Policy(), ready); err != nil {
			return errorf(ErrAborted, "Start on rank %d: %v", w.rank, err)
		}
	}
	for _, t := range targets {
		w.ep.startsFrom[t]++
		w.ep.tgt[t] |= tgtAccess
	}
	w.ep.setStart(targets)
	if w.chk != nil {
		w.clocks.Acquire(rmacheck.SlotPost, targets) // shmrun --check: what the targets did before Post
	}
	return nil
}

// Complete closes the access epoch opened by Start (MPI_Win_complete). Local:
// it does not wait for the targets. It releases: every RMA call of the epoch
// is complete and visible to a target whose Wait returns. Complete without
// Start is ErrRMASync.
func (w *Win) Complete() error {
	if w != nil && w.obs != nil {
		defer w.obs.Sync("Complete", time.Now())
	}
	defer w.checkEpoch("Complete")
	if err := w.live("Complete"); err != nil {
		return err
	}
	if !w.ep.startOpen() {
		return errorf(ErrRMASync, "Complete on rank %d: no access epoch (Complete without Start)", w.rank)
	}
	if w.chk != nil {
		w.chk.Complete(-1)
		w.clocks.Release(rmacheck.SlotComplete) // shmrun --check: to the targets' Wait
	}
	sync := w.sync()
	for _, t := range w.ep.startList() {
		w.ep.tgt[t] &^= tgtAccess
		atomics.StoreRelease32(raw.Uint32At(sync, w.sl.CompleteOff(int(t), w.rank)), w.ep.startsFrom[t])
	}
	w.fullFence()
	for _, t := range w.ep.startList() {
		w.bells[t].Notify()
	}
	w.ep.setStart(nil)
	return nil
}

// Wait closes the exposure epoch opened by Post (MPI_Win_wait): it blocks
// until every origin of the Post group has called Complete, and acquires:
// their RMA calls are visible to this rank's loads after Wait. Wait without
// Post is ErrRMASync.
func (w *Win) Wait() error {
	if w != nil && w.obs != nil {
		defer w.obs.Sync("Wait", time.Now())
	}
	defer w.checkEpoch("Wait")
	if err := w.live("Wait"); err != nil {
		return err
	}
	if !w.ep.postOpen() {
		return errorf(ErrRMASync, "Wait on rank %d: no exposure epoch (Wait without Post)", w.rank)
	}
	if err := w.bells[w.rank].Await(w.t.Abort(), w.t.Policy(), w.completed); err != nil {
		return errorf(ErrAborted, "Wait on rank %d: %v", w.rank, err)
	}
	w.acquirePosted()
	w.ep.setPost(nil)
	return nil
}

// acquirePosted is shmrun --check's acquire of a closing exposure epoch:
// what the origins did before their Complete.
func (w *Win) acquirePosted() {
	if w.chk != nil {
		w.clocks.Acquire(rmacheck.SlotComplete, int32s(w.ep.postList()))
	}
}

func int32s(v []int32) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

// Test is the non-blocking Wait (MPI_Win_test): it reports whether every
// origin has completed, and if so closes the exposure epoch as Wait does.
// Test without Post is ErrRMASync.
func (w *Win) Test() (bool, error) {
	defer w.checkEpoch("Test")
	if err := w.live("Test"); err != nil {
		return false, err
	}
	if !w.ep.postOpen() {
		return false, errorf(ErrRMASync, "Test on rank %d: no exposure epoch (Test without Post)", w.rank)
	}
	if !w.completed() {
		return false, nil
	}
	w.acquirePosted()
	w.ep.setPost(nil)
	return true, nil
}

func (w *Win) completed() bool {
	sync := w.sync()
	for _, o := range w.ep.postList() {
		if int32(atomic.LoadUint32(raw.Uint32At(sync, w.sl.CompleteOff(w.rank, int(o))))-w.ep.postsTo[o]) < 0 {
			return false
		}
	}
	return true
}

// checkPSCW validates the common arguments and returns g's members as window
// ranks.
func (w *Win) checkPSCW(call string, g *comm.Group, assert, allowed int) ([]int, error) {
	if err := w.live(call); err != nil {
		return nil, err
	}
	if assert&^allowed != 0 {
		return nil, errorf(ErrAssert, "%s on rank %d: assert %#x has bits it does not take", call, w.rank, assert)
	}
	if g == nil {
		return nil, errorf(comm.ErrGroup, "%s on rank %d: nil group", call, w.rank)
	}
	if w.ep.h.FenceOpen && w.ep.h.FenceUsed.Load() {
		return nil, errorf(ErrRMASync, "%s on rank %d: a fence epoch with RMA calls is open (end it with Fence(ModeNoSucceed))", call, w.rank)
	}
	// Groups are immutable: the translation of the last group given to
	// Post and of the last given to Start is kept, so an epoch allocates
	// nothing. Each call writes its own slot, through an atomic pointer:
	// a goroutine's Post and another's Start may run at once.
	slot := 0
	if call == "Start" {
		slot = 1
	}
	for i := range w.groupCache {
		if c := w.groupCache[i].Load(); c != nil && c.g == g {
			return c.ranks, nil
		}
	}
	all := make([]int, g.Size())
	for i := range all {
		all[i] = i
	}
	ranks, err := g.TranslateRanks(all, w.c.Group())
	if err != nil {
		return nil, errorf(comm.ErrGroup, "%s on rank %d: %v", call, w.rank, err)
	}
	for i, r := range ranks {
		if r == comm.Undefined {
			return nil, errorf(comm.ErrGroup, "%s on rank %d: group rank %d is not in the window's group", call, w.rank, i)
		}
	}
	w.groupCache[slot].Store(&groupRanks{g, ranks})
	return ranks, nil
}

// closeFenceEpoch ends a fence epoch that had no RMA calls: Lock, Start and
// Post may follow such a Fence.
func (w *Win) closeFenceEpoch() {
	if w.ep.h.FenceOpen {
		w.ep.setFence(false)
	}
}

// groupRanks is a group and its members as window ranks.
type groupRanks struct {
	g     *comm.Group
	ranks []int
}

func (w *Win) sync() []byte { return w.mem[w.layout.SyncOff : w.layout.SyncOff+w.layout.SyncLen] }
