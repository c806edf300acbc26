/*
 * climit - what the hardware allows: the same shared-memory work as
 * rmabench, in plain C with no runtime, as the floor for every MPI row.
 *
 *   climit [--quick] [--list] all | NAME...
 *
 * Two processes (fork) share one MAP_SHARED|MAP_ANONYMOUS region (tmpfs
 * pages, the same kind /dev/shm gives) and are pinned one per core, like
 * ranks 0 and 1 under --bind-to core. Process 0 is the origin and does the
 * timing; in one-sided rows process 1 idles spinning in the control barrier,
 * as an MPI target idles in MPI_Barrier. Same statistics and RESULT lines as
 * rmabench (benchutil.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <shmrun/format.h>

#include "benchutil.h"
#include "forkwatch.h"

#define CL 64

/* Every word the two processes share sits on its own cache line, so rows
 * never see false sharing they did not ask for. */
struct shared {
	_Alignas(CL) int64_t cb_count; /* control barrier; count and sense */
	int64_t cb_sense;              /* share a line on purpose (see sbar) */
	_Alignas(CL) int64_t next;     /* calibration verdict from process 0 */
	int64_t nbatch;                /* and the batches per round */
	_Alignas(CL) int64_t ping;     /* cacheline_pingpong */
	_Alignas(CL) int64_t post;     /* flag_handoff_put8: target -> origin */
	_Alignas(CL) int64_t done;     /* flag_handoff_put8: origin -> target */
	_Alignas(CL) int64_t data;     /* flag_handoff_put8 payload */
	_Alignas(CL) int64_t word;     /* atomic target, touched data word */
	_Alignas(CL) int64_t ack;      /* put8_fence_touched acknowledgment */
	_Alignas(CL) int64_t sb_count; /* spin_barrier_2 under test */
	int64_t sb_sense;
	_Alignas(CL) uint64_t lk_all;  /* lock rows: LockAll count A, */
	uint32_t lk_all_seq, lk_all_sleepers; /* its event */
	_Alignas(CL) uint64_t lk_word[2]; /* lock words L[0], L[1] */
	uint32_t lk_sleepers[2];          /* and their sleepers words */
	_Alignas(CL) int64_t cma_lock;    /* cma_rmw_8: the target range's lock */
};

static struct shared *sh;
static char *dst;            /* shared, pre-faulted copy target */
static char *src;            /* private, pre-faulted copy source */
static int role;             /* 0 = origin (timer), 1 = target */
static int cb_local, sb_local; /* each process's sense for the two barriers */
static int64_t seq;          /* running counter, kept in step by both sides */
static pid_t peer;           /* process 0: process 1's pid (cma rows) */

/* cma rows: process 1's private memory, at the same address in both
 * processes after fork (each has its own copy-on-write page). */
static _Alignas(CL) int64_t cma_buf[8];

/* The full fence shmrun uses for Flush: a locked RMW on a line no other core
 * touches is a full barrier on amd64 and cheaper than mfence. Static, so
 * after fork each process has its own copy-on-write page. */
static _Alignas(CL) int64_t private_line;

static inline void full_fence(void)
{
	__atomic_fetch_add(&private_line, 0, __ATOMIC_SEQ_CST);
}

/* Sense-reversing barrier for two processes. Count and sense share a line:
 * the arriving process pulls the line once for its add, and the waiter's
 * spin reads it back once the sense flips, about two line transfers per
 * barrier, the least a two-party barrier can do. The count is reset before
 * the release store of the sense, so a waiter that races ahead into the next
 * barrier always finds it at zero. */
static inline void sbar(int64_t *count, int64_t *sense, int *local)
{
	int64_t mine;
	*local = !*local;
	mine = *local;
	if (__atomic_add_fetch(count, 1, __ATOMIC_ACQ_REL) == 2) {
		__atomic_store_n(count, 0, __ATOMIC_RELAXED);
		__atomic_store_n(sense, mine, __ATOMIC_RELEASE);
	} else {
		while (__atomic_load_n(sense, __ATOMIC_ACQUIRE) != mine)
			;
	}
}

static inline void cbar(void)
{
	sbar(&sh->cb_count, &sh->cb_sense, &cb_local);
}

static inline void wait_eq(int64_t *p, int64_t v)
{
	while (__atomic_load_n(p, __ATOMIC_ACQUIRE) != v)
		;
}

