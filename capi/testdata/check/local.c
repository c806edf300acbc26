/*
 * local.c - labelled cases for shmcc --check: a C program's own loads and
 * stores against RMA. Each case is a function c_NAME run by both ranks
 * (./local NAME); a racy case marks the two lines of its race with a
 * race comment, which TestCLocalCheck expects the report to name; a
 * race-free case marks none and must get no report.
 */
#include <mpi.h>
#include <omp.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

static int rank;
static MPI_Win win;
static long *mine;  /* this rank's part of the shared window */
static long *part0; /* rank 0's part */
static long buf[8] = {1, 2, 3, 4, 5, 6, 7, 8};
static volatile size_t eight = 8; /* keeps memcpy a libc call */

/* Origin buffers: written while a Put is pending, under each epoch. */
static void c_fence_origin(void)
{
	MPI_Win_fence(0, win);
	if (rank == 1) {
		MPI_Put(buf, 2, MPI_LONG, 0, 0, 2, MPI_LONG, win); /* race */
		buf[1] = 20;                                       /* race */
	}
	MPI_Win_fence(0, win);
}

static void c_fence_origin_after(void)
{
	MPI_Win_fence(0, win);
	if (rank == 1)
		MPI_Put(buf, 2, MPI_LONG, 0, 0, 2, MPI_LONG, win);
	MPI_Win_fence(0, win);
	buf[1] = 20;
}

static void c_lock_origin(void)
{
	if (rank == 1) {
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
		MPI_Put(buf, 1, MPI_LONG, 0, 1, 1, MPI_LONG, win); /* race */
		buf[0] = 10;                                       /* race */
		MPI_Win_unlock(0, win);
	}
}

static void c_lock_origin_flush(void)
{
	if (rank == 1) {
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
		MPI_Put(buf, 1, MPI_LONG, 0, 1, 1, MPI_LONG, win);
		MPI_Win_flush(0, win);
		buf[0] = 10;
		MPI_Win_unlock(0, win);
	}
}

static void pscw(int after)
{
	MPI_Group world, peer;
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	int other = 1 - rank;
	MPI_Group_incl(world, 1, &other, &peer);
	if (rank == 0) {
		MPI_Win_post(peer, 0, win);
		MPI_Win_wait(win);
	} else {
		MPI_Win_start(peer, 0, win);
		if (after) {
			MPI_Put(buf, 1, MPI_LONG, 0, 2, 1, MPI_LONG, win);
			MPI_Win_complete(win);
			buf[0] = 11;
		} else {
			MPI_Put(buf, 1, MPI_LONG, 0, 2, 1, MPI_LONG, win); /* race */
			buf[0] = 11;                                       /* race */
			MPI_Win_complete(win);
		}
	}
	MPI_Group_free(&peer);
	MPI_Group_free(&world);
}

static void c_pscw_origin(void) { pscw(0); }
static void c_pscw_origin_complete(void) { pscw(1); }

/* A Get's origin buffer read before the flush; then after it. */
static void c_get_origin(void)
{
	MPI_Win_lock_all(0, win);
	if (rank == 1) {
		long got[2];
		MPI_Get(got, 2, MPI_LONG, 0, 2, 2, MPI_LONG, win); /* race */
		printf("%ld\n", got[0]);                           /* race */
		MPI_Win_flush(0, win);
	}
	MPI_Win_unlock_all(win);
}

static void c_get_origin_flush(void)
{
	MPI_Win_lock_all(0, win);
	if (rank == 1) {
		long got[2];
		MPI_Get(got, 2, MPI_LONG, 0, 2, 2, MPI_LONG, win);
		MPI_Win_flush(0, win);
		printf("%ld\n", got[0]);
	}
	MPI_Win_unlock_all(win);
}

/* Copies of no bytes into a pending Get's origin buffer (and out of it,
 * and into window memory a Put targets) before the flush: they touch
 * nothing. */
static volatile size_t zero;
static void c_review_zero_copy(void)
{
	MPI_Win_lock_all(0, win);
	if (rank == 1) {
		long got[4];
		MPI_Get(got, 4, MPI_LONG, 0, 2, 4, MPI_LONG, win);
		memset(&got[1], 0, zero);
		memcpy(&got[2], buf, zero);
		memmove(buf, &got[1], zero);
		MPI_Win_flush(0, win);
	}
	MPI_Win_unlock_all(win);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock_all(0, win);
	if (rank == 1)
		MPI_Put(buf, 4, MPI_LONG, 0, 0, 4, MPI_LONG, win);
	else
		memset(&mine[1], 0, zero);
	MPI_Win_unlock_all(win);
}

/* 400,000 mutexes made, locked, unlocked and destroyed: the checker
 * keeps a clock per lock it sees until the lock's destroy, so the
 * process grows by far less than the ~500 bytes a lock it kept before. */
