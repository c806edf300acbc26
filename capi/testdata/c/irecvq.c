/* ranks: 3
 * MPI_Irecv the way message-rate and halo codes use it: windows of
 * receives posted before their messages arrive (libmpi_abi queues them in
 * C and matches them there) and after (received at once), completed by
 * every completion call; and everything that hands queued receives to the
 * Go side in the middle of a window - another tag first, MPI_ANY_SOURCE,
 * a blocking receive, truncation, cancel, free, a large message, a freed
 * communicator - with MPI's order kept throughout. */
#include <stdint.h>
#include <string.h>
#include "check.h"

/* Under shmrun, libmpi_abi counts the messages it sent and received
 * without leaving C; elsewhere the hook is absent. */
extern unsigned long long shmrun_p2p_fast_count(void) __attribute__((weak));

#define W 64

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	static unsigned char sb[W][2048], rb[W][2048];
	MPI_Request rq[W];
	MPI_Status sts[W];

	/* Windows of 8-byte messages: receives posted before the sends (odd
	 * windows: queued, the sender's Isends follow a barrier) and after
	 * (even windows: the messages wait in the ring, all of them eager and
	 * fitting there), completed by MPI_Waitall or one MPI_Wait each;
	 * every fifth window's longer messages wrap the rings. */
	unsigned long long before = shmrun_p2p_fast_count != NULL ? shmrun_p2p_fast_count() : 0;
	for (int win = 0; win < 40; win++) {
		int n = win % 5 == 4 ? 200 + 13 * win : 8, posted_first = win & 1;
		if (rank == 1 && posted_first)
			for (int i = 0; i < W; i++)
				MPI_Irecv(rb[i], n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &rq[i]);
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0) {
			for (int i = 0; i < W; i++) {
				fill(sb[i], n, win * W + i);
				MPI_Isend(sb[i], n, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &rq[i]);
			}
			CHECK(MPI_Waitall(W, rq, sts) == MPI_SUCCESS, "window %d: sends", win);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 1) {
			if (!posted_first)
				for (int i = 0; i < W; i++)
					MPI_Irecv(rb[i], 2048, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &rq[i]);
			if (win % 3 == 0) {
				for (int i = 0; i < W; i++)
					CHECK(MPI_Wait(&rq[i], &sts[i]) == MPI_SUCCESS, "window %d: wait %d", win, i);
			} else {
				CHECK(MPI_Waitall(W, rq, sts) == MPI_SUCCESS, "window %d: waitall", win);
			}
			for (int i = 0; i < W; i++) {
				int got = -1;
				MPI_Get_count(&sts[i], MPI_BYTE, &got);
				CHECK(rq[i] == MPI_REQUEST_NULL && got == n && sts[i].MPI_SOURCE == 0 && sts[i].MPI_TAG == 1 &&
					      same(rb[i], n, win * W + i),
				      "window %d message %d: %d bytes from %d tag %d", win, i, got, sts[i].MPI_SOURCE,
				      sts[i].MPI_TAG);
			}
		}
	}
	/* The even windows' receives take their messages in C. */
	if (shmrun_p2p_fast_count != NULL && rank == 1)
		CHECK(shmrun_p2p_fast_count() - before >= 20 * W, "%llu messages received in C, want the %d of the even windows",
		      shmrun_p2p_fast_count() - before, 20 * W);
	report("windows posted before and after their messages");

	/* Tags out of order inside a queue: each message goes to the first
	 * queued receive it matches. */
	if (rank == 1) {
		int v[4] = {-1, -1, -1, -1};
		MPI_Irecv(&v[0], 1, MPI_INT, 0, 6, MPI_COMM_WORLD, &rq[0]);
		MPI_Irecv(&v[1], 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &rq[1]);
		MPI_Irecv(&v[2], 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[2]);
		MPI_Irecv(&v[3], 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[3]);
		MPI_Barrier(MPI_COMM_WORLD);
		CHECK(MPI_Waitall(4, rq, sts) == MPI_SUCCESS, "waitall");
		CHECK(v[0] == 1 && v[1] == 0 && v[2] == 2 && v[3] == 3 && sts[2].MPI_TAG == 5 && sts[3].MPI_TAG == 6,
		      "got %d %d %d %d, tags %d %d", v[0], v[1], v[2], v[3], sts[2].MPI_TAG, sts[3].MPI_TAG);
	} else {
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0)
			for (int k = 0; k < 4; k++)
				MPI_Send(&k, 1, MPI_INT, 1, k % 2 ? 6 : 5, MPI_COMM_WORLD);
	}
	report("tags out of order in the queue");

	/* A message no queued receive takes, ahead of one that is: the wait
	 * goes on in Go, which sets the first aside for a later receive. */
	if (rank == 1) {
		int a = -1, b = -1;
		MPI_Irecv(&b, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, &rq[0]);
		MPI_Barrier(MPI_COMM_WORLD);
		CHECK(MPI_Wait(&rq[0], &sts[0]) == MPI_SUCCESS && b == 80 && sts[0].MPI_TAG == 8, "tag 8: %d", b);
		CHECK(MPI_Recv(&a, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, &sts[0]) == MPI_SUCCESS && a == 70, "tag 7: %d", a);
	} else {
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0) {
			int a = 70, b = 80;
			MPI_Send(&a, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
			MPI_Send(&b, 1, MPI_INT, 1, 8, MPI_COMM_WORLD);
		}
	}
	report("a message no queued receive takes");

	/* Queued receives, then calls that go through Go (MPI_ANY_SOURCE, a
	 * blocking receive, a probe): the queued ones keep their turn. */
	if (rank == 1) {
		int v[5] = {-1, -1, -1, -1, -1};
		MPI_Irecv(&v[0], 1, MPI_INT, 0, 9, MPI_COMM_WORLD, &rq[0]);
		MPI_Irecv(&v[1], 1, MPI_INT, 0, 9, MPI_COMM_WORLD, &rq[1]);
		MPI_Irecv(&v[2], 1, MPI_INT, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &rq[2]);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Status st;
		CHECK(MPI_Recv(&v[3], 1, MPI_INT, 0, 9, MPI_COMM_WORLD, &st) == MPI_SUCCESS, "recv");
		CHECK(MPI_Probe(0, 9, MPI_COMM_WORLD, &st) == MPI_SUCCESS, "probe");
		CHECK(MPI_Recv(&v[4], 1, MPI_INT, 0, 9, MPI_COMM_WORLD, &st) == MPI_SUCCESS, "recv after probe");
		CHECK(MPI_Waitall(3, rq, sts) == MPI_SUCCESS, "waitall");
		CHECK(v[0] == 0 && v[1] == 1 && v[2] == 2 && v[3] == 3 && v[4] == 4, "got %d %d %d %d %d", v[0], v[1], v[2],
		      v[3], v[4]);
	} else {
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0)
			for (int k = 0; k < 5; k++)
				MPI_Send(&k, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
	}
	report("queued receives before calls that go through Go");

	/* A blocking receive behind a queued one of the same tag. */
	if (rank == 1) {
		int a = -1, b = -1;
		MPI_Irecv(&a, 1, MPI_INT, 0, 10, MPI_COMM_WORLD, &rq[0]);
		MPI_Barrier(MPI_COMM_WORLD);
		CHECK(MPI_Recv(&b, 1, MPI_INT, 0, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS, "recv");
		CHECK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE) == MPI_SUCCESS && a == 100 && b == 101, "got %d then %d", a, b);
	} else {
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0)
			for (int k = 100; k < 102; k++)
				MPI_Send(&k, 1, MPI_INT, 1, 10, MPI_COMM_WORLD);
	}
	report("a blocking receive behind a queued one");

	/* Truncation of a queued receive, then the traffic goes on; a large
	 * message into a queued receive. */
	if (rank == 1) {
		MPI_Irecv(rb[0], 4, MPI_BYTE, 0, 11, MPI_COMM_WORLD, &rq[0]);
		MPI_Irecv(rb[1], 8, MPI_BYTE, 0, 11, MPI_COMM_WORLD, &rq[1]);
		MPI_Irecv(rb[2], 2048, MPI_BYTE, 0, 11, MPI_COMM_WORLD, &rq[2]);
		MPI_Barrier(MPI_COMM_WORLD);
		int rc = MPI_Wait(&rq[0], &sts[0]), cls = -1;
		MPI_Error_class(rc, &cls);
		CHECK(cls == MPI_ERR_TRUNCATE, "16 bytes into 4: class %d", cls);
		CHECK(MPI_Waitall(2, rq + 1, sts) == MPI_SUCCESS && same(rb[1], 8, 2) && same(rb[2], 2048, 3),
		      "the next messages");
		static unsigned char big[200000];
		MPI_Irecv(big, sizeof big, MPI_BYTE, 0, 12, MPI_COMM_WORLD, &rq[0]);
		int got = -1;
		CHECK(MPI_Wait(&rq[0], &sts[0]) == MPI_SUCCESS && MPI_Get_count(&sts[0], MPI_BYTE, &got) == MPI_SUCCESS &&
			      got == (int)sizeof big && same(big, sizeof big, 4),
		      "large message: %d bytes", got);
	} else {
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0) {
			fill(sb[0], 16, 1);
			MPI_Send(sb[0], 16, MPI_BYTE, 1, 11, MPI_COMM_WORLD);
			fill(sb[1], 8, 2);
			MPI_Send(sb[1], 8, MPI_BYTE, 1, 11, MPI_COMM_WORLD);
			fill(sb[2], 2048, 3);
			MPI_Send(sb[2], 2048, MPI_BYTE, 1, 11, MPI_COMM_WORLD);
			static unsigned char big[200000];
			fill(big, sizeof big, 4);
			MPI_Send(big, sizeof big, MPI_BYTE, 1, 12, MPI_COMM_WORLD);
		}
	}
	report("truncation and a large message");

	/* Cancel and free of queued receives: a cancelled one leaves its
	 * message to the next receive; a freed one still takes its message. */
	if (rank == 1) {
		int a = -1, b = -1, c = -1, flag = 0;
		MPI_Irecv(&a, 1, MPI_INT, 0, 13, MPI_COMM_WORLD, &rq[0]);
		CHECK(MPI_Cancel(&rq[0]) == MPI_SUCCESS, "cancel");
		CHECK(MPI_Wait(&rq[0], &sts[0]) == MPI_SUCCESS && MPI_Test_cancelled(&sts[0], &flag) == MPI_SUCCESS && flag,
		      "cancelled: %d", flag);
		static int freed = -1;
		MPI_Irecv(&freed, 1, MPI_INT, 0, 14, MPI_COMM_WORLD, &rq[1]);
		CHECK(MPI_Request_free(&rq[1]) == MPI_SUCCESS && rq[1] == MPI_REQUEST_NULL, "free");
		MPI_Barrier(MPI_COMM_WORLD);
		CHECK(MPI_Recv(&b, 1, MPI_INT, 0, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS && b == 130,
		      "after the cancel: %d", b);
		CHECK(MPI_Recv(&c, 1, MPI_INT, 0, 15, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS && c == 150,
		      "tag 15: %d", c);
		CHECK(a == -1 && freed == 140, "cancelled %d, freed %d", a, freed);
	} else {
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0) {
			int v[3] = {130, 140, 150};
			MPI_Send(&v[0], 1, MPI_INT, 1, 13, MPI_COMM_WORLD);
			MPI_Send(&v[1], 1, MPI_INT, 1, 14, MPI_COMM_WORLD);
			MPI_Send(&v[2], 1, MPI_INT, 1, 15, MPI_COMM_WORLD);
		}
	}
	report("cancel and free");

	/* From here on rank 1 receives from rank 2 too: it writes to it first
	 * (libmpi_abi receives in C only from a rank whose inbox it has
	 * mapped, for the room it gives back). */
	if (rank == 1)
		MPI_Send(NULL, 0, MPI_BYTE, 2, 19, MPI_COMM_WORLD);
	else if (rank == 2)
		MPI_Recv(NULL, 0, MPI_BYTE, 1, 19, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

	/* MPI_ANY_SOURCE, messages waiting from two senders: each sender's in
	 * order; under shmrun all received in C, both senders served early
	 * (it starts one rank further each call). */
	before = shmrun_p2p_fast_count != NULL ? shmrun_p2p_fast_count() : 0;
	if (rank == 0 || rank == 2)
		for (int k = 0; k < 40; k++) {
			int v = rank * 1000 + k;
			MPI_Send(&v, 1, MPI_INT, 1, 18, MPI_COMM_WORLD);
		}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 1) {
		int next[3] = {0, 0, 0}, early[3] = {0, 0, 0};
		for (int k = 0; k < 80; k++) {
			int v = -1;
			MPI_Status st;
			MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 18, MPI_COMM_WORLD, &st);
			int s = st.MPI_SOURCE;
			CHECK((s == 0 || s == 2) && v == s * 1000 + next[s], "message %d: %d from %d", k, v, s);
			if (s == 0 || s == 2) {
				next[s]++;
				early[s] += k < 10;
			}
		}
		if (shmrun_p2p_fast_count != NULL) {
			CHECK(shmrun_p2p_fast_count() - before == 80, "%llu of the 80 waiting messages received in C",
			      shmrun_p2p_fast_count() - before);
			CHECK(early[0] > 0 && early[2] > 0, "the first ten from rank 0: %d, from rank 2: %d", early[0],
			      early[2]);
		}
	}
	report("any source, messages waiting");

	/* Every other completion call on queued receives, and two senders. */
	for (int round = 0; round < 6; round++) {
		int in[4] = {-1, -1, -1, -1};
		if (rank == 1) {
			for (int i = 0; i < 4; i++)
				MPI_Irecv(&in[i], 1, MPI_INT, i & 1 ? 2 : 0, 20, MPI_COMM_WORLD, &rq[i]);
			MPI_Barrier(MPI_COMM_WORLD);
			int flag = 0, idx = -1, outc = 0, idxs[4], done = 0;
			switch (round) {
			case 0:
				while (done < 4) {
					CHECK(MPI_Waitany(4, rq, &idx, &sts[0]) == MPI_SUCCESS && idx >= 0 && idx < 4 &&
						      rq[idx] == MPI_REQUEST_NULL && sts[0].MPI_SOURCE == (idx & 1 ? 2 : 0),
					      "waitany %d from %d", idx, sts[0].MPI_SOURCE);
					done++;
				}
				break;
			case 1:
				while (done < 4) {
					CHECK(MPI_Waitsome(4, rq, &outc, idxs, sts) == MPI_SUCCESS && outc > 0, "waitsome");
					for (int j = 0; j < outc; j++)
						CHECK(idxs[j] >= 0 && idxs[j] < 4 && rq[idxs[j]] == MPI_REQUEST_NULL &&
							      sts[j].MPI_SOURCE == (idxs[j] & 1 ? 2 : 0) &&
							      (j == 0 || idxs[j] > idxs[j - 1]),
						      "waitsome index %d from %d", idxs[j], sts[j].MPI_SOURCE);
					done += outc;
				}
				break;
			case 2:
				do
					CHECK(MPI_Testall(4, rq, &flag, sts) == MPI_SUCCESS, "testall");
				while (!flag);
				break;
			case 3:
				for (int i = 0; i < 4; i++) {
					do
						CHECK(MPI_Test(&rq[i], &flag, &sts[0]) == MPI_SUCCESS, "test");
					while (!flag);
				}
				break;
			case 4:
				while (done < 4) {
					CHECK(MPI_Testany(4, rq, &idx, &flag, &sts[0]) == MPI_SUCCESS, "testany");
					done += flag && idx != MPI_UNDEFINED;
				}
				break;
			case 5:
				for (int i = 0; i < 4; i++) {
					do
						CHECK(MPI_Request_get_status(rq[i], &flag, &sts[0]) == MPI_SUCCESS, "get_status");
					while (!flag);
					CHECK(sts[0].MPI_SOURCE == (i & 1 ? 2 : 0) && sts[0].MPI_TAG == 20, "get_status %d: from %d",
					      i, sts[0].MPI_SOURCE);
				}
				CHECK(MPI_Waitall(4, rq, sts) == MPI_SUCCESS, "waitall after get_status");
				break;
			}
			for (int i = 0; i < 4; i++)
				CHECK(rq[i] == MPI_REQUEST_NULL && in[i] == round * 10 + i / 2 + (i & 1 ? 500 : 0),
				      "round %d receive %d: %d", round, i, in[i]);
		} else {
			MPI_Barrier(MPI_COMM_WORLD);
			if (rank == 0 || rank == 2)
				for (int k = 0; k < 2; k++) {
					int v = round * 10 + k + (rank == 2 ? 500 : 0);
					MPI_Send(&v, 1, MPI_INT, 1, 20, MPI_COMM_WORLD);
				}
		}
	}
	report("every completion call, two senders");

	/* Communicators: queued receives of one tag on a duplicate and on the
	 * world, the messages sent the other way round; a duplicate freed
	 * with a receive queued on it. */
	MPI_Comm dup;
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
	if (rank == 1) {
		int a = -1, b = -1, c = -1;
		MPI_Irecv(&a, 1, MPI_INT, 0, 30, dup, &rq[0]);
		MPI_Irecv(&b, 1, MPI_INT, 0, 30, MPI_COMM_WORLD, &rq[1]);
		MPI_Irecv(&c, 1, MPI_INT, 0, 31, dup, &rq[2]);
		MPI_Barrier(MPI_COMM_WORLD);
		CHECK(MPI_Waitall(2, rq, sts) == MPI_SUCCESS && a == 1 && b == 2, "dup %d, world %d", a, b);
		CHECK(MPI_Comm_free(&dup) == MPI_SUCCESS, "free");
		CHECK(MPI_Wait(&rq[2], &sts[2]) == MPI_SUCCESS && c == 3, "on the freed duplicate: %d", c);
	} else {
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0) {
			int v[3] = {1, 2, 3};
			MPI_Send(&v[1], 1, MPI_INT, 1, 30, MPI_COMM_WORLD);
			MPI_Send(&v[0], 1, MPI_INT, 1, 30, dup);
			MPI_Send(&v[2], 1, MPI_INT, 1, 31, dup);
		}
		MPI_Comm_free(&dup);
	}
	report("communicators");

	/* A completed request's handle is not a request any more (shmrun:
	 * MPI_ERR_REQUEST; elsewhere not checked). */
	if (rank == 1 && shmrun_p2p_fast_count != NULL) {
		int a = -1;
		MPI_Irecv(&a, 1, MPI_INT, 0, 40, MPI_COMM_WORLD, &rq[0]);
		MPI_Request old = rq[0];
		MPI_Barrier(MPI_COMM_WORLD);
		CHECK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE) == MPI_SUCCESS && a == 40, "wait: %d", a);
		int rc = MPI_Wait(&old, MPI_STATUS_IGNORE), cls = -1;
		MPI_Error_class(rc, &cls);
		CHECK(cls == MPI_ERR_REQUEST, "a completed handle again: class %d", cls);
	} else {
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0) {
			int v = 40;
			MPI_Send(&v, 1, MPI_INT, 1, 40, MPI_COMM_WORLD);
		}
		if (rank == 1) {
			int a = -1;
			MPI_Recv(&a, 1, MPI_INT, 0, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
	}
	report("a completed handle");

	/* Persistent requests (started in C by libmpi_abi while they can):
	 * windows by MPI_Startall and MPI_Waitall, every completion call, a
	 * restart after each, cancel, an inactive request among active ones,
	 * a start of an active one, and free. */
	MPI_Request ps[W], pr[W];
	int pin[W], pout[W];
	if (rank == 0)
		for (int i = 0; i < W; i++)
			MPI_Send_init(&pout[i], 1, MPI_INT, 1, 50, MPI_COMM_WORLD, &ps[i]);
	if (rank == 1)
		for (int i = 0; i < W; i++)
			MPI_Recv_init(&pin[i], 1, MPI_INT, 0, 50, MPI_COMM_WORLD, &pr[i]);
	for (int round = 0; round < 12; round++) {
		if (rank == 1) {
			for (int i = 0; i < W; i++)
				pin[i] = -1;
			CHECK(MPI_Startall(W, pr) == MPI_SUCCESS, "startall");
		}
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0) {
			for (int i = 0; i < W; i++)
				pout[i] = round * 1000 + i;
			CHECK(MPI_Startall(W, ps) == MPI_SUCCESS && MPI_Waitall(W, ps, MPI_STATUSES_IGNORE) == MPI_SUCCESS,
			      "round %d: sends", round);
		} else if (rank == 1) {
			int flag = 0, idx = -1, outc = 0, idxs[W], done = 0;
			switch (round % 6) {
			case 0:
				CHECK(MPI_Waitall(W, pr, sts) == MPI_SUCCESS, "waitall");
				break;
			case 1:
				for (int i = 0; i < W; i++)
					CHECK(MPI_Wait(&pr[i], &sts[i]) == MPI_SUCCESS, "wait");
				break;
			case 2:
				do
					CHECK(MPI_Testall(W, pr, &flag, sts) == MPI_SUCCESS, "testall");
				while (!flag);
				break;
			case 3:
				while (done < W) {
					CHECK(MPI_Waitany(W, pr, &idx, &sts[0]) == MPI_SUCCESS && idx != MPI_UNDEFINED, "waitany");
					done++;
				}
				break;
			case 4:
				while (done < W) {
					CHECK(MPI_Waitsome(W, pr, &outc, idxs, sts) == MPI_SUCCESS && outc > 0, "waitsome");
					done += outc;
				}
				break;
			case 5:
				CHECK(MPI_Request_get_status(pr[0], &flag, &sts[0]) == MPI_SUCCESS, "get_status");
				CHECK(MPI_Waitall(W, pr, sts) == MPI_SUCCESS, "waitall after get_status");
				break;
			}
			for (int i = 0; i < W; i++)
				CHECK(pr[i] != MPI_REQUEST_NULL && pin[i] == round * 1000 + i, "round %d message %d: %d", round,
				      i, pin[i]);
		}
	}
	/* An inactive request among started ones; a start of an active one
	 * (shmrun: MPI_ERR_REQUEST); a cancelled one. */
	if (rank == 1) {
		CHECK(MPI_Start(&pr[1]) == MPI_SUCCESS, "start");
		if (shmrun_p2p_fast_count != NULL) { /* erroneous: Open MPI starts it again */
			int rc = MPI_Start(&pr[1]), cls = -1;
			MPI_Error_class(rc, &cls);
			CHECK(cls == MPI_ERR_REQUEST, "start of an active request: class %d", cls);
		}
		CHECK(MPI_Cancel(&pr[1]) == MPI_SUCCESS && MPI_Wait(&pr[1], &sts[1]) == MPI_SUCCESS, "cancel");
		int flag = 0;
		MPI_Test_cancelled(&sts[1], &flag);
		CHECK(flag, "not cancelled");
		CHECK(MPI_Start(&pr[2]) == MPI_SUCCESS, "start");
		MPI_Barrier(MPI_COMM_WORLD);
		CHECK(MPI_Waitall(3, pr, sts) == MPI_SUCCESS && pin[2] == 77, "inactive among started: %d", pin[2]);
		CHECK(sts[0].MPI_SOURCE == MPI_ANY_SOURCE && sts[0].MPI_TAG == MPI_ANY_TAG, "inactive: empty status");
	} else {
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0) {
			int v = 77;
			MPI_Send(&v, 1, MPI_INT, 1, 50, MPI_COMM_WORLD);
		}
	}
	/* Free: a started receive still takes its message. */
	static int late = -1;
	if (rank == 1) {
		MPI_Request fr;
		MPI_Recv_init(&late, 1, MPI_INT, 0, 51, MPI_COMM_WORLD, &fr);
		MPI_Start(&fr);
		CHECK(MPI_Request_free(&fr) == MPI_SUCCESS && fr == MPI_REQUEST_NULL, "free");
		MPI_Barrier(MPI_COMM_WORLD);
		int v = -1;
		MPI_Recv(&v, 1, MPI_INT, 0, 52, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		CHECK(late == 51 && v == 52, "freed %d, then %d", late, v);
	} else {
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0) {
			int a = 51, b = 52;
			MPI_Send(&a, 1, MPI_INT, 1, 51, MPI_COMM_WORLD);
			MPI_Send(&b, 1, MPI_INT, 1, 52, MPI_COMM_WORLD);
		}
	}
	for (int i = 0; i < W; i++)
		if (rank < 2)
			CHECK(MPI_Request_free(rank == 0 ? &ps[i] : &pr[i]) == MPI_SUCCESS, "free %d", i);
	report("persistent requests");

	MPI_Finalize();
	return 0;
}
