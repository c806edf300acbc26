//go:build mpi

package comm

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/internal/mpi"
	"github.com/shmrun/shmrun/internal/topo"
)

// Comm is a communicator (MPI_Comm). Under the MPI backend (-tags mpi) it
// is a handle of the system's MPI with its members' world ranks.
type Comm struct {
	h       mpi.Comm
	rank    int
	size    int
	members []int // world rank of each comm rank
	world   *Comm
	self    bool
	freed   atomic.Bool
	// finalized, on the world: Finalize was called.
	finalized atomic.Bool
	// cart is the Cartesian topology (CartCreate, CartSub, Dup of one), or nil.
	cart *cartTopo
	// nbc is the nonblocking collectives queued (nbc.go), made by the
	// first; twin, a duplicate of h made with c, is where they run, apart
	// from c's blocking collectives (nil for a twin).
	nbc  atomic.Pointer[nbcQueue]
	twin *Comm
	// pcolls counts the persistent collectives made on c and not yet
	// freed: Free keeps the twin, on which their starts run, until the
	// last of them is freed (MPI 4.1 §7.4.3).
	pcolls struct {
		sync.Mutex
		n      int
		closed bool // Free has run: the last one's Free frees the twin
	}
}

var process struct {
	sync.Mutex
	world *Comm
	self  *Comm
	done  bool
}

func init() {
	mpi.RegisterComm(func(x any, call string) (mpi.Comm, error) {
		c, ok := x.(*Comm)
		if !ok {
			return mpi.Comm{}, fmt.Errorf("%s: not a communicator: %w", call, ErrComm)
		}
		if err := c.usable(call); err != nil {
			return mpi.Comm{}, err
		}
		return c.h, nil
	})
}

// Init starts this rank's part of the job (MPI_Init_thread with
// MPI_THREAD_MULTIPLE) and returns the world communicator. Under the MPI
// backend the job is the MPI's (started by mpirun or srun). The Go
// runtime's handlers of the signals it needs (SIGSEGV, SIGBUS, SIGFPE,
// SIGILL, SIGTRAP, SIGURG, SIGPROF) are put back where MPI_Init replaced
// them, and a handler the MPI installed on another signal without
// SA_ONSTACK gets it. Calling Init twice is an error, as is an MPI that
// cannot provide MPI_THREAD_MULTIPLE.
func Init() (*Comm, error) {
	process.Lock()
	defer process.Unlock()
	if process.world != nil || process.done {
		return nil, fmt.Errorf("comm: Init called twice: %w", ErrInit)
	}
	if err := mpi.Init(); err != nil {
		return nil, fmt.Errorf("comm: Init: %v: %w", err, ErrInit)
	}
	w, err := wrap(mpi.World(), nil)
	if err != nil {
		return nil, err
	}
	s, err := wrap(mpi.Self(), w)
	if err != nil {
		return nil, err
	}
	s.self = true
	process.world, process.self = w, s
	return w, nil
}

// wrap makes the *Comm of handle h, made from world (nil: h is the world).
func wrap(h mpi.Comm, world *Comm) (*Comm, error) {
	c := &Comm{h: h, world: world}
	if world == nil {
		c.world = c
	}
	var err error
	if c.rank, err = h.Rank(); err != nil {
		return nil, mpiError("", err)
	}
	if c.size, err = h.Size(); err != nil {
		return nil, mpiError("", err)
	}
	if c.members, err = h.WorldRanks(c.size); err != nil {
		return nil, mpiError("", err)
	}
	// The twin is made now, with c, by every rank: made by the first
	// nonblocking collective, it would make that call block.
	th, err := h.Dup()
	if err != nil {
		return nil, mpiError("", err)
	}
	c.twin = &Comm{h: th, rank: c.rank, size: c.size, members: c.members, world: c.world}
	return c, nil
}

// Self returns the communicator of this process alone (MPI_COMM_SELF),
// after Init; nil before.
func Self() *Comm {
	process.Lock()
	defer process.Unlock()
	return process.self
}

// Finalize ends this rank's part of the job (MPI_Finalize). It is
// collective over the world. Calls on any communicator afterwards return
// ErrFinalized.
func Finalize() error {
	process.Lock()
	defer process.Unlock()
	if process.world == nil {
		return fmt.Errorf("comm: Finalize without Init: %w", ErrFinalized)
	}
	if process.done {
		return fmt.Errorf("comm: Finalize called twice: %w", ErrFinalized)
	}
	process.done = true
	nbcDrainAll() // a queued collective's job must not outlive the MPI
	pairs.Wait()  // nor an Isendrecv's goroutine
	process.world.finalized.Store(true)
	if err := mpi.Finalize(); err != nil {
		return mpiError("Finalize", err)
	}
	return nil
}

// Finalize is the package's Finalize, for the world communicator.
func (c *Comm) Finalize() error { return Finalize() }

