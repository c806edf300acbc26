/*
 * dataplane: one rank's data plane in a real shmrun job, written against
 * include/shmrun/format.h alone (no number on this page comes from anywhere
 * else). The Go rank it stands for starts it and stays out of the window
 * until it exits; the other ranks are Go ranks using package win.
 *
 * Usage: dataplane WINFD CTLFD RANK K   (starts on a line on stdin)
 *   WINFD  descriptor of the window segment (opened by the Go rank by name
 *          before the segment was unlinked)
 *   CTLFD  descriptor of the job's control segment (for the abort word)
 *   RANK   the rank this program acts for
 *   K      iterations of the lock/accumulate phase (a multiple of n)
 *
 * Phase 1, concurrently with the Go ranks doing the same through win:
 *   for k < K: exclusive lock on rank k%n, counter += 1 by plain load and
 *   store, copy it to the pair words a and b, store a marker k+1, unlock;
 *   shared lock on rank (k+1)%n, check a == b, unlock; and a striped
 *   accumulate of 1+2i into each of rank 0's complex128 elements.
 * Phase 2: a PSCW epoch with every Go rank as both origin and target:
 *   post, start, put by plain store, complete, wait, check the Go puts.
 *
 * Every wait follows the event protocol of docs/FORMAT.md (shared futex,
 * sleepers count, timeout) and gives up when the job's abort word is set or
 * after a deadline. Exit status 0 means every check passed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <shmrun/format.h>

/* Where the test keeps its data in each rank's part (the Go side uses the
 * same numbers: win/cdataplane_test.go). */
#define PART_COUNTER 0
#define PART_A 8
#define PART_B 16
#define PART_ACC 512 /* 8 complex128, 64 bytes apart */
#define PART_NACC 8
#define PART_MARKER 1024
#define PART_PSCW 2048 /* uint64 per origin */
#define PSCW_FROM_GO(o) ((uint64_t)((o) + 1) * 1000003u)
#define PSCW_FROM_C(me, t) (0xC0000000u + (uint64_t)(me) * 1000u + (uint64_t)(t))

#define SC __ATOMIC_SEQ_CST

static uint8_t *seg, *syncb;
static uint64_t n, me, nstripes;
static uint32_t *abort_word;
static time_t deadline;

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "dataplane (rank %llu): ", (unsigned long long)me);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static uint32_t *u32(uint8_t *base, uint64_t off) { return (uint32_t *)(void *)(base + off); }
static uint64_t *u64(uint8_t *base, uint64_t off) { return (uint64_t *)(void *)(base + off); }

static uint64_t hdr64(uint64_t off) { uint64_t v; memcpy(&v, seg + off, 8); return v; }
static uint32_t hdr32(uint64_t off) { uint32_t v; memcpy(&v, seg + off, 4); return v; }
static uint8_t *part(uint64_t r) { return seg + hdr64(shmrun_win_data_off_off(n, r)); }

/* Shared futex: never FUTEX_PRIVATE_FLAG, the waker is another process. */
static void futex_wait(uint32_t *w, uint32_t val)
{
	struct timespec ts = {0, 50 * 1000 * 1000}; /* then look at the abort word */
	syscall(SYS_futex, w, FUTEX_WAIT, val, &ts, NULL, 0);
}

static void futex_wake(uint32_t *w) { syscall(SYS_futex, w, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0); }

/* The sleeper's heavy fence (FORMAT.md's event protocol): a waker of a
 * process registered for it may skip its own fence. Where the kernel
 * lacks the command, no waker is registered and this does nothing. */
static void heavy_fence(void) { syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0); }

typedef int (*cond_fn)(void *arg);

/* The event protocol's waiter: spin, yield, then sleep on seq announcing
 * itself in sleepers, re-checking the condition in between. */
