//go:build race

package atomics

import "sync"

// raceOrder shows the race detector the order the stripe locks make. A
// lock word lives in a shared segment, outside the Go heap, and the race
// detector does not see atomic operations on such memory: without this,
// goroutines of one process that update one element of Go memory under
// its stripe (an accumulate into a window over private memory) would look
// racy. Each stripe's mutex is taken by the stripe's holder, after the
// lock word, and given back just after the word: the goroutine that takes
// the word next may wait for it a moment, never longer.
type raceOrder struct{ mu []sync.Mutex }

func newRaceOrder(n int) raceOrder { return raceOrder{mu: make([]sync.Mutex, n)} }

func (r *raceOrder) acquire(i int) { r.mu[i].Lock() }
func (r *raceOrder) release(i int) { r.mu[i].Unlock() }
