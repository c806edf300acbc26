//go:build !mpi

package comm

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/team"
)

// Dup makes a new communicator with the same group as c (MPI_Comm_dup).
// Collective over c. Its collectives, windows and (later) messages never
// mix with c's. It has c's Cartesian topology if c has one (Split and
// Create make communicators without a topology). It takes one entry of the job's table of format.MaxComms
// communicators until Free.
func (c *Comm) Dup() (*Comm, error) {
	if err := c.check("Dup"); err != nil {
		return nil, err
	}
	if err := c.agreeCall("Dup", format.CollDup); err != nil {
		return nil, err
	}
	d, err := c.split("Dup", 0, c.Rank())
	if d != nil {
		d.cart = c.cart // MPI_Comm_dup keeps the topology
	}
	return d, err
}

// Split partitions c by color (MPI_Comm_split): the ranks that pass the
// same color form a new communicator, ranked by key, ties broken by their
// rank in c. Collective over c. A rank passing Undefined as its color gets
// no communicator: nil and no error. A negative color other than Undefined
// is ErrArg (on every rank).
func (c *Comm) Split(color, key int) (*Comm, error) {
	if err := c.check("Split"); err != nil {
		return nil, err
	}
	if err := c.agreeCall("Split", format.CollSplit); err != nil {
		return nil, err
	}
	return c.split("Split", color, key)
}

