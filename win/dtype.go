//go:build !mpi

package win

import (
	"errors"

	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/rmacheck"
	"github.com/shmrun/shmrun/shm"
)

// RMA with derived datatypes (package dtype) on either side: the origin
// buffer holds count instances of the origin type from its first byte;
// the target data are count instances of the target type at disp (in the
// target's disp units; the type's own offsets are bytes). The two type
// signatures must match (the same sequence of basic types, ErrType
// otherwise), both types must be committed (ErrType), the origin instances
// must lie inside the buffer (ErrBuffer), and the target instances, over
// their whole true extent, inside the target's memory (ErrRMARange),
// before any byte moves. Every window flavor and epoch works as for Put.

// zip walks two run iterators in step, calling f with pieces of the same
// length: an origin offset, a target offset and the length.
func zip(a, b *dtype.Iter, f func(ao, bo, n int64)) {
	ao, an, aok := a.Next()
	bo, bn, bok := b.Next()
	for aok && bok {
		n := min(an, bn)
		if n > 0 {
			f(ao, bo, n)
		}
		ao, an, bo, bn = ao+n, an-n, bo+n, bn-n
		if an == 0 {
			ao, an, aok = a.Next()
		}
		if bn == 0 {
			bo, bn, bok = b.Next()
		}
	}
}

// typeError maps a dtype error to this package's classes.
func typeError(call string, w *Win, err error) error {
	switch {
	case errors.Is(err, dtype.ErrBuffer):
		return errorf(ErrBuffer, "%s on rank %d: %v", call, w.Rank(), err)
	case errors.Is(err, dtype.ErrCount):
		return errorf(ErrCount, "%s on rank %d: %v", call, w.Rank(), err)
	}
	return errorf(ErrType, "%s on rank %d: %v", call, w.Rank(), err)
}

// typedRange checks an origin (buf, count, type) against a target (count,
// type) and returns the target's span.
func typedRange(call string, w *Win, buf []byte, ocount int, otype *dtype.Type, tcount int, ttype *dtype.Type) (lo, hi int64, err error) {
	if err := w.live(call); err != nil {
		return 0, 0, err
	}
	if ocount < 0 || tcount < 0 {
		return 0, 0, errorf(ErrCount, "%s on rank %d: a count is negative (%d here, %d at the target)", call, w.rank, ocount, tcount)
	}
	same := otype == ttype && ocount == tcount && otype.Committed() // the common call: nothing to compare
	if !same {
		if same, err = dtype.SameSignature(otype, ocount, ttype, tcount); err != nil {
			return 0, 0, typeError(call, w, err)
		}
	}
	if !same {
		return 0, 0, errorf(ErrType, "%s on rank %d: %d × %v and %d × %v differ in type signature", call, w.rank, ocount, otype, tcount, ttype)
	}
	if err := otype.Fits(ocount, len(buf)); err != nil {
		return 0, 0, typeError(call, w, err)
	}
	lo, hi, err = ttype.Span(tcount)
	if err != nil {
		return 0, 0, typeError(call, w, err)
	}
	return lo, hi, nil
}

// landsTarget checks that data may land in tcount instances of ttype,
// spanning lo..hi, at the target of a Put or an accumulate: their entries
// may not overlap (MPI 4.1 §12.3.1), as a receive's (dtype.FitsRecv).
func landsTarget(call string, w *Win, tcount int, ttype *dtype.Type, lo, hi int64) error {
	if sz := ttype.Size() * int64(tcount); sz > hi-lo {
		return errorf(ErrType, "%s on rank %d: %d × %v hold %d bytes in a span of %d at the target: their entries overlap, which data may not where they land", call, w.rank, tcount, ttype, sz, hi-lo)
	}
	return nil
}

// fitsResult checks that data may arrive in rcount instances of rtype in
// result (dtype.FitsRecv: no overlapping entries).
func fitsResult(call string, w *Win, result []byte, rcount int, rtype *dtype.Type) error {
	if err := rtype.FitsRecv(rcount, len(result)); err != nil {
		return typeError(call, w, err)
	}
	return nil
}

