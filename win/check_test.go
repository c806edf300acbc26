//go:build !mpi

package win_test

import (
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/launcher"
	"github.com/shmrun/shmrun/win"
)

// shmrun --check (internal/rmacheck) on real processes: what a report
// names, and what the window's synchronization orders.

func init() {
	ranktest.Register("check-window-ids", checkWindowIDsBody)
	ranktest.Register("check-pscw-roles", checkPSCWRolesBody)
	ranktest.Register("check-fence-nop", checkFenceNopBody)
	ranktest.Register("check-fence-asserts", checkFenceAssertsBody)
	ranktest.Register("check-irecv-early", checkIrecvEarlyBody)
	ranktest.Register("check-first-ibarrier", checkFirstIbarrierBody)
}

// checkRun runs body as n ranks under shmrun --check=warn and returns the
// reports, one per distinct pair.
func checkRun(t *testing.T, n int, body string, args ...string) []string {
	t.Helper()
	res := ranktest.Run(t, n, body, ranktest.Args(args...), ranktest.Configure(func(c *launcher.Config) { c.Check = "warn" }))
	var reports []string
	for _, l := range strings.Split(res.Stdout+res.Stderr, "\n") {
		if strings.Contains(l, "are not ordered by any synchronization") {
			reports = append(reports, strings.TrimSpace(l))
		}
	}
	t.Logf("%s: %d report(s)\n%s", body, len(reports), strings.Join(reports, "\n"))
	return reports
}

// unseen waits until word i of s is set, by plain loads: an order the
// checker does not see (as a sleep would not be), which only makes sure
// of the interleaving a test wants.
func unseen(s []int64, i int) {
	for atomic.LoadInt64(&s[i]) == 0 {
		time.Sleep(time.Millisecond)
	}
}

// plainPart is rank r's part of w as a plain slice (not checked).
func plainPart(w *win.Win, r int) ([]int64, error) {
	seg, err := w.SharedQuery(r)
	if err != nil {
		return nil, err
	}
	return win.View[int64](seg)
}

// checkWindowIDsBody: ranks {0, 1} make window A on one communicator,
// ranks {1, 2} window B on another; rank 1 makes B first. A race in A is
// found by rank 1 (Put/Put on A rank 0's word 0) and another by rank 0
// (Put/Get on A rank 1's word 1); a race in B by rank 2 (Put/Put on B
// rank 0's word 2). The calls differ, so the three reports are three
// pairs whatever the windows' numbers.
func checkWindowIDsBody(c *comm.Comm) error {
	me := c.Rank()
	colorA, colorB := comm.Undefined, comm.Undefined
	if me <= 1 {
		colorA = 0
	}
	if me >= 1 {
		colorB = 0
	}
	ca, err := c.Split(colorA, 0)
	if err != nil {
		return err
	}
	cb, err := c.Split(colorB, 0)
	if err != nil {
		return err
	}
	var wa, wb *win.Win
	if cb != nil {
		if wb, err = win.Allocate(cb, 64, 8, nil); err != nil {
			return err
		}
	}
	if ca != nil {
		if wa, err = win.Allocate(ca, 64, 8, nil); err != nil {
			return err
		}
	}
	if wb != nil { // ranks 1 and 2: B's ranks 0 and 1
		if err := do(wb.LockAll(0)); err != nil {
			return err
		}
		if cb.Rank() == 0 {
			err = win.PutT(wb, []int64{1}, 0, 2)
		}
		if err := do(err, cb.Barrier()); err != nil {
			return err
		}
		if cb.Rank() == 1 {
			err = win.PutT(wb, []int64{2}, 0, 2)
		}
		if err := do(err, wb.UnlockAll()); err != nil {
			return err
		}
	}
	if wa != nil { // ranks 0 and 1: A's ranks 0 and 1
		if err := wa.LockAll(0); err != nil {
			return err
		}
		got := make([]int64, 1)
		switch ca.Rank() {
		case 0:
			err = do(win.PutT(wa, []int64{1}, 0, 0), ca.Barrier(), ca.Barrier(), win.GetT(wa, got, 1, 1))
		case 1:
			err = do(ca.Barrier(), win.PutT(wa, []int64{2}, 0, 0), win.PutT(wa, []int64{3}, 1, 1), ca.Barrier())
		}
		if err := do(err, wa.UnlockAll()); err != nil {
			return err
		}
	}
	for _, w := range []*win.Win{wa, wb} {
		if w != nil {
			if err := w.Free(); err != nil {
				return err
			}
		}
	}
	for _, x := range []*comm.Comm{ca, cb} {
		if x != nil {
			if err := x.Free(); err != nil {
				return err
			}
		}
	}
	return nil
}

