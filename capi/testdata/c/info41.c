/* ranks: 3
 * Communicator hints (MPI_Comm_dup_with_info, MPI_Comm_set_info,
 * MPI_Comm_get_info: no hint is used, so the info in use is empty, as
 * MPI 4.1 §7.4.4 allows) and MPI 4.1's MPI_Request_get_status_all, _any
 * and _some, which test requests without completing them. Open MPI 4.1
 * has the communicator calls but not the MPI 4.1 ones: built against it,
 * those only run. */
#include "check.h"

#if MPI_VERSION > 4 || MPI_VERSION == 4 && MPI_SUBVERSION >= 1
#define HAVE_GET_STATUS_ALL 1
#endif

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	(void)right, (void)left;

	{
		MPI_Info info;
		MPI_Info_create(&info);
		MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
		MPI_Comm a, b;
		CHECK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &a) == MPI_SUCCESS, "dup_with_info");
		CHECK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &b) == MPI_SUCCESS, "dup_with_info(NULL)");
		int sum = 0, one = 1;
		MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, a);
		CHECK(sum == size, "Allreduce on the duplicate: %d", sum);
		int cmp;
		MPI_Comm_compare(MPI_COMM_WORLD, a, &cmp);
		CHECK(cmp == MPI_CONGRUENT, "compare: %d", cmp);
		CHECK(MPI_Comm_set_info(b, info) == MPI_SUCCESS, "set_info");
		MPI_Info used;
		CHECK(MPI_Comm_get_info(b, &used) == MPI_SUCCESS && used != MPI_INFO_NULL, "get_info");
		int n = -1;
		MPI_Info_get_nkeys(used, &n);
		(void)n; /* what an implementation keeps is its own */
		MPI_Info_free(&used);
		MPI_Info_free(&info);
		MPI_Comm_free(&a);
		MPI_Comm_free(&b);
	}
	report("communicator hints");

#ifdef MPI_ABI_VERSION
	{
		/* A wrong info handle on one rank: every rank's duplication
		 * fails, none hangs. */
		MPI_Comm a = MPI_COMM_NULL;
		MPI_Info bad = rank == 1 ? (MPI_Info)(uintptr_t)0x7777770 : MPI_INFO_NULL;
		int err = MPI_Comm_dup_with_info(MPI_COMM_WORLD, bad, &a);
		CHECK(err != MPI_SUCCESS && a == MPI_COMM_NULL, "dup_with_info with rank 1's bad info: %d", err);
	}
#endif
	report("a bad info fails every rank's duplication");

#ifdef HAVE_GET_STATUS_ALL
	{
		int in[2] = {-1, -1}, out = rank;
		MPI_Request r[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
		MPI_Irecv(&in[0], 1, MPI_INT, left, 7, MPI_COMM_WORLD, &r[0]);
		MPI_Irecv(&in[1], 1, MPI_INT, left, 8, MPI_COMM_WORLD, &r[1]);
		/* Nothing is sent before every rank has looked. */
		int flag = -1, index = -1, outcount = -1, idx[3];
		MPI_Status st, sts[3];
		CHECK(MPI_Request_get_status_all(3, r, &flag, sts) == MPI_SUCCESS && flag == 0, "all before: flag %d", flag);
		CHECK(MPI_Request_get_status_any(3, r, &index, &flag, &st) == MPI_SUCCESS && flag == 0 && index == MPI_UNDEFINED,
		      "any before: flag %d index %d", flag, index);
		CHECK(MPI_Request_get_status_some(3, r, &outcount, idx, sts) == MPI_SUCCESS && outcount == 0,
		      "some before: outcount %d", outcount);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Send(&out, 1, MPI_INT, right, 7, MPI_COMM_WORLD);
		for (flag = 0; !flag;)
			MPI_Request_get_status_any(3, r, &index, &flag, &st);
		/* Tag 8 may have come in the same progress step that _any ran
		 * for r[1], after it looked at r[0]: either is right. */
		CHECK((index == 0 || index == 1) && st.MPI_SOURCE == left && st.MPI_TAG == 7 + index && r[index] != MPI_REQUEST_NULL,
		      "any: index %d source %d tag %d, the request kept", index, st.MPI_SOURCE, st.MPI_TAG);
		CHECK(MPI_Request_get_status_some(3, r, &outcount, idx, sts) == MPI_SUCCESS && outcount >= 1 && idx[0] == 0 &&
			      sts[0].MPI_TAG == 7,
		      "some: outcount %d, first %d", outcount, idx[0]);
		MPI_Send(&out, 1, MPI_INT, right, 8, MPI_COMM_WORLD);
		for (flag = 0; !flag;)
			MPI_Request_get_status_all(3, r, &flag, sts);
		CHECK(sts[0].MPI_TAG == 7 && sts[1].MPI_TAG == 8 && sts[1].MPI_SOURCE == left && sts[2].MPI_SOURCE == MPI_ANY_SOURCE,
		      "all: tags %d %d, the null one's source %d", sts[0].MPI_TAG, sts[1].MPI_TAG, sts[2].MPI_SOURCE);
		CHECK(r[0] != MPI_REQUEST_NULL && r[1] != MPI_REQUEST_NULL, "all kept the requests");
		/* The completion calls still complete them, with the same status. */
		MPI_Waitall(3, r, sts);
		CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL && in[0] == left && in[1] == left &&
			      sts[0].MPI_TAG == 7 && sts[1].MPI_TAG == 8,
		      "Waitall after: %d %d", in[0], in[1]);
		/* Only null requests: any says MPI_UNDEFINED with flag set,
		 * some says MPI_UNDEFINED. */
		CHECK(MPI_Request_get_status_any(3, r, &index, &flag, &st) == MPI_SUCCESS && flag == 1 && index == MPI_UNDEFINED,
		      "any of nulls: flag %d index %d", flag, index);
		CHECK(MPI_Request_get_status_some(3, r, &outcount, idx, sts) == MPI_SUCCESS && outcount == MPI_UNDEFINED,
		      "some of nulls: %d", outcount);
		CHECK(MPI_Request_get_status_all(3, r, &flag, MPI_STATUSES_IGNORE) == MPI_SUCCESS && flag == 1, "all of nulls");
	}
#endif
	report("MPI_Request_get_status_all, _any and _some");

	MPI_Finalize();
	return failures != 0;
}
