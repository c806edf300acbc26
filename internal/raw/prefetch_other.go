//go:build !amd64 && !arm64

package raw

// Prefetch does nothing where this package emits no prefetch hint.
func Prefetch(m []byte, off int64) {}
