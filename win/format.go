package win

import (
	"encoding/binary"
	"fmt"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/shm"
)

// Window segment header (docs/FORMAT.md), after the common fixed header:
//
//	40 uint32 ranks (n)
//	44 uint32 flavor (1 shared, 2 allocate)
//	48 uint32 flags: bit 0 noncontig, bit 1 huge pages, bit 2 no reservation
//	52 uint32 lock stripes
//	56 uint64 sync block offset
//	64 uint64 sync block length
//	72 uint64 per-rank alignment (noncontig)
//	80 [n]uint64 sizes, then [n]uint64 disp units, then [n]uint64 data offsets
const (
	hdrRanks   = shm.FixedHeaderLen
	hdrFlavor  = hdrRanks + 4
	hdrFlags   = hdrFlavor + 4
	hdrStripes = hdrFlags + 4
	hdrSyncOff = hdrStripes + 4
	hdrSyncLen = hdrSyncOff + 8
	hdrAlign   = hdrSyncLen + 8
	hdrTables  = hdrAlign + 8

	flagNoncontig = 1 << 0
	flagHuge      = 1 << 1
	flagNoReserve = 1 << 2

	numStripes = 256
)

func headerLen(n int) int64 { return hdrTables + 24*int64(n) }

// syncLayout places the sync block's words. Every group of words that one
// rank writes while others read sits on its own cache line.
//
//	fence barrier                  one line (barrier package layout)
//	global lock line               uint64 G: LockAll holders (A);
//	                               +8 uint32 event seq, +12 uint32 sleepers
//	per rank r, two lines:         lock line: uint64 ticket lock word L[r],
//	                               +8 uint32 sleepers (futex word: low half of L[r]);
//	                               doorbell line: +0 seq, +4 sleepers (PSCW)
//	post matrix                    row o (one per origin, line-aligned): [n]uint32,
//	                               entry t = Posts by t whose group held o
//	complete matrix                row t: [n]uint32, entry o = Completes by o to t
//	lock stripes                   numStripes x atomics.StripeLen (accumulates)
type syncLayout struct {
	n                                          int
	fence, global, ranks, post, complete, strp int64
	rowLen, total                              int64
}

const line = shm.CacheLine

func newSyncLayout(n int) syncLayout {
	s := syncLayout{n: n}
	s.rowLen, _ = shm.AlignUp(4*int64(n), line)
	s.fence = 0
	s.global = s.fence + barrier.LineLen
	s.ranks = s.global + line
	s.post = s.ranks + 2*line*int64(n)
	s.complete = s.post + s.rowLen*int64(n)
	s.strp = s.complete + s.rowLen*int64(n)
	s.total = s.strp + numStripes*atomics.StripeLen
	return s
}

func (s syncLayout) lockOff(r int) int64     { return s.ranks + 2*line*int64(r) }
func (s syncLayout) doorbellOff(r int) int64 { return s.lockOff(r) + line }
func (s syncLayout) postOff(origin, target int) int64 {
	return s.post + s.rowLen*int64(origin) + 4*int64(target)
}
func (s syncLayout) completeOff(target, origin int) int64 {
	return s.complete + s.rowLen*int64(target) + 4*int64(origin)
}

// segmentSpec is everything the header records.
type segmentSpec struct {
	flavor    Flavor
	flags     uint32
	layout    shm.WindowLayout
	dispUnits []int64
}

func writeWindowHeader(mem []byte, sp segmentSpec) error {
	le := binary.LittleEndian
	n := len(sp.layout.Sizes)
	le.PutUint32(mem[hdrRanks:], uint32(n))
	le.PutUint32(mem[hdrFlavor:], uint32(sp.flavor))
	le.PutUint32(mem[hdrFlags:], sp.flags)
	le.PutUint32(mem[hdrStripes:], numStripes)
	le.PutUint64(mem[hdrSyncOff:], uint64(sp.layout.SyncOff))
	le.PutUint64(mem[hdrSyncLen:], uint64(sp.layout.SyncLen))
	le.PutUint64(mem[hdrAlign:], uint64(sp.layout.Align))
	for i := range n {
		le.PutUint64(mem[hdrTables+8*i:], uint64(sp.layout.Sizes[i]))
		le.PutUint64(mem[hdrTables+8*(n+i):], uint64(sp.dispUnits[i]))
		le.PutUint64(mem[hdrTables+8*(2*n+i):], uint64(sp.layout.Offsets[i]))
	}
	return shm.WriteHeader(mem, shm.Header{Kind: shm.KindWindow, HeaderLen: uint64(headerLen(n)), TotalSize: uint64(sp.layout.Total)})
}

// checkWindowHeader validates the header a peer wrote against the layout this
// rank computed from the same agreed inputs: any difference is a foreign or
// corrupt segment.
func checkWindowHeader(mem []byte, size int64, sp segmentSpec) error {
	h, err := shm.ReadHeader(mem, shm.KindWindow, size)
	if err != nil {
		return err
	}
	le := binary.LittleEndian
	n := len(sp.layout.Sizes)
	want := func(what string, got, exp uint64) error {
		if got != exp {
			return fmt.Errorf("shm: window header: %s is %d, expected %d: %w", what, got, exp, shm.ErrCorrupt)
		}
		return nil
	}
	checks := []error{
		want("header length", h.HeaderLen, uint64(headerLen(n))),
		want("total size", h.TotalSize, uint64(sp.layout.Total)),
		want("ranks", uint64(le.Uint32(mem[hdrRanks:])), uint64(n)),
		want("flavor", uint64(le.Uint32(mem[hdrFlavor:])), uint64(sp.flavor)),
		want("flags", uint64(le.Uint32(mem[hdrFlags:])), uint64(sp.flags)),
		want("stripes", uint64(le.Uint32(mem[hdrStripes:])), numStripes),
		want("sync offset", le.Uint64(mem[hdrSyncOff:]), uint64(sp.layout.SyncOff)),
		want("sync length", le.Uint64(mem[hdrSyncLen:]), uint64(sp.layout.SyncLen)),
		want("alignment", le.Uint64(mem[hdrAlign:]), uint64(sp.layout.Align)),
	}
	for i := range n {
		checks = append(checks,
			want(fmt.Sprintf("size of rank %d", i), le.Uint64(mem[hdrTables+8*i:]), uint64(sp.layout.Sizes[i])),
			want(fmt.Sprintf("disp unit of rank %d", i), le.Uint64(mem[hdrTables+8*(n+i):]), uint64(sp.dispUnits[i])),
			want(fmt.Sprintf("offset of rank %d", i), le.Uint64(mem[hdrTables+8*(2*n+i):]), uint64(sp.layout.Offsets[i])))
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	return nil
}
