/* ranks: 5
 * MPI 4.0's MPI_Isendrecv and MPI_Isendrecv_replace: a ring exchange,
 * the replace form on a strided type, several outstanding beside plain
 * requests under Waitall, Waitany and Testall, with itself and with
 * MPI_PROC_NULL, a request freed while active, and a truncation
 * reported by the completion call. Open MPI 4.1 (MPI 3.1) has neither
 * call: built against it, the program only checks that it runs. */
#include <string.h>
#include "check.h"

#if MPI_VERSION >= 4
#define HAVE_ISENDRECV 1
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

#ifdef HAVE_ISENDRECV
	{
		/* A ring: each rank sends three ints right and receives
		 * from the left. */
		int out[3] = {rank, rank * 10, rank * 100}, in[3] = {-1, -1, -1};
		MPI_Request r;
		MPI_Status st;
		CHECK(MPI_Isendrecv(out, 3, MPI_INT, right, 4, in, 3, MPI_INT, left, 4, MPI_COMM_WORLD, &r) == MPI_SUCCESS, "Isendrecv");
		CHECK(MPI_Wait(&r, &st) == MPI_SUCCESS && r == MPI_REQUEST_NULL, "Wait");
		int n;
		MPI_Get_count(&st, MPI_INT, &n);
		CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 4 && n == 3, "status %d %d %d", st.MPI_SOURCE, st.MPI_TAG, n);
		CHECK(in[0] == left && in[1] == left * 10 && in[2] == left * 100, "got %d %d %d", in[0], in[1], in[2]);
	}
#endif
	report("a ring of MPI_Isendrecv");

#ifdef HAVE_ISENDRECV
	{
		/* The replace form on every other double: the holes stay. */
		double v[8];
		for (int i = 0; i < 8; i++)
			v[i] = i % 2 ? -0.5 : rank + i;
		MPI_Datatype every2;
		MPI_Type_vector(4, 1, 2, MPI_DOUBLE, &every2);
		MPI_Type_commit(&every2);
		MPI_Request r;
		MPI_Status st;
		MPI_Isendrecv_replace(v, 1, every2, right, 5, left, 5, MPI_COMM_WORLD, &r);
		MPI_Wait(&r, &st);
		for (int i = 0; i < 8; i++)
			CHECK(v[i] == (i % 2 ? -0.5 : left + i), "v[%d] = %g", i, v[i]);
		CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 5, "replace status %d %d", st.MPI_SOURCE, st.MPI_TAG);
		/* The large-count form, back the other way. */
		MPI_Isendrecv_replace_c(v, 1, every2, left, 6, right, 6, MPI_COMM_WORLD, &r);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
		for (int i = 0; i < 8; i++)
			CHECK(v[i] == (i % 2 ? -0.5 : rank + i), "back: v[%d] = %g", i, v[i]);
		MPI_Type_free(&every2);
	}
#endif
	report("MPI_Isendrecv_replace on a strided type");