// Wtime is MPI_Wtime: seconds since an arbitrary time in the past.
func Wtime() float64 { return mpi.Wtime() }

// Rank is this process's rank in c (MPI_Comm_rank). Local.
func (c *Comm) Rank() int { return c.rank }

// Size is the number of ranks of c (MPI_Comm_size). Local.
func (c *Comm) Size() int { return c.size }

// AppNum is the number of this process's program on the MPI launcher's
// command line (MPI_APPNUM, an attribute of the world): the part of an
// MPMD job, 0 in a job of one program; ok is false if the MPI sets none
// (or for a nil Comm). Local.
func (c *Comm) AppNum() (n int, ok bool) {
	if c == nil {
		return 0, false
	}
	n, ok, err := mpi.AppNum()
	return n, ok && err == nil
}

// Group returns c's group (MPI_Comm_group). Local.
func (c *Comm) Group() *Group {
	if c == nil {
		return newGroup(nil, Undefined)
	}
	return newGroup(slices.Clone(c.members), c.members[c.rank])
}

// Abort ends the whole job with code (MPI_Abort on c). It does not return.
func (c *Comm) Abort(code int) {
	mpi.Abort(c.h, code)
	os.Exit(code)
}

// Compare compares two communicators (MPI_Comm_compare): Ident for the
// same communicator, Congruent for different ones with the same members in
// the same order, Similar for the same members in another order, Unequal
// otherwise. Local. A nil communicator is Unequal to any.
func Compare(a, b *Comm) int {
	switch {
	case a == nil || b == nil:
		return Unequal
	case a == b:
		return Ident
	case slices.Equal(a.members, b.members):
		return Congruent
	}
	x, y := slices.Clone(a.members), slices.Clone(b.members)
	slices.Sort(x)
	slices.Sort(y)
	if slices.Equal(x, y) {
		return Similar
	}
	return Unequal
}

// usable checks that c can be used by call: not nil, freed or finalized.
func (c *Comm) usable(call string) error {
	switch {
	case c == nil:
		return fmt.Errorf("comm: %s on a nil communicator: %w", call, ErrComm)
	case c.freed.Load():
		return fmt.Errorf("comm: %s on a freed communicator: %w", call, ErrComm)
	case c.world.finalized.Load():
		return fmt.Errorf("comm: %s after Finalize: %w", call, ErrFinalized)
	}
	return nil
}

// valid is the receiver check of the code both backends share (cart.go).
func (c *Comm) valid(call string) error { return c.usable(call) }

// Barrier blocks until every rank of c has called it (MPI_Barrier).
// Collective.
func (c *Comm) Barrier() error {
	if err := c.usable("Barrier"); err != nil {
		return err
	}
	return mpiError("Barrier", c.h.Barrier())
}

// Dup makes a communicator with c's members in c's order and a context of
// its own (MPI_Comm_dup), with c's Cartesian topology if it has one.
// Collective.
func (c *Comm) Dup() (*Comm, error) {
	if err := c.usable("Dup"); err != nil {
		return nil, err
	}
	h, err := c.h.Dup()
	if err != nil {
		return nil, mpiError("Dup", err)
	}
	d, err := wrap(h, c.world)
	if d != nil {
		d.cart = c.cart // MPI_Comm_dup keeps the topology
	}
	return d, err
}

// Split partitions c by color, ordering each part by key and then by rank
// in c (MPI_Comm_split). Collective. A rank with color Undefined gets nil.
func (c *Comm) Split(color, key int) (*Comm, error) {
	if err := c.usable("Split"); err != nil {
		return nil, err
	}
	if color < 0 && color != Undefined {
		return nil, fmt.Errorf("comm: Split: color %d is negative and not Undefined: %w", color, ErrArg)
	}
	h, err := c.h.Split(color, key)
	return c.made("Split", h, err)
}

func (c *Comm) made(call string, h mpi.Comm, err error) (*Comm, error) {
	if err != nil {
		return nil, mpiError(call, err)
	}
	if h.IsNull() {
		return nil, nil
	}
	return wrap(h, c.world)
}

