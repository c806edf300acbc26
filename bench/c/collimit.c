/*
 * collimit - the plain-C limit of the collective rows (collrows.h): the
 * least a runtime could do to move the same data between N processes over
 * shared flags, with no runtime, no argument checks and no error paths.
 *
 *   collimit -n N [--quick] [--list] all | NAME...
 *
 * N processes (fork) share one MAP_SHARED|MAP_ANONYMOUS area laid out like
 * shmrun's collective area (include/shmrun/format.h: per process P flag
 * lines, one per round parity, with 104 inline bytes, and two staging
 * buffers; P = shmrun_coll_parities(N)). With N no larger than the CPUs this process may use, each is
 * pinned to one of them and waits by spinning, as ranks under --bind-to
 * core; with more, none is pinned and a wait yields the CPU after 20 polls,
 * as shmrun's oversubscribed policy does.
 *
 * A Bcast of 64 KiB or more and an Allreduce of 512 KiB or more move by
 * single copy (process_vm_readv from the other process's buffer), as shmrun
 * moves them, when the kernel allows it; else through the staging buffers.
 *
 * Rounds are numbered alike on every process. A process stores round r into
 * its line's sequence word (release) once its data for round r is in place
 * and, for a process that only reads in that round, once it has read it; a
 * reader loads the word (acquire) before reading. Before a process writes
 * its line of round r it waits until every reader of round r-P (same line)
 * is done with it, and before it writes its buffer of round r, every reader
 * of round r-2. Each call uses only the waits its data movement needs: a
 * Bcast's root does not wait for the readers of the current round, a
 * Gather's senders do not wait for each other, a Scan's process waits for
 * the lower ranks only. Loops of calls therefore pipeline as far as the
 * lines allow: P-1 rounds where the data rides in them, one where it is
 * staged.
 *
 * Same timing plan, statistics and RESULT lines as rmabench (benchutil.h);
 * loop rows time first start to last end, _sync rows the slowest process's
 * time inside the calls, barrier-separated; answers are checked the same
 * way ("INFO check NAME ok|WRONG").
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
#include "collrows.h"

#define PAGE 4096
#define MAXN 256

/* Control state, one line a word: the control barrier, the calibration
 * verdict and each process's timings of the last batch. */
struct control {
	_Alignas(128) int64_t cb_count;
	int64_t cb_sense;
	_Alignas(128) int64_t next, nbatch;
	_Alignas(128) int64_t t0[MAXN], t1[MAXN], wrong[MAXN];
	int64_t pid[MAXN];          /* single copy: each process's pid */
	uint64_t sbuf[MAXN], rbuf[MAXN]; /* and its buffers' addresses */
	int64_t single_failed;      /* a probe read failed: stage everything */
};

static struct control *ctl;
static char *area;          /* the collective area */
static int n, me, oversub;
static uint32_t lp;         /* flag lines a process: shmrun_coll_parities(n) */
static uint64_t chunk;      /* staging buffer bytes */
static uint32_t R;          /* rounds published, alike on every process */
static int cb_local;
static double *sbuf, *rbuf; /* private send and receive buffers */
static int single;          /* large payloads by single copy */
static double *scratch;     /* single-copy Allreduce: the piece read */

/* Large payloads move by single copy, as in shmrun (from
 * SHMRUN_SINGLE_BCAST and SHMRUN_SINGLE_ALLREDUCE bytes): the readers copy
 * straight from the other process's buffer with process_vm_readv, one copy
 * across cores instead of two through staging. */
#define SINGLE_PIECE (512u << 10)

static void read_remote(int q, void *dst, uint64_t src, size_t len)
{
	while (len > 0) {
		struct iovec l = {dst, len}, r = {(void *)(uintptr_t)src, len};
		ssize_t got = process_vm_readv((pid_t)ctl->pid[q], &l, 1, &r, 1, 0);
		if (got <= 0) {
			if (got < 0 && errno == EINTR)
				continue;
			perror("collimit: process_vm_readv");
			exit(1);
		}
		dst = (char *)dst + got;
		src += (uint64_t)got;
		len -= (size_t)got;
	}
}

