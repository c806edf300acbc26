//go:build !mpi

package comm

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/obs"
	"github.com/shmrun/shmrun/internal/rmacheck"
	"github.com/shmrun/shmrun/internal/team"
)

// Comm is a communicator (MPI_Comm): a group of ranks that make collective
// calls together. Init returns the world. A Comm's collective calls are
// ordered by the program; its local calls may come from any goroutine.
type Comm struct {
	t         *team.Team
	members   []int // world rank of each comm rank
	exit      func(code int)
	finalized atomic.Bool              // on the world: Finalize was called
	world     *Comm                    // the world this communicator was made from (itself for the world)
	freed     atomic.Bool              // Free was called (never on the world)
	self      bool                     // Self's communicator: only this process
	topoState                          // on the world: this process's place in the hardware
	coll      atomic.Pointer[collArea] // the collective area, made by the first collective call
	eng       *engine                  // on the world: the point-to-point engine
	pt        p2pInfo                  // message context and rank map, made on first use
	clocks    *rmacheck.Clocks         // shmrun --check: the members' published clocks (with coll)
	calls     uint64                   // shmrun --check: collective calls so far (their clock slots alternate)
	grp       groupWait                // on the world: this process's CreateGroup calls' messages
	appNum    int                      // on the world: MPI_APPNUM, if appSet (the launcher's EnvAppNum)
	appSet    bool
	cart      *cartTopo                // the Cartesian topology (CartCreate, CartSub, Dup of one), or nil
	nbc       atomic.Pointer[nbcQueue] // the nonblocking collectives queued (nbc.go), made by the first
	areaMu    sync.Mutex               // orders the making of coll (a job's and Ibarrier's)
	ibarN     atomic.Uint32            // Ibarrier calls this rank has made on c
	live      atomic.Pointer[liveComm] // c's persistent requests (p2p_persist.go), made by the first
}

var process struct {
	sync.Mutex
	world *Comm
	self  *Comm
	done  bool
}

// Init starts this rank's part of the job (MPI_Init) and returns the world
// communicator. Under shmrun it attaches to the job's control segment and
// checks it; run on its own, the program is a singleton: a world of size 1.
// It is local (no other rank is waited for). Calling it twice is an error.
func Init() (*Comm, error) {
	process.Lock()
	defer process.Unlock()
	if process.world != nil || process.done {
		return nil, fmt.Errorf("comm: Init called twice: %w", ErrInit)
	}
	c, err := initFromEnv(os.Getenv)
	if err != nil {
		return nil, err
	}
	process.world = c
	rec = obs.Start(c.Rank())
	if rmacheck.On() && !c.t.Local() {
		// The world's message clocks: a collective area, made while every
		// rank is in Init.
		mem, err := c.t.Area(rmacheck.MsgAreaLen(c.Size()), "shmrun-check-messages", func([]byte) error { return nil }, func([]byte) error { return nil })
		if err == nil {
			chk, err = rmacheck.Start(c.Rank(), c.Size(), mem)
		}
		if err != nil {
			return nil, fmt.Errorf("comm: Init: shmrun --check: %v: %w", err, ErrInit)
		}
	}
	return c, nil
}

// chk is this process's checker (shmrun --check), nil when off.
var chk *rmacheck.Proc

// rec is this process's record for shmrun --stats and --trace (nil when
// neither is on: every hook is then one nil test off the fast paths).
var rec *obs.Rank

func initFromEnv(get func(string) string) (*Comm, error) {
	e, err := parseEnv(get)
	if err != nil {
		return nil, err
	}
	cfg := team.Config{Job: e.job, Dir: e.dir, Policy: e.policy, Backing: e.backing}
	if e.singleton {
		cfg.Job = singletonJob()
		ts, err := team.NewLocal(1, cfg)
		if err != nil {
			return nil, err
		}
		c := newComm(ts[0], os.Exit)
		if c.eng, err = newEngine(ts[0], true); err != nil {
			return nil, fmt.Errorf("comm: Init: %v: %w", err, ErrInit)
		}
		return c, nil
	}
	ctl, err := team.AttachControl(e.controlFD, e.job, e.size)
	if err != nil {
		return nil, fmt.Errorf("comm: Init: %w: %w", err, ErrInit)
	}
	t, err := team.Attach(ctl, e.rank, cfg)
	if err != nil {
		ctl.Close()
		return nil, fmt.Errorf("comm: Init: %v: %w", err, ErrInit)
	}
	// Ranks that share cores start no nonblocking collective's worker
	// before a kick (nbc.go).
	nbcLazy.Store(e.policy.Spin <= barrier.OversubscribedPolicy.Spin)
	single := allowSingleCopy(!e.noSingleCopy)
	c := newComm(t, os.Exit)
	if c.eng, err = newEngine(t, single); err != nil {
		ctl.Close()
		return nil, fmt.Errorf("comm: Init: %v: %w", err, ErrInit)
	}
	c.appNum, c.appSet = e.appNum, e.appSet
	c.eng.bulk = &idleBulk // nothing in flight yet
	idleEngine.Store(c.eng)
	t.WatchWaits()
	t.SetRankState(format.RankInit, os.Getpid())
	return c, nil
}

