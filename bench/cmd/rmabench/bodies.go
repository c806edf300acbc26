package main

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/win"
)

func lockallOrigin(c *ctx, _ *meas) error {
	if c.rank == 0 {
		return c.w.LockAll(0)
	}
	return nil
}

func unlockallOrigin(c *ctx, _ *meas) error {
	if c.rank == 0 {
		return c.w.UnlockAll()
	}
	return nil
}

func lockallEvery(c *ctx, _ *meas) error   { return c.w.LockAll(0) }
func unlockallEvery(c *ctx, _ *meas) error { return c.w.UnlockAll() }

// The timed bodies ignore errors inside the loop, as the C bodies do: the
// loop holds nothing but the operations. Setup calls are checked.

func put8Flush(c *ctx, _ *meas, k int64) error {
	src := c.src[:8]
	for range k {
		c.w.Put(src, 1, offPut)
		c.w.Flush(1)
	}
	return nil
}

func get8Flush(c *ctx, _ *meas, k int64) error {
	dst := c.src[:8]
	for range k {
		c.w.Get(dst, 1, offPut)
		c.w.Flush(1)
	}
	return nil
}

func putBW(c *ctx, m *meas, k int64) error {
	src := c.src[:m.arg]
	for range k {
		c.w.Put(src, 1, 0)
		c.w.Flush(1)
	}
	return nil
}

func accSum(c *ctx, _ *meas, k int64) error {
	one := []int64{1}
	for range k {
		win.Accumulate(c.w, one, 1, offAcc, atomics.Sum)
		c.w.Flush(1)
	}
	return nil
}

func fetchAndOp(c *ctx, _ *meas, k int64) error {
	for range k {
		win.FetchAndOp(c.w, int64(1), 1, offFop, atomics.Sum)
		c.w.Flush(1)
	}
	return nil
}

func casSetup(c *ctx, m *meas) error {
	if c.rank == 1 {
		atomic.StoreUint64(word(c.base, offCAS), 0)
	}
	c.seq, c.casFail = 0, 0
	if err := c.c.Barrier(); err != nil {
		return err
	}
	return lockallOrigin(c, m)
}

// casTeardown checks the row's answer, as the C twin does: every CAS
// swapped, and the target word holds the last value swapped in.
func casTeardown(c *ctx, m *meas) error {
	if err := unlockallOrigin(c, m); err != nil {
		return err
	}
	if err := c.c.Barrier(); err != nil {
		return err
	}
	var wrong int64
	if c.rank == 0 {
		got := []int64{-1}
		if err := c.w.Lock(win.Shared, 1, 0); err != nil {
			return err
		}
		if err := win.GetT(c.w, got, 1, offCAS); err != nil {
			return err
		}
		if err := c.w.Unlock(1); err != nil {
			return err
		}
		if c.casFail > 0 || got[0] != c.seq {
			wrong = 1
			fmt.Printf("INFO check cas_i64 WRONG on rank 0: %d calls did not swap; the word is %d, want %d\n", c.casFail, got[0], c.seq)
		}
	}
	return reportCheck(c, m.name, wrong)
}

func cas(c *ctx, _ *meas, k int64) error {
	for range k {
		old, _ := win.CompareAndSwap(c.w, c.seq+1, c.seq, 1, offCAS)
		if old == c.seq {
			c.seq++
		} else {
			c.casFail++
		}
		c.w.Flush(1)
	}
	return nil
}

func getAccSum(c *ctx, _ *meas, k int64) error {
	one, res := []int64{1}, []int64{0}
	for range k {
		win.GetAccumulate(c.w, one, res, 1, offGAcc, atomics.Sum)
		c.w.Flush(1)
	}
	return nil
}

func lockUnlockExcl(c *ctx, _ *meas, k int64) error {
	for range k {
		c.w.Lock(win.Exclusive, 1, 0)
		c.w.Unlock(1)
	}
	return nil
}

func lockallUnlockall(c *ctx, _ *meas, k int64) error {
	for range k {
		c.w.LockAll(0)
		c.w.UnlockAll()
	}
	return nil
}

func barrierBody(c *ctx, _ *meas, k int64) error {
	for range k {
		c.c.Barrier()
	}
	return nil
}

func fenceOpen(c *ctx, _ *meas) error  { return c.w.Fence(0) }
func fenceClose(c *ctx, _ *meas) error { return c.w.Fence(win.ModeNoSucceed) }

func fence(c *ctx, _ *meas, k int64) error {
	for range k {
		c.w.Fence(0)
	}
	return nil
}

