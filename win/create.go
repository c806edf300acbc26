//go:build !mpi

package win

import (
	"encoding/binary"
	"fmt"
	"os"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/heap"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/shm"
)

// Create makes a window over memory the ranks already have (MPI_Win_create):
// collective over c; each rank exposes mem (its own; nil or empty exposes
// nothing, and lengths may differ) with disp unit dispUnit (> 0). The
// window's segment holds only its synchronization block; the memory stays
// where it is, and how the other ranks reach it depends on what it is:
//
//   - Memory from comm.AllocMem, or inside another window of the job (a
//     slice of Local or SharedQuery of any window but a dynamic one): every
//     rank maps it (the window it came from may be freed first: the memory
//     stays mapped while a window uses it), so RMA on it costs
//     what it costs on a window made by Allocate (copies, lock-free
//     accumulates), and SharedQuery returns it, as MPI 4.1 allows.
//   - Any other memory (a Go slice from make): it stays private to its
//     owner. Put and Get reach it by process_vm_writev/readv, one system
//     call each; every accumulate on it (the owner's own included) takes a
//     lock in the window's sync block, reads the target range, combines and
//     writes it back, so accumulates stay atomic per element with each other
//     and passive target needs nothing from the owner, who may be
//     computing. SharedQuery gives size 0 and no bytes for it (except to
//     its owner). While a Put is in flight, the owner reading the same
//     bytes may see a partly written element: a conflicting access, which
//     the standard leaves undefined anyway.
//
// Every synchronization mode works on every kind of memory. mem stays
// pinned (runtime.Pinner) and referenced by the window until Free: other
// processes write it by address. The memory must not hold Go pointers
// (it is bytes; a typed slice converted to bytes must be of pointer-free
// elements). Where the kernel forbids one process to reach another's memory
// (Yama ptrace_scope 2 or 3, or a job run with --no-single-copy under Yama
// ptrace_scope 1), Create over private memory fails at once, on every rank,
// with an error naming comm.AllocMem as the way out; never later, in an RMA
// call.
//
// Info keys as for Allocate, where they apply (same_size, same_disp_unit,
// no_locks, accumulate_ordering, accumulate_ops,
// mpi_accumulate_granularity). Attr reports FlavorCreate and the caller's
// mem as Base. The memory is not reserved or zeroed by Create: it is the
// caller's, as it was.
func Create(c *comm.Comm, mem []byte, dispUnit int, info Info) (*Win, error) {
	w, err := allocate(c, 0, 1, info, FlavorCreate) // the communicator's agreement first, as every creation
	if err != nil {
		return nil, err
	}
	if err := w.expose(mem, dispUnit); err != nil {
		w.dispose()
		return nil, err
	}
	return w, nil
}

// Slot of the Create exchange: what each rank tells the others about the
// memory it exposes.
const (
	cSize     = 0  // uint64 bytes
	cDispUnit = 8  // uint64
	cKind     = 16 // uint32 memEmpty, memShared, memPrivate
	cPID      = 20 // uint32
	cAddr     = 24 // uint64 address in the owner
	cFD       = 32 // uint32 descriptor of the shared object in the owner
	cIno      = 40 // uint64 its inode
	cFileOff  = 48 // uint64 where mem starts in it
	cFileSize = 56 // uint64 its size
)

const (
	memEmpty = iota
	memShared
	memPrivate
)

// extern is a Create window's view of the ranks' memory.
type extern struct {
	own  []byte // the caller's memory, as given
	hold *heap.Hold
	pin  *pinned
	rem  []remote // per rank
	maps [][]byte // mappings of other processes' objects, unmapped at Free
	// regs are those mappings that are in this process's registry, so
	// that a window made by Create over a slice of SharedQuery maps them
	// too; the registry unmaps them once no window holds them.
	regs  []uint64
	local bool // goroutine ranks: every address is this process's
}

// remote is a rank's memory as this process reaches it.
type remote struct {
	private bool // reached by process_vm_readv/writev (or, the owner's, directly)
	pid     int
	addr    uint64
	size    int
}

func (x *extern) release() error {
	x.pin.unpin()
	err := x.hold.Release()
	for _, m := range x.maps {
		if uerr := shm.Unmap(m); err == nil {
			err = uerr
		}
	}
	for _, id := range x.regs {
		if uerr := heap.Unregister(id); err == nil {
			err = uerr
		}
	}
	x.maps, x.regs, x.hold, x.own = nil, nil, nil, nil
	return err
}

