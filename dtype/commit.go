package dtype

import (
	"github.com/shmrun/shmrun/atomics"
)

// Commit compiles t for use in communication (MPI_Type_commit): its runs
// (one instance's data as (offset, length) pieces in type-map order,
// adjacent pieces merged) and its type signature, computed once and kept.
// Local. A type of more than 2^26 runs (pieces of data apart) is ErrNoMem:
// its runs would take gigabytes. Committing twice is
// allowed and does nothing the second time; the old types need no Commit.
func (t *Type) Commit() error {
	if err := check(t, "Commit"); err != nil {
		return err
	}
	if t.nruns > maxRuns {
		return errorf(ErrNoMem, "Commit: %v has more than %d runs (pieces of data apart), more than this implementation compiles", t, maxRuns)
	}
	if _, _, err := t.compile(); err != nil {
		return err
	}
	t.committed.Store(true)
	return nil
}

// compile returns t's runs and signature, computing them the first time
// (two goroutines may both compute them; the first to store wins).
func (t *Type) compile() ([]Run, []SigRun, error) {
	if c := t.comp.Load(); c != nil {
		return c.flat, c.sig, nil
	}
	flat, sig, err := t.flatten()
	if err != nil {
		return nil, nil, err
	}
	t.comp.CompareAndSwap(nil, &compiled{flat: flat, sig: sig})
	c := t.comp.Load()
	return c.flat, c.sig, nil
}

func (t *Type) flatten() ([]Run, []SigRun, error) {
	if t.comb == CombinerNamed {
		sig := []SigRun{{T: t.basic, IsByte: t.isByte, N: 1}}
		if t.pair[1].Len == 0 {
			return []Run{{0, t.size}}, sig, nil
		}
		if t.np == 2 {
			return []Run{t.pair[0], t.pair[1]}, sig, nil
		}
		return []Run{{0, t.pair[0].Len + t.pair[1].Len}}, sig, nil
	}
	runs := make([]Run, 0, 4)
	var sig []SigRun
	if t.size == 0 {
		// No data, no runs: the pieces, which may number 2^40, need no walk.
		return runs, sig, nil
	}
	var err error
	t.pieces(func(p piece) bool {
		if p.count == 0 || p.t.size == 0 {
			// Copies of a type of no data add nothing, however many.
			return true
		}
		var cr []Run
		var cs []SigRun
		if cr, cs, err = p.t.compile(); err != nil {
			return false
		}
		ext := p.t.ub - p.t.lb
		if len(cr) == 1 && cr[0].Len == ext && ext > 0 {
			// Consecutive copies of a dense type: one run.
			runs = appendRun(runs, Run{p.disp + cr[0].Off, ext * p.count})
		} else {
			if int64(len(runs))+int64(len(cr))*p.count > maxRuns {
				err = errorf(ErrCount, "Commit: %v has more than %d runs", t, maxRuns)
				return false
			}
			for j := range p.count {
				base := p.disp + j*ext
				for _, r := range cr {
					runs = appendRun(runs, Run{base + r.Off, r.Len})
				}
			}
		}
		if len(cs) == 1 {
			sig = appendSig(sig, SigRun{cs[0].T, cs[0].IsByte, cs[0].N * p.count})
		} else {
			for range p.count {
				for _, s := range cs {
					sig = appendSig(sig, s)
				}
			}
		}
		return true
	})
	if err != nil {
		return nil, nil, err
	}
	return runs, sig, nil
}

func appendRun(runs []Run, r Run) []Run {
	if r.Len == 0 {
		return runs
	}
	if n := len(runs); n > 0 && runs[n-1].Off+runs[n-1].Len == r.Off {
		runs[n-1].Len += r.Len
		return runs
	}
	return append(runs, r)
}

func appendSig(sig []SigRun, s SigRun) []SigRun {
	if s.N == 0 {
		return sig
	}
	if n := len(sig); n > 0 && sig[n-1].T == s.T && sig[n-1].IsByte == s.IsByte {
		sig[n-1].N += s.N
		return sig
	}
	return append(sig, s)
}

// Runs returns a committed type's runs for one instance (a copy), in
// type-map order. ErrType if t is not committed.
func (t *Type) Runs() ([]Run, error) {
	r, _, err := t.committedForm("Runs")
	return append([]Run(nil), r...), err
}

// CheckCommitted is nil if t is a committed type, ready for communication,
// else ErrType naming why (nil, freed, not committed). Local; it never
// allocates.
func (t *Type) CheckCommitted() error {
	_, _, err := t.committedForm("CheckCommitted")
	return err
}

