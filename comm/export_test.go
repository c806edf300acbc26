//go:build !mpi

package comm

// SingleCopy reports whether c's collectives move large payloads by single
// copy (for tests in package comm_test).
func SingleCopy(c *Comm) bool { return c.coll.Load() != nil && c.coll.Load().single }

// SetSingleOff turns single copy off for the communicators whose area is
// made afterwards (tests of the staging path between processes).
func SetSingleOff(off bool) { singleOff = off }

// SetReadFault makes this rank's single-copy reads fail with err (nil:
// they work again).
func SetReadFault(err error) { readFault = err }

// P2PDirect reports how many messages this rank's receives took straight
// from a ring (engine.takeIn: Recv's fast path and recvNow, Irecv's fast path).
func P2PDirect(c *Comm) int {
	e := c.world.eng
	e.lock()
	defer e.release()
	return e.nDirect
}

// P2PLarge reports how many chunks of large messages this rank has
// received by reading them (single copy), through its rings (Data
// packets), and written in place by their senders.
func P2PLarge(c *Comm) (read, staged, written int) {
	e := c.world.eng
	e.lock()
	defer e.release()
	return e.nRead, e.nStaged, e.nWritten
}

// P2PWhole reports how many large messages this rank has read whole at
// their match, their sender's line busy with another message's job.
func P2PWhole(c *Comm) int {
	e := c.world.eng
	e.lock()
	defer e.release()
	return e.nWhole
}

// SetWriteFaultIn makes this rank's k-th write into another process from
// now on fail, and every one after it (0: writes work again).
func SetWriteFaultIn(k int) { writeFaultIn = k }

// P2PUnexpected reports how many messages wait in this rank's unexpected
// queue.
func P2PUnexpected(c *Comm) int {
	e := c.world.eng
	e.lock()
	defer e.release()
	return len(e.unexp.all())
}

// FastRounds is the rounds c's collectives have run by the fast path
// (coll_fast.go) on this rank.
func FastRounds(c *Comm) uint64 {
	if a := c.coll.Load(); a != nil {
		return a.fastN
	}
	return 0
}

// LineParities is the line parities of c's collective area (0 before it
// is made).
func LineParities(c *Comm) int {
	if a := c.coll.Load(); a != nil {
		return int(a.par)
	}
	return 0
}

// YieldsOfTests is how many times this process's tests of collectives not
// yet complete gave the processor to their workers.
func YieldsOfTests() uint64 { return testYields.Load() }

// NBCCounts reports this process's nonblocking collective workers started
// and the steps that ran a job to its end or stopped (nbc.go, nbc_shm.go).
func NBCCounts() (workers, stepEnds, stepStops uint64) {
	return nbcCounts.workers.Load(), nbcCounts.stepEnds.Load(), nbcCounts.stepStops.Load()
}

// SetStepHook makes f run at the start of every step of a nonblocking
// collective (nil: none). Set it before any job is queued.
func SetStepHook(f func()) { stepHook = f }
