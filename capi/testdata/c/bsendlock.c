/* ranks: 2
 * cflags: -pthread
 * Buffered sends wait for nothing but their own buffer (MPI 4.1 §3.6,
 * §11.6.1: a blocking call blocks only its thread). Under
 * MPI_THREAD_MULTIPLE, rank 0's main thread detaches the process's
 * buffer, which waits for a large message rank 1 receives last, while a
 * second thread's MPI_Bsend on a duplicate with a buffer of its own
 * returns at once, its message received first. And an error handler may
 * call the buffer functions: a buffered send to an invalid rank raises
 * to a handler that detaches the buffer, and the send returns
 * MPI_ERR_RANK. (MPI 4.1's communicator buffers: shmrun only.) */
#include <pthread.h>
#include <string.h>
#include "check.h"

#define BIG 100000 /* ints: above the eager size, sent in a rendezvous */

#ifdef MPI_ABI_VERSION
static MPI_Comm c2;
static int small = 7;
static volatile int bsent;

static void *second(void *arg)
{
	(void)arg;
	CHECK(MPI_Bsend(&small, 1, MPI_INT, 1, 2, c2) == MPI_SUCCESS, "the second thread's Bsend");
	bsent = 1;
	return NULL;
}
#endif

static int handled, detach_rc;
static void on_error(MPI_Comm *comm, int *code, ...)
{
	(void)comm, (void)code;
	void *addr;
	int size;
	detach_rc = MPI_Buffer_detach(&addr, &size);
	handled++;
}

int main(int argc, char **argv)
{
	int rank, provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

#ifdef MPI_ABI_VERSION
	CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
	MPI_Comm_dup(MPI_COMM_WORLD, &c2);
	int *big = calloc(BIG, sizeof *big);
	if (rank == 0) {
		int bsize = BIG * (int)sizeof(int) + MPI_BSEND_OVERHEAD, csize = 64 + MPI_BSEND_OVERHEAD;
		char *buf = malloc(bsize), *cbuf = malloc(csize);
		MPI_Buffer_attach(buf, bsize);
		MPI_Comm_attach_buffer(c2, cbuf, csize);
		for (int i = 0; i < BIG; i++)
			big[i] = i;
		CHECK(MPI_Bsend(big, BIG, MPI_INT, 1, 1, MPI_COMM_WORLD) == MPI_SUCCESS, "the large Bsend");
		pthread_t th;
		pthread_create(&th, NULL, second, NULL);
		void *addr;
		int size;
		/* Waits until rank 1 has received the large message, which
		 * it does only after the second thread's. */
		CHECK(MPI_Buffer_detach(&addr, &size) == MPI_SUCCESS && addr == buf && size == bsize, "detach");
		pthread_join(th, NULL);
		CHECK(bsent, "the second thread's Bsend returned");
		MPI_Comm_detach_buffer(c2, &addr, &size);
		free(buf);
		free(cbuf);
	} else {
		int got = 0;
		CHECK(MPI_Recv(&got, 1, MPI_INT, 0, 2, c2, MPI_STATUS_IGNORE) == MPI_SUCCESS && got == 7, "small: %d", got);
		CHECK(MPI_Recv(big, BIG, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
			      big[BIG - 1] == BIG - 1,
		      "large");
	}
	free(big);
	MPI_Comm_free(&c2);
#endif
	report("a detach waits only for its own buffer's messages");

	if (rank == 0) {
		int size = 4096, x = 1, n;
		char *buf = malloc(size);
		MPI_Errhandler eh;
		MPI_Comm_size(MPI_COMM_WORLD, &n);
		MPI_Comm_create_errhandler(on_error, &eh);
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
		MPI_Buffer_attach(buf, size);
		int rc = MPI_Bsend(&x, 1, MPI_INT, n, 0, MPI_COMM_WORLD);
		CHECK(class_of(rc) == MPI_ERR_RANK, "Bsend to rank %d: class %d", n, class_of(rc));
		CHECK(handled == 1 && detach_rc == MPI_SUCCESS, "handler ran %d times, its detach %d", handled, detach_rc);
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
		MPI_Errhandler_free(&eh);
		free(buf);
	}
	report("an error handler of a buffered send detaches the buffer");

	MPI_Finalize();
	return failures != 0;
}
