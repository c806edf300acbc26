//go:build !mpi

package comm

import (
	"encoding/binary"
	"errors"
	"os"
	"runtime"

	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/shm"
	"golang.org/x/sys/unix"
)

// Single-copy transfers. A large Bcast or Allreduce between processes
// moves its data by process_vm_readv from the other ranks' own buffers:
// one copy across cores instead of two through the staging buffers, whose
// lines arrive dirty from the writer's cache. A rank publishes its process
// id and buffer addresses in its first round's inline bytes, with the
// buffers pinned (runtime.Pinner: a pinned object neither moves nor is
// freed, and a buffer that flows to Pin is never on a goroutine stack),
// and returns only once every reader has said it is done.
//
// Whether the kernel lets ranks read each other (same user, and no Yama
// ptrace_scope above 0) is probed once per communicator when its
// collective area is made; without it, the staging buffers carry
// everything. The choice is the same on every rank.

// The smallest payloads sent by single copy are format.SingleBcast and
// format.SingleAllreduce: below them the staging pipeline's rounds cost
// less than the system calls (bench/NOTES.md has the crossovers).

// singleOff turns single copy off (tests of the staging path).
var singleOff = false

// remoteBuf is what a rank publishes for single-copy readers: its process
// and up to two buffer addresses, in the first round's inline bytes.
type remoteBuf struct {
	pid        int32
	send, recv uint64
}

func (b remoteBuf) put(dst []byte) {
	binary.LittleEndian.PutUint32(dst[format.SinglePID:], uint32(b.pid))
	binary.LittleEndian.PutUint64(dst[format.SingleSend:], b.send)
	binary.LittleEndian.PutUint64(dst[format.SingleRecv:], b.recv)
}

func getRemoteBuf(src []byte) remoteBuf {
	return remoteBuf{pid: int32(binary.LittleEndian.Uint32(src[format.SinglePID:])),
		send: binary.LittleEndian.Uint64(src[format.SingleSend:]), recv: binary.LittleEndian.Uint64(src[format.SingleRecv:])}
}

// pinBytes pins the memory under b (if any) and returns its address.
func pinBytes(p *runtime.Pinner, b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	p.Pin(&b[0])
	return uint64(raw.Addr(b))
}

// readFault, when set (by tests), fails readRemote with its error.
var readFault error

// writeFaultIn, when positive (set by tests), fails the writeFaultIn-th
// writeRemote from then on, and every one after it, with
// errWriteFault.
var writeFaultIn int

var errWriteFault = errors.New("a write fault set by a test")

// writeRemote copies src to address dst of process pid
// (process_vm_writev), resuming after a partial write.
func writeRemote(pid int32, dst uint64, src []byte) error {
	if writeFaultIn > 0 {
		if writeFaultIn == 1 {
			return errWriteFault
		}
		writeFaultIn--
	}
	return shm.WriteProcess(int(pid), dst, src)
}

// readRemote copies len(dst) bytes at address src of process pid into dst
// (process_vm_readv), resuming after a partial read.
func readRemote(pid int32, dst []byte, src uint64) error {
	if readFault != nil {
		return readFault
	}
	return shm.ReadProcess(int(pid), dst, src)
}

// probeSingle finds out, collectively, whether every rank of c can read
// the next rank's memory: each publishes its pid and the address of a word
// holding it, reads its successor's, and all agree. Local (goroutine)
// communicators never use single copy.
func (c *Comm) probeSingle() (bool, error) {
	if c.t.Local() || c.Size() == 1 {
		return false, nil
	}
	word := []uint64{uint64(os.Getpid())}
	var pin runtime.Pinner
	defer pin.Unpin()
	mine := make([]byte, format.SingleLen)
	remoteBuf{pid: int32(os.Getpid()), send: pinBytes(&pin, raw.Bytes(word))}.put(mine)
	all, _, err := c.t.Exchange(mine, singleOff)
	if err != nil {
		return false, err
	}
	next := (c.Rank() + 1) % c.Size()
	rb := getRemoteBuf(all[next*format.SlotLen:])
	var got [8]byte
	failed := readRemote(rb.pid, got[:], rb.send) != nil || binary.LittleEndian.Uint64(got[:]) != uint64(rb.pid)
	first, err := c.t.Agree(failed || singleOff)
	runtime.KeepAlive(word)
	return err == nil && first < 0, err
}

// allowSingleCopy lets the other processes of this user read this rank's
// memory under Yama's ptrace_scope 1 (PR_SET_PTRACER, as Open MPI does for
// its single-copy path), unless the job turned single copy off. It
// reports whether point-to-point may try single copy; where the kernel
// still forbids it (Yama 2 or 3, seccomp), the first read fails and the
// messages of that peer go through shared memory.
func allowSingleCopy(on bool) bool {
	if !on {
		return false
	}
	// EINVAL: no Yama; the call is then not needed.
	_ = unix.Prctl(unix.PR_SET_PTRACER, unix.PR_SET_PTRACER_ANY, 0, 0, 0)
	return true
}
