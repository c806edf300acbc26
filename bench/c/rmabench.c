/*
 * rmabench - MPI-3 shared-window (one-sided) micro-benchmarks, written for
 * shmrun's comparison against Open MPI (osc/sm) and MPICH on one node.
 *
 *   mpirun -n 2 rmabench [--quick] [--list] all | NAME...
 *
 * Prints "RESULT <name> <median_ns_per_op> <min_ns> <max_ns> <iterations>"
 * per measurement (see benchutil.h for the statistics) and "INFO ..." lines
 * describing the run. Every other line on stdout comes from the MPI library.
 *
 * Method, the same for every runtime so that ratios mean something:
 *   - Origin-side rows ("origin" kind) run on rank 0 against rank 1 while
 *     every other rank, the target included, is idle inside the runtime: it
 *     waits in the MPI_Barrier that opens the next batch (in MPI_Bcast while
 *     calibrating). These are origin costs with an idle target, not round
 *     trips; put8_flush_touched is the row with a busy target.
 *   - Every RMA latency includes the call that completes it (flush, unlock or
 *     complete): an RMA call alone may only queue work.
 *   - Collective rows ("all" kind) run the body on every rank; rank 0's clock
 *     times the batch. Contended rows ("span" kind) time from the first rank's
 *     start to the last rank's end on the node-wide monotonic clock, so the
 *     closing barrier is not part of the figure; ns/op is per rank.
 *   - Point-to-point rows (p2prows.h) pair the ranks as (r, r^1), time
 *     first start to last end like the contended rows, and report per
 *     message (a round trip is two, a window sixty-four).
 *   - The window comes from MPI_Win_allocate_shared and every rank writes its
 *     whole part once before any measurement, so no row pays first-touch
 *     page faults except the alloc_touch_* rows that measure exactly that.
 */
#define _GNU_SOURCE /* sched_getaffinity */
#include <mpi.h>

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchutil.h"
#include "collrows.h"
#include "p2prows.h"

#define CACHELINE 64
#define PAGE 4096

/* Fixed word offsets inside a rank's part, each on its own cache line so no
 * measurement disturbs the line another one uses. */
#define OFF_PUT 0         /* put8 / get8 / pscw target */
#define OFF_ACC 64        /* acc_sum_i64 */
#define OFF_FOP 128       /* fetch_and_op_i64 */
#define OFF_CAS 192       /* cas_i64 */
#define OFF_GACC 256      /* get_acc_sum_i64 */
#define OFF_TOUCH 320     /* put8_flush_touched: data word at rank 1 */
#define OFF_ACK 384       /* put8_flush_touched: ack word at rank 0 */
#define OFF_CONTEND 4096  /* contended/distinct block at rank 0 (own page) */

enum kind {
	ORIGIN, /* rank 0 works, everyone else idles in MPI_Barrier */
	ALL,    /* every rank runs the body, rank 0's time */
	SPAN,   /* every rank runs the body, first start to last end */
	SYNC,   /* every rank runs the body, which times its calls alone (the
		 * slowest rank's sum); barriers between calls not counted */
};

struct ctx {
	int rank, size;
	MPI_Win win;       /* main window, lives for the whole run */
	char *base;        /* my part of win */
	char *part0;       /* rank 0's part, load/store view */
	char *src;         /* rank 0's private, pre-faulted put source */
	MPI_Group g_origin, g_target; /* {0} and {1} for PSCW */
	int64_t seq;       /* running counter for cas / touched protocols */
	int64_t ops;       /* operations of the row this rank made (atomic rows' answers) */
	long cas_fail;     /* CAS that did not succeed: a runtime bug */
	int eager;         /* touched row: puts land without target progress */
	double *cs, *cr;   /* collective rows: send and receive buffers */
	int64_t sync_ns;   /* SYNC rows: this rank's time inside the calls */
	MPI_Comm sub;      /* barrier_subcomm: world split, ranks reversed */
	long wrong;        /* answers found wrong on this rank (collective, p2p) */
	char *ps, *pr;     /* p2p rows: send and receive buffers, */
	size_t pcap;       /* their bytes */
	int64_t pseq;      /* p2p rows: operations so far, in step in a pair */
	MPI_Request preq[P2P_WINDOW_LEN]; /* p2p window rows: requests and */
	MPI_Status pst[P2P_WINDOW_LEN];   /* statuses (osu_bw's reqstat) */
	MPI_Request ppers[P2P_WINDOW_LEN]; /* msgrate_8_persistent: the window's */
	MPI_Win xwin;      /* flavor rows: their window, */
	char *xmem;        /* the memory it exposes, */
	MPI_Aint xdisp;    /* the displacement of rank 1's first byte */
	MPI_Datatype dt;   /* datatype rows: the type, */
	double *dmat;      /* rank 0's private matrix */
	double *sl, *sr;   /* stencil row: the neighbors' parts (NULL at the ends) */
};

struct meas {
	const char *name;
	enum kind kind;
	int need2;     /* needs rank 1 */
	int full_only; /* skipped by "all" in --quick mode */
	size_t arg;    /* bytes for put_bw / alloc rows; coll_rows index */
	void (*setup)(struct ctx *, const struct meas *);
	void (*body)(struct ctx *, const struct meas *, int64_t k);
	void (*teardown)(struct ctx *, const struct meas *);
};

static void die(const char *what, int rc)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;
	MPI_Error_string(rc, msg, &len);
	fprintf(stderr, "rmabench: %s failed: %s\n", what, msg);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

/* The default handler (MPI_ERRORS_ARE_FATAL) aborts on any error already;
 * CHECK on setup calls only adds the name of the call that failed. Timed
 * bodies call MPI directly, so the loops hold nothing but the operations. */
#define CHECK(call)                       \
	do {                              \
		int rc_ = (call);         \
		if (rc_ != MPI_SUCCESS)   \
			die(#call, rc_);  \
	} while (0)

static const int64_t one = 1;

/* ---- setup / teardown helpers ------------------------------------------ */

static void lockall_origin(struct ctx *c, const struct meas *m)
{
	(void)m;
	if (c->rank == 0)
		CHECK(MPI_Win_lock_all(0, c->win));
}

static void unlockall_origin(struct ctx *c, const struct meas *m)
{
	(void)m;
	if (c->rank == 0)
		CHECK(MPI_Win_unlock_all(c->win));
}

static void lockall_every(struct ctx *c, const struct meas *m)
{
	(void)m;
	CHECK(MPI_Win_lock_all(0, c->win));
}

static void unlockall_every(struct ctx *c, const struct meas *m)
{
	(void)m;
	CHECK(MPI_Win_unlock_all(c->win));
}

static void cas_setup(struct ctx *c, const struct meas *m)
{
	/* Each CAS must succeed (compare = the value the previous one wrote), so
	 * the row measures a successful swap. The target word starts at 0. */
	if (c->rank == 1)
		__atomic_store_n((int64_t *)(c->base + OFF_CAS), 0, __ATOMIC_SEQ_CST);
	c->seq = 0;
	c->cas_fail = 0;
	CHECK(MPI_Barrier(MPI_COMM_WORLD));
	lockall_origin(c, m);
}

/* Every CAS of the row swapped (the target word went 0, 1, 2, ...), and
 * the word holds the last value swapped in: else the row's answer was
 * wrong, and its time means nothing. */
static void cas_teardown(struct ctx *c, const struct meas *m)
{
	unlockall_origin(c, m);
	CHECK(MPI_Barrier(MPI_COMM_WORLD));
	if (c->rank == 0) {
		int64_t word = -1;
		CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, c->win));
		CHECK(MPI_Get(&word, 1, MPI_INT64_T, 1, OFF_CAS, 1, MPI_INT64_T, c->win));
		CHECK(MPI_Win_unlock(1, c->win));
		if (c->cas_fail || word != c->seq)
			printf("INFO check cas_i64 WRONG on rank 0: %ld calls did not swap; the word is %lld, want %lld\n",
			       c->cas_fail, (long long)word, (long long)c->seq);
		printf("INFO check cas_i64 %s\n", c->cas_fail || word != c->seq ? "WRONG" : "ok");
		fflush(stdout);
	}
	CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

/*
 * Does a flushed put land in the target's memory while the target makes no
 * MPI call? Open MPI osc/sm copies eagerly (the unified model done directly);
 * MPICH 4.0 ch4 as built by Debian ships shared-window puts as active
 * messages that only the target's progress engine applies. The touched row
 * lets each runtime wait the cheapest correct way, decided by behaviour and
 * not by name: spin on plain loads when puts are eager, otherwise poke
 * progress with MPI_Iprobe between loads. The probe is safe on both kinds:
 * rank 1 spins at most 50 ms without MPI, then enters a barrier, which
 * lets a progress-driven runtime finish rank 0's flush.
 */
static void touched_setup(struct ctx *c, const struct meas *m)
{
	const int64_t magic = 0x70756e6374;
	int64_t *word = (int64_t *)(c->base + OFF_TOUCH);
	if (c->rank == 1)
		__atomic_store_n(word, 0, __ATOMIC_SEQ_CST);
	if (c->rank == 0)
		__atomic_store_n((int64_t *)(c->base + OFF_ACK), 0, __ATOMIC_SEQ_CST);
	c->seq = 0;
	c->eager = 0;
	CHECK(MPI_Barrier(MPI_COMM_WORLD));
	lockall_origin(c, m);
	if (c->rank == 0) {
		CHECK(MPI_Put(&magic, 8, MPI_BYTE, 1, OFF_TOUCH, 8, MPI_BYTE, c->win));
		CHECK(MPI_Win_flush(1, c->win));
	} else if (c->rank == 1) {
		int64_t t0 = now_ns();
		while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != magic &&
		       now_ns() - t0 < 50000000)
			;
		c->eager = __atomic_load_n(word, __ATOMIC_ACQUIRE) == magic;
	}
	/* Rank 0 arrives only after its flush returned, so after this barrier
	 * the probe put has landed either way and the word can be reset. */
	CHECK(MPI_Barrier(MPI_COMM_WORLD));
	if (c->rank == 1)
		__atomic_store_n(word, 0, __ATOMIC_SEQ_CST);
	CHECK(MPI_Barrier(MPI_COMM_WORLD));
	CHECK(MPI_Bcast(&c->eager, 1, MPI_INT, 1, MPI_COMM_WORLD));
	if (c->rank == 0) {
		printf("INFO put8_flush_touched target_wait %s\n",
		       c->eager ? "load-spin (puts land eagerly)"
				: "load-spin+MPI_Iprobe (puts need target progress)");
		fflush(stdout);
	}
}

