// Command dynlist grows one linked list across every rank of the job in a
// dynamic window (the MPI standard's example for MPI_Win_create_dynamic):
// each rank allocates nodes with comm.AllocMem, attaches them, and links
// them at the end of the list by compare-and-swap on the last node's next
// pointer; rank 0 then walks the whole list by Get and checks it.
//
//	go run ./cmd/shmrun -n 4 --oversubscribe ./examples/dynlist [nodes per rank]
package main

import (
	"fmt"
	"log"
	"os"
	"strconv"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/win"
)

// A node is two int64: its value, and a pointer to the next node,
// (rank+1)<<48 | address in that rank (0 ends the list). Addresses are
// what comm.Address gives: a dynamic window's displacements.
const (
	nodeValue = 0
	nodeNext  = 8
	nodeBytes = 16
)

func pointer(rank int, addr uintptr) int64 { return int64(rank+1)<<48 | int64(addr) }
func target(p int64) (rank, addr int)      { return int(p>>48) - 1, int(p & (1<<48 - 1)) }

func main() {
	world, err := comm.Init()
	if err != nil {
		log.Fatal(err)
	}
	perRank := 100
	if len(os.Args) > 1 {
		if perRank, err = strconv.Atoi(os.Args[1]); err != nil || perRank < 0 {
			log.Fatalf("dynlist: nodes per rank %q: want a count", os.Args[1])
		}
	}
	if err := run(world, perRank); err != nil {
		log.Fatal(err)
	}
	if err := comm.Finalize(); err != nil {
		log.Fatal(err)
	}
}

func run(world *comm.Comm, perRank int) error {
	rank, size := world.Rank(), world.Size()
	w, err := win.CreateDynamic(world, nil)
	if err != nil {
		return err
	}
	var nodes [][]byte
	newNode := func(value int64) (int64, error) {
		mem, err := comm.AllocMem(nodeBytes, nil) // zeroed: next = 0
		if err != nil {
			return 0, err
		}
		v, err := win.View[int64](mem)
		if err != nil {
			return 0, err
		}
		v[nodeValue/8] = value
		nodes = append(nodes, mem)
		return pointer(rank, comm.Address(mem)), w.Attach(mem)
	}
	head := []int64{0}
	if rank == 0 {
		if head[0], err = newNode(-1); err != nil {
			return err
		}
	}
	if err := comm.Bcast(world, head, 0); err != nil { // everyone learns where the list starts
		return err
	}

	if err := w.LockAll(0); err != nil {
		return err
	}
	tail := head[0] // a hint: the real tail is at or after it
	for i := range perRank {
		mine, err := newNode(int64(rank*1_000_000 + i))
		if err != nil {
			return err
		}
		for {
			r, a := target(tail)
			old, err := win.CompareAndSwap(w, mine, 0, r, a+nodeNext)
			if err != nil {
				return err
			}
			if err := w.Flush(r); err != nil {
				return err
			}
			if old == 0 { // linked
				tail = mine
				break
			}
			tail = old // somebody linked first: move on
		}
	}
	if err := w.UnlockAll(); err != nil {
		return err
	}
	if err := world.Barrier(); err != nil { // every node is linked
		return err
	}

	if rank == 0 {
		if err := walk(w, head[0], size, perRank); err != nil {
			return err
		}
	}
	if err := world.Barrier(); err != nil { // nobody reads any more
		return err
	}
	for _, mem := range nodes {
		if err := w.Detach(mem); err != nil {
			return err
		}
		if err := comm.FreeMem(mem); err != nil {
			return err
		}
	}
	return w.Free()
}

// walk follows the list from head by Get and checks that it holds every
// rank's nodes, each rank's in the order it appended them.
func walk(w *win.Win, head int64, size, perRank int) error {
	if err := w.LockAll(0); err != nil {
		return err
	}
	next := make([]int, size) // the index each rank's next node must have
	count := 0
	node := make([]int64, 2)
	for p := head; p != 0; p = node[1] {
		r, a := target(p)
		if err := win.GetT(w, node, r, a); err != nil {
			return err
		}
		if err := w.Flush(r); err != nil {
			return err
		}
		if count > 0 {
			owner, i := int(node[0]/1_000_000), int(node[0]%1_000_000)
			if owner != r || i != next[r] {
				return fmt.Errorf("node %d on rank %d holds %d: out of order", count, r, node[0])
			}
			next[r]++
		}
		count++
	}
	fmt.Printf("a list of %d nodes over %d ranks, every rank's in the order it appended them\n", count-1, size)
	return w.UnlockAll()
}
