//go:build mpi

package win

import (
	"sync/atomic"

	"github.com/shmrun/shmrun/barrier"
	"github.com/shmrun/shmrun/internal/raw"
)

// Generalized active target (Post, Start, Complete, Wait, Test) on a
// direct window, with no MPI call, by the shmrun backend's protocol
// (win/pscw.go there): post[o][t] counts the Posts by target t whose group
// held origin o, complete[t][o] the Completes by origin o toward target t.
// Each rank keeps how many Posts it made to each origin (postsTo) and how
// many Starts toward each target (startsFrom). Start toward t waits until
// post[me][t] reaches startsFrom[t]; Wait until complete[me][o] reaches
// postsTo[o] for every o of its group. Counting per pair matches the k-th
// Start with the k-th Post of that pair, so back-to-back epochs and
// overlapping groups never mix. Each counter has one writer, which stores
// its own count (a sequentially consistent store: the fence before the
// doorbell's sleepers load) and then rings the reader's doorbell; counts
// compare modulo 2^32.
//
// Rank q's block, after the locks: its doorbell (a wake count and a
// sleepers count) on a line of its own, then post[q][0..n) and
// complete[q][0..n), 32-bit words.

// dpscwBlock is the bytes of one rank's block for n ranks, whole lines.
func dpscwBlock(n, line int) int { return line + (8*n+line-1)/line*line }

// dpscw is a direct window's active-target state in this process.
type dpscw struct {
	me         int
	bell       []barrier.Event // per rank: its doorbell
	post       [][]*uint32     // post[o][t]
	complete   [][]*uint32     // complete[t][o]
	postsTo    []uint32
	startsFrom []uint32
	posted     []int // the ranks of the open Post's group
	started    []int // the ranks of the open Start's group
	policy     barrier.Policy
}

// newDPSCW lays the blocks of n ranks over mem (n·dpscwBlock(n, line)
// bytes, zeroed before the window's creation returns anywhere).
func newDPSCW(mem []byte, n, me, line int) *dpscw {
	p := &dpscw{me: me, bell: make([]barrier.Event, n), post: make([][]*uint32, n), complete: make([][]*uint32, n),
		postsTo: make([]uint32, n), startsFrom: make([]uint32, n), policy: barrier.DefaultPolicy}
	bl := dpscwBlock(n, line)
	for q := range n {
		o := int64(q * bl)
		p.bell[q] = barrier.Event{Seq: raw.Uint32At(mem, o), Sleepers: raw.Uint32At(mem, o+4)}
		p.post[q], p.complete[q] = make([]*uint32, n), make([]*uint32, n)
		for j := range n {
			p.post[q][j] = raw.Uint32At(mem, o+int64(line+4*j))
			p.complete[q][j] = raw.Uint32At(mem, o+int64(line+4*n+4*j))
		}
	}
	return p
}

// reached reports whether counter c has come to want (modulo 2^32).
func reached(c *uint32, want uint32) bool { return int32(atomic.LoadUint32(c)-want) >= 0 }

// postTo opens an exposure epoch to origins: their Starts may return.
func (p *dpscw) postTo(origins []int) {
	p.posted = origins
	for _, o := range origins {
		p.postsTo[o]++
		atomic.StoreUint32(p.post[o][p.me], p.postsTo[o])
	}
	for _, o := range origins {
		p.bell[o].Notify()
	}
}

// startOn opens an access epoch to targets once each has posted to it.
func (p *dpscw) startOn(targets []int) {
	p.started = targets
	for _, t := range targets {
		p.startsFrom[t]++
		c, want := p.post[p.me][t], p.startsFrom[t]
		if !reached(c, want) {
			// No abort word: an MPI job that ends kills its processes.
			_ = p.bell[p.me].Await(nil, p.policy, func() bool { return reached(c, want) })
		}
	}
}

// completeAll ends the access epoch: every RMA call of it is complete
// already, so this tells the targets.
func (p *dpscw) completeAll() {
	for _, t := range p.started {
		atomic.StoreUint32(p.complete[t][p.me], p.startsFrom[t])
	}
	for _, t := range p.started {
		p.bell[t].Notify()
	}
	p.started = nil
}

// done reports whether every origin of the open Post has completed.
func (p *dpscw) done() bool {
	for _, o := range p.posted {
		if !reached(p.complete[p.me][o], p.postsTo[o]) {
			return false
		}
	}
	return true
}

// waitAll ends the exposure epoch once every origin has completed.
func (p *dpscw) waitAll() {
	if !p.done() {
		_ = p.bell[p.me].Await(nil, p.policy, p.done)
	}
	p.posted = nil
}
