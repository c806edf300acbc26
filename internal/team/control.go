// Package team holds what the ranks of a job share: the job's control
// segment (written by the launcher, attached by comm.Init), and the Team —
// a set of ranks with a barrier, an abort word and small exchange slots —
// that comm and win build their collective calls on. It is internal: its
// layout is documented in docs/FORMAT.md, its API is not a promise.
package team

import (
	"encoding/binary"
	"fmt"

	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/shm"
)

// Control segment layout (after the common fixed header, see shm.Header):
//
//	40  uint32 number of ranks
//	44  uint32 slot length in bytes
//	48  [64]byte job id, zero-padded ASCII
//	page 1, one cache line each:
//	  abort line:   uint32 abort state (0 running, 1 launcher abort, 2 a rank called Abort)
//	                uint32 abort code, uint32 rank that called Abort
//	  world barrier line (barrier.Barrier)
//	  per rank:     uint32 state (RankStarted/RankInit/RankFinalized), uint32 pid
//	  exchange slots: 2 parities x n ranks x SlotLen bytes
const (
	offNRanks  = shm.FixedHeaderLen
	offSlotLen = offNRanks + 4
	offJob     = offSlotLen + 4
	maxJobLen  = 64

	// SlotLen is the bytes one rank may publish in one exchange round.
	SlotLen = 256
)

// Abort states.
const (
	AbortNone     = 0
	AbortLauncher = 1 // a rank failed or the launcher was signalled
	AbortByRank   = 2 // a rank called comm.Abort
)

// Rank states, written by the rank, read by the launcher.
const (
	RankStarted   = 0
	RankInit      = 1
	RankFinalized = 2
)

// ControlLayout is where things are in a control segment of n ranks.
type ControlLayout struct {
	N                                       int
	AbortOff, BarrierOff, RanksOff, SlotOff int64
	Total                                   int64
}

// LayoutFor returns the control layout for n ranks.
func LayoutFor(n int) ControlLayout {
	cl := int64(shm.CacheLine)
	l := ControlLayout{N: n, AbortOff: shm.PageSize}
	l.BarrierOff = l.AbortOff + cl
	l.RanksOff = l.BarrierOff + cl
	l.SlotOff = l.RanksOff + int64(n)*cl
	l.Total, _ = shm.AlignUp(l.SlotOff+2*int64(n)*SlotLen, shm.PageSize)
	return l
}

// MaxRanks bounds the ranks of one job (the control segment stays small).
const MaxRanks = 1<<16 - 1

// Control is a mapped control segment.
type Control struct {
	Mem    []byte
	Layout ControlLayout
	Job    string
	obj    *shm.Object
}

// NewControl creates the control segment for a job of n ranks as a memfd
// and writes its header. The launcher passes the fd to every rank as an
// explicit extra file; the memfd itself is close-on-exec, so no other child
// of the launcher's process (nor a rank, under its original number) inherits
// it.
func NewControl(job string, n int) (*Control, error) {
	if n < 1 || n > MaxRanks {
		return nil, fmt.Errorf("control: %d ranks (1..%d)", n, MaxRanks)
	}
	if !shm.ValidJobID(job) {
		return nil, fmt.Errorf("control: bad job id %q", job)
	}
	l := LayoutFor(n)
	obj, err := shm.NewMemfd("shmrun-control", l.Total, false)
	if err != nil {
		return nil, err
	}
	mem, err := obj.Map(l.Total)
	if err != nil {
		obj.Close()
		return nil, err
	}
	le := binary.LittleEndian
	le.PutUint32(mem[offNRanks:], uint32(n))
	le.PutUint32(mem[offSlotLen:], SlotLen)
	copy(mem[offJob:offJob+maxJobLen], job)
	if err := shm.WriteHeader(mem, shm.Header{Kind: shm.KindControl, HeaderLen: uint64(shm.PageSize), TotalSize: uint64(l.Total)}); err != nil {
		shm.Unmap(mem)
		obj.Close()
		return nil, err
	}
	return &Control{Mem: mem, Layout: l, Job: job, obj: obj}, nil
}

// FD is the control memfd's descriptor (for the launcher to pass on).
func (c *Control) FD() int { return c.obj.FD() }