// Signature returns a committed type's signature for one instance, runs
// of one basic type compressed (a copy).
func (t *Type) Signature() ([]SigRun, error) {
	_, s, err := t.committedForm("Signature")
	return append([]SigRun(nil), s...), err
}

func (t *Type) committedForm(call string) ([]Run, []SigRun, error) {
	if err := check(t, call); err != nil {
		return nil, nil, err
	}
	if !t.committed.Load() {
		return nil, nil, errorf(ErrType, "%s: %v is not committed (Commit it first)", call, t)
	}
	return t.compile()
}

// Elem returns the one basic type t is made of, for accumulates (which
// the standard allows only on types of a single predefined type); false
// when t mixes basic types or holds none (or holds Byte).
func (t *Type) Elem() (atomics.Type, bool) {
	_, s, err := t.committedForm("Elem")
	if err != nil || len(s) != 1 || s[0].IsByte {
		return 0, false
	}
	return s[0].T, true
}

// Span is where count instances of t reach, in bytes from the buffer's
// start: [lo, hi). count 0 or a type of no data gives lo == hi == 0.
func (t *Type) Span(count int) (lo, hi int64, err error) {
	if err := check(t, "Span"); err != nil {
		return 0, 0, err
	}
	if count < 0 {
		return 0, 0, errorf(ErrCount, "count %d is negative", count)
	}
	if count == 0 || t.size == 0 {
		return 0, 0, nil
	}
	ext := t.ub - t.lb
	span, ok := mul(int64(count-1), ext)
	if !ok {
		return 0, 0, errorf(ErrCount, "%d instances of a %d-byte extent overflow", count, ext)
	}
	lo, ok1 := add(t.tlb, min(0, span))
	hi, ok2 := add(t.tub, max(0, span))
	_, ok3 := sub(hi, lo) // a range check computes the length hi - lo
	if !ok1 || !ok2 || !ok3 {
		return 0, 0, errorf(ErrCount, "%d instances of %v overflow", count, t)
	}
	return lo, hi, nil
}

// Fits checks that count instances of t lie inside a buffer of n bytes
// (ErrBuffer naming how far they reach otherwise). Local.
func (t *Type) Fits(count int, n int) error {
	lo, hi, err := t.Span(count)
	if err != nil {
		return err
	}
	if lo < 0 {
		return errorf(ErrBuffer, "%d × %v reaches %d bytes before the buffer's start", count, t, -lo)
	}
	if hi > int64(n) {
		return errorf(ErrBuffer, "%d × %v reaches byte %d of a %d-byte buffer", count, t, hi, n)
	}
	return nil
}

// FitsRecv is Fits for a buffer data arrive in (a receive's, a Get's
// result): count instances of t must moreover hold no more bytes than
// they span. More are entries that overlap, which MPI makes erroneous in
// a receive (MPI 4.1 §5.1: even where the message is too short to write
// an entry twice), so it is ErrType; and the check keeps the staging
// buffer a receive of such data packs through within the size of the
// user's buffer (2^40 instances of a zero-extent int64 in 8 bytes would
// be 8 TiB). Overlaps that leave as many bytes of gaps elsewhere in the
// span are not seen: the check is the bound, not a full overlap test.
func (t *Type) FitsRecv(count int, n int) error {
	if err := t.Fits(count, n); err != nil {
		return err
	}
	lo, hi, _ := t.Span(count)
	if sz, ok := mul(int64(count), t.size); !ok || sz > hi-lo {
		return errorf(ErrType, "%d × %v hold %d bytes in a span of %d: their entries overlap, which data may not where they arrive", count, t, sz, hi-lo)
	}
	return nil
}

// Each calls f with every run of count instances of the committed type t,
// in type-map order (instance i's runs shifted by i extents), merging runs
// that touch. It stops early if f returns false.
func (t *Type) Each(count int, f func(off, n int64) bool) error {
	runs, _, err := t.committedForm("Each")
	if err != nil {
		return err
	}
	if count < 0 {
		return errorf(ErrCount, "count %d is negative", count)
	}
	if len(runs) == 0 {
		return nil // count instances of no data: nothing to walk
	}
	ext := t.ub - t.lb
	if len(runs) == 1 && runs[0].Len == ext && count > 0 {
		f(runs[0].Off, ext*int64(count))
		return nil
	}
	var cur Run
	for i := range int64(count) {
		for _, r := range runs {
			r.Off += i * ext
			if cur.Len > 0 && cur.Off+cur.Len == r.Off {
				cur.Len += r.Len
				continue
			}
			if cur.Len > 0 && !f(cur.Off, cur.Len) {
				return nil
			}
			cur = r
		}
	}
	if cur.Len > 0 {
		f(cur.Off, cur.Len)
	}
	return nil
}