struct meas {
	const char *name;
	int two;       /* both processes run the body (else only process 0) */
	int halve;     /* report round trip / 2 */
	int full_only; /* skipped by "all" in --quick mode */
	size_t arg;    /* bytes for memcpy rows */
	void (*body)(const struct meas *, int64_t k);
};

/* Round trip of one line: process 0 writes odd values, process 1 answers
 * with the next even one. */
static void pingpong(const struct meas *m, int64_t k)
{
	(void)m;
	for (int64_t i = 0; i < k; i++) {
		seq += 2;
		if (role == 0) {
			__atomic_store_n(&sh->ping, seq - 1, __ATOMIC_RELEASE);
			wait_eq(&sh->ping, seq);
		} else {
			wait_eq(&sh->ping, seq - 1);
			__atomic_store_n(&sh->ping, seq, __ATOMIC_RELEASE);
		}
	}
}

/* Bandwidth floor for put_bw: the same copy a shared-memory Put does, into
 * the same pre-faulted shared mapping, same offset every time. */
static void copy(const struct meas *m, int64_t k)
{
	for (int64_t i = 0; i < k; i++) {
		memcpy(dst, src, m->arg);
		/* Keep the compiler from merging or dropping repeated copies. */
		__asm__ volatile("" ::: "memory");
	}
}

/* Floor for fetch_and_op_i64 + flush with an idle target: the line stays in
 * this core's cache, so this is the cost of the two locked instructions. */
static void fetch_add_fence(const struct meas *m, int64_t k)
{
	(void)m;
	for (int64_t i = 0; i < k; i++) {
		__atomic_fetch_add(&sh->word, 1, __ATOMIC_SEQ_CST);
		full_fence();
	}
}

/* Floors for RMA on private memory (the create_priv_* rows): one
 * process_vm_writev or process_vm_readv of 8 bytes of process 1's private
 * memory, then the full fence of a Flush. */
static void cma_write(const struct meas *m, int64_t k)
{
	int64_t v = 1;
	struct iovec l = {&v, 8}, r = {cma_buf, 8};
	(void)m;
	for (int64_t i = 0; i < k; i++) {
		process_vm_writev(peer, &l, 1, &r, 1, 0);
		full_fence();
	}
}

static void cma_read(const struct meas *m, int64_t k)
{
	int64_t v;
	struct iovec l = {&v, 8}, r = {cma_buf, 8};
	(void)m;
	for (int64_t i = 0; i < k; i++) {
		process_vm_readv(peer, &l, 1, &r, 1, 0);
		full_fence();
	}
}

/* Floor for an accumulate on private memory that needs no help from its
 * owner: take a lock in shared memory, read, add, write back, release. */
static void cma_rmw(const struct meas *m, int64_t k)
{
	int64_t v;
	struct iovec l = {&v, 8}, r = {cma_buf + 1, 8};
	(void)m;
	for (int64_t i = 0; i < k; i++) {
		int64_t free_ = 0;
		while (!__atomic_compare_exchange_n(&sh->cma_lock, &free_, 1, 0, __ATOMIC_ACQUIRE,
						    __ATOMIC_RELAXED))
			free_ = 0;
		process_vm_readv(peer, &l, 1, &r, 1, 0);
		v++;
		process_vm_writev(peer, &l, 1, &r, 1, 0);
		__atomic_store_n(&sh->cma_lock, 0, __ATOMIC_RELEASE);
		full_fence();
	}
}

/* Floors for the derived-datatype Puts (put_type_*): the same elements
 * copied by hand from a private matrix into a shared one, then a fence:
 * one 1024x1024 double column (arg 0), a 64x64 block at (100, 200) (arg 1). */
static void strided(const struct meas *m, int64_t k)
{
	const double *s = (const double *)src;
	double *d = (double *)dst;
	for (int64_t i = 0; i < k; i++) {
		if (m->arg == 8 * 1024 * 1024) {
			for (long r = 0; r < 1024; r++)
				d[r * 1024] = s[r * 1024];
		} else {
			for (long r = 100; r < 164; r++)
				memcpy(d + r * 1024 + 200, s + r * 1024 + 200, 64 * 8);
		}
		__asm__ volatile("" ::: "memory");
		full_fence();
	}
}


