/* ranks: 4
 * MPI_Win_lock_all is not starved by a steady stream of exclusive locks:
 * ranks 1..3 keep exclusive locks on their own parts with no gap (each
 * holds until another writer has acquired, or 200 us have passed) while
 * rank 0 asks for MPI_Win_lock_all three times. The writers give up after
 * 10 s; rank 0 fails if it needed that long. */
#include <stdint.h>
#include "check.h"

static double now(void) { return MPI_Wtime(); }

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	uint64_t *mine;
	MPI_Win win;
	MPI_Win_allocate_shared(16, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win);
	MPI_Aint sz;
	int du;
	uint64_t *w0;
	MPI_Win_shared_query(win, 0, &sz, &du, &w0);
	uint64_t *done = &w0[0], *acquired = &w0[1];
	if (rank == 0) {
		*done = *acquired = 0;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		while (__atomic_load_n(acquired, __ATOMIC_SEQ_CST) < 200)
			;
		double t0 = now();
		for (int i = 0; i < 3; i++) {
			MPI_Win_lock_all(0, win);
			MPI_Win_unlock_all(win);
		}
		double took = now() - t0;
		__atomic_store_n(done, 1, __ATOMIC_SEQ_CST);
		CHECK(took < 5, "three Lock_all epochs took %.1f s: starved by the writers", took);
	} else {
		for (double start = now(); !__atomic_load_n(done, __ATOMIC_SEQ_CST) && now() - start < 10;) {
			MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
			uint64_t me = __atomic_add_fetch(acquired, 1, __ATOMIC_SEQ_CST);
			for (double t0 = now(); __atomic_load_n(acquired, __ATOMIC_SEQ_CST) == me &&
						!__atomic_load_n(done, __ATOMIC_SEQ_CST) && now() - t0 < 200e-6;)
				;
			MPI_Win_unlock(rank, win);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	report("lock_all not starved by exclusive locks");
	MPI_Win_free(&win);
	MPI_Finalize();
	return 0;
}
