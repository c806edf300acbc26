package shm

import (
	"fmt"

	"github.com/shmrun/shmrun/internal/raw"
)

// ErrView marks a typed view that cannot be made.
var ErrView = raw.ErrView

// View returns b as a slice of T. It refuses a T that holds Go pointers (the
// garbage collector does not scan shared memory, and addresses differ per
// process), a b whose address is not aligned for T, and a length that is not a
// multiple of T's size; the error wraps ErrView and names the cause. The view
// aliases b and lives as long as b's mapping: using it after Unmap faults.
// Go code that polls a word another process writes must use sync/atomic on
// the view's elements, not plain loads.
func View[T any](b []byte) ([]T, error) {
	v, err := raw.View[T](b)
	if err != nil {
		return nil, fmt.Errorf("shm: %w", err) // it wraps ErrView, and says so once
	}
	return v, nil
}

// Bytes returns the memory of s as bytes, aliasing s: for copying typed data
// into and out of segments. T must be pointer-free (as View demands).
func Bytes[T any](s []T) []byte { return raw.Bytes(s) }
