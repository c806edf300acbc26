/* ranks: 4
 * MPI_Alltoallw: a matrix transpose that sends columns (a vector type)
 * and receives them as rows through a different type per sender, its
 * large-count form, the in-place form with gaps between the blocks, and
 * a byte count that does not match reported on every rank. */
#include <string.h>
#include "check.h"

#define N 4

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (size != N) {
		if (rank == 0)
			printf("needs %d ranks\n", N);
		MPI_Finalize();
		return 1;
	}

	/* Rank r holds A[i][j] = r*100 + i*10 + j and sends column j to rank
	 * j; it receives rank q's column r as row q of B, as N ints from an
	 * even rank and as one contiguous type of N ints from an odd one. */
	int a[N][N], b[N][N];
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			a[i][j] = rank * 100 + i * 10 + j, b[i][j] = -1;
	MPI_Datatype col, row;
	MPI_Type_vector(N, 1, N, MPI_INT, &col);
	MPI_Type_commit(&col);
	MPI_Type_contiguous(N, MPI_INT, &row);
	MPI_Type_commit(&row);
	int sc[N], sd[N], rc[N], rd[N];
	MPI_Datatype st[N], rt[N];
	for (int q = 0; q < N; q++) {
		sc[q] = 1, sd[q] = q * (int)sizeof(int), st[q] = col;
		rd[q] = q * N * (int)sizeof(int);
		if (q % 2 == 0)
			rc[q] = N, rt[q] = MPI_INT;
		else
			rc[q] = 1, rt[q] = row;
	}
	CHECK(MPI_Alltoallw(a, sc, sd, st, b, rc, rd, rt, MPI_COMM_WORLD) == MPI_SUCCESS, "Alltoallw");
	for (int q = 0; q < N; q++)
		for (int i = 0; i < N; i++)
			CHECK(b[q][i] == q * 100 + i * 10 + rank, "B[%d][%d] = %d", q, i, b[q][i]);
	report("a transpose by columns");

	/* The large-count form (MPI 4; not in Open MPI 4.1), with nothing
	 * sent to or received from the next rank. */
#ifdef MPI_ABI_VERSION
	MPI_Count csc[N], crc[N];
	MPI_Aint csd[N], crd[N];
	int next = (rank + 1) % N, prev = (rank + N - 1) % N;
	memset(b, 0xff, sizeof b);
	for (int q = 0; q < N; q++) {
		csc[q] = q == next ? 0 : sc[q], csd[q] = sd[q];
		crc[q] = q == prev ? 0 : rc[q], crd[q] = rd[q];
	}
	CHECK(MPI_Alltoallw_c(a, csc, csd, st, b, crc, crd, rt, MPI_COMM_WORLD) == MPI_SUCCESS, "Alltoallw_c");
	for (int q = 0; q < N; q++)
		for (int i = 0; i < N; i++)
			CHECK(b[q][i] == (q == prev ? -1 : q * 100 + i * 10 + rank), "large-count B[%d][%d] = %d", q, i, b[q][i]);
#endif
	report("the large-count form, with empty blocks");

	/* In place: block j (two doubles, then a gap of one) is sent to rank
	 * j and replaced by rank j's block for this rank. */
	double buf[3 * N];
	MPI_Datatype pair;
	MPI_Type_contiguous(2, MPI_DOUBLE, &pair);
	MPI_Type_commit(&pair);
	for (int j = 0; j < N; j++) {
		buf[3 * j] = rank * 10 + j, buf[3 * j + 1] = -(rank * 10 + j), buf[3 * j + 2] = 0.5;
		rd[j] = 3 * j * (int)sizeof(double);
		if (j % 2 == 0)
			rc[j] = 2, rt[j] = MPI_DOUBLE;
		else
			rc[j] = 1, rt[j] = pair;
	}
	CHECK(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, buf, rc, rd, rt, MPI_COMM_WORLD) == MPI_SUCCESS, "Alltoallw in place");
	for (int j = 0; j < N; j++)
		CHECK(buf[3 * j] == j * 10 + rank && buf[3 * j + 1] == -(j * 10 + rank) && buf[3 * j + 2] == 0.5,
		      "block %d: %g %g %g", j, buf[3 * j], buf[3 * j + 1], buf[3 * j + 2]);
	report("in place, with gaps");

#ifdef MPI_ABI_VERSION
	/* Rank 0 sends rank 1 a column of N ints where rank 1 expects N-1:
	 * MPI_ERR_COUNT on every rank, nothing received. (Open MPI does not
	 * compare the two sides.) */
	for (int q = 0; q < N; q++) {
		sc[q] = 1, sd[q] = q * (int)sizeof(int), st[q] = col;
		rc[q] = N, rd[q] = q * N * (int)sizeof(int), rt[q] = MPI_INT;
	}
	if (rank == 1)
		rc[0] = N - 1;
	int err = MPI_Alltoallw(a, sc, sd, st, b, rc, rd, rt, MPI_COMM_WORLD);
	CHECK(class_of(err) == MPI_ERR_COUNT, "mismatched blocks: class %d", class_of(err));
	/* One rank's NULL array fails every rank's call. */
	err = MPI_Alltoallw(a, sc, sd, rank == 2 ? NULL : st, b, rc, rd, rt, MPI_COMM_WORLD);
	CHECK(class_of(err) == MPI_ERR_ARG, "rank 2's NULL sendtypes: class %d", class_of(err));
#endif
	report("errors on every rank");

	MPI_Type_free(&col);
	MPI_Type_free(&row);
	MPI_Type_free(&pair);
	MPI_Finalize();
	return failures != 0;
}
