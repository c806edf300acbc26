package comm

import "github.com/shmrun/shmrun/atomics"

// Persistent collectives (MPI 4.0's MPI_Bcast_init and its kin): the
// arguments of a collective fixed once, the operation started anew by
// each Start (or Startall) and completed by Wait, Test and their kin as
// a nonblocking collective is. Making one is local: no rank waits for
// another. Every rank of the communicator must make the same persistent
// collectives and start them in the same order as the communicator's
// other collectives, blocking or nonblocking (each start joins the queue
// of the nonblocking ones, nbc.go); an operation started must be
// completed before the next Start. Between a completion and the next
// Start the request is inactive: Wait and Test return at once with the
// empty status, and Waitall and its kin leave it in the slice. Free of
// an inactive one ends it; an active one is not freed (ErrRequest), nor
// is a collective cancelled (Cancel does nothing). The buffers belong to
// the request while it is active, as a nonblocking collective's do; the
// data sent are what they hold when each operation runs, so a loop may
// refill them between completions and Starts.

// BarrierInit makes a persistent Barrier (MPI_Barrier_init).
// Local; each Start is a collective call (see above).
func (c *Comm) BarrierInit() (*Request, error) {
	return c.initColl("BarrierInit", func(t *Comm) error { return t.Barrier() })
}

// BcastInit makes a persistent Bcast (MPI_Bcast_init).
// Local; each Start is a collective call (see above).
func BcastInit[T atomics.Elem](c *Comm, buf []T, root int) (*Request, error) {
	return c.initColl("BcastInit", func(t *Comm) error { return Bcast(t, buf, root) })
}

// ReduceInit makes a persistent Reduce (MPI_Reduce_init).
// Local; each Start is a collective call (see above).
func ReduceInit[T atomics.Elem, O Operation[T]](c *Comm, send, recv []T, op O, root int) (*Request, error) {
	return c.initColl("ReduceInit", func(t *Comm) error { return Reduce(t, send, recv, op, root) })
}

// ReduceInitInPlace makes a persistent ReduceInPlace (MPI_Reduce_init with MPI_IN_PLACE).
// Local; each Start is a collective call (see above).
func ReduceInitInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []T, op O, root int) (*Request, error) {
	return c.initColl("ReduceInitInPlace", func(t *Comm) error { return ReduceInPlace(t, buf, op, root) })
}

// AllreduceInit makes a persistent Allreduce (MPI_Allreduce_init).
// Local; each Start is a collective call (see above).
func AllreduceInit[T atomics.Elem, O Operation[T]](c *Comm, send, recv []T, op O) (*Request, error) {
	return c.initColl("AllreduceInit", func(t *Comm) error { return Allreduce(t, send, recv, op) })
}

// AllreduceInitInPlace makes a persistent AllreduceInPlace (MPI_Allreduce_init with MPI_IN_PLACE).
// Local; each Start is a collective call (see above).
func AllreduceInitInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []T, op O) (*Request, error) {
	return c.initColl("AllreduceInitInPlace", func(t *Comm) error { return AllreduceInPlace(t, buf, op) })
}

// GatherInit makes a persistent Gather (MPI_Gather_init).
// Local; each Start is a collective call (see above).
func GatherInit[T atomics.Elem](c *Comm, send, recv []T, root int) (*Request, error) {
	return c.initColl("GatherInit", func(t *Comm) error { return Gather(t, send, recv, root) })
}

// GatherInitInPlace makes a persistent GatherInPlace (MPI_Gather_init with MPI_IN_PLACE).
// Local; each Start is a collective call (see above).
func GatherInitInPlace[T atomics.Elem](c *Comm, buf []T, root int) (*Request, error) {
	return c.initColl("GatherInitInPlace", func(t *Comm) error { return GatherInPlace(t, buf, root) })
}