// PutType is Put with derived datatypes (MPI_Put with an origin and a
// target datatype): ocount instances of otype from origin go into tcount
// instances of ttype at disp on target. Local, completes eagerly; see
// above for the checks. On memory a Create window reaches by system calls
// it is one process_vm_writev per 1024 target runs.
func PutType(w *Win, origin []byte, ocount int, otype *dtype.Type, target, disp, tcount int, ttype *dtype.Type) error {
	const call = "PutType"
	if w != nil && otype == ttype && ocount == tcount && w.obs == nil && w.chk == nil {
		// The common call, one contiguous type on both sides: its
		// bytes inside origin are all typedRange would check here, and
		// Put's paths check the rest (the same answer, ~20 ns sooner).
		if off, n, ok := otype.Contig(ocount); ok && off >= 0 && n <= int64(len(origin))-off {
			return w.putAt(call, origin[off:off+n], target, disp, off)
		}
	}
	lo, hi, err := typedRange(call, w, origin, ocount, otype, tcount, ttype)
	if err != nil {
		return err
	}
	if err := landsTarget(call, w, tcount, ttype, lo, hi); err != nil {
		return err
	}
	if w.obs != nil {
		w.obs.RMA("Put", target, int(ttype.Size())*tcount)
	}
	w.checkTyped("Put", target, disp, tcount, ttype, rmacheck.Write, 0, 0)
	if oo, on, ok := otype.Contig(ocount); ok {
		if to, tn, ok := ttype.Contig(tcount); ok && on == tn && to >= 0 {
			// Plain bytes on both sides: Put's paths (to ≥ 0 so that
			// disp's unit and the offset add up in Put's terms).
			return w.putAt(call, origin[oo:oo+on], target, disp, to)
		}
	}
	wh, run, err := w.reachTyped(call, target, disp, lo, hi)
	if !run {
		return err
	}
	defer w.leave(&wh)
	oi, _ := otype.Iter(ocount)
	if wh.data != nil && otype == ttype && ocount == tcount {
		// One type on both sides (a halo, a block): one walk, each run
		// at the same offset on both sides.
		for o, n, ok := oi.Next(); ok; o, n, ok = oi.Next() {
			shm.CopyRun(wh.data[o-lo:o-lo+n], origin[o:o+n])
		}
		return nil
	}
	ti, _ := ttype.Iter(tcount)
	if wh.data != nil {
		// zip, spelled out: a closure call per run costs ~5 ns, a good
		// share of a 512-byte copy.
		ao, an, aok := oi.Next()
		bo, bn, bok := ti.Next()
		for aok && bok {
			n := min(an, bn)
			shm.CopyRun(wh.data[bo-lo:bo-lo+n], origin[ao:ao+n])
			ao, an, bo, bn = ao+n, an-n, bo+n, bn-n
			if an == 0 {
				ao, an, aok = oi.Next()
			}
			if bn == 0 {
				bo, bn, bok = ti.Next()
			}
		}
		return nil
	}
	packed := make([]byte, 0, otype.Size()*int64(ocount))
	var pieces []shm.Piece
	zip(&oi, &ti, func(o, t, n int64) {
		packed = append(packed, origin[o:o+n]...)
		pieces = appendPiece(pieces, shm.Piece{Addr: wh.addr + uint64(t-lo), Len: int(n)})
	})
	return w.remoteErr(call, &wh, shm.WriteProcessPieces(wh.pid, pieces, packed))
}

