//go:build mpi

package comm

import (
	"fmt"

	"github.com/shmrun/shmrun/internal/mpi"
)

// jobEnded has nothing to ring: the MPI completes a job's request
// (grequest), and its Waitany sees that.
func jobEnded() {}

// nbcTarget is the communicator a nonblocking collective's job runs on:
// c's twin, made with c, which the MPI orders apart from c's blocking
// collectives.
func (c *Comm) nbcTarget(call string) (*Comm, error) {
	if c.twin == nil {
		return nil, fmt.Errorf("comm: %s: the communicator has no twin for nonblocking collectives: %w", call, ErrComm)
	}
	return c.twin, nil
}

// nbcRequest is the request of job j: an MPI generalized request, which
// the worker completes once j has run, so that the MPI's Wait, Test and
// their kin take it beside point-to-point requests; its outcome is j's.
func nbcRequest(call string, j *nbcJob) (*Request, error) {
	h, err := mpi.GrequestStart()
	if err != nil {
		return nil, mpiError(call, err)
	}
	j.complete = func() {
		// It cannot fail on a request MPI_Grequest_start made; if it
		// did, the request's Wait would never return: say so.
		if err := mpi.GrequestComplete(h); err != nil {
			panic(fmt.Sprintf("comm: %s: %v", call, err))
		}
	}
	r := newLive()
	r.h = h
	r.extra().job = j
	r.extra().nbc = call
	return r, nil
}

// initColl makes the persistent collective call, whose starts queue run
// as the nonblocking collectives do (pcoll.go): a persistent request with
// no MPI request until its first Start.
func (c *Comm) initColl(call string, run func(t *Comm) error) (*Request, error) {
	if err := c.valid(call); err != nil {
		return nil, err
	}
	if _, err := c.nbcTarget(call); err != nil {
		return nil, err
	}
	drop, err := c.holdColl(call)
	if err != nil {
		return nil, err
	}
	r := &Request{persistent: true, h: mpi.RequestNull()}
	r.extra().coll = func() (*Request, error) {
		if c.freed.Load() && !c.world.finalized.Load() {
			// Freed by the program, kept for this request: its
			// starts still run on the twin.
			return c.queueJob(call, c.twin, run, true)
		}
		return c.startNBC(call, run)
	}
	r.extra().dropColl = drop
	return r, nil
}

// stepping says that jobs may step (queueJob): not over an MPI, whose
// collectives a job calls block in the MPI (nbc_shm.go has the steps).
const stepping = false

// stepFirst has no job to step over an MPI (stepping): queueJob and end
// call it only for a job that may step.
func (q *nbcQueue) stepFirst() {}