static long rss_kib(void)
{
	long kib = -1;
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "VmRSS: %ld", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}
static void c_review_many_mutexes(void)
{
	enum { N = 400000 };
	pthread_mutex_t *m = malloc(N * sizeof *m);
	long before = rss_kib();
	for (int i = 0; i < N; i++) {
		pthread_mutex_init(&m[i], NULL);
		pthread_mutex_lock(&m[i]);
		pthread_mutex_unlock(&m[i]);
		pthread_mutex_destroy(&m[i]);
	}
	long grew = rss_kib() - before;
	free(m);
	if (grew > 48 << 10) {
		fprintf(stderr, "rank %d grew by %ld KiB over %d destroyed mutexes\n", rank, grew, N);
		MPI_Abort(MPI_COMM_WORLD, 3);
	}
}

/* An Accumulate's origin buffer overwritten by memcpy before the flush. */
static void c_acc_memcpy(void)
{
	MPI_Win_lock_all(0, win);
	if (rank == 1) {
		long other[1] = {99};
		MPI_Accumulate(buf, 1, MPI_LONG, 0, 3, 1, MPI_LONG, MPI_SUM, win); /* race */
		memcpy(buf, other, eight);                                         /* race */
	}
	MPI_Win_unlock_all(win);
}

/* A Fetch_and_op's result read before the flush. */
static void c_fetch_result(void)
{
	MPI_Win_lock_all(0, win);
	if (rank == 1) {
		long one = 1, old = 0;
		MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 4, MPI_SUM, win); /* race */
		if (old < 0)                                                /* race */
			abort();
		MPI_Win_flush(0, win);
	}
	MPI_Win_unlock_all(win);
}

/* Window memory: a local store against a remote Put in one fence epoch. */
static void c_fence_local(void)
{
	MPI_Win_fence(0, win);
	if (rank == 1)
		MPI_Put(buf, 1, MPI_LONG, 0, 6, 1, MPI_LONG, win); /* race */
	else
		mine[6] = 42; /* race */
	MPI_Win_fence(0, win);
}

static void c_fence_local_ordered(void)
{
	MPI_Win_fence(0, win);
	if (rank == 1)
		MPI_Put(buf, 1, MPI_LONG, 0, 6, 1, MPI_LONG, win);
	MPI_Win_fence(0, win);
	if (rank == 0)
		mine[6] += 1;
	MPI_Win_fence(0, win);
}

/* A Put flushed before a barrier, read after Win_sync: ordered. Without
 * the flush: not. */
