//go:build !amd64 && !arm64

package raw

// Pause does nothing where there is no spin-wait hint this package emits.
func Pause() {}
