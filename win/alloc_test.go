//go:build !mpi

package win_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/launcher"
	"github.com/shmrun/shmrun/shm"
	"github.com/shmrun/shmrun/win"
)

// sizeOf gives rank r of a layout test its size: varied, rank 2 empty.
func sizeOf(r int) int {
	if r == 2 {
		return 0
	}
	return r*37 + 11
}

func init() {
	ranktest.Register("layout", func(c *comm.Comm) error { return layoutBody(c, false) })
	ranktest.Register("layout-noncontig", func(c *comm.Comm) error { return layoutBody(c, true) })
	ranktest.Register("crossread", crossReadBody)
	ranktest.Register("churn", churnBody)
	ranktest.Register("append-empty", func(c *comm.Comm) error { return appendEmptyBody(c, false) })
	ranktest.Register("append-empty-noncontig", func(c *comm.Comm) error { return appendEmptyBody(c, true) })
}

// appendEmptyBody: rank 1 has size 0 and appends to its part as Local,
// Attr().Base and SharedQuery(1) give it; rank 2's first byte (right after
// it in the contiguous layout) must stay untouched on every rank.
func appendEmptyBody(c *comm.Comm, noncontig bool) error {
	info := win.Info{}
	if noncontig {
		info["alloc_shared_noncontig"] = "true"
	}
	size := 8
	if c.Rank() == 1 {
		size = 0
	}
	w, err := win.AllocateShared(c, size, 1, info)
	if err != nil {
		return err
	}
	// Every rank goes through every collective call, failed or not, so
	// that a failure is reported rather than left hanging in a Fence.
	var errs []error
	if c.Rank() == 1 {
		seg := mustQuery(w, 1)
		for name, b := range map[string][]byte{"Local": w.Local(), "Attr().Base": w.Attr().Base, "SharedQuery(1)": seg.Bytes} {
			if len(b) != 0 || cap(b) != 0 {
				errs = append(errs, fmt.Errorf("%s of a size-0 rank: len %d cap %d, want 0 and 0", name, len(b), cap(b)))
			}
			if got := append(b, 0xEE); got[0] != 0xEE {
				errs = append(errs, fmt.Errorf("append to %s lost its byte", name))
			}
		}
		if want := mustQuery(w, 0).Size; !noncontig && seg.Offset != want {
			errs = append(errs, fmt.Errorf("contiguous size-0 rank 1: offset %d, want rank 0's size %d", seg.Offset, want))
		}
	}
	errs = append(errs, w.Fence(0))
	if got := mustQuery(w, 2).Bytes[0]; got != 0 {
		errs = append(errs, fmt.Errorf("rank 2's first byte is %#x after rank 1 appended to its empty part, want 0", got))
	}
	errs = append(errs, w.Fence(0), w.Free())
	return errors.Join(errs...)
}

// TestAppendEmptyPart: appending to a size-0 rank's slice never writes the
// next rank's memory, in either layout (issue 12, defect 1).
func TestAppendEmptyPart(t *testing.T) {
	t.Run("contiguous", func(t *testing.T) { ranktest.Run(t, 3, "append-empty") })
	t.Run("noncontig", func(t *testing.T) { ranktest.Run(t, 3, "append-empty-noncontig") })
}