static void await(uint32_t *seq, uint32_t *sleepers, cond_fn done, void *arg, const char *what)
{
	for (int i = 0; i < 100; i++)
		if (done(arg))
			return;
	for (int i = 0; i < 50; i++) {
		if (done(arg))
			return;
		sched_yield();
	}
	for (;;) {
		if (__atomic_load_n(abort_word, SC) != SHMRUN_ABORT_NONE)
			die("the job was aborted while waiting for %s", what);
		if (time(NULL) > deadline)
			die("timed out waiting for %s", what);
		__atomic_add_fetch(sleepers, 1, SC);
		heavy_fence();
		uint32_t s = __atomic_load_n(seq, SC);
		if (done(arg)) {
			__atomic_sub_fetch(sleepers, 1, SC);
			return;
		}
		futex_wait(seq, s);
		__atomic_sub_fetch(sleepers, 1, SC);
		if (done(arg))
			return;
	}
}

/* The event protocol's waker, after the state change. */
static void notify(uint32_t *seq, uint32_t *sleepers)
{
	if (__atomic_load_n(sleepers, SC) != 0) {
		__atomic_add_fetch(seq, 1, SC);
		futex_wake(seq);
	}
}

/* ---- passive-target lock words ---- */

static uint64_t *lock_word(uint64_t r) { return u64(syncb, shmrun_sync_lock(r) + SHMRUN_LOCK_WORD); }
/* The futex word is the lock word's low half (little-endian). */
static uint32_t *lock_seq(uint64_t r) { return u32(syncb, shmrun_sync_lock(r) + SHMRUN_LOCK_WORD); }
static uint32_t *lock_sleepers(uint64_t r) { return u32(syncb, shmrun_sync_lock(r) + SHMRUN_LOCK_SLEEPERS); }
static uint64_t *global_holders(void) { return u64(syncb, shmrun_sync_global() + SHMRUN_GLOBAL_HOLDERS); }

static uint64_t lock_add(uint64_t r, uint64_t d)
{
	uint64_t v = __atomic_add_fetch(lock_word(r), d, SC);
	if (v & SHMRUN_LOCK_GUARDS)
		__atomic_and_fetch(lock_word(r), ~SHMRUN_LOCK_GUARDS, SC);
	return v;
}

/* Every change of the low half wakes its sleepers: the low half is the seq. */
static void lock_wake(uint64_t r)
{
	if (__atomic_load_n(lock_sleepers(r), SC) != 0)
		futex_wake(lock_seq(r));
}

struct turn {
	uint64_t r, t;
};

static int w_is(void *arg)
{
	struct turn *c = arg;
	return shmrun_lock_w(__atomic_load_n(lock_word(c->r), SC)) == c->t;
}

static int r_is(void *arg)
{
	struct turn *c = arg;
	return shmrun_lock_r(__atomic_load_n(lock_word(c->r), SC)) == c->t;
}

static int no_lockall(void *arg)
{
	(void)arg;
	return __atomic_load_n(global_holders(), SC) == 0;
}

static void lock_exclusive(uint64_t r)
{
	uint64_t v = lock_add(r, SHMRUN_LOCK_EXCLUSIVE);
	struct turn c = {r, shmrun_lock_ticket(v)};
	await(lock_seq(r), lock_sleepers(r), w_is, &c, "an exclusive lock's turn");
	await(u32(syncb, shmrun_sync_global() + SHMRUN_GLOBAL_SEQ), u32(syncb, shmrun_sync_global() + SHMRUN_GLOBAL_SLEEPERS),
	      no_lockall, NULL, "LockAll holders to leave");
}

static void unlock_exclusive(uint64_t r)
{
	lock_add(r, SHMRUN_LOCK_EXCLUSIVE_UNLOCK);
	lock_wake(r);
}

