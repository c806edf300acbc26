/* ranks: 4
 * Shared windows as textbooks use them: the contiguous layout's address
 * arithmetic, a zero-size rank, MPI_PROC_NULL queries, lock_all + Win_sync +
 * Barrier with plain loads, fence epochs with asserts, the attributes. */
#include <stdint.h>
#include <string.h>
#include "check.h"

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	/* Rank r holds r+1 doubles, except rank 2, which holds none. */
	MPI_Aint mysize = rank == 2 ? 0 : (MPI_Aint)(rank + 1) * sizeof(double);
	double *base;
	MPI_Win win;
	MPI_Win_allocate_shared(mysize, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);

	double *b0;
	MPI_Aint sz;
	int du;
	MPI_Win_shared_query(win, 0, &sz, &du, &b0);
	MPI_Aint off = 0;
	for (int q = 0; q < size; q++) {
		double *bq;
		MPI_Win_shared_query(win, q, &sz, &du, &bq);
		CHECK(du == sizeof(double), "rank %d's disp unit %d", q, du);
		CHECK(sz == (q == 2 ? 0 : (MPI_Aint)(q + 1) * (MPI_Aint)sizeof(double)), "rank %d's size %ld", q, (long)sz);
		if (sz > 0)
			CHECK((char *)bq == (char *)b0 + off, "rank %d's part is not where the contiguous layout puts it", q);
		off += sz;
	}
	report("contiguous layout");

	double *bn;
	MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &du, &bn);
	CHECK(bn == b0 && sz == (MPI_Aint)sizeof(double), "MPI_PROC_NULL gives %p size %ld, want rank 0's part", (void *)bn, (long)sz);
	report("MPI_PROC_NULL query");

	MPI_Win_lock_all(0, win);
	for (int i = 0; i < (int)(mysize / sizeof(double)); i++)
		base[i] = rank * 100 + i;
	MPI_Win_sync(win);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_sync(win);
	for (int q = 0; q < size; q++) {
		double *bq;
		MPI_Win_shared_query(win, q, &sz, &du, &bq);
		for (int i = 0; i < (int)(sz / sizeof(double)); i++)
			CHECK(bq[i] == q * 100 + i, "rank %d's element %d is %g", q, i, bq[i]);
	}
	MPI_Win_unlock_all(win);
	report("lock_all, Win_sync, Barrier, loads");

	/* Fence epochs: each rank puts 1000+rank into the first element of
	 * the next rank that has one (the zero-size rank 2 is skipped; rank 1
	 * puts nothing, its right neighbour being rank 2). */
	int right = (rank + 1) % size;
	if (right == 2)
		right = 3;
	MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
	double v = 1000 + rank;
	if (rank != 1) /* rank 1's right neighbour would be the empty rank 2 */
		MPI_Put(&v, 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, win);
	MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOSUCCEED, win);
	if (rank == 0)
		CHECK(base[0] == 1003, "rank 0 got %g from rank 3", base[0]);
	if (rank == 3)
		CHECK(base[0] == 1002, "rank 3 got %g from rank 2", base[0]);
	if (rank == 1)
		CHECK(base[0] == 1000, "rank 1 got %g from rank 0", base[0]);
	report("fence with asserts");

	int *flavor, *model, *dup;
	MPI_Aint *wsize;
	void *wbase;
	int flag;
	MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
	CHECK(flag && *flavor == MPI_WIN_FLAVOR_SHARED, "flavor");
	MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag);
	CHECK(flag && *model == MPI_WIN_UNIFIED, "model");
	MPI_Win_get_attr(win, MPI_WIN_SIZE, &wsize, &flag);
	CHECK(flag && *wsize == mysize, "size %ld, want %ld", (long)*wsize, (long)mysize);
	MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &dup, &flag);
	CHECK(flag && *dup == sizeof(double), "disp unit");
	MPI_Win_get_attr(win, MPI_WIN_BASE, &wbase, &flag);
	CHECK(flag && (mysize == 0 || wbase == base), "base");
	report("window attributes");

