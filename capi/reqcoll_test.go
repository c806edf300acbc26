//go:build !mpi && cgo

package main

import (
	"path/filepath"
	"testing"
)

// TestCInPlaceOffRoot: MPI_IN_PLACE where a rooted collective does not
// allow it (the send buffer of a Gather or Gatherv, the receive buffer of
// a Scatter or Scatterv, off the root) is an error each non-root rank
// gets from its handler, not a copy from or to the address MPI_IN_PLACE
// is. (Not a testdata/c program: Open MPI hangs on it.)
func TestCInPlaceOffRoot(t *testing.T) {
	dir := install(t)
	tmp := t.TempDir()
	src, exe := filepath.Join(tmp, "inplace.c"), filepath.Join(tmp, "inplace")
	prog := `#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
	int rank, bad = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm c;
	MPI_Comm_dup(MPI_COMM_WORLD, &c);
	MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
	int counts[3] = {8, 8, 8}, displs[3] = {0, 8, 16};
	char all[24] = {0};
	for (int k = 0; k < 4; k++) {
		int rc;
		switch (k) {
		case 0: rc = MPI_Gatherv(MPI_IN_PLACE, 8, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, c); break;
		case 1: rc = MPI_Scatterv(all, counts, displs, MPI_BYTE, MPI_IN_PLACE, 8, MPI_BYTE, 0, c); break;
		case 2: rc = MPI_Gather(MPI_IN_PLACE, 8, MPI_BYTE, all, 8, MPI_BYTE, 0, c); break;
		default: rc = MPI_Scatter(all, 8, MPI_BYTE, MPI_IN_PLACE, 8, MPI_BYTE, 0, c); break;
		}
		if (rank != 0 && rc == MPI_SUCCESS) {
			printf("rank %d: call %d with MPI_IN_PLACE off the root succeeded\n", rank, k);
			bad = 1;
		}
		/* The root of a Scatter learns of the others' refusal in its
		 * next call on c (it does not wait for them): this one. */
		MPI_Barrier(c);
	}
	MPI_Comm_free(&c);
	MPI_Finalize();
	return bad;
}
`
	shmccBuild(t, dir, src, exe, prog)
	run(t, nil, filepath.Join(dir, "bin", "shmrun"), "-n", "3", "--oversubscribe", "--timeout", "60s", exe)
}
