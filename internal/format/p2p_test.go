package format_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/shm"
)

// The inbox layout: parts in order, lines apart, rings on a page, inside
// the total; eager messages and chunks fit the ring.
func TestInboxLayout(t *testing.T) {
	const page = 4096
	for _, n := range []int{1, 2, 8, 9, 16, 17, 64, 65, 1024, 1025, format.MaxRanks} {
		l := format.NewInboxLayout(n, page)
		if l.BellOff != page || l.TailOff(0) != page+format.Line || l.JobOff(0) != l.TailOff(n-1)+format.Line {
			t.Errorf("n=%d: lines at %d, %d, %d", n, l.BellOff, l.TailOff(0), l.JobOff(0))
		}
		if l.RingOff(0)%page != 0 || l.RingOff(0) < l.JobOff(n-1)+format.Line || l.Total != l.RingOff(n-1)+l.Ring {
			t.Errorf("n=%d: rings at %d, total %d", n, l.RingOff(0), l.Total)
		}
		if l.Ring&(l.Ring-1) != 0 || l.Ring%format.PktCell != 0 {
			t.Errorf("n=%d: ring of %d bytes is not a power of two of cells", n, l.Ring)
		}
		eager := format.P2PEager(l.Ring)
		if int64(format.PktHeader+eager) > l.Ring/2 || eager <= 0 {
			t.Errorf("n=%d: eager limit %d in a %d-byte ring", n, eager, l.Ring)
		}
		chunk := format.P2PChunk(l.Ring)
		if k := int64(format.PktHeader + chunk); k > l.Ring/2 || chunk < eager/2 {
			t.Errorf("n=%d: a chunk of %d does not fit half a %d-byte ring, or is less than half an eager message", n, chunk, l.Ring)
		}
	}
	if format.PktStamp != 0 || format.PktHeader%8 != 0 || format.RTSLen > format.PktCell || format.CTSLen > format.PktCell {
		t.Error("packet header fields moved: update FORMAT.md")
	}
	if format.JobTagShift != 2*format.JobBackShift || format.JobCountMask != 1<<format.JobBackShift-1 || format.JobTagMask != 1<<(64-format.JobTagShift)-1 {
		t.Error("the claim word's fields overlap or leave a gap")
	}
}

// FORMAT.md's inbox tables and the rank line's words, from the constants.
func TestInboxDoc(t *testing.T) {
	doc := formatDoc(t)
	checkTable(t, doc, "## Inbox (kind 4)", []row{{itoa(format.InboxRanks), "`uint32`"}, {itoa(format.InboxRing), "`uint32`"}})
	facts := []string{
		fmt.Sprintf("| 0 | `uint32` | state: %d started, %d after Init, %d after Finalize, %d in Finalize |", format.RankStarted, format.RankInit, format.RankFinalized, format.RankFinalizing),
		fmt.Sprintf("| %d | `uint32` | pid |", format.RankPID),
		fmt.Sprintf("| %d | `uint32` | the rank's descriptor of its inbox (kind %d)", format.RankInbox, shm.KindInbox),
		fmt.Sprintf("| %d | `uint32` | goroutines asleep in a wait", format.RankSleepers),
		fmt.Sprintf("| %d | `uint32` | waits that ended", format.RankWakes),
		fmt.Sprintf("| %d | `uint32` | what a sleeper waits for (the last asleep)", format.RankWaitKind),
		fmt.Sprintf("| %d | `int32` | its peer's world rank", format.RankWaitPeer),
		fmt.Sprintf("| %d | `int32` | its tag, or %d (any) |", format.RankWaitTag, format.AnyTag),
		fmt.Sprintf("`page + %d + %ds`", format.Line, format.Line),
		fmt.Sprintf("`page + %d + %dn + %ds`", format.Line, format.Line, format.Line),
		fmt.Sprintf("| %d | `uint32` | stamp", format.PktStamp),
		fmt.Sprintf("| %d | `uint8` | kind: %d Eager, %d Sync, %d RTS, %d CTS, %d Data, %d Fin, %d Skip, %d Wrote |",
			format.PktKind, format.PktEager, format.PktSync, format.PktRTS, format.PktCTS, format.PktData, format.PktFin, format.PktSkip, format.PktWrote),
		fmt.Sprintf("| %d | `uint24` | type signature digest", format.PktSig),
		fmt.Sprintf("| %d | `uint32` | communicator context", format.PktCtx),
		fmt.Sprintf("| %d | `int32` | tag", format.PktTag),
		fmt.Sprintf("| %d | `uint64` | message bytes", format.PktSize),
		fmt.Sprintf("| %d | `uint64` | the sender's request", format.PktID),
		fmt.Sprintf("| %d | … | payload", format.PktHeader),
		// The CTS payload's three words, in order from PktHeader (below).
		"`uint64` receiver's request, `uint64` bytes taken and `uint64` receiver's buffer address or 0 (CTS)",
		fmt.Sprintf("rounded up to %d-byte cells", format.PktCell),
		fmt.Sprintf("`min(8192, R/4 - %d)`", format.PktHeader),
		fmt.Sprintf("chunks of `R/4 - %d` bytes (`R/2 - %d` for rings of 16 KiB and less)", format.PktCell, format.PktCell),
		fmt.Sprintf("| %d | `uint64` | the job in progress: its number on this line (1, 2, ...), 0 for none |", format.JobID),
		fmt.Sprintf("| %d | `uint64` | claim word: chunks taken from the front (bits 0-%d), from the back (%d-%d), the job's tag = its number mod 2^%d (%d-63) |",
			format.JobClaim, format.JobBackShift-1, format.JobBackShift, format.JobTagShift-1, 64-format.JobTagShift, format.JobTagShift),
		fmt.Sprintf("| %d | `uint32` | chunk count k |", format.JobChunks),
	}
	for _, f := range facts {
		if !strings.Contains(doc, f) {
			t.Errorf("FORMAT.md does not say %q", f)
		}
	}
	if format.CTSRecvID != format.PktHeader || format.CTSAccept != format.CTSRecvID+8 || format.CTSAddr != format.CTSAccept+8 ||
		format.CTSLen != format.CTSAddr+8 || format.CTSLen > format.PktCell {
		t.Error("the CTS payload is not the three words FORMAT.md lists, in one cell")
	}
	for n, want := range map[int]string{8: "64 KiB up to 8 ranks", 16: "32 KiB up to 16", 64: "16 KiB up to 64", 1024: "4 KiB up to\n1024", 1025: "1 KiB beyond"} {
		if !strings.Contains(doc, want) || !strings.HasPrefix(want, fmt.Sprint(format.P2PRing(n)>>10)) {
			t.Errorf("FORMAT.md's ring sizes: %q, the code gives %d KiB at %d ranks", want, format.P2PRing(n)>>10, n)
		}
	}
}