func pscwPut8(c *ctx, _ *meas, k int64) error {
	switch c.rank {
	case 1:
		for range k {
			c.w.Post(c.gOrigin, 0)
			c.w.Wait()
		}
	case 0:
		src := c.src[:8]
		for range k {
			c.w.Start(c.gTarget, 0)
			c.w.Put(src, 1, offPut)
			c.w.Complete()
		}
	}
	return nil
}

func allocFree(c *ctx, m *meas, k int64, touch bool) error {
	for range k {
		w, err := win.AllocateShared(c.c, m.arg, 1, nil)
		if err != nil {
			return err
		}
		if touch {
			b := w.Local()
			for off := 0; off < len(b); off += page {
				b[off] = 1
			}
		}
		if err := w.Free(); err != nil {
			return err
		}
	}
	return nil
}

func allocFreePlain(c *ctx, m *meas, k int64) error { return allocFree(c, m, k, false) }
func allocFreeTouch(c *ctx, m *meas, k int64) error { return allocFree(c, m, k, true) }

func fopContended(c *ctx, _ *meas, k int64) error {
	for range k {
		win.FetchAndOp(c.w, int64(1), 0, offContend, atomics.Sum)
		c.w.Flush(0)
	}
	return nil
}

func fopDistinct(c *ctx, _ *meas, k int64) error {
	disp := offContend + c.rank*cacheLine
	for range k {
		win.FetchAndOp(c.w, int64(1), 0, disp, atomics.Sum)
		c.w.Flush(0)
	}
	return nil
}

// touchedSetup: shmrun's puts land eagerly, so the target waits by loads
// alone; the probe checks that claim as the C version does.
func touchedSetup(c *ctx, m *meas) error {
	const magic = 0x70756e6374
	if c.rank == 1 {
		atomic.StoreUint64(word(c.base, offTouch), 0)
	}
	if c.rank == 0 {
		atomic.StoreUint64(word(c.base, offAck), 0)
	}
	c.seq = 0
	if err := c.c.Barrier(); err != nil {
		return err
	}
	if err := lockallOrigin(c, m); err != nil {
		return err
	}
	eager := int64(0)
	switch c.rank {
	case 0:
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], magic)
		if err := c.w.Put(b[:], 1, offTouch); err != nil {
			return err
		}
		if err := c.w.Flush(1); err != nil {
			return err
		}
	case 1:
		t0 := time.Now()
		for atomic.LoadUint64(word(c.base, offTouch)) != magic && time.Since(t0) < 50*time.Millisecond {
		}
		if atomic.LoadUint64(word(c.base, offTouch)) == magic {
			eager = 1
		}
	}
	if err := c.c.Barrier(); err != nil {
		return err
	}
	if c.rank == 1 {
		atomic.StoreUint64(word(c.base, offTouch), 0)
	}
	if err := c.c.Barrier(); err != nil {
		return err
	}
	ev := []int64{eager}
	if err := comm.Bcast(c.c, ev, 1); err != nil {
		return err
	}
	eager = ev[0]
	if c.rank == 0 {
		if eager == 0 {
			return fmt.Errorf("a flushed put did not land in 50 ms")
		}
		fmt.Println("INFO put8_flush_touched target_wait load-spin (puts land eagerly)")
	}
	return nil
}

func put8Touched(c *ctx, _ *meas, k int64) error {
	switch c.rank {
	case 0:
		ack := word(c.base, offAck)
		var b [8]byte
		for range k {
			c.seq++
			v := c.seq
			binary.LittleEndian.PutUint64(b[:], uint64(v))
			c.w.Put(b[:], 1, offTouch)
			c.w.Flush(1)
			for atomic.LoadUint64(ack) != uint64(v) {
			}
		}
	case 1:
		w := word(c.base, offTouch)
		ack := word(c.part0, offAck)
		for range k {
			c.seq++
			v := c.seq
			for atomic.LoadUint64(w) != uint64(v) {
			}
			atomics.StoreRelease64(ack, uint64(v)) // C's __atomic_store_n(..., __ATOMIC_RELEASE)
		}
	}
	return nil
}

