//go:build !mpi

package main

/*
#include "mpi.h"
*/
import "C"

import (
	"fmt"
	"math"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/winc"
)

// The v forms of the data-movement collectives.
const (
	mvGatherv = iota
	mvScatterv
	mvAllgatherv
	mvAlltoallv
)

var mvvNames = [...]string{"MPI_Gatherv", "MPI_Scatterv", "MPI_Allgatherv", "MPI_Alltoallv"}

// mvvKinds are their collective kinds (format.Coll*).
var mvvKinds = [...]uint8{format.CollGatherv, format.CollScatterv, format.CollAllgatherv, format.CollAlltoallv}

// vArrays reads n counts and displacements (instances and extents of a
// type: the call's arrays named cname and dname) and returns them with the
// instances the buffer must hold from the smallest displacement of a
// nonempty block, lo (0 if none is negative), to hi.
func vArrays(cp *C.int64_t, dp *C.MPI_Aint, n int, cname, dname string) ([]int, []int, vSpan, error) {
	c, d := cArray(cp, n), cArray(dp, n)
	switch {
	case c == nil:
		return nil, nil, vSpan{}, fmt.Errorf("%s is NULL: %w", cname, comm.ErrArg)
	case d == nil:
		return nil, nil, vSpan{}, fmt.Errorf("%s is NULL: %w", dname, comm.ErrArg)
	}
	counts, displs := make([]int, n), make([]int, n)
	var sp vSpan
	for q := range n {
		counts[q], displs[q] = int(c[q]), int(d[q])
		if c[q] < 0 {
			return nil, nil, vSpan{}, fmt.Errorf("%s[%d] is %d, negative: %w", cname, q, int64(c[q]), comm.ErrCount)
		}
		if c[q] > 0 {
			// The _c forms' counts and displacements reach the largest
			// int64: their sum must not wrap into a short buffer, nor
			// a negative one's distance from the largest.
			if int64(d[q]) > math.MaxInt64-int64(c[q]) || int64(d[q]) < -maxSpan {
				return nil, nil, vSpan{}, fmt.Errorf("rank %d's block, %s[%d] %d instances at %s[%d] %d, ends past the largest MPI_Aint: %w",
					q, cname, q, int64(c[q]), dname, q, int64(d[q]), comm.ErrCount)
			}
			sp.hi = max(sp.hi, int64(d[q])+int64(c[q]))
			sp.lo = min(sp.lo, int64(d[q]))
		}
	}
	return counts, displs, sp, nil
}

// vSpan is the instances a v collective's buffer holds blocks in, from
// lo (<= 0: a negative displacement, which MPI allows) to hi.
type vSpan struct{ lo, hi int64 }

// vBuf is the buffer of a v collective's side whose nonempty blocks of t
// lie at displs (in extents of t) within sp, with the type to take them
// with (buf's): where a displacement is negative, the buffer starts as
// many extents before p and the displacements count from there (displs
// is changed).
func vBuf(p *C.char, counts, displs []int, sp vSpan, t *dtype.Type) ([]byte, *dtype.Type, error) {
	if sp.lo < 0 {
		ext := t.Extent()
		back, ok := int64(0), ext > 0 && -sp.lo <= maxSpan/ext
		if ok {
			back = -sp.lo * ext
		}
		switch {
		case !ok:
			return nil, nil, fmt.Errorf("a block at displacement %d of %v (extent %d) before the buffer: %w", sp.lo, t, ext, errUnsupported)
		case isInPlace(p) || p == nil || !addressable(p, -back):
			return nil, nil, fmt.Errorf("blocks at displacement %d of %v before a buffer at %p: %w", sp.lo, t, p, comm.ErrBuffer)
		}
		p = charBefore(p, back)
		for q := range displs {
			if counts[q] > 0 {
				displs[q] -= int(sp.lo)
			}
		}
		sp.hi -= sp.lo
	}
	return buf(p, sp.hi, t)
}

