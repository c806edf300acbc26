/* ranks: 3
 * Communicators and groups: MPI_Comm_split_type with MPI_UNDEFINED on one
 * rank and a type on the others, and MPI_Group_translate_ranks of
 * MPI_PROC_NULL. */
#include "check.h"

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	/* MPI 4.1, 7.4.2: a rank may pass MPI_UNDEFINED as the type. */
	MPI_Comm sh = MPI_COMM_NULL;
	int err = MPI_Comm_split_type(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, -rank, MPI_INFO_NULL, &sh);
	CHECK(err == MPI_SUCCESS, "MPI_Comm_split_type with MPI_UNDEFINED on rank 0 returned %d", err);
	if (err == MPI_SUCCESS && rank == 0)
		CHECK(sh == MPI_COMM_NULL, "rank 0 passed MPI_UNDEFINED and got a communicator");
	if (err == MPI_SUCCESS && rank != 0) {
		int n = -1, r = -1;
		CHECK(sh != MPI_COMM_NULL, "no communicator for a rank passing MPI_COMM_TYPE_SHARED");
		if (sh != MPI_COMM_NULL) {
			MPI_Comm_size(sh, &n);
			MPI_Comm_rank(sh, &r);
			CHECK(n == size - 1 && r == size - 1 - rank, "rank %d of %d in the shared communicator", r, n);
			MPI_Comm_free(&sh);
		}
	}
	report("split_type with MPI_UNDEFINED on one rank");

	/* MPI 4.1, 7.3.1: MPI_PROC_NULL translates to MPI_PROC_NULL. */
	MPI_Group wg, g;
	MPI_Comm_group(MPI_COMM_WORLD, &wg);
	int two[2] = {2, 1};
	MPI_Group_incl(wg, 2, two, &g);
	int in[2] = {MPI_PROC_NULL, 0}, out[2] = {-1, -1};
	err = MPI_Group_translate_ranks(g, 2, in, wg, out);
	CHECK(err == MPI_SUCCESS && out[0] == MPI_PROC_NULL && out[1] == 2,
	      "MPI_Group_translate_ranks of MPI_PROC_NULL, 0 = %d: %d, %d", err, out[0], out[1]);
	MPI_Group_free(&g);
	MPI_Group_free(&wg);
	report("translate_ranks of MPI_PROC_NULL");

	MPI_Finalize();
	return 0;
}
