package shm_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/shmrun/shmrun/shm"
)

// allocated is the bytes of o's file that have backing pages.
func allocated(t *testing.T, o *shm.Object) int64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Fstat(o.FD(), &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks * 512
}

func TestReserve(t *testing.T) {
	dir := shmDir(t)
	// Over one fallocate chunk (64 MiB), so the loop goes round.
	const size = 65 << 20
	o := mustCreate(t, dir, size)
	defer o.Unlink()
	if got := allocated(t, o); got != 0 {
		t.Fatalf("a new object has %d bytes allocated", got)
	}
	if err := o.Reserve(dir, shm.PageSize, size-shm.PageSize); err != nil {
		t.Fatal(err)
	}
	if got := allocated(t, o); got != size-shm.PageSize {
		t.Errorf("%d bytes allocated after reserving %d", got, size-shm.PageSize)
	}
	if err := o.Reserve(dir, 0, 0); err != nil {
		t.Errorf("an empty reservation: %v", err)
	}
}

// tinyTmpfs mounts a 1 MiB tmpfs for the test, or skips it.
func tinyTmpfs(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=1m,mode=0700"); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// TestReserveNoSpace: a reservation that a small tmpfs cannot hold is a
// clear error at once, naming the directory, the bytes asked and free, never
// a SIGBUS when the pages are touched later.
func TestReserveNoSpace(t *testing.T) {
	dir := tinyTmpfs(t)
	const size = 8 << 20
	o := mustCreate(t, dir, size) // sparse: creating it takes no space
	err := o.Reserve(dir, 0, size)
	if !errors.Is(err, shm.ErrNoSpace) {
		t.Fatalf("Reserve(8 MiB) on a 1 MiB tmpfs = %v, want ErrNoSpace", err)
	}
	var ns *shm.NoSpaceError
	if !errors.As(err, &ns) {
		t.Fatalf("%T is not a *NoSpaceError", err)
	}
	if ns.Dir != dir || ns.Asked != size || ns.Free < 0 || ns.Free > 1<<20 {
		t.Errorf("NoSpaceError%+v, want dir %s, asked %d, free in [0, 1 MiB]", *ns, dir, size)
	}
	msg := err.Error()
	for _, want := range []string{dir, fmt.Sprint(size), fmt.Sprint(ns.Free), "--shm-dir"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not say %q", msg, want)
		}
	}
	// What fits is reserved.
	small := mustCreate(t, dir, 256<<10)
	if err := small.Reserve(dir, 0, 256<<10); err != nil {
		t.Errorf("Reserve(256 KiB) on a 1 MiB tmpfs: %v", err)
	}
	for _, o := range []*shm.Object{o, small} {
		o.Unlink()
	}
}

func TestFreeBytes(t *testing.T) {
	if got := shm.FreeBytes(filepath.Join(t.TempDir(), "missing")); got != -1 {
		t.Errorf("FreeBytes of a missing dir = %d, want -1", got)
	}
	if got := shm.FreeBytes(shm.DefaultDir); got <= 0 {
		t.Logf("FreeBytes(%s) = %d", shm.DefaultDir, got)
	}
}

// TestPopulate: populating a range backs exactly its pages, and a range a
// small tmpfs cannot hold is a *NoSpaceError at once, not a SIGBUS later.
func TestPopulate(t *testing.T) {
	dir := shmDir(t)
	const size = 3 << 20
	o := mustCreate(t, dir, size)
	defer o.Unlink()
	m, err := o.Map(size)
	if err != nil {
		t.Fatal(err)
	}
	defer shm.Unmap(m)
	// An unaligned range covers the pages it touches.
	if err := o.Populate(dir, m, shm.PageSize+10, 1<<20); err != nil {
		t.Fatal(err)
	}
	if got, want := allocated(t, o), int64(1<<20)+shm.PageSize; got != want {
		t.Errorf("%d bytes allocated, want %d", got, want)
	}
	m[shm.PageSize+10] = 1 // mapped and writable
}