// AttachControl maps the control segment inherited on fd and checks that it
// is a control segment of this format for job with n ranks.
func AttachControl(fd int, job string, n int) (*Control, error) {
	obj, err := shm.FromFD(fd, shm.FixedHeaderLen)
	if err != nil {
		return nil, fmt.Errorf("control segment: %w", err)
	}
	size, err := obj.Size()
	if err != nil {
		return nil, fmt.Errorf("control segment: %w", err)
	}
	if size < shm.PageSize {
		return nil, fmt.Errorf("control segment: fd %d is %d bytes: %w", fd, size, shm.ErrTruncated)
	}
	mem, err := obj.Map(size)
	if err != nil {
		return nil, fmt.Errorf("control segment: %w", err)
	}
	c, err := decodeControl(mem, size, job, n)
	if err != nil {
		shm.Unmap(mem)
		return nil, err
	}
	c.obj = obj
	// Children of the rank (a program it execs) must not inherit the fd.
	if err := obj.SetCloseOnExec(); err != nil {
		shm.Unmap(mem)
		return nil, fmt.Errorf("control segment: %w", err)
	}
	return c, nil
}

func decodeControl(mem []byte, size int64, job string, n int) (*Control, error) {
	if _, err := shm.ReadHeader(mem, shm.KindControl, size); err != nil {
		return nil, fmt.Errorf("control segment: %w", err)
	}
	le := binary.LittleEndian
	gotN := int(le.Uint32(mem[offNRanks:]))
	if gotN != n {
		return nil, fmt.Errorf("control segment: made for %d ranks, SHMRUN_SIZE says %d: %w", gotN, n, shm.ErrCorrupt)
	}
	if sl := le.Uint32(mem[offSlotLen:]); sl != SlotLen {
		return nil, fmt.Errorf("control segment: slot length %d, want %d: %w", sl, SlotLen, shm.ErrVersion)
	}
	jb := mem[offJob : offJob+maxJobLen]
	end := 0
	for end < len(jb) && jb[end] != 0 {
		end++
	}
	if string(jb[:end]) != job {
		return nil, fmt.Errorf("control segment: belongs to job %q, SHMRUN_JOB says %q: %w", jb[:end], job, shm.ErrCorrupt)
	}
	l := LayoutFor(n)
	if size < l.Total {
		return nil, fmt.Errorf("control segment: %d bytes, %d ranks need %d: %w", size, n, l.Total, shm.ErrTruncated)
	}
	return &Control{Mem: mem, Layout: l, Job: job}, nil
}

// AbortWord is the job's abort state word.
func (c *Control) AbortWord() *uint32 { return raw.Uint32At(c.Mem, c.Layout.AbortOff) }

// AbortCode is the exit code asked by comm.Abort.
func (c *Control) AbortCode() *uint32 { return raw.Uint32At(c.Mem, c.Layout.AbortOff+4) }

// AbortRank is the rank that called comm.Abort.
func (c *Control) AbortRank() *uint32 { return raw.Uint32At(c.Mem, c.Layout.AbortOff+8) }

// BarrierLine is the world barrier's line.
func (c *Control) BarrierLine() []byte {
	return c.Mem[c.Layout.BarrierOff : c.Layout.BarrierOff+barrier.LineLen]
}

// RankState is rank r's state word.
func (c *Control) RankState(r int) *uint32 {
	return raw.Uint32At(c.Mem, c.Layout.RanksOff+int64(r)*shm.CacheLine)
}

// RankPID is rank r's pid word.
func (c *Control) RankPID(r int) *uint32 {
	return raw.Uint32At(c.Mem, c.Layout.RanksOff+int64(r)*shm.CacheLine+4)
}

// Slots returns the exchange slots of parity p (0 or 1), n*SlotLen bytes.
func (c *Control) Slots(p int) []byte {
	n := int64(c.Layout.N)
	off := c.Layout.SlotOff + int64(p)*n*SlotLen
	return c.Mem[off : off+n*SlotLen]
}

// Close unmaps the segment and closes the fd. Safe twice.
func (c *Control) Close() error {
	if c == nil || c.Mem == nil {
		return nil
	}
	err := shm.Unmap(c.Mem)
	c.Mem = nil
	if cerr := c.obj.Close(); err == nil {
		err = cerr
	}
	return err
}
