/* ranks: 4
 * Nonblocking collectives: every one outstanding at once and completed
 * by MPI_Waitall, results checked; the progress they promise (a rank
 * starts one, then sends what another rank must receive before it starts
 * its own), an MPI_Ibarrier too as a new communicator's first collective;
 * a blocking collective right after a nonblocking one on the
 * same communicator; a derived datatype; MPI_Comm_free with one pending;
 * and, on shmrun, the errors: a mismatch reported by MPI_Wait on every
 * rank, one rank's NULL request, MPI_Request_free refused. */
#include <string.h>
#include "check.h"

#define N 4

#ifdef MPI_ABI_VERSION
static int handled;
static void count_errors(MPI_Comm *comm, int *err, ...)
{
	(void)comm, (void)err;
	handled++;
}
#endif

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (size != N) {
		if (rank == 0)
			printf("needs %d ranks\n", N);
		MPI_Finalize();
		return 1;
	}
	int root = N - 1;

	/* Every collective started, then one Waitall. */
	MPI_Request r[16];
	int k = 0;
	long mine[3] = {rank + 1, 10 * rank, -rank}, sum[3], red[3], all[3 * N], sc = -1, a2a[N], a2s[N], scan, exscan = -5;
	int bc[2] = {-1, -1};
	if (rank == root)
		bc[0] = 77, bc[1] = 78;
	long scs[N], rsb, rsbin[N], rs, rsin[N], gv[N * (N + 1) / 2], agv[N * (N + 1) / 2], sv[N], svr[N], a2v[N], a2vs[N];
	int rcounts[N], displs[N], ones[N], idx[N], rscounts[N];
	for (int q = 0; q < N; q++) {
		scs[q] = 100 + q;
		a2s[q] = rank * 1000 + q;
		rsbin[q] = q + rank;
		rsin[q] = q * rank;
		rscounts[q] = 1;
		rcounts[q] = q + 1;
		displs[q] = q * (q + 1) / 2;
		ones[q] = 1, idx[q] = q;
		sv[q] = 500 + q;
		a2vs[q] = rank * 100 + q;
	}
	long mv[N];
	for (int i = 0; i <= rank; i++)
		mv[i] = rank * 10 + i;
	CHECK(MPI_Iallreduce(mine, sum, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &r[k++]) == MPI_SUCCESS, "Iallreduce");
	MPI_Ibcast(bc, 2, MPI_INT, root, MPI_COMM_WORLD, &r[k++]);
	MPI_Ireduce(mine, red, 3, MPI_LONG, MPI_MAX, root, MPI_COMM_WORLD, &r[k++]);
	MPI_Igather(mine, 3, MPI_LONG, all, 3, MPI_LONG, 0, MPI_COMM_WORLD, &r[k++]);
	MPI_Iscatter(scs, 1, MPI_LONG, &sc, 1, MPI_LONG, root, MPI_COMM_WORLD, &r[k++]);
	MPI_Ialltoall(a2s, 1, MPI_LONG, a2a, 1, MPI_LONG, MPI_COMM_WORLD, &r[k++]);
	long one = rank + 1;
	MPI_Iscan(&one, &scan, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &r[k++]);
	MPI_Iexscan(&one, &exscan, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &r[k++]);
	MPI_Ireduce_scatter_block(rsbin, &rsb, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &r[k++]);
	MPI_Ireduce_scatter(rsin, &rs, rscounts, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &r[k++]);
	MPI_Igatherv(mv, rank + 1, MPI_LONG, gv, rcounts, displs, MPI_LONG, 0, MPI_COMM_WORLD, &r[k++]);
	MPI_Iallgatherv(mv, rank + 1, MPI_LONG, agv, rcounts, displs, MPI_LONG, MPI_COMM_WORLD, &r[k++]);
	MPI_Iscatterv(sv, ones, idx, MPI_LONG, &svr[0], 1, MPI_LONG, 0, MPI_COMM_WORLD, &r[k++]);
	MPI_Ialltoallv(a2vs, ones, idx, MPI_LONG, a2v, ones, idx, MPI_LONG, MPI_COMM_WORLD, &r[k++]);
	CHECK(MPI_Waitall(k, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "Waitall");
	for (int i = 0; i < 3; i++) {
		long s = 0;
		for (int q = 0; q < N; q++)
			s += i == 0 ? q + 1 : i == 1 ? 10 * q : -q;
		CHECK(sum[i] == s, "Iallreduce[%d] = %ld, want %ld", i, sum[i], s);
	}
	CHECK(bc[0] == 77 && bc[1] == 78, "Ibcast %d %d", bc[0], bc[1]);
	if (rank == root)
		CHECK(red[0] == N && red[1] == 10 * (N - 1) && red[2] == 0, "Ireduce %ld %ld %ld", red[0], red[1], red[2]);
	if (rank == 0)
		for (int q = 0; q < N; q++)
			CHECK(all[3 * q] == q + 1 && all[3 * q + 1] == 10 * q && all[3 * q + 2] == -q, "Igather block %d", q);
	CHECK(sc == 100 + rank, "Iscatter %ld", sc);
	for (int q = 0; q < N; q++)
		CHECK(a2a[q] == q * 1000 + rank, "Ialltoall[%d] = %ld", q, a2a[q]);
	CHECK(scan == (rank + 1) * (rank + 2) / 2, "Iscan %ld", scan);
	if (rank > 0)
		CHECK(exscan == rank * (rank + 1) / 2, "Iexscan %ld", exscan);
	CHECK(rsb == N * rank + N * (N - 1) / 2, "Ireduce_scatter_block %ld", rsb);
	CHECK(rs == rank * (N * (N - 1) / 2), "Ireduce_scatter %ld", rs);
	for (int q = 0; q < N; q++)
		for (int i = 0; i <= q; i++) {
			if (rank == 0)
				CHECK(gv[displs[q] + i] == q * 10 + i, "Igatherv[%d][%d] = %ld", q, i, gv[displs[q] + i]);
			CHECK(agv[displs[q] + i] == q * 10 + i, "Iallgatherv[%d][%d] = %ld", q, i, agv[displs[q] + i]);
		}
	CHECK(svr[0] == 500 + rank, "Iscatterv %ld", svr[0]);
	for (int q = 0; q < N; q++)
		CHECK(a2v[q] == q * 100 + rank, "Ialltoallv[%d] = %ld", q, a2v[q]);
	report("every collective started, then Waitall");

	/* Progress: rank 0 starts an Iallreduce, then sends to rank 1, which
	 * receives before it starts its own. Then a blocking Allreduce and
	 * Barrier right behind another Iallreduce, whose Wait comes last. */
	double z = rank, w = 2 * rank, y = rank;
	MPI_Request q1, q2;
	if (rank == 1)
		MPI_Recv(NULL, 0, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Iallreduce(MPI_IN_PLACE, &z, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q1);
	if (rank == 0)
		MPI_Send(NULL, 0, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
	int flag = 0;
	while (!flag)
		MPI_Test(&q1, &flag, MPI_STATUS_IGNORE);
	/* The other ranks' Iallreduce waits for rank 0's, which comes late:
	 * their Allreduce and Bcast behind it (the small collectives' fast
	 * paths, after a Barrier) must wait for it too. */
	for (int it = 0; it < 5; it++) {
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0) {
			double t = MPI_Wtime();
			while (MPI_Wtime() - t < 0.01)
				;
		}
		w = 2 * rank + it, y = rank;
		MPI_Iallreduce(MPI_IN_PLACE, &w, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &q2);
		MPI_Allreduce(MPI_IN_PLACE, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		int b = rank == 1 ? 41 + it : -1;
		MPI_Bcast(&b, 1, MPI_INT, 1, MPI_COMM_WORLD);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Wait(&q2, MPI_STATUS_IGNORE);
		CHECK(z == N * (N - 1) / 2 && y == z && w == 2 * (N - 1) + it && b == 41 + it, "progress %d: %g %g %g %d", it, z, y,
		      w, b);
	}
	report("progress, and blocking collectives behind nonblocking ones");

	/* The same progress with MPI_Ibarrier as a new communicator's first
	 * collective call: it waits for nobody, not even to set the
	 * communicator up. */
	{
		MPI_Comm d;
		MPI_Comm_dup(MPI_COMM_WORLD, &d);
		MPI_Request qb;
		if (rank == 1)
			MPI_Recv(NULL, 0, MPI_BYTE, 0, 6, d, MPI_STATUS_IGNORE);
		MPI_Ibarrier(d, &qb);
		if (rank == 0)
			MPI_Send(NULL, 0, MPI_BYTE, 1, 6, d);
		CHECK(MPI_Wait(&qb, MPI_STATUS_IGNORE) == MPI_SUCCESS, "the first Ibarrier");
		MPI_Comm_free(&d);
	}
	report("an Ibarrier first on a communicator");

	/* A column of a matrix broadcast by a vector type; Ialltoallw with a
	 * type per peer; a pending Iallreduce at MPI_Comm_free. */
	int m[3][N], cnt[N], wd[N];
	MPI_Datatype col, ts[N];
	MPI_Type_vector(3, 1, N, MPI_INT, &col);
	MPI_Type_commit(&col);
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < N; j++)
			m[i][j] = rank == 0 ? i * 10 + j : -1;
	MPI_Request q3, q4, q5;
	MPI_Ibcast(&m[0][2], 1, col, 0, MPI_COMM_WORLD, &q3);
	int wsend[N], wrecv[N];
	for (int q = 0; q < N; q++)
		wsend[q] = rank * 10 + q, wrecv[q] = -1, cnt[q] = 1, wd[q] = q * (int)sizeof(int), ts[q] = MPI_INT;
	MPI_Ialltoallw(wsend, cnt, wd, ts, wrecv, cnt, wd, ts, MPI_COMM_WORLD, &q4);
	MPI_Comm dup;
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	int mx = rank;
	MPI_Iallreduce(MPI_IN_PLACE, &mx, 1, MPI_INT, MPI_MAX, dup, &q5);
#ifdef MPI_ABI_VERSION
	/* Freed while the Iallreduce is pending: it completes (MPI 4.1
	 * §7.4.3); Open MPI 4.1 crashes in its progress engine. */
	MPI_Comm_free(&dup);
	MPI_Wait(&q5, MPI_STATUS_IGNORE);
#else
	MPI_Wait(&q5, MPI_STATUS_IGNORE);
	MPI_Comm_free(&dup);
#endif
	MPI_Wait(&q4, MPI_STATUS_IGNORE);
	MPI_Wait(&q3, MPI_STATUS_IGNORE);
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < N; j++)
			CHECK(m[i][j] == (j == 2 || rank == 0 ? i * 10 + j : -1), "m[%d][%d] = %d", i, j, m[i][j]);
	for (int q = 0; q < N; q++)
		CHECK(wrecv[q] == q * 10 + rank, "Ialltoallw[%d] = %d", q, wrecv[q]);
	CHECK(mx == N - 1, "pending at Comm_free: %d", mx);
	MPI_Type_free(&col);
	report("a derived type, Ialltoallw, pending at MPI_Comm_free");

#ifdef MPI_ABI_VERSION
	/* Counts that differ: MPI_ERR_COUNT from MPI_Wait on every rank
	 * (Open MPI does not compare them). */
	double d3[3] = {1, 2, 3};
	MPI_Request q6;
	CHECK(MPI_Iallreduce(MPI_IN_PLACE, d3, rank == 1 ? 2 : 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q6) == MPI_SUCCESS,
	      "Iallreduce of differing counts refused at the start");
	int err = MPI_Wait(&q6, MPI_STATUS_IGNORE);
	CHECK(class_of(err) == MPI_ERR_COUNT, "differing counts: class %d from Wait", class_of(err));
	/* The communicator's handler is called once, by the Wait, on this
	 * thread: not where the job found the error. */
	MPI_Errhandler eh;
	MPI_Comm_create_errhandler(count_errors, &eh);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
	CHECK(MPI_Iallreduce(MPI_IN_PLACE, d3, rank == 1 ? 2 : 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q6) == MPI_SUCCESS,
	      "a second Iallreduce of differing counts refused at the start");
	for (int i = 0; i < 1000 && handled == 0; i++)
		MPI_Test(&q6, &flag, MPI_STATUS_IGNORE);
	if (q6 != MPI_REQUEST_NULL)
		MPI_Wait(&q6, MPI_STATUS_IGNORE);
	CHECK(handled == 1, "the handler was called %d times", handled);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Errhandler_free(&eh);
	/* The request cannot be freed (MPI 4.1 §6.12); the Iallreduce works
	 * on after the refusal. */
	MPI_Request q7;
	long l = rank;
	MPI_Iallreduce_c(MPI_IN_PLACE, &l, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &q7);
	err = MPI_Request_free(&q7);
	CHECK(class_of(err) == MPI_ERR_REQUEST && q7 != MPI_REQUEST_NULL, "Request_free of an Iallreduce: class %d", class_of(err));
	MPI_Wait(&q7, MPI_STATUS_IGNORE);
	CHECK(l == N * (N - 1) / 2, "Iallreduce_c %ld", l);
	/* An Ibarrier's request neither (nor cancelled). */
	MPI_Ibarrier(MPI_COMM_WORLD, &q7);
	err = MPI_Request_free(&q7);
	CHECK(class_of(err) == MPI_ERR_REQUEST && q7 != MPI_REQUEST_NULL, "Request_free of an Ibarrier: class %d", class_of(err));
	err = MPI_Cancel(&q7);
	CHECK(class_of(err) == MPI_ERR_REQUEST, "Cancel of an Ibarrier: class %d", class_of(err));
	MPI_Wait(&q7, MPI_STATUS_IGNORE);
	/* One rank's NULL request fails the others' call, from their Wait
	 * (an Allreduce: each rank reads every rank's part). */
	MPI_Request q8 = MPI_REQUEST_NULL;
	err = MPI_Iallreduce(MPI_IN_PLACE, &l, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, rank == 2 ? NULL : &q8);
	if (rank == 2)
		CHECK(class_of(err) == MPI_ERR_ARG, "NULL request: class %d", class_of(err));
	else
		CHECK(err == MPI_SUCCESS && class_of(MPI_Wait(&q8, MPI_STATUS_IGNORE)) == MPI_ERR_ARG, "rank 2's NULL request");
#endif
	report("errors");

	MPI_Finalize();
	return failures != 0;
}
