package team

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/shm"
)

// Team is one rank's handle on a set of ranks that share a barrier, an abort
// word and exchange slots. Under shmrun they live in the control segment; a
// singleton, or the goroutine test mode, keeps them on the Go heap (where the
// race detector can see every access).
type Team struct {
	rank, size int
	job, dir   string
	ctl        *Control
	bar        *barrier.Barrier
	abort      *uint32
	slots      [2][]byte
	round      int
	policy     barrier.Policy
	local      *localShare // non-nil in local (heap) mode
	seq        uint64      // collective objects made so far (same on every rank)
	check      bool
	backing    format.Backing

	// A communicator's team (Sub) lives in an entry of the control
	// segment's table; the world's is entry -1.
	cm      *Control     // the control memory: mapped, or the local heap block
	entry   int          // communicator table entry, -1 for the world
	members []int        // world rank of each team rank (nil: the world)
	keyBase uint64       // Publish keys of this team: entry and claim number
	refs    atomic.Int32 // this process's holders (its communicator, windows)
	// onRelease runs at the last Release (OnRelease).
	onRelease []func()
}

// localShare passes Go values between the goroutine ranks of a local team
// (in process mode the same role is played by named segments).
type localShare struct {
	mu sync.Mutex
	m  map[uint64]any
}

// Config names what a team needs besides its memory.
type Config struct {
	Job    string // job id, used in segment names
	Dir    string // shm directory for window segments
	Policy barrier.Policy
	// Check asks the objects built on the team (windows) to check their
	// own state's invariants after every call: the goroutine test mode.
	Check bool
	// Backing is where window segments live (format.BackingAuto: the
	// directory when it has room, else a memfd).
	Backing format.Backing
}

// Attach builds rank's team over a mapped control segment.
func Attach(ctl *Control, rank int, cfg Config) (*Team, error) {
	t := &Team{rank: rank, size: ctl.Layout.N, job: cfg.Job, dir: cfg.Dir, ctl: ctl, policy: cfg.Policy, check: cfg.Check, backing: cfg.Backing,
		abort: ctl.AbortWord(), slots: [2][]byte{ctl.Slots(0), ctl.Slots(1)}, cm: ctl, entry: -1}
	var err error
	t.bar, err = barrier.New(ctl.BarrierLine(), t.size, t.abort, cfg.Policy)
	return t, err
}

// NewLocal returns n teams over one heap block: the ranks of a singleton
// (n = 1) or of the goroutine test mode.
func NewLocal(n int, cfg Config) ([]*Team, error) {
	if n < 1 || n > format.MaxRanks {
		return nil, fmt.Errorf("team: %d ranks", n)
	}
	// Goroutine ranks share GOMAXPROCS threads: they are oversubscribed.
	cfg.Policy.Spin = min(cfg.Policy.Spin, barrier.OversubscribedPolicy.Spin)
	cfg.Policy.Goroutines = true
	l := LayoutFor(n)
	mem := shm.Bytes(make([]uint64, l.Total/8))
	ctl := &Control{Mem: mem, Layout: l, Job: cfg.Job}
	share := &localShare{m: map[uint64]any{}}
	teams := make([]*Team, n)
	for r := range teams {
		t, err := Attach(ctl, r, cfg)
		if err != nil {
			return nil, err
		}
		t.ctl = nil // heap memory: nothing to unmap (t.cm still points at it)
		t.abort = ctl.AbortWord()
		t.local = share
		teams[r] = t
	}
	return teams, nil
}

// Rank is this rank's number in the team.
func (t *Team) Rank() int { return t.rank }

// Size is the number of ranks.
func (t *Team) Size() int { return t.size }

// Job is the job id.
func (t *Team) Job() string { return t.job }

// Dir is the shm directory for segments.
func (t *Team) Dir() string { return t.dir }

// Abort is the job's abort word (nonzero: the job is ending).
func (t *Team) Abort() *uint32 { return t.abort }

// Config is the configuration the team was made with.
func (t *Team) Config() Config {
	return Config{Job: t.job, Dir: t.dir, Policy: t.policy, Check: t.check, Backing: t.backing}
}

// Check reports whether objects built on the team check their invariants
// after every call (Config.Check).
func (t *Team) Check() bool { return t.check }

// Backing is where window segments live (Config.Backing).
func (t *Team) Backing() format.Backing { return t.backing }

// Policy is the wait policy.
func (t *Team) Policy() barrier.Policy { return t.policy }

// Control is the mapped control segment, nil in local mode.
func (t *Team) Control() *Control { return t.ctl }

// Barrier waits for every rank of the team.
func (t *Team) Barrier() error { return t.bar.Wait() }

// Agree is a barrier on which every rank learns whether any rank failed: it
// returns the first rank that reported failure in this round, or -1.
func (t *Team) Agree(failed bool) (int, error) {
	me := -1
	if failed {
		me = t.rank
	}
	return t.bar.Agree(me)
}

// Exchange publishes mine (at most format.SlotLen bytes) and returns every rank's
// published bytes (rank order, format.SlotLen each, copied out), along with the
// agreement of Agree. It costs one barrier: rounds alternate between two slot
// sets, so a slot is rewritten only after everyone passed the next barrier,
// that is, after everyone read it.
func (t *Team) Exchange(mine []byte, failed bool) ([]byte, int, error) {
	if len(mine) > format.SlotLen {
		return nil, -1, fmt.Errorf("team: exchange of %d bytes, slot holds %d", len(mine), format.SlotLen)
	}
	slots := t.slots[t.round&1]
	t.round++
	slot := slots[t.rank*format.SlotLen : (t.rank+1)*format.SlotLen]
	n := copy(slot, mine)
	clear(slot[n:])
	first, err := t.Agree(failed)
	if err != nil {
		return nil, -1, err
	}
	return append([]byte(nil), slots...), first, nil
}