// SameSignature reports whether na instances of a and nb of b have the
// same type signature (the same sequence of basic types), the rule for
// the origin and target types of an RMA call. Byte matches only Byte
// here; both types must be committed.
func SameSignature(a *Type, na int, b *Type, nb int) (bool, error) {
	_, sa, err := a.committedForm("SameSignature")
	if err != nil {
		return false, err
	}
	_, sb, err := b.committedForm("SameSignature")
	if err != nil {
		return false, err
	}
	if len(sa) == 1 && len(sb) == 1 { // the common case: one basic type each
		x, y := sa[0], sb[0]
		nx, okx := mul(x.N, int64(na))
		ny, oky := mul(y.N, int64(nb))
		return okx && oky && (nx == 0 && ny == 0 || x.T == y.T && x.IsByte == y.IsByte && nx == ny), nil
	}
	ia, ib := expand(sa, na), expand(sb, nb)
	x, okx := ia()
	y, oky := ib()
	for okx && oky {
		if x.T != y.T || x.IsByte != y.IsByte {
			return false, nil
		}
		m := min(x.N, y.N)
		x.N -= m
		y.N -= m
		if x.N == 0 {
			x, okx = ia()
		}
		if y.N == 0 {
			y, oky = ib()
		}
	}
	return okx == oky, nil
}

// expand iterates the signature of n instances, merging across instances.
func expand(s []SigRun, n int) func() (SigRun, bool) {
	i, k := 0, 0
	var pending SigRun
	havePending := false
	next := func() (SigRun, bool) {
		if len(s) == 0 || i >= n {
			return SigRun{}, false
		}
		r := s[k]
		k++
		if k == len(s) {
			k, i = 0, i+1
		}
		return r, true
	}
	return func() (SigRun, bool) {
		if !havePending {
			var ok bool
			if pending, ok = next(); !ok {
				return SigRun{}, false
			}
		}
		havePending = false
		for {
			r, ok := next()
			if !ok {
				return pending, true
			}
			if r.T == pending.T && r.IsByte == pending.IsByte {
				pending.N += r.N
				continue
			}
			out := pending
			pending, havePending = r, true
			return out, true
		}
	}
}

// Iter walks the runs of count instances of a committed type in type-map
// order without allocating (Each does the same with a callback, merging
// across instances).
type Iter struct {
	runs  []Run
	ext   int64
	count int
	i, k  int
}

// Iter returns an iterator over count instances of t.
func (t *Type) Iter(count int) (Iter, error) {
	runs, _, err := t.committedForm("Iter")
	if err != nil {
		return Iter{}, err
	}
	if count < 0 {
		return Iter{}, errorf(ErrCount, "count %d is negative", count)
	}
	if len(runs) == 0 {
		count = 0
	}
	return Iter{runs: runs, ext: t.ub - t.lb, count: count}, nil
}

// Next returns the next run, false at the end.
func (it *Iter) Next() (off, n int64, ok bool) {
	if it.i >= it.count {
		return 0, 0, false
	}
	r := it.runs[it.k]
	off = r.Off + int64(it.i)*it.ext
	if it.k++; it.k == len(it.runs) {
		it.k, it.i = 0, it.i+1
	}
	return off, r.Len, true
}

// Contig reports whether count instances of the committed type t are one
// run of bytes, and where: off is the run's offset, n its length. Calls
// use it to move such data as plain bytes.
func (t *Type) Contig(count int) (off, n int64, ok bool) {
	if !t.valid() || count < 0 {
		return 0, 0, false
	}
	c := t.comp.Load()
	if c == nil || !t.committed.Load() {
		return 0, 0, false
	}
	runs := c.flat
	if count == 0 || len(runs) == 0 {
		return 0, 0, true
	}
	ext := t.ub - t.lb
	if len(runs) != 1 || (count > 1 && runs[0].Len != ext) {
		return 0, 0, false
	}
	n, ok = mul(runs[0].Len, int64(count))
	if count > 1 {
		n, ok = mul(ext, int64(count))
	}
	return runs[0].Off, n, ok
}
