/* ranks: 3
 * In-place reductions of the pair types whose C struct ends in padding
 * (MPI_DOUBLE_INT, MPI_LONG_INT): the buffer's data span is short of the
 * last element's padding, and every element must still be reduced, the
 * last included. MPI_MAXLOC and MPI_MINLOC through Allreduce, Reduce at
 * the root, Scan, Exscan, Reduce_scatter_block and Reduce_scatter, all
 * with MPI_IN_PLACE, at counts 1 to 3. The same output under Open MPI. */
#include "check.h"

struct di {
	double v;
	int i;
};
struct li {
	long v;
	int i;
};

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

	enum { MAXN = 3 };
	for (int n = 1; n <= MAXN; n++) {
		struct di d[MAXN * 8];
		struct li l[MAXN * 8];
		/* element k of rank r: value 10*r + k, index r; MAXLOC picks the
		 * last rank, MINLOC rank 0. */
#define FILL(cnt)                                              \
	for (int k = 0; k < (cnt); k++) {                      \
		d[k].v = 10.0 * rank + k, d[k].i = rank;       \
		l[k].v = 10L * rank + k, l[k].i = rank;        \
	}
		FILL(n);
		CHECK(MPI_Allreduce(MPI_IN_PLACE, d, n, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD) == MPI_SUCCESS, "Allreduce");
		CHECK(MPI_Allreduce(MPI_IN_PLACE, l, n, MPI_LONG_INT, MPI_MINLOC, MPI_COMM_WORLD) == MPI_SUCCESS, "Allreduce");
		for (int k = 0; k < n; k++) {
			CHECK(d[k].v == 10.0 * (size - 1) + k && d[k].i == size - 1, "n %d Allreduce MAXLOC [%d] = (%g, %d)", n,
			      k, d[k].v, d[k].i);
			CHECK(l[k].v == k && l[k].i == 0, "n %d Allreduce MINLOC [%d] = (%ld, %d)", n, k, l[k].v, l[k].i);
		}
		FILL(n);
		int root = size - 1, rc;
		if (rank == root)
			rc = MPI_Reduce(MPI_IN_PLACE, d, n, MPI_DOUBLE_INT, MPI_MAXLOC, root, MPI_COMM_WORLD);
		else
			rc = MPI_Reduce(d, NULL, n, MPI_DOUBLE_INT, MPI_MAXLOC, root, MPI_COMM_WORLD);
		CHECK(rc == MPI_SUCCESS, "n %d Reduce: class %d", n, class_of(rc));
		for (int k = 0; rank == root && k < n; k++)
			CHECK(d[k].v == 10.0 * (size - 1) + k && d[k].i == size - 1, "n %d Reduce [%d] = (%g, %d)", n, k, d[k].v,
			      d[k].i);
		FILL(n);
		CHECK(MPI_Scan(MPI_IN_PLACE, d, n, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD) == MPI_SUCCESS, "Scan");
		for (int k = 0; k < n; k++)
			CHECK(d[k].v == 10.0 * rank + k && d[k].i == rank, "n %d Scan [%d] = (%g, %d)", n, k, d[k].v, d[k].i);
		FILL(n);
		CHECK(MPI_Exscan(MPI_IN_PLACE, l, n, MPI_LONG_INT, MPI_MINLOC, MPI_COMM_WORLD) == MPI_SUCCESS, "Exscan");
		for (int k = 0; rank > 0 && k < n; k++)
			CHECK(l[k].v == k && l[k].i == 0, "n %d Exscan [%d] = (%ld, %d)", n, k, l[k].v, l[k].i);
		FILL(n * size);
		CHECK(MPI_Reduce_scatter_block(MPI_IN_PLACE, d, n, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD) == MPI_SUCCESS,
		      "Reduce_scatter_block");
		for (int k = 0; k < n; k++)
			CHECK(d[k].v == 10.0 * (size - 1) + rank * n + k && d[k].i == size - 1,
			      "n %d Reduce_scatter_block [%d] = (%g, %d)", n, k, d[k].v, d[k].i);
		FILL(n * size);
		int counts[8];
		for (int q = 0; q < size; q++)
			counts[q] = n;
		CHECK(MPI_Reduce_scatter(MPI_IN_PLACE, l, counts, MPI_LONG_INT, MPI_MAXLOC, MPI_COMM_WORLD) == MPI_SUCCESS,
		      "Reduce_scatter");
		for (int k = 0; k < n; k++)
			CHECK(l[k].v == 10L * (size - 1) + rank * n + k && l[k].i == size - 1, "n %d Reduce_scatter [%d] = (%ld, %d)",
			      n, k, l[k].v, l[k].i);
	}
	report("in-place reductions of MPI_DOUBLE_INT and MPI_LONG_INT reduce every element");

	MPI_Finalize();
	return failures != 0;
}