// GathervInit makes a persistent Gatherv (MPI_Gatherv_init).
// Local; each Start is a collective call (see above).
func GathervInit[T atomics.Elem](c *Comm, send, recv []T, counts, displs []int, root int) (*Request, error) {
	return c.initColl("GathervInit", func(t *Comm) error { return Gatherv(t, send, recv, counts, displs, root) })
}

// GathervInitInPlace makes a persistent GathervInPlace (MPI_Gatherv_init with MPI_IN_PLACE).
// Local; each Start is a collective call (see above).
func GathervInitInPlace[T atomics.Elem](c *Comm, buf []T, counts, displs []int, root int) (*Request, error) {
	return c.initColl("GathervInitInPlace", func(t *Comm) error { return GathervInPlace(t, buf, counts, displs, root) })
}

// ScatterInit makes a persistent Scatter (MPI_Scatter_init).
// Local; each Start is a collective call (see above).
func ScatterInit[T atomics.Elem](c *Comm, send, recv []T, root int) (*Request, error) {
	return c.initColl("ScatterInit", func(t *Comm) error { return Scatter(t, send, recv, root) })
}

// ScatterInitInPlace makes a persistent ScatterInPlace (MPI_Scatter_init with MPI_IN_PLACE).
// Local; each Start is a collective call (see above).
func ScatterInitInPlace[T atomics.Elem](c *Comm, buf []T, root int) (*Request, error) {
	return c.initColl("ScatterInitInPlace", func(t *Comm) error { return ScatterInPlace(t, buf, root) })
}

// ScattervInit makes a persistent Scatterv (MPI_Scatterv_init).
// Local; each Start is a collective call (see above).
func ScattervInit[T atomics.Elem](c *Comm, send []T, counts, displs []int, recv []T, root int) (*Request, error) {
	return c.initColl("ScattervInit", func(t *Comm) error { return Scatterv(t, send, counts, displs, recv, root) })
}

// ScattervInitInPlace makes a persistent ScattervInPlace (MPI_Scatterv_init with MPI_IN_PLACE).
// Local; each Start is a collective call (see above).
func ScattervInitInPlace[T atomics.Elem](c *Comm, buf []T, counts, displs []int, root int) (*Request, error) {
	return c.initColl("ScattervInitInPlace", func(t *Comm) error { return ScattervInPlace(t, buf, counts, displs, root) })
}

// AllgatherInit makes a persistent Allgather (MPI_Allgather_init).
// Local; each Start is a collective call (see above).
func AllgatherInit[T atomics.Elem](c *Comm, send, recv []T) (*Request, error) {
	return c.initColl("AllgatherInit", func(t *Comm) error { return Allgather(t, send, recv) })
}

// AllgatherInitInPlace makes a persistent AllgatherInPlace (MPI_Allgather_init with MPI_IN_PLACE).
// Local; each Start is a collective call (see above).
func AllgatherInitInPlace[T atomics.Elem](c *Comm, buf []T) (*Request, error) {
	return c.initColl("AllgatherInitInPlace", func(t *Comm) error { return AllgatherInPlace(t, buf) })
}

// AllgathervInit makes a persistent Allgatherv (MPI_Allgatherv_init).
// Local; each Start is a collective call (see above).
func AllgathervInit[T atomics.Elem](c *Comm, send, recv []T, counts, displs []int) (*Request, error) {
	return c.initColl("AllgathervInit", func(t *Comm) error { return Allgatherv(t, send, recv, counts, displs) })
}

// AllgathervInitInPlace makes a persistent AllgathervInPlace (MPI_Allgatherv_init with MPI_IN_PLACE).
// Local; each Start is a collective call (see above).
func AllgathervInitInPlace[T atomics.Elem](c *Comm, buf []T, counts, displs []int) (*Request, error) {
	return c.initColl("AllgathervInitInPlace", func(t *Comm) error { return AllgathervInPlace(t, buf, counts, displs) })
}

