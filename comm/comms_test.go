//go:build !mpi

package comm_test

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/internal/team"
	"github.com/shmrun/shmrun/win"
)

// worldRanks lists c's members as world ranks.
func worldRanks(c, world *comm.Comm) ([]int, error) {
	ranks := make([]int, c.Size())
	for i := range ranks {
		ranks[i] = i
	}
	return c.Group().TranslateRanks(ranks, world.Group())
}

// freeEntries is the free communicator entries of the job, seen from c.
func freeEntries(c *comm.Comm) int {
	t, err := team.OfComm(c, "test")
	if err != nil {
		return -1
	}
	return t.FreeEntries()
}

// communicators is the body of TestCommunicators: Split with keys that
// reorder and with Undefined, Create, Dup and Compare, two disjoint
// communicators' collectives at once, Free and its misuse. It needs 6 ranks.
// Self is the process's after Init, so it is checked under shmrun only (a
// goroutine world has no Init: Self is nil there).
func communicators(w *comm.Comm) error {
	me := w.Rank()
	if w.Size() != 6 {
		return fmt.Errorf("needs 6 ranks, has %d", w.Size())
	}
	// Split by parity, ranked in reverse.
	half, err := w.Split(me%2, -me)
	if err != nil {
		return err
	}
	got, err := worldRanks(half, w)
	if err != nil {
		return err
	}
	want := map[int][]int{0: {4, 2, 0}, 1: {5, 3, 1}}[me%2]
	if !slices.Equal(got, want) || half.Rank() != slices.Index(want, me) {
		return fmt.Errorf("rank %d: split members %v rank %d, want %v rank %d", me, got, half.Rank(), want, slices.Index(want, me))
	}
	// Undefined: no communicator; the others get one of 5.
	color := 0
	if me == 5 {
		color = comm.Undefined
	}
	five, err := w.Split(color, 0)
	if err != nil {
		return err
	}
	if (me == 5) != (five == nil) || (five != nil && five.Size() != 5) {
		return fmt.Errorf("rank %d: Split with Undefined gave %v", me, five)
	}
	// Create from a group, in the group's order.
	g, err := w.Group().Incl(4, 2, 0)
	if err != nil {
		return err
	}
	created, err := w.Create(g)
	if err != nil {
		return err
	}
	if got, _ := worldRanks(created, w); (created == nil) != (me%2 == 1 || me > 4) || (created != nil && !slices.Equal(got, []int{4, 2, 0})) {
		return fmt.Errorf("rank %d: Create gave %v (%v)", me, created, got)
	}
	// Create with disjoint groups (MPI 2.2): {0..3} in reverse, {4, 5},
	// and the rest alone each; one communicator per group, in its order.
	var mine []int
	switch {
	case me < 4:
		mine = []int{3, 2, 1, 0}
	case me < 6:
		mine = []int{4, 5}
	default:
		mine = []int{me}
	}
	dg, err := w.Group().Incl(mine...)
	if err != nil {
		return err
	}
	parts, err := w.Create(dg)
	if err != nil {
		return err
	}
	if got, _ := worldRanks(parts, w); parts == nil || !slices.Equal(got, mine) {
		return fmt.Errorf("rank %d: Create of disjoint groups gave %v (%v), want %v", me, parts, got, mine)
	}
	sum := []int64{0}
	if err := comm.Allreduce(parts, []int64{int64(me)}, sum, atomics.Sum); err != nil {
		return err
	}
	total := int64(0)
	for _, r := range mine {
		total += int64(r)
	}
	if sum[0] != total {
		return fmt.Errorf("rank %d: Allreduce over its created group %v: %d, want %d", me, mine, sum[0], total)
	}
	// Dup and Compare.
	dup, err := w.Dup()
	if err != nil {
		return err
	}
	for _, tt := range []struct {
		a, b *comm.Comm
		want int
	}{{w, w, comm.Ident}, {w, dup, comm.Congruent}, {half, w, comm.Unequal}, {nil, w, comm.Unequal}} {
		if got := comm.Compare(tt.a, tt.b); got != tt.want {
			return fmt.Errorf("rank %d: Compare = %d, want %d", me, got, tt.want)
		}
	}
	// Disjoint communicators run their collectives at once, and a window
	// and its fence work on each.
	for range 200 {
		if err := half.Barrier(); err != nil {
			return err
		}
	}
	if err := sumOverWindow(half); err != nil {
		return err
	}
	// Self.
	self := comm.Self()
	if underShmrun := os.Getenv(comm.EnvJob) != ""; underShmrun != (self != nil) {
		return fmt.Errorf("rank %d: Self = %v", me, self)
	}
	if self != nil {
		if self.Size() != 1 || self.Rank() != 0 || comm.Self() != self {
			return fmt.Errorf("rank %d: Self is rank %d of %d", me, self.Rank(), self.Size())
		}
		if got, _ := worldRanks(self, w); !slices.Equal(got, []int{me}) {
			return fmt.Errorf("rank %d: Self's member is world rank %v", me, got)
		}
		if err := self.Barrier(); err != nil {
			return err
		}
		if err := sumOverWindow(self); err != nil {
			return err
		}
		if err := self.Free(); !errors.Is(err, comm.ErrComm) {
			return fmt.Errorf("rank %d: Free of Self = %v, want ErrComm", me, err)
		}
	}
	// Free, and what is refused.
	for _, c := range []*comm.Comm{half, five, created, dup} {
		if c == nil {
			continue
		}
		if err := c.Free(); err != nil {
			return err
		}
		if err := c.Barrier(); !errors.Is(err, comm.ErrComm) {
			return fmt.Errorf("rank %d: Barrier after Free = %v, want ErrComm", me, err)
		}
		if err := c.Free(); !errors.Is(err, comm.ErrComm) {
			return fmt.Errorf("rank %d: second Free = %v, want ErrComm", me, err)
		}
	}
	if err := w.Free(); !errors.Is(err, comm.ErrComm) {
		return fmt.Errorf("rank %d: Free of the world = %v, want ErrComm", me, err)
	}
	if _, err := w.Split(-5, 0); !errors.Is(err, comm.ErrArg) {
		return fmt.Errorf("rank %d: Split(-5) = %v, want ErrArg", me, err)
	}
	return nil
}

