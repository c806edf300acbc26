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
 * MPI_ERR_RANK; one whose handler frees the communicator, with the
 * communicator's buffer. A flush beside a stream of buffered sends
 * refuses none, and two threads may free two communicators with buffers
 * at once. (MPI 4.1's communicator buffers: shmrun only.) */
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

#ifdef MPI_ABI_VERSION
/* on_error_free frees the communicator whose buffered send failed. */
static int freed_rc = -1;
static void on_error_free(MPI_Comm *comm, int *code, ...)
{
	(void)code;
	freed_rc = MPI_Comm_free(comm);
}

/* A flush beside buffered sends refuses none of them. */
static volatile int stop_flush;
static void *flusher(void *arg)
{
	(void)arg;
	while (!stop_flush)
		MPI_Buffer_flush();
	return NULL;
}

/* Two threads free two communicators with buffers at once: one waits in
 * its drain while the other's free unlinks its record. */
static MPI_Comm ca, cb;
static char *cbig;
#define CBIG (1 << 20)
static void *free_b(void *arg)
{
	(void)arg;
	CHECK(MPI_Bsend(cbig, CBIG, MPI_CHAR, 1, 4, cb) == MPI_SUCCESS, "Bsend on cb");
	CHECK(MPI_Comm_free(&cb) == MPI_SUCCESS, "free cb");
	return NULL;
}
#endif

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

#ifdef MPI_ABI_VERSION
	/* An error handler that frees the failed Bsend's communicator, and
	 * its buffer's record with it. */
	if (rank == 0) {
		MPI_Comm d;
		MPI_Errhandler eh;
		int n, x = 1;
		MPI_Comm_size(MPI_COMM_WORLD, &n);
		MPI_Comm_dup(MPI_COMM_SELF, &d);
		char *cbuf = malloc(4096);
		MPI_Comm_attach_buffer(d, cbuf, 4096);
		MPI_Comm_create_errhandler(on_error_free, &eh);
		MPI_Comm_set_errhandler(d, eh);
		MPI_Errhandler_free(&eh);
		int rc = MPI_Bsend(&x, 1, MPI_INT, n, 0, d);
		CHECK(class_of(rc) == MPI_ERR_RANK && freed_rc == MPI_SUCCESS, "Bsend: class %d, the handler's free %d",
		      class_of(rc), freed_rc);
		free(cbuf);
	}
#endif
	report("an error handler of a buffered send frees its communicator");

#ifdef MPI_ABI_VERSION
	/* Buffered sends beside a flush of their buffer. */
	enum { NB = 2000 };
	int fails = 0;
	if (rank == 0) {
		char *fb = malloc(1 << 20);
		MPI_Buffer_attach(fb, 1 << 20);
		pthread_t th;
		pthread_create(&th, NULL, flusher, NULL);
		for (int i = 0; i < NB; i++)
			if (MPI_Bsend(&i, 1, MPI_INT, 1, 5, MPI_COMM_WORLD) != MPI_SUCCESS) {
				fails++;
				MPI_Send(&i, 1, MPI_INT, 1, 5, MPI_COMM_WORLD);
			}
		stop_flush = 1;
		pthread_join(th, NULL);
		void *addr;
		int size;
		MPI_Buffer_detach(&addr, &size);
		free(fb);
	} else {
		for (int i = 0, v; i < NB; i++) {
			MPI_Recv(&v, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			CHECK(v == i, "message %d: %d", i, v);
		}
	}
	CHECK(fails == 0, "%d of %d buffered sends refused beside a flush", fails, NB);
#endif
	report("a flush refuses no buffered send beside it");

#ifdef MPI_ABI_VERSION
	/* Two communicators with buffers freed at once by two threads. */
	cbig = calloc(CBIG, 1);
	MPI_Comm_dup(MPI_COMM_WORLD, &cb);
	MPI_Comm_dup(MPI_COMM_WORLD, &ca);
	int tok = 0;
	if (rank == 0) {
		int nb = CBIG + 4 * MPI_BSEND_OVERHEAD;
		char *bb = malloc(nb), *ab = malloc(1024);
		MPI_Comm_attach_buffer(cb, bb, nb);
		MPI_Comm_attach_buffer(ca, ab, 1024); /* listed before cb's */
		pthread_t th;
		pthread_create(&th, NULL, free_b, NULL);
		for (double t0 = MPI_Wtime(); MPI_Wtime() - t0 < 0.2;)
			; /* the thread waits in cb's drain meanwhile */
		CHECK(MPI_Comm_free(&ca) == MPI_SUCCESS, "free ca");
		MPI_Send(&tok, 1, MPI_INT, 1, 6, MPI_COMM_WORLD);
		pthread_join(th, NULL);
		MPI_Comm e;
		MPI_Comm_dup(MPI_COMM_WORLD, &e);
		char *eb = malloc(1024);
		MPI_Comm_attach_buffer(e, eb, 1024);
		char *wb = malloc(1024);
		MPI_Buffer_attach(wb, 1024);
		CHECK(MPI_Bsend(&tok, 1, MPI_INT, 1, 7, MPI_COMM_WORLD) == MPI_SUCCESS, "Bsend after the frees");
		void *addr;
		int size;
		MPI_Buffer_detach(&addr, &size);
		MPI_Comm_free(&e);
		free(bb), free(ab), free(eb), free(wb);
	} else {
		MPI_Comm_free(&ca);
		MPI_Recv(&tok, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Recv(cbig, CBIG, MPI_CHAR, 0, 4, cb, MPI_STATUS_IGNORE);
		MPI_Comm_free(&cb);
		MPI_Comm e;
		MPI_Comm_dup(MPI_COMM_WORLD, &e);
		MPI_Recv(&tok, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Comm_free(&e);
	}
	free(cbig);
#endif
	report("two threads free two communicators with buffers at once");

#ifdef MPI_ABI_VERSION
	/* A buffer larger than an int can say: the int form of detach
	 * refuses it (MPI_ERR_VALUE_TOO_LARGE) and leaves it attached; the
	 * _c form detaches it. The memory is never touched. */
	{
		MPI_Count huge = ((MPI_Count)1 << 31) + 64, got = 0;
		char *hb = malloc((size_t)huge);
		void *addr = NULL;
		int isize = -1;
		MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); /* where a call of no communicator raises */
		if (hb != NULL) {
			CHECK(MPI_Buffer_attach_c(hb, huge) == MPI_SUCCESS, "attach_c");
			int rc = MPI_Buffer_detach(&addr, &isize);
			CHECK(class_of(rc) == MPI_ERR_VALUE_TOO_LARGE && isize == -1, "int detach: class %d size %d",
			      class_of(rc), isize);
			CHECK(MPI_Buffer_detach_c(&addr, &got) == MPI_SUCCESS && addr == hb && got == huge,
			      "detach_c after the refusal: %lld", (long long)got);
			free(hb);
		}
	}
#endif
	report("a buffer too large for an int is detached by the _c form only");

	MPI_Finalize();
	return failures != 0;
}