/* Floor for pingpong_type_column: a 1024-row column of a private 1024x1024
 * double matrix goes to the other process's matrix and back. Each way the
 * sender copies its column into the shared buffer (strided loads) and
 * publishes it; the receiver copies it into its own column (strided
 * stores). A round trip. */
static void strided_pp(const struct meas *m, int64_t k)
{
	(void)m;
	double *mat = (double *)src, *buf = (double *)dst;
	for (int64_t i = 0; i < k; i++) {
		int64_t e = ++seq;
		if (role == 0) {
			for (long r = 0; r < 1024; r++)
				buf[r] = mat[r * 1024];
			__atomic_store_n(&sh->post, e, __ATOMIC_RELEASE);
			wait_eq(&sh->done, e);
			for (long r = 0; r < 1024; r++)
				mat[r * 1024] = buf[1024 + r];
		} else {
			wait_eq(&sh->post, e);
			for (long r = 0; r < 1024; r++)
				mat[r * 1024] = buf[r];
			for (long r = 0; r < 1024; r++)
				buf[1024 + r] = mat[r * 1024];
			__atomic_store_n(&sh->done, e, __ATOMIC_RELEASE);
		}
	}
}

/* Floor for pscw_put8: the target posts (flag), the origin waits for it,
 * writes 8 bytes and completes (flag); the target waits for completion. */
static void handoff(const struct meas *m, int64_t k)
{
	(void)m;
	for (int64_t i = 0; i < k; i++) {
		int64_t e = ++seq;
		if (role == 1) {
			__atomic_store_n(&sh->post, e, __ATOMIC_RELEASE);
			wait_eq(&sh->done, e);
		} else {
			wait_eq(&sh->post, e);
			__atomic_store_n(&sh->data, e, __ATOMIC_RELAXED);
			__atomic_store_n(&sh->done, e, __ATOMIC_RELEASE);
		}
	}
}

/* Floors for lock_unlock_excl and lockall_unlockall: shmrun's lock-word
 * protocol (docs/FORMAT.md, "Passive-target locks") with no runtime around
 * it, uncontended, the target idle. Exclusive Lock+Unlock is two locked adds
 * plus the grant, LockAll and sleepers checks; LockAll+UnlockAll is two
 * locked adds on A and a scan of the X fields. A runtime pays these plus its
 * epoch bookkeeping and call overhead. The numbers come from the generated
 * include/shmrun/format.h. */

static void lock_unlock(const struct meas *m, int64_t k)
{
	(void)m;
	for (int64_t i = 0; i < k; i++) {
		uint64_t v = __atomic_add_fetch(&sh->lk_word[1], SHMRUN_LOCK_EXCLUSIVE, __ATOMIC_SEQ_CST);
		uint64_t t = shmrun_lock_ticket(v);
		if ((v & SHMRUN_LOCK_GUARDS) || shmrun_lock_w(v) != t ||
		    __atomic_load_n(&sh->lk_all, __ATOMIC_ACQUIRE) != 0) {
			fprintf(stderr, "climit: lock_unlock: lock not granted at once\n");
			exit(1);
		}
		v = __atomic_add_fetch(&sh->lk_word[1], SHMRUN_LOCK_EXCLUSIVE_UNLOCK, __ATOMIC_SEQ_CST);
		if (v & SHMRUN_LOCK_GUARDS)
			__atomic_and_fetch(&sh->lk_word[1], ~SHMRUN_LOCK_GUARDS, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&sh->lk_sleepers[1], __ATOMIC_ACQUIRE) != 0)
			__atomic_add_fetch(&sh->lk_all_seq, 1, __ATOMIC_SEQ_CST); /* a wake */
	}
}

static void lockall_unlockall(const struct meas *m, int64_t k)
{
	(void)m;
	for (int64_t i = 0; i < k; i++) {
		int busy = 0;
		__atomic_add_fetch(&sh->lk_all, 1, __ATOMIC_SEQ_CST);
		for (int r = 0; r < 2; r++)
			busy |= shmrun_lock_x(__atomic_load_n(&sh->lk_word[r], __ATOMIC_ACQUIRE)) != 0;
		if (busy) {
			fprintf(stderr, "climit: lockall_unlockall: an exclusive lock is held\n");
			exit(1);
		}
		__atomic_add_fetch(&sh->lk_all, (uint64_t)-1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&sh->lk_all_sleepers, __ATOMIC_ACQUIRE) != 0)
			__atomic_add_fetch(&sh->lk_all_seq, 1, __ATOMIC_SEQ_CST);
	}
}

