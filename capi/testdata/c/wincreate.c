/* ranks: 2
 * Window creation's arguments at their edges: MPI_Win_create's base for
 * size 0, a NULL base with a size, the large-count calls' disp units that
 * do not fit an int, and a negative size on one rank only. */
#include <stdint.h>
#include "check.h"

int main(int argc, char **argv)
{
	int rank;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	char buf[64];
	MPI_Win win;
	int flag, err, class;
	void *base;

#ifdef MPI_ABI_VERSION
	/* MPI_WIN_BASE is the base the window was made with, also of size 0. */
	MPI_Win_create(buf, 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	base = NULL;
	MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
	CHECK(flag && base == buf, "MPI_WIN_BASE of a size-0 window is %p, want %p", base, (void *)buf);
	MPI_Win_free(&win);
	report("size-0 base");

	/* A NULL base with a size is refused, not made a window of size 0. */
	win = MPI_WIN_NULL;
	err = MPI_Win_create(NULL, 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	CHECK(err != MPI_SUCCESS && win == MPI_WIN_NULL, "Win_create(NULL, 64) = %d", err);
	if (err == MPI_SUCCESS)
		MPI_Win_free(&win);
	report("NULL base");

	/* A disp unit below INT32_MIN whose low 32 bits are 8 is refused, not
	 * taken for 8. */
	MPI_Aint du = -((MPI_Aint)1 << 32) + 8;
	err = MPI_Win_create_c(buf, sizeof buf, du, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	MPI_Error_class(err, &class);
	CHECK(class == MPI_ERR_ARG, "Win_create_c with disp unit %ld: class %d", (long)du, class);
	if (err == MPI_SUCCESS)
		MPI_Win_free(&win);
	err = MPI_Win_allocate_c(64, du, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
	MPI_Error_class(err, &class);
	CHECK(class == MPI_ERR_ARG, "Win_allocate_c with disp unit %ld: class %d", (long)du, class);
	if (err == MPI_SUCCESS)
		MPI_Win_free(&win);
	err = MPI_Win_allocate_shared_c(64, du, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
	MPI_Error_class(err, &class);
	CHECK(class == MPI_ERR_ARG, "Win_allocate_shared_c with disp unit %ld: class %d", (long)du, class);
	if (err == MPI_SUCCESS)
		MPI_Win_free(&win);
	report("large disp units");

	/* A negative size on rank 1 only: every rank gets MPI_ERR_SIZE, and
	 * the next collective call matches. */
	err = MPI_Win_allocate_shared(rank == 1 ? -8 : 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
	MPI_Error_class(err, &class);
	CHECK(class == MPI_ERR_SIZE, "Win_allocate_shared with size -8 on rank 1: class %d", class);
	if (err == MPI_SUCCESS)
		MPI_Win_free(&win);
	err = MPI_Barrier(MPI_COMM_WORLD);
	CHECK(err == MPI_SUCCESS, "Barrier after the failed window: %d", err);
	report("negative size on one rank");

	/* A NULL base with a size on rank 0 only: every rank's MPI_Win_create
	 * fails, and the next collective call matches. */
	win = MPI_WIN_NULL;
	err = MPI_Win_create(rank == 0 ? NULL : buf, 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	CHECK(err != MPI_SUCCESS && win == MPI_WIN_NULL, "Win_create with a NULL base on rank 0: %d", err);
	if (err == MPI_SUCCESS)
		MPI_Win_free(&win);
	err = MPI_Barrier(MPI_COMM_WORLD);
	CHECK(err == MPI_SUCCESS, "Barrier after the failed window: %d", err);
	report("NULL base on one rank");

	/* An invalid info handle on rank 1 only: every rank's
	 * MPI_Win_allocate fails, and the next collective call matches. */
	win = MPI_WIN_NULL;
	err = MPI_Win_allocate(64, 1, rank == 1 ? (MPI_Info)(intptr_t)0x7770 : MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
	CHECK(err != MPI_SUCCESS && win == MPI_WIN_NULL, "Win_allocate with an invalid info on rank 1: %d", err);
	if (err == MPI_SUCCESS)
		MPI_Win_free(&win);
	err = MPI_Barrier(MPI_COMM_WORLD);
	CHECK(err == MPI_SUCCESS, "Barrier after the failed window: %d", err);
	report("invalid info on one rank");
#else
	(void)buf, (void)win, (void)flag, (void)err, (void)class, (void)base;
	report("size-0 base");
	report("NULL base");
	report("large disp units");
	report("negative size on one rank");
	report("NULL base on one rank");
	report("invalid info on one rank");
#endif
	MPI_Finalize();
	return 0;
}