static void lock_shared(uint64_t r)
{
	uint64_t v = lock_add(r, SHMRUN_LOCK_SHARED);
	struct turn c = {r, shmrun_lock_ticket(v)};
	await(lock_seq(r), lock_sleepers(r), r_is, &c, "a shared lock's turn");
	lock_add(r, SHMRUN_LOCK_ONE_R); /* admit the reader queued behind */
	lock_wake(r);
}

static void unlock_shared(uint64_t r)
{
	lock_add(r, SHMRUN_LOCK_SHARED_UNLOCK);
	lock_wake(r);
}

/* ---- accumulate lock stripes ---- */

static uint32_t *stripe_word(uint64_t k, uint64_t field)
{
	return u32(syncb, shmrun_sync_stripes(n) + k * SHMRUN_STRIPE_LEN + field);
}

static int stripe_take(void *arg)
{
	uint32_t *lk = arg, free = SHMRUN_STRIPE_FREE;
	return __atomic_load_n(lk, SC) == SHMRUN_STRIPE_FREE &&
	       __atomic_compare_exchange_n(lk, &free, SHMRUN_STRIPE_HELD, 0, SC, SC);
}

static void stripe_lock(uint64_t k)
{
	uint32_t *lk = stripe_word(k, SHMRUN_STRIPE_LOCK), free = SHMRUN_STRIPE_FREE;
	if (__atomic_compare_exchange_n(lk, &free, SHMRUN_STRIPE_HELD, 0, SC, SC))
		return;
	await(stripe_word(k, SHMRUN_STRIPE_SEQ), stripe_word(k, SHMRUN_STRIPE_SLEEPERS), stripe_take, lk, "a lock stripe");
}

static void stripe_unlock(uint64_t k)
{
	/* An exchange, not a store: a full barrier before the sleepers load. */
	uint32_t old = __atomic_exchange_n(stripe_word(k, SHMRUN_STRIPE_LOCK), SHMRUN_STRIPE_FREE, SC);
	if (old != SHMRUN_STRIPE_HELD)
		die("stripe %llu was %u, not held: the sync block is corrupt", (unsigned long long)k, old);
	notify(stripe_word(k, SHMRUN_STRIPE_SEQ), stripe_word(k, SHMRUN_STRIPE_SLEEPERS));
}

/* MPI_Accumulate(SUM) of one complex128 at segment offset off: the stripe is
 * chosen by the offset in the segment, never the address. */
static void accumulate_c128(uint64_t off, double re, double im)
{
	uint64_t k = shmrun_stripe_index(off, nstripes);
	double *p = (double *)(void *)(seg + off);
	stripe_lock(k);
	p[0] += re;
	p[1] += im;
	stripe_unlock(k);
}

/* ---- PSCW ---- */

static uint32_t posts_to[SHMRUN_MAX_RANKS], starts_from[SHMRUN_MAX_RANKS];

static uint32_t *post_ctr(uint64_t origin, uint64_t target) { return u32(syncb, shmrun_sync_post(n, origin, target)); }
static uint32_t *complete_ctr(uint64_t target, uint64_t origin) { return u32(syncb, shmrun_sync_complete(n, target, origin)); }
static uint32_t *bell_seq(uint64_t r) { return u32(syncb, shmrun_sync_doorbell(r) + SHMRUN_BELL_SEQ); }
static uint32_t *bell_sleepers(uint64_t r) { return u32(syncb, shmrun_sync_doorbell(r) + SHMRUN_BELL_SLEEPERS); }

static int others_posted(void *arg)
{
	(void)arg;
	for (uint64_t t = 0; t < n; t++)
		if (t != me && (int32_t)(__atomic_load_n(post_ctr(me, t), __ATOMIC_ACQUIRE) - (starts_from[t] + 1)) < 0)
			return 0;
	return 1;
}

static int others_completed(void *arg)
{
	(void)arg;
	for (uint64_t o = 0; o < n; o++)
		if (o != me && (int32_t)(__atomic_load_n(complete_ctr(me, o), __ATOMIC_ACQUIRE) - posts_to[o]) < 0)
			return 0;
	return 1;
}

