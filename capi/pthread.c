/* shmcc --check: what orders a C program's POSIX threads, and its atomics,
 * told to the checker (see omp.c for OpenMP's constructs and how).
 *
 *   pthread_create (thrd_create): the creator's past before the new
 *                   thread's start; pthread_join (thrd_join): the thread's
 *                   end (its return, or pthread_exit/thrd_exit) before what
 *                   follows the join.
 *   mutexes, read-write locks, spin locks, C11 mtx_t: release at the
 *                   unlock, acquire at the lock (or a successful try, timed
 *                   or clock-selecting form).
 *   condition variables: a wait releases and acquires its mutex, and
 *                   acquires what signal and broadcast released.
 *   semaphores:     sem_post releases, a successful wait acquires.
 *   barriers:       every arriving thread's past before every leaving
 *                   thread's future.
 *   *_destroy:      the object's clock goes (a new object at the address
 *                   starts with none).
 *   atomics (tsanhooks.c, shmrun_chk_atomic_*): every atomic store or
 *                   read-modify-write releases, every atomic load or
 *                   read-modify-write acquires, through one object of the
 *                   process: all atomics are one synchronization (more
 *                   order than the program's per-location one, never
 *                   less). A thread goes to the checker only when it has
 *                   something new to release (a window access or a
 *                   checker call since its last release) or when another
 *                   thread released since it last acquired.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdlib.h>
#include <threads.h>
#include <time.h>

#include "capi.h"
#include "_cgo_export.h"

#define TLS __thread __attribute__((tls_model("initial-exec")))

enum { REL = 0, ACQ = 1, DROP = 2 };

static inline int on(void) { return __atomic_load_n(&shmrun_chk_omp_on, __ATOMIC_RELAXED); }
static inline void sync_obj(int op, const volatile void *key) { shmChkOmp(op, (uintptr_t)key); }

#define REAL(name, type)                                                                        \
	static __typeof__(type) real;                                                          \
	if (!__atomic_load_n(&real, __ATOMIC_ACQUIRE))                                         \
		__atomic_store_n(&real, (type)shmrun_chk_real(#name), __ATOMIC_RELEASE)

/* A thread's end: its pthread_t above any address. */
static inline uintptr_t end_key(pthread_t t) { return (uintptr_t)1 << 62 | (uintptr_t)t; }

typedef struct {
	void *(*fn)(void *);
	void *arg;
	uintptr_t key; /* the creation */
} start_blk;

static void *thread_body(void *p)
{
	start_blk b = *(start_blk *)p;
	free(p);
	sync_obj(ACQ, (void *)b.key);
	sync_obj(DROP, (void *)b.key);
	void *r = b.fn(b.arg);
	sync_obj(REL, (void *)end_key(pthread_self()));
	return r;
}

/* Every thread starts through thread_body, even one created before
 * MPI_Init (the checker off yet): its end, after MPI_Init, orders what
 * its join precedes. */
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	REAL(pthread_create, int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *));
	start_blk *b = malloc(sizeof *b);
	if (!b)
		return real(t, attr, fn, arg);
	b->fn = fn;
	b->arg = arg;
	b->key = shmrun_chk_new_key();
	sync_obj(REL, (void *)b->key);
	int r = real(t, attr, thread_body, b);
	if (r != 0) {
		sync_obj(DROP, (void *)b->key);
		free(b);
	}
	return r;
}

void __wrap_pthread_exit(void *ret)
{
	REAL(pthread_exit, void (*)(void *));
	sync_obj(REL, (void *)end_key(pthread_self()));
	real(ret);
	__builtin_unreachable();
}

int __wrap_pthread_join(pthread_t t, void **ret)
{
	REAL(pthread_join, int (*)(pthread_t, void **));
	int r = real(t, ret);
	if (r == 0 && on()) {
		sync_obj(ACQ, (void *)end_key(t));
		sync_obj(DROP, (void *)end_key(t));
	}
	return r;
}

/* Acquire after a call that succeeded (returned 0), release before one. */
#define ACQUIRING(name, T)                                                                       \
	int __wrap_##name(T *x)                                                                  \
	{                                                                                        \
		REAL(name, int (*)(T *));                                                        \
		int r = real(x);                                                                 \
		if (r == 0 && on())                                                              \
			sync_obj(ACQ, x);                                                        \
		return r;                                                                        \
	}
#define RELEASING(name, T)                                                                       \
	int __wrap_##name(T *x)                                                                  \
	{                                                                                        \
		REAL(name, int (*)(T *));                                                        \
		if (on())                                                                        \
			sync_obj(REL, x);                                                        \
		return real(x);                                                                  \
	}