/* touched_teardown: the answers of put8_flush_touched. A Put to the wrong
 * place stalls the loop (the run times out); here rank 1's word holds the
 * last value put and the 56 bytes after it nothing, rank 0's ack word the
 * last value acknowledged. */
static void touched_teardown(struct ctx *c, const struct meas *m)
{
	long wrong = 0, sum = 0;
	unlockall_origin(c, m);
	CHECK(MPI_Barrier(MPI_COMM_WORLD));
	const int64_t *w = (const int64_t *)(c->base + (c->rank == 1 ? OFF_TOUCH : OFF_ACK));
	if (c->rank <= 1 && __atomic_load_n(w, __ATOMIC_ACQUIRE) != c->seq) {
		printf("INFO check %s WRONG on rank %d: the last value is %lld, want %lld\n", m->name, c->rank,
		       (long long)__atomic_load_n(w, __ATOMIC_ACQUIRE), (long long)c->seq);
		wrong++;
	}
	for (int i = 1; c->rank == 1 && i < (OFF_ACK - OFF_TOUCH) / 8; i++)
		if (__atomic_load_n(w + i, __ATOMIC_RELAXED) != 0 && !wrong++)
			printf("INFO check %s WRONG on rank 1: %d bytes past the word hold %lld\n", m->name, 8 * i,
			       (long long)__atomic_load_n(w + i, __ATOMIC_RELAXED));
	CHECK(MPI_Reduce(&wrong, &sum, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
	if (c->rank == 0)
		printf("INFO check %s %s\n", m->name, sum ? "WRONG" : "ok");
	fflush(stdout);
}

static void fence_open(struct ctx *c, const struct meas *m)
{
	(void)m;
	CHECK(MPI_Win_fence(0, c->win));
}

static void fence_close(struct ctx *c, const struct meas *m)
{
	(void)m;
	CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, c->win));
}

/* ---- bodies ------------------------------------------------------------- */

static void put8_flush(struct ctx *c, const struct meas *m, int64_t k)
{
	(void)m;
	for (int64_t i = 0; i < k; i++) {
		MPI_Put(c->src, 8, MPI_BYTE, 1, OFF_PUT, 8, MPI_BYTE, c->win);
		MPI_Win_flush(1, c->win);
	}
}

static void get8_flush(struct ctx *c, const struct meas *m, int64_t k)
{
	(void)m;
	for (int64_t i = 0; i < k; i++) {
		MPI_Get(c->src, 8, MPI_BYTE, 1, OFF_PUT, 8, MPI_BYTE, c->win);
		MPI_Win_flush(1, c->win);
	}
}

static void put_bw(struct ctx *c, const struct meas *m, int64_t k)
{
	int n = (int)m->arg;
	for (int64_t i = 0; i < k; i++) {
		MPI_Put(c->src, n, MPI_BYTE, 1, 0, n, MPI_BYTE, c->win);
		MPI_Win_flush(1, c->win);
	}
}

static void acc_sum(struct ctx *c, const struct meas *m, int64_t k)
{
	(void)m;
	for (int64_t i = 0; i < k; i++) {
		MPI_Accumulate(&one, 1, MPI_INT64_T, 1, OFF_ACC, 1, MPI_INT64_T, MPI_SUM,
			       c->win);
		MPI_Win_flush(1, c->win);
	}
}

static void fetch_and_op(struct ctx *c, const struct meas *m, int64_t k)
{
	int64_t res;
	(void)m;
	for (int64_t i = 0; i < k; i++) {
		MPI_Fetch_and_op(&one, &res, MPI_INT64_T, 1, OFF_FOP, MPI_SUM, c->win);
		MPI_Win_flush(1, c->win);
	}
}

static void cas(struct ctx *c, const struct meas *m, int64_t k)
{
	int64_t res;
	(void)m;
	for (int64_t i = 0; i < k; i++) {
		int64_t cmp = c->seq, nv = c->seq + 1;
		MPI_Compare_and_swap(&nv, &cmp, &res, MPI_INT64_T, 1, OFF_CAS, c->win);
		MPI_Win_flush(1, c->win);
		if (res == cmp)
			c->seq = nv;
		else
			c->cas_fail++; /* as the Go twin: the next compares with the word's value */
	}
}

static void get_acc_sum(struct ctx *c, const struct meas *m, int64_t k)
{
	int64_t res;
	(void)m;
	for (int64_t i = 0; i < k; i++) {
		MPI_Get_accumulate(&one, 1, MPI_INT64_T, &res, 1, MPI_INT64_T, 1, OFF_GACC,
				   1, MPI_INT64_T, MPI_SUM, c->win);
		MPI_Win_flush(1, c->win);
	}
}

static void lock_unlock_excl(struct ctx *c, const struct meas *m, int64_t k)
{
	(void)m;
	for (int64_t i = 0; i < k; i++) {
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, c->win);
		MPI_Win_unlock(1, c->win);
	}
}

static void lockall_unlockall(struct ctx *c, const struct meas *m, int64_t k)
{
	(void)m;
	for (int64_t i = 0; i < k; i++) {
		MPI_Win_lock_all(0, c->win);
		MPI_Win_unlock_all(c->win);
	}
}

static void barrier(struct ctx *c, const struct meas *m, int64_t k)
{
	(void)c;
	(void)m;
	for (int64_t i = 0; i < k; i++)
		MPI_Barrier(MPI_COMM_WORLD);
}

static void fence(struct ctx *c, const struct meas *m, int64_t k)
{
	(void)m;
	for (int64_t i = 0; i < k; i++)
		MPI_Win_fence(0, c->win);
}

/* One complete PSCW epoch per iteration; ranks other than 0 and 1 sit it out. */
static void pscw_put8(struct ctx *c, const struct meas *m, int64_t k)
{
	(void)m;
	if (c->rank == 1) {
		for (int64_t i = 0; i < k; i++) {
			MPI_Win_post(c->g_origin, 0, c->win);
			MPI_Win_wait(c->win);
		}
	} else if (c->rank == 0) {
		for (int64_t i = 0; i < k; i++) {
			MPI_Win_start(c->g_target, 0, c->win);
			MPI_Put(c->src, 8, MPI_BYTE, 1, OFF_PUT, 8, MPI_BYTE, c->win);
			MPI_Win_complete(c->win);
		}
	}
}

/* Collective create + free; with touch, every rank also writes one byte per
 * page of its own part, which is what a program does before using it and
 * where the page-fault cost of the backing (tmpfs file, memfd, ...) shows. */
static void alloc_free(struct ctx *c, const struct meas *m, int64_t k, int touch)
{
	(void)c;
	for (int64_t i = 0; i < k; i++) {
		char *p;
		MPI_Win w;
		CHECK(MPI_Win_allocate_shared((MPI_Aint)m->arg, 1, MPI_INFO_NULL,
					      MPI_COMM_WORLD, &p, &w));
		if (touch) {
			volatile char *vp = p;
			for (size_t off = 0; off < m->arg; off += PAGE)
				vp[off] = 1;
		}
		CHECK(MPI_Win_free(&w));
	}
}

static void alloc_free_plain(struct ctx *c, const struct meas *m, int64_t k)
{
	alloc_free(c, m, k, 0);
}

static void alloc_free_touch(struct ctx *c, const struct meas *m, int64_t k)
{
	alloc_free(c, m, k, 1);
}

/* Every rank, rank 0 included, adds to the same int64 at rank 0. */
static void fop_contended(struct ctx *c, const struct meas *m, int64_t k)
{
	int64_t res;
	(void)m;
	for (int64_t i = 0; i < k; i++) {
		MPI_Fetch_and_op(&one, &res, MPI_INT64_T, 0, OFF_CONTEND, MPI_SUM, c->win);
		MPI_Win_flush(0, c->win);
	}
}

/* Same target rank and the same calls, but each rank has its own cache line:
 * the difference to the contended row is the cost of sharing the line (plus
 * any per-target lock the runtime takes, which this row exposes). */
static void fop_distinct(struct ctx *c, const struct meas *m, int64_t k)
{
	int64_t res;
	MPI_Aint disp = OFF_CONTEND + (MPI_Aint)c->rank * CACHELINE;
	(void)m;
	for (int64_t i = 0; i < k; i++) {
		MPI_Fetch_and_op(&one, &res, MPI_INT64_T, 0, disp, MPI_SUM, c->win);
		MPI_Win_flush(0, c->win);
	}
}

/*
 * put8_flush_touched - the cross-core cost of a small put.
 *
 * put8_flush leaves the target idle, so after the first iteration the target
 * word stays in the origin core's cache and that row measures only the
 * runtime's origin-side path. Real programs put to a word the target then
 * reads, so the line must move between cores on every operation. Here:
 *
 *   rank 0: seq++; MPI_Put(seq -> word at rank 1); MPI_Win_flush(1);
 *           spin (atomic load) on its own ack word until it equals seq
 *   rank 1: seq++; spin (atomic load) on its word until it equals seq;
 *           store seq into rank 0's ack word (plain atomic store through
 *           the pointer from MPI_Win_shared_query)
 *
 * One iteration is a full round trip: put + flush pulling the data line
 * from rank 1's core, rank 1 pulling it back to observe the value, the ack
 * line going to rank 1 and back. On a runtime whose puts need target
 * progress, rank 1 calls MPI_Iprobe between its loads (see touched_setup),
 * as any correct program on that runtime must. Compare with climit
 * put8_fence_touched (the same protocol with a plain store + fence) and
 * with 2 x climit cacheline_pingpong.
 */
static void put8_touched(struct ctx *c, const struct meas *m, int64_t k)
{
	(void)m;
	if (c->rank == 0) {
		int64_t *ack = (int64_t *)(c->base + OFF_ACK);
		for (int64_t i = 0; i < k; i++) {
			int64_t v = ++c->seq;
			MPI_Put(&v, 8, MPI_BYTE, 1, OFF_TOUCH, 8, MPI_BYTE, c->win);
			MPI_Win_flush(1, c->win);
			while (__atomic_load_n(ack, __ATOMIC_ACQUIRE) != v)
				;
		}
	} else if (c->rank == 1) {
		int64_t *word = (int64_t *)(c->base + OFF_TOUCH);
		int64_t *ack = (int64_t *)(c->part0 + OFF_ACK);
		int flag;
		for (int64_t i = 0; i < k; i++) {
			int64_t v = ++c->seq;
			while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != v)
				if (!c->eager)
					MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
						   &flag, MPI_STATUS_IGNORE);
			__atomic_store_n(ack, v, __ATOMIC_RELEASE);
		}
	}
}

