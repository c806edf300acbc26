//go:build !mpi

package comm_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/internal/raw"
)

// Collectives with derived datatypes: every call with strided data on
// both sides against what the data must become, typed and generic forms
// in one call, structs, and mismatches reported on every rank.

// strideT is 4 float64 at every other place, resized to 8 places: the
// data of instance i sit at elements 8i, 8i+2, 8i+4, 8i+6.
var strideT = func() *dtype.Type {
	v := mustType(dtype.Vector(4, 1, 2, dtype.Basic(atomics.Float64)))
	return mustType(dtype.Resized(v, 0, 64))
}()

const perInst = 4 // float64 per instance of strideT

// spread lays vals out as count instances of strideT, the gaps holding -1.
func spread(vals []float64) []byte {
	out := make([]float64, 2*len(vals))
	for i := range out {
		out[i] = -1
	}
	for i, v := range vals {
		out[2*i] = v
	}
	return raw.Bytes(out)
}

// gather is spread's inverse; it fails if a gap changed.
func gatherVals(b []byte) ([]float64, error) {
	f, _ := raw.View[float64](b)
	vals := make([]float64, len(f)/2)
	for i := range vals {
		if f[2*i+1] != -1 {
			return nil, fmt.Errorf("gap %d holds %v", i, f[2*i+1])
		}
		vals[i] = f[2*i]
	}
	return vals, nil
}

func seq(base, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(base + i)
	}
	return v
}

func sameVals(what string, got []float64, err error, want []float64) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("%s: got %v, want %v", what, got, want)
	}
	return nil
}

