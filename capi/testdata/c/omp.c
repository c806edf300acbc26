/* ranks: 2
 * cflags: -fopenmp
 * C ranks with OpenMP threads under MPI_THREAD_MULTIPLE: every thread of
 * each rank exchanges messages with its twin thread on the other rank (tag
 * = thread number) and adds to a counter in rank 0's window, at once;
 * then every thread posts windows of Irecvs and Isends at once.
 * Then one thread per target locks and unlocks its own target at once
 * (passive-target epochs to different targets may overlap): exclusive
 * locks around a Get+Put increment, shared ones around a Fetch_and_op,
 * with flush, flush_all, flush_local_all and Win_sync inside each epoch;
 * afterwards no lock is left (Lock_all opens) and the counts are exact. */
#include <omp.h>
#include "check.h"

#define THREADS 4
#define ITERS 200
#define LOCK_ITERS 3000

int main(int argc, char **argv)
{
	int rank, size, provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
	int main_thread;
	MPI_Is_thread_main(&main_thread);
	CHECK(main_thread, "the initializing thread is not the main thread");

	MPI_Win w;
	long *ctr;
	MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &ctr, &w);
	*ctr = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock_all(0, w);
	int bad = 0, other = 1 - rank;
#pragma omp parallel num_threads(THREADS) reduction(+ : bad)
	{
		int t = omp_get_thread_num();
		long one = 1;
		for (int i = 0; i < ITERS; i++) {
			int out = rank * 100000 + t * 1000 + i, in = -1;
			MPI_Sendrecv(&out, 1, MPI_INT, other, t, &in, 1, MPI_INT, other, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			if (in != other * 100000 + t * 1000 + i)
				bad++;
			MPI_Accumulate(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, w);
			MPI_Win_flush(0, w);
		}
	}
	MPI_Win_unlock_all(w);
	CHECK(bad == 0, "%d messages reached the wrong thread", bad);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		CHECK(*ctr == (long)size * THREADS * ITERS, "counter %ld, want %ld", *ctr, (long)size * THREADS * ITERS);
	report("OpenMP threads under MPI_THREAD_MULTIPLE");

	/* Windows of Irecvs and Isends on every thread at once (libmpi_abi
	 * queues receives in C for several threads, and whichever thread
	 * waits matches them), each thread's messages in order. */
	bad = 0;
#pragma omp parallel num_threads(THREADS) reduction(+ : bad)
	{
		int t = omp_get_thread_num();
		for (int i = 0; i < 50; i++) {
			int in[16], out[16];
			MPI_Request rq[32];
			for (int j = 0; j < 16; j++) {
				in[j] = -1;
				MPI_Irecv(&in[j], 1, MPI_INT, other, 100 + t, MPI_COMM_WORLD, &rq[j]);
			}
			for (int j = 0; j < 16; j++) {
				out[j] = rank * 100000 + t * 1000 + i * 16 + j;
				MPI_Isend(&out[j], 1, MPI_INT, other, 100 + t, MPI_COMM_WORLD, &rq[16 + j]);
			}
			if (MPI_Waitall(32, rq, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
				bad++;
			for (int j = 0; j < 16; j++)
				bad += in[j] != other * 100000 + t * 1000 + i * 16 + j;
		}
	}
	CHECK(bad == 0, "%d nonblocking messages wrong or out of order", bad);
	report("windows of Irecv and Isend on every thread");
	MPI_Win_free(&w);

	long *pair;
	MPI_Win_allocate(2 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &pair, &w);
	pair[0] = pair[1] = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	int errs = 0;
#pragma omp parallel num_threads(size) reduction(+ : errs)
	{
		int t = omp_get_thread_num();
		long one = 1, old, v;
		for (int i = 0; i < LOCK_ITERS; i++) {
			if ((i + rank) % 3 == 2) {
				errs += MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w) != MPI_SUCCESS;
				errs += MPI_Fetch_and_op(&one, &old, MPI_LONG, t, 1, MPI_SUM, w) != MPI_SUCCESS;
				errs += MPI_Win_flush_local_all(w) != MPI_SUCCESS;
				errs += MPI_Win_sync(w) != MPI_SUCCESS;
			} else {
				errs += MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w) != MPI_SUCCESS;
				errs += MPI_Get(&v, 1, MPI_LONG, t, 0, 1, MPI_LONG, w) != MPI_SUCCESS;
				errs += MPI_Win_flush(t, w) != MPI_SUCCESS;
				v++;
				errs += MPI_Put(&v, 1, MPI_LONG, t, 0, 1, MPI_LONG, w) != MPI_SUCCESS;
				errs += MPI_Win_flush_all(w) != MPI_SUCCESS;
			}
			errs += MPI_Win_unlock(t, w) != MPI_SUCCESS;
		}
	}
	CHECK(errs == 0, "%d calls failed with threads locking their own targets", errs);
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK(MPI_Win_lock_all(0, w) == MPI_SUCCESS, "Lock_all after every thread unlocked");
	MPI_Win_sync(w);
	long excl = 0, shared = 0;
	for (int r = 0; r < size; r++)
		for (int i = 0; i < LOCK_ITERS; i++)
			if ((i + r) % 3 == 2)
				shared++;
			else
				excl++;
	CHECK(pair[0] == excl && pair[1] == shared, "counters %ld and %ld, want %ld and %ld", pair[0], pair[1], excl, shared);
	MPI_Win_unlock_all(w);
	report("threads locking their own targets at once");
	MPI_Win_free(&w);
	MPI_Finalize();
	return 0;
}
