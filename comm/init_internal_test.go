//go:build !mpi

package comm

import (
	"encoding/binary"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/team"
	"github.com/shmrun/shmrun/shm"
)

const testJob = "0123456789abcdef0123456789abcdef"

// attach runs Init's attach path (what a rank does with its environment) on
// descriptor fd, for rank 0 of a job of size ranks.
func attach(fd, size int, job string) (*Comm, error) {
	return initFromEnv(envOf(rankVars(EnvJob, job, EnvRank, "0", EnvSize, strconv.Itoa(size), EnvControlFD, strconv.Itoa(fd))))
}

// memfdWith returns a memfd holding data, padded with zeros to size bytes.
func memfdWith(t *testing.T, data []byte, size int64) int {
	t.Helper()
	o, err := shm.NewMemfd("comm-test", size, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	if _, err := unix.Pwrite(o.FD(), data, 0); err != nil {
		t.Fatal(err)
	}
	return o.FD()
}

// control returns a control segment of job for n ranks; the test may change
// its bytes (they are what a rank attaching to its fd sees).
func control(t *testing.T, job string, n int) *team.Control {
	t.Helper()
	c, err := team.NewControl(job, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// reseal rewrites the control segment's header checksum after a change to
// its kind-specific fields, as a buggy or foreign writer would.
func reseal(t *testing.T, c *team.Control) {
	t.Helper()
	err := shm.WriteHeader(c.Mem, shm.Header{Kind: shm.KindControl, HeaderLen: uint64(shm.PageSize), TotalSize: uint64(c.Layout.Total)})
	if err != nil {
		t.Fatal(err)
	}
}

func TestInitRejectsBadControlSegments(t *testing.T) {
	garbage := make([]byte, shm.PageSize)
	for i := range garbage {
		garbage[i] = byte(i*131 + 7)
	}
	pipeR, pipeW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pipeR.Close()
	defer pipeW.Close()

	tests := []struct {
		name string
		fd   func(t *testing.T) int
		size int
		job  string
		says string
	}{
		{"closed descriptor", func(t *testing.T) int { return 1<<20 - 3 }, 1, testJob, "bad file descriptor"},
		{"pipe", func(t *testing.T) int { return int(pipeR.Fd()) }, 1, testJob, "not a regular file"},
		{"empty memfd", func(t *testing.T) int { return memfdWith(t, nil, 0) }, 1, testJob, "0 bytes"},
		{"tiny memfd", func(t *testing.T) int { return memfdWith(t, garbage[:10], 10) }, 1, testJob, "10 bytes"},
		{"zero page", func(t *testing.T) int { return memfdWith(t, nil, shm.PageSize) }, 1, testJob, "magic"},
		{"garbage", func(t *testing.T) int { return memfdWith(t, garbage, 4*shm.PageSize) }, 1, testJob, "magic"},
		{"window segment", func(t *testing.T) int {
			m := make([]byte, shm.PageSize)
			if err := shm.WriteHeader(m, shm.Header{Kind: shm.KindWindow, HeaderLen: uint64(len(m)), TotalSize: uint64(len(m))}); err != nil {
				t.Fatal(err)
			}
			return memfdWith(t, m, shm.PageSize)
		}, 1, testJob, "kind"},
		{"another job's", func(t *testing.T) int { return control(t, "abcdef", 2).FD() }, 2, testJob, `job "abcdef"`},
		{"another size", func(t *testing.T) int { return control(t, testJob, 2).FD() }, 3, testJob, "made for 2 ranks"},
		{"corrupt header", func(t *testing.T) int {
			c := control(t, testJob, 2)
			c.Mem[shm.FixedHeaderLen] ^= 1 // the rank count, under the checksum
			return c.FD()
		}, 2, testJob, "checksum"},
		{"future version", func(t *testing.T) int {
			c := control(t, testJob, 2)
			binary.LittleEndian.PutUint32(c.Mem[8:], shm.FormatVersion+1) // checked before the checksum
			return c.FD()
		}, 2, testJob, "version"},
		{"slot length", func(t *testing.T) int {
			c := control(t, testJob, 2)
			binary.LittleEndian.PutUint32(c.Mem[shm.FixedHeaderLen+4:], format.SlotLen*2) // docs/FORMAT.md
			reseal(t, c)
			return c.FD()
		}, 2, testJob, "slot length"},
		{"truncated object", func(t *testing.T) int {
			c := control(t, testJob, 64)
			if err := unix.Ftruncate(c.FD(), c.Layout.Total-shm.PageSize); err != nil {
				t.Fatal(err)
			}
			return c.FD()
		}, 64, testJob, "truncated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := attach(tt.fd(t), tt.size, tt.job)
			if err == nil {
				c.t.Control().Close()
				t.Fatal("Init accepted it")
			}
			if !errors.Is(err, ErrInit) || !strings.Contains(err.Error(), tt.says) || !strings.HasPrefix(err.Error(), "comm: Init: control segment: ") {
				t.Errorf("Init = %v; want an ErrInit error about the control segment saying %q", err, tt.says)
			}
		})
	}
}

func TestInitAttaches(t *testing.T) {
	ctl := control(t, testJob, 3)
	fd, err := unix.Dup(ctl.FD()) // the rank's own descriptor, which Close closes
	if err != nil {
		t.Fatal(err)
	}
	c, err := initFromEnv(envOf(rankVars(EnvJob, testJob, EnvRank, "2", EnvSize, "3", EnvControlFD, strconv.Itoa(fd), EnvAppNum, "1")))
	if err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	defer c.t.Control().Close()
	if c.Rank() != 2 || c.Size() != 3 || c.t.Job() != testJob || c.t.Dir() != "/dev/shm" {
		t.Errorf("rank %d of %d, job %s, dir %s", c.Rank(), c.Size(), c.t.Job(), c.t.Dir())
	}
	if n, ok := c.AppNum(); n != 1 || !ok {
		t.Errorf("AppNum = %d, %v; want 1 (the launcher's %s)", n, ok, EnvAppNum)
	}
	// The launcher learns that the rank is up, and who it is.
	if s, pid := atomic.LoadUint32(ctl.RankState(2)), atomic.LoadUint32(ctl.RankPID(2)); s != format.RankInit || pid != uint32(os.Getpid()) {
		t.Errorf("rank state %d, pid %d; want %d, %d", s, pid, format.RankInit, os.Getpid())
	}
	// Children of the rank do not inherit the control segment.
	if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC == 0 {
		t.Errorf("control fd flags %#x, %v: want close-on-exec", flags, err)
	}
}