func collTyped(c *comm.Comm) error {
	n, me := c.Size(), c.Rank()
	f64 := dtype.Basic(atomics.Float64)
	root := n - 1

	// Bcast: strided on every rank but rank 0, which passes float64s.
	var err error
	if me == 0 && n > 1 {
		b := make([]float64, 3*perInst)
		if me == root {
			copy(b, seq(10, len(b)))
		}
		err = comm.Bcast(c, b, root)
		if e := sameVals("Bcast beside BcastType", b, err, seq(10, 3*perInst)); e != nil {
			return e
		}
	} else {
		b := spread(make([]float64, 3*perInst))
		if me == root {
			b = spread(seq(10, 3*perInst))
		}
		err = comm.BcastType(c, b, 3, strideT, root)
		got, gerr := gatherVals(b)
		if e := sameVals("BcastType", got, firstNonNil(err, gerr), seq(10, 3*perInst)); e != nil {
			return e
		}
	}

	// Gather: 2 strided instances from each into root's float64s; then
	// into root's strided buffer.
	all := make([]float64, 0)
	for q := range n {
		all = append(all, seq(100*q, 2*perInst)...)
	}
	recv := make([]float64, n*2*perInst)
	err = comm.GatherType(c, spread(seq(100*me, 2*perInst)), 2, strideT, raw.Bytes(recv), 2*perInst, f64, root)
	if me == root {
		if e := sameVals("GatherType into float64", recv, err, all); e != nil {
			return e
		}
	} else if err != nil {
		return fmt.Errorf("GatherType: %w", err)
	}
	rs := spread(make([]float64, n*2*perInst))
	err = comm.GatherType(c, spread(seq(100*me, 2*perInst)), 2, strideT, rs, 2, strideT, 0)
	if me == 0 {
		got, gerr := gatherVals(rs)
		if e := sameVals("GatherType strided", got, firstNonNil(err, gerr), all); e != nil {
			return e
		}
	}
	ip := spread(seq(100*me, 2*perInst))
	if me == root {
		ip = spread(make([]float64, n*2*perInst))
		f, _ := raw.View[float64](ip)
		for i, v := range seq(100*me, 2*perInst) {
			f[2*(me*2*perInst+i)] = v
		}
	}
	err = comm.GatherTypeInPlace(c, ip, 2, strideT, root)
	if me == root {
		got, gerr := gatherVals(ip)
		if e := sameVals("GatherTypeInPlace", got, firstNonNil(err, gerr), all); e != nil {
			return e
		}
	}

	// Allgather, in place too.
	rs = spread(make([]float64, n*2*perInst))
	err = comm.AllgatherType(c, spread(seq(100*me, 2*perInst)), 2, strideT, rs, 2, strideT)
	got, gerr := gatherVals(rs)
	if e := sameVals("AllgatherType", got, firstNonNil(err, gerr), all); e != nil {
		return e
	}
	ipv := make([]float64, n*2*perInst)
	copy(ipv[me*2*perInst:], seq(100*me, 2*perInst))
	ip = spread(ipv)
	err = comm.AllgatherTypeInPlace(c, ip, 2, strideT)
	got, gerr = gatherVals(ip)
	if e := sameVals("AllgatherTypeInPlace", got, firstNonNil(err, gerr), all); e != nil {
		return e
	}

	// Scatter: root's strided blocks into float64s, and in place.
	var snd []byte
	if me == 0 {
		snd = spread(all)
	}
	mine := make([]float64, 2*perInst)
	err = comm.ScatterType(c, snd, 2, strideT, raw.Bytes(mine), 2*perInst, f64, 0)
	if e := sameVals("ScatterType", mine, err, seq(100*me, 2*perInst)); e != nil {
		return e
	}
	ip = spread(make([]float64, 2*perInst))
	if me == root {
		ip = spread(all)
	}
	err = comm.ScatterTypeInPlace(c, ip, 2, strideT, root)
	want := seq(100*me, 2*perInst)
	if me == root {
		want = all
	}
	got, gerr = gatherVals(ip)
	if e := sameVals("ScatterTypeInPlace", got, firstNonNil(err, gerr), want); e != nil {
		return e
	}

	// Alltoall: block j of rank q is q*1000+j*10+(0..perInst).
	var sendA, wantA []float64
	for j := range n {
		sendA = append(sendA, seq(me*1000+j*10, perInst)...)
		wantA = append(wantA, seq(j*1000+me*10, perInst)...)
	}
	rs = spread(make([]float64, n*perInst))
	err = comm.AlltoallType(c, spread(sendA), 1, strideT, rs, 1, strideT)
	got, gerr = gatherVals(rs)
	if e := sameVals("AlltoallType", got, firstNonNil(err, gerr), wantA); e != nil {
		return e
	}
	ip = spread(sendA)
	err = comm.AlltoallTypeInPlace(c, ip, 1, strideT)
	got, gerr = gatherVals(ip)
	if e := sameVals("AlltoallTypeInPlace", got, firstNonNil(err, gerr), wantA); e != nil {
		return e
	}

	// The v forms: rank q contributes q+1 instances; the receive blocks
	// sit in reverse order with a gap of one instance between them.
	counts, displs := make([]int, n), make([]int, n)
	at, total := 0, 0
	for q := n - 1; q >= 0; q-- {
		counts[q], displs[q] = q+1, at
		at += q + 2
		total += q + 1
	}
	vwant := func(rs []byte) ([]float64, []float64, error) { // got, want
		f, _ := raw.View[float64](rs)
		var g, w []float64
		for q := range n {
			for i := range counts[q] * perInst {
				g = append(g, f[displs[q]*2*perInst+2*i])
			}
			w = append(w, seq(100*q, counts[q]*perInst)...)
		}
		return g, w, nil
	}
	rs = spread(make([]float64, at*perInst))
	err = comm.GathervType(c, spread(seq(100*me, (me+1)*perInst)), me+1, strideT, rs, counts, displs, strideT, 0)
	if me == 0 {
		g, w, _ := vwant(rs)
		if e := sameVals("GathervType", g, err, w); e != nil {
			return e
		}
	}
	rs = spread(make([]float64, at*perInst))
	err = comm.AllgathervType(c, spread(seq(100*me, (me+1)*perInst)), me+1, strideT, rs, counts, displs, strideT)
	g, w, _ := vwant(rs)
	if e := sameVals("AllgathervType", g, err, w); e != nil {
		return e
	}
	snd = nil
	if me == 0 {
		snd = rs // root scatters what Allgatherv gathered
	}
	mine = make([]float64, (me+1)*perInst)
	err = comm.ScattervType(c, snd, counts, displs, strideT, raw.Bytes(mine), (me+1)*perInst, f64, 0)
	if e := sameVals("ScattervType", mine, err, seq(100*me, (me+1)*perInst)); e != nil {
		return e
	}
	// Alltoallv: rank q sends j+1 instances to rank j.
	sc, sd, rc, rd := make([]int, n), make([]int, n), make([]int, n), make([]int, n)
	var sendV, wantV []float64
	sAt, rAt := 0, 0
	for j := range n {
		sc[j], sd[j] = j+1, sAt
		sAt += j + 1
		sendV = append(sendV, seq(me*1000+j*10, (j+1)*perInst)...)
		rc[j], rd[j] = me+1, rAt
		rAt += me + 1
		wantV = append(wantV, seq(j*1000+me*10, (me+1)*perInst)...)
	}
	rs = spread(make([]float64, rAt*perInst))
	err = comm.AlltoallvType(c, spread(sendV), sc, sd, strideT, rs, rc, rd, strideT)
	got, gerr = gatherVals(rs)
	if e := sameVals("AlltoallvType", got, firstNonNil(err, gerr), wantV); e != nil {
		return e
	}

	// The v forms in place.
	place := func(q int) []byte { // a receive area holding only block q
		f := make([]float64, at*perInst)
		copy(f[displs[q]*perInst:], seq(100*q, counts[q]*perInst))
		return spread(f)
	}
	ip = spread(seq(100*me, (me+1)*perInst))
	if me == root {
		ip = place(me)
	}
	err = comm.GathervTypeInPlace(c, ip, me+1, counts, displs, strideT, root)
	if me == root {
		g, w, _ := vwant(ip)
		if e := sameVals("GathervTypeInPlace", g, err, w); e != nil {
			return e
		}
	} else if err != nil {
		return fmt.Errorf("GathervTypeInPlace: %w", err)
	}
	ip = place(me)
	err = comm.AllgathervTypeInPlace(c, ip, counts, displs, strideT)
	g, w, _ = vwant(ip)
	if e := sameVals("AllgathervTypeInPlace", g, err, w); e != nil {
		return e
	}
	gathered := ip // every block, from Allgatherv
	ip = spread(make([]float64, (me+1)*perInst))
	if me == 0 {
		ip = gathered
	}
	err = comm.ScattervTypeInPlace(c, ip, me+1, counts, displs, strideT, 0)
	if me != 0 {
		got, gerr := gatherVals(ip)
		if e := sameVals("ScattervTypeInPlace", got, firstNonNil(err, gerr), seq(100*me, (me+1)*perInst)); e != nil {
			return e
		}
	} else if err != nil {
		return fmt.Errorf("ScattervTypeInPlace: %w", err)
	}
	two, tdis := make([]int, n), make([]int, n)
	var sendU, wantU []float64
	for j := range n {
		two[j], tdis[j] = 2, 3*j // a gap of one instance after each block
		sendU = append(sendU, seq(me*1000+j*10, 2*perInst)...)
		sendU = append(sendU, -7, -7, -7, -7)
		wantU = append(wantU, seq(j*1000+me*10, 2*perInst)...)
		wantU = append(wantU, -7, -7, -7, -7)
	}
	ip = spread(sendU)
	err = comm.AlltoallvTypeInPlace(c, ip, two, tdis, strideT)
	got, gerr = gatherVals(ip)
	if e := sameVals("AlltoallvTypeInPlace", got, firstNonNil(err, gerr), wantU); e != nil {
		return e
	}

	// Reductions over strided data.
	sum := make([]float64, 2*perInst)
	for q := range n {
		for i := range sum {
			sum[i] += float64(100*q + i)
		}
	}
	rs = spread(make([]float64, 2*perInst))
	err = comm.AllreduceType[float64](c, spread(seq(100*me, 2*perInst)), rs, 2, strideT, atomics.Sum)
	got, gerr = gatherVals(rs)
	if e := sameVals("AllreduceType", got, firstNonNil(err, gerr), sum); e != nil {
		return e
	}
	ip = spread(seq(100*me, 2*perInst))
	err = comm.AllreduceTypeInPlace[float64](c, ip, 2, strideT, atomics.Sum)
	got, gerr = gatherVals(ip)
	if e := sameVals("AllreduceTypeInPlace", got, firstNonNil(err, gerr), sum); e != nil {
		return e
	}
	rs = spread(make([]float64, 2*perInst))
	err = comm.ReduceType[float64](c, spread(seq(100*me, 2*perInst)), rs, 2, strideT, atomics.Sum, root)
	if me == root {
		got, gerr = gatherVals(rs)
		if e := sameVals("ReduceType", got, firstNonNil(err, gerr), sum); e != nil {
			return e
		}
	} else if err != nil {
		return fmt.Errorf("ReduceType: %w", err)
	}
	ip = spread(seq(100*me, 2*perInst))
	err = comm.ReduceTypeInPlace[float64](c, ip, 2, strideT, atomics.Sum, 0)
	if me == 0 {
		got, gerr = gatherVals(ip)
		if e := sameVals("ReduceTypeInPlace", got, firstNonNil(err, gerr), sum); e != nil {
			return e
		}
	}
	var full []float64
	for range n {
		full = append(full, seq(me, perInst)...)
	}
	rs = spread(make([]float64, perInst))
	err = comm.ReduceScatterBlockType[float64](c, spread(full), rs, 1, strideT, atomics.Sum)
	wantRS := make([]float64, perInst)
	for q := range n {
		for i := range wantRS {
			wantRS[i] += float64(q + i)
		}
	}
	got, gerr = gatherVals(rs)
	if e := sameVals("ReduceScatterBlockType", got, firstNonNil(err, gerr), wantRS); e != nil {
		return e
	}
	scanWant, exWant := make([]float64, perInst), make([]float64, perInst)
	for q := range me + 1 {
		for i := range scanWant {
			scanWant[i] += float64(q + i)
			if q < me {
				exWant[i] += float64(q + i)
			}
		}
	}
	rs = spread(make([]float64, perInst))
	err = comm.ScanType[float64](c, spread(seq(me, perInst)), rs, 1, strideT, atomics.Sum)
	got, gerr = gatherVals(rs)
	if e := sameVals("ScanType", got, firstNonNil(err, gerr), scanWant); e != nil {
		return e
	}
	rs = spread(make([]float64, perInst))
	err = comm.ExscanType[float64](c, spread(seq(me, perInst)), rs, 1, strideT, atomics.Sum)
	if me > 0 {
		got, gerr = gatherVals(rs)
		if e := sameVals("ExscanType", got, firstNonNil(err, gerr), exWant); e != nil {
			return e
		}
	}

	ip = spread(full)
	err = comm.ReduceScatterBlockTypeInPlace[float64](c, ip, 1, strideT, atomics.Sum)
	if got, gerr := gatherVals(ip); err != nil || gerr != nil || !slices.Equal(got[:perInst], wantRS) {
		return fmt.Errorf("ReduceScatterBlockTypeInPlace: %v %v %v", got, err, gerr)
	}
	ip = spread(seq(me, perInst))
	err = comm.ScanTypeInPlace[float64](c, ip, 1, strideT, atomics.Sum)
	got, gerr = gatherVals(ip)
	if e := sameVals("ScanTypeInPlace", got, firstNonNil(err, gerr), scanWant); e != nil {
		return e
	}
	ip = spread(seq(me, perInst))
	err = comm.ExscanTypeInPlace[float64](c, ip, 1, strideT, atomics.Sum)
	got, gerr = gatherVals(ip)
	if me == 0 {
		exWant = seq(0, perInst) // left as it was
	}
	if e := sameVals("ExscanTypeInPlace", got, firstNonNil(err, gerr), exWant); e != nil {
		return e
	}

	// Structs (mixed basic types) by Allgather, and MinLoc over a pair type.
	pt := mustType(dtype.Of[typedParticle]())
	ps := make([]typedParticle, n)
	if err := comm.AllgatherType(c, raw.Bytes([]typedParticle{{int32(me), float64(me) / 4}}), 1, pt, raw.Bytes(ps), 1, pt); err != nil {
		return fmt.Errorf("AllgatherType of structs: %w", err)
	}
	for q, p := range ps {
		if p != (typedParticle{int32(q), float64(q) / 4}) {
			return fmt.Errorf("AllgatherType of structs: rank %d's is %+v", q, p)
		}
	}
	di := dtype.Basic(atomics.DoubleIntT)
	res := make([]atomics.DoubleInt, 1)
	if err := comm.AllreduceType[atomics.DoubleInt](c, raw.Bytes([]atomics.DoubleInt{{V: float64(me % 2), I: int32(me)}}), raw.Bytes(res), 1, di, atomics.MaxLoc); err != nil {
		return fmt.Errorf("AllreduceType MaxLoc: %w", err)
	}
	if wantV := float64(min(n-1, 1)); res[0].V != wantV || res[0].I != int32(min(n-1, 1)) {
		return fmt.Errorf("AllreduceType MaxLoc: %+v", res[0])
	}

	// Byte matches any type: rank 0 broadcasts bytes to float64 receivers.
	if me == 0 {
		b := raw.Bytes(seq(5, 6))
		err = comm.BcastType(c, b, len(b), dtype.Byte, 0)
	} else {
		b := make([]float64, 6)
		err = comm.Bcast(c, b, 0)
		if e := sameVals("Bcast from Byte", b, err, seq(5, 6)); e != nil {
			return e
		}
	}
	if err != nil {
		return fmt.Errorf("Bcast of Byte: %w", err)
	}

	// Mismatches, an error on every rank, and the communicator still works.
	if n > 1 {
		i32 := mustType(dtype.Contiguous(2, dtype.Basic(atomics.Int32)))
		t := strideT
		if me == 1 {
			t = i32
		}
		if err := reported(c, comm.BcastType(c, make([]byte, 64), 1, t, 0)); !errors.Is(err, comm.ErrType) {
			return fmt.Errorf("BcastType of float64 and int32: %v, want ErrType", err)
		}
	}
	if err := comm.AllreduceType[int64](c, spread(seq(0, perInst)), spread(seq(0, perInst)), 1, strideT, atomics.Sum); !errors.Is(err, comm.ErrType) {
		return fmt.Errorf("AllreduceType[int64] of float64 data: %v, want ErrType", err)
	}
	if err := comm.AllgatherType(c, spread(seq(0, perInst)), 1, strideT, make([]byte, 8), 1, strideT); !errors.Is(err, comm.ErrBuffer) && !errors.Is(err, comm.ErrCount) {
		return fmt.Errorf("AllgatherType into a short buffer: %v, want ErrBuffer", err)
	}
	loose, _ := dtype.Contiguous(2, f64)
	if err := comm.BcastType(c, make([]byte, 16), 1, loose, 0); !errors.Is(err, comm.ErrType) {
		return fmt.Errorf("BcastType of an uncommitted type: %v, want ErrType", err)
	}
	return c.Barrier()
}