// Create makes the communicator of the ranks of c in g, in g's order
// (MPI_Comm_create). Collective over c. As MPI allows since 2.2, ranks
// may pass different groups, one communicator made per group, provided
// the groups are disjoint and every member of a group passes that same
// group; a rank outside the group it passes (the empty group included)
// gets nil and no error. g must be a subgroup of c's group (ErrGroup
// otherwise).
func (c *Comm) Create(g *Group) (*Comm, error) {
	if err := c.check("Create"); err != nil {
		return nil, err
	}
	if err := c.agreeCall("Create", format.CollCreate); err != nil {
		return nil, err
	}
	color, key := Undefined, 0
	var gerr error
	if g == nil {
		gerr = fmt.Errorf("comm: Create on rank %d: nil group: %w", c.Rank(), ErrGroup)
	} else if tr, err := g.TranslateRanks(seq(g.Size()), c.Group()); err != nil || slices.Contains(tr, Undefined) {
		gerr = fmt.Errorf("comm: Create on rank %d: the group is not a subgroup of the communicator's: %w", c.Rank(), ErrGroup)
	} else if r := g.Rank(); r != Undefined {
		// The group's first member in c names it: disjoint groups,
		// distinct colors.
		color, key = slices.Min(tr), r
	}
	return c.splitChecked("Create", color, key, gerr)
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// split is Dup, Split and Create: two exchanges over c. Round 1: every rank
// publishes its color and key; each new communicator's rank 0 claims a table
// entry. Round 2: those ranks publish the entry; the others build their team
// over their rank 0's. A failure anywhere (a bad color, no free entry) is
// the same error on every rank, and entries claimed for it are given back.
func (c *Comm) split(call string, color, key int) (*Comm, error) {
	var err error
	if color < 0 && color != Undefined {
		err = fmt.Errorf("comm: %s on rank %d: color %d is negative: %w", call, c.Rank(), color, ErrArg)
	}
	return c.splitChecked(call, color, key, err)
}

// Slot encoding of the split rounds.
const (
	slotColor = 0  // int64
	slotKey   = 8  // int64
	slotEntry = 0  // int64, round 2: the claimed entry (-1: none)
	slotGen   = 8  // uint32, round 2
	slotMsg   = 16 // round 2: why the claim failed
)

func (c *Comm) splitChecked(call string, color, key int, localErr error) (*Comm, error) {
	le := binary.LittleEndian
	var mine [16]byte
	le.PutUint64(mine[slotColor:], uint64(int64(color)))
	le.PutUint64(mine[slotKey:], uint64(int64(key)))
	slots, first, err := c.t.Exchange(mine[:], localErr != nil)
	if err != nil {
		return nil, c.wrapWait(call, err)
	}
	if first >= 0 {
		if localErr != nil {
			return nil, localErr
		}
		return nil, fmt.Errorf("comm: %s on rank %d: rank %d passed a bad argument: %w", call, c.Rank(), first, ErrArg)
	}
	// The members of this rank's color, in new rank order.
	var group []int // ranks in c
	for r := range c.Size() {
		if int(int64(le.Uint64(slots[r*format.SlotLen+slotColor:]))) == color {
			group = append(group, r)
		}
	}
	keyOf := func(r int) int64 { return int64(le.Uint64(slots[r*format.SlotLen+slotKey:])) }
	slices.SortStableFunc(group, func(a, b int) int { return cmp.Compare(keyOf(a), keyOf(b)) })
	// Round 2: each new rank 0 claims an entry.
	leader := color != Undefined && group[0] == c.Rank()
	var out [format.SlotLen]byte
	le.PutUint64(out[slotEntry:], uint64(1<<64-1))
	var claimErr error
	entry := -1
	if leader {
		var gen uint32
		entry, gen, claimErr = c.t.Claim(len(group))
		le.PutUint64(out[slotEntry:], uint64(int64(entry)))
		le.PutUint32(out[slotGen:], gen)
		if claimErr != nil {
			copy(out[slotMsg:], claimErr.Error())
		}
	}
	slots, first, err = c.t.Exchange(out[:], claimErr != nil)
	if err != nil {
		if entry >= 0 {
			c.t.Unclaim(entry)
		}
		return nil, c.wrapWait(call, err)
	}
	if first >= 0 {
		if entry >= 0 {
			c.t.Unclaim(entry)
		}
		return nil, fmt.Errorf("comm: %s on rank %d: rank %d: %w: %w", call, c.Rank(), first, team.ErrNoEntry, ErrOther)
	}
	if color == Undefined {
		return nil, nil
	}
	lead := slots[group[0]*format.SlotLen:]
	entry, gen := int(int64(le.Uint64(lead[slotEntry:]))), le.Uint32(lead[slotGen:])
	members := make([]int, len(group))
	me := -1
	for i, r := range group {
		members[i] = c.members[r]
		if r == c.Rank() {
			me = i
		}
	}
	return c.subComm(call, entry, gen, me, members)
}

// Free frees the communicator (MPI_Comm_free). Collective over c. Windows
// made on c stay valid until their own Free; its table entry is given back
// when the last of them and c are freed on every rank. The world and Self
// cannot be freed (ErrComm), nor can c twice. A mismatch of an earlier
// collective call that this rank could only find late (see the package
// documentation) and no call has returned yet is Free's error; c is freed
// all the same. Operations pending at Free complete normally, and
// persistent requests made on c (SendInit, AllreduceInit and the rest)
// go on working until they are freed themselves (MPI 4.1 §7.4.3: c is
// deallocated only once nothing refers to it); every other call on c is
// ErrComm.
func (c *Comm) Free() error {
	if err := c.check("Free"); err != nil {
		return err
	}
	if c.world == c || c.self {
		return fmt.Errorf("comm: Free on rank %d: the world and Self communicators cannot be freed: %w", c.Rank(), ErrComm)
	}
	if err := c.agreeCall("Free", format.CollFree); err != nil {
		return err
	}
	if err := c.t.Barrier(); err != nil {
		return c.wrapWait("Free", err)
	}
	stale := c.takeStale()
	kept := c.liveRef().handOver(c)
	c.freed.Store(true)
	if !kept {
		c.release() // else with its last persistent request
	}
	return stale // an earlier call's mismatch, found late; c is freed
}

// release gives back what c holds on this rank once it is freed and no
// persistent request needs it.
func (c *Comm) release() {
	c.forgetQueue() // drained by agreeCall
	if e := c.world.eng; e != nil {
		e.forget(c.t.Context()) // every member is past its sends on c
	}
	if c.coll.Load() != nil {
		c.coll.Load().freed.Store(true)
		c.coll.Load().release()
	}
	c.t.Release()
}

// liveComm keeps a freed communicator working for the persistent
// requests made on it: MPI deallocates a communicator only once nothing
// refers to it (MPI 4.1 §7.4.3), and a persistent request can be started
// again until it is freed. Free of a communicator with such requests
// hands its working parts (team, collective area, queue, counters) to a
// communicator of its own that no program can name (cur), on which the
// requests' starts run, and which is released with the last of them. The
// program's communicator is freed for every other call.
type liveComm struct {
	cur    atomic.Pointer[Comm] // nil until Free hands over
	mu     sync.Mutex
	n      int  // persistent requests made on the communicator, not yet freed
	closed bool // Free has run: the last request's Free releases cur
}

// holdPersist gives persistent request p its communicator c and counts
// it among c's live ones, returning its request; ErrComm if c was freed
// meanwhile (another goroutine's Free).
func (c *Comm) holdPersist(p *persist) (*Request, error) {
	l := c.liveRef()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, fmt.Errorf("comm: %s on rank %d: the communicator was freed: %w", p.call, c.Rank(), ErrComm)
	}
	l.n++
	p.c, p.lc = c, l
	return &Request{ext: &requestExt{pers: p}}, nil
}

