package comm

// Startall starts every request (MPI_Startall), in order; nil entries are
// skipped. Local. It stops at the first that fails and returns its error,
// naming its index: the requests before it are started, the others not.
// Under the MPI backend the requests before it start in one MPI_Startall.
func Startall(reqs []*Request) error { return startall(reqs) }