// layoutBody checks contiguity (or page alignment), zero sizes and
// SharedQuery(ProcNull) through this process's own mapping.
func layoutBody(c *comm.Comm, noncontig bool) error {
	info := win.Info{}
	if noncontig {
		info["alloc_shared_noncontig"] = "true"
	}
	w, err := win.AllocateShared(c, sizeOf(c.Rank()), 1, info)
	if err != nil {
		return err
	}
	defer w.Free()
	var prev win.Segment
	for r := range c.Size() {
		seg, err := w.SharedQuery(r)
		if err != nil {
			return err
		}
		if seg.Size != sizeOf(r) || len(seg.Bytes) != sizeOf(r) || seg.DispUnit != 1 {
			return fmt.Errorf("rank %d: size %d/%d, want %d", r, seg.Size, len(seg.Bytes), sizeOf(r))
		}
		if cap(seg.Bytes) != seg.Size {
			return fmt.Errorf("rank %d: capacity %d, want its size %d (an append must not reach the next part)", r, cap(seg.Bytes), seg.Size)
		}
		switch {
		case seg.Size == 0:
			if seg.Bytes != nil {
				return fmt.Errorf("rank %d of size 0: want a nil slice", r)
			}
		case noncontig:
			if raw.Addr(seg.Bytes)%uintptr(shm.PageSize) != 0 {
				return fmt.Errorf("noncontig rank %d: base %#x is not page-aligned", r, raw.Addr(seg.Bytes))
			}
		}
		if seg.Size > 0 {
			if got, want := base(seg.Bytes), base(mustQuery(w, 0).Bytes)+uintptr(seg.Offset); got != want {
				return fmt.Errorf("base of rank %d is %#x, want base[0]+Offset %d = %#x", r, got, seg.Offset, want)
			}
		}
		switch {
		case r == 0:
			if seg.Offset != 0 || raw.Addr(seg.Bytes)%uintptr(shm.PageSize) != 0 {
				return fmt.Errorf("rank 0's data: offset %d, not page-aligned or not at 0", seg.Offset)
			}
		case noncontig:
			if seg.Offset%int(shm.PageSize) != 0 || seg.Offset < prev.Offset+prev.Size {
				return fmt.Errorf("noncontig rank %d: offset %d after rank %d's [%d, +%d)", r, seg.Offset, r-1, prev.Offset, prev.Size)
			}
		default:
			if seg.Offset != prev.Offset+prev.Size {
				return fmt.Errorf("contiguous rank %d: offset %d, want offset[%d]+size = %d", r, seg.Offset, r-1, prev.Offset+prev.Size)
			}
		}
		prev = seg
	}
	pn, err := w.SharedQuery(win.ProcNull)
	if err != nil {
		return err
	}
	if pn.Size != sizeOf(0) || base(pn.Bytes) != base(mustQuery(w, 0).Bytes) {
		return fmt.Errorf("SharedQuery(ProcNull) is not rank 0's segment")
	}
	a := w.Attr()
	if a.Size != sizeOf(c.Rank()) || a.Flavor != win.FlavorShared || a.Model != win.Unified || a.DispUnit != 1 {
		return fmt.Errorf("attributes %+v", a)
	}
	if own := mustQuery(w, c.Rank()); a.Offset != own.Offset || cap(a.Base) != a.Size || base(a.Base) != base(own.Bytes) {
		return fmt.Errorf("Attr (offset %d, cap %d) disagrees with SharedQuery of this rank (offset %d)", a.Offset, cap(a.Base), own.Offset)
	}
	if got := w.Info()["alloc_shared_noncontig"]; got != fmt.Sprint(noncontig) {
		return fmt.Errorf("info alloc_shared_noncontig=%s", got)
	}
	return nil
}

// base is where a slice starts.
func base(b []byte) uintptr { return raw.Addr(b) }

func mustQuery(w *win.Win, r int) win.Segment {
	s, err := w.SharedQuery(r)
	if err != nil {
		panic(err)
	}
	return s
}

func TestLayoutContiguous(t *testing.T) { ranktest.Run(t, 5, "layout") }
func TestLayoutNoncontig(t *testing.T)  { ranktest.Run(t, 5, "layout-noncontig") }

// crossReadBody: every rank writes its part; after a Fence every rank reads
// every part through its own mapping.
func crossReadBody(c *comm.Comm) error {
	const n = 4096 + 13
	w, err := win.AllocateShared(c, n, 1, nil)
	if err != nil {
		return err
	}
	defer w.Free()
	mine := w.Local()
	for i := range mine {
		if mine[i] != 0 {
			return fmt.Errorf("new window not zeroed at %d", i)
		}
		mine[i] = byte(c.Rank()*31 + i)
	}
	if err := w.Fence(0); err != nil {
		return err
	}
	for r := range c.Size() {
		b := mustQuery(w, r).Bytes
		for i := range b {
			if b[i] != byte(r*31+i) {
				return fmt.Errorf("rank %d's byte %d reads %d through rank %d's mapping", r, i, b[i], c.Rank())
			}
		}
	}
	return w.Fence(win.ModeNoSucceed)
}