// churn makes and frees communicators n times, then fills the table: the
// next Dup fails on every rank naming the limit, and after Free all works.
func churn(n int) func(w *comm.Comm) error {
	return func(w *comm.Comm) error {
		if err := w.Barrier(); err != nil {
			return err
		}
		before := freeEntries(w)
		for range n {
			d, err := w.Dup()
			if err != nil {
				return err
			}
			if err := d.Free(); err != nil {
				return err
			}
		}
		if err := w.Barrier(); err != nil {
			return err
		}
		if after := freeEntries(w); after != before || after != format.MaxComms {
			return fmt.Errorf("rank %d: %d free entries after %d Dup/Free, %d before (of %d)", w.Rank(), after, n, before, format.MaxComms)
		}
		var all []*comm.Comm
		for range format.MaxComms {
			d, err := w.Dup()
			if err != nil {
				return fmt.Errorf("rank %d: Dup %d: %v", w.Rank(), len(all), err)
			}
			all = append(all, d)
		}
		_, err := w.Dup()
		if !errors.Is(err, comm.ErrOther) || !strings.Contains(err.Error(), fmt.Sprint(format.MaxComms)) {
			return fmt.Errorf("rank %d: Dup past the table = %v, want ErrOther naming %d", w.Rank(), err, format.MaxComms)
		}
		for _, d := range all {
			if err := d.Free(); err != nil {
				return err
			}
		}
		d, err := w.Dup()
		if err != nil {
			return err
		}
		return d.Free()
	}
}

func init() {
	ranktest.Register("communicators", communicators)
	ranktest.Register("churn", churn(10000))
}

func TestCommunicators(t *testing.T) {
	ranktest.Run(t, 6, "communicators")
	runWorld(t, 6, communicators)
}

// TestCommChurn: 10 000 Dup/Free cycles leave the table as it was, and
// running out of entries is an error on every rank, not a hang.
func TestCommChurn(t *testing.T) {
	ranktest.Run(t, 3, "churn")
	runWorld(t, 3, churn(500))
}

