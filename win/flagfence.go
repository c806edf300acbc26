//go:build !mpi

package win

import (
	"sync/atomic"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/raw"
)

// flagFence is the Fence of a window of up to format.FlagFenceRanks
// ranks, on the ranks' doorbell lines rather than the fence barrier's one
// line, which moves between the ranks with every arrival (FORMAT.md,
// "Fence"): each rank stores its fence word and reads the other's, one
// line transfer each way, in parallel. Rank q's fence word of parity p
// holds, for q's fences g with g&1 == p, g in its low half (the futex
// word) and the failure code q arrived with in its high half; only q
// writes it. The C interface's MPI_Win_fence follows the same protocol
// over the same words (capi's shmrun_flag_fence).
type flagFence struct {
	mine  [2]*uint64
	low   [2]*uint32       // the own words' low halves: the futex words
	sleep [2]*uint32       // their sleepers
	peer  [2]*uint64       // the other rank's words; nil alone
	ev    [2]barrier.Event // the other rank's words' low halves and sleepers
	me    int              // this rank: 0 or 1
}

// bindFlagFence sets up w.ff over the doorbell lines of sync, the
// window's sync block, if the window has at most format.FlagFenceRanks
// ranks.
func (w *Win) bindFlagFence(sync []byte) {
	if w.size > format.FlagFenceRanks {
		return
	}
	f := &flagFence{me: w.rank}
	for p := range 2 {
		bo := w.sl.DoorbellOff(w.rank)
		f.mine[p] = raw.Uint64At(sync, bo+format.FenceWord+8*int64(p))
		f.low[p] = raw.Uint32At(sync, bo+format.FenceWord+8*int64(p))
		f.sleep[p] = raw.Uint32At(sync, bo+format.FenceSleepers+4*int64(p))
		if w.size == 2 {
			po := w.sl.DoorbellOff(1 - w.rank)
			f.peer[p] = raw.Uint64At(sync, po+format.FenceWord+8*int64(p))
			f.ev[p] = barrier.Event{Seq: raw.Uint32At(sync, po+format.FenceWord+8*int64(p)), Sleepers: raw.Uint32At(sync, po+format.FenceSleepers+4*int64(p)), Light: true}
		}
	}
	w.ff = f
}

// flagWake wakes the sleepers on this rank's word of parity p, after a
// full fence that orders the word's store before the load of its sleepers
// (a sleeper adds itself, then checks the word again), or none where the
// sleepers' heavy fence stands for it (internal/raw's LightFence). The
// fence is not the Fence's memory ordering: the words' release stores and
// acquire loads are.
func (w *Win) flagWake(p uint32) {
	if !raw.LightFence() {
		w.fullFence()
	}
	if atomic.LoadUint32(w.ff.sleep[p]) != 0 {
		raw.WakeAll(w.ff.low[p])
	}
}

// flagAgree does over the fence words what the fence barrier's AgreeCode
// does: it publishes this rank's arrival with its failure code, waits for
// the other rank's, and returns a code both ranks compute alike: the
// lower rank's nonzero code, else the other's, else 0 (AgreeCode keeps
// the first code to arrive). It fails only when the job is ending.
func (w *Win) flagAgree(code uint32) (uint32, error) {
	f := w.ff
	g := w.ep.h.FenceGen + 1 // the generation, kept off the words' line
	w.ep.h.FenceGen = g
	p := g & 1
	atomics.StoreRelease64(f.mine[p], uint64(code)<<32|uint64(g))
	pw := f.peer[p]
	if pw == nil {
		w.fullFence()
		return code, nil
	}
	arrived := func() bool { return int32(uint32(atomic.LoadUint64(pw))-g) >= 0 }
	if !arrived() {
		pol := w.t.Policy()
		pause := pol.Spin >= barrier.PauseFrom
		for range pol.Spin {
			if arrived() {
				break
			}
			if pause {
				raw.Pause()
			}
		}
		if !arrived() {
			w.flagWake(p) // before this rank blocks: the other may sleep too
			pol.Spin = 0
			if err := f.ev[p].Await(w.t.Abort(), pol, arrived); err != nil {
				return 0, err
			}
		}
	}
	other := uint32(atomic.LoadUint64(pw) >> 32)
	w.flagWake(p)
	if f.me == 0 && code != 0 || other == 0 {
		return code, nil
	}
	return other, nil
}
