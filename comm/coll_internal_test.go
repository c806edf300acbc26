//go:build !mpi

package comm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/shm"
)

// sealedColl returns a collective area header for l, as rank 0 writes it.
func sealedColl(t testing.TB, l format.CollLayout) []byte {
	mem := make([]byte, shm.PageSize)
	binary.LittleEndian.PutUint32(mem[format.CollRanks:], uint32(l.N))
	binary.LittleEndian.PutUint32(mem[format.CollChunk:], uint32(l.Chunk))
	if err := shm.WriteHeader(mem, shm.Header{Version: shm.FormatVersion, Kind: shm.KindCollective,
		HeaderLen: format.CollChunk + 4, TotalSize: uint64(l.Total)}); err != nil {
		t.Fatal(err)
	}
	return mem
}

// checkCollHeader reads a header another process wrote: it accepts exactly
// an intact header of the layout this rank computes, and never panics.
func FuzzCheckCollHeader(f *testing.F) {
	l := format.NewCollLayout(3, shm.PageSize)
	f.Add(sealedColl(f, l), 3)
	f.Add(sealedColl(f, format.NewCollLayout(4, shm.PageSize)), 3)
	f.Add(make([]byte, 64), 1)
	f.Add([]byte("SHMRUN\x00\x01"), 2)
	f.Fuzz(func(t *testing.T, hdr []byte, n int) {
		if n < 1 || n > 1000 {
			return
		}
		l := format.NewCollLayout(n, shm.PageSize)
		mem := make([]byte, l.Total)
		copy(mem, hdr)
		err := checkCollHeader(mem, l)
		good := sealedColl(t, l)
		if err == nil && string(mem[:format.CollChunk+4]) != string(good[:format.CollChunk+4]) {
			t.Fatalf("accepted a header unlike rank 0's for %d ranks: %x", n, hdr)
		}
		if err != nil && !errors.Is(err, shm.ErrMismatch) && !errors.Is(err, shm.ErrBadMagic) &&
			!errors.Is(err, shm.ErrCorrupt) && !errors.Is(err, shm.ErrVersion) && !errors.Is(err, shm.ErrKind) &&
			!errors.Is(err, shm.ErrHeaderSize) && !errors.Is(err, shm.ErrTruncated) {
			t.Fatalf("refused with an error of no class: %v", err)
		}
	})
}

func TestCheckCollHeader(t *testing.T) {
	l := format.NewCollLayout(5, shm.PageSize)
	mem := make([]byte, l.Total)
	copy(mem, sealedColl(t, l))
	if err := checkCollHeader(mem, l); err != nil {
		t.Fatalf("an intact header: %v", err)
	}
	other := make([]byte, l.Total)
	copy(other, sealedColl(t, format.NewCollLayout(6, shm.PageSize)))
	if err := checkCollHeader(other, l); err == nil {
		t.Fatal("a header for 6 ranks accepted for 5")
	}
	mem[format.CollChunk] ^= 1
	if err := checkCollHeader(mem, l); !errors.Is(err, shm.ErrCorrupt) {
		t.Fatalf("a flipped bit: %v, want ErrCorrupt", err)
	}
}

// readRemote fails with an error, not a fault, on a process that does not
// exist and on an address that is not mapped.
func TestReadRemoteErrors(t *testing.T) {
	buf := make([]byte, 64)
	if err := readRemote(1<<30-7, buf, 0x10000); err == nil {
		t.Error("reading a process that does not exist succeeded")
	}
	if err := readRemote(int32(os.Getpid()), buf, 8); err == nil {
		t.Error("reading an unmapped address succeeded")
	}
	src := []byte("single copy")
	if err := readRemote(int32(os.Getpid()), buf[:len(src)], uint64(raw.Addr(src))); err != nil || string(buf[:len(src)]) != string(src) {
		t.Errorf("reading this process: %q, %v", buf[:len(src)], err)
	}
}

