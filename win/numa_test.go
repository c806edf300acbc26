//go:build !mpi

package win_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/internal/raw"
	"github.com/shmrun/shmrun/win"
)

// numaBody allocates windows under each memory policy and checks, with
// get_mempolicy, that the policy is on the rank's own pages, and with
// Placement, that every reserved page is on an online node.
func numaBody(c *comm.Comm) error {
	const size = 64 << 10
	for _, tt := range []struct {
		policy string
		mode   int
	}{{"", raw.MpolDefault}, {"local", raw.MpolDefault}, {"interleave", raw.MpolInterleave}, {"node:0", raw.MpolBind}} {
		info := win.Info{"alloc_shared_noncontig": "true"}
		if tt.policy != "" {
			info["shmrun_mempolicy"] = tt.policy
		}
		w, err := win.AllocateShared(c, size, 1, info)
		if err != nil {
			return err
		}
		mode, err := raw.PolicyOf(&w.Local()[0])
		if err != nil {
			return err
		}
		if mode != tt.mode {
			return fmt.Errorf("rank %d: policy %q: mode %d on the part, want %d", c.Rank(), tt.policy, mode, tt.mode)
		}
		pl, err := win.Placement(w)
		if err != nil {
			return err
		}
		if len(pl) != c.Size() {
			return fmt.Errorf("rank %d: Placement has %d parts", c.Rank(), len(pl))
		}
		for _, p := range pl {
			pages := 0
			for node, n := range p.Nodes {
				if node != 0 {
					return fmt.Errorf("rank %d: part %d has %d pages on node %d of a one-node test", c.Rank(), p.Rank, n, node)
				}
				pages += n
			}
			if want := size / os.Getpagesize(); pages != want || p.Untouched != 0 {
				return fmt.Errorf("rank %d: part %d: %d pages placed, %d untouched, want %d and 0", c.Rank(), p.Rank, pages, p.Untouched, want)
			}
		}
		if err := w.Free(); err != nil {
			return err
		}
	}
	// Unreserved pages are reported untouched until someone writes them.
	w, err := win.AllocateShared(c, size, 1, win.Info{"alloc_shared_noncontig": "true", "shmrun_no_reserve": "true"})
	if err != nil {
		return err
	}
	pl, err := win.Placement(w)
	if err != nil || pl[c.Rank()].Untouched == 0 {
		return fmt.Errorf("rank %d: unreserved part: %+v, %v: want untouched pages", c.Rank(), pl, err)
	}
	if err := w.Free(); err != nil {
		return err
	}
	// The numa_maps fallback counts the whole window's pages this process
	// has mapped: at least this rank's own reserved part.
	w, err = win.AllocateShared(c, size, 1, win.Info{"alloc_shared_noncontig": "true"})
	if err != nil {
		return err
	}
	pl, err = win.PlacementFromMaps(w)
	if err != nil {
		return err
	}
	if len(pl) != 1 || pl[0].Rank != -1 || pl[0].Nodes[0] < size/os.Getpagesize() {
		return fmt.Errorf("rank %d: numa_maps fallback gave %+v, want at least %d pages on node 0 for the whole window", c.Rank(), pl, size/os.Getpagesize())
	}
	if err := w.Free(); err != nil {
		return err
	}
	// A node the machine lacks, and a malformed value: ErrInfo everywhere.
	for _, bad := range []string{"node:1023", "nodes:0", "node:-1"} {
		_, err := win.AllocateShared(c, size, 1, win.Info{"shmrun_mempolicy": bad})
		if !errors.Is(err, win.ErrInfo) || !strings.Contains(err.Error(), "shmrun_mempolicy") {
			return fmt.Errorf("rank %d: shmrun_mempolicy=%s: %v, want ErrInfo naming the key", c.Rank(), bad, err)
		}
	}
	return nil
}

func init() { ranktest.Register("numa", numaBody) }

// TestMemPolicy runs on whatever NUMA layout the machine has; the checks
// that name node 0 assume one node, so more skip the test's process part.
func TestMemPolicy(t *testing.T) {
	if b, err := os.ReadFile("/sys/devices/system/node/online"); err == nil && strings.TrimSpace(string(b)) != "0" {
		t.Skipf("the checks assume one NUMA node; this machine has %s", strings.TrimSpace(string(b)))
	}
	ranktest.Run(t, 2, "numa")
}