/*
 * The answers of the Put and Get rows: after the timed batches one more
 * operation of the row's size moves a pattern the timed ones never wrote,
 * and the rank that did not issue it checks every byte, reading its own
 * part under an exclusive lock on itself (legal in either memory model).
 * Without it a runtime that puts into the wrong rank's window (Debian's
 * MPICH 4.0.2 was seen doing so on MPI_Win_allocate windows) is timed as
 * if it had done the work.
 */
static unsigned char rma_pattern(size_t j, size_t n)
{
	return (unsigned char)(j * 131 + j / 251 + n + 1);
}

static void rma_check_teardown(struct ctx *c, const struct meas *m)
{
	int get = m->body == get8_flush;
	size_t n = m->body == put_bw ? m->arg : 8;
	MPI_Aint disp = m->body == put_bw ? 0 : OFF_PUT;
	char *at = c->base + disp, *buf = malloc(n);
	long wrong = 0, sum = 0;
	if (!buf)
		MPI_Abort(MPI_COMM_WORLD, 1);
	if (!get && c->rank == 0) {
		for (size_t j = 0; j < n; j++)
			buf[j] = (char)rma_pattern(j, n);
		CHECK(MPI_Put(buf, (int)n, MPI_BYTE, 1, disp, (int)n, MPI_BYTE, c->win));
		CHECK(MPI_Win_flush(1, c->win));
	}
	unlockall_origin(c, m);
	CHECK(MPI_Barrier(MPI_COMM_WORLD));
	if (c->rank == 1) {
		CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, c->win));
		for (size_t j = 0; j < n; j++)
			if (get)
				at[j] = (char)rma_pattern(j, n);
			else if ((unsigned char)at[j] != rma_pattern(j, n) && !wrong++)
				printf("INFO check %s WRONG on rank 1: byte %zu of %zu is %u, want %u\n",
				       m->name, j, n, (unsigned char)at[j], rma_pattern(j, n));
		CHECK(MPI_Win_unlock(1, c->win));
	}
	CHECK(MPI_Barrier(MPI_COMM_WORLD));
	if (get && c->rank == 0) {
		memset(buf, 0, n);
		CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, c->win));
		CHECK(MPI_Get(buf, (int)n, MPI_BYTE, 1, disp, (int)n, MPI_BYTE, c->win));
		CHECK(MPI_Win_unlock(1, c->win));
		for (size_t j = 0; j < n; j++)
			if ((unsigned char)buf[j] != rma_pattern(j, n) && !wrong++)
				printf("INFO check %s WRONG on rank 0: byte %zu of %zu is %u, want %u\n",
				       m->name, j, n, (unsigned char)buf[j], rma_pattern(j, n));
	}
	free(buf);
	CHECK(MPI_Reduce(&wrong, &sum, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
	if (c->rank == 0) {
		printf("INFO check %s %s\n", m->name, sum ? "WRONG" : "ok");
		fflush(stdout);
	}
}

/*
 * The answers of the atomic rows (acc_sum_i64, fetch_and_op_i64,
 * get_acc_sum_i64, fetch_and_op_contended_i64, fetch_and_op_distinct_i64):
 * their words start at 0, every operation adds 1, and timed_batch counts
 * the operations each rank made (c->ops). After the timed batches each
 * working rank makes ATOMIC_CHECK_OPS more of its row's operations and
 * keeps the values they fetch: on a word of its own each must be the count
 * of the operations made before it; on the contended word each rank's must
 * grow and all ranks' together must be every count once. Then every word
 * must hold the count of the operations made on it, read back under a
 * lock. A runtime that loses, repeats or misplaces an operation, or
 * fetches a stale value, must not be timed as if it had done the work.
 */
#define ATOMIC_CHECK_OPS 16

/* The rank that holds an atomic row's words. */
static int atomic_target(const struct meas *m)
{
	return m->kind == ORIGIN ? 1 : 0;
}

/* The displacement, at atomic_target, of the word rank r's operations go to. */
static MPI_Aint atomic_disp(const struct meas *m, int r)
{
	if (m->body == acc_sum)
		return OFF_ACC;
	if (m->body == fetch_and_op)
		return OFF_FOP;
	if (m->body == get_acc_sum)
		return OFF_GACC;
	if (m->body == fop_distinct)
		return OFF_CONTEND + (MPI_Aint)r * CACHELINE;
	return OFF_CONTEND;
}

/* Zero the row's words, their owner under an exclusive lock on itself, then
 * open the working ranks' epoch. */
static void atomic_setup(struct ctx *c, const struct meas *m)
{
	int t = atomic_target(m);
	if (c->rank == t) {
		CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, c->win));
		for (int r = 0; r < c->size; r++)
			*(int64_t *)(c->base + atomic_disp(m, r)) = 0;
		CHECK(MPI_Win_unlock(t, c->win));
	}
	CHECK(MPI_Barrier(MPI_COMM_WORLD));
	if (m->kind == ORIGIN)
		lockall_origin(c, m);
	else
		lockall_every(c, m);
}