func newComm(t *team.Team, exit func(int)) *Comm {
	m := make([]int, t.Size())
	for i := range m {
		m[i] = i
	}
	c := &Comm{t: t, members: m, exit: exit}
	c.world = c
	return c
}

// NewLocalWorld returns the n ranks of a world whose shared state lives on
// the Go heap, each rank a *Comm to be driven by its own goroutine. It is the
// test mode in which protocols run under the race detector; Abort in it
// marks the job aborted and returns instead of exiting. Windows of a local
// world also check their epoch state's invariants after every
// synchronization call, and panic with the broken one: a bug of this module,
// not of the program.
func NewLocalWorld(n int) ([]*Comm, error) {
	ts, err := team.NewLocal(n, team.Config{Job: singletonJob(), Dir: os.Getenv(EnvShmDir), Policy: barrier.DefaultPolicy, Check: true})
	if err != nil {
		return nil, err
	}
	cs := make([]*Comm, n)
	for i, t := range ts {
		cs[i] = newComm(t, nil)
		if cs[i].eng, err = newEngine(t, true); err != nil {
			return nil, err
		}
	}
	return cs, nil
}

// Finalize ends this rank's part of the job (MPI_Finalize). It is collective
// over the world: it returns when every rank has called it. Calls on any
// communicator afterwards return ErrFinalized. Under shmrun, a rank that exits
// with status 0 after Init but without Finalize fails the job.
func Finalize() error {
	process.Lock()
	defer process.Unlock()
	if process.world == nil {
		if process.done {
			return fmt.Errorf("comm: Finalize called twice: %w", ErrFinalized)
		}
		return fmt.Errorf("comm: Finalize before Init: %w", ErrInit)
	}
	w := process.world
	nbcDrainAll() // a queued collective's job must not outlive the runtime
	err := w.Finalize()
	if w.finalized.Load() { // not when the ranks disagreed on the call
		idleEngine.Store(nil)
		idleBulk.Store(false)
		process.world, process.self, process.done = nil, nil, true
		if ferr := rec.Finish(); ferr != nil && err == nil {
			err = fmt.Errorf("comm: Finalize on rank %d: writing its statistics or trace: %v: %w", w.Rank(), ferr, ErrOther)
		}
	}
	return err
}

// Finalize is the collective end of this world rank (see the package-level
// Finalize, which programs call; this method serves NewLocalWorld ranks).
func (c *Comm) Finalize() error {
	if err := c.check("Finalize"); err != nil {
		return err
	}
	if c.world != c || c.self {
		return fmt.Errorf("comm: Finalize on rank %d: not the world communicator: %w", c.Rank(), ErrComm)
	}
	// Once the world has a collective area, Finalize checks there first
	// that every rank is finalizing: a rank in Finalize while another is in
	// a collective is then an error on both, and this rank is not
	// finalized. (Before any collective, Finalize makes no area for it.)
	if c.coll.Load() != nil {
		if err := c.agreeCall("Finalize", format.CollFinalize); err != nil {
			return err
		}
	}
	c.t.SetRankState(format.RankFinalizing, os.Getpid()) // for the deadlock watch's report
	err := c.t.Barrier()
	c.t.SetRankState(format.RankFinalized, os.Getpid())
	c.finalized.Store(true)
	// The control segment stays mapped until the process exits (a few KiB):
	// a window the program did not free still points at its abort word, and
	// unmapping it would turn that mistake into a fault.
	return withLate(c.takeStale(), c.wrapWait("Finalize", err))
}

