//go:build !mpi

package win_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/win"
)

// Where the C data-plane test keeps its data in each rank's part; the same
// numbers are at the top of testdata/c/dataplane.c.
const (
	cdPart    = 4096
	cdCounter = 0
	cdA       = 8
	cdB       = 16
	cdAcc     = 512 // cdNAcc complex128, 64 bytes apart: different stripes
	cdNAcc    = 8
	cdMarker  = 1024
	cdPSCW    = 2048 // one uint64 per origin
	cdK       = 1200 // iterations of phase 1 per contributor, a multiple of n
	cdRanks   = 4
)

func cdFromGo(o int) uint64    { return uint64(o+1) * 1000003 }
func cdFromC(me, t int) uint64 { return 0xC0000000 + uint64(me)*1000 + uint64(t) }

func init() { ranktest.Register("c-dataplane", cDataplaneBody) }

// TestCDataPlane runs a real job in which the last rank hands its window to
// a C program built from testdata/c/dataplane.c against the generated
// include/shmrun/format.h: the C code takes exclusive and shared locks on
// the Go ranks' lock words, stores into their parts, accumulates under the
// lock stripes concurrently with the Go ranks' win.Accumulate on the same
// elements, and runs a PSCW epoch with them. Counted invariants afterwards
// show that every protocol agreed: K increments per target under exclusive
// locks, no torn pair under a shared lock, n*K*(1+2i) in every accumulated
// element, and each side's PSCW puts visible after the epoch. A wrong offset
// or a wrong protocol step on the C side breaks a count or hangs the job
// (which then times out); a missed futex wake makes Go waiters sleep a full
// second each (the job is run with sleep=1s), which at this many hand-offs
// also runs out the time.
//
// The window segment is unlinked as soon as every rank has mapped it and no
// rank keeps its descriptor, so the C rank's Go process opens the object by
// name from win's test hook (before the unlink) and passes the descriptor,
// with a duplicate of the control segment's, to the C program.
func TestCDataPlane(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a C program and runs a 4-rank job")
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found: the C data plane is not tested")
	}
	bin := filepath.Join(t.TempDir(), "dataplane")
	build := exec.Command(gcc, "-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", "-I", "../include", "-o", bin, "../testdata/c/dataplane.c")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	res := ranktest.Run(t, cdRanks, "c-dataplane", ranktest.Args(bin),
		ranktest.Env(comm.EnvWait+"=spin=50,yield=0,sleep=1s"), ranktest.Timeout(90*time.Second))
	if want := fmt.Sprintf("dataplane: rank %d ok", cdRanks-1); !containsLine(res.Lines(), want) {
		t.Errorf("the C program did not report %q; output:\n%s", want, res.Stdout)
	}
}

func containsLine(lines []string, s string) bool {
	for _, l := range lines {
		if l == s {
			return true
		}
	}
	return false
}

func cDataplaneBody(c *comm.Comm) error {
	n, me := c.Size(), c.Rank()
	cRank := n - 1
	var seg *os.File
	var hookErr error
	if me == cRank {
		restore := win.SetMappedHook(func(dir, name string) {
			seg, hookErr = os.OpenFile(filepath.Join(dir, name), os.O_RDWR|syscall.O_NOFOLLOW, 0)
		})
		defer restore()
	}
	w, err := win.AllocateShared(c, cdPart, 1, nil)
	if err != nil {
		return err
	}
	defer w.Free()
	if me == cRank {
		if err := runCDataplane(c, me, seg, hookErr); err != nil {
			return err
		}
	} else {
		// Phase 1 starts together with the C program (see runCDataplane).
		if err := c.Barrier(); err != nil {
			return err
		}
		if err := goDataplane(c, w, n, me, cRank); err != nil {
			return err
		}
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	return checkDataplane(w, n)
}

// runCDataplane starts the C program for rank me on the window segment seg
// and the control segment, lets it start phase 1 once every rank has passed
// a barrier (so that it runs concurrently with the Go ranks), and waits for
// it.
func runCDataplane(c *comm.Comm, me int, seg *os.File, hookErr error) error {
	if seg == nil {
		return fmt.Errorf("the window segment was not opened before its unlink: %v", hookErr)
	}
	defer seg.Close()
	ctlFD, err := strconv.Atoi(os.Getenv(comm.EnvControlFD))
	if err != nil {
		return fmt.Errorf("%s: %w", comm.EnvControlFD, err)
	}
	// A duplicate: an *os.File closes its descriptor when collected, and the
	// control descriptor belongs to comm.
	dup, err := syscall.Dup(ctlFD)
	if err != nil {
		return fmt.Errorf("dup of the control descriptor: %w", err)
	}
	ctl := os.NewFile(uintptr(dup), "control")
	defer ctl.Close()
	cmd := exec.Command(ranktest.BodyArgs()[0], "3", "4", strconv.Itoa(me), strconv.Itoa(cdK))
	cmd.ExtraFiles = []*os.File{seg, ctl} // descriptors 3 and 4
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	start, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("the C data plane of rank %d: %w", me, err)
	}
	berr := c.Barrier()
	if berr == nil {
		_, berr = start.Write([]byte("go\n"))
	}
	start.Close() // without the line, the C program exits with an error
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("the C data plane of rank %d: %w", me, err)
	}
	return berr
}