#ifdef MPI_ABI_VERSION
	/* shmrun checks every RMA call: outside an epoch, or past the target's
	 * part, a Put is an error, returned here under MPI_ERRORS_RETURN, and
	 * nothing is written. */
	MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
	double z = 5;
	int err = MPI_Put(&z, 1, MPI_DOUBLE, 0, 0, 1, MPI_DOUBLE, win), class;
	MPI_Error_class(err, &class);
	CHECK(class == MPI_ERR_RMA_SYNC, "Put outside an epoch: class %d", class);
	/* The same checks on the accumulates' common case (one 8-byte
	 * integer summed), which has a path of its own in C. */
	int64_t one64 = 1, res64 = -1;
	err = MPI_Fetch_and_op(&one64, &res64, MPI_INT64_T, 0, 0, MPI_SUM, win);
	MPI_Error_class(err, &class);
	CHECK(class == MPI_ERR_RMA_SYNC && res64 == -1, "Fetch_and_op outside an epoch: class %d", class);
	/* The request forms belong to passive-target epochs; the message
	 * names the call. */
	MPI_Request rq;
	err = MPI_Rget(&z, 1, MPI_DOUBLE, 0, 0, 1, MPI_DOUBLE, win, &rq);
	MPI_Error_class(err, &class);
	char msg[MPI_MAX_ERROR_STRING];
	int len;
	MPI_Error_string(err, msg, &len);
	CHECK(class == MPI_ERR_RMA_SYNC && strstr(msg, "MPI_Rget") && strstr(msg, "Rget on rank") && !strstr(msg, "Rput"),
	      "Rget outside an epoch: class %d: %s", class, msg);
	MPI_Win_lock_all(0, win);
	err = MPI_Put(&z, 1, MPI_DOUBLE, 0, 1, 1, MPI_DOUBLE, win); /* rank 0 holds one double */
	MPI_Error_class(err, &class);
	CHECK(class == MPI_ERR_RMA_RANGE, "Put past the part: class %d", class);
	err = MPI_Fetch_and_op(&one64, &res64, MPI_INT64_T, 0, 1, MPI_SUM, win);
	MPI_Error_class(err, &class);
	CHECK(class == MPI_ERR_RMA_RANGE && res64 == -1, "Fetch_and_op past the part: class %d", class);
	err = MPI_Accumulate(&one64, 1, MPI_INT64_T, 0, 1, 1, MPI_INT64_T, MPI_SUM, win);
	MPI_Error_class(err, &class);
	CHECK(class == MPI_ERR_RMA_RANGE, "Accumulate past the part: class %d", class);
	err = MPI_Get_accumulate(&one64, 1, MPI_INT64_T, &res64, 1, MPI_INT64_T, size, 0, 1, MPI_INT64_T, MPI_SUM, win);
	MPI_Error_class(err, &class);
	CHECK(class == MPI_ERR_RANK && res64 == -1, "Get_accumulate to rank %d of %d: class %d", size, size, class);
	err = MPI_Accumulate(&z, 1, MPI_DOUBLE, 0, 0, 1, MPI_DOUBLE, MPI_BAND, win);
	MPI_Error_class(err, &class);
	CHECK(class == MPI_ERR_OP, "MPI_BAND on doubles: class %d", class);
	/* A large count whose bytes wrap around 2^64 to 8 is refused, not
	 * taken for one element (nor walked past the part). */
	MPI_Count huge = ((MPI_Count)1 << 61) + 1;
	err = MPI_Accumulate_c(&z, huge, MPI_DOUBLE, 0, 0, huge, MPI_DOUBLE, MPI_SUM, win);
	CHECK(err != MPI_SUCCESS, "Accumulate_c of 2^61 + 1 doubles succeeded");
	err = MPI_Put_c(&z, huge, MPI_DOUBLE, 0, 0, huge, MPI_DOUBLE, win);
	CHECK(err != MPI_SUCCESS, "Put_c of 2^61 + 1 doubles succeeded");
	MPI_Win_unlock_all(win);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		CHECK(base[0] == 1003, "a refused call wrote: %g", base[0]);
	MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL);
#endif
	report("RMA errors");

	MPI_Win_free(&win);
	CHECK(win == MPI_WIN_NULL, "Win_free leaves the handle");
	report("Win_free");
	MPI_Finalize();
	return 0;
}
