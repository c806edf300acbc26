//go:build !mpi

package win

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/format"
	"github.com/shmrun/shmrun/internal/ranktest"
	"github.com/shmrun/shmrun/internal/team"
)

// TestExchangeWholeMessage: a failure's message reaches every rank whole,
// whatever its length around the slot's boundaries (longer than
// maxRemoteMsg: its first maxRemoteMsg bytes), and the exchange rounds
// after it pair up as before.
func TestExchangeWholeMessage(t *testing.T) {
	first := format.SlotLen - slotMsg
	for _, n := range []int{0, 1, first - 1, first, first + 1, first + format.SlotLen, first + format.SlotLen + 1, 5000, maxRemoteMsg + 10} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			ranktest.RunLocal(t, 3, func(c *comm.Comm) error {
				tm, err := team.OfComm(c, "test")
				if err != nil {
					return err
				}
				msg := strings.Repeat("x", n/2) + strings.Repeat("y", n-n/2)
				var local error
				if c.Rank() == 1 {
					local = errors.New(msg)
				}
				_, err = exchange(tm, local, nil)
				got, _, _ := strings.Cut(fmt.Sprint(err), " (failed on rank 1")
				if want := msg[:min(n, maxRemoteMsg)]; c.Rank() != 1 && got != want {
					return fmt.Errorf("rank %d: message of %d bytes arrived as %d bytes", c.Rank(), len(want), len(got))
				}
				slots, err := exchange(tm, nil, func(b []byte) { b[0] = byte(c.Rank() + 1) })
				if err != nil {
					return err
				}
				for r := range 3 {
					if slots[r*format.SlotLen] != byte(r+1) {
						return fmt.Errorf("rank %d: the round after the failure is out of step", c.Rank())
					}
				}
				return nil
			})
		})
	}
}