func firstNonNil(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func TestCollTypedLocal(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { ranktest.RunLocal(t, n, collTyped) })
	}
}

func init() { ranktest.Register("colltyped", collTyped) }

func TestCollTypedProcs(t *testing.T) { ranktest.Run(t, 3, "colltyped") }

// mixedWidthBody: rank 0 moves its blocks as bytes (dtype.Byte, which
// matches any type by size) while the others move float64s: the same
// bytes, so the calls match, and every block must land where it belongs,
// in one round (inline, a slot) or several. The pieces a round carries
// were once a multiple of each rank's own element size: with 3 ranks, 1
// byte on rank 0 against 8 elsewhere split a buffer at different offsets.
func mixedWidthBody(c *comm.Comm) error {
	n, me := c.Size(), c.Rank()
	f64 := dtype.Basic(atomics.Float64)
	for _, per := range []int{5, 300, 5000} { // float64s a block: inline, staged, several rounds
		send := make([]float64, n*per)
		for i := range send {
			send[i] = float64(me*1_000_000 + i)
		}
		recv := make([]float64, n*per)
		var err error
		if me == 0 {
			err = comm.AlltoallType(c, raw.Bytes(send), per*8, dtype.Byte, raw.Bytes(recv), per*8, dtype.Byte)
		} else {
			err = comm.AlltoallType(c, raw.Bytes(send), per, f64, raw.Bytes(recv), per, f64)
		}
		if err != nil {
			return fmt.Errorf("AlltoallType, %d a block: %w", per, err)
		}
		for q := range n {
			for i := range per {
				if want := float64(q*1_000_000 + me*per + i); recv[q*per+i] != want {
					return fmt.Errorf("AlltoallType, %d a block: element %d from rank %d is %g, want %g", per, i, q, recv[q*per+i], want)
				}
			}
		}
		mine := make([]float64, per)
		if me == 0 {
			err = comm.ScatterType(c, raw.Bytes(send), per*8, dtype.Byte, raw.Bytes(mine), per, f64, 0)
		} else {
			err = comm.ScatterType(c, nil, 0, dtype.Byte, raw.Bytes(mine), per, f64, 0)
		}
		if err != nil {
			return fmt.Errorf("ScatterType, %d a block: %w", per, err)
		}
		for i, v := range mine {
			if want := float64(me*per + i); v != want {
				return fmt.Errorf("ScatterType, %d a block: element %d is %g, want %g", per, i, v, want)
			}
		}
	}
	return c.Barrier()
}

