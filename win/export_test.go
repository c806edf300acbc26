//go:build !mpi

package win

import "errors"

// SetMappedHook makes f see the directory and name of every window segment
// this process maps, before the segment is unlinked (for the C interop
// test, which runs it in one rank process only). It returns the restore
// function.
func SetMappedHook(f func(dir, name string)) (restore func()) {
	old := testHookMapped
	testHookMapped = f
	return func() { testHookMapped = old }
}

// PlacementFromMaps is Placement's fallback (numa_maps), for testing it on
// a machine where move_pages works.
func PlacementFromMaps(w *Win) ([]PartPlacement, error) {
	return placementFromMaps(w.rank, w.mem, errors.New("test: move_pages not asked"))
}