// liveRef returns c's liveComm, made on first use.
func (c *Comm) liveRef() *liveComm {
	if l := c.live.Load(); l != nil {
		return l
	}
	l := &liveComm{}
	if !c.live.CompareAndSwap(nil, l) {
		return c.live.Load()
	}
	return l
}

// drop is a persistent request's Free: the last one after the
// communicator's Free releases it.
func (l *liveComm) drop() {
	l.mu.Lock()
	l.n--
	last := l.closed && l.n == 0
	l.mu.Unlock()
	if last {
		l.cur.Load().release()
	}
}

// handOver is Free of c, whose liveComm l is: with no live persistent
// request it reports false (Free releases c); else the requests go on
// over c's working parts, moved to a communicator of their own.
func (l *liveComm) handOver(c *Comm) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.n == 0 {
		return false
	}
	h := &Comm{t: c.t, members: c.members, exit: c.exit, world: c.world, clocks: c.clocks, calls: c.calls, cart: c.cart}
	h.coll.Store(c.coll.Load())
	h.nbc.Store(c.nbc.Load())
	h.ibarN.Store(c.ibarN.Load())
	l.cur.Store(h)
	return true
}

// Compare compares two communicators (MPI_Comm_compare): Ident for the same
// communicator, Congruent for different ones with the same members in the
// same order, Similar for the same members in another order, Unequal
// otherwise. Local. A nil communicator is Unequal to any.
func Compare(a, b *Comm) int {
	if a == nil || b == nil || a.t == nil || b.t == nil {
		return Unequal
	}
	if a == b {
		return Ident
	}
	switch a.Group().Compare(b.Group()) {
	case Ident:
		return Congruent
	case Similar:
		return Similar
	}
	return Unequal
}

// Self returns the communicator of this process alone (MPI_COMM_SELF),
// after Init; nil before. Collective calls on it return at once.
func Self() *Comm {
	process.Lock()
	defer process.Unlock()
	if process.world == nil {
		return nil
	}
	if process.self == nil {
		process.self = process.world.newSelf()
	}
	return process.self
}

// newSelf builds Self's communicator: a team of one over heap memory, with
// the world's job, directory and policies.
func (c *Comm) newSelf() *Comm {
	ts, err := team.NewLocal(1, c.t.Config())
	if err != nil {
		return nil
	}
	me := c.members[c.Rank()]
	s := &Comm{t: ts[0], members: []int{me}, exit: c.exit, world: c.world, self: true}
	return s
}

