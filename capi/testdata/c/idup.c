/* ranks: 4
 * MPI_Comm_idup and MPI_Comm_idup_with_info: the duplicate, usable once
 * the request completes, with the program's attributes copied by their
 * copy functions in the call, from what the communicator holds then (MPI
 * 4.1 §7.4.2); started between nonblocking collectives on the same
 * communicator and completed with them, in any order; a wrong info on one
 * rank fails every rank's request (shmrun only). Open MPI 4.1 has no
 * _with_info form. */
#include <stdint.h>
#include "check.h"

static int copies, calling, copied_outside;
static int copy_fn(MPI_Comm c, int key, void *extra, void *in, void *out, int *flag)
{
	(void)c, (void)key, (void)extra;
	copies++;
	if (!calling)
		copied_outside++;
	*(void **)out = (void *)((intptr_t)in + 1);
	*flag = 1;
	return MPI_SUCCESS;
}

static int fail_fn(MPI_Comm c, int key, void *extra, void *in, void *out, int *flag)
{
	(void)c, (void)key, (void)extra, (void)in, (void)out, (void)flag;
	return MPI_ERR_OTHER;
}

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

	{
		MPI_Comm base;
		MPI_Comm_dup(MPI_COMM_WORLD, &base);
		int key;
		MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, &key, NULL);
		MPI_Comm_set_attr(base, key, (void *)(intptr_t)41);
		MPI_Comm d;
		MPI_Request r;
		calling = 1;
		CHECK(MPI_Comm_idup(base, &d, &r) == MPI_SUCCESS, "Comm_idup");
		calling = 0;
		MPI_Comm_set_attr(base, key, (void *)(intptr_t)99); /* after the call: not the duplicate's */
		CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS && r == MPI_REQUEST_NULL, "Wait");
		CHECK(copied_outside == 0, "a copy callback ran outside MPI_Comm_idup (%d times)", copied_outside);
		int sum = 0, one = 1, cmp = -1;
		MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, d);
		CHECK(sum == size, "Allreduce on the duplicate: %d", sum);
		MPI_Comm_compare(base, d, &cmp);
		CHECK(cmp == MPI_CONGRUENT, "compare: %d", cmp);
		void *v = NULL;
		int found = 0;
		MPI_Comm_get_attr(d, key, &v, &found);
		CHECK(found && (intptr_t)v == 42 && copies == 1, "the attribute: found %d value %ld copies %d", found,
		      (long)(intptr_t)v, copies);
		MPI_Comm_free(&d);

		/* Between nonblocking collectives on the same communicator,
		 * completed together in reverse order. */
		int x = rank, y = -1, z = -1;
		MPI_Request q[3];
		MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_MAX, base, &q[0]);
		MPI_Comm_idup(base, &d, &q[1]);
		MPI_Iallreduce(&x, &z, 1, MPI_INT, MPI_MIN, base, &q[2]);
		MPI_Wait(&q[2], MPI_STATUS_IGNORE);
		CHECK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "Waitall");
		CHECK(y == size - 1 && z == 0, "the Iallreduces around the Idup: %d %d", y, z);
		int r2 = -1;
		MPI_Comm_rank(d, &r2);
		CHECK(r2 == rank, "rank in the duplicate: %d", r2);
		MPI_Barrier(d);
		MPI_Comm_free(&d);

#if MPI_VERSION >= 4 /* Open MPI 4.1 (MPI 3.1) has no MPI_Comm_idup_with_info */
		MPI_Info info;
		MPI_Info_create(&info);
		MPI_Info_set(info, "mpi_assert_no_any_source", "true");
		CHECK(MPI_Comm_idup_with_info(base, info, &d, &r) == MPI_SUCCESS, "idup_with_info");
		MPI_Wait(&r, MPI_STATUS_IGNORE);
		MPI_Barrier(d);
		MPI_Comm_free(&d);
		MPI_Info_free(&info);
#endif
		MPI_Comm_free_keyval(&key);
		MPI_Comm_free(&base);
	}
	report("MPI_Comm_idup and _with_info");

	{
		/* The attributes are copied in the call, from what the
		 * communicator holds then: deleted after it and the communicator
		 * freed before the request completes, the copy is there (Open
		 * MPI 4.1 crashes in the Wait). A failing copy callback is the
		 * call's error, with MPI_COMM_NULL (every rank: the call is
		 * collective). */
		int key, gone;
		MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, &key, NULL);
		MPI_Comm_create_keyval(fail_fn, MPI_COMM_NULL_DELETE_FN, &gone, NULL);
#ifdef MPI_ABI_VERSION
		MPI_Comm base, d;
		MPI_Request r;
		MPI_Comm_dup(MPI_COMM_WORLD, &base);
		MPI_Comm_set_attr(base, key, (void *)(intptr_t)7);
		MPI_Comm_idup(base, &d, &r);
		MPI_Comm_delete_attr(base, key);
		MPI_Comm_free(&base);
		CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS, "Wait after the free");
		void *v = NULL;
		int found = 0;
		MPI_Comm_get_attr(d, key, &v, &found);
		CHECK(found && (intptr_t)v == 8, "the attribute after the free: found %d value %ld", found, (long)(intptr_t)v);
		MPI_Comm_free(&d);
#endif
		MPI_Comm_set_attr(MPI_COMM_WORLD, gone, (void *)(intptr_t)1);
		MPI_Comm n = MPI_COMM_WORLD;
		MPI_Request q = MPI_REQUEST_NULL;
		int err = MPI_Comm_idup(MPI_COMM_WORLD, &n, &q);
		CHECK(class_of(err) == MPI_ERR_OTHER, "idup with a failing copy callback: class %d", class_of(err));
#ifdef MPI_ABI_VERSION
		CHECK(n == MPI_COMM_NULL && q == MPI_REQUEST_NULL, "idup with a failing copy callback: a communicator or request");
#endif
		if (err == MPI_SUCCESS)
			MPI_Wait(&q, MPI_STATUS_IGNORE);
		MPI_Comm_delete_attr(MPI_COMM_WORLD, gone);
		MPI_Comm_free_keyval(&gone);
		MPI_Comm_free_keyval(&key);
		MPI_Barrier(MPI_COMM_WORLD);
	}
	report("MPI_Comm_idup copies the attributes in the call");

#ifdef MPI_ABI_VERSION
	{
		/* A wrong info on rank 2: every rank's request fails, at its
		 * completion, and the communicator stays usable. */
		MPI_Comm d;
		MPI_Request r;
		MPI_Info bad = rank == 2 % size ? (MPI_Info)(uintptr_t)0x7777770 : MPI_INFO_NULL;
		int err = MPI_Comm_idup_with_info(MPI_COMM_WORLD, bad, &d, &r);
		if (err == MPI_SUCCESS)
			err = MPI_Wait(&r, MPI_STATUS_IGNORE);
		CHECK(err != MPI_SUCCESS, "rank 2's bad info: no error here");
		MPI_Barrier(MPI_COMM_WORLD);
	}
#endif
	report("a bad info fails every rank's request");

	MPI_Finalize();
	return failures != 0;
}
