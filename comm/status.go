package comm

// Status describes a completed operation (MPI_Status): the source rank and
// tag of a received message, the elements it carried, and whether it was
// cancelled. A collective's request completes with the zero Status.
type Status struct {
	Source, Tag, Count int
	Cancelled          bool
	bytes              int // the message's length (GetCount)
}