// TestRoundsWrap: two ranks' rounds pass 2^32 in loops of calls where the
// root runs ahead (offer) and of exchanges: open must still wait for the
// round before at rounds 0 and 1 (a wrapped counter), and every result
// must be the one its call sent.
func TestRoundsWrap(t *testing.T) {
	cs, err := NewLocalWorld(2)
	if err != nil {
		t.Fatal(err)
	}
	var phases [2]sync.WaitGroup // barriers of the two goroutines, outside the runtime
	for i := range phases {
		phases[i].Add(2)
	}
	meet := func(i int) {
		phases[i].Done()
		phases[i].Wait()
	}
	errs := make(chan error, 2)
	for _, c := range cs {
		go func() {
			errs <- func() error {
				if err := c.Barrier(); err != nil { // the area exists, round 1 done
					return err
				}
				a := c.coll.Load()
				meet(0)
				// Both ranks are between calls: move every round counter and
				// round word 40 rounds short of the wrap, as if that many
				// calls had run.
				const start = 1<<32 - 40
				a.h.Round, a.h.Seen = start, start
				for p := range 2 {
					r := uint32(start)
					if r&1 != uint32(p) {
						r--
					}
					*a.line(a.me, int(p)).ev.Seq = r
				}
				meet(1)
				me := c.Rank()
				for i := range 80 {
					x := []int64{int64(1000*i + me)}
					if err := Bcast(c, x, i%2); err != nil || x[0] != int64(1000*i+i%2) {
						return errors.Join(err, errors.New("Bcast across the wrap: wrong data"))
					}
					s := []int64{int64(i + me)}
					r := []int64{0}
					if err := Reduce(c, s, r, atomics.Sum, 0); err != nil || me == 0 && r[0] != int64(2*i+1) {
						return errors.Join(err, errors.New("Reduce across the wrap: wrong data"))
					}
					if err := AllreduceInPlace(c, s, atomics.Sum); err != nil || s[0] != int64(2*i+1) {
						return errors.Join(err, errors.New("Allreduce across the wrap: wrong data"))
					}
				}
				if int32(c.coll.Load().h.Round-start) < 200 {
					return errors.New("the rounds did not pass the wrap")
				}
				return nil
			}()
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// A rank that wakes the sleepers of its flag line leaves the word they
// sleep on at the round it stored: that word is the state itself, and the
// increment a doorbell's wake-up makes (barrier.Event.Notify) would
// announce the next round before the rank made it (TestIbarrierWake: the
// same of the Ibarrier count). A rank that had published further then took
// the bumped round for every rank's (its Seen) and compared a signature
// its peer was still writing (a data race the race detector saw in CI).
func TestWakeKeepsRound(t *testing.T) {
	l := format.NewCollLayout(3, shm.PageSize)
	heap := make([]uint64, l.Total/8)
	a, err := newCollArea(raw.Bytes(heap), l, 1, nil, barrier.DefaultPolicy)
	if err != nil {
		t.Fatal(err)
	}
	defer a.release()
	for r := uint32(1); r <= 2*a.par; r++ {
		ev := a.line(1, int(r&(a.par-1))).ev
		atomic.StoreUint32(ev.Sleepers, 1) // a rank asleep on it
		a.post(r)
		a.flush()
		if got := atomic.LoadUint32(ev.Seq); got != r {
			t.Fatalf("round %d published and its sleepers woken: the round word says %d", r, got)
		}
		atomic.StoreUint32(ev.Sleepers, 0)
	}
}

// A rank's wake-up of the ranks asleep in an Ibarrier leaves its count
// alone: the count is the word they sleep on, and the increment of a
// doorbell's wake-up completed a sleeper's next Ibarrier before this rank
// made it.
func TestIbarrierWake(t *testing.T) {
	cs, err := NewLocalWorld(2)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	go func() {
		errs <- func() error {
			c := cs[0]
			if err := c.Barrier(); err != nil { // the area exists
				return err
			}
			sleepers := c.coll.Load().ibar[0].Sleepers
			for i := 0; atomic.LoadUint32(sleepers) == 0; i++ {
				if i == 10000 {
					return errors.New("rank 1 never slept in its Ibarrier")
				}
				time.Sleep(time.Millisecond)
			}
			first, err := c.Ibarrier() // rank 1 asleep on its count
			if err == nil {
				_, err = first.Wait()
			}
			if err == nil {
				_, err = RecvT(c, []int32{0}, 1, 0) // rank 1 has tested its second
			}
			if err != nil {
				return err
			}
			second, err := c.Ibarrier()
			if err != nil {
				return err
			}
			_, err = second.Wait()
			return err
		}()
	}()
	go func() {
		errs <- func() error {
			c := cs[1]
			if err := c.Barrier(); err != nil {
				return err
			}
			first, err := c.Ibarrier()
			if err != nil {
				return err
			}
			second, err := c.Ibarrier()
			if err != nil {
				return err
			}
			if _, err := first.Wait(); err != nil {
				return err
			}
			if _, done, err := second.Test(); done || err != nil {
				return fmt.Errorf("the second Ibarrier completed (%v) before rank 0 made it: %v", done, err)
			}
			if err := SendT(c, []int32{1}, 0, 0); err != nil {
				return err
			}
			_, err = second.Wait()
			return err
		}()
	}()
	for range 2 {
		if err := <-errs; err != nil {
			cs[0].Abort(1)
			t.Fatal(err)
		}
	}
}

// barrierLines runs Barriers over every line of the ranks cs of a local
// world: their lines are read in the round itself, where the first's (the
// area's making, the general path) is read by every rank up to P/2 rounds
// on, which would hold the tests' ranks that run a ring ahead.
func barrierLines(t *testing.T, cs []*Comm) {
	errs := make(chan error, len(cs))
	for _, c := range cs {
		go func() {
			for range 2 * format.CollParities(len(cs)) {
				if err := c.Barrier(); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range cs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// A rank whose call differs from a line's owner's may look at the line
// after its owner has written it over, the owner not counting it among
// the line's readers (coll_check.go). Rank 3's Bcast from root 1 meets
// the others' Bcasts from root 0; by the time it looks at its "root"'s
// line, rank 1 has run a whole ring of rounds on and broadcast, as root
// 1, a round whose signature is just what rank 3 expects. Rank 3 must
// see that the line no longer holds its round, fail with rank 0's
// verdict, and not take the later round's data for its own; every other
// rank must learn of the mismatch by the next Barrier.
func TestMovedLine(t *testing.T) {
	const n = 4
	cs, err := NewLocalWorld(n)
	if err != nil {
		t.Fatal(err)
	}
	barrierLines(t, cs)
	a3 := cs[3].coll.Load()
	if !a3.star {
		t.Fatalf("%d ranks: no checker", n)
	}
	par := a3.par
	r0 := a3.h.Round + 1
	// Rank 3's arrival in round r0, as its Bcast from root 1 makes it,
	// before it reads anything.
	line := a3.line(3, int(r0&(par-1)))
	sg := mkSig(format.CollBcast, uint8(atomics.Float64), 0, 1, 1)
	storeSig(line.meta[metaSig:metaSig+16], sg.w0, sg.w1)
	atomic.StoreUint32(line.ev.Seq, r0)

	// Ranks 0 to 2: a ring of Bcasts from root 0, then one from root 1
	// (rank 1's 42), then a Barrier; each keeps the mismatch it is told of.
	var wg sync.WaitGroup
	told := make([]error, n)
	for q := range n - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := cs[q]
			buf := []float64{0}
			keep := func(err error) bool {
				if err != nil && told[q] == nil {
					told[q] = err
				}
				return err == nil || ran(err)
			}
			for i := range par + 1 {
				root, want := 0, float64(i)
				if i == par {
					root, want = 1, 42
				}
				if q == root {
					buf[0] = want
				}
				if err := Bcast(c, buf, root); !keep(err) {
					return
				} else if buf[0] != want {
					told[q] = fmt.Errorf("Bcast %d: got %v, want %v", i, buf[0], want)
					return
				}
			}
			keep(c.Barrier())
		}()
	}
	// Wait for rank 1's Bcast from root 1: its line of parity r0 moved on.
	l1 := a3.line(1, int(r0&(par-1)))
	for i := 0; atomic.LoadUint32(l1.ev.Seq) != r0+par; i++ {
		if i == 20000 {
			for q := range n {
				aq := cs[q].coll.Load()
				t.Logf("rank %d round %d seen %d cseen %d npend %d", q, aq.h.Round, aq.h.Seen, aq.cseen, aq.npend)
			}
			t.Fatalf("rank 1 never got to round %d (its line says %d)", r0+par, atomic.LoadUint32(l1.ev.Seq))
		}
		time.Sleep(100 * time.Microsecond)
	}
	buf := []float64{-1}
	err = Bcast(cs[3], buf, 1)
	if !errors.Is(err, ErrRoot) || errors.Is(err, ErrEarlierCall) {
		t.Errorf("rank 3's Bcast from root 1 against root 0, its root's line moved on: %v (data %v), want ErrRoot in the call", err, buf[0])
	}
	// Rank 3 goes on with the others' calls.
	for i := 1; i <= int(par); i++ {
		root := 0
		if i == int(par) {
			root = 1
		}
		if err := Bcast(cs[3], buf, root); err != nil && !ran(err) {
			t.Errorf("rank 3's Bcast %d: %v", i, err)
		}
	}
	if err := cs[3].Barrier(); err != nil && !ran(err) {
		t.Errorf("rank 3's Barrier: %v", err)
	}
	wg.Wait()
	for q := range n - 1 {
		if !errors.Is(told[q], ErrRoot) {
			t.Errorf("rank %d by its Barrier: %v, want the mismatch (ErrRoot)", q, told[q])
		}
	}
}

// A rank that compares every line of a round (its data's types match its
// root's only by size, so its check of the root fails and it compares
// all) finds another reader's line moved on: that reader does not count
// it among its line's readers, and rank 0 has compared the round and
// found nothing. The call is not a mismatch: rank 1 must get its data and
// no error (it got "the ranks' calls differ" before the record was read
// for a moved line).
func TestMovedLineMatched(t *testing.T) {
	const n = 3
	cs, err := NewLocalWorld(n)
	if err != nil {
		t.Fatal(err)
	}
	par := uint32(format.CollParities(n))
	barrierLines(t, cs)
	errs := make(chan error, n)
	a1 := cs[1].coll.Load()
	r0 := a1.h.Round + 1
	// Rank 1's arrival in round r0, as its BcastType of 8 bytes makes it.
	line := a1.line(1, int(r0&(par-1)))
	sg := mkSig(format.CollBcast, typAny, 0, 0, 8)
	storeSig(line.meta[metaSig:metaSig+16], sg.w0, sg.w1)
	atomic.StoreUint32(line.ev.Seq, r0)
	// Ranks 0 and 2: P+1 Bcasts of one int64 from root 0, then a Barrier.
	for _, q := range []int{0, 2} {
		go func() {
			errs <- func() error {
				for i := range par + 1 {
					v := []int64{-1}
					if q == 0 {
						v[0] = int64(i)
					}
					if err := Bcast(cs[q], v, 0); err != nil {
						return fmt.Errorf("rank %d: Bcast %d: %w", q, i, err)
					}
					if v[0] != int64(i) {
						return fmt.Errorf("rank %d: Bcast %d got %d", q, i, v[0])
					}
				}
				return cs[q].Barrier()
			}()
		}()
	}
	l2 := a1.line(2, int(r0&(par-1)))
	for i := 0; atomic.LoadUint32(l2.ev.Seq) != r0+par; i++ {
		if i == 20000 {
			t.Fatalf("rank 2 never got to round %d (its line says %d)", r0+par, atomic.LoadUint32(l2.ev.Seq))
		}
		time.Sleep(100 * time.Microsecond)
	}
	buf := make([]byte, 8)
	if err := BcastType(cs[1], buf, 8, dtype.Byte, 0); err != nil || binary.LittleEndian.Uint64(buf) != 0 {
		t.Errorf("rank 1's BcastType of bytes against int64s, another reader's line moved on: %v (data %x), want no error and 0", err, buf)
	}
	for i := uint32(1); i <= par; i++ {
		v := []int64{-1}
		if err := Bcast(cs[1], v, 0); err != nil || v[0] != int64(i) {
			t.Errorf("rank 1: Bcast %d: %v, got %d", i, err, v[0])
		}
	}
	if err := cs[1].Barrier(); err != nil {
		t.Errorf("rank 1: Barrier: %v", err)
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// A rank learns of a mismatch it did not see in the call once: from rank
// 0's record or from its own late check (settle), not from both. Rank 0
// passes a count of 2 to a Bcast from root 1 of 1 element elsewhere; rank
// 0 fails in the call, ranks 1 (the root) and 2 (whose root matched) in a
// later call, and each rank exactly once over the calls that follow.
func TestLateReportedOnce(t *testing.T) {
	const n = 3
	cs, err := NewLocalWorld(n)
	if err != nil {
		t.Fatal(err)
	}
	par := uint32(format.CollParities(n))
	var wg sync.WaitGroup
	r0done := make(chan struct{})
	got := make([][]error, n)
	for q, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c.coll.Load() == nil || c.coll.Load().h.Round < par-1 {
				if err := c.Barrier(); err != nil {
					got[q] = append(got[q], err)
				}
			}
			m := 1
			if q == 0 {
				m = 2
			}
			got[q] = append(got[q], Bcast(c, make([]float64, m), 1))
			if q == 0 {
				close(r0done)
			} else {
				<-r0done
			}
			got[q] = append(got[q], Bcast(c, make([]float64, 1), 1))
			for range 4 {
				got[q] = append(got[q], c.Barrier())
			}
		}()
	}
	wg.Wait()
	for q, errs := range got {
		var bad []error
		for _, err := range errs {
			if err != nil {
				bad = append(bad, err)
			}
		}
		if len(bad) != 1 || !errors.Is(bad[0], ErrCount) {
			t.Errorf("rank %d: errors %v, want the mismatch (ErrCount) once", q, bad)
		}
	}
}

// A round the C interface ran (mpi_fast.h's one-round calls publish
// without recording who reads the line) leaves this rank's record of its
// line's readers a ring old: the line is then read by every rank (a C
// Bcast's root's, say), and lineFree must wait for all of them, not for
// the readers of the round before (none: a reader's line).
func TestLineFreeAfterC(t *testing.T) {
	l := format.NewCollLayout(4, shm.PageSize)
	heap := make([]uint64, l.Total/8)
	mem := raw.Bytes(heap)
	a, err := newCollArea(mem, l, 1, nil, barrier.DefaultPolicy)
	if err != nil {
		t.Fatal(err)
	}
	defer a.release()
	par := a.par
	x := 3 * par // a round of parity 0, the C interface's
	// Go's round x-P on that line was a Bcast reader's: read by nobody.
	a.readBy(x-par, 0, 0)
	a.h.Round, a.h.Seen = x+par-1, x-1
	for q := range 4 {
		for p := range par {
			r := x + par - 1 - (x+par-1-p)%par // the last round of parity p through x+P-1
			if q == 3 && int32(r-x) > 0 {
				r -= par // rank 3 is still in round x
			}
			atomic.StoreUint32(a.line(q, int(p)).ev.Seq, r)
		}
	}
	atomic.StoreUint32(a.chk.done, x) // rank 0 has compared round x
	done := make(chan error, 1)
	go func() { done <- a.lineFree(x + par) }()
	select {
	case err := <-done:
		t.Fatalf("lineFree of round x+P returned (%v) while rank 3 was still in round x, whose line read every rank's", err)
	case <-time.After(50 * time.Millisecond):
	}
	atomic.StoreUint32(a.line(3, 1).ev.Seq, x+1)
	a.line(3, 1).ev.Wake()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("lineFree of round x+P still waits once every rank has published round x+1")
	}
}

// checkerArea is rank me's view of a collective area of n ranks over heap
// memory, the others played by the test.
func checkerArea(t *testing.T, n, me int) *collArea {
	l := format.NewCollLayout(n, shm.PageSize)
	heap := make([]uint64, l.Total/8)
	a, err := newCollArea(raw.Bytes(heap), l, me, nil, barrier.DefaultPolicy)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.release)
	return a
}

// publishThrough stores into every line of a the last round of its
// parity through round last, but for rank q, which has published only
// through round upTo.
func publishThrough(a *collArea, last uint32, q int, upTo uint32) {
	for o := range a.n {
		for p := range a.par {
			v := last - (last-p)%a.par
			if o == q {
				for int32(v-upTo) > 0 {
					v -= a.par
				}
			}
			atomic.StoreUint32(a.line(o, int(p)).ev.Seq, v)
		}
	}
}

// stillWaits checks that f is still running after 50 ms; release then
// lets it finish, which it must within 10 s.
func stillWaits(t *testing.T, what string, f func() error, release func()) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		t.Fatalf("%s returned (%v)", what, err)
	case <-time.After(50 * time.Millisecond):
	}
	release()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s still waits once released", what)
	}
}