func TestCrossRead(t *testing.T) { ranktest.Run(t, 4, "crossread") }

// churnBody makes and frees many windows, then checks that no mapping, fd or
// object of the job is left.
func churnBody(c *comm.Comm) error {
	dir := os.Getenv(comm.EnvShmDir)
	// The world's first collective call maps its collective area, which
	// stays: make it before counting.
	if err := c.Barrier(); err != nil {
		return err
	}
	fds0, maps0 := shmFDs(dir), shmMaps(dir)
	for i := range 1000 {
		w, err := win.AllocateShared(c, 64*(i%7), 8, nil)
		if err != nil {
			return fmt.Errorf("window %d: %w", i, err)
		}
		if err := w.Free(); err != nil {
			return err
		}
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	if fds, maps := shmFDs(dir), shmMaps(dir); fds != fds0 || maps != maps0 {
		return fmt.Errorf("after 1000 windows: %d fds into %s (was %d), %d mappings of it (was %d)", fds, dir, fds0, maps, maps0)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), format.Prefix) && !strings.HasSuffix(e.Name(), ".lock") {
			return fmt.Errorf("object %s left in %s", e.Name(), dir)
		}
	}
	return nil
}

// shmFDs counts this process's descriptors open on objects in dir.
func shmFDs(dir string) int {
	ents, _ := os.ReadDir("/proc/self/fd")
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(target, dir+"/") {
			n++
		}
	}
	return n
}

// shmMaps counts this process's mappings of objects in dir.
func shmMaps(dir string) int {
	b, _ := os.ReadFile("/proc/self/maps")
	return strings.Count(string(b), " "+dir+"/")
}

func TestChurn1000Windows(t *testing.T) { ranktest.Run(t, 3, "churn") }

// TestAllocateErrors: bad arguments fail on every rank with the same class.
func TestAllocateErrors(t *testing.T) {
	cases := []struct {
		name  string
		size  func(r int) int
		unit  int
		info  win.Info
		class error
	}{
		{"negative size on rank 1", func(r int) int { return map[bool]int{true: -5, false: 8}[r == 1] }, 8, nil, win.ErrSize},
		{"zero disp unit", func(int) int { return 8 }, 0, nil, win.ErrArg},
		{"bad info value", func(int) int { return 8 }, 8, win.Info{"no_locks": "maybe"}, win.ErrInfo},
		{"bad ordering", func(int) int { return 8 }, 8, win.Info{"accumulate_ordering": "rar,xyz"}, win.ErrInfo},
		{"same_size broken", func(r int) int { return 8 * (r + 1) }, 8, win.Info{"same_size": "true"}, win.ErrSize},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			runLocal(t, 3, func(c *comm.Comm) error {
				w, err := win.AllocateShared(c, tc.size(c.Rank()), tc.unit, tc.info)
				if err == nil {
					w.Free()
					return fmt.Errorf("rank %d: no error", c.Rank())
				}
				if !errors.Is(err, tc.class) {
					return fmt.Errorf("rank %d: %v, want class %v", c.Rank(), err, tc.class)
				}
				return nil
			})
		})
	}
}

// TestInfoDefaults: the info in effect includes every default; unknown keys
// are ignored.
func TestInfoDefaults(t *testing.T) {
	runLocal(t, 2, func(c *comm.Comm) error {
		w, err := win.Allocate(c, 16, 8, win.Info{"unknown_key": "x", "accumulate_ordering": "waw, rar"})
		if err != nil {
			return err
		}
		defer w.Free()
		want := map[string]string{"accumulate_ordering": "rar,waw", "accumulate_ops": "same_op_no_op", "no_locks": "false",
			"alloc_shared_noncontig": "false", "same_size": "false", "same_disp_unit": "false"}
		got := w.Info()
		for k, v := range want {
			if got[k] != v {
				return fmt.Errorf("info %s=%q, want %q", k, got[k], v)
			}
		}
		if _, ok := got["unknown_key"]; ok {
			return fmt.Errorf("unknown key kept")
		}
		if w.Attr().Flavor != win.FlavorAllocate {
			return fmt.Errorf("flavor %v", w.Attr().Flavor)
		}
		return nil
	})
}