func TestPopulateNoSpace(t *testing.T) {
	dir := tinyTmpfs(t)
	const size = 8 << 20
	o := mustCreate(t, dir, size)
	defer o.Unlink()
	m, err := o.Map(size)
	if err != nil {
		t.Fatal(err)
	}
	defer shm.Unmap(m)
	err = o.Populate(dir, m, 0, size)
	var ns *shm.NoSpaceError
	if !errors.As(err, &ns) || ns.Dir != dir || ns.Asked != size {
		t.Fatalf("Populate(8 MiB) on a 1 MiB tmpfs = %v, want a *NoSpaceError for %s asking %d", err, dir, size)
	}
}

// TestReserveBeyondFree: a reservation beyond the directory's free space
// fails at once, reporting the space free before it (not the 0 bytes left
// once it had filled the filesystem), and leaves nothing allocated; one that
// fails midway gives back the pages it took (issue 12, defect 10).
func TestReserveBeyondFree(t *testing.T) {
	dir := tinyTmpfs(t)
	const size = 8 << 20
	o := mustCreate(t, dir, size)
	defer o.Unlink()
	m, err := o.Map(size)
	if err != nil {
		t.Fatal(err)
	}
	defer shm.Unmap(m)
	before := shm.FreeBytes(dir)
	if before < 512<<10 {
		t.Fatalf("a fresh 1 MiB tmpfs has %d bytes free", before)
	}
	for _, tc := range []struct {
		name    string
		reserve func() error
	}{
		{"Reserve", func() error { return o.Reserve(dir, 0, size) }},
		{"Populate", func() error { return o.Populate(dir, m, 0, size) }},
		{"Reserve failing midway", func() error { return o.ReserveUnchecked(dir, 0, size) }},
		{"Populate failing midway", func() error { return o.PopulateUnchecked(dir, m, 0, size) }},
		{"CheckFree", func() error { return shm.CheckFree(dir, size) }},
	} {
		err := tc.reserve()
		var ns *shm.NoSpaceError
		if !errors.As(err, &ns) {
			t.Fatalf("%s of 8 MiB on a 1 MiB tmpfs = %v, want a *NoSpaceError", tc.name, err)
		}
		if ns.Free != before {
			t.Errorf("%s: NoSpaceError says %d bytes free, there were %d before it", tc.name, ns.Free, before)
		}
		if got := allocated(t, o); got != 0 {
			t.Errorf("%s: %d bytes still allocated after it failed", tc.name, got)
		}
		if got := shm.FreeBytes(dir); got != before {
			t.Errorf("%s: %d bytes free after it failed, %d before", tc.name, got, before)
		}
	}
}

// TestNoSpaceMessage: a reservation that fails in a directory points at
// the directory's size and the ways around it; one that fails for a memfd
// (in no directory) names memory, with no advice about directories.
func TestNoSpaceMessage(t *testing.T) {
	dir := (&shm.NoSpaceError{Dir: "/dev/shm", Asked: 1 << 20, Free: 4096}).Error()
	memfd := (&shm.NoSpaceError{Asked: 1 << 20, Free: -1}).Error()
	if !strings.Contains(dir, "/dev/shm") || !strings.Contains(dir, "--shm-dir") {
		t.Errorf("in a directory: %q", dir)
	}
	if !strings.Contains(memfd, "memfd") || !strings.Contains(memfd, "memory cgroup") || strings.Contains(memfd, "--shm-dir") || strings.Contains(memfd, " in :") {
		t.Errorf("for a memfd: %q", memfd)
	}
}

// TestPopulateRefusesNegativeRange: a negative offset or length is an
// error, not a slice of m before its start.
func TestPopulateRefusesNegativeRange(t *testing.T) {
	dir := shmDir(t)
	size := 2 * shm.PageSize
	o := mustCreate(t, dir, size)
	defer o.Unlink()
	m, err := o.Map(size)
	if err != nil {
		t.Fatal(err)
	}
	defer shm.Unmap(m)
	for _, r := range [][2]int64{{-5, 10}, {0, -1}} {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("Populate(%d, %d): panic %v", r[0], r[1], p)
				}
			}()
			if err := o.Populate(dir, m, r[0], r[1]); !errors.Is(err, shm.ErrSize) {
				t.Errorf("Populate(%d, %d) = %v, want ErrSize", r[0], r[1], err)
			}
		}()
	}
}
