/*
 * chk.c - shmcc --check's table. A program compiled with
 * -fsanitize=thread calls __tsan_read1..16, __tsan_write1..16 and their
 * kin on every load and store (tsanhooks.c: shmcc links this library
 * instead of the sanitizer's runtime, so those calls land there).
 *
 * Each load or store is compared with a table of address ranges the Go
 * half keeps (shmrun_chk_*): the memory of windows mapped in this
 * process, and the origin and result buffers of this process's RMA calls
 * that are not complete yet. An access outside every range (almost all of
 * them) costs a load and a branch, or a scan of the table when it is not
 * empty; one inside calls the Go half (shmCheckLocal: a load or store of
 * window memory, checked against RMA like win.Checked's; shmCheckOrigin:
 * a pending call's buffer touched) with the access's return address,
 * which the Go half resolves to file:line.
 *
 * Threads (OpenMP): the table is read under a sequence lock, so a hook
 * never blocks on a writer for longer than the writer's few stores and
 * holds no lock across anything; a hook's state is its thread's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include "capi.h"
#include "_cgo_export.h"

#define CHK_MAX 4096

typedef struct {
	uintptr_t lo, hi;
	uint32_t kind; /* SHMRUN_CHK_* */
	uint32_t id;   /* the Go half's record of the range */
	uintptr_t win; /* the window's handle */
	int32_t target;
} chk_range;

static chk_range chk_tab[CHK_MAX];
uint32_t shmrun_chk_n; /* entries in use; read by the hooks */
static uint32_t chk_seq; /* odd while the table changes */
static pthread_mutex_t chk_mu = PTHREAD_MUTEX_INITIALIZER;
#define TLS __thread __attribute__((tls_model("initial-exec")))
static TLS int chk_busy; /* this thread is inside the Go half */

static void chk_begin(void)
{
	pthread_mutex_lock(&chk_mu);
	__atomic_add_fetch(&chk_seq, 1, __ATOMIC_SEQ_CST);
}

static void chk_end(void)
{
	__atomic_add_fetch(&chk_seq, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&chk_mu);
}

static void chk_set(uint32_t i, const chk_range *r)
{
	__atomic_store_n(&chk_tab[i].lo, r->lo, __ATOMIC_RELAXED);
	__atomic_store_n(&chk_tab[i].hi, r->hi, __ATOMIC_RELAXED);
	__atomic_store_n(&chk_tab[i].kind, r->kind, __ATOMIC_RELAXED);
	__atomic_store_n(&chk_tab[i].id, r->id, __ATOMIC_RELAXED);
	__atomic_store_n(&chk_tab[i].win, r->win, __ATOMIC_RELAXED);
	__atomic_store_n(&chk_tab[i].target, r->target, __ATOMIC_RELAXED);
}

int shmrun_chk_add(uintptr_t lo, uintptr_t hi, uint32_t kind, uint32_t id, uintptr_t win, int32_t target)
{
	chk_range r = {lo, hi, kind, id, win, target};
	int rc = -1;
	if (hi <= lo)
		return 0;
	chk_begin();
	if (shmrun_chk_n < CHK_MAX) {
		chk_set(shmrun_chk_n, &r);
		__atomic_store_n(&shmrun_chk_n, shmrun_chk_n + 1, __ATOMIC_RELAXED);
		rc = 0;
	}
	chk_end();
	return rc;
}

/* shmrun_chk_del drops the ranges of kinds in mask (a bit per kind) of
 * window win towards target (-1: every target; win 0: every window), or
 * with id (id nonzero). */
void shmrun_chk_del(uint32_t mask, uintptr_t win, int32_t target, uint32_t id)
{
	chk_begin();
	uint32_t j = 0;
	for (uint32_t i = 0; i < shmrun_chk_n; i++) {
		chk_range r = chk_tab[i];
		int drop = id ? r.id == id
			      : (mask >> r.kind & 1) && (win == 0 || r.win == win) && (target < 0 || r.target == target);
		if (!drop) {
			if (j != i)
				chk_set(j, &r);
			j++;
		}
	}
	__atomic_store_n(&shmrun_chk_n, j, __ATOMIC_RELAXED);
	chk_end();
}


/* shmrun_where fills what dladdr knows of pc: the object's path and load
 * address (0: pc is in no object). */
int shmrun_where(uintptr_t pc, const char **fname, uintptr_t *fbase)
{
	Dl_info di;
	if (dladdr((void *)pc, &di) == 0)
		return 0;
	*fname = di.dli_fname;
	*fbase = (uintptr_t)di.dli_fbase;
	return 1;
}

/* Loads and stores of window memory are gathered per thread into runs
 * (consecutive accesses of one instruction to adjacent bytes, as a loop
 * over an array makes), handed to the Go half one run at a time: when a
 * run cannot grow and another takes its slot, or when the Go half
 * drains every thread's runs (shmrun_chk_drain) before this process's
 * checker clock changes — so a run is recorded with the clock its accesses
 * were made at. */
enum { RUNS = 8 };