// touchedTeardown checks put8_flush_touched's answers. A Put to the wrong
// place stalls the loop (the run times out); here rank 1's word holds the
// last value put and the 56 bytes after it nothing, rank 0's ack word the
// last value acknowledged.
func touchedTeardown(c *ctx, m *meas) error {
	if err := unlockallOrigin(c, m); err != nil {
		return err
	}
	if err := c.c.Barrier(); err != nil {
		return err
	}
	var wrong int64
	off := offAck
	if c.rank == 1 {
		off = offTouch
	}
	if got := atomic.LoadUint64(word(c.base, off)); c.rank <= 1 && got != uint64(c.seq) {
		fmt.Printf("INFO check %s WRONG on rank %d: the last value is %d, want %d\n", m.name, c.rank, got, c.seq)
		wrong++
	}
	for o := offTouch + 8; c.rank == 1 && o < offAck; o += 8 {
		if got := atomic.LoadUint64(word(c.base, o)); got != 0 {
			if wrong == 0 {
				fmt.Printf("INFO check %s WRONG on rank 1: %d bytes past the word hold %d\n", m.name, o-offTouch, got)
			}
			wrong++
		}
	}
	return reportCheck(c, m.name, wrong)
}

func word(b []byte, off int) *uint64 { return raw.Uint64At(b, int64(off)) }

var table = []meas{
	{name: "put8_flush", kind: origin, need2: true, setup: lockallOrigin, body: put8Flush, teardown: rmaCheckTeardown},
	{name: "get8_flush", kind: origin, need2: true, setup: lockallOrigin, body: get8Flush, teardown: rmaCheckTeardown},
	{name: "put8_flush_touched", kind: all, need2: true, setup: touchedSetup, body: put8Touched, teardown: touchedTeardown},
	putBWRow("put_bw_4096", 4*kib, false),
	putBWRow("put_bw_65536", 64*kib, false),
	putBWRow("put_bw_1048576", mib, false),
	putBWRow("put_bw_16777216", 16*mib, true),
	putBWRow("put_bw_67108864", 64*mib, true),
	atomicRow("acc_sum_i64", origin, accSum),
	atomicRow("fetch_and_op_i64", origin, fetchAndOp),
	{name: "cas_i64", kind: origin, need2: true, setup: casSetup, body: cas, teardown: casTeardown},
	atomicRow("get_acc_sum_i64", origin, getAccSum),
	{name: "lock_unlock_excl", kind: origin, need2: true, body: lockUnlockExcl},
	{name: "lockall_unlockall", kind: origin, need2: true, body: lockallUnlockall},
	{name: "barrier", kind: all, body: barrierBody},
	{name: "fence", kind: all, setup: fenceOpen, body: fence, teardown: fenceClose},
	{name: "pscw_put8", kind: all, need2: true, body: pscwPut8, teardown: pscwCheckTeardown},
	{name: "alloc_free_1m", kind: all, arg: mib, body: allocFreePlain},
	{name: "alloc_free_256m", kind: all, arg: 256 * mib, body: allocFreePlain},
	{name: "alloc_touch_free_1m", kind: all, arg: mib, body: allocFreeTouch},
	{name: "alloc_touch_free_256m", kind: all, arg: 256 * mib, body: allocFreeTouch},
	atomicRow("fetch_and_op_contended_i64", span, fopContended),
	atomicRow("fetch_and_op_distinct_i64", span, fopDistinct),
}

// atomicRow is a row of Sum operations on int64 words (atomicSetup): rank
// 0 on a word at rank 1 (origin kind), or every rank on words at rank 0
// (span kind).
func atomicRow(name string, k kind, body func(*ctx, *meas, int64) error) meas {
	return meas{name: name, kind: k, need2: k == origin, setup: atomicSetup, body: body, teardown: atomicTeardown}
}

func putBWRow(name string, bytes int, full bool) meas {
	return meas{name: name, kind: origin, need2: true, fullOnly: full, arg: bytes, setup: lockallOrigin, body: putBW, teardown: rmaCheckTeardown}
}

// rmaPattern is byte j of the pattern rmaCheckTeardown moves in n bytes
// (rmabench.c's rma_pattern).
func rmaPattern(j, n int) byte { return byte(j*131 + j/251 + n + 1) }

// patternWrong counts the bytes of b (on rank) that are not rmaPattern's
// for a transfer of len(b) bytes, saying where the first one is.
func patternWrong(m *meas, rank int, b []byte) int64 {
	wrong := int64(0)
	for j, g := range b {
		if want := rmaPattern(j, len(b)); g != want {
			if wrong == 0 {
				fmt.Printf("INFO check %s WRONG on rank %d: byte %d of %d is %d, want %d\n", m.name, rank, j, len(b), g, want)
			}
			wrong++
		}
	}
	return wrong
}

