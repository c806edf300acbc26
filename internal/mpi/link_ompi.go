//go:build mpi && !mpich

package mpi

/*
#cgo pkg-config: ompi-c
#include <mpi.h>
#include <stdint.h>
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Impl names the MPI this build links (pkg-config ompi-c).
const Impl = "Open MPI"

// allocByCreate: Open MPI's MPI_Win_allocate is right, and lets it choose
// the memory (osc/sm's shared segment on one node).
const allocByCreate = false

// Launcher is the command that starts a job of this MPI on this node:
// Open MPI's mpirun, allowed to oversubscribe (tests run more ranks than
// cores) and to pass the named variables on.
func Launcher(n int, env []string) []string {
	cmd := []string{"mpirun.openmpi", "--oversubscribe", "-n", fmt.Sprint(n)}
	for _, kv := range env {
		cmd = append(cmd, "-x", kv)
	}
	return cmd
}

// envDefaults are the settings Init makes before MPI_Init where the user
// has not: Open MPI 4.1's default one-sided component for MPI_Win_create
// windows (osc/rdma over btl/vader) fails on a job of one process and
// crashes in MPI_Compare_and_swap on this machine; osc/sm (shared
// windows, one node) and osc/ucx (the rest) are right.
var envDefaults = [][2]string{{"OMPI_MCA_osc", "sm,ucx"}}

// DynamicBroken says why this MPI's dynamic windows are refused: Open MPI
// 4.1's one-sided components crash in MPI_Compare_and_swap on an
// MPI_Win_create_dynamic window on this machine (osc/ucx, osc/rdma; a
// plain C program too).
const DynamicBroken = "Open MPI 4.1's one-sided components (osc/ucx, osc/rdma) crash in MPI_Compare_and_swap on dynamic windows"

// The handles as the integers the hot calls (shmc_h_* in cmpi.go) take:
// Open MPI's handles are pointers to its objects.
func hcomm(h C.MPI_Comm) C.uintptr_t     { return C.uintptr_t(uintptr(unsafe.Pointer(h))) }
func hwin(h C.MPI_Win) C.uintptr_t       { return C.uintptr_t(uintptr(unsafe.Pointer(h))) }
func htype(h C.MPI_Datatype) C.uintptr_t { return C.uintptr_t(uintptr(unsafe.Pointer(h))) }
func hop(h C.MPI_Op) C.uintptr_t         { return C.uintptr_t(uintptr(unsafe.Pointer(h))) }
