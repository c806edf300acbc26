package team

import (
	"fmt"
	"sync/atomic"

	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/raw"
)

// Communicators other than the world live in the control segment's table
// of format.MaxComms entries. An entry is claimed by one rank (the new
// communicator's rank 0) with a compare-and-swap of its state word, set up
// (members, departed count, barrier line zeroed) and then published to the
// other members through an exchange of the parent team, whose barrier orders
// the set-up before their first use. It is given back by the last member to
// leave it: every member's Release adds one to the departed count after the
// member's last collective on the team, so when the count reaches the
// member count nobody touches the entry any more, and that member clears it
// and stores CommFree.

// ErrNoEntry is a claim that found every entry of the table in use.
var ErrNoEntry = fmt.Errorf("all %d communicator entries of the job are in use (free communicators no longer needed)", format.MaxComms)

func (t *Team) word(e int, field int64) *uint32 {
	return raw.Uint32At(t.cm.Mem, t.cm.Layout.CommEntryOff(e)+field)
}

// Claim takes a free entry for a communicator of n members and sets it up;
// it returns the entry and its claim number (for context ids and keys).
func (t *Team) Claim(n int) (entry int, gen uint32, err error) {
	for e := range format.MaxComms {
		if !atomic.CompareAndSwapUint32(t.word(e, format.CommState), format.CommFree, format.CommUsed) {
			continue
		}
		gen = atomic.AddUint32(t.word(e, format.CommGen), 1)
		atomic.StoreUint32(t.word(e, format.CommMembers), uint32(n))
		atomic.StoreUint32(t.word(e, format.CommDeparted), 0)
		line := t.cm.Layout.CommEntryOff(e) + format.Line
		for off := int64(0); off < format.Line; off += 8 {
			atomic.StoreUint64(raw.Uint64At(t.cm.Mem, line+off), 0)
		}
		return e, gen, nil
	}
	return -1, 0, ErrNoEntry
}

// Unclaim gives back an entry that Claim took but no member used (the
// collective that wanted it failed elsewhere).
func (t *Team) Unclaim(e int) { atomic.StoreUint32(t.word(e, format.CommState), format.CommFree) }

// Sub returns this rank's team over entry e (claimed as gen), in which it
// is rank of the members listed (world ranks, in rank order). It holds one
// reference (Hold, Release).
func (t *Team) Sub(e int, gen uint32, rank int, members []int) (*Team, error) {
	if e < 0 || e >= format.MaxComms || rank < 0 || rank >= len(members) {
		return nil, fmt.Errorf("team: entry %d, rank %d of %d", e, rank, len(members))
	}
	if got := atomic.LoadUint32(t.word(e, format.CommMembers)); got != uint32(len(members)) {
		return nil, fmt.Errorf("team: entry %d holds %d members, want %d", e, got, len(members))
	}
	off := t.cm.Layout.CommEntryOff(e)
	n, slotLen := int64(len(members)), int64(format.SlotLen)
	slots0 := off + 2*format.Line
	slots1 := slots0 + int64(t.cm.Layout.N)*slotLen
	s := &Team{rank: rank, size: len(members), job: t.job, dir: t.dir, ctl: t.ctl, cm: t.cm, abort: t.abort,
		policy: t.policy, local: t.local, check: t.check, backing: t.backing,
		entry: e, members: members, keyBase: (uint64(gen)<<8 | uint64(e+1)) << 32,
		slots: [2][]byte{t.cm.Mem[slots0 : slots0+n*slotLen], t.cm.Mem[slots1 : slots1+n*slotLen]}}
	var err error
	if s.bar, err = barrier.New(t.cm.Mem[off+format.Line:off+2*format.Line], s.size, t.abort, t.policy); err != nil {
		return nil, err
	}
	s.refs.Store(1)
	return s, nil
}

// Hold adds a holder of the team in this process (a window built on it).
func (t *Team) Hold() { t.refs.Add(1) }

// Release drops a holder; after this process's last holder it departs the
// entry, and the last member to depart gives the entry back. The world's
// team is never given back. Call it only after the holder's last collective
// call on the team.
func (t *Team) Release() {
	if t.entry < 0 || t.refs.Add(-1) != 0 {
		return
	}
	for _, f := range t.onRelease {
		f()
	}
	if atomic.AddUint32(t.word(t.entry, format.CommDeparted), 1) == uint32(t.size) {
		atomic.StoreUint32(t.word(t.entry, format.CommState), format.CommFree)
	}
}

