/* ranks: 3
 * Persistent requests outlive the MPI_Comm_free of their communicator
 * (MPI 4.1 §7.4.3: a communicator is deallocated only once nothing refers
 * to it): a ring of MPI_Send_init/MPI_Recv_init and an
 * MPI_Allreduce_init made on a duplicate, the duplicate freed (once with
 * the requests active, completed after the free), then started round
 * after round; a copy of the freed handle is refused (by shmrun: Open
 * MPI does not check). More cycles than a
 * job has communicator table entries, so each one must be given back
 * with its last request. Open MPI 4.1 (MPI 3.1) has no
 * MPI_Allreduce_init: built against it, the ring alone. */
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
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); /* the freed handle's error */
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;

	for (int cycle = 0; cycle < 70; cycle++) {
		MPI_Comm d;
		CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &d) == MPI_SUCCESS, "cycle %d: dup", cycle);
		MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
		int out = 0, in = -1, v = 0, sum = 0, nreq = 2;
		MPI_Request r[3];
		(void)v, (void)sum;
		MPI_Send_init(&out, 1, MPI_INT, next, 5, d, &r[0]);
		MPI_Recv_init(&in, 1, MPI_INT, prev, 5, d, &r[1]);
#ifdef HAVE_PCOLL
		MPI_Allreduce_init(&v, &sum, 1, MPI_INT, MPI_SUM, d, MPI_INFO_NULL, &r[2]);
		nreq = 3;
#endif
		if (cycle == 1) {
			out = 1000 * rank + 99, v = rank + 1;
			CHECK(MPI_Startall(nreq, r) == MPI_SUCCESS, "Startall before the free");
		}
		MPI_Comm saved = d;
		CHECK(MPI_Comm_free(&d) == MPI_SUCCESS && d == MPI_COMM_NULL, "cycle %d: free", cycle);
		if (cycle == 1) {
			CHECK(MPI_Waitall(nreq, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "Waitall after the free");
			CHECK(in == 1000 * prev + 99, "started before the free: received %d", in);
			CHECK(nreq == 2 || sum == size * (size + 1) / 2, "started before the free: sum %d", sum);
		}
#ifdef MPI_ABI_VERSION /* Open MPI does not check a freed handle */
		CHECK(class_of(MPI_Barrier(saved)) == MPI_ERR_COMM, "cycle %d: Barrier on the freed handle", cycle);
#endif
		(void)saved;
		int rounds = cycle < 2 ? 4 : 1 + cycle % 2;
		for (int round = 0; round < rounds; round++) {
			out = 1000 * rank + round, v = rank * round, in = -1;
			CHECK(MPI_Startall(nreq, r) == MPI_SUCCESS, "cycle %d round %d: Startall", cycle, round);
			MPI_Status st[3];
			CHECK(MPI_Waitall(nreq, r, st) == MPI_SUCCESS, "cycle %d round %d: Waitall", cycle, round);
			CHECK(in == 1000 * prev + round && st[1].MPI_SOURCE == prev && st[1].MPI_TAG == 5,
			      "cycle %d round %d: received %d from %d tag %d", cycle, round, in, st[1].MPI_SOURCE,
			      st[1].MPI_TAG);
			CHECK(nreq == 2 || sum == round * size * (size - 1) / 2, "cycle %d round %d: sum %d", cycle, round,
			      sum);
		}
		for (int i = 0; i < nreq; i++)
			CHECK(MPI_Request_free(&r[i]) == MPI_SUCCESS && r[i] == MPI_REQUEST_NULL, "cycle %d: free %d",
			      cycle, i);
	}
	report("persistent requests after their communicator's free");

	/* The table has room for new communicators: none was kept. */
	for (int i = 0; i < 3; i++) {
		MPI_Comm d;
		CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &d) == MPI_SUCCESS, "dup after the cycles");
		CHECK(MPI_Barrier(d) == MPI_SUCCESS, "barrier after the cycles");
		MPI_Comm_free(&d);
	}
	report("communicators given back with their last request");

	MPI_Finalize();
	return failures != 0;
}