// shmMoveV is Gatherv, Scatterv, Allgatherv and Alltoallv. The counts and
// displacements come as int64 (the C side widens the int forms'); the
// fixed side of a rooted form is (p, count, dt).
//
//export shmMoveV
func shmMoveV(sp *C.char, scount C.int64_t, scounts *C.int64_t, sdispls *C.MPI_Aint, sdt C.uintptr_t,
	rp *C.char, rcount C.int64_t, rcounts *C.int64_t, rdispls *C.MPI_Aint, rdt C.uintptr_t,
	root C.int, h C.uintptr_t, kind, inPlace C.int) C.int {
	call := mvvNames[kind]
	x, code := collArgs(call, h)
	if code != 0 {
		return code
	}
	n := x.c.Size()
	isRoot := x.c.Rank() == int(root)
	refuse := func(err error) error { return winc.RefuseColl(x.c, call, mvvKinds[kind], err) }
	err := func() error {
		st, rt := dtype.Byte, dtype.Byte
		if !(inPlace != 0 && kind != mvScatterv) && (kind != mvScatterv || isRoot) {
			t, err := typeOf(uintptr(sdt))
			if err != nil {
				return refuse(err)
			}
			st = t.t
		}
		if !(inPlace != 0 && kind == mvScatterv) && (kind != mvGatherv || isRoot) {
			t, err := typeOf(uintptr(rdt))
			if err != nil {
				return refuse(err)
			}
			rt = t.t
		}
		switch kind {
		case mvGatherv:
			var counts, displs []int
			var r []byte
			if isRoot {
				var sp vSpan
				var err error
				if counts, displs, sp, err = vArrays(rcounts, rdispls, n, "recvcounts", "displs"); err != nil {
					return refuse(err)
				}
				if r, rt, err = vBuf(rp, counts, displs, sp, rt); err != nil {
					return refuse(err)
				}
			}
			if inPlace != 0 && isRoot {
				return comm.GathervTypeInPlace(x.c, r, 0, counts, displs, rt, int(root))
			}
			s, st, err := buf(sp, int64(scount), st)
			if err != nil {
				return refuse(err)
			}
			if len(s) > 0 && len(r) > 0 && sp == rp {
				return refuse(aliased(sp))
			}
			return comm.GathervType(x.c, s, int(scount), st, r, counts, displs, rt, int(root))
		case mvScatterv:
			var counts, displs []int
			var s []byte
			if isRoot {
				var span vSpan
				var err error
				if counts, displs, span, err = vArrays(scounts, sdispls, n, "sendcounts", "displs"); err != nil {
					return refuse(err)
				}
				if s, st, err = vBuf(sp, counts, displs, span, st); err != nil {
					return refuse(err)
				}
			}
			if inPlace != 0 && isRoot {
				return comm.ScattervTypeInPlace(x.c, s, 0, counts, displs, st, int(root))
			}
			r, rt, err := buf(rp, int64(rcount), rt)
			if err != nil {
				return refuse(err)
			}
			if len(s) > 0 && len(r) > 0 && sp == rp {
				return refuse(aliased(sp))
			}
			return comm.ScattervType(x.c, s, counts, displs, st, r, int(rcount), rt, int(root))
		case mvAllgatherv:
			counts, displs, span, err := vArrays(rcounts, rdispls, n, "recvcounts", "displs")
			if err != nil {
				return refuse(err)
			}
			r, rt, err := vBuf(rp, counts, displs, span, rt)
			if err != nil {
				return refuse(err)
			}
			if inPlace != 0 {
				return comm.AllgathervTypeInPlace(x.c, r, counts, displs, rt)
			}
			s, st, err := buf(sp, int64(scount), st)
			if err != nil {
				return refuse(err)
			}
			if len(s) > 0 && len(r) > 0 && sp == rp {
				return refuse(aliased(sp))
			}
			return comm.AllgathervType(x.c, s, int(scount), st, r, counts, displs, rt)
		default:
			rc, rd, rspan, err := vArrays(rcounts, rdispls, n, "recvcounts", "rdispls")
			if err != nil {
				return refuse(err)
			}
			r, rt, err := vBuf(rp, rc, rd, rspan, rt)
			if err != nil {
				return refuse(err)
			}
			if inPlace != 0 {
				return comm.AlltoallvTypeInPlace(x.c, r, rc, rd, rt)
			}
			sc, sd, sspan, err := vArrays(scounts, sdispls, n, "sendcounts", "sdispls")
			if err != nil {
				return refuse(err)
			}
			s, st, err := vBuf(sp, sc, sd, sspan, st)
			if err != nil {
				return refuse(err)
			}
			if len(s) > 0 && len(r) > 0 && sp == rp {
				return refuse(aliased(sp))
			}
			return comm.AlltoallvType(x.c, s, sc, sd, st, r, rc, rd, rt)
		}
	}()
	if err != nil {
		return x.raise(call, err)
	}
	return C.MPI_SUCCESS
}

