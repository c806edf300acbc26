/* ranks: 3
 * Point-to-point the way small-message codes use it: blocking and
 * nonblocking eager messages (which libmpi_abi sends and receives without
 * leaving C) interleaved with everything that hands a call to the Go
 * side - large messages, synchronous sends, another tag or communicator
 * first, MPI_ANY_SOURCE, truncation, rings that wrap - and every
 * completion call on the requests of sends completed at once. */
#include <stdint.h>
#include <string.h>
#include "check.h"

/* Under shmrun, libmpi_abi counts the messages it sent and received
 * without leaving C; elsewhere the hook is absent. */
extern unsigned long long shmrun_p2p_fast_count(void) __attribute__((weak));

/* sizes cycles through eager sizes (some cross the rings' ends, leaving a
 * skip) and large ones. */
static int size_of(int k)
{
	static const int sizes[] = {0, 1, 8, 24, 33, 200, 1000, 3000, 4000, 9000, 70000};
	return sizes[k % (int)(sizeof sizes / sizeof sizes[0])];
}

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	static unsigned char sb[70000], rb[70000];

	/* A ping-pong of 600 messages of every size class, both ways: the
	 * rings wrap many times, eager and large messages alternate. */
	if (rank < 2) {
		int peer = 1 - rank;
		for (int k = 0; k < 600; k++) {
			int n = size_of(k);
			if ((k & 1) == rank) {
				fill(sb, n, k);
				CHECK(MPI_Send(sb, n, MPI_BYTE, peer, k % 7, MPI_COMM_WORLD) == MPI_SUCCESS, "send %d", k);
			} else {
				MPI_Status st;
				memset(rb, 0, (size_t)n);
				CHECK(MPI_Recv(rb, n, MPI_BYTE, peer, k % 7, MPI_COMM_WORLD, &st) == MPI_SUCCESS, "recv %d", k);
				int got = -1;
				MPI_Get_count(&st, MPI_BYTE, &got);
				CHECK(got == n && st.MPI_SOURCE == peer && st.MPI_TAG == k % 7 && same(rb, n, k),
				      "message %d: %d bytes from %d tag %d, want %d", k, got, st.MPI_SOURCE, st.MPI_TAG, n);
			}
		}
	}
	/* Every eager send of it (245 a rank) is made in C. */
	if (shmrun_p2p_fast_count != NULL && rank < 2)
		CHECK(shmrun_p2p_fast_count() >= 245, "%llu messages of the ping-pong in C, want its 245 eager sends at least",
		      shmrun_p2p_fast_count());
	report("ping-pong of every size");

	/* Messages that arrived before their receive: taken in C, in order,
	 * with their tags and sizes. */
	unsigned long long before = shmrun_p2p_fast_count != NULL ? shmrun_p2p_fast_count() : 0;
	if (rank == 0)
		for (int k = 0; k < 50; k++) {
			fill(sb, k, k);
			MPI_Send(sb, k, MPI_BYTE, 1, 100 + k % 3, MPI_COMM_WORLD);
		}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 1) {
		for (int k = 0; k < 50; k++) {
			MPI_Status st;
			int got = -1;
			MPI_Recv(rb, 64, MPI_BYTE, 0, k % 2 ? MPI_ANY_TAG : 100 + k % 3, MPI_COMM_WORLD, &st);
			MPI_Get_count(&st, MPI_BYTE, &got);
			CHECK(got == k && st.MPI_TAG == 100 + k % 3 && st.MPI_SOURCE == 0 && same(rb, k, k),
			      "waiting message %d: %d bytes, tag %d", k, got, st.MPI_TAG);
		}
		if (shmrun_p2p_fast_count != NULL)
			CHECK(shmrun_p2p_fast_count() - before == 50, "%llu of the 50 waiting messages received in C",
			      shmrun_p2p_fast_count() - before);
	}
	report("messages waiting for their receive");

	/* Non-overtaking across the kinds of send: eager, synchronous, eager,
	 * large, eager, to one receiver, received in order; then a receive
	 * for a later tag first, which sets the earlier message aside. */
	if (rank == 0) {
		int v[5] = {10, 11, 12, 13, 14};
		MPI_Send(&v[0], 1, MPI_INT, 1, 5, MPI_COMM_WORLD);
		MPI_Ssend(&v[1], 1, MPI_INT, 1, 5, MPI_COMM_WORLD);
		MPI_Send(&v[2], 1, MPI_INT, 1, 5, MPI_COMM_WORLD);
		fill(sb, 20000, 3);
		MPI_Send(sb, 20000, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
		MPI_Send(&v[4], 1, MPI_INT, 1, 5, MPI_COMM_WORLD);
		MPI_Send(&v[0], 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
		MPI_Send(&v[1], 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
	} else if (rank == 1) {
		int x;
		for (int i = 0; i < 5; i++) {
			if (i == 3) {
				CHECK(MPI_Recv(rb, 20000, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
					      same(rb, 20000, 3),
				      "large message in order");
				continue;
			}
			MPI_Recv(&x, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			CHECK(x == 10 + i, "message %d of tag 5: %d", i, x);
		}
		MPI_Status st;
		MPI_Recv(&x, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, &st);
		CHECK(x == 11 && st.MPI_TAG == 2, "tag 2 first: %d", x);
		MPI_Recv(&x, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
		CHECK(x == 10 && st.MPI_TAG == 1, "then any tag: %d tag %d", x, st.MPI_TAG);
	}
	report("order across eager, synchronous and large sends");

	/* Communicators: the same tag on a reversed split and on the world,
	 * received in the other order; messages to oneself. */
	MPI_Comm rev;
	MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
	int rrank;
	MPI_Comm_rank(rev, &rrank);
	if (rank == 0) {
		int a = 1, b = 2;
		MPI_Send(&a, 1, MPI_INT, size - 1 - 1, 9, rev); /* world rank 1 */
		MPI_Send(&b, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
	} else if (rank == 1) {
		int x, y;
		MPI_Status st;
		MPI_Recv(&x, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Recv(&y, 1, MPI_INT, size - 1, 9, rev, &st);
		CHECK(x == 2 && y == 1 && st.MPI_SOURCE == size - 1, "world %d, split %d from %d", x, y, st.MPI_SOURCE);
	}
	for (int k = 0; k < 3; k++) {
		double d = rank + k / 4.0, e = -1;
		MPI_Send(&d, 1, MPI_DOUBLE, rrank, k, rev);
		MPI_Recv(&e, 1, MPI_DOUBLE, rrank, k, rev, MPI_STATUS_IGNORE);
		CHECK(e == d, "to itself: %g, want %g", e, d);
	}
	MPI_Comm_free(&rev);
	report("communicators and self");

	/* Two senders to one receiver, by given source in turn and by
	 * MPI_ANY_SOURCE: each sender's messages in order. */
	if (size >= 3 && (rank == 0 || rank == 2)) {
		for (int k = 0; k < 200; k++) {
			int v = rank * 1000 + k;
			MPI_Send(&v, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
		}
	} else if (size >= 3 && rank == 1) {
		int next[3] = {0, 0, 0};
		for (int k = 0; k < 400; k++) {
			int v, src = k < 200 ? (k & 1 ? 2 : 0) : MPI_ANY_SOURCE;
			MPI_Status st;
			MPI_Recv(&v, 1, MPI_INT, src, 3, MPI_COMM_WORLD, &st);
			int s = st.MPI_SOURCE;
			CHECK((s == 0 || s == 2) && v == s * 1000 + next[s], "message %d: %d from %d", k, v, s);
			if (s == 0 || s == 2)
				next[s]++;
		}
	}
	report("two senders, given and any source");

	/* Truncation, then the traffic goes on; a type that does not match
	 * is an error too (MPI_ERR_TYPE on shmrun: not compared here, Open
	 * MPI does not check it). */
	if (rank == 0) {
		fill(sb, 64, 7);
		MPI_Send(sb, 64, MPI_BYTE, 1, 4, MPI_COMM_WORLD);
		MPI_Send(sb, 8, MPI_BYTE, 1, 4, MPI_COMM_WORLD);
	} else if (rank == 1) {
		MPI_Status st;
		int rc = MPI_Recv(rb, 16, MPI_BYTE, 0, 4, MPI_COMM_WORLD, &st), cls = -1;
		MPI_Error_class(rc, &cls);
		CHECK(cls == MPI_ERR_TRUNCATE, "a 64-byte message into 16: class %d", cls);
		CHECK(MPI_Recv(rb, 16, MPI_BYTE, 0, 4, MPI_COMM_WORLD, &st) == MPI_SUCCESS && same(rb, 8, 7),
		      "the next message");
	}
	report("truncation");

	/* Requests of sends complete at once, through every completion call,
	 * beside receive requests and null ones. */
	if (rank < 2) {
		int peer = 1 - rank;
		for (int round = 0; round < 8; round++) {
			MPI_Request rq[6];
			int out[3], in[3] = {-1, -1, -1};
			for (int i = 0; i < 3; i++) {
				out[i] = rank * 100 + round * 10 + i;
				MPI_Irecv(&in[i], 1, MPI_INT, peer, 20 + i, MPI_COMM_WORLD, &rq[i]);
			}
			for (int i = 0; i < 3; i++)
				MPI_Isend(&out[i], 1, MPI_INT, peer, 20 + i, MPI_COMM_WORLD, &rq[3 + i]);
			/* libmpi_abi gives sends completed at once distinct handles
			 * (Open MPI gives them one: not checked there). */
			if (shmrun_p2p_fast_count != NULL)
				CHECK(rq[3] != rq[4] && rq[4] != rq[5] && rq[3] != rq[5], "requests active at once are equal");
			int flag = 0, idx = -1, outc = 0, idxs[6];
			MPI_Status sts[6];
			switch (round % 8) {
			case 0:
				CHECK(MPI_Waitall(6, rq, sts) == MPI_SUCCESS, "waitall");
				break;
			case 1:
				for (int i = 0; i < 6; i++)
					CHECK(MPI_Wait(&rq[i], &sts[i]) == MPI_SUCCESS, "wait %d", i);
				break;
			case 2:
				CHECK(MPI_Waitall(3, rq + 3, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "waitall of the sends");
				CHECK(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "waitall of the receives");
				break;
			case 3:
				for (int n = 0; n < 6; n++) {
					CHECK(MPI_Waitany(6, rq, &idx, &sts[0]) == MPI_SUCCESS, "waitany");
					CHECK(idx >= 0 && idx < 6 && rq[idx] == MPI_REQUEST_NULL, "waitany index %d", idx);
				}
				CHECK(MPI_Waitany(6, rq, &idx, &sts[0]) == MPI_SUCCESS && idx == MPI_UNDEFINED, "all null");
				break;
			case 4:
				for (int n = 0; n < 6; n += outc)
					CHECK(MPI_Waitsome(6, rq, &outc, idxs, sts) == MPI_SUCCESS && outc > 0, "waitsome");
				break;
			case 5:
				do
					CHECK(MPI_Testall(6, rq, &flag, sts) == MPI_SUCCESS, "testall");
				while (!flag);
				break;
			case 6:
				for (int i = 3; i < 6; i++) {
					CHECK(MPI_Request_get_status(rq[i], &flag, &sts[0]) == MPI_SUCCESS && flag, "get_status");
					CHECK(MPI_Test(&rq[i], &flag, &sts[0]) == MPI_SUCCESS && flag && rq[i] == MPI_REQUEST_NULL, "test");
				}
				CHECK(MPI_Waitall(6, rq, sts) == MPI_SUCCESS, "waitall with null ones");
				break;
			case 7:
				for (int i = 3; i < 6; i++)
					CHECK(MPI_Request_free(&rq[i]) == MPI_SUCCESS && rq[i] == MPI_REQUEST_NULL, "free");
				CHECK(MPI_Waitall(6, rq, sts) == MPI_SUCCESS, "waitall after free");
				break;
			}
			for (int i = 0; i < 6; i++)
				CHECK(rq[i] == MPI_REQUEST_NULL, "round %d: request %d not null", round, i);
			for (int i = 0; i < 3; i++)
				CHECK(in[i] == peer * 100 + round * 10 + i, "round %d: got %d", round, in[i]);
		}
	}
	report("completion calls on sends done at once");

	MPI_Finalize();
	return 0;
}