ACQUIRING(pthread_mutex_lock, pthread_mutex_t)
ACQUIRING(pthread_mutex_trylock, pthread_mutex_t)
RELEASING(pthread_mutex_unlock, pthread_mutex_t)
ACQUIRING(pthread_rwlock_rdlock, pthread_rwlock_t)
ACQUIRING(pthread_rwlock_wrlock, pthread_rwlock_t)
ACQUIRING(pthread_rwlock_tryrdlock, pthread_rwlock_t)
ACQUIRING(pthread_rwlock_trywrlock, pthread_rwlock_t)
RELEASING(pthread_rwlock_unlock, pthread_rwlock_t)
ACQUIRING(pthread_spin_lock, pthread_spinlock_t)
ACQUIRING(pthread_spin_trylock, pthread_spinlock_t)
RELEASING(pthread_spin_unlock, pthread_spinlock_t)
ACQUIRING(sem_wait, sem_t)
ACQUIRING(sem_trywait, sem_t)
RELEASING(sem_post, sem_t)
RELEASING(pthread_cond_signal, pthread_cond_t)
RELEASING(pthread_cond_broadcast, pthread_cond_t)

/* An object's end: the clock the checker keeps for it goes (a program
 * that makes and destroys locks by the million would otherwise grow the
 * checker's table without bound); an object made again at the address
 * starts with none, as a new object. */
#define DESTROYING(name, T)                                                                      \
	int __wrap_##name(T *x)                                                                  \
	{                                                                                        \
		REAL(name, int (*)(T *));                                                        \
		int r = real(x);                                                                 \
		if (r == 0 && on())                                                              \
			sync_obj(DROP, x);                                                       \
		return r;                                                                        \
	}
DESTROYING(pthread_mutex_destroy, pthread_mutex_t)
DESTROYING(pthread_rwlock_destroy, pthread_rwlock_t)
DESTROYING(pthread_spin_destroy, pthread_spinlock_t)
DESTROYING(pthread_cond_destroy, pthread_cond_t)
DESTROYING(pthread_barrier_destroy, pthread_barrier_t)
DESTROYING(sem_destroy, sem_t)

/* The timed and clock-selecting forms: acquire when they succeed. */
#define ACQUIRING_TIMED(name, T)                                                                 \
	int __wrap_##name(T *x, const struct timespec *ts)                                       \
	{                                                                                        \
		REAL(name, int (*)(T *, const struct timespec *));                               \
		int r = real(x, ts);                                                             \
		if (r == 0 && on())                                                              \
			sync_obj(ACQ, x);                                                        \
		return r;                                                                        \
	}
#define ACQUIRING_CLOCK(name, T)                                                                 \
	int __wrap_##name(T *x, clockid_t c, const struct timespec *ts)                          \
	{                                                                                        \
		REAL(name, int (*)(T *, clockid_t, const struct timespec *));                    \
		int r = real(x, c, ts);                                                          \
		if (r == 0 && on())                                                              \
			sync_obj(ACQ, x);                                                        \
		return r;                                                                        \
	}
ACQUIRING_TIMED(pthread_mutex_timedlock, pthread_mutex_t)
ACQUIRING_TIMED(pthread_rwlock_timedrdlock, pthread_rwlock_t)
ACQUIRING_TIMED(pthread_rwlock_timedwrlock, pthread_rwlock_t)
ACQUIRING_TIMED(sem_timedwait, sem_t)
ACQUIRING_CLOCK(pthread_mutex_clocklock, pthread_mutex_t)
ACQUIRING_CLOCK(pthread_rwlock_clockrdlock, pthread_rwlock_t)
ACQUIRING_CLOCK(pthread_rwlock_clockwrlock, pthread_rwlock_t)
ACQUIRING_CLOCK(sem_clockwait, sem_t)

/* A condition wait releases its mutex, and acquires it and what the
 * condition's signals released; call is the real wait. */
#define COND_WAIT(c, m, call)                                                                    \
	do {                                                                                     \
		if (!on())                                                                       \
			return call;                                                             \
		sync_obj(REL, m);                                                                \
		int r_ = call;                                                                   \
		sync_obj(ACQ, m);                                                                \
		sync_obj(ACQ, c);                                                                \
		return r_;                                                                       \
	} while (0)

int __wrap_pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	REAL(pthread_cond_wait, int (*)(pthread_cond_t *, pthread_mutex_t *));
	COND_WAIT(c, m, real(c, m));
}

int __wrap_pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *ts)
{
	REAL(pthread_cond_timedwait, int (*)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *));
	COND_WAIT(c, m, real(c, m, ts));
}

int __wrap_pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk, const struct timespec *ts)
{
	REAL(pthread_cond_clockwait, int (*)(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *));
	COND_WAIT(c, m, real(c, m, clk, ts));
}

int __wrap_pthread_barrier_wait(pthread_barrier_t *b)
{
	REAL(pthread_barrier_wait, int (*)(pthread_barrier_t *));
	if (!on())
		return real(b);
	sync_obj(REL, b);
	int r = real(b);
	sync_obj(ACQ, b);
	return r;
}