// TestFreeTwice: a second Free, and any use after Free, is ErrWin.
func TestFreeTwice(t *testing.T) {
	runLocal(t, 2, func(c *comm.Comm) error {
		w, err := win.AllocateShared(c, 8, 8, nil)
		if err != nil {
			return err
		}
		if err := w.Free(); err != nil {
			return err
		}
		// (Free unmaps the epoch state; every call after it must find the
		// freed window's stand-in, not that memory.)
		g := w.Group()
		_, testErr := w.Test()
		for _, err := range []error{w.Free(), w.Fence(0), w.Lock(win.Shared, 0, 0), w.Lock(win.Exclusive, 1, 0),
			w.Unlock(1), w.LockAll(0), w.UnlockAll(), w.Put([]byte{1}, 0, 0), w.Get(make([]byte, 1), 1, 0),
			w.Flush(0), w.FlushAll(), w.FlushLocal(1), w.FlushLocalAll(), w.Sync(),
			w.Post(g, 0), w.Start(g, 0), w.Complete(), w.Wait(), testErr,
			win.Accumulate(w, []int64{1}, 0, 0, atomics.Sum)} {
			if !errors.Is(err, win.ErrWin) {
				return fmt.Errorf("after Free: %v, want ErrWin", err)
			}
		}
		if _, err := w.SharedQuery(0); !errors.Is(err, win.ErrWin) {
			return fmt.Errorf("SharedQuery after Free: %v", err)
		}
		return nil
	})
}

// TestNoSpace: a window larger than a tiny tmpfs is ErrNoMem on every rank,
// naming the directory — never a SIGBUS later.
func TestNoSpace(t *testing.T) {
	dir := tinyTmpfs(t, "2m")
	ranktest.Run(t, 2, "nospace", ranktest.ShmDir(dir), ranktest.Configure(func(c *launcher.Config) { c.Shm = "dir" }))
}

// TestMemfdBacking: with --shm=memfd, and with the default --shm=auto when
// the directory has no room, windows live in a memfd that rank 0 makes and
// the others open through /proc: the ranks see each other's puts, and the
// directory holds nothing (ranktest checks it after every job).
func TestMemfdBacking(t *testing.T) {
	ranktest.Run(t, 3, "memfd", ranktest.Configure(func(c *launcher.Config) { c.Shm = "memfd" }))
	dir := tinyTmpfs(t, "2m")
	ranktest.Run(t, 2, "memfd", ranktest.ShmDir(dir)) // auto: 8 MiB do not fit in 2
}

