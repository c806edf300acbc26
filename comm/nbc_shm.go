//go:build !mpi

package comm

// nbcTarget is the communicator a nonblocking collective's job runs on:
// c itself, whose blocking collectives wait for the queue (prepare).
func (c *Comm) nbcTarget(string) (*Comm, error) { return c, nil }

// nbcRequest is the request of job j: complete once j has run.
func nbcRequest(_ string, j *nbcJob) (*Request, error) {
	return &Request{ext: &requestExt{poll: func(block bool) (bool, error) {
		if block {
			<-j.done
			return true, j.err
		}
		select {
		case <-j.done:
			return true, j.err
		default:
			return false, nil
		}
	}}}, nil
}