// expose runs Create's rounds after the sync segment exists: each rank
// describes its memory, maps the others' shared memory and checks that it
// can reach their private memory; all agree on the outcome.
func (w *Win) expose(mem []byte, dispUnit int) error {
	x := &extern{own: mem, local: w.t.Local(), rem: make([]remote, w.size)}
	w.ext = x
	var localErr error
	if dispUnit <= 0 {
		localErr = errorf(ErrArg, "Create on rank %d: disp unit %d must be positive", w.rank, dispUnit)
	}
	kind := memEmpty
	var loc heap.Loc
	if len(mem) > 0 && localErr == nil {
		kind = memPrivate
		if l, h, ok := heap.Acquire(mem); ok { // FreeMem refuses it until Free
			x.hold = h
			if !x.local {
				kind, loc = memShared, l
			}
		}
		x.pin = pin(mem)
	}
	pid := os.Getpid()
	slots, err := exchange(w.t, localErr, func(b []byte) {
		le := binary.LittleEndian
		le.PutUint64(b[cSize:], uint64(len(mem)))
		le.PutUint64(b[cDispUnit:], uint64(dispUnit))
		le.PutUint32(b[cKind:], uint32(kind))
		le.PutUint32(b[cPID:], uint32(pid))
		le.PutUint64(b[cAddr:], uint64(raw.Addr(mem)))
		le.PutUint32(b[cFD:], uint32(loc.FD))
		le.PutUint64(b[cIno:], loc.Ino)
		le.PutUint64(b[cFileOff:], uint64(loc.Off))
		le.PutUint64(b[cFileSize:], uint64(loc.Size))
	})
	if err != nil {
		return err
	}
	sizes, units := make([]int64, w.size), make([]int64, w.size)
	for r := range w.size {
		s := slots[r*format.SlotLen:]
		sizes[r], units[r] = int64(binary.LittleEndian.Uint64(s[cSize:])), int64(binary.LittleEndian.Uint64(s[cDispUnit:]))
	}
	if err := checkSame(w.cfg, sizes, units, "Create"); err != nil {
		return err
	}
	var total int64
	for _, s := range sizes {
		total += s
	}
	w.obs.Exposed(sizes[w.rank], total, units[w.rank])
	for r := range w.size {
		if localErr = w.reach(r, slots[r*format.SlotLen:(r+1)*format.SlotLen], mem, loc); localErr != nil {
			break
		}
	}
	return agree(w.t, localErr)
}

// reach sets up parts[r] from r's slot: a mapping of its shared memory, or
// what is needed to reach its private memory, checked by a read.
func (w *Win) reach(r int, s, mine []byte, loc heap.Loc) error {
	le := binary.LittleEndian
	size, unit := int(le.Uint64(s[cSize:])), int64(le.Uint64(s[cDispUnit:]))
	kind := le.Uint32(s[cKind:])
	addr := le.Uint64(s[cAddr:])
	pid := int(le.Uint32(s[cPID:]))
	x := w.ext
	p := &w.parts[r]
	*p = part{dispUnit: unit}
	switch {
	case kind == memEmpty:
		return nil
	case x.local: // one process: every rank's memory is ours to touch
		data := raw.At(uintptr(addr), size)
		if r == w.rank {
			data = mine
		}
		amem, off := raw.Words(data)
		*p = part{data: data, amem: amem, off: off, dispUnit: unit, maxDisp: uint(int64(size) / unit)}
		return nil
	case kind == memShared && r == w.rank:
		*p = part{data: mine, amem: loc.Mem, off: loc.Off, dispUnit: unit, maxDisp: uint(int64(size) / unit)}
		return nil
	case kind == memShared:
		fd, ino := int(le.Uint32(s[cFD:])), le.Uint64(s[cIno:])
		fileOff, fileSize := int64(le.Uint64(s[cFileOff:])), int64(le.Uint64(s[cFileSize:]))
		m, obj, err := mapPeerObject(pid, fd, ino, fileSize)
		if err != nil {
			return errorf(ErrWin, "Create on rank %d: mapping rank %d's memory: %v", w.rank, r, err)
		}
		if id, rerr := heap.Register(m, obj); rerr == nil {
			x.regs = append(x.regs, id)
		} else {
			obj.Close()
			x.maps = append(x.maps, m)
		}
		if fileOff < 0 || fileOff+int64(size) > fileSize {
			return errorf(ErrWin, "Create on rank %d: rank %d's memory (%d bytes at %d) is outside its %d-byte object", w.rank, r, size, fileOff, fileSize)
		}
		*p = part{data: m[fileOff : fileOff+int64(size) : fileOff+int64(size)], amem: m, off: fileOff, dispUnit: unit, maxDisp: uint(int64(size) / unit)}
		return nil
	}
	x.rem[r] = remote{private: true, pid: pid, addr: addr, size: size}
	if r == w.rank {
		return nil
	}
	var probe [8]byte
	if err := shm.ReadProcess(pid, probe[:min(size, 8)], addr); err != nil {
		return errorf(ErrWin, "Create on rank %d: rank %d exposes private memory (not from comm.AllocMem), and this process may not reach it: %v; "+
			"the kernel forbids one process to read another's memory here (Yama ptrace_scope, or shmrun --no-single-copy): allocate the window's memory with comm.AllocMem, or use Allocate", w.rank, r, err)
	}
	return nil
}

// mapPeer maps the whole object fd of process pid, after checking that the
// descriptor still names the object the owner described (inode) and that
// it is as large as it said.
func mapPeer(pid, fd int, ino uint64, size int64) ([]byte, error) {
	m, obj, err := mapPeerObject(pid, fd, ino, size)
	if err == nil {
		obj.Close() // the mapping outlives the descriptor
	}
	return m, err
}

// mapPeerObject is mapPeer that also returns the open object.
func mapPeerObject(pid, fd int, ino uint64, size int64) ([]byte, *shm.Object, error) {
	obj, err := shm.OpenPeer(pid, fd, size)
	if err != nil {
		return nil, nil, err
	}
	got, err := obj.Ino()
	if err == nil && got != ino {
		err = fmt.Errorf("descriptor %d of process %d is inode %d, not %d: the object was closed meanwhile", fd, pid, got, ino)
	}
	var m []byte
	if err == nil {
		m, err = obj.Map(size)
	}
	if err != nil {
		obj.Close()
		return nil, nil, err
	}
	return m, obj, nil
}