static inline void relax(int *polls)
{
	if (oversub && ++*polls > 20) {
		sched_yield();
		*polls = 0;
	}
}

static void cbar(void)
{
	int64_t mine;
	int polls = 0;
	cb_local = !cb_local;
	mine = cb_local;
	if (__atomic_add_fetch(&ctl->cb_count, 1, __ATOMIC_ACQ_REL) == n) {
		__atomic_store_n(&ctl->cb_count, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&ctl->cb_sense, mine, __ATOMIC_RELEASE);
	} else {
		while (__atomic_load_n(&ctl->cb_sense, __ATOMIC_ACQUIRE) != mine)
			relax(&polls);
	}
}

static inline uint32_t *seq(int q, uint32_t r)
{
	return (uint32_t *)(area + shmrun_coll_flag(PAGE, (uint64_t)n, (uint64_t)q, r & (lp - 1)) + SHMRUN_FLAG_SEQ);
}

static inline double *inl(int q, uint32_t r)
{
	return (double *)(area + shmrun_coll_flag(PAGE, (uint64_t)n, (uint64_t)q, r & (lp - 1)) + SHMRUN_FLAG_INLINE);
}

static inline double *stg(int q, uint32_t r)
{
	return (double *)(area + shmrun_coll_staging(PAGE, (uint64_t)n, (uint64_t)q, r & 1));
}

static inline void post(uint32_t r)
{
	__atomic_store_n(seq(me, r), r, __ATOMIC_RELEASE);
}

/* Wait until process q has published round r (or later). */
static inline void await(int q, uint32_t r)
{
	int polls = 0;
	uint32_t *s = seq(q, r);
	while ((int32_t)(__atomic_load_n(s, __ATOMIC_ACQUIRE) - r) < 0)
		relax(&polls);
}

static inline void await_range(int lo, int hi, uint32_t r)
{
	for (int q = lo; q < hi; q++)
		await(q, r);
}

static inline void await_others(uint32_t r)
{
	for (int q = 0; q < n; q++)
		if (q != me)
			await(q, r);
}

/* acc = x_0 + (x_1 + ... + x_{n-1}) in shmrun's fixed order; the values
 * are integers, so any order gives the same sum, but the work is the same. */
static inline void fold(double *acc, size_t m, double *(*from)(int, uint32_t), uint32_t r,
			size_t off, int lo, int hi)
{
	memcpy(acc, from(hi - 1, r) + off, m * sizeof(double));
	for (int q = hi - 2; q >= lo; q--) {
		const double *x = from(q, r) + off;
		for (size_t i = 0; i < m; i++)
			acc[i] = x[i] + acc[i];
	}
}

/* Exchange rounds (every process writes, then reads everyone's): publishing
 * round r says "my data of r is in place", and a process publishes r only
 * after reading round r-1, so having seen every process at r-1 makes round
 * r-2's line free. A loop of exchanges has seen it already. */
static uint32_t seen_all;

static inline uint32_t open_exchange(void)
{
	uint32_t r = ++R;
	if (r > 1 && seen_all != r - 1)
		await_range(0, n, r - 1);
	return r;
}

static inline void close_exchange(uint32_t r)
{
	await_others(r);
	seen_all = r;
}

static void c_barrier(void)
{
	uint32_t r = open_exchange();
	post(r);
	close_exchange(r);
}