// SplitType partitions c by the hardware (MPI_Comm_split_type).
// Collective over c; ranks in a new communicator are ordered by key, then
// by rank in c. TypeShared is MPI_COMM_TYPE_SHARED: the ranks of one node.
// The hardware kinds split each node's ranks by the instance of the
// resource their CPUs lie in, read from this machine (Linux's sysfs, as
// on the shmrun backend): TypeHWGuided at the resource named by
// info[HWResourceType] (a rank bound across several instances, a missing
// or unknown name: nil and no error), TypeHWUnguided at the first level
// at which c's ranks split — the node when c spans nodes
// ("mpi_shared_memory") — written into info. A rank may pass
// SplitKind(Undefined) where the others pass a kind: it gets nil, and the
// others split among themselves. An unknown kind, or ranks passing
// different kinds, is ErrArg on every rank.
func (c *Comm) SplitType(kind SplitKind, key int, info Info) (*Comm, error) {
	if err := c.usable("SplitType"); err != nil {
		return nil, err
	}
	// The ranks agree on the kind first: one that passes Undefined takes
	// the others' calls (the hardware kinds are several), and a kind
	// unknown or different anywhere is every rank's error.
	kinds := make([]int32, c.size)
	if err := Allgather(c, []int32{int32(kind)}, kinds); err != nil {
		return nil, err
	}
	all := SplitKind(Undefined)
	for r, k := range kinds {
		switch k := SplitKind(k); {
		case k == SplitKind(Undefined):
		case k != TypeShared && k != TypeHWGuided && k != TypeHWUnguided:
			return nil, fmt.Errorf("comm: SplitType on rank %d: rank %d passed split kind %d: %w", c.rank, r, int(k), ErrArg)
		case all == SplitKind(Undefined):
			all = k
		case k != all:
			return nil, fmt.Errorf("comm: SplitType on rank %d: ranks passed split kinds %d and %d: %w", c.rank, int(all), int(k), ErrArg)
		}
	}
	out := kind == SplitKind(Undefined)
	switch {
	case all == SplitKind(Undefined):
		return nil, nil
	case all == TypeShared && out:
		h, err := c.h.SplitSharedOut()
		return c.made("SplitType", h, err)
	case all == TypeShared:
		h, err := c.h.SplitShared(key)
		return c.made("SplitType", h, err)
	}
	// Each node's ranks first (in c's order), then by resource there.
	nh, err := c.h.SplitShared(0)
	node, err := c.made("SplitType", nh, err)
	if err != nil {
		return nil, err
	}
	defer node.Free()
	loc, lerr := location()
	if all == TypeHWGuided {
		color := Undefined
		if name := info[HWResourceType]; name != "" && lerr == nil && !out {
			if level, err := topo.ParseLevel(name); err == nil && loc.At(level) >= 0 {
				color = loc.At(level)
			}
		}
		if err := node.agreeLocal("SplitType", lerr); err != nil {
			return nil, err
		}
		return node.Split(color, key)
	}
	// Unguided: the node, if c spans nodes; else the first level at which
	// the ranks' locations differ.
	if err := c.agreeLocal("SplitType", lerr); err != nil {
		return nil, err
	}
	level, ok := topo.Machine, true
	if node.size == c.size {
		mine := make([]int32, len(loc))
		copy(mine, loc[:])
		every := make([]int32, len(loc)*c.size)
		if err := Allgather(c, mine, every); err != nil {
			return nil, err
		}
		// The level is where the ranks that ask split.
		var locs []topo.Location
		for r := range c.size {
			if SplitKind(kinds[r]) == TypeHWUnguided {
				var l topo.Location
				copy(l[:], every[r*len(loc):])
				locs = append(locs, l)
			}
		}
		level, ok = topo.Unguided(locs)
	}
	color := Undefined
	if ok && (level == topo.Machine || loc.At(level) >= 0) && !out {
		color = max(0, loc.At(level))
	}
	nc, err := node.Split(color, key)
	if nc != nil && info != nil {
		info[HWResourceType] = levelName(level)
	}
	return nc, err
}

// agreeLocal makes a rank's failure to read the hardware every rank's
// error (ErrOther), so that no rank splits alone. Collective.
func (c *Comm) agreeLocal(call string, lerr error) error {
	bad := []int32{0}
	if lerr != nil {
		bad[0] = int32(c.rank + 1)
	}
	if err := AllreduceInPlace(c, bad, atomics.Max); err != nil {
		return err
	}
	switch {
	case lerr != nil:
		return fmt.Errorf("comm: %s on rank %d: reading the hardware: %v: %w", call, c.rank, lerr, ErrOther)
	case bad[0] != 0:
		return fmt.Errorf("comm: %s on rank %d: rank %d could not read the hardware: %w", call, c.rank, bad[0]-1, ErrOther)
	}
	return nil
}

// hw is this process's place in the hardware, read once.
var hw struct {
	once sync.Once
	loc  topo.Location
	err  error
}

func location() (topo.Location, error) {
	hw.once.Do(func() { hw.loc, hw.err = readLocation() })
	return hw.loc, hw.err
}

// Create makes a communicator of g's members, which must all be in c
// (MPI_Comm_create). Collective over c; ranks outside g get nil. Ranks
// may pass different groups if they are disjoint and each member of one
// passes that one (MPI 2.2 and later): a communicator each.
func (c *Comm) Create(g *Group) (*Comm, error) {
	return c.create("Create", g, 0)
}