func init() {
	ranktest.Register("memfd", func(c *comm.Comm) error {
		const size = 4 << 20
		w, err := win.AllocateShared(c, size, 8, nil)
		if err != nil {
			return err
		}
		defer w.Free()
		maps, err := os.ReadFile("/proc/self/maps")
		if err != nil {
			return err
		}
		if !strings.Contains(string(maps), "memfd:shmrun-window") {
			return fmt.Errorf("rank %d: the window is not a memfd mapping", c.Rank())
		}
		next := (c.Rank() + 1) % c.Size()
		if err := w.Fence(0); err != nil {
			return err
		}
		if err := win.PutT(w, []int64{int64(100 + c.Rank())}, next, size/8-1); err != nil {
			return err
		}
		if err := w.Fence(0); err != nil {
			return err
		}
		got, err := win.View[int64](w.Local())
		if err != nil {
			return err
		}
		prev := (c.Rank() + c.Size() - 1) % c.Size()
		if got[size/8-1] != int64(100+prev) {
			return fmt.Errorf("rank %d: last word %d, want %d from rank %d", c.Rank(), got[size/8-1], 100+prev, prev)
		}
		return w.Fence(win.ModeNoSucceed)
	})
	ranktest.Register("nospace", func(c *comm.Comm) error {
		w, err := win.AllocateShared(c, 4<<20, 1, nil)
		if err == nil {
			w.Free()
			return fmt.Errorf("rank %d: 8 MiB window in a 2 MiB tmpfs succeeded", c.Rank())
		}
		if !errors.Is(err, win.ErrNoMem) || !strings.Contains(err.Error(), os.Getenv(comm.EnvShmDir)) || !strings.Contains(err.Error(), "--shm-dir") ||
			!strings.Contains(err.Error(), "--shm=memfd") {
			return fmt.Errorf("rank %d: %v: want ErrNoMem naming the directory, --shm-dir and --shm=memfd", c.Rank(), err)
		}
		// The rank whose own reservation failed reaches the cause itself
		// (the others get its message and class).
		var nse *shm.NoSpaceError
		if errors.As(err, &nse) && (nse.Dir != os.Getenv(comm.EnvShmDir) || nse.Asked <= 0 || !strings.Contains(err.Error(), "--shm=memfd")) {
			return fmt.Errorf("rank %d: %v: does not name the directory, the bytes and --shm=memfd", c.Rank(), err)
		}
		if !errors.As(err, &nse) && !strings.Contains(err.Error(), fmt.Sprintf("on rank %d", 1-c.Rank())) {
			return fmt.Errorf("rank %d: %v: neither its own NoSpaceError nor the other rank's failure", c.Rank(), err)
		}
		// The job goes on: a small window still works.
		w, err = win.AllocateShared(c, 1024, 1, nil)
		if err != nil {
			return err
		}
		return w.Free()
	})
}

// TestMapNoMem: a mapping the kernel refuses for lack of address space
// (mmap ENOMEM, here under an RLIMIT_AS on rank 1) is ErrNoMem on every
// rank, not ErrOther.
func TestMapNoMem(t *testing.T) { ranktest.Run(t, 2, "map-nomem") }

func init() {
	ranktest.Register("map-nomem", func(c *comm.Comm) error {
		const size = 8 << 30 // sparse (no reservation): only the mapping can fail
		var old syscall.Rlimit
		if c.Rank() == 1 {
			if err := syscall.Getrlimit(syscall.RLIMIT_AS, &old); err != nil {
				return err
			}
			vm, err := vmSize()
			if err != nil {
				return err
			}
			lim := syscall.Rlimit{Cur: vm + 512<<20, Max: old.Max}
			if err := syscall.Setrlimit(syscall.RLIMIT_AS, &lim); err != nil {
				return err
			}
		}
		w, err := win.AllocateShared(c, size, 1, win.Info{"shmrun_no_reserve": "true"})
		if c.Rank() == 1 {
			if rerr := syscall.Setrlimit(syscall.RLIMIT_AS, &old); rerr != nil {
				return rerr
			}
		}
		if err == nil {
			w.Free()
			return fmt.Errorf("rank %d: an 8 GiB window mapped under a 512 MiB address-space limit", c.Rank())
		}
		if !errors.Is(err, win.ErrNoMem) {
			return fmt.Errorf("rank %d: %v: want ErrNoMem", c.Rank(), err)
		}
		return nil
	})
}

// vmSize returns this process's virtual size in bytes (/proc/self/status).
func vmSize() (uint64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmSize:"); ok {
			var kb uint64
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb); err != nil {
				return 0, err
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no VmSize in /proc/self/status")
}

// TestSameAssertsOnSomeRanks: same_size or same_disp_unit given on some
// ranks only fails alike on every rank when the sizes or units differ
// (no rank pairs its next exchange with another rank's later call), and
// is harmless when they agree (issue 12, defect 5).
func TestSameAssertsOnSomeRanks(t *testing.T) {
	sameOnEveryRank(t, ranktest.Run(t, 3, "same-some"), 3)
}