typedef struct chk_buf {
	uint32_t lock; /* held inside a hook or a drain, never across one */
	uint32_t n;
	uint32_t mru[2]; /* the runs extended last and before */
	shmrun_chk_run r[RUNS];
	struct chk_buf *next;
} chk_buf;

static chk_buf *chk_bufs; /* every thread's, pushed once, never freed */
uint32_t shmrun_chk_buffered; /* a run may be waiting: the Go half drains only then */
static TLS chk_buf *chk_mine;

int shmrun_chk_threads = 1; /* the Go half sets rmacheck.Threads */
int shmrun_chk_omp_on;
static TLS int chk_thread = -1;

/* Thread numbers are handed out once: threads take them from the bottom
 * (the thread calling MPI_Init first), OpenMP sections from the top (a
 * number given to a second section would carry the first's past into it,
 * hiding a race between them: no number is given twice). shmrun_chk_numbers is
 * the next from the bottom in its low half, the last free from the top
 * plus one in its high half (0: not set up yet). While it is 1, only the
 * thread that called MPI_Init has a number: the Go half's ThreadOf reads
 * it instead of calling shmrun_chk_thread. */
uint32_t shmrun_chk_numbers;

static int take(int top)
{
	uint32_t v = __atomic_load_n(&shmrun_chk_numbers, __ATOMIC_RELAXED);
	for (;;) {
		uint32_t lo = v & 0xffff, hi = v >> 16;
		if (hi == 0)
			hi = (uint32_t)shmrun_chk_threads;
		if (lo >= hi)
			return -1;
		uint32_t nv = top ? lo | (hi - 1) << 16 : (lo + 1) | hi << 16;
		if (__atomic_compare_exchange_n(&shmrun_chk_numbers, &v, nv, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return top ? (int)(hi - 1) : (int)lo;
	}
}

int shmrun_chk_dirty[SHMRUN_CHK_NUMBERS];

int shmrun_chk_current(void) { return chk_thread; }

void shmrun_chk_mark(void)
{
	if (chk_thread >= 0)
		__atomic_store_n(&shmrun_chk_dirty[chk_thread], 1, __ATOMIC_RELAXED);
}

int shmrun_chk_thread(void)
{
	if (chk_thread < 0) {
		int t = take(0);
		chk_thread = t >= 0 ? t : shmrun_chk_threads - 1;
	}
	shmrun_chk_mark(); /* the checker is at work for this thread */
	return chk_thread;
}

int shmrun_chk_take_slot(void) { return take(1); }

void shmrun_chk_set_thread(int slot)
{
	chk_thread = slot;
	shmrun_chk_mark();
}

static void buf_lock(chk_buf *b)
{
	while (__atomic_exchange_n(&b->lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&b->lock, __ATOMIC_RELAXED))
			sched_yield(); /* a drain holds it for a few copies */
}

static void buf_unlock(chk_buf *b) { __atomic_store_n(&b->lock, 0, __ATOMIC_RELEASE); }

static chk_buf *buf_mine(void)
{
	chk_buf *b = chk_mine;
	if (b)
		return b;
	b = calloc(1, sizeof *b);
	if (!b)
		return NULL;
	shmrun_chk_thread(); /* chk_thread set */
	b->next = __atomic_load_n(&chk_bufs, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&chk_bufs, &b->next, b, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
	return chk_mine = b;
}

/* grows reports whether run r takes the access, and grows it. */
static inline int grows(shmrun_chk_run *r, uint32_t id, uintptr_t lo, uintptr_t n, int write, uintptr_t pc)
{
	if (r->pc != pc || r->id != id || r->write != write || r->thread != chk_thread || lo > r->hi || lo + n < r->lo)
		return 0;
	if (lo < r->lo)
		r->lo = lo;
	if (lo + n > r->hi)
		r->hi = lo + n;
	return 1;
}

static void chk_window(uint32_t id, uintptr_t lo, uintptr_t n, int write, uintptr_t pc)
{
	chk_buf *b = buf_mine(); /* numbers the thread */
	shmrun_chk_mark();
	if (!b) {
		shmCheckLocal(id, lo, n, write, pc, shmrun_chk_thread());
		return;
	}
	shmrun_chk_run out;
	int evict = 0;
	buf_lock(b);
	/* A loop's accesses take turns between a few instructions: the two
	 * runs used last are tried first. */
	for (int j = 0; j < 2; j++) {
		uint32_t i = b->mru[j];
		if (i < b->n && grows(&b->r[i], id, lo, n, write, pc)) {
			if (j == 1) {
				b->mru[1] = b->mru[0];
				b->mru[0] = i;
			}
			buf_unlock(b);
			return;
		}
	}
	for (uint32_t i = 0; i < b->n; i++) {
		if (grows(&b->r[i], id, lo, n, write, pc)) {
			b->mru[1] = b->mru[0];
			b->mru[0] = i;
			buf_unlock(b);
			return;
		}
	}
	uint32_t i = b->n;
	if (i == RUNS) { /* the slot least recently used of the last two's others */
		i = 0;
		while (i == b->mru[0] || i == b->mru[1])
			i++;
		out = b->r[i];
		evict = 1;
	} else {
		b->n++;
	}
	b->r[i] = (shmrun_chk_run){lo, lo + n, pc, id, write, chk_thread};
	b->mru[1] = b->mru[0];
	b->mru[0] = i;
	__atomic_store_n(&shmrun_chk_buffered, 1, __ATOMIC_RELAXED);
	buf_unlock(b);
	if (evict)
		shmCheckLocal(out.id, out.lo, out.hi - out.lo, out.write, out.pc, out.thread);
}

int shmrun_chk_drain(shmrun_chk_run *out, int max)
{
	int k = 0;
	__atomic_store_n(&shmrun_chk_buffered, 0, __ATOMIC_SEQ_CST);
	for (chk_buf *b = __atomic_load_n(&chk_bufs, __ATOMIC_ACQUIRE); b && k < max; b = b->next) {
		buf_lock(b);
		uint32_t m = 0;
		while (m < b->n && k < max)
			out[k++] = b->r[m++];
		memmove(&b->r[0], &b->r[m], (b->n - m) * sizeof b->r[0]);
		b->n -= m;
		b->mru[0] = b->mru[1] = 0;
		buf_unlock(b);
	}
	return k;
}

/* A thread's latest window range, while the table is unchanged (seq) and
 * no other range overlaps it: a loop over window memory skips the scan. */
static TLS struct {
	uint32_t seq;
	uintptr_t lo, hi;
	uint32_t id;
} chk_last;

/* chk_alone reports whether no range but the one at index self overlaps
 * [lo, hi) (under the sequence lock: the caller re-checks seq). */
static int chk_alone(uint32_t cnt, uint32_t self, uintptr_t lo, uintptr_t hi)
{
	for (uint32_t i = 0; i < cnt && i < CHK_MAX; i++)
		if (i != self && __atomic_load_n(&chk_tab[i].lo, __ATOMIC_RELAXED) < hi &&
		    lo < __atomic_load_n(&chk_tab[i].hi, __ATOMIC_RELAXED))
			return 0;
	return 1;
}

void shmrun_chk_slow(uintptr_t a, uintptr_t n, int write, void *pc)
{
	enum { HITS = 8 };
	chk_range hit[HITS];
	int nh, alone;
	uint32_t s;
	/* A copy of no bytes (memcpy, memset of a length 0) touches nothing:
	 * inside a range it would pass the overlap tests below as [a, a). */
	if (chk_busy || n == 0)
		return;
	s = __atomic_load_n(&chk_seq, __ATOMIC_ACQUIRE);
	if (s == chk_last.seq && a >= chk_last.lo && a + n <= chk_last.hi) {
		chk_window(chk_last.id, a, n, write, (uintptr_t)pc);
		return;
	}
	for (;;) {
		s = __atomic_load_n(&chk_seq, __ATOMIC_ACQUIRE);
		if (s & 1)
			continue;
		uint32_t cnt = __atomic_load_n(&shmrun_chk_n, __ATOMIC_RELAXED);
		uint32_t first = 0;
		nh = 0;
		alone = 0;
		for (uint32_t i = 0; i < cnt && i < CHK_MAX && nh < HITS; i++) {
			uintptr_t lo = __atomic_load_n(&chk_tab[i].lo, __ATOMIC_RELAXED);
			uintptr_t hi = __atomic_load_n(&chk_tab[i].hi, __ATOMIC_RELAXED);
			if (a + n <= lo || hi <= a)
				continue;
			hit[nh].lo = lo;
			hit[nh].hi = hi;
			hit[nh].kind = __atomic_load_n(&chk_tab[i].kind, __ATOMIC_RELAXED);
			hit[nh].id = __atomic_load_n(&chk_tab[i].id, __ATOMIC_RELAXED);
			if (nh == 0)
				first = i;
			nh++;
		}
		if (nh == 1 && hit[0].kind == SHMRUN_CHK_WIN)
			alone = chk_alone(cnt, first, hit[0].lo, hit[0].hi);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&chk_seq, __ATOMIC_RELAXED) == s)
			break;
	}
	if (nh == 0)
		return;
	if (alone && !(s & 1)) {
		chk_last.seq = s;
		chk_last.lo = hit[0].lo;
		chk_last.hi = hit[0].hi;
		chk_last.id = hit[0].id;
	}
	chk_busy = 1;
	for (int i = 0; i < nh; i++) {
		uintptr_t lo = a > hit[i].lo ? a : hit[i].lo;
		uintptr_t hi = a + n < hit[i].hi ? a + n : hit[i].hi;
		switch (hit[i].kind) {
		case SHMRUN_CHK_WIN:
			chk_window(hit[i].id, lo, hi - lo, write, (uintptr_t)pc);
			break;
		case SHMRUN_CHK_READ_BY_RMA:
			if (!write)
				break;
			/* fall through */
		case SHMRUN_CHK_WRITTEN_BY_RMA:
			shmCheckOrigin(hit[i].id, lo, hi - lo, write, (uintptr_t)pc);
			break;
		}
	}
	chk_busy = 0;
}