static void c_allreduce(size_t m)
{
	size_t b = m * sizeof(double);
	if (b <= SHMRUN_INLINE_LEN) {
		uint32_t r = open_exchange();
		memcpy(inl(me, r), sbuf, b);
		post(r);
		close_exchange(r);
		fold(rbuf, m, inl, r, 0, 0, n);
		return;
	}
	if (single && b >= SHMRUN_SINGLE_ALLREDUCE) {
		/* Round A: buffers ready; this process reduces its share from
		 * everyone's send buffers (the others' by single copy) into its
		 * recv; round B: shares ready, read the others'; round C: done. */
		size_t lo = (size_t)me * m / (size_t)n, hi = (size_t)(me + 1) * m / (size_t)n;
		size_t piece = SINGLE_PIECE / sizeof(double);
		uint32_t r = open_exchange();
		post(r);
		close_exchange(r);
		for (size_t a = lo; a < hi; a += piece) {
			size_t e = a + piece < hi ? a + piece : hi, len = (e - a) * sizeof(double);
			for (int q = n - 1; q >= 0; q--) {
				const double *x = sbuf + a;
				if (q != me) {
					read_remote(q, scratch, ctl->sbuf[q] + a * sizeof(double), len);
					x = scratch;
				}
				if (q == n - 1)
					memcpy(rbuf + a, x, len);
				else
					for (size_t i = 0; i < e - a; i++)
						rbuf[a + i] = x[i] + rbuf[a + i];
			}
		}
		r = open_exchange();
		post(r);
		close_exchange(r);
		for (int q = 0; q < n; q++) {
			size_t ql = (size_t)q * m / (size_t)n, qh = (size_t)(q + 1) * m / (size_t)n;
			if (q != me && qh > ql)
				read_remote(q, rbuf + ql, ctl->rbuf[q] + ql * sizeof(double),
					    (qh - ql) * sizeof(double));
		}
		r = open_exchange();
		post(r);
		close_exchange(r);
		return;
	}
	/* Per staging chunk: round A stages it, round B reduces this
	 * process's share into its other buffer; every process copies the
	 * shares out. */
	size_t mc = chunk / sizeof(double);
	for (size_t base = 0; base < m; base += mc) {
		size_t cm = m - base < mc ? m - base : mc;
		size_t lo = (size_t)me * cm / (size_t)n, hi = (size_t)(me + 1) * cm / (size_t)n;
		uint32_t ra = open_exchange(), rb;
		memcpy(stg(me, ra), sbuf + base, cm * sizeof(double));
		post(ra);
		close_exchange(ra);
		rb = open_exchange();
		if (hi > lo)
			fold(stg(me, rb) + lo, hi - lo, stg, ra, lo, 0, n);
		post(rb);
		close_exchange(rb);
		for (int q = 0; q < n; q++) {
			size_t ql = (size_t)q * cm / (size_t)n, qh = (size_t)(q + 1) * cm / (size_t)n;
			memcpy(rbuf + base + ql, stg(q, rb) + ql, (qh - ql) * sizeof(double));
		}
	}
}

/* One-to-all rounds: the root writes, the others read, then publish. Before
 * the root writes round r it waits for the readers of round r-P (inline) or
 * r-2 (staged). */
static void c_bcast(size_t m)
{
	size_t b = m * sizeof(double), per = chunk / sizeof(double);
	if (single && b >= SHMRUN_SINGLE_BCAST) {
		/* The root says its buffer is ready; the others read it and
		 * say so; the root returns once they all have. */
		uint32_t r = ++R;
		if (me == 0) {
			post(r);
			await_others(r);
		} else {
			await(0, r);
			read_remote(0, sbuf, ctl->sbuf[0], b);
			post(r);
		}
		seen_all = 0;
		return;
	}
	if (b <= SHMRUN_INLINE_LEN)
		per = m;
	for (size_t off = 0; off < m; off += per) {
		size_t cm = m - off < per ? m - off : per;
		uint32_t r = ++R;
		double *slot = b <= SHMRUN_INLINE_LEN ? inl(0, r) : stg(0, r);
		uint32_t back = b <= SHMRUN_INLINE_LEN ? lp : 2;
		if (me == 0) {
			if (r > back)
				await_range(1, n, r - back);
			memcpy(slot, sbuf + off, cm * sizeof(double));
			post(r);
		} else {
			await(0, r);
			memcpy(sbuf + off, slot, cm * sizeof(double));
			post(r);
		}
	}
	seen_all = 0;
}

/* All-to-one: everyone writes; the root reads and publishes; a sender
 * writes round r once the root has published r-P (read it). */
static void c_gather_reduce(int reduce, size_t m)
{
	uint32_t r = ++R;
	size_t b = m * sizeof(double);
	if (r > lp)
		await(0, r - lp);
	memcpy(inl(me, r), sbuf, b);
	if (me == 0) {
		await_range(1, n, r);
		if (reduce)
			fold(rbuf, m, inl, r, 0, 0, n);
		else
			for (int q = 0; q < n; q++)
				memcpy(rbuf + (size_t)q * m, inl(q, r), b);
	}
	post(r);
	seen_all = 0;
}

