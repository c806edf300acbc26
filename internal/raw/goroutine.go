//go:build amd64 || arm64

package raw

// Goroutine identifies the calling goroutine: the address of the runtime's
// record of it (the g the Go ABI keeps in thread-local storage on amd64
// and in a register on arm64), read without a system call. Two goroutines
// alive at once never share it; a record is reused once its goroutine has
// exited, so compare only against a goroutine known to be alive (package
// comm: the one running a queued collective, while it runs it).
func Goroutine() uintptr

// GoroutineByThread reports whether Goroutine identifies the calling
// thread rather than the goroutine: then a caller that compares it must
// keep to its thread (runtime.LockOSThread) meanwhile.
const GoroutineByThread = false
