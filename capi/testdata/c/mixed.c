/* ranks: mixed (run with Go ranks first: testdata/mixgo)
 * The C half of the mixed job: see testdata/mixgo/main.go, which it
 * mirrors call for call. */
#include <stdatomic.h>
#include <stdint.h>
#include "check.h"

#define WORDS 8
#define ADDS 1000
#define ACCS 200
#define LOCKED 50

int main(int argc, char **argv)
{
	int me, n;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &n);

	MPI_Win w;
	int64_t *mine;
	MPI_Win_allocate_shared(WORDS * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &w);
	MPI_Win_lock_all(0, w);
	for (int i = 0; i < WORDS; i++)
		mine[i] = me * 100 + i;
	MPI_Win_sync(w);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_sync(w);
	for (int q = 0; q < n; q++) {
		int64_t *v;
		MPI_Aint sz;
		int du;
		MPI_Win_shared_query(w, q, &sz, &du, &v);
		for (int i = 0; i < WORDS; i++)
			CHECK(v[i] == q * 100 + i, "rank %d's word %d is %ld", q, i, (long)v[i]);
	}
	MPI_Win_unlock_all(w);
	report("loads of every rank's part");

	MPI_Win cw;
	int64_t *unused, *ctr;
	MPI_Win_allocate_shared(me == 0 ? 3 * 8 : 0, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &unused, &cw);
	MPI_Aint sz;
	int du;
	MPI_Win_shared_query(cw, 0, &sz, &du, &ctr);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock_all(0, cw);
	for (int i = 0; i < ADDS; i++)
		atomic_fetch_add_explicit((_Atomic int64_t *)&ctr[0], 1, memory_order_seq_cst);
	int64_t one = 1;
	for (int i = 0; i < ACCS; i++) {
		MPI_Accumulate(&one, 1, MPI_INT64_T, 0, 1, 1, MPI_INT64_T, MPI_SUM, cw);
		MPI_Win_flush(0, cw);
	}
	MPI_Win_unlock_all(cw);
	for (int i = 0; i < LOCKED; i++) {
		int64_t v;
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, cw);
		MPI_Get(&v, 1, MPI_INT64_T, 0, 2, 1, MPI_INT64_T, cw);
		MPI_Win_flush(0, cw);
		v++;
		MPI_Put(&v, 1, MPI_INT64_T, 0, 2, 1, MPI_INT64_T, cw);
		MPI_Win_unlock(0, cw);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	report("atomics, accumulates and locks of both languages");

	int tok = 1;
	if (me == 0) {
		MPI_Send(&tok, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
		MPI_Recv(&tok, 1, MPI_INT, n - 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		CHECK(tok == 1 + n * (n - 1) / 2, "token %d", tok);
	} else {
		MPI_Recv(&tok, 1, MPI_INT, me - 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		tok += me;
		MPI_Send(&tok, 1, MPI_INT, (me + 1) % n, 3, MPI_COMM_WORLD);
	}
	double d = me, sum = 0;
	MPI_Allreduce(&d, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	CHECK(sum == n * (n - 1) / 2, "allreduce %g", sum);
	report("messages and a reduction across languages");
	MPI_Win_free(&cw);
	MPI_Win_free(&w);
	MPI_Finalize();
	return 0;
}