// Rank is the calling process's rank in c (MPI_Comm_rank). Local. A nil or
// zero Comm has rank 0 (there is no error result; its other calls fail with
// ErrComm).
func (c *Comm) Rank() int {
	if c == nil || c.t == nil {
		return 0
	}
	return c.t.Rank()
}

// Size is the number of ranks in c (MPI_Comm_size). Local. A nil or zero
// Comm has size 0.
func (c *Comm) Size() int {
	if c == nil || c.t == nil {
		return 0
	}
	return c.t.Size()
}

// AppNum is the number of this rank's program on the launcher's command
// line, from 0 (MPI_APPNUM, an attribute of the world): the part of an
// MPMD job ("shmrun -n 2 a : -n 2 b" gives b's ranks 1), 0 in a job of
// one program. A singleton (a program not started by shmrun) has none:
// ok is false, as for a nil or zero Comm. Local.
func (c *Comm) AppNum() (n int, ok bool) {
	if c == nil || c.world == nil {
		return 0, false
	}
	return c.world.appNum, c.world.appSet
}

// Group returns the group of c (MPI_Comm_group). Local. A nil or zero Comm
// gives an empty group.
func (c *Comm) Group() *Group {
	if c == nil || c.t == nil {
		return newGroup(nil, Undefined)
	}
	return newGroup(append([]int(nil), c.members...), c.members[c.Rank()])
}

// Abort ends the whole job (MPI_Abort): the launcher stops every rank and
// exits with the status that stands for code. An exit status is one byte
// and an aborted job must never look like a success, so the status is code
// mod 256, except that a code whose low byte is 0 (0 and 256 included) gives
// 1: Abort(7) exits 7, Abort(300) 44, Abort(-1) 255, Abort(0) and
// Abort(256) 1. The calling process exits with that same status. It does
// not return, except in the NewLocalWorld test mode, where it marks the job
// aborted and returns. A nil or zero Comm has no job to end: the process
// exits with that status after saying so on stderr.
func (c *Comm) Abort(code int) {
	status := format.AbortExitStatus(code)
	if c == nil || c.t == nil {
		fmt.Fprintf(os.Stderr, "comm: Abort(%d) on a %v communicator: exiting this process only with status %d\n", code, map[bool]string{true: "nil", false: "zero"}[c == nil], status)
		os.Exit(status)
	}
	c.t.RequestAbort(code)
	if c.exit != nil {
		c.exit(status)
	}
}

func init() {
	team.RegisterComm(func(x any, call string) (*team.Team, error) {
		c, _ := x.(*Comm)
		if err := c.check(call); err != nil {
			return nil, err
		}
		// "win.Create": apart from comm's Create in messages and the
		// statistics.
		if err := c.agreeCall("win."+call, format.CollWinCreate); err != nil {
			return nil, err
		}
		return c.t, nil
	})
}

// Wtime returns the elapsed wall-clock time in seconds since an arbitrary
// point in the past (MPI_Wtime). Local.
func Wtime() float64 { return float64(time.Since(epoch)) / 1e9 }

var epoch = time.Now()

// check is every call's test of its receiver: a nil or zero Comm (one not
// made by Init or NewLocalWorld) is ErrComm, a finalized one ErrFinalized.
func (c *Comm) check(call string) error {
	if c == nil || c.t == nil {
		return fmt.Errorf("comm: %s: %s communicator (use the one Init returns): %w", call, map[bool]string{true: "nil", false: "zero"}[c == nil], ErrComm)
	}
	if c.world != nil && c.world.finalized.Load() {
		return fmt.Errorf("comm: %s on rank %d: %w", call, c.Rank(), ErrFinalized)
	}
	if c.freed.Load() {
		return fmt.Errorf("comm: %s on rank %d: the communicator was freed: %w", call, c.Rank(), ErrComm)
	}
	return nil
}

// valid is the receiver check of the code both backends share (cart.go).
func (c *Comm) valid(call string) error { return c.check(call) }

func (c *Comm) wrapWait(call string, err error) error {
	if err == errTry {
		return err // a step's stop (nbc_shm.go): no error of the program's
	}
	if errors.Is(err, barrier.ErrAborted) {
		return fmt.Errorf("comm: %s on rank %d: %w", call, c.Rank(), ErrAborted)
	}
	if err != nil {
		return fmt.Errorf("comm: %s on rank %d: %v: %w", call, c.Rank(), err, ErrOther)
	}
	return nil
}