// OnRelease registers f to run when this process's last holder of the
// team releases it (the world's team is never released): what the
// communicator mapped for itself is unmapped there.
func (t *Team) OnRelease(f func()) { t.onRelease = append(t.onRelease, f) }

// WorldRank is the world rank of team rank r.
func (t *Team) WorldRank(r int) int {
	if t.members == nil {
		return r
	}
	return t.members[r]
}

// FreeEntries counts the free entries of the communicator table (for tests
// and diagnostics: a snapshot, other ranks may be claiming).
func (t *Team) FreeEntries() int {
	n := 0
	for e := range format.MaxComms {
		if atomic.LoadUint32(t.word(e, format.CommState)) == format.CommFree {
			n++
		}
	}
	return n
}

// Entry is the team's communicator table entry (-1: the world).
func (t *Team) Entry() int { return t.entry }

// Context is the team's message context: the entry + 1 and its claim
// number (0 for the world), the same on every member and different from
// every other live communicator's.
func (t *Team) Context() uint32 { return uint32(t.keyBase >> 32) }

// A mailbox is one line per world rank: the rank 0 of a group making a
// communicator without its parent (comm.CreateGroup) writes the entry it
// claimed into each other member's mailbox and marks it full; the owner
// waits for full, reads, and marks it empty, which lets the next message
// in. Both sides ring the line's event, so whoever waits on it wakes.
type mailbox struct {
	state, entry, gen *uint32
	tag, key          *uint64
	ev                barrier.Event
}

// Message is what CreateGroup's rank 0 hands a member: the entry (-1: the
// claim failed), its claim number, and the tag and group key of the call,
// which the member checks against its own.
type Message struct {
	Entry int
	Gen   uint32
	Tag   int64
	Key   uint64
}

func (t *Team) mailbox(world int) mailbox {
	off := t.cm.Layout.MboxLineOff(world)
	w32 := func(f int64) *uint32 { return raw.Uint32At(t.cm.Mem, off+f) }
	w64 := func(f int64) *uint64 { return raw.Uint64At(t.cm.Mem, off+f) }
	return mailbox{state: w32(format.MboxState), entry: w32(format.MboxEntry), gen: w32(format.MboxGen),
		tag: w64(format.MboxTag), key: w64(format.MboxKey),
		ev: barrier.Event{Seq: w32(format.MboxSeq), Sleepers: w32(format.MboxSleepers)}}
}

// Deliver writes m into world rank w's mailbox, waiting while it holds an
// earlier message. It returns barrier.ErrAborted if the job ends meanwhile.
func (t *Team) Deliver(w int, m Message) error {
	mb := t.mailbox(w)
	// Claim the line: leaders of several groups, in several processes or
	// goroutines, may write to one member at once.
	claimed := false
	claim := func() bool {
		claimed = claimed || atomic.CompareAndSwapUint32(mb.state, format.MboxEmpty, format.MboxBusy)
		return claimed
	}
	if err := mb.ev.Await(t.abort, t.policy, claim); err != nil {
		return err
	}
	atomic.StoreUint32(mb.entry, uint32(int32(m.Entry)))
	atomic.StoreUint32(mb.gen, m.Gen)
	atomic.StoreUint64(mb.tag, uint64(m.Tag))
	atomic.StoreUint64(mb.key, m.Key)
	atomic.StoreUint32(mb.state, format.MboxFull)
	mb.ev.Notify()
	return nil
}

// Collect waits for a message in this rank's mailbox, takes it and empties
// the mailbox. It returns barrier.ErrAborted if the job ends meanwhile.
func (t *Team) Collect() (Message, error) {
	mb := t.mailbox(t.WorldRank(t.rank))
	full := func() bool { return atomic.LoadUint32(mb.state) == format.MboxFull }
	if err := mb.ev.Await(t.abort, t.policy, full); err != nil {
		return Message{}, err
	}
	m := Message{Entry: int(int32(atomic.LoadUint32(mb.entry))), Gen: atomic.LoadUint32(mb.gen),
		Tag: int64(atomic.LoadUint64(mb.tag)), Key: atomic.LoadUint64(mb.key)}
	atomic.StoreUint32(mb.state, format.MboxEmpty)
	mb.ev.Notify()
	return m, nil
}