/* Floor for barrier and fence at two ranks. */
static void spin_barrier(const struct meas *m, int64_t k)
{
	(void)m;
	for (int64_t i = 0; i < k; i++)
		sbar(&sh->sb_count, &sh->sb_sense, &sb_local);
}

/* Floor for rmabench put8_flush_touched, the same protocol with the put
 * replaced by a store and the flush by shmrun's fence: store + fence, the
 * target sees the value and acknowledges, the origin sees the ack. */
static void touched(const struct meas *m, int64_t k)
{
	(void)m;
	for (int64_t i = 0; i < k; i++) {
		int64_t v = ++seq;
		if (role == 0) {
			__atomic_store_n(&sh->word, v, __ATOMIC_RELAXED);
			full_fence();
			wait_eq(&sh->ack, v);
		} else {
			wait_eq(&sh->word, v);
			__atomic_store_n(&sh->ack, v, __ATOMIC_RELEASE);
		}
	}
}

/* Floor for alloc_free / alloc_touch_free: each process maps and unmaps its
 * own tmpfs-backed region (what a runtime's per-rank part costs at least,
 * before any naming, sizing or exchange of a shared segment); with touch,
 * one byte per page, so the row is mostly the kernel's page-fault path. */
static void map_unmap(const struct meas *m, int64_t k, int touch)
{
	for (int64_t i = 0; i < k; i++) {
		volatile char *p = mmap(NULL, m->arg, PROT_READ | PROT_WRITE,
					MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			perror("mmap");
			exit(1);
		}
		if (touch)
			for (size_t off = 0; off < m->arg; off += 4096)
				p[off] = 1;
		munmap((void *)p, m->arg);
	}
}

static void mmap_free(const struct meas *m, int64_t k)
{
	map_unmap(m, k, 0);
}

static void mmap_touch_free(const struct meas *m, int64_t k)
{
	map_unmap(m, k, 1);
}

#define KiB ((size_t)1024)
#define MiB (KiB * 1024)

static const struct meas table[] = {
	{"cacheline_pingpong", 1, 1, 0, 0, pingpong},
	{"memcpy_4096", 0, 0, 0, 4 * KiB, copy},
	{"memcpy_65536", 0, 0, 0, 64 * KiB, copy},
	{"memcpy_1048576", 0, 0, 0, 1 * MiB, copy},
	{"memcpy_16777216", 0, 0, 1, 16 * MiB, copy},
	{"memcpy_67108864", 0, 0, 1, 64 * MiB, copy},
	{"atomic_fetch_add_fence", 0, 0, 0, 0, fetch_add_fence},
	{"cma_write_8", 0, 0, 0, 0, cma_write},
	{"cma_read_8", 0, 0, 0, 0, cma_read},
	{"cma_rmw_8", 0, 0, 0, 0, cma_rmw},
	{"strided_copy_column", 0, 0, 0, 8 * MiB, strided},
	{"strided_copy_subarray_64", 0, 0, 0, 8 * MiB + 1, strided},
	{"strided_pingpong_column", 1, 0, 0, 8 * MiB, strided_pp},
	{"lock_unlock_excl", 0, 0, 0, 0, lock_unlock},
	{"lockall_unlockall", 0, 0, 0, 0, lockall_unlockall},
	{"flag_handoff_put8", 1, 0, 0, 0, handoff},
	{"spin_barrier_2", 1, 0, 0, 0, spin_barrier},
	{"put8_fence_touched", 1, 0, 0, 0, touched},
	{"mmap_free_1m", 1, 0, 0, 1 * MiB, mmap_free},
	{"mmap_free_256m", 1, 0, 0, 256 * MiB, mmap_free},
	{"mmap_touch_free_1m", 1, 0, 0, 1 * MiB, mmap_touch_free},
	{"mmap_touch_free_256m", 1, 0, 0, 256 * MiB, mmap_touch_free},
};
#define NMEAS ((int)(sizeof table / sizeof table[0]))

static int64_t ops; /* body iterations process 0 ran in this row */

