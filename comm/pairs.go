package comm

import (
	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/raw"
)

// The pair types (atomics.FloatInt and its kin, MPI_FLOAT_INT and its kin
// in C) in the generic point-to-point forms: MPI defines them as structs
// of a value and an int (MPI 4.1 §6.9.4), whose messages carry the two
// without the struct's padding. So the generic forms send and receive
// them as the typed forms do with the pair's basic datatype: packed (12
// bytes a DoubleInt, not the Go struct's 16), under the signature of
// their two halves. SendT of DoubleInt thus meets RecvType of
// dtype.Basic(atomics.DoubleIntT), of a struct of a float64 and an int32,
// or a C program's MPI_DOUBLE_INT, as in MPI; and 2 TwoInt meet 4 int32.

// pairOf is T's basic datatype if T is a pair type, else nil.
func pairOf[T atomics.Elem]() *dtype.Type {
	switch k := atomics.TypeOf[T](); k {
	case atomics.FloatIntT, atomics.DoubleIntT, atomics.LongIntT, atomics.TwoIntT, atomics.ShortIntT:
		return dtype.Basic(k)
	}
	return nil
}

// elemBytes is the bytes one element of T holds in a message: its size,
// but a pair type's data (the value and the int, not the padding).
func elemBytes[T atomics.Elem]() int {
	if t := pairOf[T](); t != nil {
		return int(t.Size())
	}
	return atomics.SizeOf[T]()
}

// sendPair is SendT or SsendT (sync) of pairs in buf, of basic datatype t,
// under the name call. Blocking.
func sendPair[T atomics.Elem](c *Comm, call string, buf []T, t *dtype.Type, dest, tag int, sync bool) error {
	r, err := c.isendType(call, raw.Bytes(buf), len(buf), t, dest, tag, sync)
	if err != nil {
		return err
	}
	_, err = r.Wait()
	return err
}

// recvPair is RecvT of pairs into buf, of basic datatype t, under the
// name call. Blocking.
func recvPair[T atomics.Elem](c *Comm, call string, buf []T, t *dtype.Type, src, tag int) (Status, error) {
	r, err := c.irecvType(call, raw.Bytes(buf), len(buf), t, src, tag)
	if err != nil {
		return Status{}, err
	}
	return r.Wait()
}