// wSide reads one side of an Alltoallw: n counts, byte displacements and
// type handles (the arrays named by names), and returns them with the
// bytes the side's blocks span. Where a block reaches before p (a
// negative displacement, or a type's negative lower bound, which MPI
// allows), the bytes start at its first one and the displacements count
// from there.
func wSide(p *C.char, cp *C.int64_t, dp *C.MPI_Aint, tp *C.uintptr_t, n int, names [3]string) ([]byte, []int, []int, []*dtype.Type, error) {
	c, d, th := cArray(cp, n), cArray(dp, n), cArray(tp, n)
	for i, a := range []bool{c == nil, d == nil, th == nil} {
		if a && n > 0 {
			return nil, nil, nil, nil, fmt.Errorf("%s is NULL: %w", names[i], comm.ErrArg)
		}
	}
	counts, displs, types := make([]int, n), make([]int, n), make([]*dtype.Type, n)
	var hi, first int64 // the blocks' bytes from p: first <= 0 if one reaches before it
	for q := range n {
		t, err := typeOf(uintptr(th[q]))
		if err != nil {
			return nil, nil, nil, nil, fmt.Errorf("%s[%d]: %w", names[2], q, err)
		}
		if c[q] < 0 {
			return nil, nil, nil, nil, fmt.Errorf("%s[%d] is %d, negative: %w", names[0], q, int64(c[q]), comm.ErrCount)
		}
		counts[q], displs[q], types[q] = int(c[q]), int(d[q]), t.t
		if c[q] == 0 {
			continue
		}
		lo, end, err := t.t.Span(int(c[q]))
		switch {
		case err != nil:
			return nil, nil, nil, nil, fmt.Errorf("rank %d's block: %w", q, err)
		case int64(d[q]) > maxSpan || end > maxSpan || int64(d[q]) < -maxSpan || lo < -maxSpan:
			return nil, nil, nil, nil, fmt.Errorf("rank %d's block, %d × %v at byte %d, ends past any address space: %w", q, int64(c[q]), t.t, int64(d[q]), comm.ErrCount)
		}
		if lo < 0 {
			// The block's data start before its displacement: it is
			// taken from its first byte, with its type moved up.
			if types[q], err = moveType(t.t, -lo); err != nil {
				return nil, nil, nil, nil, fmt.Errorf("rank %d's block: %w", q, err)
			}
			displs[q] += int(lo)
		}
		hi = max(hi, int64(d[q])+end)
		first = min(first, int64(d[q])+lo)
	}
	if first < 0 {
		// Blocks before p: the bytes start at the first of them.
		if isInPlace(p) || p == nil || !addressable(p, first) {
			return nil, nil, nil, nil, fmt.Errorf("blocks reaching %d bytes before a buffer at %p: %w", -first, p, comm.ErrBuffer)
		}
		p = charBefore(p, -first)
		for q := range n {
			if counts[q] > 0 {
				displs[q] -= int(first)
			}
		}
		hi -= first
	}
	if hi > 0 && isInPlace(p) {
		return nil, nil, nil, nil, fmt.Errorf("MPI_IN_PLACE as a buffer this call does not take it for: %w", comm.ErrBuffer)
	}
	if hi > 0 && p == nil {
		return nil, nil, nil, nil, fmt.Errorf("a NULL buffer (MPI_BOTTOM with absolute addresses is not supported) for blocks of %d bytes: %w", hi, comm.ErrBuffer)
	}
	return bytesAt(p, hi), counts, displs, types, nil
}

// shmAlltoallw is MPI_Alltoallw and MPI_Alltoallw_c (the int form's
// counts and displacements widened by the C side).
//
//export shmAlltoallw
func shmAlltoallw(sp *C.char, scounts *C.int64_t, sdispls *C.MPI_Aint, stypes *C.uintptr_t,
	rp *C.char, rcounts *C.int64_t, rdispls *C.MPI_Aint, rtypes *C.uintptr_t, h C.uintptr_t, inPlace C.int) C.int {
	const call = "MPI_Alltoallw"
	x, code := collArgs(call, h)
	if code != 0 {
		return code
	}
	n := x.c.Size()
	refuse := func(err error) error { return winc.RefuseColl(x.c, call, format.CollAlltoallv, err) }
	err := func() error {
		r, rc, rd, rt, err := wSide(rp, rcounts, rdispls, rtypes, n, [3]string{"recvcounts", "rdispls", "recvtypes"})
		if err != nil {
			return refuse(err)
		}
		if inPlace != 0 {
			return comm.AlltoallwTypeInPlace(x.c, r, rc, rd, rt)
		}
		s, sc, sd, st, err := wSide(sp, scounts, sdispls, stypes, n, [3]string{"sendcounts", "sdispls", "sendtypes"})
		if err != nil {
			return refuse(err)
		}
		if len(s) > 0 && len(r) > 0 && sp == rp {
			return refuse(aliased(sp))
		}
		return comm.AlltoallwType(x.c, s, sc, sd, st, r, rc, rd, rt)
	}()
	if err != nil {
		return x.raise(call, err)
	}
	return C.MPI_SUCCESS
}
