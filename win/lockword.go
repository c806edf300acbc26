package win

import (
	"sync/atomic"

	"github.com/shmrun/shmrun/internal/format"
)

// The ticket reader-writer lock word of docs/FORMAT.md (package format's
// Lock* constants), which both backends' passive-target locks use: the
// shmrun backend's in the window's sync block (lock.go), the MPI backend's
// direct path in its region of the MPI's shared window (mpi_dlock.go).

// lwW, lwR and lwX extract W, R and X from a lock word's value.
func lwW(v uint64) uint64 { return v & format.LockCounterMask }
func lwR(v uint64) uint64 { return (v >> format.LockRShift) & format.LockCounterMask }
func lwX(v uint64) uint64 { return (v >> format.LockXShift) & format.LockXMask }

// addLock adds d to a lock word, clears a carry guard the add set, and
// returns the word after the add.
func addLock(word *uint64, d uint64) uint64 {
	v := atomic.AddUint64(word, d)
	if v&format.LockGuards != 0 {
		atomic.AndUint64(word, ^uint64(format.LockGuards))
	}
	return v
}

// ticketOf returns the ticket drawn by the add that produced v.
func ticketOf(v uint64) uint64 { return ((v >> format.LockTShift) - 1) & format.LockCounterMask }
