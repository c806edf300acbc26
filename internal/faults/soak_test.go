package faults

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/launcher"
	"github.com/shmrun/shmrun/win"
)

// soakRanks oversubscribes the 2 CPUs of CI many times over.
const soakRanks = 64

// The soak window holds int64 words (disp unit 8) at these displacements;
// then a put slot per origin (fence epochs), a slot per origin (PSCW
// epochs), and this rank's own counts of what it did.
const (
	dFAA  = iota // FetchAndOp Sum +1 under Lock (exclusive or shared)
	dCAS         // CompareAndSwap increments under LockAll
	dAcc         // Accumulate Sum +1 in fence, PSCW and LockAll epochs
	dRMW         // Get, +1, Put under an exclusive Lock
	dStop        // set by rank 0 in a fence epoch when time is up
	dSlots
)

// Counts at the end of the window: what this rank did, for rank 0's sums.
const (
	cFAA = iota
	cCAS
	cAcc
	cRMW
	cRounds
	nCounts
)

func slotPut(n, o int) int  { return dSlots + o }
func slotPSCW(n, o int) int { return dSlots + n + o }
func countAt(n, c int) int  { return dSlots + 2*n + c }

func encode(o, round int) int64 { return int64(o)<<32 | int64(round+1) }

func init() {
	// soak: args duration seed sabotage. Every rank runs rounds of four
	// phases until rank 0 says time is up: passive-target epochs on random
	// targets (exclusive: FetchAndOp +1 and an unprotected Get/+1/Put;
	// shared: FetchAndOp +1), a LockAll epoch (CompareAndSwap increments
	// and Accumulate), a fence epoch (puts into per-origin slots, checked
	// after the closing fence, and an Accumulate) and a PSCW epoch around
	// a ring (a put and an Accumulate to the right neighbour, checked by
	// it after Wait). Every rank counts what it did; at the end rank 0
	// checks that the counters in all windows add up to the counts, and
	// says "soak: ...". With sabotage=1, rank 1 makes one FetchAndOp it
	// does not count, so the check must fail.
	ranktest.Register("soak", func(c *comm.Comm) error {
		args := ranktest.BodyArgs()
		d, err := time.ParseDuration(args[0])
		if err != nil {
			return err
		}
		seed, _ := strconv.ParseUint(args[1], 10, 64)
		sabotage := args[2] == "1"
		me, n := c.Rank(), c.Size()
		rng := rand.New(rand.NewPCG(seed, uint64(me)))
		words := dSlots + 2*n + nCounts
		w, err := win.AllocateShared(c, 8*words, 8, nil)
		if err != nil {
			return err
		}
		// No deferred Free: a rank that fails must exit at once (the
		// launcher then aborts the job), not wait in Free's agreement
		// while the others wait in a fence.
		local, err := win.View[int64](mustQuery(w, me))
		if err != nil {
			return err
		}
		var counts [nCounts]int64
		one := []int64{1}
		tmp := make([]int64, 1)
		left, right := (me+n-1)%n, (me+1)%n
		gl, err := c.Group().Incl(left)
		if err != nil {
			return err
		}
		gr, err := c.Group().Incl(right)
		if err != nil {
			return err
		}
		if sabotage && me == 1 {
			if err := w.Lock(win.Shared, 0, 0); err != nil {
				return err
			}
			if _, err := win.FetchAndOp[int64](w, 1, 0, dFAA, atomics.Sum); err != nil {
				return err
			}
			if err := w.Unlock(0); err != nil {
				return err
			}
		}
		fmt.Printf("soaking %d %d\n", me, os.Getpid())
		start := time.Now()
		round := 0
		for ; ; round++ {
			// Passive target, random targets.
			for range 3 {
				t := rng.IntN(n)
				if err := w.Lock(win.Exclusive, t, 0); err != nil {
					return fmt.Errorf("round %d: %w", round, err)
				}
				if _, err := win.FetchAndOp[int64](w, 1, t, dFAA, atomics.Sum); err != nil {
					return err
				}
				if err := win.GetT(w, tmp, t, dRMW); err != nil {
					return err
				}
				tmp[0]++
				if err := win.PutT(w, tmp, t, dRMW); err != nil {
					return err
				}
				if err := w.Unlock(t); err != nil {
					return err
				}
				counts[cFAA]++
				counts[cRMW]++
				t = rng.IntN(n)
				if err := w.Lock(win.Shared, t, 0); err != nil {
					return err
				}
				if _, err := win.FetchAndOp[int64](w, 1, t, dFAA, atomics.Sum); err != nil {
					return err
				}
				if err := w.Unlock(t); err != nil {
					return err
				}
				counts[cFAA]++
			}
			// LockAll: CAS increments and accumulates anywhere.
			if err := w.LockAll(0); err != nil {
				return fmt.Errorf("round %d: %w", round, err)
			}
			for range 3 {
				t := rng.IntN(n)
				old, err := win.FetchAndOp[int64](w, 0, t, dCAS, atomics.NoOp)
				if err != nil {
					return err
				}
				for {
					prev, err := win.CompareAndSwap[int64](w, old+1, old, t, dCAS)
					if err != nil {
						return err
					}
					if prev == old {
						break
					}
					old = prev
				}
				counts[cCAS]++
				if err := win.Accumulate(w, one, rng.IntN(n), dAcc, atomics.Sum); err != nil {
					return err
				}
				counts[cAcc]++
			}
			if err := w.UnlockAll(); err != nil {
				return err
			}
			// Fence: per-origin put slots, checked after the closing fence.
			if err := w.Fence(0); err != nil {
				return fmt.Errorf("round %d: %w", round, err)
			}
			mark := []int64{encode(me, round)}
			t1, t2 := right, (me+round)%n
			for _, t := range []int{t1, t2} {
				if err := win.PutT(w, mark, t, slotPut(n, me)); err != nil {
					return err
				}
			}
			if err := win.Accumulate(w, one, (me+round+3)%n, dAcc, atomics.Sum); err != nil {
				return err
			}
			counts[cAcc]++
			if me == 0 && time.Since(start) >= d {
				for t := range n {
					if err := win.PutT(w, one, t, dStop); err != nil {
						return err
					}
				}
			}
			if err := w.Fence(0); err != nil {
				return err
			}
			for _, o := range []int{left, (me - round%n + n) % n} {
				if got, want := local[slotPut(n, o)], encode(o, round); got != want {
					return fmt.Errorf("round %d: after the fence my slot of rank %d holds %#x, want %#x", round, o, got, want)
				}
			}
			stop := local[dStop] != 0
			// PSCW around the ring.
			if err := w.Post(gl, 0); err != nil {
				return err
			}
			if err := w.Start(gr, 0); err != nil {
				return err
			}
			if err := win.PutT(w, mark, right, slotPSCW(n, me)); err != nil {
				return err
			}
			if err := win.Accumulate(w, one, right, dAcc, atomics.Sum); err != nil {
				return err
			}
			counts[cAcc]++
			if err := w.Complete(); err != nil {
				return err
			}
			if err := w.Wait(); err != nil {
				return err
			}
			if got, want := local[slotPSCW(n, left)], encode(left, round); got != want {
				return fmt.Errorf("round %d: after Wait my PSCW slot of rank %d holds %#x, want %#x", round, left, got, want)
			}
			if stop {
				break
			}
		}
		counts[cRounds] = int64(round + 1)
		// Publish the counts, then rank 0 adds everything up.
		if err := w.Fence(0); err != nil {
			return err
		}
		copy(local[countAt(n, 0):], counts[:])
		if err := w.Fence(0); err != nil {
			return err
		}
		if me == 0 {
			var sums, counters [nCounts]int64
			all := make([]int64, words)
			for r := range n {
				if err := win.GetT(w, all, r, 0); err != nil {
					return err
				}
				for k := range nCounts {
					sums[k] += all[countAt(n, k)]
				}
				counters[cFAA] += all[dFAA]
				counters[cCAS] += all[dCAS]
				counters[cAcc] += all[dAcc]
				counters[cRMW] += all[dRMW]
				if all[countAt(n, cRounds)] != counts[cRounds] {
					return fmt.Errorf("rank %d made %d rounds, rank 0 %d", r, all[countAt(n, cRounds)], counts[cRounds])
				}
			}
			fmt.Printf("soak: %d ranks, %d rounds in %v: %d fetch-and-adds, %d CAS increments, %d accumulates, %d locked read-modify-writes\n",
				n, round+1, time.Since(start).Round(time.Millisecond), sums[cFAA], sums[cCAS], sums[cAcc], sums[cRMW])
			var bad []string
			for k, name := range []string{"fetch-and-add", "CAS increment", "accumulate", "locked read-modify-write"} {
				if counters[k] != sums[k] {
					bad = append(bad, fmt.Sprintf("%s total %d, want %d", name, counters[k], sums[k]))
				}
			}
			if len(bad) > 0 {
				return fmt.Errorf("broken invariant: %s", strings.Join(bad, "; "))
			}
		}
		if err := w.Fence(0); err != nil {
			return err
		}
		return w.Free()
	})
}

