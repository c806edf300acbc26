//go:build !amd64 || race

package shm

// useRep: no REP MOVSB path on this architecture, or under the race
// detector, which sees copy's accesses and not assembly's.
const useRep = false

func copyCached(dst, src []byte) { copy(dst, src) }

const useVec = false

func copyVec(dst, src *byte, n uintptr) { panic("shm: copyVec without AVX2") }
