//go:build !mpi

package comm_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/internal/raw"
)

// Point-to-point with derived datatypes: shapes that differ with
// signatures that match, the prefix rule, Byte matching anything,
// mismatches as ErrType with the traffic after them unharmed, truncation,
// nonblocking receives scattered at completion, large (single-copy or
// streamed) typed messages, and bad arguments.

func mustType(t *dtype.Type, err error) *dtype.Type {
	if err != nil {
		panic(err)
	}
	if err := t.Commit(); err != nil {
		panic(err)
	}
	return t
}

// typedParticle is a struct a program sends by dtype.Of.
type typedParticle struct {
	ID  int32
	Pos float64
}

func p2pTyped(c *comm.Comm, procs bool) error {
	if c.Size() < 2 || c.Rank() > 1 {
		return nil
	}
	me, peer := c.Rank(), 1-c.Rank()
	f64 := dtype.Basic(atomics.Float64)
	rows := 64
	if procs {
		rows = 1024 // a column of 1024 rows: 8 KiB packed, past the eager limit
	}
	const cols = 16
	column := mustType(dtype.Vector(rows, 1, cols, f64))
	matrix := make([]float64, rows*cols)
	for i := range matrix {
		matrix[i] = float64(i)
	}
	check := func(step string, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", step, err)
		}
		return nil
	}

	// 1. A column (strided) into a contiguous vector, and back into a
	// column of the peer's matrix by Irecv: shapes differ, signatures match.
	if me == 0 {
		if err := check("SendType column", c.SendType(raw.Bytes(matrix[3:]), 1, column, peer, 1)); err != nil {
			return err
		}
	} else {
		got := make([]float64, rows)
		st, err := comm.RecvT(c, got, peer, 1)
		if err != nil {
			return fmt.Errorf("RecvT of a column: %w", err)
		}
		for i := range got {
			if got[i] != float64(i*cols+3) {
				return fmt.Errorf("column element %d = %v, want %v", i, got[i], float64(i*cols+3))
			}
		}
		if st.Count != rows {
			return fmt.Errorf("RecvT of a column: Count %d, want %d", st.Count, rows)
		}
	}
	if me == 1 {
		col := make([]float64, rows)
		for i := range col {
			col[i] = -float64(i)
		}
		if err := check("SendT", comm.SendT(c, col, peer, 2)); err != nil {
			return err
		}
	} else {
		into := make([]float64, rows*cols)
		r, err := c.IrecvType(raw.Bytes(into[5:]), 1, column, peer, 2)
		if err != nil {
			return fmt.Errorf("IrecvType: %w", err)
		}
		st, err := r.Wait()
		if err != nil {
			return fmt.Errorf("IrecvType's Wait: %w", err)
		}
		if n, _ := comm.GetCountType(st, column); n != 1 || st.Count != 1 {
			return fmt.Errorf("GetCountType %d, Count %d, want 1", n, st.Count)
		}
		if e, _ := comm.GetElements(st, column); e != rows {
			return fmt.Errorf("GetElements %d, want %d", e, rows)
		}
		// A type of size 0 counts 0 of any message (MPI 4.1 §3.2.5).
		none, err := dtype.Contiguous(0, dtype.Basic(atomics.Float64))
		if err == nil {
			err = none.Commit()
		}
		if err != nil {
			return err
		}
		n, _ := comm.GetCountType(st, none)
		e, _ := comm.GetElements(st, none)
		if n != 0 || e != 0 {
			return fmt.Errorf("GetCountType %d, GetElements %d of a type of size 0, want 0 0", n, e)
		}
		for i, v := range into {
			want := 0.0
			if i%cols == 5 {
				want = -float64(i / cols)
			}
			if v != want {
				return fmt.Errorf("scattered column: element %d = %v, want %v", i, v, want)
			}
		}
	}

	// 2. Structs by dtype.Of: 5 sent, a receive of 10 (the prefix rule),
	// counted in instances and elements.
	pt := mustType(dtype.Of[typedParticle]())
	if me == 0 {
		ps := make([]typedParticle, 5)
		for i := range ps {
			ps[i] = typedParticle{int32(i), float64(i) / 2}
		}
		if err := check("SendType structs", c.SendType(raw.Bytes(ps), 5, pt, peer, 3)); err != nil {
			return err
		}
	} else {
		ps := make([]typedParticle, 10)
		ps[7].ID = 77
		st, err := c.RecvType(raw.Bytes(ps), 10, pt, peer, 3)
		if err != nil {
			return fmt.Errorf("RecvType structs: %w", err)
		}
		for i := range 5 {
			if ps[i] != (typedParticle{int32(i), float64(i) / 2}) {
				return fmt.Errorf("struct %d = %+v", i, ps[i])
			}
		}
		if ps[7].ID != 77 {
			return fmt.Errorf("a struct past the message was written")
		}
		if n, _ := comm.GetCountType(st, pt); n != 5 || st.Count != 5 {
			return fmt.Errorf("structs: GetCountType %d, Count %d", n, st.Count)
		}
		if e, _ := comm.GetElements(st, pt); e != 10 {
			return fmt.Errorf("structs: GetElements %d, want 10", e)
		}
	}

	// 3. Mismatches: float64 into int64, structs into float64, DoubleInt
	// pairs into float64 (a pair is a float64 and an int32); each an
	// ErrType on the receiver, and the next message arrives intact.
	if me == 0 {
		if err := comm.SendT(c, []float64{1, 2}, peer, 4); err != nil {
			return err
		}
		ps := []typedParticle{{1, 1}, {2, 2}}
		if err := c.SendType(raw.Bytes(ps), 2, pt, peer, 4); err != nil {
			return err
		}
		if err := comm.SendT(c, []atomics.DoubleInt{{V: 1, I: 2}, {V: 3, I: 4}}, peer, 4); err != nil {
			return err
		}
		if err := comm.SendT(c, []int64{42}, peer, 5); err != nil {
			return err
		}
	} else {
		if _, err := comm.RecvT(c, make([]int64, 2), peer, 4); !errors.Is(err, comm.ErrType) {
			return fmt.Errorf("float64 into int64: %v, want ErrType", err)
		}
		if _, err := comm.RecvT(c, make([]float64, 4), peer, 4); !errors.Is(err, comm.ErrType) {
			return fmt.Errorf("structs into float64: %v, want ErrType", err)
		}
		if _, err := comm.RecvT(c, make([]float64, 4), peer, 4); !errors.Is(err, comm.ErrType) {
			return fmt.Errorf("DoubleInt into float64: %v, want ErrType", err)
		}
		got := make([]int64, 1)
		if _, err := comm.RecvT(c, got, peer, 5); err != nil || got[0] != 42 {
			return fmt.Errorf("after the mismatches: %v %v", got, err)
		}
	}

	// 4. Byte matches anything: a typed message into bytes, bytes into a
	// typed receive, and a Byte-typed receive of structs.
	if me == 0 {
		if err := c.SendType(raw.Bytes(matrix), 1, column, peer, 6); err != nil {
			return err
		}
		if err := c.Send(raw.Bytes([]float64{7, 8, 9}), peer, 6); err != nil {
			return err
		}
		ps := []typedParticle{{3, 3}}
		if err := c.SendType(raw.Bytes(ps), 1, pt, peer, 6); err != nil {
			return err
		}
	} else {
		b := make([]byte, 8*rows)
		if st, err := c.Recv(b, peer, 6); err != nil || st.Count != 8*rows {
			return fmt.Errorf("typed into bytes: %v %v", st, err)
		}
		if v, _ := raw.View[float64](b); v[1] != cols {
			return fmt.Errorf("typed into bytes: element 1 = %v, want %v", v[1], float64(cols))
		}
		three := make([]float64, 3)
		if _, err := comm.RecvT(c, three, peer, 6); err != nil || three[2] != 9 {
			return fmt.Errorf("bytes into float64: %v %v", three, err)
		}
		bb := make([]byte, pt.Size())
		if _, err := c.RecvType(bb, int(pt.Size()), dtype.Byte, peer, 6); err != nil {
			return fmt.Errorf("structs into Byte: %w", err)
		}
	}

	// 5. Truncation: 2 columns' worth into one column; the column holds
	// the first rows elements, the rest of the matrix is untouched.
	if me == 0 {
		if err := comm.SendT(c, matrix[:2*rows], peer, 7); err != nil {
			return err
		}
	} else {
		into := make([]float64, rows*cols)
		st, err := c.RecvType(raw.Bytes(into), 1, column, peer, 7)
		if !errors.Is(err, comm.ErrTruncate) || st.Count != 2 {
			return fmt.Errorf("truncated typed receive: %v (Count %d), want ErrTruncate", err, st.Count)
		}
		for i := range rows {
			if into[i*cols] != float64(i) || into[i*cols+1] != 0 {
				return fmt.Errorf("truncated typed receive: row %d holds %v, %v", i, into[i*cols], into[i*cols+1])
			}
		}
	}

	// 6. Mprobe and SendrecvReplaceType with a strided type.
	if me == 0 {
		if err := comm.SendT(c, matrix[:rows], peer, 8); err != nil {
			return err
		}
	} else {
		msg, st, err := c.Mprobe(peer, 8)
		if err != nil {
			return err
		}
		if n, _ := comm.GetCountType(st, column); n != 1 {
			return fmt.Errorf("Mprobe: GetCountType %d, want 1", n)
		}
		into := make([]float64, rows*cols)
		if _, err := msg.RecvType(raw.Bytes(into[cols-1:]), 1, column); err != nil {
			return fmt.Errorf("Message.RecvType: %w", err)
		}
		if into[cols-1+cols*(rows-1)] != float64(rows-1) {
			return fmt.Errorf("Message.RecvType: last element %v", into[len(into)-1])
		}
	}
	mine := make([]float64, rows*cols)
	for i := range mine {
		mine[i] = float64(me*1000000 + i)
	}
	if _, err := c.SendrecvReplaceType(raw.Bytes(mine), 1, column, peer, 9, peer, 9); err != nil {
		return fmt.Errorf("SendrecvReplaceType: %w", err)
	}
	for i := range rows {
		if want := float64(peer*1000000 + i*cols); mine[i*cols] != want {
			return fmt.Errorf("SendrecvReplaceType: row %d = %v, want %v", i, mine[i*cols], want)
		}
		if want := float64(me*1000000 + i*cols + 1); mine[i*cols+1] != want {
			return fmt.Errorf("SendrecvReplaceType wrote outside the column: %v", mine[i*cols+1])
		}
	}

	// 7. Bad arguments, refused before anything moves.
	loose, _ := dtype.Contiguous(2, f64) // not committed
	b := make([]byte, 64)
	if err := c.SendType(b, 1, loose, peer, 0); !errors.Is(err, comm.ErrType) {
		return fmt.Errorf("uncommitted type: %v, want ErrType", err)
	}
	if err := c.SendType(b, 1, nil, peer, 0); !errors.Is(err, comm.ErrType) {
		return fmt.Errorf("nil type: %v, want ErrType", err)
	}
	if _, err := c.IrecvType(b, 1, column, peer, 0); !errors.Is(err, comm.ErrBuffer) {
		return fmt.Errorf("column past the buffer: %v, want ErrBuffer", err)
	}
	if _, err := c.RecvType(b, -1, f64, peer, 0); !errors.Is(err, comm.ErrCount) {
		return fmt.Errorf("negative count: %v, want ErrCount", err)
	}
	if _, err := c.RecvType(b, 1, f64, comm.ProcNull, 0); err != nil {
		return fmt.Errorf("typed receive from ProcNull: %w", err)
	}
	return nil
}

