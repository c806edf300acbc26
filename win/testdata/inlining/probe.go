// Package probe calls the hot paths of package win the way a program does,
// so that TestIntendedInlining can read from the compiler what it inlines at
// a caller outside win (generic functions are compiled only where they are
// instantiated).
package probe

import (
	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/win"
)

func Flush(w *win.Win) error { return w.Flush(0) }

func FetchAndOp(w *win.Win) (int64, error) { return win.FetchAndOp(w, int64(1), 0, 0, atomics.Sum) }

func Accumulate(w *win.Win, v []int64) error { return win.Accumulate(w, v, 0, 0, atomics.Sum) }

func GetAccumulate(w *win.Win, v, r []uint64) error {
	return win.GetAccumulate(w, v, r, 0, 0, atomics.Sum)
}

func CompareAndSwap(w *win.Win) (int64, error) { return win.CompareAndSwap(w, int64(1), 0, 0, 0) }
