package team

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/shm"
)

// inboxKey is where a local team publishes rank w's inbox.
func inboxKey(w int) uint64 { return 1<<62 | uint64(w) }

// NewInbox makes this rank's point-to-point inbox of total bytes and
// publishes it for the other ranks (PeerInbox). Local, called once, on the
// world's team, before the rank announces RankInit. Under shmrun it is a
// memfd, not populated (a ring's pages cost memory only once a sender
// touches them), whose descriptor goes in the rank's control line; in
// local mode a heap block. init writes its header.
func (t *Team) NewInbox(total int64, init func(mem []byte) error) ([]byte, error) {
	if t.local != nil {
		mem := shm.Bytes(make([]uint64, total/8))
		if err := init(mem); err != nil {
			return nil, err
		}
		t.Publish(inboxKey(t.rank), mem)
		return mem, nil
	}
	obj, err := shm.NewMemfd("shmrun-inbox", total, false)
	if err != nil {
		return nil, err
	}
	mem, err := obj.Map(total)
	if err == nil {
		err = init(mem)
	}
	if err != nil {
		if mem != nil {
			shm.Unmap(mem)
		}
		obj.Close()
		return nil, err
	}
	// The descriptor stays open for the life of the process: it is how the
	// other ranks open the inbox (OpenPeer).
	atomic.StoreUint32(t.ctl.RankInbox(t.rank), uint32(obj.FD()))
	return mem, nil
}

// PeerInbox maps world rank w's inbox (total bytes), waiting until w has
// published it, and returns it with w's process id (0 in local mode).
// check validates the header. Local to this rank; it fails with
// barrier.ErrAborted if the job ends while it waits.
func (t *Team) PeerInbox(w int, total int64, check func(mem []byte) error) ([]byte, int, error) {
	if t.local != nil {
		for {
			if mem, ok := t.Lookup(inboxKey(w)).([]byte); ok {
				return mem, 0, check(mem)
			}
			if atomic.LoadUint32(t.abort) != 0 {
				return nil, 0, barrier.ErrAborted
			}
			time.Sleep(50 * time.Microsecond)
		}
	}
	c := t.ctl
	for d := time.Microsecond; atomic.LoadUint32(c.RankState(w)) < format.RankInit; d = min(2*d, 10*time.Millisecond) {
		if atomic.LoadUint32(t.abort) != 0 {
			return nil, 0, barrier.ErrAborted
		}
		time.Sleep(d)
	}
	pid := int(atomic.LoadUint32(c.RankPID(w)))
	fd := int(atomic.LoadUint32(c.RankInbox(w)))
	obj, err := shm.OpenPeer(pid, fd, total)
	if err != nil {
		return nil, 0, fmt.Errorf("rank %d's inbox: %w", w, err)
	}
	defer obj.Close() // the mapping outlives the descriptor
	mem, err := obj.Map(total)
	if err != nil {
		return nil, 0, fmt.Errorf("rank %d's inbox: %w", w, err)
	}
	if err := check(mem); err != nil {
		shm.Unmap(mem)
		return nil, 0, fmt.Errorf("rank %d's inbox: %w", w, err)
	}
	return mem, pid, nil
}