func runSoak(t *testing.T, d time.Duration, sabotage string, opts ...ranktest.Option) ranktest.Result {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	dir := jobDir(t)
	n := soakRanks
	if raceBuild {
		n = 16
	}
	opts = append([]ranktest.Option{ranktest.Args(d.String(), strconv.FormatUint(seed, 10), sabotage),
		ranktest.ShmDir(dir), ranktest.Timeout(d + time.Minute), ranktest.AnyExitCode()}, opts...)
	res := ranktest.Run(t, n, "soak", opts...)
	checkNoSIGBUS(t, res)
	checkEmpty(t, dir)
	return res
}

// TestSoak: 64 oversubscribed ranks doing mixed RMA under Lock, LockAll,
// Fence and PSCW epochs, with every operation counted (see the soak body).
// CI runs it for 2 s of rounds; SHMRUN_SOAK=60s for a minute. Under -race
// it runs 16 ranks.
func TestSoak(t *testing.T) {
	d := 2 * time.Second
	if s, ok := soak(t); ok {
		d = s
	}
	res := runSoak(t, d, "0")
	if res.ExitCode != 0 {
		t.Fatalf("soak exited %d (%s)\nstdout:\n%s\nstderr:\n%s", res.ExitCode, res.Reason, res.Stdout, res.Stderr)
	}
	for _, l := range res.Lines() {
		t.Log(l)
	}
}