func do(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// A report names a window that every rank calls by the same number, and
// two windows by two numbers, however the processes made them.
func TestCheckWindowIDs(t *testing.T) {
	reports := checkRun(t, 3, "check-window-ids")
	re := regexp.MustCompile(`window (\d+), rank (\d)'s (?:\(world rank \d's\) )?bytes \[(\d+), `)
	ids := map[string]string{} // "window rank/lo" → number
	for _, r := range reports {
		m := re.FindStringSubmatch(r)
		if m == nil {
			t.Fatalf("report without a window: %s", r)
		}
		ids[m[2]+"/"+m[3]] = m[1]
	}
	a0, a1, b := ids["0/0"], ids["1/8"], ids["0/16"]
	if len(reports) != 3 || a0 == "" || a1 == "" || b == "" {
		t.Fatalf("want the three races (window A: rank 0's bytes 0, rank 1's 8; window B: rank 0's 16), got:\n%s", strings.Join(reports, "\n"))
	}
	if a0 != a1 {
		t.Errorf("window A is window %s in rank 1's report and window %s in rank 0's:\n%s", a0, a1, strings.Join(reports, "\n"))
	}
	if a0 == b {
		t.Errorf("windows A and B are both window %s:\n%s", a0, strings.Join(reports, "\n"))
	}
	// Window B's ranks 0 and 1 are world ranks 1 and 2: named so.
	for _, r := range reports {
		if strings.Contains(r, "bytes [16, 24)") && !strings.Contains(r, "rank 0's (world rank 1's) bytes") {
			t.Errorf("window B's report does not name world ranks: %s", r)
		}
	}
}

// checkPSCWRolesBody: each rank both exposes its window to the other and
// accesses the other's. Rank 0 puts to rank 1's word 0 and completes;
// only then (a flag the checker does not see) does rank 1 start, and load
// that word before its Wait: a race, which rank 1's Start does not order
// — it orders what rank 0 did before its Post, not before its Complete.
func checkPSCWRolesBody(c *comm.Comm) error {
	me := c.Rank()
	w, err := win.AllocateShared(c, 64, 8, nil)
	if err != nil {
		return err
	}
	other, err := c.Group().Incl(1 - me)
	if err != nil {
		return err
	}
	mine, err := win.NewChecked[int64](w, me)
	if err != nil {
		return err
	}
	flag, err := plainPart(w, 1)
	if err != nil {
		return err
	}
	if err := w.Post(other, 0); err != nil {
		return err
	}
	if me == 0 {
		err = do(w.Start(other, 0), win.PutT(w, []int64{5}, 1, 0), w.Complete())
		atomic.StoreInt64(&flag[7], 1)
	} else {
		unseen(flag, 7)
		err = w.Start(other, 0)
		_ = mine.Load(0) // races with rank 0's Put
		err = do(err, w.Complete())
	}
	return do(err, w.Wait(), w.Free())
}

// PSCW's Post and Complete are two releases: a Start learns of the Post.
func TestCheckPSCWRoles(t *testing.T) {
	reports := checkRun(t, 2, "check-pscw-roles")
	if len(reports) != 1 || !strings.Contains(reports[0], "rank 1's bytes [0, 8): Put") || !strings.Contains(reports[0], "Load") {
		t.Errorf("want one report of rank 0's Put and rank 1's Load, got:\n%s", strings.Join(reports, "\n"))
	}
}

// checkFenceNopBody: rank 1 puts to rank 0's word 0 in a lock epoch, then
// both ranks call Fence(ModeNoPrecede|ModeNoSucceed), which neither ends
// nor opens an epoch and does not synchronize; rank 0 loads the word
// after it. Rank 0 enters its Fence after rank 1 has left its own (by a
// flag the checker does not see): the Put and the load are still not
// ordered.
func checkFenceNopBody(c *comm.Comm) error {
	me := c.Rank()
	w, err := win.AllocateShared(c, 64, 8, nil)
	if err != nil {
		return err
	}
	flag, err := plainPart(w, 0)
	if err != nil {
		return err
	}
	if me == 1 {
		err = do(w.Lock(win.Shared, 0, 0), win.PutT(w, []int64{5}, 0, 0), w.Unlock(0), w.Fence(win.ModeNoPrecede|win.ModeNoSucceed))
		atomic.StoreInt64(&flag[7], 1)
	} else {
		unseen(flag, 7)
		err = w.Fence(win.ModeNoPrecede | win.ModeNoSucceed)
		if err == nil {
			var mine win.Checked[int64]
			if mine, err = win.NewChecked[int64](w, 0); err == nil {
				_ = mine.Load(0) // races with rank 1's Put
			}
		}
	}
	return do(err, c.Barrier(), w.Free())
}

// A Fence that neither closes nor opens an epoch orders nothing.
func TestCheckFenceNoPrecedeNoSucceed(t *testing.T) {
	reports := checkRun(t, 2, "check-fence-nop")
	if len(reports) != 1 || !strings.Contains(reports[0], "rank 0's bytes [0, 8)") || !strings.Contains(reports[0], "Load") {
		t.Errorf("want one report of rank 1's Put and rank 0's Load, got:\n%s", strings.Join(reports, "\n"))
	}
}

// checkFenceAssertsBody: a fence with ModeNoPrecede alone still orders
// rank 0's store before it before rank 1's Put after it, and one with
// ModeNoSucceed alone that Put before rank 0's load after it: race-free.
func checkFenceAssertsBody(c *comm.Comm) error {
	me := c.Rank()
	w, err := win.AllocateShared(c, 64, 8, nil)
	if err != nil {
		return err
	}
	mine, err := win.NewChecked[int64](w, me)
	if err != nil {
		return err
	}
	if me == 0 {
		mine.Store(0, 1)
	}
	if err := w.Fence(win.ModeNoPrecede); err != nil {
		return err
	}
	if me == 1 {
		err = win.PutT(w, []int64{5}, 0, 0)
	}
	if err := do(err, w.Fence(win.ModeNoSucceed)); err != nil {
		return err
	}
	if me == 0 {
		_ = mine.Load(0)
	}
	return do(c.Barrier(), w.Free())
}

// The fences that do synchronize still order.
func TestCheckFenceAsserts(t *testing.T) {
	if reports := checkRun(t, 2, "check-fence-asserts"); len(reports) != 0 {
		t.Errorf("a race-free program reported:\n%s", strings.Join(reports, "\n"))
	}
}

// checkIrecvEarlyBody: rank 1 puts to rank 0's word 0, flushes, and sends
// rank 0 a message; rank 0 posted its receive first and, once the message
// is there (by a flag the checker does not see), lets an Iprobe for
// another tag deliver it, loads the word, and only then completes the
// receive: the Put and the load are not ordered (MPI 4.1 §12.7: the
// receive has not completed). With "after", the load follows the Wait:
// ordered.
func checkIrecvEarlyBody(c *comm.Comm) error {
	me := c.Rank()
	w, err := win.AllocateShared(c, 64, 8, nil)
	if err != nil {
		return err
	}
	flag, err := plainPart(w, 1)
	if err != nil {
		return err
	}
	after := len(ranktest.BodyArgs()) > 0 && ranktest.BodyArgs()[0] == "after"
	if me == 1 {
		err = do(w.LockAll(0), win.PutT(w, []int64{5}, 0, 0), w.FlushAll(), c.Send([]byte{1}, 0, 5), w.UnlockAll())
		atomic.StoreInt64(&flag[7], 1)
	} else {
		var r *comm.Request
		if r, err = c.Irecv(make([]byte, 1), 1, 5); err == nil {
			unseen(flag, 7)
			_, _, err = c.Iprobe(1, 99)
			mine, cerr := win.NewChecked[int64](w, 0)
			if err == nil && cerr == nil && !after {
				_ = mine.Load(0) // races with rank 1's Put
			}
			_, werr := r.Wait()
			if after {
				_ = mine.Load(0)
			}
			err = do(err, cerr, werr)
		}
	}
	return do(err, c.Barrier(), w.Free())
}

// A receive orders its sender's past before the call that completes it,
// not before another call's progress that delivered it.
func TestCheckIrecvCompletedLater(t *testing.T) {
	reports := checkRun(t, 2, "check-irecv-early")
	if len(reports) != 1 || !strings.Contains(reports[0], "rank 0's bytes [0, 8)") || !strings.Contains(reports[0], "Load") {
		t.Errorf("want one report of rank 1's Put and rank 0's Load, got:\n%s", strings.Join(reports, "\n"))
	}
	if reports := checkRun(t, 2, "check-irecv-early", "after"); len(reports) != 0 {
		t.Errorf("a load after the Wait reported:\n%s", strings.Join(reports, "\n"))
	}
}

// checkFirstIbarrierBody: rank 1 puts to rank 0's word 0 in a lock epoch,
// then both ranks pass an Ibarrier, the first collective call of a new
// communicator; rank 0 loads the word after it: ordered.
func checkFirstIbarrierBody(c *comm.Comm) error {
	w, err := win.AllocateShared(c, 64, 8, nil)
	if err != nil {
		return err
	}
	d, err := c.Dup()
	if err != nil {
		return err
	}
	mine, err := win.NewChecked[int64](w, c.Rank())
	if err != nil {
		return err
	}
	if c.Rank() == 1 {
		err = do(w.LockAll(0), win.PutT(w, []int64{5}, 0, 0), w.UnlockAll())
	}
	r, ierr := d.Ibarrier()
	if ierr == nil {
		_, ierr = r.Wait()
	}
	if c.Rank() == 0 && ierr == nil {
		_ = mine.Load(0)
	}
	return do(err, ierr, d.Free(), c.Barrier(), w.Free())
}

// A communicator's first Ibarrier orders as any Ibarrier does (its
// release waited for the area its job makes: it was lost).
func TestCheckFirstIbarrier(t *testing.T) {
	if reports := checkRun(t, 2, "check-first-ibarrier"); len(reports) != 0 {
		t.Errorf("a Put and a load ordered by an Ibarrier reported:\n%s", strings.Join(reports, "\n"))
	}
}