// goDataplane is the Go ranks' side of both phases.
func goDataplane(c *comm.Comm, w *win.Win, n, me, cRank int) error {
	one := []complex128{1 + 2i}
	for k := range cdK {
		t := k % n
		if err := w.Lock(win.Exclusive, t, 0); err != nil {
			return err
		}
		v := make([]uint64, 1)
		if err := win.GetT(w, v, t, cdCounter); err != nil {
			return err
		}
		v[0]++
		if err := win.PutT(w, []uint64{v[0], v[0], v[0]}, t, cdCounter); err != nil { // counter, a, b
			return err
		}
		if err := w.Unlock(t); err != nil {
			return err
		}

		t = (k + 1) % n
		ab := make([]uint64, 2)
		if err := w.Lock(win.Shared, t, 0); err != nil {
			return err
		}
		if err := win.GetT(w, ab, t, cdA); err != nil {
			return err
		}
		if err := w.Unlock(t); err != nil {
			return err
		}
		if ab[0] != ab[1] {
			return fmt.Errorf("under a shared lock on rank %d: a = %d, b = %d (an exclusive holder was inside)", t, ab[0], ab[1])
		}

		if err := w.Lock(win.Shared, 0, 0); err != nil {
			return err
		}
		for i := range cdNAcc {
			if err := win.Accumulate(w, one, 0, cdAcc+64*i, atomics.Sum); err != nil {
				return err
			}
		}
		if err := w.Unlock(0); err != nil {
			return err
		}
	}

	// Phase 2: one PSCW epoch with the C rank as origin and target.
	g, err := c.Group().Incl(cRank)
	if err != nil {
		return err
	}
	if err := w.Post(g, 0); err != nil {
		return err
	}
	if err := w.Start(g, 0); err != nil {
		return err
	}
	if err := win.PutT(w, []uint64{cdFromGo(me)}, cRank, cdPSCW+8*me); err != nil {
		return err
	}
	if err := w.Complete(); err != nil {
		return err
	}
	if err := w.Wait(); err != nil {
		return err
	}
	if got, want := binary.LittleEndian.Uint64(w.Local()[cdPSCW+8*cRank:]), cdFromC(cRank, me); got != want {
		return fmt.Errorf("after Wait: the C rank's put reads %#x, want %#x", got, want)
	}
	return nil
}

// checkDataplane checks the counted invariants of phase 1 on every rank.
func checkDataplane(w *win.Win, n int) error {
	var errs []error
	for t := range n {
		if err := w.Lock(win.Shared, t, 0); err != nil {
			return err
		}
		v := make([]uint64, 3)
		m := make([]uint64, 1)
		if err := win.GetT(w, v, t, cdCounter); err != nil {
			return err
		}
		if err := win.GetT(w, m, t, cdMarker); err != nil {
			return err
		}
		if v[0] != cdK || v[1] != cdK || v[2] != cdK {
			errs = append(errs, fmt.Errorf("rank %d: counter, a, b = %v after %d contributors x %d/%d exclusive increments, want %d", t, v, n, cdK, n, cdK))
		}
		if want := uint64(cdK - n + t + 1); m[0] != want {
			errs = append(errs, fmt.Errorf("rank %d: the C rank's last put under the exclusive lock reads %d, want %d", t, m[0], want))
		}
		if t == 0 {
			acc := make([]complex128, 1)
			for i := range cdNAcc {
				if err := win.GetT(w, acc, 0, cdAcc+64*i); err != nil {
					return err
				}
				if want := complex(float64(n*cdK), float64(2*n*cdK)); acc[0] != want {
					errs = append(errs, fmt.Errorf("rank 0 element %d: %v after %d contributors x %d accumulates of 1+2i, want %v", i, acc[0], n, cdK, want))
				}
			}
		}
		if err := w.Unlock(t); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}