func TestCommCompareNil(t *testing.T) {
	if comm.Compare(nil, nil) != comm.Unequal || comm.Compare(&comm.Comm{}, nil) != comm.Unequal {
		t.Error("nil or zero communicators compare other than Unequal")
	}
}

// sumOverWindow allocates a window on c, has every rank add its rank+1 into
// rank 0's word inside a fence epoch, and checks the sum on every rank.
func sumOverWindow(c *comm.Comm) error {
	w, err := win.AllocateShared(c, 8, 8, nil)
	if err != nil {
		return err
	}
	if err := w.Fence(0); err != nil {
		return err
	}
	if err := win.Accumulate(w, []int64{int64(c.Rank() + 1)}, 0, 0, atomics.Sum); err != nil {
		return err
	}
	if err := w.Fence(0); err != nil {
		return err
	}
	got := make([]int64, 1)
	if err := win.GetT(w, got, 0, 0); err != nil {
		return err
	}
	if err := w.Fence(win.ModeNoSucceed); err != nil {
		return err
	}
	n := int64(c.Size())
	if got[0] != n*(n+1)/2 {
		return fmt.Errorf("rank %d of %d: window sum %d, want %d", c.Rank(), n, got[0], n*(n+1)/2)
	}
	return w.Free()
}

// createGroup: the even and the odd ranks each make a communicator of
// their own with CreateGroup at the same time, without the other half; a
// window works on each; the other half's ranks are not involved at all.
func createGroup(w *comm.Comm) error {
	me := w.Rank()
	odd, err := w.Group().Incl(5, 1, 3)
	if err != nil {
		return err
	}
	even, err := w.Group().Incl(0, 2, 4)
	if err != nil {
		return err
	}
	g := map[int]*comm.Group{0: even, 1: odd}[me%2]
	for round := range 20 {
		c, err := w.CreateGroup(g, 7+round)
		if err != nil {
			return err
		}
		got, err := worldRanks(c, w)
		if err != nil {
			return err
		}
		want := map[int][]int{0: {0, 2, 4}, 1: {5, 1, 3}}[me%2]
		if !slices.Equal(got, want) || c.Rank() != slices.Index(want, me) {
			return fmt.Errorf("rank %d: CreateGroup members %v rank %d, want %v", me, got, c.Rank(), want)
		}
		if round == 0 {
			if err := sumOverWindow(c); err != nil {
				return err
			}
		}
		if err := c.Free(); err != nil {
			return err
		}
	}
	// A rank outside the group gets nil at once; a bad tag is refused.
	if c, err := w.CreateGroup(map[int]*comm.Group{0: odd, 1: even}[me%2], 1); c != nil || err != nil {
		return fmt.Errorf("rank %d: CreateGroup of a group without it = %v, %v", me, c, err)
	}
	if _, err := w.CreateGroup(g, -1); !errors.Is(err, comm.ErrTag) {
		return fmt.Errorf("rank %d: CreateGroup with tag -1 = %v, want ErrTag", me, err)
	}
	return w.Barrier()
}

func init() { ranktest.Register("creategroup", createGroup) }

func TestCreateGroup(t *testing.T) {
	ranktest.Run(t, 6, "creategroup")
	runWorld(t, 6, createGroup)
}

