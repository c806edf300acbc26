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
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/shm"
)

// The control segment's format (header fields, lines, states, ControlLayout)
// is package format's (internal/format).

// LayoutFor returns the control layout for n ranks on this machine.
func LayoutFor(n int) format.ControlLayout { return format.NewControlLayout(n, shm.PageSize) }

// Control is a mapped control segment.
type Control struct {
	Mem    []byte
	Layout format.ControlLayout
	Job    string
	obj    *shm.Object
	// watched: barrier.Watch writes to this mapping (Team.WatchWaits).
	watched bool
}

// NewControl creates the control segment for a job of n ranks as a memfd
// and writes its header. The launcher passes the fd to every rank as an
// explicit extra file; the memfd itself is close-on-exec, so no other child
// of the launcher's process (nor a rank, under its original number) inherits
// it.
func NewControl(job string, n int) (*Control, error) {
	if n < 1 || n > format.MaxRanks {
		return nil, fmt.Errorf("control: %d ranks (1..%d)", n, format.MaxRanks)
	}
	if !format.ValidJobID(job) {
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
	le.PutUint32(mem[format.CtlRanks:], uint32(n))
	le.PutUint32(mem[format.CtlSlotLen:], format.SlotLen)
	copy(mem[format.CtlJob:format.CtlJob+format.CtlJobLen], job)
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
	// The header's own zeros would match a zero rank count and an empty
	// job id: refuse what no launcher makes before comparing.
	if n < 1 || n > format.MaxRanks || !format.ValidJobID(job) || len(job) > format.CtlJobLen {
		return nil, fmt.Errorf("control segment: asked for job %q with %d ranks (a job id of 1..%d hex digits, 1..%d ranks): %w", job, n, format.CtlJobLen, format.MaxRanks, shm.ErrCorrupt)
	}
	le := binary.LittleEndian
	gotN := int(le.Uint32(mem[format.CtlRanks:]))
	if gotN != n {
		return nil, fmt.Errorf("control segment: made for %d ranks, %s says %d: %w", gotN, format.EnvSize, n, shm.ErrCorrupt)
	}
	if sl := le.Uint32(mem[format.CtlSlotLen:]); sl != format.SlotLen {
		return nil, fmt.Errorf("control segment: slot length %d, want %d: %w", sl, format.SlotLen, shm.ErrVersion)
	}
	jb := mem[format.CtlJob : format.CtlJob+format.CtlJobLen]
	end := 0
	for end < len(jb) && jb[end] != 0 {
		end++
	}
	if string(jb[:end]) != job {
		return nil, fmt.Errorf("control segment: belongs to job %q, %s says %q: %w", jb[:end], format.EnvJob, job, shm.ErrCorrupt)
	}
	l := LayoutFor(n)
	if size < l.Total {
		return nil, fmt.Errorf("control segment: %d bytes, %d ranks need %d: %w", size, n, l.Total, shm.ErrTruncated)
	}
	return &Control{Mem: mem, Layout: l, Job: job}, nil
}

// AbortWord is the job's abort state word.
func (c *Control) AbortWord() *uint32 {
	return raw.Uint32At(c.Mem, c.Layout.AbortOff+format.AbortState)
}

// AbortCode is the exit code asked by comm.Abort.
func (c *Control) AbortCode() *uint32 { return raw.Uint32At(c.Mem, c.Layout.AbortOff+format.AbortCode) }

// AbortRank is the rank that called comm.Abort.
func (c *Control) AbortRank() *uint32 { return raw.Uint32At(c.Mem, c.Layout.AbortOff+format.AbortRank) }

// WakeWord is the futex word that wakes every waiter of the world barrier
// (after the abort word is set, so that they see it).
func (c *Control) WakeWord() *uint32 { return raw.Uint32At(c.Mem, c.Layout.WakeOff) }

// BarrierLine is the world barrier's line.
func (c *Control) BarrierLine() []byte {
	return c.Mem[c.Layout.BarrierOff : c.Layout.BarrierOff+barrier.LineLen]
}

// RankState is rank r's state word.
func (c *Control) RankState(r int) *uint32 {
	return raw.Uint32At(c.Mem, c.Layout.RankOff(r)+format.RankState)
}

// RankPID is rank r's pid word.
func (c *Control) RankPID(r int) *uint32 {
	return raw.Uint32At(c.Mem, c.Layout.RankOff(r)+format.RankPID)
}

// RankInbox is rank r's inbox descriptor word.
func (c *Control) RankInbox(r int) *uint32 {
	return raw.Uint32At(c.Mem, c.Layout.RankOff(r)+format.RankInbox)
}

// RankWord is the uint32 word at offset off (a Rank* constant) of rank
// r's line.
func (c *Control) RankWord(r int, off int64) *uint32 {
	return raw.Uint32At(c.Mem, c.Layout.RankOff(r)+off)
}

// Slots returns the exchange slots of parity p (0 or 1), n*format.SlotLen bytes.
func (c *Control) Slots(p int) []byte {
	off := c.Layout.SlotsOff(p)
	return c.Mem[off : off+int64(c.Layout.N)*format.SlotLen]
}

// Close unmaps the segment and closes the fd. Safe twice.
func (c *Control) Close() error {
	if c == nil || c.Mem == nil {
		return nil
	}
	if c.watched {
		barrier.Watch = nil
	}
	err := shm.Unmap(c.Mem)
	c.Mem = nil
	if cerr := c.obj.Close(); err == nil {
		err = cerr
	}
	return err
}
