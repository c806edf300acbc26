/* ranks: 1
 * MPI_Type_create_darray: for block, cyclic and undistributed dimensions,
 * default and given dargs, both orders, every process of the grid, the
 * indices of the elements its type takes from an array (by MPI_Pack of
 * one instance), and its extent. The same output under Open MPI
 * (TestCProgramsOpenMPI): an independent implementation of the same
 * distribution rules. */
#include <stdio.h>
#include "check.h"

static int src[512];

static void show(int size, int ndims, const int *gsizes, const int *distribs, const int *dargs, const int *psizes,
		 int order)
{
	printf("darray %s", order == MPI_ORDER_C ? "C" : "Fortran");
	for (int d = 0; d < ndims; d++)
		printf(" %d:%s/%d/%d", gsizes[d],
		       distribs[d] == MPI_DISTRIBUTE_BLOCK ? "block" : distribs[d] == MPI_DISTRIBUTE_CYCLIC ? "cyclic" : "none",
		       dargs[d] == MPI_DISTRIBUTE_DFLT_DARG ? 0 : dargs[d], psizes[d]);
	printf("\n");
	for (int rank = 0; rank < size; rank++) {
		MPI_Datatype t;
		int err = MPI_Type_create_darray(size, rank, ndims, gsizes, distribs, dargs, psizes, order, MPI_INT, &t);
		CHECK(err == MPI_SUCCESS, "rank %d: error %d", rank, err);
		if (err != MPI_SUCCESS)
			continue;
		MPI_Type_commit(&t);
		MPI_Aint lb, extent;
		MPI_Type_get_extent(t, &lb, &extent);
		int n, pos = 0;
		MPI_Type_size(t, &n);
		int out[512];
		MPI_Pack(src, 1, t, out, (int)sizeof out, &pos, MPI_COMM_WORLD);
		printf("  rank %d: lb %ld extent %ld:", rank, (long)lb, (long)extent);
		for (int i = 0; i < n / 4; i++)
			printf(" %d", out[i]);
		printf("\n");
		MPI_Type_free(&t);
	}
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	for (int i = 0; i < 512; i++)
		src[i] = i;
	const int B = MPI_DISTRIBUTE_BLOCK, C = MPI_DISTRIBUTE_CYCLIC, N = MPI_DISTRIBUTE_NONE, D = MPI_DISTRIBUTE_DFLT_DARG;
	for (int o = 0; o < 2; o++) {
		int order = o ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
		show(3, 1, (int[]){10}, (int[]){B}, (int[]){D}, (int[]){3}, order);
		show(3, 1, (int[]){10}, (int[]){C}, (int[]){2}, (int[]){3}, order);
		show(4, 2, (int[]){7, 5}, (int[]){B, B}, (int[]){D, D}, (int[]){2, 2}, order);
		show(6, 2, (int[]){7, 5}, (int[]){C, B}, (int[]){2, D}, (int[]){2, 3}, order);
		show(4, 2, (int[]){6, 9}, (int[]){N, C}, (int[]){D, 2}, (int[]){1, 4}, order);
		show(4, 3, (int[]){4, 3, 5}, (int[]){B, C, C}, (int[]){D, 1, 3}, (int[]){2, 1, 2}, order);
	}
	fflush(stdout);
	report("every part");
	MPI_Finalize();
	return 0;
}
