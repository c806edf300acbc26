package faults

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/internal/team"
	"github.com/shmrun/shmrun/launcher"
	"github.com/shmrun/shmrun/shm"
	"github.com/shmrun/shmrun/win"
)

const nomemRanks = 4

func init() {
	// nomem: args sizes rank filler reserve. Every rank allocates a window of its
	// size from sizes (comma-separated), which the test made too large for
	// the shm directory: every rank must get ErrNoMem (naming rank unless
	// it is "-") and say "rank R: ErrNoMem: <message>". Then, unless filler
	// is "-", rank 0 shrinks the file filler by 4 MiB, or removes the file
	// if filler is "rm:<path>" (another process frees some room), and the job goes on: a small window works, even
	// once another process (rank 0 again) has filled the directory to the
	// last byte: every byte of it can be written (no SIGBUS), a ring of
	// puts in a fence epoch arrives, and every part reads back. With
	// reserve "noreserve" the small window opts out of the reservation
	// (info shmrun_no_reserve), and the writes must SIGBUS: the check of
	// the test that the others pass can fail.
	ranktest.Register("nomem", func(c *comm.Comm) error {
		args := ranktest.BodyArgs()
		me, n := c.Rank(), c.Size()
		size, err := strconv.Atoi(strings.Split(args[0], ",")[me])
		if err != nil {
			return err
		}
		w, err := win.AllocateShared(c, size, 1, nil)
		switch {
		case err == nil:
			w.Free()
			return fmt.Errorf("allocating %d bytes in a full directory succeeded", size)
		case !errors.Is(err, win.ErrNoMem):
			return fmt.Errorf("allocating %d bytes in a full directory: %w; want ErrNoMem", size, err)
		case args[1] != "-" && !strings.Contains(err.Error(), "rank "+args[1]):
			return fmt.Errorf("the error does not name rank %s: %v", args[1], err)
		}
		fmt.Printf("rank %d: ErrNoMem: %v\n", me, err)
		if filler := args[2]; filler != "-" && me == 0 {
			var err error
			if path, ok := strings.CutPrefix(filler, "rm:"); ok {
				err = os.Remove(path) // an inode goes back
			} else {
				var st os.FileInfo
				st, err = os.Stat(filler)
				if err == nil {
					err = os.Truncate(filler, st.Size()-4<<20)
				}
			}
			if err != nil {
				return err
			}
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		var info win.Info
		if args[3] == "noreserve" {
			info = win.Info{"shmrun_no_reserve": "true"}
		}
		w, err = win.AllocateShared(c, smallPart, 8, info)
		if err != nil {
			return fmt.Errorf("a small window after ErrNoMem: %w", err)
		}
		// Another process now takes every free byte of the directory: the
		// window's pages were reserved at allocation, so writing every byte
		// of it must not SIGBUS.
		t, err := team.OfComm(c, "nomem")
		if err != nil {
			return err
		}
		hog := filepath.Join(t.Dir(), "hog")
		if me == 0 {
			if err := fillUp(hog); err != nil {
				return err
			}
			fmt.Printf("the directory is full again: %d bytes free\n", shm.FreeBytes(t.Dir()))
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		for i, b := 0, w.Local(); i < len(b); i++ {
			b[i] = pattern(me, i)
		}
		if err := w.Fence(0); err != nil {
			return err
		}
		if err := win.PutT(w, []int64{int64(1000 + me)}, (me+1)%n, 0); err != nil {
			return err
		}
		if err := w.Fence(0); err != nil {
			return err
		}
		view, err := win.View[int64](mustQuery(w, me))
		if err != nil {
			return err
		}
		if got, want := view[0], int64(1000+(me+n-1)%n); got != want {
			return fmt.Errorf("after the fence my slot holds %d, want %d", got, want)
		}
		next := mustQuery(w, (me+1)%n).Bytes
		for i := 8; i < len(next); i++ {
			if next[i] != pattern((me+1)%n, i) {
				return fmt.Errorf("rank %d's byte %d is %#x, want %#x", (me+1)%n, i, next[i], pattern((me+1)%n, i))
			}
		}
		if err := w.Free(); err != nil {
			return err
		}
		if me == 0 {
			if err := os.Remove(hog); err != nil && !os.IsNotExist(err) { // no hog when no inode was left
				return err
			}
		}
		fmt.Printf("rank %d: small window works\n", me)
		return nil
	})
}

// smallPart is each rank's part of the window made after ErrNoMem: not a
// whole number of pages, so that in the contiguous layout parts share pages.
const smallPart = 100*4096 + 120

// fillUp writes path until the filesystem is full.
func fillUp(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, syscall.ENOSPC) {
		return nil // not even an inode left
	}
	if err != nil {
		return err
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return nil
			}
			return err
		}
	}
}

func mustQuery(w *win.Win, r int) win.Segment {
	seg, err := w.SharedQuery(r)
	if err != nil {
		panic(err)
	}
	return seg
}

// smallTmpfs mounts a tmpfs of size bytes (root only) for the test.
func smallTmpfs(t *testing.T, size int64) string {
	t.Helper()
	return mountTmpfs(t, fmt.Sprintf("size=%d,mode=0777", size))
}

func mountTmpfs(t *testing.T, opts string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	return dir
}

