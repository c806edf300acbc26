package barrier_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
)

func TestMain(m *testing.M) { ranktest.Main(m) }

func init() {
	// barriers: args count. The ranks pass count world barriers (the
	// control segment's barrier, through comm) and rank 0 prints
	// "ns/barrier <float>".
	ranktest.Register("barriers", func(c *comm.Comm) error {
		count, err := strconv.Atoi(ranktest.BodyArgs()[0])
		if err != nil {
			return err
		}
		if err := c.Barrier(); err != nil { // everyone has started
			return err
		}
		start := time.Now()
		for range count {
			if err := c.Barrier(); err != nil {
				return err
			}
		}
		if c.Rank() == 0 {
			fmt.Printf("ns/barrier %f\n", float64(time.Since(start).Nanoseconds())/float64(count))
		}
		return nil
	})
}

// BenchmarkBarrierProc is the world barrier of n real processes (ranks
// started by the launcher, oversubscribed when n exceeds the CPUs). Its
// ns/op is measured inside the ranks, so process start-up is not counted.
func BenchmarkBarrierProc(b *testing.B) {
	for _, n := range []int{2, 8} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			res := ranktest.Run(b, n, "barriers", ranktest.Args(strconv.Itoa(b.N)))
			v, ok := strings.CutPrefix(strings.TrimSpace(res.Stdout), "ns/barrier ")
			ns, err := strconv.ParseFloat(v, 64)
			if !ok || err != nil {
				b.Fatalf("rank 0 said %q", res.Stdout)
			}
			b.ReportMetric(ns, "ns/op")
		})
	}
}

// TestBarrierProcesses: the world barrier works across real processes (the
// launcher package tests it at scale).
func TestBarrierProcesses(t *testing.T) {
	ranktest.Run(t, 3, "barriers", ranktest.Args("100"))
}
