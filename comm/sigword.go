//go:build !race && !mpi

package comm

import "encoding/binary"

// loadSig and storeSig read and write a signature's two words (a flag
// line's, or the checker's record's): plain, a word at a time. With more
// than two ranks a rank may read a line's signature while its owner
// writes it over (coll_check.go: the reader then finds the round word
// moved on and throws what it read away); the race detector's build makes
// them atomic (sigword_race.go), so that it sees the order the round word
// gives.
func loadSig(m []byte) (uint64, uint64) {
	return binary.LittleEndian.Uint64(m), binary.LittleEndian.Uint64(m[8:])
}

func storeSig(m []byte, w0, w1 uint64) {
	binary.LittleEndian.PutUint64(m, w0)
	binary.LittleEndian.PutUint64(m[8:], w1)
}