/* Post, Start, Complete, Wait with every other rank as the group. */
static void post_all(void)
{
	for (uint64_t o = 0; o < n; o++)
		if (o != me)
			__atomic_store_n(post_ctr(o, me), ++posts_to[o], __ATOMIC_RELEASE);
	__atomic_thread_fence(SC); /* the stores before the sleepers loads */
	for (uint64_t o = 0; o < n; o++)
		if (o != me)
			notify(bell_seq(o), bell_sleepers(o));
}

static void start_all(void)
{
	await(bell_seq(me), bell_sleepers(me), others_posted, NULL, "the targets' Posts");
	for (uint64_t t = 0; t < n; t++)
		if (t != me)
			starts_from[t]++;
}

static void complete_all(void)
{
	for (uint64_t t = 0; t < n; t++)
		if (t != me)
			__atomic_store_n(complete_ctr(t, me), starts_from[t], __ATOMIC_RELEASE);
	__atomic_thread_fence(SC);
	for (uint64_t t = 0; t < n; t++)
		if (t != me)
			notify(bell_seq(t), bell_sleepers(t));
}

static void wait_all(void)
{
	await(bell_seq(me), bell_sleepers(me), others_completed, NULL, "the origins' Completes");
}

/* ---- attaching ---- */

static uint8_t *map_fd(int fd, uint64_t *len)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		die("fstat fd %d: %s", fd, strerror(errno));
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap fd %d: %s", fd, strerror(errno));
	*len = (uint64_t)st.st_size;
	return p;
}

static void check_common(uint8_t *m, uint64_t len, uint32_t kind, const char *what)
{
	uint32_t v, k;
	uint64_t hl, total;
	if (len < SHMRUN_HDR_FIXED_LEN || memcmp(m + SHMRUN_HDR_MAGIC, SHMRUN_MAGIC, 8) != 0)
		die("%s: not a shmrun segment", what);
	memcpy(&v, m + SHMRUN_HDR_VERSION, 4);
	memcpy(&k, m + SHMRUN_HDR_KIND, 4);
	memcpy(&hl, m + SHMRUN_HDR_LEN, 8);
	memcpy(&total, m + SHMRUN_HDR_TOTAL, 8);
	if (v != SHMRUN_FORMAT_VERSION || k != kind || hl < SHMRUN_HDR_FIXED_LEN || hl > total || total > len)
		die("%s: version %u kind %u header %llu total %llu in %llu bytes", what, v, k,
		    (unsigned long long)hl, (unsigned long long)total, (unsigned long long)len);
}

