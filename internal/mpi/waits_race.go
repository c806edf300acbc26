//go:build mpi && race

package mpi

import "sync/atomic"

// waits counts the calls of waited (see waits_norace.go).
var waits atomic.Uint32

func waitsInc() uint32 { return waits.Add(1) }