/* Scatter: the root writes every block (inline while they fit, else in its
 * staging buffer), each process reads its own. */
static void c_scatter(size_t m)
{
	uint32_t r = ++R;
	size_t b = m * sizeof(double);
	double *slot = (size_t)n * b <= SHMRUN_INLINE_LEN ? inl(0, r) : stg(0, r);
	uint32_t back = (size_t)n * b <= SHMRUN_INLINE_LEN ? lp : 2;
	if (me == 0) {
		if (r > back)
			await_range(1, n, r - back);
		memcpy(slot, sbuf, (size_t)n * b);
		post(r);
		memcpy(rbuf, slot, b);
	} else {
		await(0, r);
		memcpy(rbuf, slot + (size_t)me * m, b);
		post(r);
	}
	seen_all = 0;
}

/* All-to-all exchanges of blocks: every process writes its blocks (inline
 * while they fit) and reads its block of everyone's. */
static double *blocks(int q, uint32_t r)
{
	return (size_t)n * sizeof(double) <= SHMRUN_INLINE_LEN ? inl(q, r) : stg(q, r);
}

static void c_allgather(size_t m)
{
	uint32_t r = open_exchange();
	size_t b = m * sizeof(double);
	memcpy(inl(me, r), sbuf, b);
	post(r);
	close_exchange(r);
	for (int q = 0; q < n; q++)
		memcpy(rbuf + (size_t)q * m, inl(q, r), b);
}

static void c_alltoall(size_t m)
{
	uint32_t r = open_exchange();
	size_t b = m * sizeof(double);
	memcpy(blocks(me, r), sbuf, (size_t)n * b);
	post(r);
	close_exchange(r);
	for (int q = 0; q < n; q++)
		memcpy(rbuf + (size_t)q * m, blocks(q, r) + (size_t)me * m, b);
}

static void c_reduce_scatter_block(size_t m)
{
	uint32_t r = open_exchange();
	size_t b = m * sizeof(double);
	memcpy(blocks(me, r), sbuf, (size_t)n * b);
	post(r);
	close_exchange(r);
	fold(rbuf, m, blocks, r, (size_t)me * m, 0, n);
}

/* Scan: a process reads the lower ranks' values and publishes once it has;
 * its own line of round r-P is free once every higher rank has published
 * round r-P. */
static void c_scan(size_t m)
{
	uint32_t r = ++R;
	size_t b = m * sizeof(double);
	if (r > lp)
		await_range(me + 1, n, r - lp);
	memcpy(inl(me, r), sbuf, b);
	await_range(0, me, r);
	fold(rbuf, m, inl, r, 0, 0, me + 1);
	post(r);
	seen_all = 0;
}

static void coll_call(const struct coll_row *row)
{
	switch (row->op) {
	case COLL_ALLREDUCE:
	case COLL_IALLREDUCE:
	case COLL_IALLREDUCE_TEST:
		c_allreduce(row->m);
		break;
	case COLL_BCAST:
		c_bcast(row->m);
		break;
	case COLL_REDUCE:
		c_gather_reduce(1, row->m);
		break;
	case COLL_GATHER:
		c_gather_reduce(0, row->m);
		break;
	case COLL_SCATTER:
		c_scatter(row->m);
		break;
	case COLL_ALLGATHER:
		c_allgather(row->m);
		break;
	case COLL_ALLTOALL:
		c_alltoall(row->m);
		break;
	case COLL_SCAN:
		c_scan(row->m);
		break;
	case COLL_REDUCE_SCATTER_BLOCK:
		c_reduce_scatter_block(row->m);
		break;
	}
}

/* ---- rows and timing ------------------------------------------------------ */

enum kind { LOOP, SYNC, BARRIER };

struct meas {
	char name[64];
	enum kind kind;
	int row; /* coll_rows index, or -1 for the barrier */
};

static struct meas table[2 * NCOLL + 1];
static int nmeas;