// The rounds a rank keeps of others (Seen, rank 0's compared round, the
// round it last reported) may lag its own by 2^31 and more: a Gather's
// sender never waits for every rank, C rounds run without Go, a rank may
// report nothing for hours. Compared as int32 differences they then read
// as ahead, and lineFree stopped waiting for the root still reading the
// line (a second review found it). Found by a third review, these three
// cases.
func TestStaleRoundsCompare(t *testing.T) {
	t.Run("Seen", func(t *testing.T) {
		a := checkerArea(t, 3, 2)
		old := 5*a.par + 1
		r := old + a.par
		a.readBy(old, 1, 2) // a Reduce sender's line: read by the root, rank 1
		a.h.Round, a.h.Seen = r-1, old+1-1<<31-5
		publishThrough(a, r-1, 1, old) // the root still reads round old
		atomic.StoreUint32(a.chk.done, old)
		a.cseen = old
		stillWaits(t, "lineFree with the root in round old and Seen 2^31 behind", func() error { return a.lineFree(r) }, func() {
			atomic.StoreUint32(a.line(1, int((old+1)&(a.par-1))).ev.Seq, old+1)
			a.line(1, int((old+1)&(a.par-1))).ev.Wake()
		})
	})
	t.Run("cseen", func(t *testing.T) {
		a := checkerArea(t, 3, 2)
		old := uint32(1<<31 + 1000)
		r := old + a.par
		a.readBy(old, 0, 0) // a reader's line: rank 0 alone looks
		a.h.Round, a.h.Seen = r-1, r-1
		a.cseen = 10                          // loaded last 2^31 rounds ago
		atomic.StoreUint32(a.chk.done, old-1) // rank 0 has not compared round old
		publishThrough(a, r-1, 0, old+a.par-2)
		if a.loadChecked(old) {
			t.Errorf("loadChecked(%d) with rank 0 through %d says compared", old, old-1)
		}
		a.cseen = 10
		stillWaits(t, "lineFree with cseen 2^31 behind and round old not compared", func() error { return a.lineFree(r) }, func() {
			atomic.StoreUint32(a.chk.done, old)
			l := a.line(0, int((old+a.par-1)&(a.par-1)))
			atomic.StoreUint32(l.ev.Seq, old+a.par-1)
			l.ev.Wake()
		})
	})
	t.Run("cseen after C", func(t *testing.T) {
		a := checkerArea(t, 3, 2)
		old := 5*a.par + 1
		r := old + a.par
		// Round old was the C interface's (no reader record of it), and
		// cseen, loaded 2^32 rounds ago, aliases a round after old.
		a.h.Round, a.h.Seen = r-1, r-1
		a.cseen = old + 3
		atomic.StoreUint32(a.chk.done, old-1) // rank 0 has not compared round old
		publishThrough(a, r-1, 0, old+a.par-2)
		stillWaits(t, "lineFree after C rounds with cseen aliased and round old not compared", func() error { return a.lineFree(r) }, func() {
			atomic.StoreUint32(a.chk.done, old)
			l := a.line(0, int((old+a.par-1)&(a.par-1)))
			atomic.StoreUint32(l.ev.Seq, old+a.par-1)
			l.ev.Wake()
		})
	})
	t.Run("reported", func(t *testing.T) {
		a := checkerArea(t, 3, 1)
		a.h.Round = 1<<31 + 1<<30 + 100 // reported still 0: none ever
		if a.reportedBefore(a.h.Round) {
			t.Errorf("round %d: a mismatch never reported counts as reported (reported %d)", a.h.Round, a.reported)
		}
	})
}

// A Reduce's sender keeps Seen near its round although it never waits
// for every rank: it learns it from rank 0's compared round.
func TestSenderSeen(t *testing.T) {
	cs, err := NewLocalWorld(3)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 3)
	for _, c := range cs {
		go func() {
			errs <- func() error {
				for range 2000 {
					if err := Reduce(c, []int64{1}, []int64{0}, atomics.Sum, 1); err != nil {
						return err
					}
				}
				return nil
			}()
		}()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if a := cs[2].coll.Load(); a.h.Round-a.h.Seen > 4*a.par {
		t.Errorf("rank 2's Seen lags its round by %d (round %d)", a.h.Round-a.h.Seen, a.h.Round)
	}
}