#ifdef HAVE_ISENDRECV
	{
		/* Outstanding together: two exchanges each way, a plain
		 * Irecv and Isend, one with itself and one with
		 * MPI_PROC_NULL, completed by Waitany, then Testall. */
		long a = rank, b = -1, c = -1, d = -1, e = rank + 1000, f = -1, g = -1;
		MPI_Request rs[5];
		MPI_Status sts[5];
		MPI_Isendrecv(&a, 1, MPI_LONG, right, 7, &b, 1, MPI_LONG, left, 7, MPI_COMM_WORLD, &rs[0]);
		MPI_Isendrecv_c(&a, 1, MPI_LONG, left, 8, &c, 1, MPI_LONG, right, 8, MPI_COMM_WORLD, &rs[1]);
		MPI_Irecv(&d, 1, MPI_LONG, left, 9, MPI_COMM_WORLD, &rs[2]);
		MPI_Isendrecv(&e, 1, MPI_LONG, rank, 10, &f, 1, MPI_LONG, rank, 10, MPI_COMM_WORLD, &rs[3]);
		MPI_Isendrecv(&a, 1, MPI_LONG, MPI_PROC_NULL, 11, &g, 1, MPI_LONG, MPI_PROC_NULL, 11, MPI_COMM_WORLD, &rs[4]);
		MPI_Send(&a, 1, MPI_LONG, right, 9, MPI_COMM_WORLD);
		int idx;
		MPI_Waitany(5, rs, &idx, &sts[0]);
		CHECK(idx >= 0 && idx < 5 && rs[idx] == MPI_REQUEST_NULL, "Waitany gave %d", idx);
		int flag = 0;
		while (!flag)
			MPI_Testall(5, rs, &flag, sts);
		CHECK(b == left && c == right && d == left && f == rank + 1000 && g == -1, "got %ld %ld %ld %ld %ld", b, c, d, f, g);
		if (idx != 4)
			CHECK(sts[4].MPI_SOURCE == MPI_PROC_NULL && sts[4].MPI_TAG == MPI_ANY_TAG, "MPI_PROC_NULL's status %d %d",
			      sts[4].MPI_SOURCE, sts[4].MPI_TAG);
		if (idx != 3)
			CHECK(sts[3].MPI_SOURCE == rank && sts[3].MPI_TAG == 10, "self status %d %d", sts[3].MPI_SOURCE, sts[3].MPI_TAG);
	}
#endif
	report("outstanding with other requests, with itself and MPI_PROC_NULL");

#ifdef HAVE_ISENDRECV
	{
		/* Freed while active: the strided receive still lands, before
		 * the next message of the same tag from the same sender. */
		int m[6] = {-1, -2, -1, -2, -1, -2}, out[3] = {rank, rank + 1, rank + 2}, next = -1;
		MPI_Datatype every2;
		MPI_Type_vector(3, 1, 2, MPI_INT, &every2);
		MPI_Type_commit(&every2);
		MPI_Request r;
		MPI_Isendrecv(out, 3, MPI_INT, right, 12, m, 1, every2, left, 12, MPI_COMM_WORLD, &r);
		MPI_Request_free(&r);
		CHECK(r == MPI_REQUEST_NULL, "Request_free left the handle");
		MPI_Send(&rank, 1, MPI_INT, right, 12, MPI_COMM_WORLD);
		MPI_Recv(&next, 1, MPI_INT, left, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		CHECK(next == left, "next %d", next);
		for (int i = 0; i < 3; i++)
			CHECK(m[2 * i] == left + i && m[2 * i + 1] == -2, "m[%d] = %d, m[%d] = %d", 2 * i, m[2 * i], 2 * i + 1, m[2 * i + 1]);
		MPI_Type_free(&every2);
		MPI_Barrier(MPI_COMM_WORLD); /* every send of out has completed */
	}
#endif
	report("freed while active");

#ifdef HAVE_ISENDRECV
	{
		/* Four ints into room for two: MPI_ERR_TRUNCATE from Wait,
		 * with the message's size in the status. */
		int out[4] = {1, 2, 3, 4}, in[2];
		MPI_Request r;
		MPI_Status st;
		MPI_Isendrecv(out, 4, MPI_INT, right, 13, in, 2, MPI_INT, left, 13, MPI_COMM_WORLD, &r);
		int err = MPI_Wait(&r, &st);
		CHECK(class_of(err) == MPI_ERR_TRUNCATE, "truncation: class %d", class_of(err));
		/* A NULL request is refused on this rank. */
		err = MPI_Isendrecv(out, 1, MPI_INT, MPI_PROC_NULL, 0, in, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, NULL);
		CHECK(class_of(err) == MPI_ERR_ARG, "NULL request: class %d", class_of(err));
	}
#endif
	report("errors");

	MPI_Finalize();
	return failures != 0;
}