static void build_table(void)
{
	for (int i = 0; i < NCOLL; i++) {
		struct meas *l = &table[nmeas++], *s = &table[nmeas++];
		snprintf(l->name, sizeof l->name, "%s", coll_rows[i].name);
		l->kind = LOOP;
		l->row = i;
		snprintf(s->name, sizeof s->name, "%s_sync", coll_rows[i].name);
		s->kind = SYNC;
		s->row = i;
	}
	/* The floor of Barrier on any communicator, a split one included: a
	 * round every process publishes and waits for. */
	snprintf(table[nmeas].name, sizeof table[nmeas].name, "flag_barrier");
	table[nmeas].kind = BARRIER;
	table[nmeas++].row = -1;
}

/* One batch of k calls; process 0 returns its length: first start to last
 * end for loops, the slowest process's time inside the calls for _sync. */
static int64_t timed_batch(const struct meas *m, int64_t k)
{
	int64_t t0, t1, sum = 0;
	cbar();
	t0 = now_ns();
	for (int64_t i = 0; i < k; i++) {
		if (m->kind == BARRIER) {
			c_barrier();
		} else if (m->kind == LOOP) {
			coll_call(&coll_rows[m->row]);
		} else {
			int64_t s;
			cbar();
			s = now_ns();
			coll_call(&coll_rows[m->row]);
			sum += now_ns() - s;
		}
	}
	t1 = now_ns();
	ctl->t0[me] = m->kind == SYNC ? 0 : t0;
	ctl->t1[me] = m->kind == SYNC ? sum : t1;
	cbar();
	if (me != 0)
		return 0;
	t0 = ctl->t0[0];
	t1 = ctl->t1[0];
	for (int q = 1; q < n; q++) {
		if (ctl->t0[q] < t0)
			t0 = ctl->t0[q];
		if (ctl->t1[q] > t1)
			t1 = ctl->t1[q];
	}
	return t1 - t0;
}

