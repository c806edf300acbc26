/* ranks: 5
 * MPI 4.0's persistent collectives (MPI_Allreduce_init and the rest):
 * made once, started by MPI_Start and MPI_Startall round after round
 * with the buffers refilled between rounds, completed by Waitall,
 * Waitany, Testall and Wait (the requests stay, inactive); the int and
 * large-count forms, the v forms with zero counts, MPI_IN_PLACE, a
 * blocking collective and a nonblocking one between rounds; the
 * request's life (Start of an active one, Cancel, Free). Open MPI 4.1
 * (MPI 3.1) has them only as MPIX_: built against it, the program only
 * checks that it runs. */
#include <string.h>
#include "check.h"

#if MPI_VERSION >= 4
#define HAVE_PCOLL 1
#endif

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	(void)size;

#ifdef HAVE_PCOLL
	enum { N = 8 };
	long long sum = 0, total = 0, scan = 0;
	int bc[2] = {0, 0}, root = size - 1;
	double all[16];
	int a2a_out[16], a2a_in[16];
	int gv_out = 0, gv_in[16], counts[16], displs[16], at = 0;
	for (int q = 0; q < size; q++) {
		counts[q] = q % 2;
		displs[q] = at;
		at += q % 2;
	}
	MPI_Count ccounts[16];
	MPI_Aint cdispls[16];
	for (int q = 0; q < size; q++) {
		ccounts[q] = counts[q];
		cdispls[q] = displs[q];
	}
	long long rsb[16];
	MPI_Request r[N];
	int rc = 0;
	rc |= MPI_Allreduce_init(&sum, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
	rc |= MPI_Scan_init_c(&sum, &scan, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
	rc |= MPI_Bcast_init(bc, 2, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]);
	rc |= MPI_Gatherv_init_c(&gv_out, rank % 2, MPI_INT, gv_in, ccounts, cdispls, MPI_INT, root, MPI_COMM_WORLD,
				 MPI_INFO_NULL, &r[3]);
	rc |= MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r[4]);
	rc |= MPI_Allgather_init(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 1, MPI_DOUBLE, MPI_COMM_WORLD, MPI_INFO_NULL,
				 &r[5]);
	rc |= MPI_Alltoall_init(a2a_out, 1, MPI_INT, a2a_in, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &r[6]);
	rc |= MPI_Reduce_scatter_block_init(MPI_IN_PLACE, rsb, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
					    &r[7]);
	CHECK(rc == MPI_SUCCESS, "the init calls");
	for (int round = 0; round < 6; round++) {
		sum = rank + round;
		if (rank == root) {
			bc[0] = round;
			bc[1] = -round;
		}
		gv_out = 100 * round + rank;
		all[rank] = rank * round + 0.5;
		for (int j = 0; j < size; j++) {
			a2a_out[j] = 1000 * rank + 10 * j + round;
			rsb[j] = j + round;
		}
		if (round % 2 == 0) {
			CHECK(MPI_Startall(N, r) == MPI_SUCCESS, "Startall");
		} else {
			for (int i = 0; i < N; i++)
				CHECK(MPI_Start(&r[i]) == MPI_SUCCESS, "Start %d", i);
		}
		switch (round % 4) {
		case 0:
			CHECK(MPI_Waitall(N, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "Waitall");
			break;
		case 1:
			for (int k = 0; k < N; k++) {
				int idx;
				CHECK(MPI_Waitany(N, r, &idx, MPI_STATUS_IGNORE) == MPI_SUCCESS, "Waitany");
			}
			{
				int idx;
				MPI_Waitany(N, r, &idx, MPI_STATUS_IGNORE);
				CHECK(idx == MPI_UNDEFINED, "Waitany of inactive requests: %d", idx);
			}
			break;
		case 2:
			for (int flag = 0; !flag;)
				CHECK(MPI_Testall(N, r, &flag, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "Testall");
			break;
		case 3:
			for (int i = 0; i < N; i++)
				CHECK(MPI_Wait(&r[i], MPI_STATUS_IGNORE) == MPI_SUCCESS, "Wait %d", i);
			break;
		}
		for (int i = 0; i < N; i++)
			CHECK(r[i] != MPI_REQUEST_NULL, "round %d: request %d was nulled", round, i);
		long long want_total = 0, want_scan = 0;
		for (int q = 0; q < size; q++) {
			want_total += q + round;
			if (q <= rank)
				want_scan += q + round;
		}
		CHECK(total == want_total, "round %d: Allreduce %lld, want %lld", round, total, want_total);
		CHECK(scan == want_scan, "round %d: Scan %lld, want %lld", round, scan, want_scan);
		CHECK(bc[0] == round && bc[1] == -round, "round %d: Bcast %d %d", round, bc[0], bc[1]);
		for (int q = 0; q < size; q++) {
			CHECK(all[q] == q * round + 0.5, "round %d: Allgather[%d] = %g", round, q, all[q]);
			CHECK(a2a_in[q] == 1000 * q + 10 * rank + round, "round %d: Alltoall[%d] = %d", round, q, a2a_in[q]);
		}
		CHECK(rsb[0] == (long long)size * (rank + round), "round %d: Reduce_scatter_block %lld", round, rsb[0]);
		if (rank == root)
			for (int q = 1, k = 0; q < size; q += 2, k++)
				CHECK(gv_in[k] == 100 * round + q, "round %d: Gatherv[%d] = %d", round, k, gv_in[k]);
		/* Other collectives between the rounds. */
		MPI_Barrier(MPI_COMM_WORLD);
		int one = 1, n = 0;
		MPI_Request q;
		MPI_Iallreduce(&one, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q);
		MPI_Wait(&q, MPI_STATUS_IGNORE);
		CHECK(n == size, "Iallreduce between rounds: %d", n);
	}
#endif
	report("rounds of eight persistent collectives");

#ifdef HAVE_PCOLL
	{
		/* The request's life: an inactive one waits at once; an active
		 * one may not start again nor be freed; none is cancelled. */
		MPI_Status st;
		CHECK(MPI_Wait(&r[0], &st) == MPI_SUCCESS && r[0] != MPI_REQUEST_NULL, "Wait of an inactive one");
		sum = 1;
		MPI_Start(&r[0]);
		CHECK(class_of(MPI_Start(&r[0])) == MPI_ERR_REQUEST, "Start of an active one");
		CHECK(class_of(MPI_Request_free(&r[0])) == MPI_ERR_REQUEST, "Free of an active one");
		CHECK(class_of(MPI_Cancel(&r[0])) == MPI_ERR_REQUEST, "Cancel");
		CHECK(MPI_Wait(&r[0], MPI_STATUS_IGNORE) == MPI_SUCCESS && total == size, "the last Allreduce: %lld", total);
		for (int i = 0; i < N; i++) {
			CHECK(MPI_Request_free(&r[i]) == MPI_SUCCESS, "Free %d", i);
			CHECK(r[i] == MPI_REQUEST_NULL, "Free %d left the handle", i);
		}
		/* A NULL request and a wrong info are refused on this rank
		 * only (making one is local). */
		CHECK(class_of(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, NULL)) == MPI_ERR_ARG, "NULL request");
		MPI_Request bad = MPI_REQUEST_NULL;
		int bx = 0;
		int ic = class_of(MPI_Bcast_init(&bx, 1, MPI_INT, 0, MPI_COMM_WORLD, (MPI_Info)(uintptr_t)0x7777770, &bad));
		CHECK(ic == MPI_ERR_INFO && bad == MPI_REQUEST_NULL, "a wrong info: class %d", ic);
		/* A mismatch is reported by the completion, on every rank. */
		MPI_Request m;
		int x[2] = {1, 1}, y[2];
		MPI_Allreduce_init(x, y, rank == 0 ? 1 : 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &m);
		MPI_Start(&m);
		int err = MPI_Wait(&m, MPI_STATUS_IGNORE);
		CHECK(class_of(err) == MPI_ERR_COUNT, "mismatched counts: class %d", class_of(err));
		MPI_Request_free(&m);
	}
#endif
	report("the request's life");

	MPI_Finalize();
	return failures != 0;
}
