package team

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/shm"
)

// memfdPrefix starts the place rank 0 publishes for a memfd segment:
// "memfd:<pid>:<fd>". An object name never starts with it (names start
// with format.Prefix).
const memfdPrefix = "memfd:"

// MakeObject is rank 0's half of making a segment of total bytes shared by
// the team, of which at most backed will ever have pages (the rest is
// alignment padding nobody touches): a named object in the shm directory,
// or a memfd (Backing: always, or with BackingAuto when the directory has
// no room for it). It returns the object and the place the others open it
// by (OpenObject). With reserve, a segment whose backed bytes are beyond
// the directory's free space fails here (shm.ErrNoSpace), on every rank at
// once, before anyone fills the tmpfs. label names a memfd in
// /proc/<pid>/fd.
func (t *Team) MakeObject(total, backed int64, reserve bool, label string) (*shm.Object, string, error) {
	memfd := t.backing == format.BackingMemfd
	if t.backing == format.BackingAuto {
		if free := shm.FreeBytes(t.dir); free >= 0 && free < backed {
			memfd = true
		}
	}
	if !memfd {
		if reserve {
			if err := shm.CheckFree(t.dir, backed); err != nil {
				return nil, "", err
			}
		}
		name := format.ObjectName(t.job, format.NewObjectID())
		obj, err := shm.Create(t.dir, name, total)
		return obj, name, err
	}
	return newMemfd(total, backed, label)
}

// newMemfd makes a memfd segment of total bytes and the place the others
// open it by. A memfd escapes the shm directory's size limit but not the
// memory cgroup's, and a charge past that is an OOM kill: it is refused
// now (shm.ErrNoSpace).
func newMemfd(total, backed int64, label string) (*shm.Object, string, error) {
	if room := shm.CgroupRoom(); room >= 0 && backed > room {
		return nil, "", fmt.Errorf("a memfd segment of %d bytes (%d backed): the memory cgroup has room for %d more bytes (memory.max): %w", total, backed, room, shm.ErrNoSpace)
	}
	obj, err := shm.NewMemfd(label, total, false)
	if err != nil {
		return nil, "", err
	}
	return obj, fmt.Sprintf("%s%d:%d", memfdPrefix, os.Getpid(), obj.FD()), nil
}

// OpenObject is the other ranks' half: open the segment rank 0 published.
// A memfd is opened through /proc while rank 0 holds it (it must close its
// descriptor only after an agreement that follows every rank's open).
func OpenObject(dir, place string, total int64) (*shm.Object, error) {
	rest, ok := strings.CutPrefix(place, memfdPrefix)
	if !ok {
		return shm.Open(dir, place, total)
	}
	var pid, fd int
	if n, err := fmt.Sscanf(rest, "%d:%d", &pid, &fd); n != 2 || err != nil || pid <= 0 || fd < 0 {
		return nil, fmt.Errorf("segment at %q: not a memfd place: %w", place, shm.ErrCorrupt)
	}
	return shm.OpenPeer(pid, fd, total)
}

// Area is a segment the whole team maps for its own use (a communicator's
// collective area): a memfd made, reserved and initialized by rank 0, and
// opened through /proc, mapped and checked by the others while rank 0 waits
// for them. Collective. Like the control segment it is the runtime's own
// memory, not the program's: it never takes a name or an inode in the shm
// directory (a full directory stays the program's windows' concern) and
// lives exactly as long as its mappings.
//
// init writes the header into rank 0's fresh mapping; check validates it
// on the others. Every rank gets the same outcome: the area, or an error
// (the failing rank's own, or one naming it). In the goroutine test mode
// the area is a page-aligned heap block, with the header written the same
// way.
func (t *Team) Area(total int64, label string, init, check func(mem []byte) error) ([]byte, error) {
	if t.local != nil {
		return t.localArea(total, init)
	}
	var obj *shm.Object
	var mem []byte
	fail := func(err error) ([]byte, error) {
		if mem != nil {
			shm.Unmap(mem)
		}
		if obj != nil {
			if t.rank == 0 {
				obj.Unlink()
			}
			obj.Close()
		}
		return nil, err
	}
	var err error
	var name string
	if t.rank == 0 {
		obj, name, err = newMemfd(total, total, label)
		if err == nil {
			mem, err = obj.Map(total)
		}
		if err == nil {
			err = obj.Populate(t.dir, mem, 0, total)
		}
		if err == nil {
			err = init(mem)
		}
	}
	var slot [format.SlotLen]byte
	copy(slot[:], name)
	slots, first, xerr := t.Exchange(slot[:], err != nil)
	if xerr != nil {
		return fail(xerr)
	}
	if first >= 0 {
		if err == nil {
			err = fmt.Errorf("rank %d could not make the segment", first)
		}
		return fail(err)
	}
	if t.rank != 0 {
		place := string(bytes.TrimRight(slots[:format.SlotLen], "\x00"))
		obj, err = OpenObject(t.dir, place, total)
		if err == nil {
			mem, err = obj.Map(total)
		}
		if err == nil {
			err = check(mem)
		}
	}
	first, aerr := t.Agree(err != nil)
	if obj != nil {
		obj.Close()
		obj = nil
	}
	if aerr != nil {
		return fail(aerr)
	}
	if first >= 0 {
		if err == nil {
			err = fmt.Errorf("rank %d could not map the segment", first)
		}
		return fail(err)
	}
	return mem, nil
}

func (t *Team) localArea(total int64, init func([]byte) error) ([]byte, error) {
	key := t.NextSeq()
	var err error
	if t.rank == 0 {
		heap := make([]uint64, (total+shm.PageSize)/8)
		b := raw.Bytes(heap)
		skip := (shm.PageSize - int64(raw.Addr(b))%shm.PageSize) % shm.PageSize
		mem := b[skip : skip+total : skip+total]
		if err = init(mem); err == nil {
			t.Publish(key, mem)
		}
	}
	first, aerr := t.Agree(err != nil)
	if aerr != nil {
		return nil, aerr
	}
	if first >= 0 {
		if err == nil {
			err = fmt.Errorf("rank %d could not make the area", first)
		}
		return nil, err
	}
	mem := t.Lookup(key).([]byte)
	if _, aerr := t.Agree(false); aerr != nil {
		return nil, aerr
	}
	if t.rank == 0 {
		t.Forget(key)
	}
	return mem, nil
}