// fill writes a file "filler" (another process's data) into dir until only
// leave bytes are free.
func fill(t *testing.T, dir string, leave int64) {
	t.Helper()
	free := shm.FreeBytes(dir)
	if free < leave {
		t.Fatalf("%s has only %d bytes free", dir, free)
	}
	if err := os.WriteFile(filepath.Join(dir, "filler"), make([]byte, free-leave), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := shm.FreeBytes(dir); got != leave {
		t.Fatalf("after filling, %s has %d bytes free, want %d", dir, got, leave)
	}
}

// TestFullShmDir: a window that the shm directory cannot hold fails with
// ErrNoMem on every rank at allocation time, never a SIGBUS later; the
// pages of the failed window go back; and the job goes on with a small
// window. The directory is a 32 MiB tmpfs that another process (the test)
// filled.
func TestFullShmDir(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name  string
		free  int64
		sizes [nomemRanks]int
		names string // the rank the error must name, if one
		// noReserve makes the window after the failure skip its
		// reservation: the job must then die of SIGBUS.
		noReserve bool
	}{
		// Only rank 2 asks, more than the directory holds: rank 0's
		// statfs check of the whole window refuses it at once, before any
		// rank reserves (so the error names rank 0).
		{"one rank", 4 * mib, [nomemRanks]int{0, 0, 8 * mib, 0}, "0", false},
		// Everyone asks; rank 2 asks more than the directory holds, and
		// whoever comes after it finds the directory full too.
		{"every rank", 4 * mib, [nomemRanks]int{256 << 10, 256 << 10, 64 * mib, 256 << 10}, "", false},
		// The directory is full before the window is made: not even rank
		// 0's header page fits.
		{"already full", 0, [nomemRanks]int{256 << 10, 256 << 10, 256 << 10, 256 << 10}, "", false},
		{"no reserve", 4 * mib, [nomemRanks]int{0, 0, 8 * mib, 0}, "0", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := smallTmpfs(t, 32*mib)
			// The small windows of the second part need room.
			fill(t, dir, tt.free)
			var sizes []string
			for _, s := range tt.sizes {
				sizes = append(sizes, strconv.Itoa(s))
			}
			names, filler := tt.names, "-"
			if names == "" {
				names = "-"
			}
			before := shm.FreeBytes(dir)
			if tt.free == 0 {
				// The small window needs room: rank 0 makes it after the
				// failure by shrinking the filler.
				filler = filepath.Join(dir, "filler")
				before += 4 << 20
			}
			reserve := "reserve"
			if tt.noReserve {
				reserve = "noreserve"
			}
			res := ranktest.Run(t, nomemRanks, "nomem", ranktest.Args(strings.Join(sizes, ","), names, filler, reserve),
				ranktest.ShmDir(dir), ranktest.AnyExitCode(), inDir)
			if tt.noReserve {
				if res.ExitCode == 0 || len(sigbusProblems(res)) == 0 {
					t.Errorf("writing an unreserved window in a full directory: exit %d and no SIGBUS seen\nstderr:\n%s", res.ExitCode, res.Stderr)
				}
				t.Logf("as expected: %s", res.Reason)
				return
			}
			checkNoSIGBUS(t, res)
			if res.ExitCode != 0 {
				t.Fatalf("job exited %d (%s)\nstdout:\n%s\nstderr:\n%s", res.ExitCode, res.Reason, res.Stdout, res.Stderr)
			}
			for r := range nomemRanks {
				for _, want := range []string{fmt.Sprintf("rank %d: ErrNoMem: ", r), fmt.Sprintf("rank %d: small window works", r)} {
					if !slices.ContainsFunc(res.Lines(), func(l string) bool { return strings.HasPrefix(l, want) }) {
						t.Errorf("no line %q in\n%s", want, res.Stdout)
					}
				}
			}
			t.Logf("rank 0 saw: %s", firstLine(res.Lines(), "rank 0: ErrNoMem: "))
			t.Log(firstLine(res.Lines(), "the directory is full again"))
			if after := shm.FreeBytes(dir); after != before {
				t.Errorf("%d bytes free after the job, %d before: the failed window kept pages", after, before)
			}
			if got := entries(t, dir); !slices.Equal(got, []string{"filler"}) {
				t.Errorf("left in the shm directory: %q", got)
			}
		})
	}
}

func firstLine(lines []string, prefix string) string {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// TestOutOfInodes: a shm directory out of inodes is full too: the window's
// object cannot be made, and every rank must get ErrNoMem (naming rank 0,
// which makes it); then, with an inode back, a small window works.
func TestOutOfInodes(t *testing.T) {
	dir := mountTmpfs(t, "size=32m,nr_inodes=8,mode=0777")
	// The root takes one inode; leave one for the job's lock file.
	for i := range 6 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d", i)), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	res := ranktest.Run(t, nomemRanks, "nomem", ranktest.Args("4096,4096,4096,4096", "0", "rm:"+filepath.Join(dir, "f0"), "reserve"),
		ranktest.ShmDir(dir), ranktest.AnyExitCode(), inDir)
	checkNoSIGBUS(t, res)
	if res.ExitCode != 0 {
		t.Fatalf("job exited %d (%s)\nstdout:\n%s\nstderr:\n%s", res.ExitCode, res.Reason, res.Stdout, res.Stderr)
	}
	for r := range nomemRanks {
		if want := fmt.Sprintf("rank %d: small window works", r); firstLine(res.Lines(), want) == "" {
			t.Errorf("no line %q in\n%s", want, res.Stdout)
		}
	}
}

// inDir runs a job with --shm=dir: these faults are about the shm
// directory, which the default (auto) would leave for a memfd when full.
var inDir = ranktest.Configure(func(c *launcher.Config) { c.Shm = "dir" })
