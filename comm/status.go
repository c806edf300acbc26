package comm

// Status describes a completed operation (MPI_Status): the source rank and
// tag of a received message, the elements it carried, and whether it was
// cancelled. A collective's request completes with the zero Status.
type Status struct {
	Source, Tag, Count int
	Cancelled          bool
	bytes              int // the message's length (GetCount)
}

// emptyStatus is MPI's empty status (MPI 4.1 §3.7.3): source AnySource,
// tag AnyTag, count 0, not cancelled; what Wait and Test return for a
// zero or inactive request, and the calls on several requests for their
// nil and inactive entries.
var emptyStatus = Status{Source: AnySource, Tag: AnyTag}
