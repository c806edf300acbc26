//go:build mpi && mpich

package mpi

/*
#cgo pkg-config: mpich
#include <mpi.h>
#include <stdint.h>
*/
import "C"

import (
	"fmt"
	"strings"
)

// Impl names the MPI this build links (pkg-config mpich).
const Impl = "MPICH"

// allocByCreate makes Allocate windows by MPI_Alloc_mem and
// MPI_Win_create: Debian's MPICH 4.0.2 (ch4:ucx) puts fence-synchronized
// MPI_Put data at the wrong place in MPI_Win_allocate windows (a rank's
// memory shifted by a disp unit, whatever UCX_TLS), and is right in
// MPI_Win_create ones.
const allocByCreate = true

// Launcher is the command that starts a job of this MPI on this node:
// MPICH's mpiexec (hydra), which passes the environment on by itself.
func Launcher(n int, env []string) []string {
	cmd := []string{"mpiexec.mpich", "-n", fmt.Sprint(n)}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		cmd = append(cmd, "-genv", k, v)
	}
	return cmd
}

// envDefaults are the settings Init makes before MPI_Init where the user
// has not: none for MPICH.
var envDefaults [][2]string

// DynamicBroken is empty: MPICH's dynamic windows are right.
const DynamicBroken = ""

// The handles as the integers the hot calls (shmc_h_* in cmpi.go) take:
// MPICH's handles are ints.
func hcomm(h C.MPI_Comm) C.uintptr_t     { return C.uintptr_t(h) }
func hwin(h C.MPI_Win) C.uintptr_t       { return C.uintptr_t(h) }
func htype(h C.MPI_Datatype) C.uintptr_t { return C.uintptr_t(h) }
func hop(h C.MPI_Op) C.uintptr_t         { return C.uintptr_t(h) }