static int64_t timed_batch(const struct meas *m, int64_t k)
{
	int64_t t0, t1;
	cbar();
	t0 = now_ns();
	if (m->two || role == 0)
		m->body(m, k);
	t1 = now_ns();
	ops += k;
	return t1 - t0;
}

/* peer_word is process 1's cma_buf[i], read by process 0. */
static int64_t peer_word(int i)
{
	int64_t v = -1;
	struct iovec l = {&v, 8}, r = {cma_buf + i, 8};
	process_vm_readv(peer, &l, 1, &r, 1, 0);
	return v;
}

/* The state a row's check compares with (process 0, before the row). */
static int64_t before_word, before_rmw;

/* verify checks a row's answer in process 0 after its timed calls, as
 * rmabench checks the runtimes' ("INFO check NAME ok|WRONG ..."): the
 * words the protocol leaves, counted operations, copied bytes. The lock
 * rows check every grant in the loop (they stop at a wrong one); the map
 * rows and cma_read_8 (whatever the peer's word holds) have no answer. */
static void verify(const struct meas *m)
{
	char why[160] = "";
	const double *s = (const double *)src, *d = (const double *)dst;
	int64_t v;
	if (m->body == pingpong && sh->ping != seq)
		snprintf(why, sizeof why, "the line holds %lld, want %lld", (long long)sh->ping, (long long)seq);
	else if (m->body == copy && memcmp(dst, src, m->arg) != 0)
		snprintf(why, sizeof why, "the copy differs from its source");
	else if (m->body == fetch_add_fence && sh->word - before_word != ops)
		snprintf(why, sizeof why, "%lld adds counted, %lld made", (long long)(sh->word - before_word), (long long)ops);
	else if (m->body == cma_write && (v = peer_word(0)) != 1)
		snprintf(why, sizeof why, "the peer's word is %lld, want 1", (long long)v);
	else if (m->body == cma_rmw && (v = peer_word(1)) - before_rmw != ops)
		snprintf(why, sizeof why, "%lld increments counted, %lld made", (long long)(v - before_rmw), (long long)ops);
	else if (m->body == strided) {
		for (long r = 0; r < 1024 && !why[0]; r++)
			if (m->arg == 8 * 1024 * 1024 ? memcmp(d + r * 1024, s + r * 1024, 8) != 0
						      : r >= 100 && r < 164 && memcmp(d + r * 1024 + 200, s + r * 1024 + 200, 64 * 8) != 0)
				snprintf(why, sizeof why, "row %ld differs from its source", r);
	} else if (m->body == strided_pp) {
		for (long r = 0; r < 1024 && !why[0]; r++)
			for (int b = 0; b < 8; b++)
				if (((const unsigned char *)(s + r * 1024))[b] != 0x5a) {
					snprintf(why, sizeof why, "row %ld of the column came back changed", r);
					break;
				}
	} else if (m->body == handoff && sh->data != seq)
		snprintf(why, sizeof why, "the data word is %lld, want %lld", (long long)sh->data, (long long)seq);
	else if (m->body == spin_barrier && sh->sb_count != 0)
		snprintf(why, sizeof why, "the barrier count is %lld, want 0", (long long)sh->sb_count);
	else if (m->body == touched && (sh->word != seq || sh->ack != seq))
		snprintf(why, sizeof why, "word %lld and ack %lld, want %lld", (long long)sh->word, (long long)sh->ack, (long long)seq);
	else if (m->body == mmap_free || m->body == mmap_touch_free || m->body == cma_read)
		return;
	if (why[0])
		printf("INFO check %s WRONG on rank 0: %s\n", m->name, why);
	printf("INFO check %s %s\n", m->name, why[0] ? "WRONG" : "ok");
}

