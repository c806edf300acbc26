// Command corpus is shmrun --check's corpus: one small program per case,
// racy or race-free, chosen by the first argument. A racy case marks the
// lines of the two conflicting calls with a "// race" comment (one line
// when every rank runs it); a race-free case marks none. Run as 2 ranks,
// 3 for the cases named *3.
package main

import (
	"encoding/binary"
	"fmt"
	"os"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/win"
)

type env struct {
	c      *comm.Comm
	w      *win.Win
	me, n  int
	mine   win.Checked[int64] // this rank's part, checked
	rank0  win.Checked[int64] // rank 0's part (a shared window), checked
	result []int64
}

var cases = map[string]func(e *env) error{
	"fence_putput":         fencePutPut,
	"fence_disjoint":       fenceDisjoint,
	"fence_local_store":    fenceLocalStore,
	"fence_same_origin":    fenceSameOrigin,
	"fence_acc_put":        fenceAccPut,
	"fence_acc_types":      fenceAccTypes,
	"fence_acc_same":       fenceAccSame,
	"lock_shared":          lockShared,
	"lock_exclusive":       lockExclusive,
	"lockall_flush":        lockAllFlush,
	"lockall_noflush":      lockAllNoFlush,
	"pscw_ordered":         pscwOrdered,
	"pscw_two_origins3":    pscwTwoOrigins,
	"atomics_mcs":          atomicsMCS,
	"message_ordered":      messageOrdered,
	"loadstore_barrier":    loadStoreBarrier,
	"loadstore_ibarrier":   loadStoreIbarrier,
	"loadstore_unordered":  loadStoreUnordered,
	"ring_far":             ringFar,
	"deep_stack":           deepStack,
	"ring_pending":         ringPending,
	"acc_types_one_origin": accTypesOneOrigin,
	"repeat_flushed":       repeatFlushed,
	"repeat_unflushed":     repeatUnflushed,
	"repeat_put_put":       repeatPutPut,
	"repeat_message":       repeatMessage,
	"repeat_converted":     repeatConverted,
	"repeat_stores":        repeatStores,
	"repeat_fop_flushed":   repeatFOPFlushed,
	"repeat_fop_unflushed": repeatFOPUnflushed,
	"atomics_flag_spin":    atomicsFlagSpin,
	"atomics_flag_create":  atomicsFlagCreate,
	"atomics_flag_typed":   atomicsFlagTyped,
	"fence_acctype_put":    fenceAccTypePut,
}

func main() {
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "corpus:", err)
		os.Exit(1)
	}
}