// sameOnEveryRank checks that each of n ranks printed one line "rank r: msg"
// and that msg is the same on every rank.
func sameOnEveryRank(t *testing.T, res ranktest.Result, n int) {
	t.Helper()
	lines := res.Lines()
	if len(lines) != n {
		t.Fatalf("%d lines of output, want one per rank (%d):\n%s", len(lines), n, res.Stdout)
	}
	var first string
	for i, l := range lines {
		_, msg, ok := strings.Cut(l, ": ")
		if !ok {
			t.Fatalf("line %q is not \"rank r: message\"", l)
		}
		if i == 0 {
			first = msg
		} else if msg != first {
			t.Errorf("the ranks saw different messages:\n%s\n%s", lines[0], l)
		}
	}
}

func init() {
	ranktest.Register("same-some", func(c *comm.Comm) error {
		on := func(key string) win.Info {
			if c.Rank() == 1 {
				return win.Info{key: "true"}
			}
			return nil
		}
		var msgs []string
		for _, tc := range []struct {
			key        string
			size, unit int
			class      error
		}{
			{"same_size", 8 * (c.Rank() + 1), 8, win.ErrSize},
			{"same_disp_unit", 64, 1 << c.Rank(), win.ErrArg},
		} {
			w, err := win.AllocateShared(c, tc.size, tc.unit, on(tc.key))
			if err == nil {
				w.Free()
				return fmt.Errorf("rank %d: %s on rank 1 only, broken: no error", c.Rank(), tc.key)
			}
			if !errors.Is(err, tc.class) || !strings.Contains(err.Error(), tc.key) {
				return fmt.Errorf("rank %d: %s on rank 1 only: %v, want %v naming the key", c.Rank(), tc.key, err, tc.class)
			}
			msgs = append(msgs, err.Error())
			// Agreed on: the next collective calls pair up as written.
			if err := c.Barrier(); err != nil {
				return err
			}
			w, err = win.AllocateShared(c, 64, 8, on(tc.key))
			if err != nil {
				return fmt.Errorf("rank %d: %s on rank 1 only, kept: %v", c.Rank(), tc.key, err)
			}
			if got := w.Info()[tc.key]; got != "true" {
				return fmt.Errorf("rank %d: info %s=%s in effect, want true", c.Rank(), tc.key, got)
			}
			if err := w.Free(); err != nil {
				return err
			}
		}
		// The same messages on every rank: rank 0 prints, the test compares.
		fmt.Printf("rank %d: %s\n", c.Rank(), strings.Join(msgs, " | "))
		return nil
	})
}

// TestLongFailureMessage: a collective failure whose message is longer than
// an exchange slot (a no-space error naming a long shm directory) reaches
// every rank whole (issue 12, defect 11: it was cut at 232 bytes).
func TestLongFailureMessage(t *testing.T) {
	dir := tinyTmpfs(t, "2m")
	long := dir + "/" + strings.Repeat("d", 200) + "/" + strings.Repeat("e", 200) + "/end"
	if err := os.MkdirAll(long, 0o777); err != nil {
		t.Fatal(err)
	}
	res := ranktest.Run(t, 3, "long-failure", ranktest.ShmDir(long), ranktest.Configure(func(c *launcher.Config) { c.Shm = "dir" }))
	sameOnEveryRank(t, res, 3)
}

func init() {
	ranktest.Register("long-failure", func(c *comm.Comm) error {
		dir := os.Getenv(comm.EnvShmDir)
		w, err := win.AllocateShared(c, 4<<20, 1, nil)
		if err == nil {
			w.Free()
			return fmt.Errorf("rank %d: 4 MiB per rank in a 2 MiB tmpfs succeeded", c.Rank())
		}
		msg := err.Error()
		if !errors.Is(err, win.ErrNoMem) || strings.Count(msg, dir) != 1 || !strings.Contains(msg, "--shm-dir") {
			return fmt.Errorf("rank %d: %v: want ErrNoMem with the whole message (directory %d bytes)", c.Rank(), err, len(dir))
		}
		// The failed rank returns its own error; the others add which rank
		// failed and where it was seen.
		msg, _, _ = strings.Cut(msg, " (failed on rank ")
		fmt.Printf("rank %d: %s\n", c.Rank(), msg)
		return nil
	})
}

