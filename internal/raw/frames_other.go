//go:build !amd64

package raw

// FrameReturns walks no frames where Go keeps no frame pointers this
// package follows: it returns 0, and callers use runtime.Callers.
func FrameReturns([]uintptr) int { return 0 }

// ReturnPC returns 0 here: callers walk the frames another way.
func ReturnPC() uintptr { return 0 }
