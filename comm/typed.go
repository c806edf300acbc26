package comm

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/shm"
)

// The parts of the datatype forms both backends share; each backend has
// its own pack (count instances of a type as contiguous bytes: a slice of
// the buffer when they are one run, else a packed copy).

// physMem is this machine's memory in bytes (sysinfo), or the largest
// int64 where the kernel does not say.
var physMem = sync.OnceValue(func() int64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil || si.Totalram == 0 {
		return 1<<63 - 1
	}
	unit := max(uint64(si.Unit), 1)
	if uint64(si.Totalram) > uint64(1<<63-1)/unit {
		return 1<<63 - 1
	}
	return int64(uint64(si.Totalram) * unit)
})

// stageOK refuses a packed copy of n bytes larger than this machine's
// memory, or than its memory cgroup has room for, which the Go runtime
// could only meet with a fatal out of memory error or the kernel with an
// OOM kill: count instances of a type whose entries overlap hold more
// data than their span in the buffer, and a send of them is legal MPI
// however large (the instances' bytes are copied, packed, before they
// travel). Copies under 1 GiB are not checked (the cgroup's files are
// read only for larger ones).
func (c *Comm) stageOK(call string, n int64, count int, t *dtype.Type) error {
	if n < 1<<30 {
		return nil
	}
	limit, what := physMem(), "this machine's memory"
	if room := shm.CgroupRoom(); room >= 0 && room < limit {
		limit, what = room, "the room left in this process's memory cgroup"
	}
	if n <= limit {
		return nil
	}
	return fmt.Errorf("comm: %s on rank %d: %d instances of %v pack into %d bytes, more than %s (%d): %w",
		call, c.Rank(), count, t, n, what, limit, ErrNoMem)
}

// tdata is count instances of t in buf.
type tdata struct {
	buf   []byte
	count int
	t     *dtype.Type
}

// typeError maps a dtype error to this package's classes.
func (c *Comm) typeError(call string, err error) error {
	class := typeClass(err)
	if class == nil {
		class = ErrType
	}
	// dtype's message may end with the class's text already: said once.
	msg := strings.TrimSuffix(err.Error(), ": "+class.Error())
	return fmt.Errorf("comm: %s on rank %d: %s: %w", call, c.Rank(), msg, class)
}

// typeClass is this package's class of err when it is one of dtype's
// buffer, count and type errors, else nil.
func typeClass(err error) error {
	switch {
	case errors.Is(err, dtype.ErrBuffer):
		return ErrBuffer
	case errors.Is(err, dtype.ErrCount):
		return ErrCount
	case errors.Is(err, dtype.ErrType):
		return ErrType
	}
	return nil
}

// elemsOf copies d's data into a slice of T, checking that d is made of
// T's basic type; the error is the call's argument error (the slice is
// then empty).
func elemsOf[T atomics.Elem](c *Comm, call string, d tdata) ([]T, error) {
	e, ok := d.t.Elem()
	if err := d.t.CheckCommitted(); err != nil {
		return nil, c.typeError(call, err)
	}
	if !ok && d.t.Size() > 0 || ok && e != atomics.TypeOf[T]() {
		return nil, fmt.Errorf("comm: %s on rank %d: %v is not made of %v alone, the reduction's element type: %w", call, c.Rank(), d.t, atomics.TypeOf[T](), ErrType)
	}
	b, err := c.pack(call, d)
	if err != nil {
		return nil, err
	}
	basic := dtype.Basic(atomics.TypeOf[T]())
	out := make([]T, int64(len(b))/basic.Size())
	if basic.Size() == int64(raw.SizeOf[T]()) {
		copy(raw.Bytes(out), b)
	} else { // a pair type: restore the padding
		dtype.Unpack(b, raw.Bytes(out), len(out), basic)
	}
	return out, nil
}

// recvElemsOf is elemsOf for data the call writes, whose entries may not
// overlap (dtype's FitsRecv), checked first.
func recvElemsOf[T atomics.Elem](c *Comm, call string, d tdata) ([]T, error) {
	if d.t.CheckCommitted() == nil {
		if err := d.t.FitsRecv(d.count, len(d.buf)); err != nil {
			return nil, c.typeError(call, err)
		}
	}
	return elemsOf[T](c, call, d)
}

// storeElems writes elements back into d's data (checked by recvElemsOf).
func storeElems[T atomics.Elem](d tdata, v []T) {
	basic := dtype.Basic(atomics.TypeOf[T]())
	b := raw.Bytes(v)
	if basic.Size() != int64(raw.SizeOf[T]()) {
		packed := make([]byte, int64(len(v))*basic.Size())
		dtype.Pack(b, len(v), basic, packed)
		b = packed
	}
	dtype.Unpack(b, d.buf, d.count, d.t)
}

// typedOp is op as the typed forms over t apply it: a user op to whole
// instances of t (MPI calls a user function with whole instances of the
// call's datatype), so its function gets a multiple of the instance's
// elements of T; a predefined op as it is.
func typedOp[T atomics.Elem, O Operation[T]](op O, t *dtype.Type) O {
	u, ok := any(op).(*UserOp[T])
	if !ok || u == nil || u.fn == nil || t == nil {
		return op
	}
	k := int(t.Size() / max(1, dtype.Basic(atomics.TypeOf[T]()).Size()))
	if k <= 1 {
		return op
	}
	uu := max(1, u.unit)
	a, b := uu, k
	for b != 0 {
		a, b = b, a%b
	}
	v, err := u.InUnits(k / a * uu) // the lcm of k and u's unit
	if err != nil {
		return op
	}
	return any(v).(O)
}
