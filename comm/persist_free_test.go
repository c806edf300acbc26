package comm_test

import (
	"errors"
	"fmt"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
)

func init() { ranktest.Register("be_persist_free", bePersistFree) }

// bePersistFree: persistent requests outlive the Free of their
// communicator (MPI 4.1 §7.4.3): a ring of SendInitT/RecvInitT and an
// AllreduceInit made on a Dup, the Dup freed, then started round after
// round with new data; every other call on the freed communicator is
// ErrComm. Made and freed more times than the communicator table has
// entries, so a communicator kept this way must be given back with its
// last request.
func bePersistFree(c *comm.Comm) error {
	r, n := c.Rank(), c.Size()
	next, prev := (r+1)%n, (r+n-1)%n
	for cycle := range 70 {
		d, err := c.Dup()
		if err != nil {
			return fmt.Errorf("cycle %d: Dup: %v", cycle, err)
		}
		out, in := []int64{0}, []int64{-1}
		sum, total := []int64{0}, []int64{0}
		var reqs []*comm.Request
		for _, mk := range []func() (*comm.Request, error){
			func() (*comm.Request, error) { return comm.SendInitT(d, out, next, 5) },
			func() (*comm.Request, error) { return comm.RecvInitT(d, in, prev, 5) },
			func() (*comm.Request, error) { return comm.AllreduceInit(d, sum, total, atomics.Sum) },
		} {
			q, err := mk()
			if err != nil {
				return fmt.Errorf("cycle %d: init: %v", cycle, err)
			}
			reqs = append(reqs, q)
		}
		if cycle%2 == 1 {
			// Started before the Free and completed after it.
			out[0], sum[0] = int64(1000*r+cycle), int64(r+1)
			if err := comm.Startall(reqs); err != nil {
				return fmt.Errorf("cycle %d: Startall before Free: %v", cycle, err)
			}
		}
		if err := d.Free(); err != nil {
			return fmt.Errorf("cycle %d: Free: %v", cycle, err)
		}
		if cycle%2 == 1 {
			if err := comm.WaitallInto(reqs, nil); err != nil {
				return fmt.Errorf("cycle %d: Waitall after Free: %v", cycle, err)
			}
			if in[0] != int64(1000*prev+cycle) || total[0] != int64(n*(n+1)/2) {
				return fmt.Errorf("cycle %d: started before Free: got %d, %d", cycle, in[0], total[0])
			}
		}
		if err := d.Barrier(); !errors.Is(err, comm.ErrComm) {
			return fmt.Errorf("cycle %d: Barrier on the freed communicator: %v, want ErrComm", cycle, err)
		}
		if _, err := comm.SendInitT(d, out, next, 5); !errors.Is(err, comm.ErrComm) {
			return fmt.Errorf("cycle %d: SendInitT on the freed communicator: %v, want ErrComm", cycle, err)
		}
		rounds := 1 + cycle%3
		if cycle < 2 {
			rounds = 4
		}
		for round := range rounds {
			out[0], sum[0], in[0] = int64(1000*r+round), int64(r*round), -1
			if err := comm.Startall(reqs); err != nil {
				return fmt.Errorf("cycle %d round %d: Startall after Free: %v", cycle, round, err)
			}
			if err := comm.WaitallInto(reqs, nil); err != nil {
				return fmt.Errorf("cycle %d round %d: Waitall after Free: %v", cycle, round, err)
			}
			if in[0] != int64(1000*prev+round) {
				return fmt.Errorf("cycle %d round %d: received %d from rank %d, want %d", cycle, round, in[0], prev, 1000*prev+round)
			}
			if want := int64(round * n * (n - 1) / 2); total[0] != want {
				return fmt.Errorf("cycle %d round %d: Allreduce %d, want %d", cycle, round, total[0], want)
			}
		}
		for i, q := range reqs {
			if err := q.Free(); err != nil {
				return fmt.Errorf("cycle %d: Free of request %d: %v", cycle, i, err)
			}
		}
	}
	// The table has room for new communicators: none was kept.
	for range 3 {
		d, err := c.Dup()
		if err != nil {
			return fmt.Errorf("Dup after the cycles: %v", err)
		}
		if err := d.Barrier(); err != nil {
			return err
		}
		if err := d.Free(); err != nil {
			return err
		}
	}
	fmt.Printf("rank %d ok\n", r)
	return nil
}