// TestWindowBeyondTmpfs: a window larger than the shm directory's free
// space fails at once on every rank, reporting the space free before the
// attempt (not the 0 bytes left after filling the tmpfs), and leaves the
// tmpfs as it was (issue 12, defect 10). Each rank's part fits alone; the
// window does not.
func TestWindowBeyondTmpfs(t *testing.T) {
	dir := tinyTmpfs(t, "2m")
	free := shm.FreeBytes(dir)
	res := ranktest.Run(t, 3, "beyond-tmpfs", ranktest.ShmDir(dir), ranktest.Env("WANT_FREE="+fmt.Sprint(free)),
		ranktest.Configure(func(c *launcher.Config) { c.Shm = "dir" }))
	sameOnEveryRank(t, res, 3)
	if got := shm.FreeBytes(dir); got != free {
		t.Errorf("%d bytes free after the failed allocation, %d before", got, free)
	}
}

func init() {
	ranktest.Register("beyond-tmpfs", func(c *comm.Comm) error {
		w, err := win.AllocateShared(c, 1536<<10, 1, nil)
		if err == nil {
			w.Free()
			return fmt.Errorf("rank %d: 3 x 1.5 MiB in a 2 MiB tmpfs succeeded", c.Rank())
		}
		want := "only " + os.Getenv("WANT_FREE") + " bytes free"
		if !errors.Is(err, win.ErrNoMem) || !strings.Contains(err.Error(), want) {
			return fmt.Errorf("rank %d: %v: want ErrNoMem saying %q", c.Rank(), err, want)
		}
		msg, _, _ := strings.Cut(err.Error(), " (failed on rank ")
		fmt.Printf("rank %d: %s\n", c.Rank(), msg)
		return nil
	})
}

func init() {
	for _, a := range []int{256, 2 << 20} {
		for _, nc := range []bool{false, true} {
			ranktest.Register(fmt.Sprintf("layout-align-%d-%v", a, nc), func(c *comm.Comm) error { return alignBody(c, a, nc) })
		}
	}
	ranktest.Register("align-bad", alignBadBody)
}

