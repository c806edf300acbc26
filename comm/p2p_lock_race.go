//go:build race && !mpi

package comm

import "sync"

// raceOrder shows the race detector the order the engine's lock makes.
// The lock is a word outside the Go heap (shared with the C interface),
// and the race detector does not see atomic operations on such memory,
// so without this every access under the lock would look racy. It is
// taken only by the lock's holder, so it never blocks.
type raceOrder struct{ mu sync.Mutex }

func (r *raceOrder) acquire() { r.mu.Lock() }
func (r *raceOrder) release() { r.mu.Unlock() }