// CreateGroup makes the communicator of the ranks of g, in g's order,
// without the rest of c (MPI_Comm_create_group): collective over g's
// members only, who all pass the same group and tag (tag >= 0: ErrTag
// otherwise). A rank of c outside g gets nil and no error. g must be a
// subgroup of c's group (ErrGroup). A rank may make the calls of
// overlapping groups in any order, and, from several goroutines,
// concurrent calls that differ in c or tag (MPI 4.1 §7.4.2). A call
// matches the call of its group's rank 0 with the same c, group and tag:
// ranks that pass different tags (an erroneous program) wait for each
// other's call, which the launcher's deadlock watch reports.
func (c *Comm) CreateGroup(g *Group, tag int) (*Comm, error) {
	if err := c.check("CreateGroup"); err != nil {
		return nil, err
	}
	switch {
	case g == nil:
		return nil, fmt.Errorf("comm: CreateGroup on rank %d: nil group: %w", c.Rank(), ErrGroup)
	case tag < 0:
		return nil, fmt.Errorf("comm: CreateGroup on rank %d: tag %d is negative: %w", c.Rank(), tag, ErrTag)
	}
	if tr, err := g.TranslateRanks(seq(g.Size()), c.Group()); err != nil || slices.Contains(tr, Undefined) {
		return nil, fmt.Errorf("comm: CreateGroup on rank %d: the group is not a subgroup of the communicator's: %w", c.Rank(), ErrGroup)
	}
	me := g.Rank()
	if me == Undefined {
		return nil, nil
	}
	members := slices.Clone(g.members)
	h := fnv.New64a()
	for _, w := range members {
		_ = binary.Write(h, binary.LittleEndian, int64(w))
	}
	_ = binary.Write(h, binary.LittleEndian, c.t.Context()) // the same group over another c is another call
	key := h.Sum64()
	if me == 0 {
		entry, gen, claimErr := c.t.Claim(len(members))
		for _, w := range members[1:] {
			if err := c.t.Deliver(w, team.Message{Entry: entry, Gen: gen, Tag: int64(tag), Key: key}); err != nil {
				return nil, c.wrapWait("CreateGroup", err)
			}
		}
		if claimErr != nil {
			return nil, fmt.Errorf("comm: CreateGroup on rank %d: %w: %w", c.Rank(), claimErr, ErrOther)
		}
		return c.subComm("CreateGroup", entry, gen, 0, members)
	}
	m, err := c.collectGroup(key, int64(tag))
	switch {
	case err != nil:
		return nil, c.wrapWait("CreateGroup", err)
	case m.Entry < 0:
		return nil, fmt.Errorf("comm: CreateGroup on rank %d: the group's rank 0: %w: %w", c.Rank(), team.ErrNoEntry, ErrOther)
	}
	return c.subComm("CreateGroup", m.Entry, m.Gen, me, members)
}

// groupWait is this process's CreateGroup calls waiting for their rank
// 0's message in the rank's one mailbox: one of them at a time takes
// messages from it (collecting), and each message waits in msgs for the
// call it is for.
type groupWait struct {
	mu         sync.Mutex
	cond       sync.Cond // broadcast when msgs grows or err is set
	msgs       []team.Message
	collecting bool  // a call is taking a message from the mailbox
	err        error // the mailbox's error (the job ends): every call's
}

// collectGroup waits for the message of the CreateGroup whose group (and
// parent communicator) has key, and tag. A rank in several groups may get
// another group's message first: that group's rank 0 may call before
// this group's does, and the standard lets this rank make the calls in
// any order, or concurrently on several goroutines. Such a message is
// kept for the call that wants it. One leader's messages arrive in the
// order of its calls, so the first kept or new message with key and tag
// is this call's.
func (c *Comm) collectGroup(key uint64, tag int64) (team.Message, error) {
	g := &c.world.grp
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cond.L == nil { // set once, before any call waits on it
		g.cond.L = &g.mu
	}
	for {
		if i := slices.IndexFunc(g.msgs, func(m team.Message) bool { return m.Key == key && m.Tag == tag }); i >= 0 {
			m := g.msgs[i]
			g.msgs = slices.Delete(g.msgs, i, i+1)
			return m, nil
		}
		if g.err != nil {
			return team.Message{}, g.err
		}
		if g.collecting {
			g.cond.Wait()
			continue
		}
		g.collecting = true
		g.mu.Unlock()
		m, err := c.t.Collect()
		g.mu.Lock()
		g.collecting = false
		if err != nil {
			g.err = err
		} else {
			g.msgs = append(g.msgs, m)
		}
		g.cond.Broadcast()
	}
}

// subComm is the communicator of this rank over entry e.
func (c *Comm) subComm(call string, e int, gen uint32, rank int, members []int) (*Comm, error) {
	t, err := c.t.Sub(e, gen, rank, members)
	if err != nil {
		return nil, fmt.Errorf("comm: %s on rank %d: %v: %w", call, c.Rank(), err, ErrOther)
	}
	return &Comm{t: t, members: members, exit: c.exit, world: c.world}, nil
}
