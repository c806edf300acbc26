package format_test

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/shm"
)

// TestSyncLayout: every group of words one rank writes sits on its own
// lines, 64-bit words are 8-byte aligned, and nothing overlaps, for n from 1
// to a few hundred.
func TestSyncLayout(t *testing.T) {
	for n := 1; n <= 300; n++ {
		s := format.NewSyncLayout(n)
		type span struct {
			what     string
			off, len int64
		}
		spans := []span{{"fence", s.Fence, barrier.LineLen}, {"global", s.Global, format.Line}}
		for r := range n {
			spans = append(spans, span{fmt.Sprint("lock ", r), s.LockOff(r), format.Line}, span{fmt.Sprint("doorbell ", r), s.DoorbellOff(r), format.Line})
		}
		for o := range n {
			spans = append(spans, span{fmt.Sprint("post row ", o), s.PostOff(o, 0), s.RowLen}, span{fmt.Sprint("complete row ", o), s.CompleteOff(o, 0), s.RowLen})
		}
		spans = append(spans, span{"stripes", s.Stripes, format.NumStripes * atomics.StripeLen})
		slices.SortFunc(spans, func(a, b span) int { return int(a.off - b.off) })
		end := int64(0)
		for _, sp := range spans {
			if sp.off%format.Line != 0 || sp.len%format.Line != 0 {
				t.Fatalf("n=%d: %s at %d, %d bytes: not whole lines", n, sp.what, sp.off, sp.len)
			}
			if sp.off < end {
				t.Fatalf("n=%d: %s at %d overlaps the span ending at %d", n, sp.what, sp.off, end)
			}
			end = sp.off + sp.len
		}
		if end != s.Total {
			t.Fatalf("n=%d: spans end at %d, Total is %d", n, end, s.Total)
		}
		if s.RowLen < 4*int64(n) {
			t.Fatalf("n=%d: a row of %d bytes cannot hold %d counters", n, s.RowLen, n)
		}
	}
	if format.GlobalHolders%8 != 0 || format.LockWord%8 != 0 || barrier.OffState%8 != 0 {
		t.Fatal("a 64-bit word is not 8-byte aligned in its line")
	}
	if format.WinSyncOff%8 != 0 || format.WinSyncLen%8 != 0 || format.WinAlign%8 != 0 || format.WinTables%8 != 0 {
		t.Fatal("a 64-bit header field is not 8-byte aligned")
	}
	if format.NumStripes&(format.NumStripes-1) != 0 {
		t.Fatal("NumStripes is not a power of two")
	}
}

// TestLockWordFields: the fields do not overlap, the guards sit right above
// W and R, and the exclusive unlock add is W+1, R+1, X-1.
func TestLockWordFields(t *testing.T) {
	w := uint64(format.LockCounterMask)
	r := uint64(format.LockCounterMask) << format.LockRShift
	x := uint64(format.LockXMask) << format.LockXShift
	tk := uint64(format.LockCounterMask) << format.LockTShift
	guards := uint64(format.LockGuards)
	for _, pair := range [][2]uint64{{w, r}, {w, x}, {w, tk}, {r, x}, {r, tk}, {x, tk}, {guards, w | r | x | tk}} {
		if pair[0]&pair[1] != 0 {
			t.Fatalf("fields %#x and %#x overlap", pair[0], pair[1])
		}
	}
	if guards != (w+1)|(r+1<<format.LockRShift) {
		t.Fatalf("guards %#x are not the bits above W and R", guards)
	}
	v := uint64(3) | 5<<format.LockRShift | 2<<format.LockXShift
	v += format.LockExclusiveUnlock
	if v != 4|6<<format.LockRShift|1<<format.LockXShift {
		t.Fatalf("exclusive unlock gives %#x", v)
	}
}

// TestControlLayout: the wake word is the world barrier's generation, and
// the lines and slots fit in Total.
func TestControlLayout(t *testing.T) {
	for _, page := range []int64{4096, 65536} {
		for _, n := range []int{1, 2, 5, 64, format.MaxRanks} {
			l := format.NewControlLayout(n, page)
			if l.WakeOff != l.BarrierOff+barrier.OffGen || l.BarrierOff != l.AbortOff+format.Line {
				t.Fatalf("n=%d: wake word at %d, barrier at %d", n, l.WakeOff, l.BarrierOff)
			}
			if l.SlotsOff(1)+int64(n)*format.SlotLen > l.Total || l.Total%page != 0 {
				t.Fatalf("n=%d: slots end past Total %d", n, l.Total)
			}
		}
	}
	if format.CtlJob+format.CtlJobLen > 4096 {
		t.Fatal("the control header does not fit in a page")
	}
}