static void lockall_barrier(int flush)
{
	MPI_Win_lock_all(0, win);
	if (rank == 1) {
		if (flush) {
			MPI_Put(buf, 1, MPI_LONG, 0, 7, 1, MPI_LONG, win);
			MPI_Win_flush(0, win);
		} else {
			MPI_Put(buf, 1, MPI_LONG, 0, 7, 1, MPI_LONG, win); /* race */
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		MPI_Win_sync(win);
		if (flush)
			printf("%ld\n", mine[7]);
		else
			printf("%ld\n", mine[7]); /* race */
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_unlock_all(win);
}

static void c_sync_barrier(void) { lockall_barrier(1); }
static void c_sync_noflush(void) { lockall_barrier(0); }

/* Load/store between ranks through the shared window. */
static void c_shared_stores(void)
{
	if (rank == 1)
		part0[8] = 1; /* race */
	else
		mine[8] = 2; /* race */
	MPI_Barrier(MPI_COMM_WORLD);
}

static void c_shared_barrier(void)
{
	MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
	if (rank == 1)
		part0[8] = 1;
	MPI_Win_sync(win);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_sync(win);
	if (rank == 0)
		printf("%ld\n", mine[8]);
	MPI_Win_unlock_all(win);
}

/* An OpenMP thread of rank 0 stores to window memory rank 1 puts to. */
static void c_omp_window(void)
{
	MPI_Win_fence(0, win);
	if (rank == 1) {
		MPI_Put(buf, 1, MPI_LONG, 0, 9, 1, MPI_LONG, win); /* race */
	} else {
#pragma omp parallel num_threads(2)
		if (omp_get_thread_num() == 1)
			mine[9] = 1; /* race */
	}
	MPI_Win_fence(0, win);
}

static volatile long sink;

/* Threads have clocks of their own: thread 0 of rank 0 gets into window
 * memory (its own part) what thread 1 reads, with nothing ordering the
 * two; then the same with a barrier between. */
static void c_omp_get_thread(void)
{
	if (rank == 0) {
#pragma omp parallel num_threads(2)
		{
			if (omp_get_thread_num() == 0) {
				MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
				MPI_Get(&mine[4], 1, MPI_LONG, 1, 0, 1, MPI_LONG, win); /* race */
				MPI_Win_unlock(1, win);
			} else {
				sink = mine[4]; /* race */
			}
		}
	}
}

static void c_omp_get_barrier(void)
{
	if (rank == 0) {
#pragma omp parallel num_threads(2)
		{
			if (omp_get_thread_num() == 0) {
				MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
				MPI_Get(&mine[4], 1, MPI_LONG, 1, 0, 1, MPI_LONG, win);
				MPI_Win_unlock(1, win);
			}
#pragma omp barrier
			if (omp_get_thread_num() == 1)
				sink = mine[4];
		}
	}
}

/* Thread 0 of rank 0 puts to rank 1 under a lock; thread 1 enters the
 * barrier, whether before or after the Put in time, nothing orders the
 * two: rank 1's load after the barrier is not ordered after the Put. With
 * the thread that put calling the barrier, it is. */
static void c_omp_put_other_barrier(void)
{
	if (rank == 0) {
#pragma omp parallel num_threads(2)
		{
			if (omp_get_thread_num() == 0) {
				MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
				MPI_Put(buf, 1, MPI_LONG, 1, 11, 1, MPI_LONG, win); /* race */
				MPI_Win_unlock(1, win);
			} else {
				MPI_Barrier(MPI_COMM_WORLD);
			}
		}
	} else {
		MPI_Barrier(MPI_COMM_WORLD);
		sink = mine[11]; /* race */
	}
}

static void c_omp_put_same_barrier(void)
{
	if (rank == 0) {
#pragma omp parallel num_threads(2)
		{
			if (omp_get_thread_num() == 0) {
				MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
				MPI_Put(buf, 1, MPI_LONG, 1, 11, 1, MPI_LONG, win);
				MPI_Win_unlock(1, win);
				MPI_Barrier(MPI_COMM_WORLD);
			}
		}
	} else {
		MPI_Barrier(MPI_COMM_WORLD);
		sink = mine[11];
	}
}

/* A critical section, a task waited for, an atomic flag: each orders a
 * thread's store before the other's load. */
static void c_omp_critical(void)
{
	if (rank == 0) {
		int done = 0;
#pragma omp parallel num_threads(2)
		for (;;) {
			int stop = 0;
#pragma omp critical
			{
				if (omp_get_thread_num() == 0 && !done) {
					mine[5] = 5;
					done = 1;
				} else if (omp_get_thread_num() == 1 && done) {
					sink = mine[5];
					stop = 1;
				}
				if (omp_get_thread_num() == 0 && done)
					stop = 1;
			}
			if (stop)
				break;
		}
	}
}

static void c_omp_task_wait(void)
{
	if (rank == 0) {
#pragma omp parallel num_threads(2)
#pragma omp single
		{
#pragma omp task
			mine[6] = 6;
#pragma omp taskwait
			sink = mine[6];
		}
	}
}

static void c_omp_atomic_flag(void)
{
	if (rank == 0) {
		atomic_int flag = 0;
#pragma omp parallel num_threads(2)
		{
			if (omp_get_thread_num() == 0) {
				mine[7] = 7;
				atomic_store(&flag, 1);
			} else {
				while (!atomic_load(&flag))
					;
				sink = mine[7];
			}
		}
	}
}

/* Two sections of one construct are unordered whichever threads run
 * them (one thread may run both); two constructs are ordered by the
 * barrier at the first one's end. */
static void c_omp_sections(void)
{
	if (rank == 0) {
#pragma omp parallel sections num_threads(2)
		{
#pragma omp section
			mine[2] = 2; /* race */
#pragma omp section
			sink = mine[2]; /* race */
		}
	}
}

static void c_omp_sections_barrier(void)
{
	if (rank == 0) {
#pragma omp parallel num_threads(2)
		{
#pragma omp sections
			{
#pragma omp section
				mine[2] = 2;
			}
#pragma omp sections
			{
#pragma omp section
				sink = mine[2];
			}
		}
	}
}

/* More orders between threads, each race-free: nested regions and a
 * barrier; tasks ordered by depend; omp locks; a condition variable; a
 * semaphore. */
static void c_omp_nested(void)
{
	if (rank == 0) {
#pragma omp parallel num_threads(2)
		{
			int outer = omp_get_thread_num();
#pragma omp parallel num_threads(2)
			if (omp_get_thread_num() == 0)
				mine[12 + outer] = outer;
#pragma omp barrier
			if (outer == 1)
				sink = mine[12] + mine[13];
		}
	}
}

static void c_omp_task_depend(void)
{
	if (rank == 0) {
#pragma omp parallel num_threads(2)
#pragma omp single
		{
#pragma omp task depend(out : mine[13])
			mine[13] = 13;
#pragma omp task depend(in : mine[13])
			sink = mine[13];
		}
	}
}

static void c_omp_lock(void)
{
	if (rank == 0) {
		omp_lock_t l;
		omp_init_lock(&l);
#pragma omp parallel num_threads(2)
		for (int i = 0; i < 100; i++) {
			omp_set_lock(&l);
			mine[14]++;
			omp_unset_lock(&l);
		}
		omp_destroy_lock(&l);
	}
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int ready;
static sem_t sem;

static void *consume(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	while (!ready)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	sink = mine[15];
	sem_wait(&sem);
	sink = mine[3];
	return NULL;
}

static void c_pthread_cond_sem(void)
{
	if (rank != 0)
		return;
	pthread_t t;
	sem_init(&sem, 0, 0);
	pthread_create(&t, NULL, consume, NULL);
	mine[15] = 15;
	pthread_mutex_lock(&mu);
	ready = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	mine[3] = 3;
	sem_post(&sem);
	pthread_join(t, NULL);
	sem_destroy(&sem);
}

/* Race-free programs a review of the thread model found reported (each
 * a case now): an atomic flag spun on inside and after a section; two
 * threads' accumulates ordered by a mutex; a message delivered by another
 * thread's receive; C11 threads; a timed read lock; taskwait depend; two
 * threads' increments under a mutex while a third drains runs; a section
 * inside a section; another thread's flush_all racing a call it does not
 * know of. */
static atomic_int flag1;

static void *flag_writer(void *a)
{
	(void)a;
	usleep(50000);
	mine[1] = 1;
	atomic_store(&flag1, 1);
	return NULL;
}

static void c_review_sec_atomic(void)
{
	if (rank != 0)
		return;
	pthread_t t;
	pthread_create(&t, NULL, flag_writer, NULL);
#pragma omp parallel num_threads(1)
	{
#pragma omp sections nowait
		{
#pragma omp section
			while (!atomic_load(&flag1))
				;
		}
		while (!atomic_load(&flag1))
			;
		sink = mine[1];
	}
	pthread_join(t, NULL);
}

static void *acc_replace(void *a)
{
	(void)a;
	long v = 5;
	pthread_mutex_lock(&mu);
	MPI_Accumulate(&v, 1, MPI_LONG, 1, 2, 1, MPI_LONG, MPI_REPLACE, win);
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void c_review_acc_threads(void)
{
	MPI_Win_lock_all(0, win);
	if (rank == 0) {
		long v = 1;
		pthread_mutex_lock(&mu);
		MPI_Accumulate(&v, 1, MPI_LONG, 1, 2, 1, MPI_LONG, MPI_SUM, win);
		pthread_mutex_unlock(&mu);
		pthread_t t;
		pthread_create(&t, NULL, acc_replace, NULL);
		pthread_join(t, NULL);
	}
	MPI_Win_unlock_all(win);
}

static void *recv_tag2(void *a)
{
	(void)a;
	long x;
	MPI_Recv(&x, 1, MPI_LONG, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	return NULL;
}

static void c_review_recv_other(void)
{
	long x = 0;
	if (rank == 0) {
		MPI_Request r;
		MPI_Irecv(&x, 1, MPI_LONG, 1, 1, MPI_COMM_WORLD, &r);
		pthread_t t;
		pthread_create(&t, NULL, recv_tag2, NULL);
		MPI_Barrier(MPI_COMM_WORLD);
		usleep(200000);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
		sink = mine[4];
		pthread_join(t, NULL);
	} else {
		MPI_Barrier(MPI_COMM_WORLD);
		part0[4] = 44;
		MPI_Send(&x, 1, MPI_LONG, 0, 1, MPI_COMM_WORLD);
		usleep(400000);
		MPI_Send(&x, 1, MPI_LONG, 0, 2, MPI_COMM_WORLD);
	}
}

static int c11_store(void *a)
{
	(void)a;
	mine[5] = 5;
	return 0;
}

static void c_review_c11(void)
{
	if (rank != 0)
		return;
	thrd_t t;
	thrd_create(&t, c11_store, NULL);
	thrd_join(t, NULL);
	sink = mine[5];
}

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;

static void *rw_writer(void *a)
{
	(void)a;
	pthread_rwlock_wrlock(&rw);
	mine[6] = 6;
	pthread_rwlock_unlock(&rw);
	return NULL;
}

static void c_review_rw_timed(void)
{
	if (rank != 0)
		return;
	pthread_t t;
	pthread_create(&t, NULL, rw_writer, NULL);
	usleep(100000);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 5;
	pthread_rwlock_timedrdlock(&rw, &ts);
	sink = mine[6];
	pthread_rwlock_unlock(&rw);
	pthread_join(t, NULL);
}

static void c_review_taskwait_dep(void)
{
	if (rank != 0)
		return;
#pragma omp parallel num_threads(2)
#pragma omp single
	{
#pragma omp task depend(out : mine[10])
		{
			usleep(50000);
			mine[10] = 10;
		}
#pragma omp taskwait depend(in : mine[10])
		sink = mine[10];
	}
}

static void c_review_taskloop(void)
{
	if (rank != 0)
		return;
#pragma omp parallel num_threads(2)
#pragma omp single
	{
		mine[7] = 7;
#pragma omp taskloop num_tasks(4)
		for (int i = 0; i < 4; i++) {
			usleep(10000);
			sink = mine[7];
			mine[8 + i] = i;
		}
		sink = mine[8] + mine[11];
	}
}

static pthread_mutex_t L = PTHREAD_MUTEX_INITIALIZER, M2 = PTHREAD_MUTEX_INITIALIZER;
static atomic_int stop;

static void *drainer(void *a)
{
	(void)a;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		pthread_mutex_lock(&M2);
		pthread_mutex_unlock(&M2);
	}
	return NULL;
}

static void *incr(void *a)
{
	(void)a;
	for (int i = 0; i < 3000; i++) {
		pthread_mutex_lock(&L);
		mine[12]++;
		pthread_mutex_unlock(&L);
	}
	return NULL;
}

static void c_review_drain(void)
{
	if (rank != 0)
		return;
	pthread_t d, a, b;
	pthread_create(&d, NULL, drainer, NULL);
	pthread_create(&a, NULL, incr, NULL);
	pthread_create(&b, NULL, incr, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	atomic_store(&stop, 1);
	pthread_join(d, NULL);
}

static void c_review_nested_sections(void)
{
	if (rank != 0)
		return;
#pragma omp parallel sections num_threads(1)
	{
#pragma omp section
		{
			mine[0] = 1;
#pragma omp parallel sections num_threads(1)
			{
#pragma omp section
				sink = mine[0];
			}
		}
	}
}

static void *flush_all_later(void *a)
{
	(void)a;
	usleep(50000);
	MPI_Win_flush_all(win);
	return NULL;
}

static void c_review_flush_other(void)
{
	MPI_Win_lock_all(0, win);
	if (rank == 0) {
		pthread_t t;
		pthread_create(&t, NULL, flush_all_later, NULL);
		mine[2] = 1;
		MPI_Get(&mine[2], 1, MPI_LONG, 1, 0, 1, MPI_LONG, win);
		usleep(150000);
		MPI_Win_flush(1, win);
		sink = mine[2];
		pthread_join(t, NULL);
	}
	MPI_Win_unlock_all(win);
}

/* MPI_THREAD_MULTIPLE: rank 0's main thread stores to its part and
 * posts to rank 1 while another thread of rank 0 starts, puts to rank 1
 * and completes (after the Post: a flag the checker does not see, as a
 * sleep would not be). Rank 1 starts after that Complete (its Wait) and
 * puts to the word the store wrote: the Post orders the store before
 * rank 1's Start, whichever of rank 0's threads released last. */
static volatile int posted;
static MPI_Group pscw_peer;

static void *pscw_access(void *a)
{
	(void)a;
	while (!posted)
		usleep(1000);
	MPI_Win_start(pscw_peer, 0, win);
	MPI_Put(buf, 1, MPI_LONG, 1, 9, 1, MPI_LONG, win);
	MPI_Win_complete(win);
	return NULL;
}

static void c_pscw_threads(void)
{
	MPI_Group world;
	int other = 1 - rank;
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_incl(world, 1, &other, &pscw_peer);
	MPI_Group_free(&world);
	if (rank == 0) {
		pthread_t t;
		pthread_create(&t, NULL, pscw_access, NULL);
		mine[9] = 9;
		MPI_Win_post(pscw_peer, 0, win);
		posted = 1;
		MPI_Win_wait(win);
		pthread_join(t, NULL);
	} else {
		MPI_Win_post(pscw_peer, 0, win);
		MPI_Win_wait(win);
		MPI_Win_start(pscw_peer, 0, win);
		MPI_Put(buf, 1, MPI_LONG, 0, 9, 1, MPI_LONG, win);
		MPI_Win_complete(win);
	}
	MPI_Group_free(&pscw_peer);
}

/* POSIX threads: created after the main thread's store and joined before
 * its next, a thread's store is ordered; two threads' stores to one word
 * without a lock are not, with a mutex they are. */
static void *store_8(void *locked);

static void pthreads(int locked)
{
	if (rank != 0)
		return;
	pthread_t t;
	mine[8] = 1;
	pthread_create(&t, NULL, store_8, locked ? &mu : NULL);
	if (locked)
		pthread_mutex_lock(&mu);
	mine[8] = 3; /* race */
	if (locked)
		pthread_mutex_unlock(&mu);
	pthread_join(t, NULL);
	mine[8] = 4;
}

/* (After pthreads, whose racy variant's marks are its own.) */
static void *store_8(void *locked)
{
	if (locked)
		pthread_mutex_lock(&mu);
	mine[8] = 2; /* race */
	if (locked)
		pthread_mutex_unlock(&mu);
	return NULL;
}

static void c_pthread_store(void) { pthreads(0); }
static void c_pthread_mutex(void) { pthreads(1); }

/* OpenMP threads of rank 1 write the origin buffer of a pending Put. */
static void c_omp_origin(void)
{
	MPI_Win_fence(0, win);
	if (rank == 1) {
		MPI_Put(buf, 4, MPI_LONG, 0, 10, 4, MPI_LONG, win); /* race */
#pragma omp parallel
		buf[omp_get_thread_num() % 4] = 0; /* race */
	}
	MPI_Win_fence(0, win);
}

/* OpenMP threads read what the fence made visible: ordered. */
static void c_omp_ordered(void)
{
	MPI_Win_fence(0, win);
	if (rank == 1)
		MPI_Put(buf, 4, MPI_LONG, 0, 10, 4, MPI_LONG, win);
	MPI_Win_fence(0, win);
	long sum = 0;
	if (rank == 0) {
#pragma omp parallel for reduction(+ : sum)
		for (int i = 10; i < 14; i++)
			sum += mine[i];
		printf("%ld\n", sum);
	}
	MPI_Win_fence(0, win);
}

/* A loop of stores over rank 0's part (gathered into one run) against a
 * Put to one of its words; then the loop and the Put in separate epochs. */
static void c_loop_local(void)
{
	MPI_Win_fence(0, win);
	if (rank == 1) {
		MPI_Put(buf, 1, MPI_LONG, 0, 12, 1, MPI_LONG, win); /* race */
	} else {
		for (int i = 0; i < 16; i++)
			mine[i] = i; /* race */
	}
	MPI_Win_fence(0, win);
}

static void c_loop_ordered(void)
{
	MPI_Win_fence(0, win);
	if (rank == 0)
		for (int i = 0; i < 16; i++)
			mine[i] = i;
	MPI_Win_fence(0, win);
	if (rank == 1)
		MPI_Put(buf, 1, MPI_LONG, 0, 12, 1, MPI_LONG, win);
	MPI_Win_fence(0, win);
}

/* MPI_Rput's origin buffer: written before the request completes, then
 * after MPI_Wait (the buffer is the program's again, no flush needed). */
static void c_rput_origin(void)
{
	MPI_Win_lock_all(0, win);
	if (rank == 1) {
		MPI_Request r;
		MPI_Rput(buf, 1, MPI_LONG, 0, 13, 1, MPI_LONG, win, &r); /* race */
		buf[0] = 30;                                             /* race */
		MPI_Wait(&r, MPI_STATUS_IGNORE);
	}
	MPI_Win_unlock_all(win);
}

static void c_rput_wait(void)
{
	MPI_Win_lock_all(0, win);
	if (rank == 1) {
		MPI_Request r;
		MPI_Rput(buf, 1, MPI_LONG, 0, 13, 1, MPI_LONG, win, &r);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
		buf[0] = 30;
	}
	MPI_Win_unlock_all(win);
}

/* The atomic entry points perform the atomics: OpenMP threads add to
 * counters of every size (16 bytes too) with fetch_add, compare-exchange
 * loops and exchange, and the totals must come out exact. No report: the
 * checker does not check atomics. */
static _Atomic int8_t a8;
static _Atomic int16_t a16;
static _Atomic int32_t a32;
static _Atomic int64_t a64;
static _Atomic __int128 a128;
static _Atomic int64_t xchg;

static void c_atomics_exact(void)
{
	enum { ITERS = 2000 };
	int threads = 0;
#pragma omp parallel
	{
#pragma omp single
		threads = omp_get_num_threads();
		for (int i = 0; i < ITERS; i++) {
			atomic_fetch_add(&a8, 1);
			atomic_fetch_add(&a16, 1);
			atomic_fetch_add(&a32, 1);
			int64_t e = atomic_load(&a64);
			while (!atomic_compare_exchange_weak(&a64, &e, e + 1))
				;
			atomic_fetch_add(&a128, (__int128)1 << 64);
			atomic_fetch_sub(&a128, 1);
			(void)atomic_exchange(&xchg, i);
		}
	}
	long n = (long)threads * ITERS;
	__int128 want128 = ((__int128)n << 64) - n;
	if (atomic_load(&a8) != (int8_t)n || atomic_load(&a16) != (int16_t)n || atomic_load(&a32) != (int32_t)n ||
	    atomic_load(&a64) != n || atomic_load(&a128) != want128 || atomic_load(&xchg) != ITERS - 1) {
		fprintf(stderr, "atomics: wrong totals after %ld additions\n", n);
		MPI_Abort(MPI_COMM_WORLD, 3);
	}
}

/* More pending buffers than the table holds (4096 ranges): the job says
 * some accesses go unchecked, and nothing else changes. */
static long many[5000];

static void c_table_full(void)
{
	MPI_Win_lock_all(0, win);
	if (rank == 1) {
		for (int i = 0; i < 5000; i++) {
			many[i] = i;
			MPI_Accumulate(&many[i], 1, MPI_LONG, 0, i % 16, 1, MPI_LONG, MPI_SUM, win);
		}
		MPI_Win_flush(0, win);
		many[0] = -1;
	}
	MPI_Win_unlock_all(win);
}

/* A window left unfreed at MPI_Finalize, its memory touched after it:
 * the checker has gone with the runtime, and nothing breaks. */
static void c_unfreed(void)
{
	MPI_Win w2;
	long *m2;
	MPI_Win_allocate_shared(8 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &m2, &w2);
	m2[0] = rank;
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_free(&win);
	MPI_Finalize();
	m2[1] = 2; /* after MPI_Finalize: not checked, and no crash */
	exit(0);
}

/* Get's and Accumulate's origin buffers under each kind of epoch: rank 1
 * is the origin, rank 0 the target (ep_open/ep_close open and close the
 * epoch on both). */
enum { FENCE, LOCK, PSCW };
static MPI_Group peer_group;

static void ep_open(int kind)
{
	MPI_Group world;
	int other = 1 - rank;
	switch (kind) {
	case FENCE:
		MPI_Win_fence(0, win);
		break;
	case LOCK:
		if (rank == 1)
			MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
		break;
	case PSCW:
		MPI_Comm_group(MPI_COMM_WORLD, &world);
		MPI_Group_incl(world, 1, &other, &peer_group);
		MPI_Group_free(&world);
		if (rank == 0)
			MPI_Win_post(peer_group, 0, win);
		else
			MPI_Win_start(peer_group, 0, win);
		break;
	}
}

static void ep_close(int kind)
{
	switch (kind) {
	case FENCE:
		MPI_Win_fence(0, win);
		break;
	case LOCK:
		if (rank == 1)
			MPI_Win_unlock(0, win);
		break;
	case PSCW:
		if (rank == 0)
			MPI_Win_wait(win);
		else
			MPI_Win_complete(win);
		MPI_Group_free(&peer_group);
		break;
	}
}

static void c_get_fence(void)
{
	long got[1] = {0};
	ep_open(FENCE);
	if (rank == 1) {
		MPI_Get(got, 1, MPI_LONG, 0, 14, 1, MPI_LONG, win); /* race */
		got[0] = 5;                                         /* race */
	}
	ep_close(FENCE);
}

static void c_get_fence_after(void)
{
	long got[1] = {0};
	ep_open(FENCE);
	if (rank == 1)
		MPI_Get(got, 1, MPI_LONG, 0, 14, 1, MPI_LONG, win);
	ep_close(FENCE);
	printf("%ld\n", got[0]);
}

static void c_get_lock(void)
{
	long got[1] = {0};
	ep_open(LOCK);
	if (rank == 1) {
		MPI_Get(got, 1, MPI_LONG, 0, 14, 1, MPI_LONG, win); /* race */
		printf("%ld\n", got[0]);                            /* race */
	}
	ep_close(LOCK);
}

static void c_get_pscw(void)
{
	long got[1] = {0};
	ep_open(PSCW);
	if (rank == 1) {
		MPI_Get(got, 1, MPI_LONG, 0, 14, 1, MPI_LONG, win); /* race */
		printf("%ld\n", got[0]);                            /* race */
	}
	ep_close(PSCW);
}

static void c_acc_fence(void)
{
	ep_open(FENCE);
	if (rank == 1) {
		MPI_Accumulate(buf, 1, MPI_LONG, 0, 15, 1, MPI_LONG, MPI_SUM, win); /* race */
		buf[0]++;                                                           /* race */
	}
	ep_close(FENCE);
}

static void c_acc_lock(void)
{
	ep_open(LOCK);
	if (rank == 1) {
		MPI_Accumulate(buf, 1, MPI_LONG, 0, 15, 1, MPI_LONG, MPI_SUM, win); /* race */
		buf[0]++;                                                           /* race */
	}
	ep_close(LOCK);
}

static void c_acc_pscw(void)
{
	ep_open(PSCW);
	if (rank == 1) {
		MPI_Accumulate(buf, 1, MPI_LONG, 0, 15, 1, MPI_LONG, MPI_SUM, win); /* race */
		buf[0]++;                                                           /* race */
	}
	ep_close(PSCW);
}

static void c_acc_pscw_after(void)
{
	ep_open(PSCW);
	if (rank == 1)
		MPI_Accumulate(buf, 1, MPI_LONG, 0, 15, 1, MPI_LONG, MPI_SUM, win);
	ep_close(PSCW);
	buf[0]++;
}

/* Two Gets into one buffer before the flush: the second writes what the
 * first still owns. Two Puts from one buffer only read it: fine. */
static void c_get_get(void)
{
	MPI_Win_lock_all(0, win);
	if (rank == 1) {
		long got[1];
		MPI_Get(got, 1, MPI_LONG, 0, 2, 1, MPI_LONG, win); /* race */
		MPI_Get(got, 1, MPI_LONG, 0, 3, 1, MPI_LONG, win); /* race */
		MPI_Win_flush(0, win);
	}
	MPI_Win_unlock_all(win);
}

static void c_put_put_buffer(void)
{
	MPI_Win_lock_all(0, win);
	if (rank == 1) {
		MPI_Put(buf, 1, MPI_LONG, 0, 2, 1, MPI_LONG, win);
		MPI_Put(buf, 1, MPI_LONG, 0, 3, 1, MPI_LONG, win);
		MPI_Win_flush(0, win);
	}
	MPI_Win_unlock_all(win);
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{"fence_origin", c_fence_origin},
	{"fence_origin_after", c_fence_origin_after},
	{"lock_origin", c_lock_origin},
	{"lock_origin_flush", c_lock_origin_flush},
	{"pscw_origin", c_pscw_origin},
	{"pscw_origin_complete", c_pscw_origin_complete},
	{"get_origin", c_get_origin},
	{"get_origin_flush", c_get_origin_flush},
	{"acc_memcpy", c_acc_memcpy},
	{"fetch_result", c_fetch_result},
	{"fence_local", c_fence_local},
	{"fence_local_ordered", c_fence_local_ordered},
	{"sync_barrier", c_sync_barrier},
	{"sync_noflush", c_sync_noflush},
	{"shared_stores", c_shared_stores},
	{"shared_barrier", c_shared_barrier},
	{"omp_window", c_omp_window},
	{"omp_origin", c_omp_origin},
	{"omp_ordered", c_omp_ordered},
	{"omp_get_thread", c_omp_get_thread},
	{"omp_get_barrier", c_omp_get_barrier},
	{"omp_put_other_barrier", c_omp_put_other_barrier},
	{"omp_put_same_barrier", c_omp_put_same_barrier},
	{"omp_critical", c_omp_critical},
	{"omp_task_wait", c_omp_task_wait},
	{"omp_atomic_flag", c_omp_atomic_flag},
	{"omp_sections", c_omp_sections},
	{"omp_sections_barrier", c_omp_sections_barrier},
	{"omp_nested", c_omp_nested},
	{"omp_task_depend", c_omp_task_depend},
	{"omp_lock", c_omp_lock},
	{"pthread_cond_sem", c_pthread_cond_sem},
	{"review_sec_atomic", c_review_sec_atomic},
	{"review_acc_threads", c_review_acc_threads},
	{"review_recv_other", c_review_recv_other},
	{"review_c11", c_review_c11},
	{"review_rw_timed", c_review_rw_timed},
	{"review_taskwait_dep", c_review_taskwait_dep},
	{"review_taskloop", c_review_taskloop},
	{"review_drain", c_review_drain},
	{"review_zero_copy", c_review_zero_copy},
	{"review_many_mutexes", c_review_many_mutexes},
	{"review_nested_sections", c_review_nested_sections},
	{"review_flush_other", c_review_flush_other},
	{"pscw_threads", c_pscw_threads},
	{"pthread_store", c_pthread_store},
	{"pthread_mutex", c_pthread_mutex},
	{"loop_local", c_loop_local},
	{"loop_ordered", c_loop_ordered},
	{"rput_origin", c_rput_origin},
	{"rput_wait", c_rput_wait},
	{"atomics_exact", c_atomics_exact},
	{"table_full", c_table_full},
	{"unfreed", c_unfreed},
	{"get_fence", c_get_fence},
	{"get_fence_after", c_get_fence_after},
	{"get_lock", c_get_lock},
	{"get_pscw", c_get_pscw},
	{"acc_fence", c_acc_fence},
	{"acc_lock", c_acc_lock},
	{"acc_pscw", c_acc_pscw},
	{"acc_pscw_after", c_acc_pscw_after},
	{"get_get", c_get_get},
	{"put_put_buffer", c_put_put_buffer},
};

int main(int argc, char **argv)
{
	int provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Win_allocate_shared(16 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win);
	MPI_Aint size;
	int unit;
	MPI_Win_shared_query(win, 0, &size, &unit, &part0);
	MPI_Barrier(MPI_COMM_WORLD);
	int found = 0;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if (argc > 1 && strcmp(argv[1], cases[i].name) == 0) {
			cases[i].fn();
			found = 1;
		}
	}
	if (!found) {
		fprintf(stderr, "local: no case %s\n", argc > 1 ? argv[1] : "(none)");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_free(&win);
	MPI_Finalize();
	return 0;
}
