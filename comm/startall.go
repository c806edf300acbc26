package comm

import "fmt"

// Startall starts every request (MPI_Startall), in order; nil entries are
// skipped. Local. It stops at the first that fails and returns its error,
// naming its index: the requests before it are started, the others not.
func Startall(reqs []*Request) error {
	for i, r := range reqs {
		if r == nil {
			continue
		}
		if err := r.Start(); err != nil {
			return fmt.Errorf("request %d: %w", i, err)
		}
	}
	return nil
}