func run(name string) error {
	c, err := comm.Init()
	if err != nil {
		return err
	}
	w, err := win.AllocateShared(c, 8*8, 8, nil)
	if err != nil {
		return err
	}
	e := &env{c: c, w: w, me: c.Rank(), n: c.Size(), result: make([]int64, 1)}
	if e.mine, err = win.NewChecked[int64](w, e.me); err != nil {
		return err
	}
	if e.rank0, err = win.NewChecked[int64](w, 0); err != nil {
		return err
	}
	f, ok := cases[name]
	if !ok {
		return fmt.Errorf("no case %q", name)
	}
	if err := f(e); err != nil {
		return err
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	if err := w.Free(); err != nil {
		return err
	}
	return comm.Finalize()
}

func do(steps ...error) error {
	for _, err := range steps {
		if err != nil {
			return err
		}
	}
	return nil
}

// Both ranks put to rank 0's word 0 in one fence epoch.
func fencePutPut(e *env) error {
	return do(e.w.Fence(0),
		win.PutT(e.w, []int64{int64(e.me)}, 0, 0), // race
		e.w.Fence(win.ModeNoSucceed))
}

// Each rank puts to its own word of rank 0; rank 0 reads them after the fence.
func fenceDisjoint(e *env) error {
	err := do(e.w.Fence(0), win.PutT(e.w, []int64{int64(e.me)}, 0, e.me), e.w.Fence(win.ModeNoSucceed))
	if e.me == 0 {
		_ = e.mine.Load(1)
	}
	return err
}

// Rank 1 puts to rank 0's word 2 while rank 0 stores to it in the same epoch.
func fenceLocalStore(e *env) error {
	if err := e.w.Fence(0); err != nil {
		return err
	}
	if e.me == 1 {
		if err := win.PutT(e.w, []int64{7}, 0, 2); err != nil { // race
			return err
		}
	} else {
		e.mine.Store(2, 8) // race
	}
	return e.w.Fence(win.ModeNoSucceed)
}

// Rank 1 puts twice to the same word of rank 0 in one epoch.
func fenceSameOrigin(e *env) error {
	if err := e.w.Fence(0); err != nil {
		return err
	}
	if e.me == 1 {
		if err := win.PutT(e.w, []int64{1}, 0, 3); err != nil { // race
			return err
		}
		if err := win.PutT(e.w, []int64{2, 3}, 0, 3); err != nil { // race
			return err
		}
	}
	return e.w.Fence(win.ModeNoSucceed)
}

// An accumulate and a put meet on rank 0's word 4.
func fenceAccPut(e *env) error {
	if err := e.w.Fence(0); err != nil {
		return err
	}
	var err error
	if e.me == 0 {
		err = win.Accumulate(e.w, []int64{1}, 0, 4, atomics.Sum) // race
	} else {
		err = win.PutT(e.w, []int64{9}, 0, 4) // race
	}
	return do(err, e.w.Fence(win.ModeNoSucceed))
}

// Accumulates of two basic types on the same bytes.
func fenceAccTypes(e *env) error {
	if err := e.w.Fence(0); err != nil {
		return err
	}
	var err error
	if e.me == 0 {
		err = win.Accumulate(e.w, []int64{1}, 0, 5, atomics.Sum) // race
	} else {
		err = win.Accumulate(e.w, []float64{1}, 0, 5, atomics.Sum) // race
	}
	return do(err, e.w.Fence(win.ModeNoSucceed))
}

// Accumulates of one type and op from every rank: allowed concurrently.
func fenceAccSame(e *env) error {
	return do(e.w.Fence(0), win.Accumulate(e.w, []int64{1}, 0, 5, atomics.Sum),
		win.Accumulate(e.w, []int64{1}, 0, 5, atomics.Sum), e.w.Fence(win.ModeNoSucceed))
}

// Shared locks from both ranks, a put to the same word under each: the
// epochs may overlap, nothing orders them.
func lockShared(e *env) error {
	return do(e.w.Lock(win.Shared, 0, 0),
		win.PutT(e.w, []int64{int64(e.me)}, 0, 6), // race
		e.w.Unlock(0))
}

// The same under exclusive locks: serialized.
func lockExclusive(e *env) error {
	return do(e.w.Lock(win.Exclusive, 0, 0), win.PutT(e.w, []int64{int64(e.me)}, 0, 6), e.w.Unlock(0))
}

// Rank 1 puts and flushes under lock_all, then a barrier; rank 0 loads.
func lockAllFlush(e *env) error {
	if err := e.w.LockAll(0); err != nil {
		return err
	}
	if e.me == 1 {
		if err := do(win.PutT(e.w, []int64{5}, 0, 1), e.w.Flush(0)); err != nil {
			return err
		}
	}
	if err := e.c.Barrier(); err != nil {
		return err
	}
	if e.me == 0 {
		_ = e.mine.Load(1)
	}
	return e.w.UnlockAll()
}

// The same without the flush: the put is not complete at the barrier.
func lockAllNoFlush(e *env) error {
	if err := e.w.LockAll(0); err != nil {
		return err
	}
	if e.me == 1 {
		if err := win.PutT(e.w, []int64{5}, 0, 1); err != nil { // race
			return err
		}
	}
	if err := e.c.Barrier(); err != nil {
		return err
	}
	if e.me == 0 {
		_ = e.mine.Load(1) // race
	}
	return e.w.UnlockAll()
}

// Rank 0 exposes, rank 1 puts in its access epoch; rank 0 loads after Wait.
func pscwOrdered(e *env) error {
	g := e.c.Group()
	if e.me == 0 {
		one, err := g.Incl(1)
		if err != nil {
			return err
		}
		if err := do(e.w.Post(one, 0), e.w.Wait()); err != nil {
			return err
		}
		_ = e.mine.Load(0)
		return nil
	}
	zero, err := g.Incl(0)
	if err != nil {
		return err
	}
	return do(e.w.Start(zero, 0), win.PutT(e.w, []int64{4}, 0, 0), e.w.Complete())
}

// Ranks 1 and 2 put to the same word of rank 0 in one exposure epoch.
func pscwTwoOrigins(e *env) error {
	g := e.c.Group()
	if e.me == 0 {
		both, err := g.Incl(1, 2)
		if err != nil {
			return err
		}
		return do(e.w.Post(both, 0), e.w.Wait())
	}
	zero, err := g.Incl(0)
	if err != nil {
		return err
	}
	return do(e.w.Start(zero, 0),
		win.PutT(e.w, []int64{int64(e.me)}, 0, 7), // race
		e.w.Complete())
}

// The standard's MCS lock mixes FetchAndOp(Replace), CompareAndSwap and
// NoOp reads on one word: compatible atomics.
func atomicsMCS(e *env) error {
	if err := e.w.LockAll(0); err != nil {
		return err
	}
	old, err := win.FetchAndOp(e.w, int64(e.me+1), 0, 0, atomics.Replace)
	if err == nil {
		_, err = win.CompareAndSwap(e.w, int64(0), old, 0, 0)
	}
	if err == nil {
		_, err = win.FetchAndOp(e.w, int64(0), 0, 0, atomics.NoOp)
	}
	return do(err, e.w.UnlockAll())
}

// Rank 0 stores, then sends; rank 1 receives, then gets the word.
func messageOrdered(e *env) error {
	msg := make([]byte, 1)
	if e.me == 0 {
		e.mine.Store(3, 42)
		return e.c.Send(msg, 1, 1)
	}
	if _, err := e.c.Recv(msg, 0, 1); err != nil {
		return err
	}
	return do(e.w.Lock(win.Shared, 0, 0), win.GetT(e.w, e.result, 0, 3), e.w.Unlock(0))
}

// Rank 0 stores to its part, a barrier, rank 1 loads it through the
// shared window.
func loadStoreBarrier(e *env) error {
	if e.me == 0 {
		e.mine.Store(4, 1)
	}
	if err := e.c.Barrier(); err != nil {
		return err
	}
	if e.me == 1 {
		_ = e.rank0.Load(4)
	}
	return nil
}

// The same without the barrier.
func loadStoreUnordered(e *env) error {
	if e.me == 0 {
		e.mine.Store(4, 1) // race
	} else {
		_ = e.rank0.Load(4) // race
	}
	return nil
}

// The same ordered by Ibarrier and Wait.
func loadStoreIbarrier(e *env) error {
	if e.me == 0 {
		e.mine.Store(4, 1)
	}
	r, err := e.c.Ibarrier()
	if err != nil {
		return err
	}
	if _, err := r.Wait(); err != nil {
		return err
	}
	if e.me == 1 {
		_ = e.rank0.Load(4)
	}
	return nil
}

// Rank 1 puts and flushes 3×RingLen times (ordered: its ring's records
// are known to every rank after the barrier), then both ranks put to rank
// 0's word 5 in the same lock_all epoch: the race is found past the
// records the checker has learned to skip.
func ringFar(e *env) error {
	if err := e.w.LockAll(0); err != nil {
		return err
	}
	if e.me == 1 {
		for i := range 768 {
			if err := do(win.PutT(e.w, []int64{int64(i)}, 0, i%4), e.w.Flush(0)); err != nil {
				return err
			}
		}
	}
	if err := e.c.Barrier(); err != nil {
		return err
	}
	if err := win.PutT(e.w, []int64{int64(e.me)}, 0, 5); err != nil { // race
		return err
	}
	if err := e.c.Barrier(); err != nil {
		return err
	}
	return e.w.UnlockAll()
}

// Both ranks put to rank 0's word 4 from deep in a recursion (a stack
// deeper than the frames the checker caches a line by), from two lines.
func deepStack(e *env) error {
	if err := e.w.LockAll(0); err != nil {
		return err
	}
	err := deep(40, func() error {
		if e.me == 0 {
			return win.PutT(e.w, []int64{1}, 0, 4) // race
		}
		return win.PutT(e.w, []int64{2}, 0, 4) // race
	})
	if err := do(err, e.c.Barrier()); err != nil {
		return err
	}
	return e.w.UnlockAll()
}

//go:noinline
func deep(n int, f func() error) error {
	if n == 0 {
		return f()
	}
	return deep(n-1, f)
}

// Rank 1's put to rank 0's word 6 is not complete at the barrier; rank 0
// loads word 0 (elsewhere: no race), then word 6: the first check must
// not skip the pending record for later ones.
func ringPending(e *env) error {
	if err := e.w.LockAll(0); err != nil {
		return err
	}
	if e.me == 1 {
		if err := win.PutT(e.w, []int64{6}, 0, 6); err != nil { // race
			return err
		}
	}
	if err := e.c.Barrier(); err != nil {
		return err
	}
	if e.me == 0 {
		_ = e.mine.Load(0)
		_ = e.mine.Load(6) // race
	}
	if err := e.c.Barrier(); err != nil {
		return err
	}
	return e.w.UnlockAll()
}

// Rank 0 accumulates an int64 and then a float64 into one word in one
// epoch: MPI orders a rank's accumulates per datatype only, so the two
// are not ordered.
func accTypesOneOrigin(e *env) error {
	if err := e.w.Fence(0); err != nil {
		return err
	}
	if e.me == 0 {
		if err := win.Accumulate(e.w, []int64{1}, 1, 6, atomics.Sum); err != nil { // race
			return err
		}
		if err := win.Accumulate(e.w, []float64{1}, 1, 6, atomics.Sum); err != nil { // race
			return err
		}
	}
	return e.w.Fence(win.ModeNoSucceed)
}

// Rank 1 puts to one word from one line, flushing each: the repeats are
// complete at the barrier.
func repeatFlushed(e *env) error {
	if err := e.w.LockAll(0); err != nil {
		return err
	}
	if e.me == 1 {
		for range 4 {
			if err := do(win.PutT(e.w, []int64{7}, 0, 2), e.w.Flush(0)); err != nil {
				return err
			}
		}
	}
	if err := e.c.Barrier(); err != nil {
		return err
	}
	if e.me == 0 {
		_ = e.mine.Load(2)
	}
	return e.w.UnlockAll()
}

// The same, the last repeat not flushed: it is not complete at the
// barrier.
func repeatUnflushed(e *env) error {
	if err := e.w.LockAll(0); err != nil {
		return err
	}
	if e.me == 1 {
		for i := range 4 {
			if err := win.PutT(e.w, []int64{7}, 0, 2); err != nil { // race
				return err
			}
			if i < 3 {
				if err := e.w.Flush(0); err != nil {
					return err
				}
			}
		}
	}
	if err := e.c.Barrier(); err != nil {
		return err
	}
	if e.me == 0 {
		_ = e.mine.Load(2) // race
	}
	if err := e.c.Barrier(); err != nil {
		return err
	}
	return e.w.UnlockAll()
}

// Rank 1 puts to one word from one line in a loop, flushing only after
// the last two: those two conflict with each other (one line, one rank).
func repeatPutPut(e *env) error {
	if err := e.w.LockAll(0); err != nil {
		return err
	}
	if e.me == 1 {
		for i := range 4 {
			if err := win.PutT(e.w, []int64{int64(i)}, 0, 3); err != nil { // race
				return err
			}
			if i < 2 {
				if err := e.w.Flush(0); err != nil {
					return err
				}
			}
		}
	}
	return e.w.UnlockAll()
}

// Rank 1's last repeated put is not flushed before its message, after
// which rank 0 gets the word.
func repeatMessage(e *env) error {
	msg := make([]byte, 1)
	if err := e.w.LockAll(0); err != nil {
		return err
	}
	if e.me == 1 {
		for i := range 3 {
			if err := win.PutT(e.w, []int64{7}, 0, 4); err != nil { // race
				return err
			}
			if i < 2 {
				if err := e.w.Flush(0); err != nil {
					return err
				}
			}
		}
		if err := e.c.Send(msg, 0, 1); err != nil {
			return err
		}
	} else {
		if _, err := e.c.Recv(msg, 1, 1); err != nil {
			return err
		}
		if err := do(win.GetT(e.w, e.result, 0, 4), e.w.Flush(0)); err != nil { // race
			return err
		}
	}
	if err := e.c.Barrier(); err != nil {
		return err
	}
	return e.w.UnlockAll()
}

// Rank 1's last repeated put is outstanding at a barrier and flushed
// after it, before a second one: complete there, so rank 0's load after
// the second is ordered.
func repeatConverted(e *env) error {
	if err := e.w.LockAll(0); err != nil {
		return err
	}
	if e.me == 1 {
		for i := range 3 {
			if err := win.PutT(e.w, []int64{7}, 0, 5); err != nil {
				return err
			}
			if i < 2 {
				if err := e.w.Flush(0); err != nil {
					return err
				}
			}
		}
	}
	if err := e.c.Barrier(); err != nil {
		return err
	}
	if e.me == 1 {
		if err := e.w.Flush(0); err != nil {
			return err
		}
	}
	if err := e.c.Barrier(); err != nil {
		return err
	}
	if e.me == 0 {
		_ = e.mine.Load(5)
	}
	return e.w.UnlockAll()
}

// Rank 0 stores to one word from one line again and again, then a
// barrier, then rank 1 gets it.
func repeatStores(e *env) error {
	if err := e.w.LockAll(0); err != nil {
		return err
	}
	if e.me == 0 {
		for i := range 5 {
			e.mine.Store(3, int64(i))
		}
	}
	if err := e.c.Barrier(); err != nil {
		return err
	}
	if e.me == 1 {
		if err := do(win.GetT(e.w, e.result, 0, 3), e.w.Flush(0)); err != nil {
			return err
		}
	}
	return e.w.UnlockAll()
}

// Rank 1 adds to one word from one line, flushing each: the repeated
// FetchAndOps are complete at the barrier.
func repeatFOPFlushed(e *env) error {
	if err := e.w.LockAll(0); err != nil {
		return err
	}
	if e.me == 1 {
		for range 5 {
			if _, err := win.FetchAndOp(e.w, int64(1), 0, 6, atomics.Sum); err != nil {
				return err
			}
			if err := e.w.Flush(0); err != nil {
				return err
			}
		}
	}
	if err := e.c.Barrier(); err != nil {
		return err
	}
	if e.me == 0 {
		_ = e.mine.Load(6)
	}
	return e.w.UnlockAll()
}

// The same, the last FetchAndOp not flushed: it is not complete at the
// barrier.
func repeatFOPUnflushed(e *env) error {
	if err := e.w.LockAll(0); err != nil {
		return err
	}
	if e.me == 1 {
		for i := range 5 {
			if _, err := win.FetchAndOp(e.w, int64(1), 0, 6, atomics.Sum); err != nil { // race
				return err
			}
			if i < 4 {
				if err := e.w.Flush(0); err != nil {
					return err
				}
			}
		}
	}
	if err := e.c.Barrier(); err != nil {
		return err
	}
	if e.me == 0 {
		_ = e.mine.Load(6) // race
	}
	return e.w.UnlockAll()
}

// Rank 1 puts a word to rank 0, flushes, then swaps a flag on rank 1 by
// FetchAndOp; rank 0 spins reading the flag by FetchAndOp(NoOp) + Flush
// until it is set, then gets the word: ordered (the swap's release before
// it, the read's join after it), many rounds.
func atomicsFlagSpin(e *env) error { return flagSpin(e, e.w) }

// The same on a window over each rank's private memory (MPI_Win_create),
// whose calls take the slow paths.
func atomicsFlagCreate(e *env) error {
	w, err := win.Create(e.c, make([]byte, 64), 8, nil)
	if err != nil {
		return err
	}
	if err := flagSpin(e, w); err != nil {
		return err
	}
	return w.Free()
}

func flagSpin(e *env, w *win.Win) error {
	if err := w.LockAll(0); err != nil {
		return err
	}
	for round := int64(1); round <= 50; round++ {
		if e.me == 1 {
			if err := do(win.PutT(w, []int64{round}, 0, 5), w.Flush(0)); err != nil {
				return err
			}
			if _, err := win.FetchAndOp(w, round, 1, 7, atomics.Replace); err != nil {
				return err
			}
			if err := w.Flush(1); err != nil {
				return err
			}
		} else {
			for v := int64(0); v != round; {
				var err error
				if v, err = win.FetchAndOp(w, int64(0), 1, 7, atomics.NoOp); err != nil {
					return err
				}
				if err := w.Flush(1); err != nil {
					return err
				}
			}
			if err := do(win.GetT(w, e.result, 0, 5), w.Flush(0)); err != nil {
				return err
			}
			if e.result[0] != round {
				return fmt.Errorf("round %d: got %d", round, e.result[0])
			}
		}
		// The next round's Put must not race this round's Get.
		if err := e.c.Barrier(); err != nil {
			return err
		}
	}
	return w.UnlockAll()
}

// int64s is the bytes of one int64.
func int64s(v int64) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }

// The flag of atomics_flag_spin set by AccumulateType(Replace) and read
// by GetAccumulateType(NoOp), the datatype forms.
func atomicsFlagTyped(e *env) error {
	i64 := dtype.Basic(atomics.Int64)
	w := e.w
	if err := w.LockAll(0); err != nil {
		return err
	}
	for round := int64(1); round <= 50; round++ {
		if e.me == 1 {
			if err := do(win.PutT(w, []int64{round}, 0, 5), w.Flush(0),
				win.AccumulateType(w, int64s(round), 1, i64, 1, 7, 1, i64, atomics.Replace), w.Flush(1)); err != nil {
				return err
			}
		} else {
			got := make([]byte, 8)
			for binary.LittleEndian.Uint64(got) != uint64(round) {
				if err := do(win.GetAccumulateType(w, nil, 0, i64, got, 1, i64, 1, 7, 1, i64, atomics.NoOp), w.Flush(1)); err != nil {
					return err
				}
			}
			if err := do(win.GetT(w, e.result, 0, 5), w.Flush(0)); err != nil {
				return err
			}
			if e.result[0] != round {
				return fmt.Errorf("round %d: got %d", round, e.result[0])
			}
		}
		if err := e.c.Barrier(); err != nil {
			return err
		}
	}
	return w.UnlockAll()
}

// fence_acc_put with the datatype form of Accumulate.
func fenceAccTypePut(e *env) error {
	if err := e.w.Fence(0); err != nil {
		return err
	}
	var err error
	if e.me == 0 {
		i64 := dtype.Basic(atomics.Int64)
		err = win.AccumulateType(e.w, int64s(1), 1, i64, 0, 4, 1, i64, atomics.Sum) // race
	} else {
		err = win.PutT(e.w, []int64{9}, 0, 4) // race
	}
	return do(err, e.w.Fence(win.ModeNoSucceed))
}