// TestRecvOverlappingLocal: a receive into instances whose entries
// overlap is ErrType (MPI makes it erroneous), before anything is staged:
// 2^40 zero-extent int64s in 8 bytes would have staged 8 TiB. A
// collective's receive side is refused too.
func TestRecvOverlappingLocal(t *testing.T) {
	ranktest.RunLocal(t, 2, func(c *comm.Comm) error {
		flat := mustType(dtype.Resized(dtype.Basic(atomics.Int64), 0, 0))
		buf := make([]byte, 8)
		if _, err := c.IrecvType(buf, 1<<40, flat, comm.AnySource, 0); !errors.Is(err, comm.ErrType) {
			return fmt.Errorf("IrecvType of 2^40 overlapping instances: %v, want ErrType", err)
		}
		if _, err := c.RecvType(buf, 2, flat, c.Rank(), 0); !errors.Is(err, comm.ErrType) {
			return fmt.Errorf("RecvType of 2 overlapping instances: %v, want ErrType", err)
		}
		send := make([]byte, 16)
		if err := comm.AllgatherType(c, send, 1, dtype.Basic(atomics.Int64), buf, 1, flat); err == nil {
			return fmt.Errorf("AllgatherType into overlapping instances: no error")
		}
		return nil
	})
}

// TestSendOverlappingHuge: a send of overlapping instances is legal MPI,
// but 2^43 bytes of them (2^40 zero-extent int64s in 8 bytes) are more
// than any buffer here can hold: ErrNoMem on the sending rank, where the
// packed copy was a fatal out of memory error of the Go runtime. The
// same in a collective's send side; the job goes on.
func TestSendOverlappingHuge(t *testing.T) {
	ranktest.RunLocal(t, 2, func(c *comm.Comm) error {
		flat := mustType(dtype.Resized(dtype.Basic(atomics.Int64), 0, 0))
		buf := make([]byte, 8)
		if c.Rank() == 0 {
			if err := c.SendType(buf, 1<<40, flat, 1, 0); !errors.Is(err, comm.ErrNoMem) {
				return fmt.Errorf("SendType of 2^40 overlapping instances: %v, want ErrNoMem", err)
			}
			if _, err := c.IsendType(buf, 1<<40, flat, 1, 0); !errors.Is(err, comm.ErrNoMem) {
				return fmt.Errorf("IsendType of 2^40 overlapping instances: %v, want ErrNoMem", err)
			}
		}
		recv := make([]byte, 32)
		if err := comm.BcastType(c, buf, 1<<40, flat, 0); !errors.Is(err, comm.ErrNoMem) && c.Rank() == 0 {
			return fmt.Errorf("BcastType of 2^40 overlapping instances at the root: %v, want ErrNoMem", err)
		}
		// Two overlapping instances are small: they travel.
		binary.LittleEndian.PutUint64(buf, uint64(7+c.Rank()))
		if err := comm.AllgatherType(c, buf, 2, flat, recv, 2, dtype.Basic(atomics.Int64)); err != nil {
			return fmt.Errorf("AllgatherType of 2 overlapping instances: %w", err)
		}
		for i := range 4 {
			if v, want := binary.LittleEndian.Uint64(recv[8*i:]), uint64(7+i/2); v != want {
				return fmt.Errorf("AllgatherType of 2 overlapping instances: element %d is %d, want %d", i, v, want)
			}
		}
		return nil
	})
}
