//go:build !mpi && cgo

package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/shmrun/shmrun/comm"
)

// TestClassOfJoined: a call's own error joined with an earlier
// collective's mismatch found late (comm's withLate puts the call's own
// first) has the class of the call's own error, not the late one's, even
// where the late one's class comes first in the table.
func TestClassOfJoined(t *testing.T) {
	own := fmt.Errorf("comm: Bcast on rank 1: root 7 of 2 ranks: %w", comm.ErrRoot)
	late := fmt.Errorf("comm: Reduce on rank 1: rank 0 passed 1 elements, rank 1 passed 2: %w", comm.ErrCount)
	if got, want := classOf(errors.Join(own, late)), classOf(own); got != want || got == classOf(late) {
		t.Fatalf("class %d of the joined error, want the call's own %d (the late one's is %d)", got, want, classOf(late))
	}
}