// TestSoakSeesBrokenInvariant: one uncounted FetchAndOp makes the soak
// fail, naming the invariant.
func TestSoakSeesBrokenInvariant(t *testing.T) {
	res := runSoak(t, 100*time.Millisecond, "1")
	if res.ExitCode == 0 || !strings.Contains(res.Stderr, "fetch-and-add total") {
		t.Errorf("a soak with an uncounted FetchAndOp exited %d; want a failure naming the fetch-and-add total\nstderr:\n%s", res.ExitCode, res.Stderr)
	}
}

// TestKillDuringSoak: SIGKILL of one of 64 oversubscribed ranks (16 under
// -race) in the
// middle of the soak, whatever epoch it is in, ends the job like any rank
// death: 137 naming it, within endBound, nothing left.
func TestKillDuringSoak(t *testing.T) {
	const victim = 13 // a rank also under -race, which runs 16
	watch := newLineWatcher()
	type kill struct {
		pid int
		at  time.Time
		err error
	}
	killed := make(chan kill, 1)
	go func() {
		f := watch.await(fmt.Sprintf("soaking %d ", victim), time.Minute)
		if f == nil {
			killed <- kill{err: fmt.Errorf("rank %d never started", victim)}
			return
		}
		pid, _ := strconv.Atoi(f[0])
		time.Sleep(300 * time.Millisecond) // well into the rounds
		killed <- kill{pid: pid, at: time.Now(), err: syscall.Kill(pid, syscall.SIGKILL)}
	}()
	// The kill ends the soak long before its 20 s are up.
	res := runSoak(t, 20*time.Second, "0", ranktest.Configure(func(c *launcher.Config) { c.Stdout = teeWriter{c.Stdout, watch} }))
	end := time.Now()
	k := <-killed
	if k.err != nil {
		t.Fatalf("placing the kill: %v\nstderr:\n%s", k.err, res.Stderr)
	}
	t.Logf("job ended %v after the kill: %s", end.Sub(k.at).Round(time.Millisecond), res.Reason)
	checkKilled(t, res, victim, k.pid, syscall.SIGKILL)
	if d := end.Sub(k.at); d > endBound {
		t.Errorf("the job ended %v after the kill; want at most %v", d, endBound)
	}
}
