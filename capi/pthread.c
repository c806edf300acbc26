/* shmcc --check: what orders a C program's POSIX threads, and its atomics,
 * told to the checker (see omp.c for OpenMP's constructs and how).
 *
 *   pthread_create: the creator's past before the new thread's start;
 *                   pthread_join: the thread's end (its return from its
 *                   start routine; pthread_exit is not seen) before what
 *                   follows the join.
 *   mutexes, read-write locks, spin locks: release at the unlock,
 *                   acquire at the lock (or a successful try).
 *   condition variables: a wait releases and acquires its mutex, and
 *                   acquires what signal and broadcast released.
 *   semaphores:     sem_post releases, a successful wait acquires.
 *   barriers:       every arriving thread's past before every leaving
 *                   thread's future.
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

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	REAL(pthread_create, int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *));
	start_blk *b;
	if (!on() || !(b = malloc(sizeof *b)))
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

int __wrap_pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *ts)
{
	REAL(pthread_mutex_timedlock, int (*)(pthread_mutex_t *, const struct timespec *));
	int r = real(m, ts);
	if (r == 0 && on())
		sync_obj(ACQ, m);
	return r;
}

int __wrap_sem_timedwait(sem_t *s, const struct timespec *ts)
{
	REAL(sem_timedwait, int (*)(sem_t *, const struct timespec *));
	int r = real(s, ts);
	if (r == 0 && on())
		sync_obj(ACQ, s);
	return r;
}

int __wrap_pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	REAL(pthread_cond_wait, int (*)(pthread_cond_t *, pthread_mutex_t *));
	if (!on())
		return real(c, m);
	sync_obj(REL, m);
	int r = real(c, m);
	sync_obj(ACQ, m);
	sync_obj(ACQ, c);
	return r;
}

int __wrap_pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *ts)
{
	REAL(pthread_cond_timedwait, int (*)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *));
	if (!on())
		return real(c, m, ts);
	sync_obj(REL, m);
	int r = real(c, m, ts);
	sync_obj(ACQ, m);
	sync_obj(ACQ, c);
	return r;
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

/* Atomics: one object for all of them. */
static char atomics_obj;
static uint64_t atomics_version; /* releases into atomics_obj so far */
static TLS uint64_t atomics_seen;
TLS int shmrun_chk_dirty = 1;

void shmrun_chk_atomic_release(void)
{
	if (!shmrun_chk_dirty || !on())
		return;
	sync_obj(REL, &atomics_obj);
	shmrun_chk_dirty = 0; /* after: the call set it */
	__atomic_add_fetch(&atomics_version, 1, __ATOMIC_SEQ_CST);
}

void shmrun_chk_atomic_acquire(void)
{
	uint64_t v = __atomic_load_n(&atomics_version, __ATOMIC_SEQ_CST);
	if (v == atomics_seen || !on())
		return;
	atomics_seen = v;
	int d = shmrun_chk_dirty;
	sync_obj(ACQ, &atomics_obj);
	shmrun_chk_dirty = d; /* what it learned is the object's already */
}
