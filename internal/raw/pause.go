//go:build amd64 || arm64

package raw

// Pause tells the CPU that its caller spins on a word another core will
// write (PAUSE on amd64, YIELD on arm64): one poll per pause instead of
// a poll a cycle, which let the writer's locked add on the line wait for
// the spinner's loads to stop taking it back (a 2-rank barrier spun without
// it took 80-190 ns, with it 28 ns from C; bench/NOTES.md).
func Pause()
