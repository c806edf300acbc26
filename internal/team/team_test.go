package team_test

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/team"
	"github.com/shmrun/shmrun/shm"
)

func TestLayoutFor(t *testing.T) {
	for _, n := range []int{1, 2, 3, 64, format.MaxRanks} {
		l := team.LayoutFor(n)
		cl := int64(shm.CacheLine)
		if l.N != n || l.AbortOff != shm.PageSize || l.AbortOff%cl != 0 || l.BarrierOff < l.AbortOff+cl ||
			l.RanksOff < l.BarrierOff+barrier.LineLen || l.SlotOff < l.RanksOff+int64(n)*cl ||
			l.Total < l.SlotOff+2*int64(n)*format.SlotLen || l.Total%shm.PageSize != 0 || l.BarrierOff%8 != 0 {
			t.Errorf("LayoutFor(%d) = %+v", n, l)
		}
	}
}

func TestNewControlErrors(t *testing.T) {
	for _, tt := range []struct {
		job string
		n   int
	}{{"ab", 0}, {"ab", -1}, {"ab", format.MaxRanks + 1}, {"", 1}, {"AB", 1}, {"a/b", 1}} {
		if c, err := team.NewControl(tt.job, tt.n); err == nil {
			c.Close()
			t.Errorf("NewControl(%q, %d) succeeded", tt.job, tt.n)
		}
	}
}

// attachAll maps one control segment n times, as n ranks would, and returns
// their teams.
func attachAll(t *testing.T, n int) ([]*team.Team, *team.Control) {
	t.Helper()
	const job = "feedc0de"
	ctl, err := team.NewControl(job, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctl.Close() })
	ts := make([]*team.Team, n)
	for r := range ts {
		fd, err := unix.Dup(ctl.FD()) // each rank has its own descriptor and mapping
		if err != nil {
			t.Fatal(err)
		}
		c, err := team.AttachControl(fd, job, n)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if ts[r], err = team.Attach(c, r, team.Config{Job: job, Dir: "/dev/shm", Policy: barrier.DefaultPolicy}); err != nil {
			t.Fatal(err)
		}
	}
	return ts, ctl
}

// teams returns n teams of both kinds: over a real mapped control segment
// (each rank with its own mapping), and over the Go heap.
func teams(t *testing.T, n int) map[string][]*team.Team {
	t.Helper()
	mapped, _ := attachAll(t, n)
	local, err := team.NewLocal(n, team.Config{Job: "feedc0de", Policy: barrier.DefaultPolicy})
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]*team.Team{"mapped": mapped, "local": local}
}

func run(t *testing.T, ts []*team.Team, body func(tm *team.Team) error) {
	t.Helper()
	errs := make(chan error, len(ts))
	var wg sync.WaitGroup
	for _, tm := range ts {
		wg.Go(func() {
			if err := body(tm); err != nil {
				errs <- fmt.Errorf("rank %d: %w", tm.Rank(), err)
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("ranks hung")
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestExchange: in every round each rank sees what every rank published in
// that round, and the same agreement on failure.
func TestExchange(t *testing.T) {
	const n, rounds = 5, 200
	for kind, ts := range teams(t, n) {
		t.Run(kind, func(t *testing.T) {
			run(t, ts, func(tm *team.Team) error {
				for k := range rounds {
					failed := (k%7 == 3 && tm.Rank() == k%n) || k%11 == 0
					mine := fmt.Appendf(nil, "rank %d round %d", tm.Rank(), k)
					all, first, err := tm.Exchange(mine, failed)
					if err != nil {
						return err
					}
					if len(all) != n*format.SlotLen {
						return fmt.Errorf("exchange returned %d bytes", len(all))
					}
					for p := range n {
						want := fmt.Appendf(nil, "rank %d round %d", p, k)
						got := bytes.TrimRight(all[p*format.SlotLen:(p+1)*format.SlotLen], "\x00")
						if !bytes.Equal(got, want) {
							return fmt.Errorf("round %d: rank %d's slot holds %q", k, p, got)
						}
					}
					switch {
					case k%11 == 0 && first < 0, k%11 != 0 && k%7 == 3 && first != k%n, k%11 != 0 && k%7 != 3 && first != -1:
						return fmt.Errorf("round %d: agreed failing rank %d", k, first)
					}
				}
				return nil
			})
		})
	}
}

func TestExchangeTooBig(t *testing.T) {
	ts, err := team.NewLocal(1, team.Config{Policy: barrier.DefaultPolicy})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ts[0].Exchange(make([]byte, format.SlotLen+1), false); err == nil {
		t.Error("Exchange of more than a slot succeeded")
	}
}

func TestRequestAbort(t *testing.T) {
	const n = 3
	for kind, ts := range teams(t, n) {
		t.Run(kind, func(t *testing.T) {
			run(t, ts, func(tm *team.Team) error {
				if tm.Rank() == 0 {
					tm.RequestAbort(4)
					return nil
				}
				if err := tm.Barrier(); !errors.Is(err, barrier.ErrAborted) {
					return fmt.Errorf("Barrier after RequestAbort = %v", err)
				}
				return nil
			})
			if got := atomic.LoadUint32(ts[1].Abort()); got != format.AbortByRank {
				t.Errorf("abort word %d, want %d", got, format.AbortByRank)
			}
		})
	}
}

// TestRequestAbortRace: ranks calling Abort at once, each with a code of
// its own, leave the code and the rank of one of them, never one's code
// beside another's rank (the state is claimed before they are written).
// Counted over many rounds, 8 ranks on whatever cores there are.
func TestRequestAbortRace(t *testing.T) {
	const n, rounds = 8, 20000
	ts, ctl := attachAll(t, n)
	for round := range rounds {
		atomic.StoreUint32(ctl.AbortWord(), format.AbortNone)
		atomic.StoreUint32(ctl.AbortCode(), 0)
		atomic.StoreUint32(ctl.AbortRank(), 0)
		var start sync.WaitGroup
		start.Add(1)
		var wg sync.WaitGroup
		for _, tm := range ts {
			wg.Go(func() {
				start.Wait()
				tm.RequestAbort(100 + tm.Rank())
			})
		}
		start.Done()
		wg.Wait()
		state := atomic.LoadUint32(ctl.AbortWord())
		code, rank := atomic.LoadUint32(ctl.AbortCode()), atomic.LoadUint32(ctl.AbortRank())
		if state != format.AbortByRank || code != 100+rank {
			t.Fatalf("round %d: state %d, code %d, rank %d; want state %d and code 100+rank", round, state, code, rank, format.AbortByRank)
		}
	}
}

// TestRankStateForLauncher: what a rank publishes is what the launcher reads
// from its own mapping.
func TestRankStateForLauncher(t *testing.T) {
	ts, ctl := attachAll(t, 2)
	ts[1].SetRankState(format.RankFinalized, 4242)
	ts[0].RequestAbort(17)
	if s, pid := atomic.LoadUint32(ctl.RankState(1)), atomic.LoadUint32(ctl.RankPID(1)); s != format.RankFinalized || pid != 4242 {
		t.Errorf("rank 1: state %d pid %d", s, pid)
	}
	if w, code, r := atomic.LoadUint32(ctl.AbortWord()), atomic.LoadUint32(ctl.AbortCode()), atomic.LoadUint32(ctl.AbortRank()); w != format.AbortByRank || code != 17 || r != 0 {
		t.Errorf("abort word %d, code %d, rank %d", w, code, r)
	}
}