/* C11 threads (glibc implements them without the pthread entry points
 * above): the same orders. */
typedef struct {
	int (*fn)(void *);
	void *arg;
	uintptr_t key;
} c11_blk;

static int c11_body(void *p)
{
	c11_blk b = *(c11_blk *)p;
	free(p);
	sync_obj(ACQ, (void *)b.key);
	sync_obj(DROP, (void *)b.key);
	int r = b.fn(b.arg);
	sync_obj(REL, (void *)end_key((pthread_t)thrd_current()));
	return r;
}

int __wrap_thrd_create(thrd_t *t, int (*fn)(void *), void *arg)
{
	REAL(thrd_create, int (*)(thrd_t *, int (*)(void *), void *));
	c11_blk *b = malloc(sizeof *b);
	if (!b)
		return real(t, fn, arg);
	b->fn = fn;
	b->arg = arg;
	b->key = shmrun_chk_new_key();
	sync_obj(REL, (void *)b->key);
	int r = real(t, c11_body, b);
	if (r != thrd_success) {
		sync_obj(DROP, (void *)b->key);
		free(b);
	}
	return r;
}

int __wrap_thrd_join(thrd_t t, int *ret)
{
	REAL(thrd_join, int (*)(thrd_t, int *));
	int r = real(t, ret);
	if (r == thrd_success && on()) {
		sync_obj(ACQ, (void *)end_key((pthread_t)t));
		sync_obj(DROP, (void *)end_key((pthread_t)t));
	}
	return r;
}

void __wrap_thrd_exit(int ret)
{
	REAL(thrd_exit, void (*)(int));
	sync_obj(REL, (void *)end_key((pthread_t)thrd_current()));
	real(ret);
	__builtin_unreachable();
}

#define DESTROYING_VOID(name, T)                                                                 \
	void __wrap_##name(T *x)                                                                 \
	{                                                                                        \
		REAL(name, void (*)(T *));                                                       \
		real(x);                                                                         \
		if (on())                                                                        \
			sync_obj(DROP, x);                                                       \
	}
DESTROYING_VOID(mtx_destroy, mtx_t)
DESTROYING_VOID(cnd_destroy, cnd_t)
ACQUIRING(mtx_lock, mtx_t)
ACQUIRING(mtx_trylock, mtx_t)
ACQUIRING_TIMED(mtx_timedlock, mtx_t)
RELEASING(mtx_unlock, mtx_t)
RELEASING(cnd_signal, cnd_t)
RELEASING(cnd_broadcast, cnd_t)

int __wrap_cnd_wait(cnd_t *c, mtx_t *m)
{
	REAL(cnd_wait, int (*)(cnd_t *, mtx_t *));
	COND_WAIT(c, m, real(c, m));
}

int __wrap_cnd_timedwait(cnd_t *c, mtx_t *m, const struct timespec *ts)
{
	REAL(cnd_timedwait, int (*)(cnd_t *, mtx_t *, const struct timespec *));
	COND_WAIT(c, m, real(c, m, ts));
}

/* Atomics: one object for all of them. The version counts releases into
 * it; each thread number's clock remembers the version it last acquired
 * (per number, not per thread: a section's number is a clock of its own,
 * and the thread's own clock has not learned what the section did). */
static char atomics_obj;
static uint64_t atomics_version;
static uint64_t atomics_seen[SHMRUN_CHK_NUMBERS];

void shmrun_chk_atomic_release(void)
{
	int t = shmrun_chk_current();
	/* No number: the thread has done nothing the checker knows. */
	if (t < 0 || !__atomic_load_n(&shmrun_chk_dirty[t], __ATOMIC_RELAXED) || !on())
		return;
	sync_obj(REL, &atomics_obj);
	__atomic_store_n(&shmrun_chk_dirty[t], 0, __ATOMIC_RELAXED); /* after: the call marked it */
	__atomic_add_fetch(&atomics_version, 1, __ATOMIC_SEQ_CST);
}

void shmrun_chk_atomic_acquire(void)
{
	uint64_t v = __atomic_load_n(&atomics_version, __ATOMIC_SEQ_CST);
	if (v == 0 || !on())
		return;
	int t = shmrun_chk_current();
	if (t < 0)
		t = shmrun_chk_thread();
	if (__atomic_load_n(&atomics_seen[t], __ATOMIC_RELAXED) == v)
		return;
	__atomic_store_n(&atomics_seen[t], v, __ATOMIC_RELAXED);
	int d = __atomic_load_n(&shmrun_chk_dirty[t], __ATOMIC_RELAXED);
	sync_obj(ACQ, &atomics_obj);
	/* What it learned is the object's already: nothing new to release. */
	__atomic_store_n(&shmrun_chk_dirty[t], d, __ATOMIC_RELAXED);
}