// GetType is Get with derived datatypes (MPI_Get with an origin and a
// target datatype): tcount instances of ttype at disp on target go into
// rcount instances of rtype in result. Local; as PutType.
func GetType(w *Win, result []byte, rcount int, rtype *dtype.Type, target, disp, tcount int, ttype *dtype.Type) error {
	const call = "GetType"
	if w != nil && rtype == ttype && rcount == tcount && w.obs == nil && w.chk == nil {
		// PutType's common call, the other way (from the type's first
		// byte: Get has no offset within its target range). An error
		// takes the general path, which names GetType (Get has moved no
		// byte then).
		if off, n, ok := rtype.Contig(rcount); ok && off == 0 && n <= int64(len(result)) && w.Get(result[:n], target, disp) == nil {
			return nil
		}
	}
	lo, hi, err := typedRange(call, w, result, rcount, rtype, tcount, ttype)
	if err == nil {
		err = fitsResult(call, w, result, rcount, rtype)
	}
	if err != nil {
		return err
	}
	if w.obs != nil {
		w.obs.RMA("Get", target, int(ttype.Size())*tcount)
	}
	w.checkTyped("Get", target, disp, tcount, ttype, rmacheck.Read, 0, 0)
	wh, run, err := w.reachTyped(call, target, disp, lo, hi)
	if !run {
		return err
	}
	defer w.leave(&wh)
	ri, _ := rtype.Iter(rcount)
	if wh.data != nil && rtype == ttype && rcount == tcount {
		for r, n, ok := ri.Next(); ok; r, n, ok = ri.Next() {
			shm.CopyRun(result[r:r+n], wh.data[r-lo:r-lo+n])
		}
		return nil
	}
	ti, _ := ttype.Iter(tcount)
	if wh.data != nil {
		zip(&ri, &ti, func(r, t, n int64) { shm.CopyRun(result[r:r+n], wh.data[t-lo:t-lo+n]) })
		return nil
	}
	var pieces []shm.Piece
	var total int64
	ti2, _ := ttype.Iter(tcount)
	for {
		t, n, ok := ti2.Next()
		if !ok {
			break
		}
		pieces = appendPiece(pieces, shm.Piece{Addr: wh.addr + uint64(t-lo), Len: int(n)})
		total += n
	}
	packed := make([]byte, total)
	if err := shm.ReadProcessPieces(wh.pid, packed, pieces); err != nil {
		return w.remoteErr(call, &wh, err)
	}
	at := int64(0)
	for {
		r, n, ok := ri.Next()
		if !ok {
			return nil
		}
		copy(result[r:r+n], packed[at:at+n])
		at += n
	}
}

// reachTyped resolves the target span [lo, hi) of a typed call; run is
// false when there is nothing to move (an error, ProcNull, an empty span),
// and then nothing is left to leave.
func (w *Win) reachTyped(call string, target, disp int, lo, hi int64) (wh where, run bool, err error) {
	wh, err = w.resolveRange(call, target, disp, lo, hi-lo)
	if err != nil || wh.noop {
		return wh, false, err
	}
	if hi == lo {
		w.leave(&wh)
		return wh, false, nil
	}
	return wh, true, nil
}

// appendPiece appends p, merging it into the last piece when they touch.
func appendPiece(ps []shm.Piece, p shm.Piece) []shm.Piece {
	if n := len(ps); n > 0 && ps[n-1].Addr+uint64(ps[n-1].Len) == p.Addr {
		ps[n-1].Len += p.Len
		return ps
	}
	return append(ps, p)
}

// putAt is Put of src at byte off past disp: the fast path of Put where
// the target part is mapped, else resolveRange's.
func (w *Win) putAt(call string, src []byte, target, disp int, off int64) error {
	if off == 0 && w.obs == nil && w.chk == nil { // observed, PutType counted the call
		return w.Put(src, target, disp)
	}
	if uint(target) < uint(len(w.parts)) && w.ep.canAccess(target) {
		p := &w.parts[target]
		if uint(disp) <= p.maxDisp {
			start := int64(disp)*p.dispUnit + off
			if start <= int64(len(p.data)) && int64(len(src)) <= int64(len(p.data))-start {
				shm.Copy(p.data[start:], src)
				return nil
			}
		}
	}
	wh, err := w.resolveRange(call, target, disp, off, int64(len(src)))
	if err != nil || wh.noop {
		return err
	}
	defer w.leave(&wh)
	if wh.data == nil {
		return w.remoteErr(call, &wh, shm.WriteProcess(wh.pid, wh.addr, src))
	}
	shm.Copy(wh.data, src)
	return nil
}