// formatDoc is docs/FORMAT.md.
func formatDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../docs/FORMAT.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tableAfter returns the rows (cells trimmed, header and rule dropped) of
// the first Markdown table after the line that starts with heading.
func tableAfter(t *testing.T, doc, heading string) [][]string {
	t.Helper()
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("FORMAT.md has no heading %q", heading)
	}
	var rows [][]string
	for _, line := range strings.Split(doc[i+1:], "\n")[1:] {
		if !strings.HasPrefix(line, "|") {
			if len(rows) > 0 {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for k := range cells {
			cells[k] = strings.TrimSpace(cells[k])
		}
		rows = append(rows, cells)
	}
	if len(rows) < 2 {
		t.Fatalf("FORMAT.md: no table after %q", heading)
	}
	return rows[2:]
}

// row is what a header table row must say: its offset and type.
type row struct {
	off string
	typ string
}

func checkTable(t *testing.T, doc, heading string, want []row) {
	t.Helper()
	got := tableAfter(t, doc, heading)
	if len(got) != len(want) {
		t.Errorf("FORMAT.md %q: %d rows, the constants give %d", heading, len(got), len(want))
		return
	}
	for i, w := range want {
		if got[i][0] != w.off || got[i][1] != w.typ {
			t.Errorf("FORMAT.md %q row %d: offset %s type %s, the constants give %s %s", heading, i+1, got[i][0], got[i][1], w.off, w.typ)
		}
	}
}

func itoa[T ~int | ~int64 | ~uint32](v T) string { return strconv.FormatInt(int64(v), 10) }

// TestFormatDocTables checks docs/FORMAT.md's tables and layout formulas
// against the constants, so the page cannot drift from the code.
// TestCollLayout: the parts of a collective area do not overlap, the
// staging buffers are page aligned, the parities stay within their
// bounds, and a rank's flag lines' sleepers words fit the lines after its
// Ibarrier line.
func TestCollLayout(t *testing.T) {
	for _, n := range []int{1, 2, 3, 8, 64, 65, 128, 129, 256, 257, 1000} {
		l := format.NewCollLayout(n, shm.PageSize)
		p, s := l.Parities, l.Slots
		if p < 2 || p&(p-1) != 0 || (n <= 2) != (p == 2) || p > 64 || (n > 2 && (p < 8 || (p > 8 && p*n > 4096))) {
			t.Errorf("n=%d: %d parities", n, p)
		}
		if l.FlagOff(n-1, p-1)+format.Line != l.IbarOff || l.IbarLineOff(n-1)+l.IbarLen > l.StageOff ||
			l.StageOff%shm.PageSize != 0 || l.StagingOff(n-1, 1)+l.Chunk != l.Total || l.Total%shm.PageSize != 0 {
			t.Errorf("n=%d: layout %+v", n, l)
		}
		if s < 1 || s&(s-1) != 0 || l.SlotLen()*int64(s) != l.Chunk || l.SlotLen()%64 != 0 ||
			format.CollSlot(uint32(4*s-1), s) != uint32(s-1) {
			t.Errorf("n=%d: %d slots of %d bytes in a chunk of %d", n, s, l.SlotLen(), l.Chunk)
		}
		if l.IbarLen%format.Line != 0 || format.IbarFlagSleepers < format.IbarSleepers+4 ||
			l.SleepersOff(n-1, p-1)+4 > l.IbarLineOff(n-1)+l.IbarLen || l.SleepersOff(0, 0) < l.IbarLineOff(0)+format.Line {
			t.Errorf("n=%d: %d sleepers words from %d do not fit lines of their own in a block of %d", n, p, format.IbarFlagSleepers, l.IbarLen)
		}
	}
}

func TestFormatDocTables(t *testing.T) {
	doc := formatDoc(t)
	checkTable(t, doc, "## Common header (every segment)", []row{
		{itoa(shm.OffMagic), "`[8]byte`"}, {itoa(shm.OffVersion), "`uint32`"}, {itoa(shm.OffKind), "`uint32`"},
		{itoa(shm.OffHeaderLen), "`uint64`"}, {itoa(shm.OffTotalSize), "`uint64`"}, {itoa(shm.OffChecksum), "`uint32`"},
		{itoa(shm.OffReserved), "`uint32`"}, {itoa(shm.FixedHeaderLen), "…"},
	})
	checkTable(t, doc, "## Control segment (kind 1)", []row{
		{itoa(format.CtlRanks), "`uint32`"}, {itoa(format.CtlSlotLen), "`uint32`"}, {itoa(format.CtlJob), fmt.Sprintf("`[%d]byte`", format.CtlJobLen)},
	})
	checkTable(t, doc, "## Barrier (one line)", []row{
		{itoa(barrier.OffState), "`uint64`"}, {itoa(barrier.OffSleepers), "`uint32`"}, {itoa(barrier.OffFail), "`uint32`"}, {itoa(barrier.OffFail + 4), "`uint32`"},
	})
	tb := itoa(format.WinTables)
	checkTable(t, doc, "## Window segment (kind 2)", []row{
		{itoa(format.WinRanks), "`uint32`"}, {itoa(format.WinFlavor), "`uint32`"}, {itoa(format.WinFlags), "`uint32`"}, {itoa(format.WinStripes), "`uint32`"},
		{itoa(format.WinSyncOff), "`uint64`"}, {itoa(format.WinSyncLen), "`uint64`"}, {itoa(format.WinAlign), "`uint64`"},
		{tb, "`[n]uint64`"}, {tb + "+8n", "`[n]uint64`"}, {tb + "+16n", "`[n]uint64`"},
	})

	checkTable(t, doc, "### Dynamic windows (flavor 4): attach tables", []row{
		{itoa(format.AttachSeq), "`uint64`"}, {itoa(format.AttachCount), "`uint64`"}, {itoa(format.AttachAccess), fmt.Sprintf("`[%d]uint64`", format.Line/8)},
		{itoa(format.AttachEntries) + " + " + itoa(format.AttachEntryLen) + "i", "entry i"},
	})
	checkTable(t, doc, "An entry, at `256 + 64i`:", []row{
		{itoa(format.AttachBase), "`uint64`"}, {itoa(format.AttachLen), "`uint64`"}, {itoa(format.AttachMap), "`uint64`"},
		{itoa(format.AttachFileOff), "`uint64`"}, {itoa(format.AttachFileSize), "`uint64`"}, {itoa(format.AttachIno), "`uint64`"},
		{itoa(format.AttachFD), "`uint32`"},
	})
	cc := func(off int) string { return itoa(format.CollCheck + off) }
	checkTable(t, doc, "## Collective area (kind 3)", []row{{itoa(format.CollRanks), "`uint32`"}, {itoa(format.CollChunk), "`uint32`"},
		{cc(format.CheckDone), "`uint32`"}, {cc(format.CheckCount), "`uint32`"}, {cc(format.CheckRound), "`uint32`"},
		{cc(format.CheckRank), "`int32`"}, {cc(format.CheckSame), "`uint8`"}, {cc(format.CheckSig0), "`[16]byte`"}, {cc(format.CheckSigQ), "`[16]byte`"}})

	// Env table: exactly the variables the launcher sets.
	var envs []string
	for _, r := range tableAfter(t, doc, "## Environment of a rank") {
		envs = append(envs, strings.Trim(r[0], "`"))
	}
	wantEnv := []string{format.EnvJob, format.EnvRank, format.EnvSize, format.EnvLocalRank, format.EnvAppNum, format.EnvControlFD, format.EnvShmDir, format.EnvShm, format.EnvSingleCopy, format.EnvStats, format.EnvTrace, format.EnvCheck, format.EnvWait}
	if !slices.Equal(envs, wantEnv) {
		t.Errorf("FORMAT.md environment table lists %v, internal/format has %v", envs, wantEnv)
	}

	// Facts written in prose and formulas, spelled from the constants.
	s1, s2 := format.NewSyncLayout(1), format.NewSyncLayout(2)
	perRank := s2.LockOff(1) - s2.LockOff(0)
	facts := []string{
		fmt.Sprintf("Header length: `%d + %dn`", format.WinTables, format.WinHeaderLen(1)-format.WinTables),
		fmt.Sprintf("| `uint32` | lock stripes m (a power of two; %d) |", format.NumStripes),
		fmt.Sprintf("| rank r's lock line | `%d + %dr`:", s1.Ranks, perRank),
		fmt.Sprintf("| rank r's doorbell line | `%d + %dr + %d`:", s1.Ranks, perRank, s1.DoorbellOff(0)-s1.LockOff(0)),
		fmt.Sprintf("`P = %d + %dn`", s1.Ranks, perRank),
		fmt.Sprintf("`+%d uint32` seq, `+%d uint32` sleepers (event)", format.GlobalSeq, format.GlobalSleepers),
		fmt.Sprintf("`+%d uint32` sleepers (seq is L[r]'s low half)", format.LockSleepers),
		fmt.Sprintf("flags: bit %d noncontig, bit %d huge pages, bit %d no reservation", bit(format.FlagNoncontig), bit(format.FlagHuge), bit(format.FlagNoReserve)),
		fmt.Sprintf("flavor: %d shared, %d allocate, %d create, %d dynamic", format.FlavorShared, format.FlavorAllocate, format.FlavorCreate, format.FlavorDynamic),
		fmt.Sprintf("Size: `%d + %d·max` bytes,\nmax = `shmrun_max_attach` (default %d).", format.AttachEntries, format.AttachEntryLen, format.DefaultMaxAttach),
		fmt.Sprintf("kind: %d control, %d window, %d collective, %d inbox", shm.KindControl, shm.KindWindow, shm.KindCollective, shm.KindInbox),
		fmt.Sprintf("# shmrun segment format, version %d\n", shm.FormatVersion),
		fmt.Sprintf("| 8 | `uint32` | format version (%d) |", shm.FormatVersion),
		fmt.Sprintf("A flag line: `+%d uint32` round (the futex word; its sleepers word is in the\nrank's Ibarrier block), `+4` 4 bytes unused, `+%d uint8` kind, `+%d uint8`\nelement type (below), `+%d uint8` op (%d: a user op), `+%d uint8` failed",
			format.FlagSeq, format.FlagKind, format.FlagType, format.FlagOp, format.OpUser, format.FlagFailed),
		fmt.Sprintf("`MPI_INT32_T`'s for `MPI_INT`), %#x (`SHMRUN_FLAG_TYPE_BYTES`)", format.FlagTypeBytes),
		fmt.Sprintf("%#x (`SHMRUN_FLAG_TYPE_MIXED`) for data mixing basic types", format.FlagTypeMixed),
		fmt.Sprintf("`+%d int32` root, `+%d uint64`\ncount, `+%d` %d inline bytes.",
			format.FlagRoot, format.FlagCount, format.FlagInline, format.InlineLen),
		fmt.Sprintf("%d Barrier to %d Exscan", format.CollBarrier, format.CollExscan),
		fmt.Sprintf("%d Free, %d Dup, %d Split, %d\nCreate, %d SplitType, %d a window's creation and %d Finalize",
			format.CollFree, format.CollDup, format.CollSplit, format.CollCreate, format.CollSplitType, format.CollWinCreate, format.CollFinalize),
		fmt.Sprintf("An Ibarrier block: its line,\n`+%d uint32` calls made (the futex word), `+%d uint32` sleepers; then `+%d\n[P]uint32` the sleepers of the rank's flag lines of parity 0, 1, ...", format.IbarSeq, format.IbarSleepers, format.IbarFlagSleepers),
		fmt.Sprintf("| rank q's Ibarrier block | `page + %dPn + Iq`, I = %d + 4P rounded up to a line", format.Line, format.IbarFlagSleepers),
		fmt.Sprintf("P = %d for n <= 2, else %d, halved while P > %d and Pn > 4096", format.CollParities(2), format.CollParities(3), format.CollParities(4097)),
		fmt.Sprintf("S = %d for n <= 2, else %d", format.CollSlots(2), format.CollSlots(3)),
		fmt.Sprintf("`+%d int32` process id, `+%d uint64` the send buffer's address", format.SinglePID, format.SingleSend),
		fmt.Sprintf("`+%d uint64` the receive buffer's address", format.SingleRecv),
		fmt.Sprintf("inline byte %d is 1 if the\nrank's reads failed", format.SingleFailed),
		fmt.Sprintf("a Bcast of `SHMRUN_SINGLE_BCAST` bytes (%d KiB) or more, or an Allreduce of\n`SHMRUN_SINGLE_ALLREDUCE` (%d KiB) or more", format.SingleBcast>>10, format.SingleAllreduce>>10),
		fmt.Sprintf("exchange slot length S (%d)", format.SlotLen),
		fmt.Sprintf("state (%d running, %d the launcher is ending the job,\n  %d a rank called Abort, %d a rank calling Abort is writing the next two\n  words)", format.AbortNone, format.AbortLauncher, format.AbortByRank, format.AbortClaimed),
		fmt.Sprintf("claims the state by a CAS from %d to %d, stores the\n  code and its rank, then stores %d", format.AbortNone, format.AbortClaimed, format.AbortByRank),

		fmt.Sprintf("(`page + %d + %d`, the barrier's generation)", format.Line, barrier.OffGen),
		fmt.Sprintf("W = bits 0–%d (guard bit %d), R = bits %d–%d (guard bit %d),\nX = bits %d–%d, T = bits %d–63",
			bits(format.LockCounterMask)-1, bits(format.LockCounterMask), format.LockRShift, format.LockRShift+bits(format.LockCounterMask)-1,
			format.LockRShift+bits(format.LockCounterMask), format.LockXShift, format.LockXShift+bits(format.LockXMask)-1, format.LockTShift),
		"Exclusive lock: `v = add(L, 1<<49 + 1<<32)`; ticket `t = ((v >> 49) - 1) mod 2^15`",
		"Exclusive unlock: `add(L, 1 + 1<<16 - 1<<32)`",
		"Shared lock: `v = add(L, 1<<49)`",
		"`add(L, 1<<16)`",
		"Shared unlock: `add(L, 1)`",
		"bit 15 or 31 set: `and(L, ~(1<<15 | 1<<31))`",
		fmt.Sprintf("descriptor (%d)", format.ControlFD),
	}
	// The lock formulas above are spelled by hand; make sure the constants
	// still say the same.
	if format.LockExclusive != 1<<49+1<<32 || format.LockShared != 1<<49 || format.LockOneR != 1<<16 ||
		format.LockSharedUnlock != 1 || format.LockGuards != 1<<15|1<<31 || format.LockExclusiveUnlock != 1+1<<16+(1<<64-1<<32) {
		t.Error("the lock-word adds changed: update FORMAT.md's formulas and this test")
	}
	for _, f := range facts {
		if !strings.Contains(doc, f) {
			t.Errorf("FORMAT.md does not say %q", f)
		}
	}
}

func bit(v int) int { return bits(v - 1) }

// bits is the number of set bits of a mask 2^k-1, k.
func bits(mask int) int {
	n := 0
	for ; mask != 0; mask >>= 1 {
		n++
	}
	return n
}

// The special ranks must keep the values the MPI 5.0 standard ABI fixes
// (its mpi.h): the C interface passes them through untranslated.
func TestABISpecialValues(t *testing.T) {
	for name, c := range map[string][2]int{
		"MPI_UNDEFINED":  {format.Undefined, -32766},
		"MPI_PROC_NULL":  {format.ProcNull, -2},
		"MPI_ROOT":       {format.Root, -3},
		"MPI_IDENT":      {format.Ident, 101},
		"MPI_CONGRUENT":  {format.Congruent, 102},
		"MPI_SIMILAR":    {format.Similar, 103},
		"MPI_UNEQUAL":    {format.Unequal, 104},
		"MPI_ANY_SOURCE": {format.AnySource, -1},
		"MPI_ANY_TAG":    {format.AnyTag, -31},
	} {
		if c[0] != c[1] {
			t.Errorf("%s = %d, the ABI fixes %d", name, c[0], c[1])
		}
	}
}

func TestAbortExitStatus(t *testing.T) {
	for _, tt := range []struct{ code, want int }{
		{1, 1}, {7, 7}, {255, 255}, {0, 1}, {256, 1}, {-256, 1}, {512, 1},
		{300, 44}, {-1, 255}, {-255, 1}, {1<<31 - 1, 255}, {-1 << 31, 1},
	} {
		if got := format.AbortExitStatus(tt.code); got != tt.want {
			t.Errorf("AbortExitStatus(%d) = %d, want %d", tt.code, got, tt.want)
		}
	}
}