// createGroupOverlap: world rank 1 is in two groups, {0, 1} and {2, 1},
// and makes their communicators one after the other; ranks 0 and 2 each
// make only their own, rank 0 late, so that rank 2's call reaches rank 1
// first. The standard allows this program (each group's members make the
// call), so both communicators must be made.
func createGroupOverlap(w *comm.Comm) error {
	me := w.Rank()
	a, err := w.Group().Incl(0, 1)
	if err != nil {
		return err
	}
	b, err := w.Group().Incl(2, 1)
	if err != nil {
		return err
	}
	var calls []*comm.Group
	switch me {
	case 0:
		time.Sleep(100 * time.Millisecond)
		calls = []*comm.Group{a}
	case 1:
		calls = []*comm.Group{a, b}
	case 2:
		calls = []*comm.Group{b}
	}
	for i, g := range calls {
		c, err := w.CreateGroup(g, 5)
		if err != nil {
			return fmt.Errorf("rank %d: CreateGroup %d: %v", me, i, err)
		}
		got, err := worldRanks(c, w)
		if err != nil {
			return err
		}
		if want := members(g); !slices.Equal(got, want) {
			return fmt.Errorf("rank %d: CreateGroup %d members %v, want %v", me, i, got, want)
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		if err := c.Free(); err != nil {
			return err
		}
	}
	return w.Barrier()
}

func init() { ranktest.Register("creategroup-overlap", createGroupOverlap) }

func TestCreateGroupOverlap(t *testing.T) {
	ranktest.Run(t, 3, "creategroup-overlap")
	runWorld(t, 3, createGroupOverlap)
}

// createGroupConcurrent: CreateGroup from several goroutines of each rank
// at once (MPI 4.1 §7.4.2: concurrent calls differ in communicator or
// tag), 40 rounds: three goroutines on their own Dup of the world with the
// same group and tag; three on the world with the same group and tags
// 0, 1, 2; and on rank 2, members of {0, 2} and {1, 2}, one goroutine for
// each group while ranks 0 and 1 make theirs. Concurrent calls were once
// matched by group alone (the wrong call's entry: ErrArg) and took one
// another's messages from the mailbox (a hang), and two leaders writing
// to one member's mailbox could overwrite each other.
func createGroupConcurrent(w *comm.Comm) error {
	me := w.Rank()
	all := w.Group()
	dups := make([]*comm.Comm, 3)
	for i := range dups {
		var err error
		if dups[i], err = w.Dup(); err != nil {
			return err
		}
	}
	pairA, err := all.Incl(0, 2)
	if err != nil {
		return err
	}
	pairB, err := all.Incl(1, 2)
	if err != nil {
		return err
	}
	// use checks a new communicator: its size, and an Allreduce of
	// world ranks over it.
	use := func(c *comm.Comm, g *comm.Group) error {
		if c == nil || c.Size() != g.Size() {
			return fmt.Errorf("rank %d: CreateGroup made %v", me, c)
		}
		sum := []int64{0}
		if err := comm.Allreduce(c, []int64{int64(me)}, sum, atomics.Sum); err != nil {
			return err
		}
		want := int64(0)
		for _, q := range members(g) {
			want += int64(q)
		}
		if sum[0] != want {
			return fmt.Errorf("rank %d: Allreduce over the new communicator: %d, want %d", me, sum[0], want)
		}
		return c.Free()
	}
	for round := range 40 {
		var calls []func() error
		for i := range 3 {
			calls = append(calls, func() error {
				c, err := dups[i].CreateGroup(all, 9)
				if err != nil {
					return fmt.Errorf("rank %d, round %d: CreateGroup on dup %d: %w", me, round, i, err)
				}
				return use(c, all)
			}, func() error {
				c, err := w.CreateGroup(all, i)
				if err != nil {
					return fmt.Errorf("rank %d, round %d: CreateGroup with tag %d: %w", me, round, i, err)
				}
				return use(c, all)
			})
		}
		for _, g := range []*comm.Group{pairA, pairB} {
			if g.Rank() != comm.Undefined {
				calls = append(calls, func() error {
					c, err := w.CreateGroup(g, 3)
					if err != nil {
						return fmt.Errorf("rank %d, round %d: CreateGroup of %v: %w", me, round, members(g), err)
					}
					return use(c, g)
				})
			}
		}
		errs := make(chan error, len(calls))
		for _, f := range calls {
			go func() { errs <- f() }()
		}
		for range calls {
			if err := <-errs; err != nil {
				return err
			}
		}
	}
	for _, d := range dups {
		if err := d.Free(); err != nil {
			return err
		}
	}
	return w.Barrier()
}

func init() { ranktest.Register("creategroup-concurrent", createGroupConcurrent) }

func TestCreateGroupConcurrent(t *testing.T) {
	ranktest.Run(t, 3, "creategroup-concurrent")
	runWorld(t, 3, createGroupConcurrent)
}
