//go:build !mpi

package win

import (
	"sync/atomic"

	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/internal/winc"
)

// The C interface's fast path (capi) runs Lock, Unlock, LockAll, UnlockAll,
// the flushes and the RMA calls in C over this package's epoch state and
// lock words, by the same protocol as the methods of lock.go; winc.Of gives
// it those and the slow paths, which stay here.
func init() {
	winc.Of = func(x any) *winc.State {
		w, ok := x.(*Win)
		if !ok || w == nil || w.freed.Load() || w.ep.h == nil || w.obs != nil || w.chk != nil {
			return nil
		}
		s := &winc.State{
			Epoch:          w.ep.h,
			Tgt:            w.ep.tgt,
			LockWords:      make([]*uint64, len(w.locks)),
			LockSleepers:   make([]*uint32, len(w.locks)),
			Global:         w.global,
			GlobalSleepers: w.globalEv.Sleepers,
			LockAfter: func(rank int, v uint64) error {
				return w.lockExclusiveAfter(rank, v)
			},
			SharedAfter: func(rank int, v uint64) error {
				if err := w.acquireSharedAfter(rank, v); err != nil {
					return w.lockAborted(err)
				}
				w.ep.setTgt(rank, tgtAccess|tgtShared)
				w.granted()
				return nil
			},
			UnlockAfter: w.unlockAfter,
			LockAllRetry: func() error {
				w.releaseAll()
				return w.lockAllSlow(0)
			},
			NotifyAll: w.globalEv.Notify,
			FenceWait: func(old uint32) (uint32, error) {
				g, err := w.fence.WaitPast(old)
				if err != nil {
					return 0, errorf(ErrAborted, "Fence on rank %d: %v", w.rank, err)
				}
				return g, nil
			},
			FenceWake: w.fence.Wake,
			FenceFailed: func(gen uint32) error {
				return w.fenceVerdict(nil, w.fence.Failure(gen), "Fence")
			},
		}
		s.FenceState, s.FenceSleepers, s.FenceFail, s.FenceN, s.Spin = w.fence.Words()
		if f := w.ff; f != nil {
			s.FenceWord, s.FencePeer, s.FenceWordSleepers = f.mine, f.peer, f.sleep
			s.FlagFenceWait = func(g uint32) error {
				p := g & 1
				w.flagWake(p)
				pol := w.t.Policy()
				pol.Spin = 0
				pw := f.peer[p]
				if err := f.ev[p].Await(w.t.Abort(), pol, func() bool { return int32(uint32(atomic.LoadUint64(pw))-g) >= 0 }); err != nil {
					return errorf(ErrAborted, "Fence on rank %d: %v", w.rank, err)
				}
				return nil
			}
			s.FlagFenceWake = w.flagWake
			s.FenceCode = func(code uint32) error { return w.fenceVerdict(nil, code, "Fence") }
		}
		for r := range w.locks {
			s.LockWords[r], s.LockSleepers[r] = w.locks[r].word, w.locks[r].ev.Sleepers
		}
		sync, n := w.sync(), w.size
		s.PostWord, s.CompleteWord = make([]*uint32, n), make([]*uint32, n)
		s.StartWord, s.WaitWord, s.BellSleepers = make([]*uint32, n), make([]*uint32, n), make([]*uint32, n)
		for r := range n {
			s.PostWord[r] = raw.Uint32At(sync, w.sl.PostOff(r, w.rank))
			s.CompleteWord[r] = raw.Uint32At(sync, w.sl.CompleteOff(r, w.rank))
			s.StartWord[r] = raw.Uint32At(sync, w.sl.PostOff(w.rank, r))
			s.WaitWord[r] = raw.Uint32At(sync, w.sl.CompleteOff(w.rank, r))
			s.BellSleepers[r] = w.bells[r].Sleepers
		}
		s.BellNotify = func(r int) { w.bells[r].Notify() }
		s.StartsFrom, s.PostsTo, s.StartGroup, s.PostGroup = w.ep.startsFrom, w.ep.postsTo, w.ep.startG, w.ep.postG
		return s
	}
}