// rmaCheckTeardown checks the answers of the Put and Get rows as
// rmabench.c's rma_check_teardown does: one more operation of the row's
// size moves a pattern the timed ones never wrote, and the rank that did
// not issue it checks every byte, reading its own part under an exclusive
// lock on itself. A runtime whose Put lands in the wrong place must not be
// timed as if it had done the work.
func rmaCheckTeardown(c *ctx, m *meas) error {
	get := m.name == "get8_flush"
	n, disp := 8, offPut
	if m.arg > 0 {
		n, disp = m.arg, 0
	}
	buf := make([]byte, n)
	wrong := int64(0)
	if !get && c.rank == 0 {
		for j := range buf {
			buf[j] = rmaPattern(j, n)
		}
		if err := c.w.Put(buf, 1, disp); err != nil {
			return err
		}
		if err := c.w.Flush(1); err != nil {
			return err
		}
	}
	if err := unlockallOrigin(c, m); err != nil {
		return err
	}
	if err := c.c.Barrier(); err != nil {
		return err
	}
	if c.rank == 1 {
		if err := c.w.Lock(win.Exclusive, 1, 0); err != nil {
			return err
		}
		at := c.base[disp : disp+n]
		for j := range at {
			switch {
			case get:
				at[j] = rmaPattern(j, n)
			case at[j] != rmaPattern(j, n):
				if wrong == 0 {
					fmt.Printf("INFO check %s WRONG on rank 1: byte %d of %d is %d, want %d\n", m.name, j, n, at[j], rmaPattern(j, n))
				}
				wrong++
			}
		}
		if err := c.w.Unlock(1); err != nil {
			return err
		}
	}
	if err := c.c.Barrier(); err != nil {
		return err
	}
	if get && c.rank == 0 {
		if err := c.w.Lock(win.Shared, 1, 0); err != nil {
			return err
		}
		if err := c.w.Get(buf, 1, disp); err != nil {
			return err
		}
		if err := c.w.Unlock(1); err != nil {
			return err
		}
		wrong += patternWrong(m, 0, buf)
	}
	return reportCheck(c, m.name, wrong)
}

// reportCheck sums the wrong answers every rank found and has rank 0 print
// the row's verdict ("INFO check <row> ok|WRONG").
func reportCheck(c *ctx, name string, wrong int64) error {
	sum := []int64{0}
	if err := comm.Reduce(c.c, []int64{wrong}, sum, atomics.Sum, 0); err != nil {
		return err
	}
	if c.rank == 0 {
		verdict := "ok"
		if sum[0] != 0 {
			verdict = "WRONG"
		}
		fmt.Printf("INFO check %s %s\n", name, verdict)
	}
	return nil
}

// The answers of the atomic rows (acc_sum_i64, fetch_and_op_i64,
// get_acc_sum_i64, fetch_and_op_contended_i64, fetch_and_op_distinct_i64;
// rmabench.c's atomic_setup and atomic_teardown): their words start at 0,
// every operation adds 1, and timedBatch counts the operations each rank
// made (c.ops). After the timed batches each working rank makes
// atomicCheckOps more of its row's operations and keeps the values they
// fetch: on a word of its own each must be the count of the operations
// made before it; on the contended word each rank's must grow and all
// ranks' together must be every count once. Then every word must hold the
// count of the operations made on it, read back under a lock. A runtime
// that loses, repeats or misplaces an operation, or fetches a stale value,
// must not be timed as if it had done the work.
const atomicCheckOps = 16

// atomicTarget is the rank that holds an atomic row's words.
func atomicTarget(m *meas) int {
	if m.kind == origin {
		return 1
	}
	return 0
}

// atomicDisp is the displacement, at atomicTarget, of the word rank r's
// operations go to.
func atomicDisp(m *meas, r int) int {
	switch m.name {
	case "acc_sum_i64":
		return offAcc
	case "fetch_and_op_i64":
		return offFop
	case "get_acc_sum_i64":
		return offGAcc
	case "fetch_and_op_distinct_i64":
		return offContend + r*cacheLine
	}
	return offContend
}

// atomicSetup zeroes the row's words, their owner under an exclusive lock
// on itself, then opens the working ranks' epoch.
func atomicSetup(c *ctx, m *meas) error {
	if t := atomicTarget(m); c.rank == t {
		if err := c.w.Lock(win.Exclusive, t, 0); err != nil {
			return err
		}
		for r := range c.size {
			atomic.StoreUint64(word(c.base, atomicDisp(m, r)), 0)
		}
		if err := c.w.Unlock(t); err != nil {
			return err
		}
	}
	if err := c.c.Barrier(); err != nil {
		return err
	}
	if m.kind == origin {
		return lockallOrigin(c, m)
	}
	return lockallEvery(c, m)
}