int main(int argc, char **argv)
{
	if (argc != 5)
		die("usage: dataplane WINFD CTLFD RANK K");
	int winfd = atoi(argv[1]), ctlfd = atoi(argv[2]);
	me = strtoull(argv[3], NULL, 10);
	uint64_t K = strtoull(argv[4], NULL, 10);
	deadline = time(NULL) + 60;

	uint64_t ctl_len, seg_len;
	uint8_t *ctl = map_fd(ctlfd, &ctl_len);
	check_common(ctl, ctl_len, SHMRUN_KIND_CONTROL, "control segment");
	uint64_t page;
	memcpy(&page, ctl + SHMRUN_HDR_LEN, 8); /* the control header is one page */
	abort_word = u32(ctl, shmrun_ctl_abort(page) + SHMRUN_ABORT_STATE);
	const char *job = getenv(SHMRUN_ENV_JOB);
	if (job == NULL || strncmp((char *)ctl + SHMRUN_CTL_JOB, job, SHMRUN_CTL_JOB_LEN) != 0)
		die("the control segment is not job %s's", job ? job : "(unset)");

	seg = map_fd(winfd, &seg_len);
	check_common(seg, seg_len, SHMRUN_KIND_WINDOW, "window segment");
	n = hdr32(SHMRUN_WIN_RANKS);
	nstripes = hdr32(SHMRUN_WIN_STRIPES);
	const char *size = getenv(SHMRUN_ENV_SIZE);
	if (size == NULL || strtoull(size, NULL, 10) != n || me >= n || n < 2 || K % n != 0)
		die("window of %llu ranks, %s=%s, rank %llu, K %llu", (unsigned long long)n, SHMRUN_ENV_SIZE,
		    size ? size : "(unset)", (unsigned long long)me, (unsigned long long)K);
	if (nstripes == 0 || (nstripes & (nstripes - 1)) != 0 ||
	    hdr64(SHMRUN_WIN_SYNC_LEN) < shmrun_sync_total(n) || hdr64(SHMRUN_WIN_SYNC_OFF) + hdr64(SHMRUN_WIN_SYNC_LEN) > seg_len)
		die("sync block: %llu stripes, %llu bytes at %llu", (unsigned long long)nstripes,
		    (unsigned long long)hdr64(SHMRUN_WIN_SYNC_LEN), (unsigned long long)hdr64(SHMRUN_WIN_SYNC_OFF));
	for (uint64_t r = 0; r < n; r++)
		if (hdr64(shmrun_win_size_off(r)) < PART_PSCW + 8 * n)
			die("rank %llu's part is too small for the test", (unsigned long long)r);
	syncb = seg + hdr64(SHMRUN_WIN_SYNC_OFF);

	/* Start together with the Go ranks: the Go rank we stand for writes a
	 * line once the world has passed a barrier. */
	char go[8];
	if (fgets(go, sizeof go, stdin) == NULL)
		die("no start line on stdin");

	/* Phase 1: locks and striped accumulates, concurrent with the Go ranks. */
	uint64_t acc0 = hdr64(shmrun_win_data_off_off(n, 0)) + PART_ACC;
	for (uint64_t k = 0; k < K; k++) {
		uint64_t t = k % n;
		lock_exclusive(t);
		uint8_t *p = part(t);
		uint64_t c = *u64(p, PART_COUNTER) + 1;
		if (k % 4 == 0)
			sched_yield(); /* widen the window a broken exclusion would show in */
		*u64(p, PART_COUNTER) = c;
		*u64(p, PART_A) = c;
		*u64(p, PART_B) = c;
		*u64(p, PART_MARKER) = k + 1;
		unlock_exclusive(t);

		t = (k + 1) % n;
		lock_shared(t);
		p = part(t);
		uint64_t a = *u64(p, PART_A), b = *u64(p, PART_B);
		unlock_shared(t);
		if (a != b)
			die("under a shared lock on rank %llu: a = %llu, b = %llu (an exclusive holder was inside)",
			    (unsigned long long)t, (unsigned long long)a, (unsigned long long)b);

		for (uint64_t i = 0; i < PART_NACC; i++)
			accumulate_c128(acc0 + 64 * i, 1.0, 2.0);
	}

	/* Phase 2: PSCW with every Go rank. Arrive late, so that their Starts
	 * are asleep on the futex and only our doorbell wakes them. */
	usleep(200 * 1000);
	post_all();
	start_all();
	for (uint64_t t = 0; t < n; t++)
		if (t != me)
			*u64(part(t), PART_PSCW + 8 * me) = PSCW_FROM_C(me, t);
	complete_all();
	wait_all();
	for (uint64_t o = 0; o < n; o++)
		if (o != me && *u64(part(me), PART_PSCW + 8 * o) != PSCW_FROM_GO(o))
			die("after Wait: rank %llu's put reads %llu, want %llu", (unsigned long long)o,
			    (unsigned long long)*u64(part(me), PART_PSCW + 8 * o), (unsigned long long)PSCW_FROM_GO(o));
	printf("dataplane: rank %llu ok\n", (unsigned long long)me);
	return 0;
}