// alignBody: info mpi_minimum_memory_alignment, given by rank 3 only,
// aligns every part's base to a in every process, pads every size to a
// multiple of it (each at least what its rank asked for: rank 2 asks 0
// and gets 0) and keeps the contiguous layout contiguous over the padded
// sizes. Each rank fills its whole padded part; every rank then reads
// every part back through its own mapping.
func alignBody(c *comm.Comm, a int, noncontig bool) error {
	info := win.Info{}
	if c.Rank() == 3 {
		info["mpi_minimum_memory_alignment"] = fmt.Sprint(a)
	}
	if noncontig {
		info["alloc_shared_noncontig"] = "true"
	}
	w, err := win.AllocateShared(c, sizeOf(c.Rank()), 1, info)
	if err != nil {
		return err
	}
	defer w.Free()
	if got := w.Info()["mpi_minimum_memory_alignment"]; got != fmt.Sprint(a) {
		return fmt.Errorf("Info: mpi_minimum_memory_alignment=%q, want %d", got, a)
	}
	var prev win.Segment
	for r := range c.Size() {
		seg := mustQuery(w, r)
		want := (sizeOf(r) + a - 1) / a * a
		if seg.Size != want || len(seg.Bytes) != want {
			return fmt.Errorf("rank %d asked %d bytes: part of %d (%d), want %d", r, sizeOf(r), seg.Size, len(seg.Bytes), want)
		}
		if seg.Size > 0 && raw.Addr(seg.Bytes)%uintptr(a) != 0 {
			return fmt.Errorf("rank %d's part at %#x, not a multiple of %d", r, raw.Addr(seg.Bytes), a)
		}
		if r > 0 && !noncontig && seg.Offset != prev.Offset+prev.Size {
			return fmt.Errorf("contiguous rank %d: offset %d, want offset[%d]+size = %d", r, seg.Offset, r-1, prev.Offset+prev.Size)
		}
		prev = seg
	}
	own := w.Local()
	for i := range own {
		own[i] = byte(c.Rank() + 1)
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	for r := range c.Size() {
		for i, b := range mustQuery(w, r).Bytes {
			if b != byte(r+1) {
				return fmt.Errorf("rank %d's part, byte %d of %d: %d, want %d", r, i, sizeOf(r), b, r+1)
			}
		}
	}
	return c.Barrier()
}

// alignBadBody: a malformed alignment on one rank fails the allocation on
// every rank with ErrInfo.
func alignBadBody(c *comm.Comm) error {
	for _, v := range []string{"0", "3", "-8", "x", "2147483648"} {
		info := win.Info{}
		if c.Rank() == 1 {
			info["mpi_minimum_memory_alignment"] = v
		}
		w, err := win.Allocate(c, 64, 1, info)
		if !errors.Is(err, win.ErrInfo) {
			if w != nil {
				w.Free()
			}
			return fmt.Errorf("mpi_minimum_memory_alignment=%q on rank 1: %v, want ErrInfo", v, err)
		}
	}
	return nil
}

func TestMinimumAlignment(t *testing.T) {
	for _, a := range []int{256, 2 << 20} {
		for _, nc := range []bool{false, true} {
			name := fmt.Sprintf("layout-align-%d-%v", a, nc)
			t.Run(name, func(t *testing.T) { ranktest.Run(t, 5, name) })
		}
	}
	t.Run("malformed", func(t *testing.T) { ranktest.Run(t, 3, "align-bad") })
}

// TestMinimumAlignmentLocal: the goroutine ranks of a local world share one
// heap segment, aligned as a process's mapping is.
func TestMinimumAlignmentLocal(t *testing.T) {
	ranktest.RunLocal(t, 5, func(c *comm.Comm) error { return alignBody(c, 2<<20, false) })
}

// TestAlignedWindowInSmallTmpfs: a window whose minimum alignment makes
// its segment far larger than what its ranks asked for needs room only
// for the pages it backs. 3 ranks of 4 KiB aligned to 8 MiB make a 32
// MiB segment: it fits in a 4 MiB shm directory, and takes a few pages
// of it (rank 0 reserved the 8 MiB of padding before its part, and the
// free-space check counted the whole segment).
func TestAlignedWindowInSmallTmpfs(t *testing.T) {
	dir := tinyTmpfs(t, "4m")
	free := shm.FreeBytes(dir)
	res := ranktest.Run(t, 3, "aligned-small-tmpfs", ranktest.ShmDir(dir), ranktest.Env("TMPFS_DIR="+dir),
		ranktest.Configure(func(c *launcher.Config) { c.Shm = "dir" }))
	for r := range 3 {
		if !strings.Contains(res.Stdout, fmt.Sprintf("rank %d: used ", r)) {
			t.Errorf("rank %d said nothing:\n%s", r, res.Stdout)
		}
	}
	if got := shm.FreeBytes(dir); got != free {
		t.Errorf("%d bytes free after the window was freed, %d before", got, free)
	}
}

func init() {
	ranktest.Register("aligned-small-tmpfs", func(c *comm.Comm) error {
		dir := os.Getenv("TMPFS_DIR")
		before := shm.FreeBytes(dir)
		w, err := win.AllocateShared(c, 4096, 1, win.Info{"mpi_minimum_memory_alignment": fmt.Sprint(8 << 20)})
		if err != nil {
			return err
		}
		defer w.Free()
		own := w.Local()[:4096] // the padding after it is address space, never backed
		for i := range own {
			own[i] = byte(c.Rank() + 1)
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		used := before - shm.FreeBytes(dir)
		if used > 64<<10 {
			return fmt.Errorf("rank %d: the window takes %d bytes of the shm directory for 3 x 4 KiB", c.Rank(), used)
		}
		for r := range c.Size() {
			seg := mustQuery(w, r)
			if seg.Bytes[0] != byte(r+1) || seg.Bytes[4095] != byte(r+1) {
				return fmt.Errorf("rank %d reads rank %d's part as %d..%d", c.Rank(), r, seg.Bytes[0], seg.Bytes[4095])
			}
		}
		fmt.Printf("rank %d: used %d bytes\n", c.Rank(), used)
		return nil
	})
}
