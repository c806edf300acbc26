//go:build !amd64 && !arm64

package raw

import "golang.org/x/sys/unix"

// Goroutine identifies the calling goroutine where this package has no
// assembly for it: by its thread, which a caller that needs the answer to
// hold locks to it (runtime.LockOSThread) for as long as it compares.
func Goroutine() uintptr { return uintptr(unix.Gettid()) }

// GoroutineByThread reports whether Goroutine identifies the calling
// thread rather than the goroutine: then a caller that compares it must
// keep to its thread (runtime.LockOSThread) meanwhile.
const GoroutineByThread = true