func TestCollMixedWidthLocal(t *testing.T) {
	for _, n := range []int{3, 7} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { ranktest.RunLocal(t, n, mixedWidthBody) })
	}
}

// badDisplsBody: a root's displacements that put a block before its
// buffer (a type resized to a negative extent) or wrap past 2^63 when
// multiplied by the extent are an error on every rank, not a panic at the
// root nor a block silently put at the buffer's start.
func badDisplsBody(c *comm.Comm) error {
	f64 := dtype.Basic(atomics.Float64)
	neg := mustType(dtype.Resized(f64, 0, -8))
	if err := neg.Commit(); err != nil {
		return err
	}
	n, me := c.Size(), c.Rank()
	for _, tc := range []struct {
		name  string
		t     *dtype.Type
		displ int
	}{{"negative extent", neg, 1}, {"wrapping displacement", f64, 1 << 61}} {
		counts, displs := make([]int, n), make([]int, n)
		for q := range n {
			counts[q], displs[q] = 1, q
		}
		displs[n-1] = tc.displ
		recv := make([]float64, 4*n)
		err := comm.GathervType(c, raw.Bytes([]float64{float64(me)}), 1, f64, raw.Bytes(recv), counts, displs, tc.t, 0)
		if !errors.Is(err, comm.ErrCount) {
			return fmt.Errorf("GathervType, %s: %v, want ErrCount on every rank", tc.name, err)
		}
	}
	return c.Barrier()
}

func TestCollBadDisplsLocal(t *testing.T) { ranktest.RunLocal(t, 3, badDisplsBody) }

// TestCollCountOverflowLocal: a count whose n blocks overflow int is an
// error on every rank, not a product wrapped to a small count (2^62 bytes
// a rank on 4 ranks wrapped to 0, and the call moved nothing and
// succeeded).
func TestCollCountOverflowLocal(t *testing.T) {
	ranktest.RunLocal(t, 4, func(c *comm.Comm) error {
		buf := make([]byte, 64)
		for name, f := range map[string]func() error{
			"AllgatherTypeInPlace": func() error { return comm.AllgatherTypeInPlace(c, buf, 1<<62, dtype.Byte) },
			"AlltoallType":         func() error { return comm.AlltoallType(c, buf, 1<<62, dtype.Byte, buf, 1<<62, dtype.Byte) },
			"GatherTypeInPlace":    func() error { return comm.GatherTypeInPlace(c, buf, 1<<62, dtype.Byte, 0) },
		} {
			if err := f(); err == nil {
				return fmt.Errorf("%s of 2^62 bytes a rank in a buffer of 64: no error", name)
			}
		}
		return nil
	})
}
