//go:build race

package rmacheck

// raceOn: the race detector is on. Two ranks of one test process read each
// other's ring records as other processes do, by a sequence check it
// cannot see.
const raceOn = true
