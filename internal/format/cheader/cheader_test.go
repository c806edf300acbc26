package cheader_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/format/cheader"
)

// headerPath is the checked-in header, from this package's directory.
const headerPath = "../../../include/shmrun/format.h"

// TestHeaderUpToDate fails when include/shmrun/format.h differs from what
// the Go constants generate: someone changed the format without running
// go generate ./internal/format.
func TestHeaderUpToDate(t *testing.T) {
	want, err := cheader.Render()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(headerPath)
	if err != nil {
		t.Fatalf("%v (run go generate ./internal/format)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("include/shmrun/format.h is stale (run go generate ./internal/format): line %d is\n\t%s\nthe Go constants give\n\t%s", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("include/shmrun/format.h is stale (run go generate ./internal/format): %d lines, the Go constants give %d", len(gl), len(wl))
	}
}

// TestHeaderMatchesGo compiles a C program against the header and compares
// every offset its layout functions compute with package format's, for
// several n.
func TestHeaderMatchesGo(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found: the C header's layout math is not checked against Go's")
	}
	ns := []int{1, 2, 3, 7, 31, 32, 33, 64, 65, 100, 128, 129, 256, 257, 1000}
	pages := []int64{4096, 16384, 65536}
	var prog strings.Builder
	prog.WriteString("#include <stdio.h>\n#include <string.h>\n#include <shmrun/format.h>\n")
	prog.WriteString("#define P(x) printf(\"%llu\\n\", (unsigned long long)(x))\nint main(void) {\n")
	var want []string
	add := func(expr string, v int64) {
		fmt.Fprintf(&prog, "\tP(%s);\n", expr)
		want = append(want, fmt.Sprintf("%s = %d", expr, v))
	}
	for _, n := range ns {
		s := format.NewSyncLayout(n)
		add(fmt.Sprintf("shmrun_win_header_len(%d)", n), format.WinHeaderLen(n))
		add(fmt.Sprintf("shmrun_sync_row_len(%d)", n), s.RowLen)
		add("shmrun_sync_fence()", s.Fence)
		add("shmrun_sync_global()", s.Global)
		add("shmrun_sync_ranks()", s.Ranks)
		add(fmt.Sprintf("shmrun_sync_post_base(%d)", n), s.Post)
		add(fmt.Sprintf("shmrun_sync_complete_base(%d)", n), s.Complete)
		add(fmt.Sprintf("shmrun_sync_stripes(%d)", n), s.Stripes)
		add(fmt.Sprintf("shmrun_sync_total(%d)", n), s.Total)
		for _, r := range []int{0, 1, n / 2, n - 1} {
			add(fmt.Sprintf("shmrun_win_size_off(%d)", r), format.WinSizeOff(r))
			add(fmt.Sprintf("shmrun_win_disp_unit_off(%d, %d)", n, r), format.WinDispUnitOff(n, r))
			add(fmt.Sprintf("shmrun_win_data_off_off(%d, %d)", n, r), format.WinDataOffOff(n, r))
			add(fmt.Sprintf("shmrun_sync_lock(%d)", r), s.LockOff(r))
			add(fmt.Sprintf("shmrun_sync_doorbell(%d)", r), s.DoorbellOff(r))
			for _, o := range []int{0, n - 1} {
				add(fmt.Sprintf("shmrun_sync_post(%d, %d, %d)", n, o, r), s.PostOff(o, r))
				add(fmt.Sprintf("shmrun_sync_complete(%d, %d, %d)", n, r, o), s.CompleteOff(r, o))
			}
		}
		for _, page := range pages {
			c := format.NewControlLayout(n, page)
			add(fmt.Sprintf("shmrun_ctl_abort(%d)", page), c.AbortOff)
			add(fmt.Sprintf("shmrun_ctl_barrier(%d)", page), c.BarrierOff)
			add(fmt.Sprintf("shmrun_ctl_wake(%d)", page), c.WakeOff)
			add(fmt.Sprintf("shmrun_ctl_rank(%d, %d)", page, n-1), c.RankOff(n-1))
			add(fmt.Sprintf("shmrun_ctl_slots(%d, %d, 0)", page, n), c.SlotsOff(0))
			add(fmt.Sprintf("shmrun_ctl_slots(%d, %d, 1)", page, n), c.SlotsOff(1))
			add(fmt.Sprintf("shmrun_ctl_comm(%d, %d, 5)", page, n), c.CommEntryOff(5))
			add(fmt.Sprintf("shmrun_ctl_mbox(%d, %d, %d)", page, n, n-1), c.MboxLineOff(n-1))
			add(fmt.Sprintf("shmrun_ctl_total(%d, %d)", page, n), c.Total)
			cl := format.NewCollLayout(n, page)
			add(fmt.Sprintf("shmrun_coll_chunk(%d, %d)", n, page), cl.Chunk)
			add(fmt.Sprintf("shmrun_coll_parities(%d)", n), int64(cl.Parities))
			add(fmt.Sprintf("shmrun_coll_flag(%d, %d, %d, 1)", page, n, n-1), cl.FlagOff(n-1, 1))
			add(fmt.Sprintf("shmrun_coll_flag(%d, %d, %d, %d)", page, n, n-1, cl.Parities-1), cl.FlagOff(n-1, cl.Parities-1))
			add(fmt.Sprintf("shmrun_coll_ibar(%d, %d, %d)", page, n, n-1), cl.IbarLineOff(n-1))
			add(fmt.Sprintf("shmrun_coll_staging(%d, %d, %d, 1)", page, n, n-1), cl.StagingOff(n-1, 1))
			add(fmt.Sprintf("shmrun_coll_total(%d, %d)", page, n), cl.Total)
			add(fmt.Sprintf("shmrun_coll_slot_len(%d, %d)", page, n), cl.SlotLen())
			add(fmt.Sprintf("shmrun_coll_slots(%d)", n), int64(cl.Slots))
			add(fmt.Sprintf("shmrun_coll_slot(7, %d)", n), int64(format.CollSlot(7, cl.Slots)))
			add(fmt.Sprintf("shmrun_coll_ibar_len(%d)", n), cl.IbarLen)
			add(fmt.Sprintf("shmrun_coll_sleepers(%d, %d, %d, %d)", page, n, n-1, cl.Parities-1), cl.SleepersOff(n-1, cl.Parities-1))
			il := format.NewInboxLayout(n, page)
			add(fmt.Sprintf("shmrun_p2p_ring(%d)", n), il.Ring)
			add(fmt.Sprintf("shmrun_p2p_eager(%d)", il.Ring), int64(format.P2PEager(il.Ring)))
			add(fmt.Sprintf("shmrun_p2p_chunk(%d)", il.Ring), int64(format.P2PChunk(il.Ring)))
			add(fmt.Sprintf("shmrun_inbox_bell(%d)", page), il.BellOff)
			add(fmt.Sprintf("shmrun_inbox_tail(%d, %d)", page, n-1), il.TailOff(n-1))
			add(fmt.Sprintf("shmrun_inbox_job(%d, %d, %d)", page, n, n-1), il.JobOff(n-1))
			add(fmt.Sprintf("shmrun_inbox_ring(%d, %d, %d)", page, n, n-1), il.RingOff(n-1))
			add(fmt.Sprintf("shmrun_inbox_total(%d, %d)", page, n), il.Total)
		}
	}
	for _, v := range []uint64{0, 0x2000100000000, 0x7fff_8000_7fff_8000, 1<<64 - 1, 0x1234_0003_0004_0005} {
		add(fmt.Sprintf("shmrun_lock_w(UINT64_C(%#x))", v), int64(v&format.LockCounterMask))
		add(fmt.Sprintf("shmrun_lock_r(UINT64_C(%#x))", v), int64(v>>format.LockRShift&format.LockCounterMask))
		add(fmt.Sprintf("shmrun_lock_x(UINT64_C(%#x))", v), int64(v>>format.LockXShift&format.LockXMask))
		add(fmt.Sprintf("shmrun_lock_ticket(UINT64_C(%#x))", v), int64((v>>format.LockTShift-1)&format.LockCounterMask))
	}
	for _, off := range []int64{0, 63, 64, 4096, 1 << 21, 12345678, 1<<40 + 8} {
		add(fmt.Sprintf("shmrun_stripe_index(%d, SHMRUN_NUM_STRIPES)", off), int64(stripeIndex(off, format.NumStripes)))
		add(fmt.Sprintf("shmrun_stripe_index(%d, 4)", off), int64(stripeIndex(off, 4)))
	}
	prog.WriteString("\treturn 0;\n}\n")

	dir := t.TempDir()
	src, bin := filepath.Join(dir, "layout.c"), filepath.Join(dir, "layout")
	if err := os.WriteFile(src, []byte(prog.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	inc, err := filepath.Abs("../../../include")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(gcc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", inc, "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	got := strings.Fields(string(out))
	if len(got) != len(want) {
		t.Fatalf("the C program printed %d values, want %d", len(got), len(want))
	}
	for i, w := range want {
		expr, val, _ := strings.Cut(w, " = ")
		if got[i] != val {
			t.Errorf("C %s = %s, Go says %s", expr, got[i], val)
		}
	}
}

// stripeIndex is atomics.Stripes.Index for a region of n stripes.
func stripeIndex(off int64, n int) int {
	s, err := newStripes(n)
	if err != nil {
		return -1 // the C side never prints -1: the comparison fails
	}
	return s.Index(off)
}