// AlltoallInit makes a persistent Alltoall (MPI_Alltoall_init).
// Local; each Start is a collective call (see above).
func AlltoallInit[T atomics.Elem](c *Comm, send, recv []T) (*Request, error) {
	return c.initColl("AlltoallInit", func(t *Comm) error { return Alltoall(t, send, recv) })
}

// AlltoallInitInPlace makes a persistent AlltoallInPlace (MPI_Alltoall_init with MPI_IN_PLACE).
// Local; each Start is a collective call (see above).
func AlltoallInitInPlace[T atomics.Elem](c *Comm, buf []T) (*Request, error) {
	return c.initColl("AlltoallInitInPlace", func(t *Comm) error { return AlltoallInPlace(t, buf) })
}

// AlltoallvInit makes a persistent Alltoallv (MPI_Alltoallv_init).
// Local; each Start is a collective call (see above).
func AlltoallvInit[T atomics.Elem](c *Comm, send []T, sendCounts, sendDispls []int, recv []T, recvCounts, recvDispls []int) (*Request, error) {
	return c.initColl("AlltoallvInit", func(t *Comm) error {
		return Alltoallv(t, send, sendCounts, sendDispls, recv, recvCounts, recvDispls)
	})
}

// AlltoallvInitInPlace makes a persistent AlltoallvInPlace (MPI_Alltoallv_init with MPI_IN_PLACE).
// Local; each Start is a collective call (see above).
func AlltoallvInitInPlace[T atomics.Elem](c *Comm, buf []T, counts, displs []int) (*Request, error) {
	return c.initColl("AlltoallvInitInPlace", func(t *Comm) error { return AlltoallvInPlace(t, buf, counts, displs) })
}

// ReduceScatterBlockInit makes a persistent ReduceScatterBlock (MPI_Reduce_scatter_block_init).
// Local; each Start is a collective call (see above).
func ReduceScatterBlockInit[T atomics.Elem, O Operation[T]](c *Comm, send, recv []T, op O) (*Request, error) {
	return c.initColl("ReduceScatterBlockInit", func(t *Comm) error { return ReduceScatterBlock(t, send, recv, op) })
}

// ReduceScatterBlockInitInPlace makes a persistent ReduceScatterBlockInPlace (MPI_Reduce_scatter_block_init with MPI_IN_PLACE).
// Local; each Start is a collective call (see above).
func ReduceScatterBlockInitInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []T, op O) (*Request, error) {
	return c.initColl("ReduceScatterBlockInitInPlace", func(t *Comm) error { return ReduceScatterBlockInPlace(t, buf, op) })
}

// ScanInit makes a persistent Scan (MPI_Scan_init).
// Local; each Start is a collective call (see above).
func ScanInit[T atomics.Elem, O Operation[T]](c *Comm, send, recv []T, op O) (*Request, error) {
	return c.initColl("ScanInit", func(t *Comm) error { return Scan(t, send, recv, op) })
}

// ScanInitInPlace makes a persistent ScanInPlace (MPI_Scan_init with MPI_IN_PLACE).
// Local; each Start is a collective call (see above).
func ScanInitInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []T, op O) (*Request, error) {
	return c.initColl("ScanInitInPlace", func(t *Comm) error { return ScanInPlace(t, buf, op) })
}

// ExscanInit makes a persistent Exscan (MPI_Exscan_init).
// Local; each Start is a collective call (see above).
func ExscanInit[T atomics.Elem, O Operation[T]](c *Comm, send, recv []T, op O) (*Request, error) {
	return c.initColl("ExscanInit", func(t *Comm) error { return Exscan(t, send, recv, op) })
}

// ExscanInitInPlace makes a persistent ExscanInPlace (MPI_Exscan_init with MPI_IN_PLACE).
// Local; each Start is a collective call (see above).
func ExscanInitInPlace[T atomics.Elem, O Operation[T]](c *Comm, buf []T, op O) (*Request, error) {
	return c.initColl("ExscanInitInPlace", func(t *Comm) error { return ExscanInPlace(t, buf, op) })
}