// CreateGroup makes a communicator of g's members (MPI_Comm_create_group).
// Collective over g only; tag tells concurrent calls apart.
func (c *Comm) CreateGroup(g *Group, tag int) (*Comm, error) {
	return c.create("CreateGroup", g, tag)
}

func (c *Comm) create(call string, g *Group, tag int) (*Comm, error) {
	if err := c.usable(call); err != nil {
		return nil, err
	}
	if g == nil {
		return nil, fmt.Errorf("comm: %s: nil group: %w", call, ErrGroup)
	}
	ranks := make([]int, len(g.members))
	for i, w := range g.members {
		r := slices.Index(c.members, w)
		if r < 0 {
			return nil, fmt.Errorf("comm: %s: world rank %d of the group is not in the communicator: %w", call, w, ErrGroup)
		}
		ranks[i] = r
	}
	if g.Rank() == Undefined {
		if call == "Create" {
			// MPI_Comm_create is collective over c: take part with an
			// empty group.
			h, err := c.h.Split(Undefined, 0)
			if err != nil {
				return nil, mpiError(call, err)
			}
			if !h.IsNull() {
				_ = h.Free()
			}
		}
		return nil, nil
	}
	if call == "Create" {
		// MPI_Comm_create over c: every rank takes part; a split by
		// membership (the group's first member in c names it: disjoint
		// groups, distinct colors) keeps g's order through the key.
		h, err := c.h.Split(slices.Min(ranks), g.Rank())
		return c.made(call, h, err)
	}
	h, err := c.h.CreateGroup(ranks, tag)
	return c.made(call, h, err)
}

// Free releases c (MPI_Comm_free). Collective. The world and Self cannot be
// freed (ErrComm).
func (c *Comm) Free() error {
	if err := c.usable("Free"); err != nil {
		return err
	}
	if c == c.world || c.self {
		return fmt.Errorf("comm: Free of the world or Self communicator: %w", ErrComm)
	}
	if !c.freed.CompareAndSwap(false, true) {
		return fmt.Errorf("comm: Free of a freed communicator: %w", ErrComm)
	}
	// The nonblocking collectives pending on c complete as they would
	// have (MPI 4.1 §7.4.3): on the twin, freed after them, or after
	// the last persistent collective made on c if some are left, whose
	// starts queue on c's queue until then (Finalize drains it).
	c.pcolls.Lock()
	c.pcolls.closed = true
	keep := c.pcolls.n > 0
	c.pcolls.Unlock()
	if q := c.nbc.Load(); q != nil && keep {
		q.drain()
	} else {
		c.forgetQueue()
	}
	if c.twin != nil && !keep {
		if err := c.freeTwin(); err != nil {
			return err
		}
	}
	return mpiError("Free", c.h.Free())
}

// freeTwin frees c's twin, its queue's jobs done.
func (c *Comm) freeTwin() error {
	c.forgetQueue()
	c.twin.freed.Store(true)
	return mpiError("Free", c.twin.h.Free())
}

// holdColl counts a persistent collective made on c (ErrComm if c was
// freed meanwhile) and returns what its request's Free calls.
func (c *Comm) holdColl(call string) (drop func(), err error) {
	c.pcolls.Lock()
	defer c.pcolls.Unlock()
	if c.pcolls.closed {
		return nil, fmt.Errorf("comm: %s on a freed communicator: %w", call, ErrComm)
	}
	c.pcolls.n++
	return func() {
		c.pcolls.Lock()
		c.pcolls.n--
		last := c.pcolls.closed && c.pcolls.n == 0
		c.pcolls.Unlock()
		if last {
			_ = c.freeTwin() // the request's Free has nobody to tell
		}
	}, nil
}

// mpiError maps an error of the MPI to this package's class of it.
func mpiError(call string, err error) error {
	if err == nil {
		return nil
	}
	var me *mpi.Error
	if !errors.As(err, &me) {
		return err
	}
	class := ErrOther
	switch me.Class {
	case mpi.ClassRank:
		class = ErrRank
	case mpi.ClassTag:
		class = ErrTag
	case mpi.ClassCount:
		class = ErrCount
	case mpi.ClassType:
		class = ErrType
	case mpi.ClassOp:
		class = ErrOp
	case mpi.ClassComm:
		class = ErrComm
	case mpi.ClassArg:
		class = ErrArg
	case mpi.ClassTruncate:
		class = ErrTruncate
	case mpi.ClassBuffer:
		class = ErrBuffer
	case mpi.ClassNoMem:
		class = ErrNoMem
	case mpi.ClassRoot:
		class = ErrRoot
	case mpi.ClassGroup:
		class = ErrGroup
	case mpi.ClassRequest:
		class = ErrRequest
	}
	if call == "" {
		return fmt.Errorf("comm: %v: %w", err, class)
	}
	return fmt.Errorf("comm: %s: %v: %w", call, err, class)
}
