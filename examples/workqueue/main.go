// Command workqueue hands out work with messages: rank 0 is the master,
// the others are workers. Each worker asks for work, computes, and sends
// its result back with the next request; the master answers whoever asks
// first (AnySource), learns the result's size with Probe before receiving
// it, and tells every worker to stop when the work is done. A halo
// exchange between the workers with Sendrecv checks their neighbours at
// the end.
//
//	go run ./cmd/shmrun -n 4 --oversubscribe ./examples/workqueue
package main

import (
	"fmt"
	"log"
	"math"

	"github.com/shmrun/shmrun/comm"
)

const (
	tagWork   = 1 // master -> worker: a task number, or -1 to stop
	tagResult = 2 // worker -> master: task number and its value
	tagHalo   = 3
	tasks     = 100
)

// work is task t: a slow-ish sum.
func work(t int64) float64 {
	s := 0.0
	for i := int64(1); i <= 20000; i++ {
		s += math.Sin(float64(t*i)) / float64(i)
	}
	return s
}

func main() {
	world, err := comm.Init()
	if err != nil {
		log.Fatal(err)
	}
	if world.Size() < 2 {
		log.Fatal("workqueue needs at least 2 ranks")
	}
	if world.Rank() == 0 {
		err = master(world)
	} else {
		err = worker(world)
	}
	if err != nil {
		log.Fatal(err)
	}
	if err := comm.Finalize(); err != nil {
		log.Fatal(err)
	}
}

func master(c *comm.Comm) error {
	results := make([]float64, tasks)
	next, done, stopped := int64(0), 0, 0
	for stopped < c.Size()-1 {
		// A request carries the worker's last result (task -1: none yet).
		st, err := c.Probe(comm.AnySource, tagResult)
		if err != nil {
			return err
		}
		msg := make([]float64, st.Count)
		if _, err := comm.RecvT(c, msg, st.Source, tagResult); err != nil {
			return err
		}
		if t := int64(msg[0]); t >= 0 {
			results[t] = msg[1]
			done++
		}
		task := []int64{-1}
		if next < tasks {
			task[0] = next
			next++
		} else {
			stopped++
		}
		if err := comm.SendT(c, task, st.Source, tagWork); err != nil {
			return err
		}
	}
	sum := 0.0
	for t, r := range results {
		if r != work(int64(t)) {
			return fmt.Errorf("task %d: %v, want %v", t, r, work(int64(t)))
		}
		sum += r
	}
	fmt.Printf("master: %d tasks done by %d workers, sum %.6f\n", done, c.Size()-1, sum)
	return nil
}

func worker(c *comm.Comm) error {
	result := []float64{-1, 0}
	n := 0
	for {
		if err := comm.SendT(c, result, 0, tagResult); err != nil {
			return err
		}
		task := make([]int64, 1)
		if _, err := comm.RecvT(c, task, 0, tagWork); err != nil {
			return err
		}
		if task[0] < 0 {
			break
		}
		result = []float64{float64(task[0]), work(task[0])}
		n++
	}
	// The workers 1..size-1 form a ring: each sends its count right and
	// receives its left neighbour's.
	workers := c.Size() - 1
	me := c.Rank() - 1
	right, left := (me+1)%workers+1, (me+workers-1)%workers+1
	got := make([]int64, 1)
	st, err := comm.SendrecvT(c, []int64{int64(n)}, right, tagHalo, got, left, tagHalo)
	if err != nil {
		return err
	}
	fmt.Printf("worker %d did %d tasks; its left neighbour %d did %d\n", c.Rank(), n, st.Source, got[0])
	return nil
}