// SetRankState publishes this rank's lifecycle state for the launcher.
func (t *Team) SetRankState(s uint32, pid int) {
	if t.ctl == nil {
		return
	}
	atomic.StoreUint32(t.ctl.RankPID(t.rank), uint32(pid))
	atomic.StoreUint32(t.ctl.RankState(t.rank), s)
}

// WatchWaits publishes this process's sleeping waits in its rank line of
// the control segment, for the launcher's deadlock watch (barrier.Watch):
// the count of waits asleep, and what one of them waits for: the last to
// fall asleep of those still asleep (a wait that has woken is never the
// one described while another sleeps). Process mode only: it is
// process-wide.
func (t *Team) WatchWaits() {
	if t.ctl == nil {
		return
	}
	c, r := t.ctl, t.rank
	c.watched = true
	describe := func(w barrier.Waiting) {
		atomic.StoreUint32(c.RankWord(r, format.RankWaitKind), w.Kind)
		atomic.StoreUint32(c.RankWord(r, format.RankWaitPeer), uint32(w.Peer))
		atomic.StoreUint32(c.RankWord(r, format.RankWaitTag), uint32(w.Tag))
	}
	// The waits asleep, in the order they fell asleep. Only sleeps
	// come here (a wait past its spin and yield phases, microseconds
	// at least), so a mutex costs nothing that shows.
	var mu sync.Mutex
	var asleepNow []barrier.Waiting
	barrier.Watch = func(w barrier.Waiting, asleep bool) {
		mu.Lock()
		defer mu.Unlock()
		if !asleep {
			if i := slices.Index(asleepNow, w); i >= 0 {
				asleepNow = slices.Delete(asleepNow, i, i+1)
			}
			if n := len(asleepNow); n > 0 {
				describe(asleepNow[n-1])
			}
			atomic.AddUint32(c.RankWord(r, format.RankSleepers), ^uint32(0))
			atomic.AddUint32(c.RankWord(r, format.RankWakes), 1)
			return
		}
		asleepNow = append(asleepNow, w)
		describe(w)
		atomic.AddUint32(c.RankWord(r, format.RankSleepers), 1)
	}
}

// RequestAbort records that this rank called Abort(code) and wakes the
// sleepers of the world barrier; waiters elsewhere (windows) see the abort
// word within their policy's sleep. The launcher ends the job with exit
// status format.AbortExitStatus(code).
func (t *Team) RequestAbort(code int) {
	if t.ctl == nil {
		atomic.CompareAndSwapUint32(t.abort, format.AbortNone, format.AbortByRank)
		return
	}
	// Claim, write, publish: two ranks aborting at once must not leave
	// one's code beside the other's rank (FORMAT.md, abort line).
	if atomic.CompareAndSwapUint32(t.abort, format.AbortNone, format.AbortClaimed) {
		atomic.StoreUint32(t.ctl.AbortCode(), uint32(code))
		atomic.StoreUint32(t.ctl.AbortRank(), uint32(t.WorldRank(t.rank)))
		atomic.StoreUint32(t.abort, format.AbortByRank)
	}
	raw.WakeAll(t.ctl.WakeWord())
}

// Local reports whether the team lives on the Go heap (singleton or the
// goroutine test mode) rather than in a control segment.
func (t *Team) Local() bool { return t.local != nil }

// NextSeq numbers collective objects (windows): every rank calls it once per
// collective creation, in the same order, so the numbers agree.
func (t *Team) NextSeq() uint64 { t.seq++; return t.seq }

// Publish stores v under key for the other goroutine ranks of a local team.
func (t *Team) Publish(key uint64, v any) {
	t.local.mu.Lock()
	t.local.m[t.keyBase+key] = v
	t.local.mu.Unlock()
}

// Lookup returns what Publish stored under key (after a barrier).
func (t *Team) Lookup(key uint64) any {
	t.local.mu.Lock()
	defer t.local.mu.Unlock()
	return t.local.m[t.keyBase+key]
}

// Forget drops key (the last rank to look it up calls it).
func (t *Team) Forget(key uint64) {
	t.local.mu.Lock()
	delete(t.local.m, t.keyBase+key)
	t.local.mu.Unlock()
}

// ofComm is the accessor package comm registers: it returns the team behind
// a *comm.Comm, or an error (wrapping comm's class) for a nil, zero or
// finalized communicator. It lets win reach the team without comm exporting
// an internal type.
var ofComm func(c any, call string) (*Team, error)

// RegisterComm is called once, by package comm's init.
func RegisterComm(f func(c any, call string) (*Team, error)) { ofComm = f }

// OfComm returns the team behind c, a *comm.Comm, for the named call: an
// error (naming call) if c is nil, a zero Comm, or finalized. It is the
// start of a window's creation, collective over c: every rank first checks
// in a round of c's collectives that all are creating a window (an error
// on every rank otherwise).
func OfComm(c any, call string) (*Team, error) { return ofComm(c, call) }