static void atomic_teardown(struct ctx *c, const struct meas *m)
{
	int t = atomic_target(m), works = m->kind != ORIGIN || c->rank == 0;
	int shared = m->body == fop_contended, fetch = m->body != acc_sum;
	int nwords = m->body == fop_distinct ? c->size : 1, nall = shared ? c->size * ATOMIC_CHECK_OPS : 0;
	MPI_Aint disp = atomic_disp(m, c->rank);
	int64_t got[ATOMIC_CHECK_OPS], before = c->ops, *ops = NULL, *all = NULL, *words = NULL;
	long wrong = 0, sum = 0;
	for (int i = 0; works && i < ATOMIC_CHECK_OPS; i++) {
		got[i] = -1;
		if (m->body == acc_sum)
			CHECK(MPI_Accumulate(&one, 1, MPI_INT64_T, t, disp, 1, MPI_INT64_T, MPI_SUM, c->win));
		else if (m->body == get_acc_sum)
			CHECK(MPI_Get_accumulate(&one, 1, MPI_INT64_T, &got[i], 1, MPI_INT64_T, t, disp, 1,
						 MPI_INT64_T, MPI_SUM, c->win));
		else
			CHECK(MPI_Fetch_and_op(&one, &got[i], MPI_INT64_T, t, disp, MPI_SUM, c->win));
		CHECK(MPI_Win_flush(t, c->win));
	}
	if (works)
		c->ops += ATOMIC_CHECK_OPS;
	if (m->kind == ORIGIN)
		unlockall_origin(c, m);
	else
		unlockall_every(c, m);
	for (int i = 0; works && fetch && i < ATOMIC_CHECK_OPS; i++) {
		int64_t want = before + i;
		if (shared && i > 0 && got[i] <= got[i - 1]) {
			if (!wrong++)
				printf("INFO check %s WRONG on rank %d: call %d of %d fetched %lld after %lld\n",
				       m->name, c->rank, i + 1, ATOMIC_CHECK_OPS, (long long)got[i],
				       (long long)got[i - 1]);
		} else if (!shared && got[i] != want && !wrong++) {
			printf("INFO check %s WRONG on rank %d: call %d of %d fetched %lld, want %lld\n",
			       m->name, c->rank, i + 1, ATOMIC_CHECK_OPS, (long long)got[i], (long long)want);
		}
	}
	if (c->rank == 0) {
		ops = calloc((size_t)c->size, sizeof *ops);
		all = calloc((size_t)nall + 1, sizeof *all);
		words = calloc((size_t)nwords, sizeof *words);
		if (!ops || !all || !words)
			MPI_Abort(MPI_COMM_WORLD, 1);
	}
	CHECK(MPI_Gather(&c->ops, 1, MPI_INT64_T, ops, 1, MPI_INT64_T, 0, MPI_COMM_WORLD));
	if (shared)
		CHECK(MPI_Gather(got, ATOMIC_CHECK_OPS, MPI_INT64_T, all, ATOMIC_CHECK_OPS, MPI_INT64_T, 0,
				 MPI_COMM_WORLD));
	if (c->rank == 0) {
		int64_t total = 0, from;
		char *seen = calloc((size_t)nall + 1, 1);
		if (!seen)
			MPI_Abort(MPI_COMM_WORLD, 1);
		for (int r = 0; r < c->size; r++)
			total += ops[r];
		/* The contended word's last nall values, each fetched once. */
		from = total - nall;
		for (int j = 0; j < nall; j++) {
			if (all[j] < from || all[j] >= total || seen[all[j] - from]) {
				if (!wrong++)
					printf("INFO check %s WRONG on rank 0: the ranks' last %d calls fetched %lld, want each of %lld to %lld once\n",
					       m->name, nall, (long long)all[j], (long long)from, (long long)total - 1);
				continue;
			}
			seen[all[j] - from] = 1;
		}
		free(seen);
		CHECK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, c->win));
		for (int r = 0; r < nwords; r++) {
			words[r] = -1;
			CHECK(MPI_Get(&words[r], 1, MPI_INT64_T, t, atomic_disp(m, r), 1, MPI_INT64_T, c->win));
		}
		CHECK(MPI_Win_unlock(t, c->win));
		for (int r = 0; r < nwords; r++) {
			int64_t want = nwords > 1 ? ops[r] : total;
			if (words[r] != want && !wrong++)
				printf("INFO check %s WRONG on rank 0: the word at rank %d displacement %ld is %lld, want %lld\n",
				       m->name, t, (long)atomic_disp(m, r), (long long)words[r], (long long)want);
		}
	}
	free(ops);
	free(all);
	free(words);
	CHECK(MPI_Reduce(&wrong, &sum, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
	if (c->rank == 0) {
		printf("INFO check %s %s\n", m->name, sum ? "WRONG" : "ok");
		fflush(stdout);
	}
}

/* The answer of pscw_put8: one more epoch puts a pattern the timed ones
 * never wrote into the bytes rank 1 poisoned before its Post, and rank 1
 * checks every byte after its Wait. */
static void pscw_check_teardown(struct ctx *c, const struct meas *m)
{
	unsigned char buf[8], *at = (unsigned char *)c->base + OFF_PUT;
	long wrong = 0, sum = 0;
	if (c->rank == 0) {
		for (size_t j = 0; j < 8; j++)
			buf[j] = rma_pattern(j, 8);
		CHECK(MPI_Win_start(c->g_target, 0, c->win));
		CHECK(MPI_Put(buf, 8, MPI_BYTE, 1, OFF_PUT, 8, MPI_BYTE, c->win));
		CHECK(MPI_Win_complete(c->win));
	} else if (c->rank == 1) {
		memset(at, 0, 8);
		CHECK(MPI_Win_post(c->g_origin, 0, c->win));
		CHECK(MPI_Win_wait(c->win));
		for (size_t j = 0; j < 8; j++)
			if (at[j] != rma_pattern(j, 8) && !wrong++)
				printf("INFO check %s WRONG on rank 1: byte %zu of 8 is %u, want %u\n", m->name,
				       j, at[j], rma_pattern(j, 8));
	}
	CHECK(MPI_Reduce(&wrong, &sum, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
	if (c->rank == 0) {
		printf("INFO check %s %s\n", m->name, sum ? "WRONG" : "ok");
		fflush(stdout);
	}
}

/* ---- a textbook shared-window program ---------------------------------- */

/*
 * stencil_4k: one sweep of a 1-D three-point Jacobi over 4096 doubles per
 * rank in a shared window, each rank reading its neighbors' edge values
 * by load from their parts (MPI_Win_shared_query), then MPI_Win_sync,
 * MPI_Barrier, MPI_Win_sync under a lock_all epoch: the textbook shape of
 * a shared-memory MPI code. A sweep is 3 × 4096 loads and 4096 stores of
 * window memory, which is what shmcc --check's hooks see (bench/run times
 * it built with and without --check).
 */
#define STENCIL_N 4096

static void stencil_setup(struct ctx *c, const struct meas *m)
{
	(void)m;
	MPI_Aint size;
	int unit;
	CHECK(MPI_Win_allocate_shared(2 * STENCIL_N * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD,
				      &c->xmem, &c->xwin));
	double *a = (double *)c->xmem;
	for (int i = 0; i < 2 * STENCIL_N; i++)
		a[i] = c->rank + i % 7;
	c->sl = c->sr = NULL;
	if (c->rank > 0)
		CHECK(MPI_Win_shared_query(c->xwin, c->rank - 1, &size, &unit, &c->sl));
	if (c->rank < c->size - 1)
		CHECK(MPI_Win_shared_query(c->xwin, c->rank + 1, &size, &unit, &c->sr));
	c->seq = 0;
	CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, c->xwin));
	CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

static void stencil(struct ctx *c, const struct meas *m, int64_t k)
{
	(void)m;
	for (int64_t it = 0; it < k; it++) {
		int cur = (int)(c->seq & 1) * STENCIL_N, nxt = STENCIL_N - cur;
		const double *a = (const double *)c->xmem + cur;
		double *b = (double *)c->xmem + nxt;
		double lv = c->sl ? c->sl[cur + STENCIL_N - 1] : a[0];
		double rv = c->sr ? c->sr[cur] : a[STENCIL_N - 1];
		b[0] = (lv + a[0] + a[1]) / 3;
		for (int i = 1; i < STENCIL_N - 1; i++)
			b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3;
		b[STENCIL_N - 1] = (a[STENCIL_N - 2] + a[STENCIL_N - 1] + rv) / 3;
		MPI_Win_sync(c->xwin);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Win_sync(c->xwin);
		c->seq++;
	}
}

/* The answer of the last sweep: every rank computes its part of it again
 * from its input, with the neighbors' edge values taken from messages
 * instead of loads of their parts, and compares every element. */
static void stencil_teardown(struct ctx *c, const struct meas *m)
{
	int cur = (int)((c->seq - 1) & 1) * STENCIL_N, nxt = STENCIL_N - cur;
	int left = c->rank > 0 ? c->rank - 1 : MPI_PROC_NULL;
	int right = c->rank < c->size - 1 ? c->rank + 1 : MPI_PROC_NULL;
	const double *a = (const double *)c->xmem + cur, *b = (const double *)c->xmem + nxt;
	double lv = a[0], rv = a[STENCIL_N - 1];
	long wrong = 0, sum = 0;
	CHECK(MPI_Sendrecv(&a[STENCIL_N - 1], 1, MPI_DOUBLE, right, 11, &lv, 1, MPI_DOUBLE, left, 11,
			   MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	CHECK(MPI_Sendrecv(&a[0], 1, MPI_DOUBLE, left, 12, &rv, 1, MPI_DOUBLE, right, 12, MPI_COMM_WORLD,
			   MPI_STATUS_IGNORE));
	for (int i = 0; i < STENCIL_N; i++) {
		double want = (i == 0 ? lv : a[i - 1]) + a[i];
		want = (want + (i == STENCIL_N - 1 ? rv : a[i + 1])) / 3;
		if (b[i] != want && !wrong++)
			printf("INFO check %s WRONG on rank %d: element %d of sweep %lld is %.17g, want %.17g\n",
			       m->name, c->rank, i, (long long)c->seq, b[i], want);
	}
	CHECK(MPI_Win_unlock_all(c->xwin));
	CHECK(MPI_Win_free(&c->xwin));
	CHECK(MPI_Reduce(&wrong, &sum, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
	if (c->rank == 0) {
		printf("INFO check %s %s\n", m->name, sum ? "WRONG" : "ok");
		fflush(stdout);
	}
}

/* ---- table ------------------------------------------------------------- */

/* ---- collectives (collrows.h) -------------------------------------------- */

static void coll_call(struct ctx *c, const struct coll_row *row)
{
	int m = (int)row->m;
	switch (row->op) {
	case COLL_ALLREDUCE:
		MPI_Allreduce(c->cs, c->cr, m, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		break;
	case COLL_BCAST:
		MPI_Bcast(c->cs, m, MPI_DOUBLE, 0, MPI_COMM_WORLD);
		break;
	case COLL_REDUCE:
		MPI_Reduce(c->cs, c->cr, m, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
		break;
	case COLL_GATHER:
		MPI_Gather(c->cs, m, MPI_DOUBLE, c->cr, m, MPI_DOUBLE, 0, MPI_COMM_WORLD);
		break;
	case COLL_SCATTER:
		MPI_Scatter(c->cs, m, MPI_DOUBLE, c->cr, m, MPI_DOUBLE, 0, MPI_COMM_WORLD);
		break;
	case COLL_ALLGATHER:
		MPI_Allgather(c->cs, m, MPI_DOUBLE, c->cr, m, MPI_DOUBLE, MPI_COMM_WORLD);
		break;
	case COLL_ALLTOALL:
		MPI_Alltoall(c->cs, m, MPI_DOUBLE, c->cr, m, MPI_DOUBLE, MPI_COMM_WORLD);
		break;
	case COLL_SCAN:
		MPI_Scan(c->cs, c->cr, m, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		break;
	case COLL_REDUCE_SCATTER_BLOCK:
		MPI_Reduce_scatter_block(c->cs, c->cr, m, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		break;
	case COLL_IALLREDUCE: {
		MPI_Request r;
		MPI_Iallreduce(c->cs, c->cr, m, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
		break;
	}
	case COLL_IALLREDUCE_TEST: {
		MPI_Request r;
		int done = 0;
		MPI_Iallreduce(c->cs, c->cr, m, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
		while (!done)
			MPI_Test(&r, &done, MPI_STATUS_IGNORE);
		break;
	}
	}
}

static void coll_setup(struct ctx *c, const struct meas *m)
{
	c->wrong = 0;
	coll_prepare(&coll_rows[m->arg], c->rank, c->size, 1, c->cs, c->cr);
}

/* The answer of the last timed call, then one call with fresh inputs and
 * poisoned outputs; rank 0 says whether every rank got it right. */
static void coll_teardown(struct ctx *c, const struct meas *m)
{
	long wrong = 0;
	c->wrong += coll_verify(&coll_rows[m->arg], m->name, c->rank, c->size, 1, c->cs, c->cr);
	coll_prepare(&coll_rows[m->arg], c->rank, c->size, 7, c->cs, c->cr);
	coll_call(c, &coll_rows[m->arg]);
	c->wrong += coll_verify(&coll_rows[m->arg], m->name, c->rank, c->size, 7, c->cs, c->cr);
	MPI_Reduce(&c->wrong, &wrong, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (c->rank == 0) {
		printf("INFO check %s %s\n", m->name, wrong ? "WRONG" : "ok");
		fflush(stdout);
	}
}

static void coll_loop(struct ctx *c, const struct meas *m, int64_t k)
{
	const struct coll_row *row = &coll_rows[m->arg];
	for (int64_t i = 0; i < k; i++)
		coll_call(c, row);
}

static void coll_sync(struct ctx *c, const struct meas *m, int64_t k)
{
	const struct coll_row *row = &coll_rows[m->arg];
	int64_t sum = 0;
	for (int64_t i = 0; i < k; i++) {
		int64_t t0;
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = now_ns();
		coll_call(c, row);
		sum += now_ns() - t0;
	}
	c->sync_ns = sum;
}

/* barrier_subcomm: the same ranks as the world, in reverse order, in a
 * communicator of their own (MPI_Comm_split). Its answer: each rank's
 * place in the split, then an Allgather over it of the world ranks, which
 * must come back reversed. */
static void subcomm_setup(struct ctx *c, const struct meas *m)
{
	(void)m;
	CHECK(MPI_Comm_split(MPI_COMM_WORLD, 0, c->size - c->rank, &c->sub));
}

static void subcomm_barrier(struct ctx *c, const struct meas *m, int64_t k)
{
	(void)m;
	for (int64_t i = 0; i < k; i++)
		MPI_Barrier(c->sub);
}

static void subcomm_teardown(struct ctx *c, const struct meas *m)
{
	int r = -1, n = -1, *all = calloc((size_t)c->size, sizeof *all);
	long wrong = 0, sum = 0;
	MPI_Comm_rank(c->sub, &r);
	MPI_Comm_size(c->sub, &n);
	if (r != c->size - 1 - c->rank || n != c->size) {
		printf("INFO check %s WRONG on rank %d: rank %d of %d in the split\n", m->name, c->rank, r, n);
		wrong++;
	} else {
		CHECK(MPI_Allgather(&c->rank, 1, MPI_INT, all, 1, MPI_INT, c->sub));
		for (int q = 0; q < n; q++)
			if (all[q] != c->size - 1 - q && !wrong++)
				printf("INFO check %s WRONG on rank %d: rank %d of the split is world rank %d, want %d\n", m->name,
				       c->rank, q, all[q], c->size - 1 - q);
	}
	free(all);
	CHECK(MPI_Reduce(&wrong, &sum, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
	if (c->rank == 0)
		printf("INFO check %s %s\n", m->name, sum ? "WRONG" : "ok");
	fflush(stdout);
	MPI_Comm_free(&c->sub);
}

/* ---- point-to-point (p2prows.h) ----------------------------------------- */

/* This rank's partner, (r, r^1), or -1: a rank without one idles. */
static int p2p_partner(const struct ctx *c)
{
	int q = c->rank ^ 1;
	return q < c->size ? q : -1;
}

static void p2p_setup(struct ctx *c, const struct meas *m)
{
	const struct p2p_row *row = &p2p_rows[m->arg];
	size_t need = p2p_stride(row) * (size_t)p2p_slots(row);
	if (need < 64)
		need = 64;
	c->wrong = 0;
	if (need > c->pcap) {
		free(c->ps);
		free(c->pr);
		c->ps = malloc(need);
		c->pr = malloc(need);
		if (!c->ps || !c->pr)
			MPI_Abort(MPI_COMM_WORLD, 1);
		bench_prefault(c->ps, need);
		bench_prefault(c->pr, need);
		c->pcap = need;
	}
	int q = p2p_partner(c), nslot = p2p_slots(row), len = (int)row->bytes;
	size_t stride = p2p_stride(row);
	for (int j = 0; row->method == P2P_PERSIST && q >= 0 && j < P2P_WINDOW_LEN; j++) {
		if (!(c->rank & 1))
			CHECK(MPI_Send_init(c->ps + (size_t)(j % nslot) * stride, len, MPI_BYTE, q,
					    P2P_TAG_DATA, MPI_COMM_WORLD, &c->ppers[j]));
		else
			CHECK(MPI_Recv_init(c->pr + (size_t)(j % nslot) * stride, len, MPI_BYTE, q,
					    P2P_TAG_DATA, MPI_COMM_WORLD, &c->ppers[j]));
	}
}

/* One window's sends (the even rank) or receives (the odd one): Isends or
 * Irecvs, or the persistent requests started; then Waitall. */
static void p2p_window_ops(struct ctx *c, const struct p2p_row *row, int q, MPI_Status *st)
{
	int nslot = p2p_slots(row), len = (int)row->bytes, odd = c->rank & 1;
	size_t stride = p2p_stride(row);
	if (row->method == P2P_PERSIST) {
		MPI_Startall(P2P_WINDOW_LEN, c->ppers);
		MPI_Waitall(P2P_WINDOW_LEN, c->ppers, st);
		return;
	}
	for (int j = 0; j < P2P_WINDOW_LEN; j++) {
		if (!odd)
			MPI_Isend(c->ps + (size_t)(j % nslot) * stride, len, MPI_BYTE, q, P2P_TAG_DATA,
				  MPI_COMM_WORLD, &c->preq[j]);
		else
			MPI_Irecv(c->pr + (size_t)(j % nslot) * stride, len, MPI_BYTE, q, P2P_TAG_DATA,
				  MPI_COMM_WORLD, &c->preq[j]);
	}
	MPI_Waitall(P2P_WINDOW_LEN, c->preq, st);
}

static inline void p2p_check(struct ctx *c, const struct meas *m, const char *buf, size_t len,
			     uint64_t v)
{
	if (!p2p_stamp_ok(buf, len, v))
		p2p_stamp_wrong(m->name, c->rank, &c->wrong, buf, len, v);
}

/* pingpong_SIZE: a round trip of blocking Send and Recv per operation. */
static void p2p_pingpong(struct ctx *c, const struct meas *m, int64_t k)
{
	const struct p2p_row *row = &p2p_rows[m->arg];
	int q = p2p_partner(c), pair = c->rank / 2, len = (int)row->bytes;
	if (q < 0)
		return;
	for (int64_t i = 0; i < k; i++) {
		int64_t s = ++c->pseq;
		if (!(c->rank & 1)) {
			p2p_put_stamp(c->ps, row->bytes, p2p_stamp(s, pair, 0, 0));
			MPI_Send(c->ps, len, MPI_BYTE, q, P2P_TAG_DATA, MPI_COMM_WORLD);
			MPI_Recv(c->pr, len, MPI_BYTE, q, P2P_TAG_DATA, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			p2p_check(c, m, c->pr, row->bytes, p2p_stamp(s, pair, 0, 1));
		} else {
			MPI_Recv(c->pr, len, MPI_BYTE, q, P2P_TAG_DATA, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			p2p_check(c, m, c->pr, row->bytes, p2p_stamp(s, pair, 0, 0));
			p2p_put_stamp(c->ps, row->bytes, p2p_stamp(s, pair, 0, 1));
			MPI_Send(c->ps, len, MPI_BYTE, q, P2P_TAG_DATA, MPI_COMM_WORLD);
		}
	}
}

/* bw_SIZE, msgrate_8: a window of Isends, Irecvs, Waitall, a 0-byte ack
 * (msgrate_8_persistent: of persistent requests, started by Startall). */
static void p2p_window(struct ctx *c, const struct meas *m, int64_t k)
{
	const struct p2p_row *row = &p2p_rows[m->arg];
	int q = p2p_partner(c), pair = c->rank / 2;
	int nslot = p2p_slots(row);
	size_t stride = p2p_stride(row);
	if (q < 0)
		return;
	for (int64_t i = 0; i < k; i++) {
		int64_t s = ++c->pseq;
		if (!(c->rank & 1)) {
			for (int j = 0; j < nslot; j++)
				p2p_put_stamp(c->ps + (size_t)j * stride, row->bytes,
					      p2p_stamp(s, pair, j, 0));
			p2p_window_ops(c, row, q, c->pst);
			MPI_Recv(NULL, 0, MPI_BYTE, q, P2P_TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			p2p_window_ops(c, row, q, c->pst);
			for (int j = 0; j < nslot; j++)
				p2p_check(c, m, c->pr + (size_t)j * stride, row->bytes,
					  p2p_stamp(s, pair, j, 0));
			MPI_Send(NULL, 0, MPI_BYTE, q, P2P_TAG_ACK, MPI_COMM_WORLD);
		}
	}
}

/* A receive's status that does not describe the message: say so, count it. */
static void p2p_status(struct ctx *c, const struct meas *m, MPI_Status *st, int q, size_t want)
{
	int got = -1;
	MPI_Get_count(st, MPI_BYTE, &got);
	if (st->MPI_SOURCE != q || st->MPI_TAG != P2P_TAG_DATA || got != (int)want) {
		printf("INFO check %s WRONG on rank %d: status source %d tag %d count %d, want %d %d %zu\n",
		       m->name, c->rank, st->MPI_SOURCE, st->MPI_TAG, got, q, P2P_TAG_DATA, want);
		fflush(stdout);
		c->wrong++;
	}
}

/* One more operation of the row with full patterns into poisoned buffers,
 * every byte and count checked; rank 0 says whether every rank got every
 * answer of the row right. */
static void p2p_teardown(struct ctx *c, const struct meas *m)
{
	const struct p2p_row *row = &p2p_rows[m->arg];
	int q = p2p_partner(c), pair = c->rank / 2, len = (int)row->bytes, odd = c->rank & 1;
	int nslot = p2p_slots(row);
	size_t stride = p2p_stride(row);
	long wrong = 0;
	MPI_Status *st = c->pst;
	if (q >= 0 && row->method == P2P_PINGPONG) {
		p2p_fill(c->ps, row->bytes, pair, 0, odd);
		p2p_poison(c->pr, row->bytes, pair, 0, !odd);
		if (!odd) {
			MPI_Send(c->ps, len, MPI_BYTE, q, P2P_TAG_DATA, MPI_COMM_WORLD);
			MPI_Recv(c->pr, len, MPI_BYTE, q, P2P_TAG_DATA, MPI_COMM_WORLD, &st[0]);
		} else {
			MPI_Recv(c->pr, len, MPI_BYTE, q, P2P_TAG_DATA, MPI_COMM_WORLD, &st[0]);
			MPI_Send(c->ps, len, MPI_BYTE, q, P2P_TAG_DATA, MPI_COMM_WORLD);
		}
		p2p_status(c, m, &st[0], q, row->bytes);
		c->wrong += p2p_verify(m->name, c->rank, c->pr, row->bytes, pair, 0, !odd);
	} else if (q >= 0 && !odd) {
		for (int j = 0; j < nslot; j++)
			p2p_fill(c->ps + (size_t)j * stride, row->bytes, pair, j, 0);
		p2p_window_ops(c, row, q, c->pst);
		MPI_Recv(NULL, 0, MPI_BYTE, q, P2P_TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else if (q >= 0) {
		for (int j = 0; j < nslot; j++)
			p2p_poison(c->pr + (size_t)j * stride, row->bytes, pair, j, 0);
		p2p_window_ops(c, row, q, st);
		for (int j = 0; j < P2P_WINDOW_LEN; j++)
			p2p_status(c, m, &st[j], q, row->bytes);
		for (int j = 0; j < nslot; j++)
			c->wrong += p2p_verify(m->name, c->rank, c->pr + (size_t)j * stride,
					       row->bytes, pair, j, 0);
		MPI_Send(NULL, 0, MPI_BYTE, q, P2P_TAG_ACK, MPI_COMM_WORLD);
	}
	for (int j = 0; row->method == P2P_PERSIST && q >= 0 && j < P2P_WINDOW_LEN; j++)
		CHECK(MPI_Request_free(&c->ppers[j]));
	MPI_Reduce(&c->wrong, &wrong, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (c->rank == 0) {
		printf("INFO check %s %s\n", m->name, wrong ? "WRONG" : "ok");
		fflush(stdout);
	}
}

/* Messages per timed operation: the p2p rows report per message. */
static int per_op(const struct meas *m)
{
	return m->setup == p2p_setup ? p2p_per_op(&p2p_rows[m->arg]) : 1;
}

#define KiB ((size_t)1024)
#define MiB (KiB * 1024)

/* ---- window flavors (issue 16) -------------------------------------------
 *
 * Rows on windows of the other flavors, each made in setup: MPI_Win_create
 * over MPI_Alloc_mem memory (XMEM_ALLOC) and over malloc'd memory
 * (XMEM_MALLOC), and MPI_Win_create_dynamic with an MPI_Alloc_mem region
 * attached (XMEM_DYNAMIC; displacements are MPI_Get_address values). The
 * teardown checks that a Put and a Get of a known word reach rank 1; the
 * MPI_Fetch_and_op rows check the values fetched and the count of
 * operations on their word, as the atomic rows do (atomic_teardown).
 */
enum { XMEM_ALLOC, XMEM_MALLOC, XMEM_DYNAMIC };
#define X_BYTES 4096
#define X_FOP 128
#define X_CHECK 64

static void flavor_setup(struct ctx *c, const struct meas *m)
{
	int kind = (int)m->arg;
	if (kind == XMEM_MALLOC) {
		c->xmem = aligned_alloc(4096, X_BYTES);
		if (!c->xmem)
			die("aligned_alloc", 0);
	} else {
		CHECK(MPI_Alloc_mem(X_BYTES, MPI_INFO_NULL, &c->xmem));
	}
	memset(c->xmem, 0, X_BYTES);
	c->xdisp = 0;
	if (kind == XMEM_DYNAMIC) {
		MPI_Aint mine, *all = calloc((size_t)c->size, sizeof *all);
		CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &c->xwin));
		CHECK(MPI_Win_attach(c->xwin, c->xmem, X_BYTES));
		CHECK(MPI_Get_address(c->xmem, &mine));
		CHECK(MPI_Allgather(&mine, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD));
		c->xdisp = all[1];
		free(all);
	} else {
		CHECK(MPI_Win_create(c->xmem, X_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &c->xwin));
	}
	if (c->rank == 0)
		CHECK(MPI_Win_lock_all(0, c->xwin));
}

static void x_fop(struct ctx *c, const struct meas *m, int64_t k);

static void flavor_teardown(struct ctx *c, const struct meas *m)
{
	int64_t magic = 0x5eed0000 + (int64_t)m->arg, got = 0, ops = 0;
	long wrong = 0, sum = 0;
	int fop = m->body == x_fop;
	for (int i = 0; fop && c->rank == 0 && i < ATOMIC_CHECK_OPS; i++) {
		int64_t res = -1;
		CHECK(MPI_Fetch_and_op(&one, &res, MPI_INT64_T, 1, c->xdisp + X_FOP, MPI_SUM, c->xwin));
		CHECK(MPI_Win_flush(1, c->xwin));
		if (res != c->ops + i && !wrong++)
			printf("INFO check %s WRONG on rank 0: call %d of %d fetched %lld, want %lld\n", m->name,
			       i + 1, ATOMIC_CHECK_OPS, (long long)res, (long long)(c->ops + i));
	}
	if (fop && c->rank == 0)
		c->ops += ATOMIC_CHECK_OPS;
	if (c->rank == 0) {
		CHECK(MPI_Put(&magic, 8, MPI_BYTE, 1, c->xdisp + X_CHECK, 8, MPI_BYTE, c->xwin));
		CHECK(MPI_Win_flush(1, c->xwin));
		CHECK(MPI_Get(&got, 8, MPI_BYTE, 1, c->xdisp + X_CHECK, 8, MPI_BYTE, c->xwin));
		CHECK(MPI_Win_unlock_all(c->xwin));
		wrong += got != magic;
	}
	CHECK(MPI_Barrier(MPI_COMM_WORLD));
	if (c->rank == 1) {
		/* Unified model: the window's memory is its public copy. */
		CHECK(MPI_Win_lock_all(0, c->xwin));
		CHECK(MPI_Win_sync(c->xwin));
		wrong += memcmp(c->xmem + X_CHECK, &magic, 8) != 0;
		CHECK(MPI_Win_unlock_all(c->xwin));
	}
	if (fop) {
		ops = c->ops;
		CHECK(MPI_Bcast(&ops, 1, MPI_INT64_T, 0, MPI_COMM_WORLD));
	}
	if (fop && c->rank == 1) {
		int64_t w;
		CHECK(MPI_Win_lock_all(0, c->xwin));
		CHECK(MPI_Win_sync(c->xwin));
		memcpy(&w, c->xmem + X_FOP, 8);
		CHECK(MPI_Win_unlock_all(c->xwin));
		if (w != ops && !wrong++)
			printf("INFO check %s WRONG on rank 1: the MPI_Fetch_and_op word is %lld, want %lld\n",
			       m->name, (long long)w, (long long)ops);
	}
	CHECK(MPI_Reduce(&wrong, &sum, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
	if (c->rank == 0) {
		printf("INFO check %s %s\n", m->name, sum ? "WRONG" : "ok");
		fflush(stdout);
	}
	if (m->arg == XMEM_DYNAMIC)
		CHECK(MPI_Win_detach(c->xwin, c->xmem));
	CHECK(MPI_Win_free(&c->xwin));
	if (m->arg == XMEM_MALLOC)
		free(c->xmem);
	else
		CHECK(MPI_Free_mem(c->xmem));
}

static void x_put8(struct ctx *c, const struct meas *m, int64_t k)
{
	(void)m;
	for (int64_t i = 0; i < k; i++) {
		MPI_Put(c->src, 8, MPI_BYTE, 1, c->xdisp, 8, MPI_BYTE, c->xwin);
		MPI_Win_flush(1, c->xwin);
	}
}

static void x_get8(struct ctx *c, const struct meas *m, int64_t k)
{
	(void)m;
	for (int64_t i = 0; i < k; i++) {
		MPI_Get(c->src, 8, MPI_BYTE, 1, c->xdisp, 8, MPI_BYTE, c->xwin);
		MPI_Win_flush(1, c->xwin);
	}
}

static void x_fop(struct ctx *c, const struct meas *m, int64_t k)
{
	int64_t res;
	(void)m;
	for (int64_t i = 0; i < k; i++) {
		MPI_Fetch_and_op(&one, &res, MPI_INT64_T, 1, c->xdisp + X_FOP, MPI_SUM, c->xwin);
		MPI_Win_flush(1, c->xwin);
	}
}


/* ---- derived datatypes (issue 17) ----------------------------------------
 *
 * A Put with the same derived datatype on both sides into rank 1's
 * 1024x1024 double matrix (an MPI_Win_allocate_shared window of 8 MiB a
 * rank) from the same place of rank 0's private matrix: one column
 * (MPI_Type_vector, 1024 blocks of 8 B, stride 8 KiB), a 64x64 sub-block
 * (MPI_Type_create_subarray) and 64 KiB as MPI_Type_contiguous. The
 * teardown puts a known matrix and checks every element the type covers.
 */
#define MAT_N 1024

static void dt_make(const struct meas *m, MPI_Datatype *t)
{
	int sizes[2] = {MAT_N, MAT_N}, subs[2] = {64, 64}, starts[2] = {100, 200};
	switch (m->arg) {
	case 0:
		CHECK(MPI_Type_vector(MAT_N, 1, MAT_N, MPI_DOUBLE, t));
		break;
	case 1:
		CHECK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_DOUBLE, t));
		break;
	default:
		CHECK(MPI_Type_contiguous(8192, MPI_DOUBLE, t));
	}
	CHECK(MPI_Type_commit(t));
}

static void dt_setup(struct ctx *c, const struct meas *m)
{
	char *base;
	dt_make(m, &c->dt);
	CHECK(MPI_Win_allocate_shared(8 * MAT_N * MAT_N, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base,
				      &c->xwin));
	c->xmem = base;
	c->dmat = malloc(8 * MAT_N * MAT_N);
	if (!c->dmat)
		die("malloc", 0);
	for (long i = 0; i < MAT_N * MAT_N; i++)
		c->dmat[i] = (double)i;
	if (c->rank == 0)
		CHECK(MPI_Win_lock_all(0, c->xwin));
}

static void dt_put(struct ctx *c, const struct meas *m, int64_t k)
{
	(void)m;
	for (int64_t i = 0; i < k; i++) {
		MPI_Put(c->dmat, 1, c->dt, 1, 0, 1, c->dt, c->xwin);
		MPI_Win_flush(1, c->xwin);
	}
}

static void dt_teardown(struct ctx *c, const struct meas *m)
{
	long wrong = 0, sum = 0;
	if (c->rank == 0) {
		for (long i = 0; i < MAT_N * MAT_N; i++)
			c->dmat[i] = -(double)i;
		CHECK(MPI_Put(c->dmat, 1, c->dt, 1, 0, 1, c->dt, c->xwin));
		CHECK(MPI_Win_unlock_all(c->xwin));
	}
	CHECK(MPI_Barrier(MPI_COMM_WORLD));
	if (c->rank == 1) {
		const double *got = (const double *)c->xmem;
		CHECK(MPI_Win_lock_all(0, c->xwin));
		CHECK(MPI_Win_sync(c->xwin));
		for (long i = 0; i < MAT_N * MAT_N; i++) {
			long r = i / MAT_N, col = i % MAT_N;
			int in = m->arg == 0 ? col == 0
			       : m->arg == 1 ? r >= 100 && r < 164 && col >= 200 && col < 264
					     : i < 8192;
			if (in && got[i] != -(double)i)
				wrong++;
		}
		CHECK(MPI_Win_unlock_all(c->xwin));
	}
	CHECK(MPI_Reduce(&wrong, &sum, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
	if (c->rank == 0) {
		printf("INFO check %s %s\n", m->name, sum ? "WRONG" : "ok");
		fflush(stdout);
	}
	CHECK(MPI_Win_free(&c->xwin));
	CHECK(MPI_Type_free(&c->dt));
	free(c->dmat);
}

/* pingpong_type_column: rank 0 sends a column of its private 1024x1024
 * matrix (a vector type) to rank 1, which receives it into the same column
 * of its matrix and sends it back; a round trip. The teardown sends a
 * known column once more and checks every element of rank 1's matrix. */
static void dtm_setup(struct ctx *c, const struct meas *m)
{
	(void)m;
	CHECK(MPI_Type_vector(MAT_N, 1, MAT_N, MPI_DOUBLE, &c->dt));
	CHECK(MPI_Type_commit(&c->dt));
	c->dmat = malloc(8 * MAT_N * MAT_N);
	if (!c->dmat)
		die("malloc", 0);
	for (long i = 0; i < MAT_N * MAT_N; i++)
		c->dmat[i] = c->rank == 0 ? (double)i : 0;
}

static void dtm_pingpong(struct ctx *c, const struct meas *m, int64_t k)
{
	(void)m;
	for (int64_t i = 0; i < k; i++) {
		if (c->rank == 0) {
			MPI_Send(c->dmat, 1, c->dt, 1, 7, MPI_COMM_WORLD);
			MPI_Recv(c->dmat, 1, c->dt, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (c->rank == 1) {
			MPI_Recv(c->dmat, 1, c->dt, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(c->dmat, 1, c->dt, 0, 7, MPI_COMM_WORLD);
		}
	}
}

static void dtm_teardown(struct ctx *c, const struct meas *m)
{
	long wrong = 0, sum = 0;
	if (c->rank == 0) {
		for (long i = 0; i < MAT_N * MAT_N; i++)
			c->dmat[i] = -(double)i;
		CHECK(MPI_Send(c->dmat, 1, c->dt, 1, 8, MPI_COMM_WORLD));
	} else if (c->rank == 1) {
		for (long i = 0; i < MAT_N * MAT_N; i++)
			c->dmat[i] = 1;
		CHECK(MPI_Recv(c->dmat, 1, c->dt, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		for (long i = 0; i < MAT_N * MAT_N; i++)
			if (c->dmat[i] != (i % MAT_N == 0 ? -(double)i : 1))
				wrong++;
	}
	CHECK(MPI_Reduce(&wrong, &sum, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
	if (c->rank == 0) {
		printf("INFO check %s %s\n", m->name, sum ? "WRONG" : "ok");
		fflush(stdout);
	}
	CHECK(MPI_Type_free(&c->dt));
	free(c->dmat);
}

/* A row of Sum operations on int64 words (atomic_setup): rank 0 on a word
 * at rank 1 (ORIGIN), or every rank on words at rank 0 (SPAN). */
#define ATOMIC(nm, kd, fn) {nm, kd, (kd) == ORIGIN, 0, 0, atomic_setup, fn, atomic_teardown}
/* A collective row of collrows.h (index i) and its barrier-separated twin. */
#define COLL(nm, i)                                                        \
	{nm, SPAN, 0, 0, i, coll_setup, coll_loop, coll_teardown},         \
	{nm "_sync", SYNC, 0, 0, i, coll_setup, coll_sync, coll_teardown}
/* A point-to-point row of p2prows.h (index i). */
#define P2P(nm, i, fn) {nm, SPAN, 1, 0, i, p2p_setup, fn, p2p_teardown}
#define FLAVOR(nm, mem, fn) {nm, ORIGIN, 1, 0, mem, flavor_setup, fn, flavor_teardown}
#define DTYPE(nm, i) {nm, ORIGIN, 1, 0, i, dt_setup, dt_put, dt_teardown}
#define PUT_BW(nm, bytes, full) \
	{nm, ORIGIN, 1, full, bytes, lockall_origin, put_bw, rma_check_teardown}

static const struct meas table[] = {
	{"put8_flush", ORIGIN, 1, 0, 0, lockall_origin, put8_flush, rma_check_teardown},
	{"get8_flush", ORIGIN, 1, 0, 0, lockall_origin, get8_flush, rma_check_teardown},
	FLAVOR("create_mem_put8_flush", XMEM_ALLOC, x_put8),
	FLAVOR("create_mem_get8_flush", XMEM_ALLOC, x_get8),
	FLAVOR("create_mem_fop_flush", XMEM_ALLOC, x_fop),
	FLAVOR("create_priv_put8_flush", XMEM_MALLOC, x_put8),
	FLAVOR("create_priv_get8_flush", XMEM_MALLOC, x_get8),
	FLAVOR("create_priv_fop_flush", XMEM_MALLOC, x_fop),
	FLAVOR("dynamic_put8_flush", XMEM_DYNAMIC, x_put8),
	FLAVOR("dynamic_get8_flush", XMEM_DYNAMIC, x_get8),
	DTYPE("put_type_column", 0),
	DTYPE("put_type_subarray_64", 1),
	DTYPE("put_type_contig_64k", 2),
	{"pingpong_type_column", ALL, 1, 0, 0, dtm_setup, dtm_pingpong, dtm_teardown},
	{"put8_flush_touched", ALL, 1, 0, 0, touched_setup, put8_touched, touched_teardown},
	PUT_BW("put_bw_4096", 4 * KiB, 0),
	PUT_BW("put_bw_65536", 64 * KiB, 0),
	PUT_BW("put_bw_1048576", 1 * MiB, 0),
	PUT_BW("put_bw_16777216", 16 * MiB, 1),
	PUT_BW("put_bw_67108864", 64 * MiB, 1),
	ATOMIC("acc_sum_i64", ORIGIN, acc_sum),
	ATOMIC("fetch_and_op_i64", ORIGIN, fetch_and_op),
	{"cas_i64", ORIGIN, 1, 0, 0, cas_setup, cas, cas_teardown},
	ATOMIC("get_acc_sum_i64", ORIGIN, get_acc_sum),
	{"lock_unlock_excl", ORIGIN, 1, 0, 0, NULL, lock_unlock_excl, NULL},
	{"lockall_unlockall", ORIGIN, 1, 0, 0, NULL, lockall_unlockall, NULL},
	{"barrier", ALL, 0, 0, 0, NULL, barrier, NULL},
	{"fence", ALL, 0, 0, 0, fence_open, fence, fence_close},
	{"pscw_put8", ALL, 1, 0, 0, NULL, pscw_put8, pscw_check_teardown},
	{"stencil_4k", ALL, 0, 0, 0, stencil_setup, stencil, stencil_teardown},
	{"alloc_free_1m", ALL, 0, 0, 1 * MiB, NULL, alloc_free_plain, NULL},
	{"alloc_free_256m", ALL, 0, 0, 256 * MiB, NULL, alloc_free_plain, NULL},
	{"alloc_touch_free_1m", ALL, 0, 0, 1 * MiB, NULL, alloc_free_touch, NULL},
	{"alloc_touch_free_256m", ALL, 0, 0, 256 * MiB, NULL, alloc_free_touch, NULL},
	ATOMIC("fetch_and_op_contended_i64", SPAN, fop_contended),
	ATOMIC("fetch_and_op_distinct_i64", SPAN, fop_distinct),
	COLL("allreduce_8", 0),
	COLL("allreduce_1m", 1),
	COLL("bcast_8", 2),
	COLL("bcast_1m", 3),
	COLL("reduce_8", 4),
	COLL("gather_8", 5),
	COLL("scatter_8", 6),
	COLL("allgather_8", 7),
	COLL("alltoall_8", 8),
	COLL("scan_8", 9),
	COLL("reduce_scatter_block_8", 10),
	COLL("iallreduce_8", 11),
	COLL("iallreduce_test_8", 12),
	/* The world's Barrier again, next to the split one: the host's
	 * cross-core latency drifts within a run, so the pair is compared
	 * measured side by side. */
	{"barrier_world", ALL, 0, 0, 0, NULL, barrier, NULL},
	{"barrier_subcomm", ALL, 0, 0, 0, subcomm_setup, subcomm_barrier, subcomm_teardown},
	P2P("pingpong_0", 0, p2p_pingpong),
	P2P("pingpong_8", 1, p2p_pingpong),
	P2P("pingpong_4k", 2, p2p_pingpong),
	P2P("pingpong_8k", 3, p2p_pingpong),
	P2P("pingpong_64k", 4, p2p_pingpong),
	P2P("pingpong_1m", 5, p2p_pingpong),
	P2P("pingpong_4m", 6, p2p_pingpong),
	P2P("pingpong_16m", 7, p2p_pingpong),
	P2P("bw_64k", 8, p2p_window),
	P2P("bw_1m", 9, p2p_window),
	P2P("msgrate_8", 10, p2p_window),
	P2P("msgrate_8_persistent", 11, p2p_window),
};
#define NMEAS ((int)(sizeof table / sizeof table[0]))

/* ---- driver ------------------------------------------------------------ */

/* One batch of k operations; the result is meaningful on rank 0 only. The
 * opening barrier lines the ranks up; in the origin kind the other ranks go
 * straight on to the next collective and idle there during the batch. */
static int64_t timed_batch(struct ctx *c, const struct meas *m, int64_t k)
{
	int64_t t0, t1;
	int works = m->kind != ORIGIN || c->rank == 0;
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = now_ns();
	if (works)
		m->body(c, m, k);
	t1 = now_ns();
	if (works)
		c->ops += k;
	if (m->kind == SPAN) {
		int64_t in[2] = {-t0, t1}, out[2];
		MPI_Reduce(in, out, 2, MPI_INT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
		return out[0] + out[1]; /* latest end - earliest start */
	}
	if (m->kind == SYNC) {
		int64_t out = 0;
		MPI_Reduce(&c->sync_ns, &out, 1, MPI_INT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
		return out;
	}
	return t1 - t0;
}

/* A calibration batch that happened to be slowed down (preemption) leaves k
 * too small; say so instead of silently reporting sub-millisecond batches. */
static void check_batch_length(const char *name, const struct plan *p, const double *v,
			       int64_t k)
{
	int n = p->rounds * p->batches, shorter = 0;
	for (int i = 0; i < n; i++)
		if (v[i] * (double)k < (double)p->batch_ns / 2)
			shorter++;
	if (shorter > n / 2) {
		printf("INFO warning %s: %d of %d batches shorter than %lld ns\n", name,
		       shorter, n, (long long)p->batch_ns / 2);
		fflush(stdout);
	}
}

static void run(struct ctx *c, const struct meas *m, const struct plan *plan)
{
	struct plan p = *plan;
	int64_t k = 1, t = 0;
	int n;
	double *v;

	c->ops = 0;
	if (m->setup)
		m->setup(c, m);
	MPI_Barrier(MPI_COMM_WORLD);

	/* One untimed operation first: runtimes set up lazily (the first
	 * accumulate or lock can take milliseconds), and calibrating on that
	 * would stop at k = 1. Calibration then warms caches and TLB. */
	timed_batch(c, m, 1);
	for (;;) {
		int64_t next = 0, t2;
		/* The shorter of two tries: a batch stretched by a preemption
		 * must not end calibration with k far too small. */
		t = timed_batch(c, m, k);
		t2 = timed_batch(c, m, k);
		if (t2 < t)
			t = t2;
		if (c->rank == 0 && t < p.batch_ns)
			next = plan_grow(k, t, p.batch_ns);
		MPI_Bcast(&next, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
		if (!next)
			break;
		k = next;
	}
	if (c->rank == 0)
		p.batches = plan_batches(&p, k, t);
	MPI_Bcast(&p.batches, 1, MPI_INT, 0, MPI_COMM_WORLD);

	n = p.rounds * p.batches;
	v = malloc(sizeof(double) * (size_t)n);
	if (!v)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int i = 0; i < n; i++)
		v[i] = (double)timed_batch(c, m, k) / (double)k / (double)per_op(m);
	MPI_Barrier(MPI_COMM_WORLD);

	if (m->teardown)
		m->teardown(c, m);
	MPI_Barrier(MPI_COMM_WORLD);
	if (c->rank == 0) {
		report(m->name, &p, v, k * per_op(m));
		check_batch_length(m->name, &p, v, k * per_op(m));
	}
	free(v);
}

/* Name the mapping that backs an address (from /proc/self/maps): it shows
 * which shared-memory mechanism the runtime really used for the window. */
static void print_backing(const char *what, const void *addr)
{
	char line[4096];
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		int pos = 0;
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &pos) < 2 || !pos)
			continue;
		if ((uintptr_t)addr >= lo && (uintptr_t)addr < hi) {
			line[strcspn(line, "\n")] = 0;
			printf("INFO %s %s\n", what, line[pos] ? line + pos : "[anonymous]");
			break;
		}
	}
	fclose(f);
}

/* This process's CPU affinity as a cpulist ("1", "0-1", "0,2"): shows
 * whether the launcher's binding option took effect. */
static void affinity_string(char *buf, size_t len)
{
	cpu_set_t set;
	size_t used = 0;
	buf[0] = 0;
	if (sched_getaffinity(0, sizeof set, &set) != 0) {
		snprintf(buf, len, "?");
		return;
	}
	for (int cpu = 0; cpu < CPU_SETSIZE && used + 16 < len; cpu++) {
		int end = cpu;
		if (!CPU_ISSET(cpu, &set))
			continue;
		while (end + 1 < CPU_SETSIZE && CPU_ISSET(end + 1, &set))
			end++;
		used += (size_t)snprintf(buf + used, len - used, used ? ",%d" : "%d", cpu);
		if (end > cpu)
			used += (size_t)snprintf(buf + used, len - used, "-%d", end);
		cpu = end;
	}
}

static void print_affinity(const struct ctx *c)
{
	enum { W = 64 };
	char mine[W], *all = NULL;
	affinity_string(mine, W);
	if (c->rank == 0)
		all = malloc((size_t)c->size * W);
	MPI_Gather(mine, W, MPI_CHAR, all, W, MPI_CHAR, 0, MPI_COMM_WORLD);
	if (c->rank == 0 && all) {
		printf("INFO affinity");
		for (int r = 0; r < c->size && r < 4; r++)
			printf(" r%d=%s", r, all + (size_t)r * W);
		printf("%s\n", c->size > 4 ? " ..." : "");
		fflush(stdout);
	}
	free(all);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: mpirun -n N rmabench [--thread-multiple] [--nodes] [--quick] [--list] all | NAME...\n");
}

/* The rows --nodes offers: those that reach other ranks only through MPI
 * calls, so that the ranks may be on different nodes; the main window is
 * then MPI_Win_allocate's. bench/cmd/rmabench's nodeRows are the same. */
static const char *node_rows[] = {
	"put8_flush", "get8_flush", "put_bw_4096", "put_bw_65536", "put_bw_1048576",
	"acc_sum_i64", "fetch_and_op_i64", "lock_unlock_excl", "barrier", "allreduce_8",
	"allreduce_1m", "bcast_8", "pingpong_8", "pingpong_4k", "pingpong_64k", "pingpong_1m",
	"bw_1m", "msgrate_8",
};

static int node_row(const char *name)
{
	for (size_t i = 0; i < sizeof node_rows / sizeof node_rows[0]; i++)
		if (!strcmp(node_rows[i], name))
			return 1;
	return 0;
}

static const char *meas_name(int j) { return table[j].name; }

int main(int argc, char **argv)
{
	struct bench_args args = {0};
	struct ctx c = {0};
	const struct plan *p = &plan_full;
	int quick = 0, list = 0, all = 0, nsel = 0;
	int sel[NMEAS] = {0};
	size_t part, bwmax = 0;
	MPI_Aint qsize;
	int qdisp;
	char lib[MPI_MAX_LIBRARY_VERSION_STRING];
	int liblen, multiple = 0, nodes = 0, provided = 0;

	/* The options before the others: --thread-multiple initializes with
	 * MPI_THREAD_MULTIPLE, the level the Go API over MPI needs (bench/run's
	 * openmpi _mt rows, the yardstick of its gompi rows); --nodes lets the
	 * ranks be on different nodes (node_rows). */
	while (argc > 1 && (!strcmp(argv[1], "--thread-multiple") || !strcmp(argv[1], "--nodes"))) {
		if (!strcmp(argv[1], "--nodes"))
			nodes = 1;
		else
			multiple = 1;
		argv[1] = argv[0];
		argc--, argv++;
	}
	if (multiple) {
		MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
		if (provided < MPI_THREAD_MULTIPLE) {
			fprintf(stderr, "rmabench: the MPI provides thread level %d, below MPI_THREAD_MULTIPLE\n", provided);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	} else {
		MPI_Init(&argc, &argv);
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &c.size);

	/* Every rank parses the same argv, so all agree on the list without
	 * communication. */
	if (bench_parse(argc, argv, "rmabench", meas_name, NMEAS, sel, 0, 0, c.rank == 0, &args)) {
		if (c.rank == 0)
			usage(stderr);
		MPI_Finalize();
		return 2;
	}
	quick = args.quick, list = args.list, all = args.all;
	/* --list prints what "all" runs in this mode, so a harness can tell
	 * which rows a killed run still owed. */
	if (list) {
		if (c.rank == 0)
			for (int j = 0; j < NMEAS; j++)
				if (!(quick && table[j].full_only) && (!nodes || node_row(table[j].name)))
					printf("%s\n", table[j].name);
		MPI_Finalize();
		return 0;
	}
	if (quick)
		p = &plan_quick;
	/* The table names its collective and point-to-point rows by hand;
	 * they must be collrows.h's and p2prows.h's. */
	for (int j = 0; j < NMEAS; j++)
		if (table[j].setup == p2p_setup && strcmp(table[j].name, p2p_rows[table[j].arg].name)) {
			fprintf(stderr, "rmabench: row %s is not p2prows.h's %s\n", table[j].name,
				p2p_rows[table[j].arg].name);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	for (int j = 0; j < NMEAS; j++)
		if (table[j].setup == coll_setup &&
		    strncmp(table[j].name, coll_rows[table[j].arg].name,
			    strlen(coll_rows[table[j].arg].name)) != 0) {
			fprintf(stderr, "rmabench: row %s is not collrows.h's %s\n",
				table[j].name, coll_rows[table[j].arg].name);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	for (int j = 0; j < NMEAS; j++) {
		if (all && !(quick && table[j].full_only) && (!nodes || node_row(table[j].name)))
			sel[j] = 1;
		if (sel[j] && nodes && !node_row(table[j].name)) {
			if (c.rank == 0)
				fprintf(stderr, "rmabench: %s is not a --nodes row\n", table[j].name);
			MPI_Finalize();
			return 2;
		}
		if (sel[j] && table[j].need2 && c.size < 2) {
			if (c.rank == 0)
				fprintf(stderr, "rmabench: %s needs at least 2 ranks\n",
					table[j].name);
			sel[j] = 0;
		}
		if (sel[j]) {
			nsel++;
			if (table[j].body == put_bw && table[j].arg > bwmax)
				bwmax = table[j].arg;
		}
	}
	if (!nsel) {
		if (c.rank == 0)
			usage(stderr);
		MPI_Finalize();
		return 2;
	}

	if (c.rank == 0) {
		MPI_Get_library_version(lib, &liblen);
		/* The version string can span lines; keep the first one. */
		lib[strcspn(lib, "\n")] = 0;
		printf("INFO library %s\n", lib);
		if (multiple)
			printf("INFO thread_level MPI_THREAD_MULTIPLE\n");
		printf("INFO ranks %d\n", c.size);
		printf("INFO mode %s rounds %d batches %d batch_ns %lld\n",
		       quick ? "quick" : "full", p->rounds, p->batches,
		       (long long)p->batch_ns);
		fflush(stdout);
	}

	/* Part sizes: rank 1 holds the bandwidth target, rank 0 the contended
	 * block (one line per rank, on its own page); all page multiples so each
	 * part starts page-aligned in the contiguous segment. */
	part = 2 * PAGE;
	if (c.rank == 0)
		part = OFF_CONTEND + (((size_t)c.size * CACHELINE + PAGE - 1) / PAGE) * PAGE;
	if (c.rank == 1 && bwmax > part)
		part = bwmax;
	if (nodes) {
		/* The ranks may be on different nodes: no load/store view of
		 * rank 0's part. */
		CHECK(MPI_Win_allocate((MPI_Aint)part, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &c.base, &c.win));
		memset(c.base, 0, part); /* pre-fault my part */
		c.part0 = NULL;
		MPI_Comm node;
		int nsize;
		CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
		MPI_Comm_size(node, &nsize);
		MPI_Comm_free(&node);
		if (c.rank == 0)
			printf("INFO window MPI_Win_allocate (--nodes); rank 0's node holds %d of %d ranks\n", nsize, c.size);
	} else {
		CHECK(MPI_Win_allocate_shared((MPI_Aint)part, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
					      &c.base, &c.win));
		memset(c.base, 0, part); /* pre-fault my part */
		CHECK(MPI_Win_shared_query(c.win, 0, &qsize, &qdisp, &c.part0));
	}
	if (c.rank == 0) {
		size_t srcsz = bwmax > PAGE ? bwmax : PAGE;
		c.src = malloc(srcsz);
		if (!c.src)
			MPI_Abort(MPI_COMM_WORLD, 1);
		memset(c.src, 0x5a, srcsz); /* pre-fault the source too */
	}
	/* Collective buffers, pre-faulted: the largest send or receive of any
	 * row at this size. */
	{
		size_t cap = COLL_BIG > (size_t)c.size ? COLL_BIG : (size_t)c.size;
		c.cs = malloc(cap * sizeof(double));
		c.cr = malloc(cap * sizeof(double));
		if (!c.cs || !c.cr)
			MPI_Abort(MPI_COMM_WORLD, 1);
		bench_prefault(c.cs, cap * sizeof(double));
		bench_prefault(c.cr, cap * sizeof(double));
	}
	if (c.size > 1) {
		MPI_Group world;
		int r0 = 0, r1 = 1;
		MPI_Win_get_group(c.win, &world);
		MPI_Group_incl(world, 1, &r0, &c.g_origin);
		MPI_Group_incl(world, 1, &r1, &c.g_target);
		MPI_Group_free(&world);
	}
	print_affinity(&c);
	if (c.rank == 0) {
		print_backing("window_backing", c.base);
		fflush(stdout);
	}
	MPI_Barrier(MPI_COMM_WORLD);

	for (int j = 0; j < NMEAS; j++)
		if (sel[j])
			run(&c, &table[j], p);

	if (c.size > 1) {
		MPI_Group_free(&c.g_origin);
		MPI_Group_free(&c.g_target);
	}
	MPI_Win_free(&c.win);
	free(c.src);
	free(c.cs);
	free(c.cr);
	free(c.ps);
	free(c.pr);
	MPI_Finalize();
	return 0;
}
