package team_test

import (
	"encoding/binary"
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/team"
	"github.com/shmrun/shmrun/shm"
)

// FuzzAttachControl: whatever bytes a rank finds behind its control
// descriptor, AttachControl never panics or faults; it refuses them with an
// error of the shm header family, or accepts a segment made for exactly the
// job and rank count the rank was told, large enough for every accessor.
// With reseal set, the fuzzer's n and job are written into the header and it
// is sealed with a valid checksum, so the control-specific checks (rank
// count, slot length, job id, size against the layout) are reached too; such
// a segment is accepted exactly when it is large enough for its layout.
func FuzzAttachControl(f *testing.F) {
	page := int(shm.PageSize)
	real := func(job string, n int) []byte {
		c, err := team.NewControl(job, n)
		if err != nil {
			f.Fatal(err)
		}
		defer c.Close()
		return append([]byte(nil), c.Mem...)
	}
	f.Add(real("ab12", 2), "ab12", uint16(2), false)
	f.Add(real("ab12", 2), "ab12", uint16(3), false)
	f.Add(real("ab12", 2), "ab13", uint16(2), false)
	f.Add(real("0123456789abcdef0123456789abcdef", 5), "0123456789abcdef0123456789abcdef", uint16(5), false)
	f.Add(real("ab12", 1)[:page], "ab12", uint16(1), true)
	f.Add(make([]byte, page), "ab12", uint16(1), true)
	f.Add(make([]byte, 3*page), "", uint16(0), true)
	f.Add([]byte("SHMRUN\x00\x01"), "ab", uint16(1), false)
	f.Fuzz(func(t *testing.T, data []byte, job string, n16 uint16, reseal bool) {
		n := int(n16)
		if len(data) > 1<<17 { // enough for the layout of a few hundred ranks
			return
		}
		mem := append([]byte(nil), data...)
		sealed := false
		if reseal && len(mem) >= page {
			le := binary.LittleEndian
			le.PutUint32(mem[format.CtlRanks:], uint32(n))
			le.PutUint32(mem[format.CtlSlotLen:], format.SlotLen)
			jb := mem[format.CtlJob : format.CtlJob+format.CtlJobLen]
			clear(jb)
			copy(jb, job)
			h := shm.Header{Kind: shm.KindControl, HeaderLen: uint64(page), TotalSize: uint64(len(mem))}
			if err := shm.WriteHeader(mem, h); err != nil {
				t.Fatalf("WriteHeader(%+v): %v", h, err)
			}
			sealed = true
		}
		fd, err := unix.MemfdCreate("fuzz-control", unix.MFD_CLOEXEC)
		if err != nil {
			t.Fatal(err)
		}
		if len(mem) > 0 {
			if _, err := unix.Pwrite(fd, mem, 0); err != nil {
				unix.Close(fd)
				t.Fatal(err)
			}
		}
		c, err := team.AttachControl(fd, job, n)
		if err != nil {
			unix.Close(fd)
			if !errors.Is(err, shm.ErrBadMagic) && !errors.Is(err, shm.ErrVersion) && !errors.Is(err, shm.ErrKind) &&
				!errors.Is(err, shm.ErrHeaderSize) && !errors.Is(err, shm.ErrTruncated) && !errors.Is(err, shm.ErrCorrupt) {
				t.Fatalf("AttachControl refused with %v: no shm header error", err)
			}
			fits := len(job) <= format.CtlJobLen && format.ValidJobID(job) && n >= 1 && n <= format.MaxRanks &&
				int64(len(mem)) >= team.LayoutFor(n).Total
			if sealed && fits {
				t.Fatalf("AttachControl refused a sealed control segment of %d bytes for job %q, %d ranks: %v", len(mem), job, n, err)
			}
			return
		}
		defer c.Close()
		if c.Layout.N != n || c.Job != job || n < 1 || n > format.MaxRanks {
			t.Fatalf("accepted a segment as job %q with %d ranks (layout %d), asked for job %q, %d ranks", c.Job, c.Layout.N, c.Layout.N, job, n)
		}
		if int64(len(c.Mem)) < c.Layout.Total {
			t.Fatalf("accepted %d bytes for a layout of %d", len(c.Mem), c.Layout.Total)
		}
		// Every accessor stays inside the mapping.
		_ = *c.AbortWord() + *c.AbortCode() + *c.AbortRank() + *c.WakeWord() + *c.RankState(n - 1) + *c.RankPID(n - 1)
		_ = c.BarrierLine()[0]
		_ = c.Slots(1)[len(c.Slots(1))-1]
	})
}
