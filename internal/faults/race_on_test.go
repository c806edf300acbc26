//go:build race

package faults

// raceBuild: under -race every rank is a race-detector binary, several
// times larger and slower, and the detector cannot see across processes
// anyway; the soak runs fewer ranks.
const raceBuild = true
