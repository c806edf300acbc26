/* ranks: 2
 * Buffered sends (MPI 4.1 §3.6): MPI_Bsend returns before any receive is
 * posted, whatever the message's size, out of the buffer the program
 * attached (sized as the standard says: packed size + MPI_BSEND_OVERHEAD
 * a message); a full buffer is MPI_ERR_BUFFER, and so is a send with none;
 * MPI_Buffer_detach waits for the messages and returns the buffer; a
 * derived type's data is packed (holes left out) and received typed;
 * MPI_Ibsend's request is complete at once. Then (MPI 4.1, not Open MPI
 * 4.1) a communicator's own buffer and MPI_BUFFER_AUTOMATIC. */
#include <string.h>
#include "check.h"

#define BIG 50000 /* ints: 200 KB, far above the eager size */

int main(int argc, char **argv)
{
	int rank, err;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); /* the buffer calls' errors */
	int *msg = malloc(BIG * sizeof *msg), *got = malloc(2 * BIG * sizeof *got);
	int psize;
	MPI_Pack_size(BIG, MPI_INT, MPI_COMM_WORLD, &psize);
	int size = 3 * (psize + MPI_BSEND_OVERHEAD);
	char *buffer = malloc(size);

	/* (Open MPI 4.1 sends without a buffer, and takes a second one.) */
#ifdef MPI_ABI_VERSION
	err = MPI_Bsend(msg, 1, MPI_INT, 1 - rank, 9, MPI_COMM_WORLD);
	CHECK(class_of(err) == MPI_ERR_BUFFER, "MPI_Bsend with no buffer attached: class %d", class_of(err));
	MPI_Buffer_attach(buffer, size);
	err = MPI_Buffer_attach(buffer, size);
	CHECK(class_of(err) == MPI_ERR_BUFFER, "a second MPI_Buffer_attach: class %d", class_of(err));
#else
	MPI_Buffer_attach(buffer, size);
#endif
	report("a buffered send needs a buffer, one at a time");
	if (rank == 0) {
		for (int k = 0; k < 3; k++) {
			for (int i = 0; i < BIG; i++)
				msg[i] = k * BIG + i;
			err = MPI_Bsend(msg, BIG, MPI_INT, 1, k, MPI_COMM_WORLD);
			CHECK(err == MPI_SUCCESS, "Bsend %d: %d", k, err);
		}
#ifdef MPI_ABI_VERSION
		err = MPI_Bsend(msg, BIG, MPI_INT, 1, 3, MPI_COMM_WORLD);
		CHECK(class_of(err) == MPI_ERR_BUFFER, "a fourth Bsend into a buffer full of three: class %d", class_of(err));
#endif
		err = MPI_Bsend(msg, 1, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD);
		CHECK(err == MPI_SUCCESS, "a Bsend to MPI_PROC_NULL takes no room: %d", err);
	}
	MPI_Barrier(MPI_COMM_WORLD); /* the three sends returned before any receive */
	if (rank == 1)
		for (int k = 2; k >= 0; k--) { /* in reverse: each matched by tag */
			MPI_Recv(got, BIG, MPI_INT, 0, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			int bad = 0;
			for (int i = 0; i < BIG; i++)
				bad += got[i] != k * BIG + i;
			CHECK(bad == 0, "message %d: %d ints wrong", k, bad);
		}
	void *back;
	int backsize;
	MPI_Buffer_detach(&back, &backsize); /* waits for rank 1's receives */
	CHECK(back == buffer && backsize == size, "MPI_Buffer_detach gave %p, %d; attached %p, %d", back, backsize, (void *)buffer,
	      size);
	report("three large buffered sends before any receive; a full buffer refused");

	/* A vector with holes is packed: received as contiguous ints. */
	MPI_Datatype every2;
	MPI_Type_vector(BIG, 1, 2, MPI_INT, &every2);
	MPI_Type_commit(&every2);
	MPI_Buffer_attach(buffer, size);
	MPI_Request rq;
	if (rank == 0) {
		for (int i = 0; i < 2 * BIG; i++)
			got[i] = i % 2 ? -1 : i / 2;
		err = MPI_Ibsend(got, 1, every2, 1, 7, MPI_COMM_WORLD, &rq);
		int flag = 0;
		MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
		CHECK(err == MPI_SUCCESS && flag && rq == MPI_REQUEST_NULL, "MPI_Ibsend: %d, its request complete %d", err, flag);
		memset(got, 0, 2 * BIG * sizeof *got); /* the message is in the buffer */
	} else {
		MPI_Status st;
		int n;
		MPI_Recv(msg, BIG, MPI_INT, 0, 7, MPI_COMM_WORLD, &st);
		MPI_Get_count(&st, MPI_INT, &n);
		int bad = 0;
		for (int i = 0; i < BIG; i++)
			bad += msg[i] != i;
		CHECK(n == BIG && bad == 0, "a vector's buffered send: %d ints, %d wrong", n, bad);
	}
	MPI_Buffer_detach(&back, &backsize);
	MPI_Type_free(&every2);
	report("a derived type packed into the buffer; MPI_Ibsend complete at once");

#ifdef MPI_ABI_VERSION
	MPI_Comm dup;
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
	MPI_Comm_attach_buffer(dup, buffer, size);
	err = MPI_Bsend(msg, 1, MPI_INT, 1 - rank, 4, MPI_COMM_WORLD);
	CHECK(class_of(err) == MPI_ERR_BUFFER, "the world has no buffer of its own or the process's: class %d", class_of(err));
	if (rank == 0) {
		for (int i = 0; i < BIG; i++)
			msg[i] = 3 * i;
		err = MPI_Bsend(msg, BIG, MPI_INT, 1, 4, dup);
		CHECK(err == MPI_SUCCESS, "Bsend on the communicator's buffer: %d", err);
	}
	MPI_Barrier(dup);
	if (rank == 1) {
		MPI_Recv(got, BIG, MPI_INT, 0, 4, dup, MPI_STATUS_IGNORE);
		CHECK(got[BIG - 1] == 3 * (BIG - 1), "the communicator's buffered message: %d", got[BIG - 1]);
	}
	MPI_Comm_flush_buffer(dup);
	MPI_Comm_detach_buffer(dup, &back, &backsize);
	CHECK(back == buffer && backsize == size, "MPI_Comm_detach_buffer gave %p, %d", back, backsize);
	err = MPI_Comm_detach_buffer(dup, &back, &backsize);
	CHECK(class_of(err) == MPI_ERR_BUFFER, "detaching twice: class %d", class_of(err));

	/* MPI_BUFFER_AUTOMATIC: any number of messages, memory of the
	 * library's own; and a communicator freed with a buffered message
	 * in flight still delivers it. */
	MPI_Comm_attach_buffer(dup, MPI_BUFFER_AUTOMATIC, 0);
	if (rank == 0)
		for (int k = 0; k < 8; k++) {
			msg[0] = k;
			err = MPI_Bsend(msg, BIG, MPI_INT, 1, k, dup);
			CHECK(err == MPI_SUCCESS, "automatic Bsend %d: %d", k, err);
		}
	MPI_Barrier(dup);
	if (rank == 1)
		for (int k = 7; k >= 0; k--) {
			MPI_Recv(got, BIG, MPI_INT, 0, k, dup, MPI_STATUS_IGNORE);
			CHECK(got[0] == k, "automatic message %d: %d", k, got[0]);
		}
	MPI_Comm_free(&dup);
#endif
	report("a communicator's buffer; MPI_BUFFER_AUTOMATIC");
	free(buffer), free(msg), free(got);
	MPI_Finalize();
	return 0;
}
