/* ranks: 2
 * RMA arguments at the edges (MPI 4.1 §12.3): MPI_Fetch_and_op and
 * MPI_Compare_and_swap to MPI_PROC_NULL leave the result buffer as it is;
 * a call of no data succeeds wherever its displacement points (Open MPI
 * and MPICH take it too; one of data past the window is MPI_ERR_RMA_RANGE
 * with shmrun); a negative target count is MPI_ERR_COUNT, an
 * unknown lock type MPI_ERR_LOCKTYPE. With shmrun (the standard ABI's
 * header), MPI_Fetch_and_op of a derived datatype of two elements is
 * MPI_ERR_TYPE (one element of a predefined datatype, §12.3.4; Open MPI
 * takes it). */
#include <stdint.h>

#include "check.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int64_t *base;
	MPI_Win win;
	MPI_Win_allocate(4 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
	MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
	for (int i = 0; i < 4; i++)
		base[i] = 10 * rank + i;
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock_all(0, win);

	int64_t one = 1, cmp = 0, res = -5;
	int err = MPI_Fetch_and_op(&one, &res, MPI_INT64_T, MPI_PROC_NULL, 0, MPI_SUM, win);
	CHECK(err == MPI_SUCCESS && res == -5, "Fetch_and_op to MPI_PROC_NULL: %d, result %lld", class_of(err), (long long)res);
	double d = 1, dres = -5;
	err = MPI_Fetch_and_op(&d, &dres, MPI_DOUBLE, MPI_PROC_NULL, 0, MPI_MAX, win);
	CHECK(err == MPI_SUCCESS && dres == -5, "Fetch_and_op(MPI_DOUBLE) to MPI_PROC_NULL: %d, result %g", class_of(err), dres);
	err = MPI_Compare_and_swap(&one, &cmp, &res, MPI_INT64_T, MPI_PROC_NULL, 0, win);
	CHECK(err == MPI_SUCCESS && res == -5, "Compare_and_swap to MPI_PROC_NULL: %d, result %lld", class_of(err), (long long)res);
	report("MPI_Fetch_and_op and MPI_Compare_and_swap to MPI_PROC_NULL leave the result");

	int other = 1 - rank;
	err = MPI_Put(&one, 0, MPI_INT64_T, other, 1000, 0, MPI_INT64_T, win);
	CHECK(err == MPI_SUCCESS, "a Put of no data past the window: %d", class_of(err));
	err = MPI_Get(&res, 0, MPI_INT64_T, other, 1000, 0, MPI_INT64_T, win);
	CHECK(err == MPI_SUCCESS, "a Get of no data past the window: %d", class_of(err));
#ifdef MPI_ABI_VERSION
	/* Open MPI 4.1's osc/sm writes it into the next rank's memory. */
	err = MPI_Put(&one, 1, MPI_INT64_T, other, 4, 1, MPI_INT64_T, win);
	CHECK(class_of(err) == MPI_ERR_RMA_RANGE, "a Put of one element past the window: class %d", class_of(err));
#endif
	report("a call of no data goes anywhere; one of data is checked");

	err = MPI_Put(&one, 1, MPI_INT64_T, other, 0, -1, MPI_INT64_T, win);
	CHECK(class_of(err) == MPI_ERR_COUNT, "a Put with a target count of -1: class %d", class_of(err));
	err = MPI_Get(&res, 1, MPI_INT64_T, other, 0, -1, MPI_INT64_T, win);
	CHECK(class_of(err) == MPI_ERR_COUNT, "a Get with a target count of -1: class %d", class_of(err));
	report("a negative target count is MPI_ERR_COUNT");

#ifdef MPI_ABI_VERSION
	MPI_Datatype two;
	MPI_Type_contiguous(2, MPI_INT64_T, &two);
	MPI_Type_commit(&two);
	int64_t two_in[2] = {1, 1}, two_res[2] = {-5, -5};
	err = MPI_Fetch_and_op(two_in, two_res, two, other, 0, MPI_SUM, win);
	CHECK(class_of(err) == MPI_ERR_TYPE && two_res[0] == -5, "Fetch_and_op of a type of two elements: class %d", class_of(err));
	MPI_Type_free(&two);
#endif
	report("MPI_Fetch_and_op of two elements is MPI_ERR_TYPE (shmrun's check)");
	MPI_Win_unlock_all(win);

	err = MPI_Win_lock(7, other, 0, win);
	CHECK(class_of(err) == MPI_ERR_LOCKTYPE, "MPI_Win_lock of lock type 7: class %d", class_of(err));
	report("an unknown lock type is MPI_ERR_LOCKTYPE");

	MPI_Barrier(MPI_COMM_WORLD);
	int64_t want = 10 * rank;
	CHECK(base[0] == want && base[1] == want + 1, "this rank's window changed: %lld %lld", (long long)base[0], (long long)base[1]);
	report("nothing landed");
	MPI_Win_free(&win);
	MPI_Finalize();
	return 0;
}