static void run(const struct meas *m, const struct plan *plan)
{
	struct plan p = *plan;
	int64_t k = 1, t = 0;
	int nv;
	double *v;

	if (m->row >= 0)
		coll_prepare(&coll_rows[m->row], me, n, 1, sbuf, rbuf);
	timed_batch(m, 1);
	for (;;) {
		int64_t t2;
		t = timed_batch(m, k);
		t2 = timed_batch(m, k);
		if (t2 < t)
			t = t2;
		if (me == 0) {
			ctl->next = t < p.batch_ns ? plan_grow(k, t, p.batch_ns) : 0;
			ctl->nbatch = plan_batches(&p, k, t);
		}
		cbar();
		if (!ctl->next)
			break;
		k = ctl->next;
		cbar(); /* process 0 writes next again only after everyone read it */
	}
	p.batches = (int)ctl->nbatch;
	nv = p.rounds * p.batches;
	v = malloc(sizeof(double) * (size_t)nv);
	if (!v) {
		perror("malloc");
		exit(1);
	}
	for (int i = 0; i < nv; i++)
		v[i] = (double)timed_batch(m, k) / (double)k;
	if (m->row >= 0) {
		/* The last timed call's answer, then one call with fresh inputs
		 * and poisoned outputs. */
		long wrong = coll_verify(&coll_rows[m->row], m->name, me, n, 1, sbuf, rbuf);
		cbar();
		coll_prepare(&coll_rows[m->row], me, n, 7, sbuf, rbuf);
		coll_call(&coll_rows[m->row]);
		ctl->wrong[me] = wrong + coll_verify(&coll_rows[m->row], m->name, me, n, 7, sbuf, rbuf);
	}
	cbar();
	if (me == 0) {
		report(m->name, &p, v, k);
		if (m->row >= 0) {
			long wrong = 0;
			for (int q = 0; q < n; q++)
				wrong += ctl->wrong[q];
			printf("INFO check %s %s\n", m->name, wrong ? "WRONG" : "ok");
			fflush(stdout);
		}
	}
	cbar();
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
	int quick = 0, list = 0, all = 0, nsel = 0, ncpu = 0, failed = 0;
	int sel[2 * NCOLL + 1] = {0}, cpus[MAXN];
	cpu_set_t allowed;
	pid_t kids[MAXN];
	size_t cap;

	build_table();
	args.n = 2;
	if (bench_parse(argc, argv, "collimit", meas_name, nmeas, sel, 1, MAXN, 1, &args))
		return 2;
	n = args.n;
	lp = (uint32_t)shmrun_coll_parities((uint64_t)n);
	quick = args.quick, list = args.list, all = args.all;
	if (list) {
		for (int j = 0; j < nmeas; j++)
			printf("%s\n", table[j].name);
		return 0;
	}
	if (quick)
		p = &plan_quick;
	for (int j = 0; j < nmeas; j++) {
		if (all)
			sel[j] = 1;
		nsel += sel[j];
	}
	if (!nsel) {
		fprintf(stderr, "usage: collimit -n N [--quick] [--list] all | NAME...\n");
		return 2;
	}
	if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
		for (int c = 0; c < CPU_SETSIZE && ncpu < MAXN; c++)
			if (CPU_ISSET(c, &allowed))
				cpus[ncpu++] = c;
	oversub = n > ncpu;

	chunk = shmrun_coll_chunk((uint64_t)n, PAGE);
	ctl = mmap(NULL, sizeof *ctl, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	area = mmap(NULL, shmrun_coll_total(PAGE, (uint64_t)n), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ctl == MAP_FAILED || area == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(ctl, 0, sizeof *ctl);
	memset(area, 0, shmrun_coll_total(PAGE, (uint64_t)n));

	printf("INFO ranks %d %s\n", n, oversub ? "unpinned, spin then yield" : "pinned, spin");
	printf("INFO mode %s rounds %d batches %d batch_ns %lld\n", quick ? "quick" : "full",
	       p->rounds, p->batches, (long long)p->batch_ns);
	fflush(stdout); /* nothing buffered may be printed twice after fork */

	me = 0;
	pid_t parent = getpid();
	fork_watch_parent();
	for (int q = 1; q < n; q++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			fork_watch_child(parent);
			me = q;
			break;
		}
		kids[q] = pid;
	}
	if (!oversub && pin(cpus[me]) != 0)
		fprintf(stderr, "collimit: pinning to cpu %d: %s\n", cpus[me], strerror(errno));
	cap = COLL_BIG > (size_t)n ? COLL_BIG : (size_t)n;
	sbuf = calloc(cap, sizeof(double));
	rbuf = calloc(cap, sizeof(double));
	if (!sbuf || !rbuf) {
		perror("calloc");
		return 1;
	}
	bench_prefault(sbuf, cap * sizeof(double)); /* calloc's pages are untouched */
	bench_prefault(rbuf, cap * sizeof(double));
	scratch = malloc(SINGLE_PIECE);
	if (!scratch) {
		perror("malloc");
		return 1;
	}
	bench_prefault(scratch, SINGLE_PIECE);

	/* Single copy if every process can read its successor's memory. */
	ctl->pid[me] = getpid();
	ctl->sbuf[me] = (uint64_t)(uintptr_t)sbuf;
	ctl->rbuf[me] = (uint64_t)(uintptr_t)rbuf;
	cbar();
	if (n > 1) {
		double probe;
		struct iovec l = {&probe, sizeof probe},
			     r = {(void *)(uintptr_t)ctl->sbuf[(me + 1) % n], sizeof probe};
		if (process_vm_readv((pid_t)ctl->pid[(me + 1) % n], &l, 1, &r, 1, 0) != sizeof probe)
			__atomic_store_n(&ctl->single_failed, 1, __ATOMIC_RELAXED);
	}
	cbar();
	single = n > 1 && !ctl->single_failed;
	if (me == 0) {
		printf("INFO single_copy %s\n", single ? "process_vm_readv" : "off (staging only)");
		fflush(stdout);
	}

	for (int j = 0; j < nmeas; j++)
		if (sel[j])
			run(&table[j], p);

	if (me != 0)
		_exit(0);
	for (int q = 1; q < n; q++) {
		int status = 0;
		if (waitpid(kids[q], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			failed = 1;
	}
	if (failed) {
		fprintf(stderr, "collimit: a process failed\n");
		return 1;
	}
	return 0;
}
