//go:build !mpi

package comm

import (
	"fmt"

	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/internal/rmacheck"
	"github.com/shmrun/shmrun/internal/winc"
)

// The C interface (capi) runs MPI_Barrier in C over the communicator's
// collective area, by the protocol of call.barrier (coll.go): publish the
// Barrier signature and the round, wait for the others' rounds as agree
// does, wake the lines' sleepers, record the round as seen; and the
// one-round calls whose data rides in the flag lines (Bcast, Reduce and
// Allreduce of up to format.InlineLen bytes) by the protocol of
// call.agree and the inline paths of bcast and reduce, always checking
// every rank's signature in the call (a rank may, agree's stricter rule
// keeps it compatible with Go ranks that check later). winc.BarrierOf
// gives it the words and the slow paths, which stay here.
// rmacheck.WorldOf gives package win a communicator's world ranks (for
// shmrun --check's windows).
func init() {
	rmacheck.WorldOf = func(x any) []int {
		if c, ok := x.(*Comm); ok && c != nil {
			return c.members
		}
		return nil
	}
}

// winc.P2POf gives the C interface's eager Send, Isend and Recv what
// they need of a communicator (the engine's shared state, the context,
// the members' world ranks); they follow engine.sendNow and drain's
// protocol under the engine's lock while its Quiet word says Go holds
// nothing in progress (internal/winc's P2P).
func init() {
	winc.P2POf = func(x any) *winc.P2PComm {
		c, ok := x.(*Comm)
		if !ok || rec != nil || chk != nil {
			return nil
		}
		e, err := c.engine("Send")
		if err != nil {
			return nil
		}
		e.lock()
		e.cfast = true
		e.release() // sets Quiet
		w := make([]int32, len(c.members))
		for r, m := range c.members {
			w[r] = int32(m)
		}
		return &winc.P2PComm{Eng: e.sh.P2P, Tx: e.sh.Tx, Rx: e.sh.Rx, Ctx: c.p2p().ctx, World: w, Me: c.Rank()}
	}
}

// The C interface's receives queued in C: a completed one as a request
// (winc.DoneRecv), and the lock and unlock that moves the pending ones
// into the engine (winc.P2PFlush, engine.migrateCQ).
func init() {
	winc.DoneRecv = func(src, tag int, n int64) any {
		return doneRequest(Status{Source: src, Tag: tag, Count: int(n), bytes: int(n)})
	}
	winc.P2PFlush = func(x any) error {
		c, ok := x.(*Comm)
		if !ok || c == nil || c.world == nil || c.world.eng == nil {
			return fmt.Errorf("comm: no point-to-point engine: %w", ErrComm)
		}
		e := c.world.eng
		e.lock()
		e.unlock()
		return nil
	}
}

func init() {
	winc.RefuseColl = func(x any, name string, kind uint8, bad error) error {
		if c, ok := x.(*Comm); ok && c != nil {
			return c.refuse(name, kind, bad)
		}
		return bad
	}
	winc.BarrierOf = func(x any) *winc.Barrier {
		c, ok := x.(*Comm)
		if !ok || c.check("Barrier") != nil || c.coll.Load() == nil || rec != nil || chk != nil {
			return nil
		}
		a := c.coll.Load()
		s := mkSig(format.CollBarrier, 0, 0, -1, 0)
		b := &winc.Barrier{
			Coll:      a.h,
			Sig:       [2]uint64{s.w0, s.w1},
			WakeLines: a.wake,
			N:         uint32(a.n), Parities: a.par, Spin: a.policy.Spin,
			Lines: a.seq(0, 0), Me: uint32(a.me),
		}
		b.WaitRound = func(r uint32, kind uint8) error {
			if err := a.waitRange(r, 0, a.n); err != nil {
				return c.wrapWait(kindName(kind), err)
			}
			return nil
		}
		b.Mismatch = func(r uint32, kind, same uint8) error {
			k := call{c: c, a: a, name: kindName(kind), r: r, p: int(r & (a.par - 1))}
			err := k.verdict(sameFields(same))
			if a.star && a.me == 0 {
				a.publishChecked() // the round is compared
			}
			return err
		}
		if a.star && a.me == 0 {
			b.Checked = a.chk.done
		}
		b.Sleepers = raw.Uint32At(a.mySleepers, 0)
		return b
	}
}