func atomicTeardown(c *ctx, m *meas) error {
	t, disp := atomicTarget(m), atomicDisp(m, c.rank)
	works := m.kind != origin || c.rank == 0
	shared := m.name == "fetch_and_op_contended_i64"
	fetch := m.name != "acc_sum_i64"
	before, got := c.ops, make([]int64, atomicCheckOps)
	for i := 0; works && i < atomicCheckOps; i++ {
		var err error
		got[i] = -1
		switch m.name {
		case "acc_sum_i64":
			err = win.Accumulate(c.w, []int64{1}, t, disp, atomics.Sum)
		case "get_acc_sum_i64":
			err = win.GetAccumulate(c.w, []int64{1}, got[i:i+1], t, disp, atomics.Sum)
		default:
			got[i], err = win.FetchAndOp(c.w, int64(1), t, disp, atomics.Sum)
		}
		if err == nil {
			err = c.w.Flush(t)
		}
		if err != nil {
			return err
		}
	}
	if works {
		c.ops += atomicCheckOps
	}
	var err error
	if m.kind == origin {
		err = unlockallOrigin(c, m)
	} else {
		err = unlockallEvery(c, m)
	}
	if err != nil {
		return err
	}
	wrong := int64(0)
	for i := 0; works && fetch && i < atomicCheckOps; i++ {
		switch want := before + int64(i); {
		case shared && i > 0 && got[i] <= got[i-1]:
			if wrong == 0 {
				fmt.Printf("INFO check %s WRONG on rank %d: call %d of %d fetched %d after %d\n", m.name, c.rank, i+1, atomicCheckOps, got[i], got[i-1])
			}
			wrong++
		case !shared && got[i] != want:
			if wrong == 0 {
				fmt.Printf("INFO check %s WRONG on rank %d: call %d of %d fetched %d, want %d\n", m.name, c.rank, i+1, atomicCheckOps, got[i], want)
			}
			wrong++
		}
	}
	ops := make([]int64, c.size)
	if err := comm.Gather(c.c, []int64{c.ops}, ops, 0); err != nil {
		return err
	}
	var all []int64
	if shared {
		if c.rank == 0 {
			all = make([]int64, c.size*atomicCheckOps)
		}
		if err := comm.Gather(c.c, got, all, 0); err != nil {
			return err
		}
	}
	if c.rank == 0 {
		total := int64(0)
		for _, n := range ops {
			total += n
		}
		// The contended word's last len(all) values, each fetched once.
		from := total - int64(len(all))
		seen := make([]bool, len(all))
		for _, g := range all {
			if g < from || g >= total || seen[g-from] {
				if wrong == 0 {
					fmt.Printf("INFO check %s WRONG on rank 0: the ranks' last %d calls fetched %d, want each of %d to %d once\n", m.name, len(all), g, from, total-1)
				}
				wrong++
				continue
			}
			seen[g-from] = true
		}
		words := make([]int64, 1)
		if m.name == "fetch_and_op_distinct_i64" {
			words = make([]int64, c.size)
		}
		if err := c.w.Lock(win.Shared, t, 0); err != nil {
			return err
		}
		for r := range words {
			words[r] = -1
			if err := win.GetT(c.w, words[r:r+1], t, atomicDisp(m, r)); err != nil {
				return err
			}
		}
		if err := c.w.Unlock(t); err != nil {
			return err
		}
		for r, w := range words {
			want := total
			if len(words) > 1 {
				want = ops[r]
			}
			if w != want {
				if wrong == 0 {
					fmt.Printf("INFO check %s WRONG on rank 0: the word at rank %d displacement %d is %d, want %d\n", m.name, t, atomicDisp(m, r), w, want)
				}
				wrong++
			}
		}
	}
	return reportCheck(c, m.name, wrong)
}

// pscwCheckTeardown checks the answer of pscw_put8 as rmabench.c's
// pscw_check_teardown does: one more epoch puts a pattern the timed ones
// never wrote into the bytes rank 1 poisoned before its Post, and rank 1
// checks every byte after its Wait.
func pscwCheckTeardown(c *ctx, m *meas) error {
	const n = 8
	wrong := int64(0)
	switch c.rank {
	case 0:
		buf := make([]byte, n)
		for j := range buf {
			buf[j] = rmaPattern(j, n)
		}
		if err := c.w.Start(c.gTarget, 0); err != nil {
			return err
		}
		if err := c.w.Put(buf, 1, offPut); err != nil {
			return err
		}
		if err := c.w.Complete(); err != nil {
			return err
		}
	case 1:
		at := c.base[offPut : offPut+n]
		clear(at)
		if err := c.w.Post(c.gOrigin, 0); err != nil {
			return err
		}
		if err := c.w.Wait(); err != nil {
			return err
		}
		wrong += patternWrong(m, 1, at)
	}
	return reportCheck(c, m.name, wrong)
}