/* Both processes run this in step; only process 0's numbers are used. */
static void run(const struct meas *m, const struct plan *plan)
{
	struct plan p = *plan;
	int64_t k = 1, t = 0;
	int n;
	double *v;

	ops = 0;
	if (role == 0) {
		before_word = sh->word;
		if (m->body == cma_rmw)
			before_rmw = peer_word(1);
	}
	timed_batch(m, 1); /* first touch of code and private lines */
	for (;;) {
		/* The shorter of two tries: a batch stretched by a preemption
		 * must not end calibration with k far too small. */
		int64_t t2;
		t = timed_batch(m, k);
		t2 = timed_batch(m, k);
		if (t2 < t)
			t = t2;
		if (role == 0) {
			sh->next = t < p.batch_ns ? plan_grow(k, t, p.batch_ns) : 0;
			sh->nbatch = plan_batches(&p, k, t);
		}
		cbar();
		/* Process 0 writes these again only after the next batch's
		 * opening barrier, which process 1 reaches after this read. */
		if (!sh->next)
			break;
		k = sh->next;
	}
	p.batches = (int)sh->nbatch;
	n = p.rounds * p.batches;
	v = malloc(sizeof(double) * (size_t)n);
	if (!v) {
		perror("malloc");
		exit(1);
	}
	for (int i = 0; i < n; i++)
		v[i] = (double)timed_batch(m, k) / (double)k / (m->halve ? 2.0 : 1.0);
	cbar();
	if (role == 0) {
		report(m->name, &p, v, k);
		verify(m);
		fflush(stdout);
	}
	cbar(); /* process 1 stays until the check has read its memory (cma rows) */
	free(v);
}

static int pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof set, &set);
}

static const char *meas_name(int j) { return table[j].name; }

int main(int argc, char **argv)
{
	struct bench_args args = {0};
	const struct plan *p = &plan_full;
	int quick = 0, list = 0, all = 0, nsel = 0, cpus[2], ncpu = 0, status = 0;
	int sel[NMEAS] = {0};
	size_t maxcopy = 0;
	cpu_set_t allowed;
	pid_t child;

	if (bench_parse(argc, argv, "climit", meas_name, NMEAS, sel, 0, 0, 1, &args))
		return 2;
	quick = args.quick, list = args.list, all = args.all;
	if (list) { /* what "all" runs in this mode */
		for (int j = 0; j < NMEAS; j++)
			if (!(quick && table[j].full_only))
				printf("%s\n", table[j].name);
		return 0;
	}
	if (quick)
		p = &plan_quick;
	for (int j = 0; j < NMEAS; j++) {
		if (all && !(quick && table[j].full_only))
			sel[j] = 1;
		if (sel[j]) {
			nsel++;
			if ((table[j].body == copy || table[j].body == strided || table[j].body == strided_pp) && table[j].arg > maxcopy)
				maxcopy = table[j].arg;
		}
	}
	if (!nsel) {
		fprintf(stderr, "usage: climit [--quick] [--list] all | NAME...\n");
		return 2;
	}

	/* The first two CPUs we may run on, like --bind-to core for 2 ranks. */
	if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
		for (int c = 0; c < CPU_SETSIZE && ncpu < 2; c++)
			if (CPU_ISSET(c, &allowed))
				cpus[ncpu++] = c;
	if (ncpu < 2) {
		fprintf(stderr, "climit: needs two CPUs to pin to\n");
		return 1;
	}

	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		  -1, 0);
	if (sh == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(sh, 0, sizeof *sh);
	if (maxcopy) {
		/* Pre-fault both sides of the copy before fork: the shared pages
		 * stay mapped in both processes, and the source is only read, so
		 * copy-on-write never triggers. */
		dst = mmap(NULL, maxcopy, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		src = malloc(maxcopy);
		if (dst == MAP_FAILED || !src) {
			perror("copy buffers");
			return 1;
		}
		memset(dst, 0, maxcopy);
		memset(src, 0x5a, maxcopy);
	}

	printf("INFO cpus %d %d\n", cpus[0], cpus[1]);
	printf("INFO mode %s rounds %d batches %d batch_ns %lld\n", quick ? "quick" : "full",
	       p->rounds, p->batches, (long long)p->batch_ns);
	fflush(stdout); /* nothing buffered may be printed twice after fork */

	pid_t parent = getpid();
	fork_watch_parent();
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (child == 0)
		fork_watch_child(parent);
	role = child == 0;
	peer = child;
	if (pin(cpus[role]) != 0) {
		fprintf(stderr, "climit: pinning to cpu %d: %s\n", cpus[role], strerror(errno));
		/* Keep going: numbers are still useful, just less stable. */
	}

	for (int j = 0; j < NMEAS; j++)
		if (sel[j])
			run(&table[j], p);

	if (role == 1)
		_exit(0);
	if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "climit: second process failed\n");
		return 1;
	}
	return 0;
}
