/*
 * mpi_fast.h - the RMA calls that never leave C: on a window with a
 * descriptor (capi.h), inside a passive-target epoch to the target, for a
 * predefined datatype with equal origin and target counts, within the
 * target's part, Put and Get are a memcpy, Flush and Win_sync a fence, and
 * the accumulates on aligned 4- and 8-byte integers (and Sum, Replace and
 * No_op on floats) one atomic operation per element — the same atomic
 * step the Go side's lock-free kernels take on the same word, so C and Go
 * accumulates are atomic with each other. Anything else returns -1 and the
 * call takes the Go path, which checks everything and names any error.
 */
#include <stdint.h>
#include <string.h>
#include "capi.h"
#include "shmrun/format.h"

/* shmrun_relax is a spin loop's pause between polls of a word another
 * core will write (raw.Pause on the Go side), for a spin of at least
 * SHMRUN_PAUSE_FROM polls (barrier.PauseFrom: a rank with a core of its
 * own; shorter spins poll back to back, then yield). Without it the
 * poller takes the line back a cycle after the writer's locked add took
 * it, and the writer's second add (a barrier's release) waits for it: a
 * 2-rank MPI_Barrier took 80-190 ns, with it 28 (bench/NOTES.md). */
static inline __attribute__((always_inline)) void shmrun_relax(int spin)
{
	if (spin < SHMRUN_PAUSE_FROM)
		return;
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

static inline __attribute__((always_inline)) shmrun_win_desc *shmrun_desc(MPI_Win win)
{
	uintptr_t h = (uintptr_t)win;
	if (h < SHMRUN_WIN_BASE || (h & 15) != 0)
		return NULL;
	uintptr_t s = (h - SHMRUN_WIN_BASE) / 16;
	if (s >= SHMRUN_WIN_SLOTS)
		return NULL;
	return __atomic_load_n(&shmrun_wins[s], __ATOMIC_ACQUIRE);
}

/* shmrun_elem is a predefined datatype's element: its size, and whether
 * it is an integer (1), a float (2) or neither (0). 0 size: not a type the
 * fast path knows. One load from a table indexed by the handle (the
 * standard's predefined datatypes are 0x200..0x2ff), no branch per type. */
#define SHMRUN_E(size, kind) ((uint8_t)((size) | (kind) << 4))
#define SHMRUN_DT(t) ((uintptr_t)(t) - (uintptr_t)MPI_DATATYPE_NULL)
static const uint8_t shmrun_elems[256] = {
	[SHMRUN_DT(MPI_INT)] = SHMRUN_E(4, 1),
	[SHMRUN_DT(MPI_UNSIGNED)] = SHMRUN_E(4, 1),
	[SHMRUN_DT(MPI_INT32_T)] = SHMRUN_E(4, 1),
	[SHMRUN_DT(MPI_UINT32_T)] = SHMRUN_E(4, 1),
	[SHMRUN_DT(MPI_LONG)] = SHMRUN_E(8, 1),
	[SHMRUN_DT(MPI_UNSIGNED_LONG)] = SHMRUN_E(8, 1),
	[SHMRUN_DT(MPI_LONG_LONG)] = SHMRUN_E(8, 1),
	[SHMRUN_DT(MPI_UNSIGNED_LONG_LONG)] = SHMRUN_E(8, 1),
	[SHMRUN_DT(MPI_INT64_T)] = SHMRUN_E(8, 1),
	[SHMRUN_DT(MPI_UINT64_T)] = SHMRUN_E(8, 1),
	[SHMRUN_DT(MPI_AINT)] = SHMRUN_E(8, 1),
	[SHMRUN_DT(MPI_COUNT)] = SHMRUN_E(8, 1),
	[SHMRUN_DT(MPI_OFFSET)] = SHMRUN_E(8, 1),
	[SHMRUN_DT(MPI_FLOAT)] = SHMRUN_E(4, 2),
	[SHMRUN_DT(MPI_DOUBLE)] = SHMRUN_E(8, 2),
	[SHMRUN_DT(MPI_BYTE)] = SHMRUN_E(1, 0),
	[SHMRUN_DT(MPI_CHAR)] = SHMRUN_E(1, 0),
	[SHMRUN_DT(MPI_UNSIGNED_CHAR)] = SHMRUN_E(1, 0),
	[SHMRUN_DT(MPI_INT8_T)] = SHMRUN_E(1, 0),
	[SHMRUN_DT(MPI_UINT8_T)] = SHMRUN_E(1, 0),
	[SHMRUN_DT(MPI_SHORT)] = SHMRUN_E(2, 0),
	[SHMRUN_DT(MPI_INT16_T)] = SHMRUN_E(2, 0),
	[SHMRUN_DT(MPI_UINT16_T)] = SHMRUN_E(2, 0),
};

static inline __attribute__((always_inline)) int shmrun_elem(MPI_Datatype t, int *kind)
{
	uintptr_t i = SHMRUN_DT(t);
	if (i >= sizeof shmrun_elems)
		return 0;
	uint8_t e = shmrun_elems[i];
	*kind = e >> 4;
	return e & 15;
}

/* shmrun_open is the RMA calls' epoch check (win's canAccess): a fence
 * or Lock_all epoch, or an access epoch to t (a lock, or t in the Start
 * group). The first RMA call of a fence epoch records that the epoch was
 * used. */
static inline __attribute__((always_inline)) int shmrun_open(const shmrun_win_desc *d, int t)
{
	if ((unsigned)t >= (unsigned)d->n)
		return 0;
	shmrun_epoch *e = d->ep;
	if (e->access_all) {
		if (e->fence_open && !__atomic_load_n(&e->fence_used, __ATOMIC_RELAXED))
			__atomic_store_n(&e->fence_used, 1, __ATOMIC_RELAXED);
		return 1;
	}
	return d->tgt[t] & SHMRUN_TGT_ACCESS;
}

/* shmrun_target is the address of n bytes at disp in target t's part, or
 * NULL when they are not all inside it. */
static inline __attribute__((always_inline)) char *shmrun_target(const shmrun_win_desc *d, int t, MPI_Aint disp, size_t n)
{
	const struct shmrun_part *p = &d->parts[t];
	MPI_Aint du = p->disp, size = p->size;
	if (disp < 0 || disp > p->maxdisp) /* no division here: it costs more than the copy */
		return NULL;
	MPI_Aint off = disp * du;
	if (n > (size_t)(size - off))
		return NULL;
	return p->base + off;
}

static inline __attribute__((always_inline)) int shmrun_fast_copy(MPI_Win win, int put, void *origin, MPI_Count ocount, MPI_Datatype otype, int t,
				   MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype)
{
	int kind, sz;
	shmrun_win_desc *d = shmrun_desc(win);
	if (d == NULL || otype != ttype || ocount != tcount || ocount < 0 || !shmrun_open(d, t) ||
	    (sz = shmrun_elem(otype, &kind)) == 0 || (uint64_t)ocount >> 59 != 0)
		return -1; /* a count whose bytes may overflow (sz < 16): Go names the error */
	size_t n = (size_t)ocount * (size_t)sz;
	char *p = shmrun_target(d, t, disp, n);
	if (p == NULL || (n > 0 && origin == NULL))
		return -1;
	if (n == 8) { /* one move, not a call */
		uint64_t x;
		memcpy(&x, put ? origin : (void *)p, 8);
		memcpy(put ? (void *)p : origin, &x, 8);
	} else if (put)
		memcpy(p, origin, n);
	else
		memcpy(origin, p, n);
	return 0;
}

static inline __attribute__((always_inline)) void shmrun_full_fence(shmrun_win_desc *d)
{
	__atomic_fetch_add(&d->fence, 1, __ATOMIC_SEQ_CST);
}

/* Flush and Flush_local: inside Lock_all, or a lock on t. */
static inline __attribute__((always_inline)) int shmrun_fast_flush(MPI_Win win, int t, int fence)
{
	shmrun_win_desc *d = shmrun_desc(win);
	if (d == NULL || !((uint64_t)(unsigned)t < d->ep->flush_any ||
			   ((unsigned)t < (unsigned)d->n && (d->tgt[t] & SHMRUN_TGT_LOCKED) != 0)))
		return -1;
	if (fence)
		shmrun_full_fence(d);
	return 0;
}

/* shmrun_any_locked reports whether this rank holds a lock on some target
 * of d's window: a scan of the bytes per target, eight at a time (they are
 * the only record of which targets are locked, so that threads may lock
 * and unlock different targets at once). */
static inline __attribute__((always_inline)) int shmrun_any_locked(const shmrun_win_desc *d)
{
	const uint8_t *t = d->tgt;
	int i = 0;
	for (; i + 8 <= d->n; i += 8) {
		uint64_t w;
		memcpy(&w, t + i, 8);
		if (w & (SHMRUN_TGT_LOCKED * 0x0101010101010101ULL))
			return 1;
	}
	for (; i < d->n; i++)
		if (t[i] & SHMRUN_TGT_LOCKED)
			return 1;
	return 0;
}

/* Flush_all, Flush_local_all and Win_sync: inside a passive-target epoch. */
static inline __attribute__((always_inline)) int shmrun_fast_flush_all(MPI_Win win, int fence)
{
	shmrun_win_desc *d = shmrun_desc(win);
	if (d == NULL || !(d->ep->lock_all || shmrun_any_locked(d)))
		return -1;
	if (fence)
		shmrun_full_fence(d);
	return 0;
}

/* The passive-target synchronization calls, by win's protocol (lock.go,
 * FORMAT.md's lock words): the common cases here, one or two atomic adds;
 * every other case, waiting and every error in Go. Each returns 0 when the
 * call is done, -1 when the whole call goes to Go, and 1 when the C side
 * made an add that Go must finish (shmWinLockAfter, shmWinLockAllRetry). */

/* shmrun_lock_add adds a to a lock word and clears a carry guard the add
 * set; it returns the word after the add. */
static inline __attribute__((always_inline)) uint64_t shmrun_lock_add(uint64_t *w, uint64_t a)
{
	uint64_t v = __atomic_add_fetch(w, a, __ATOMIC_SEQ_CST);
	if (v & SHMRUN_LOCK_GUARDS)
		__atomic_fetch_and(w, ~(uint64_t)SHMRUN_LOCK_GUARDS, __ATOMIC_SEQ_CST);
	return v;
}

static inline __attribute__((always_inline)) int shmrun_fast_lock(MPI_Win win, int lt, int t, int assert, uint64_t *v)
{
	shmrun_win_desc *d = shmrun_desc(win);
	if (d == NULL || assert != 0 || (unsigned)t >= (unsigned)d->n || (d->tgt[t] | d->ep->gate) != 0)
		return -1;
	if (lt == MPI_LOCK_EXCLUSIVE) {
		/* A Lock_all waits for the writers to drain (Q, the global word's
		 * high half): a rank holding no lock holds back, in Go. */
		if ((__atomic_load_n(d->global, __ATOMIC_SEQ_CST) >> 32) != 0 && !shmrun_any_locked(d))
			return -1;
		uint64_t x = shmrun_lock_add(d->lockw[t], SHMRUN_LOCK_EXCLUSIVE);
		if (shmrun_lock_w(x) != shmrun_lock_ticket(x) ||
		    (__atomic_load_n(d->global, __ATOMIC_SEQ_CST) & SHMRUN_LOCKALL_HOLDERS) != 0) {
			*v = x & ~(uint64_t)SHMRUN_LOCK_GUARDS; /* not our turn yet, or a Lock_all holds: Go waits */
			return 1;
		}
		d->tgt[t] = SHMRUN_TGT_ACCESS | SHMRUN_TGT_EXCLUSIVE;
	} else if (lt == MPI_LOCK_SHARED) {
		uint64_t x = shmrun_lock_add(d->lockw[t], SHMRUN_LOCK_SHARED);
		if (shmrun_lock_r(x) != shmrun_lock_ticket(x)) {
			*v = x & ~(uint64_t)SHMRUN_LOCK_GUARDS;
			return 1;
		}
		/* Admit the next reader; Go wakes it if it sleeps. */
		x = __atomic_add_fetch(d->lockw[t], SHMRUN_LOCK_ONE_R, __ATOMIC_SEQ_CST);
		if ((x & SHMRUN_LOCK_GUARDS) || __atomic_load_n(d->lsleep[t], __ATOMIC_SEQ_CST) != 0)
			shmWinWake((uintptr_t)win, t, x);
		d->tgt[t] = SHMRUN_TGT_ACCESS | SHMRUN_TGT_SHARED;
	} else
		return -1;
	return 0;
}

static inline __attribute__((always_inline)) int shmrun_fast_unlock(MPI_Win win, int t)
{
	shmrun_win_desc *d = shmrun_desc(win);
	if (d == NULL || (unsigned)t >= (unsigned)d->n)
		return -1;
	uint8_t b = d->tgt[t];
	uint64_t x;
	if (b == (SHMRUN_TGT_ACCESS | SHMRUN_TGT_EXCLUSIVE)) {
		d->tgt[t] = 0;
		x = __atomic_add_fetch(d->lockw[t], SHMRUN_LOCK_EXCLUSIVE_UNLOCK, __ATOMIC_SEQ_CST);
	} else if (b == (SHMRUN_TGT_ACCESS | SHMRUN_TGT_SHARED)) {
		d->tgt[t] = 0;
		x = __atomic_add_fetch(d->lockw[t], SHMRUN_LOCK_SHARED_UNLOCK, __ATOMIC_SEQ_CST);
	} else
		return -1;
	if ((x & SHMRUN_LOCK_GUARDS) || __atomic_load_n(d->lsleep[t], __ATOMIC_SEQ_CST) != 0)
		shmWinWake((uintptr_t)win, t, x);
	return 0;
}

static inline __attribute__((always_inline)) void shmrun_set_lock_all(shmrun_win_desc *d, int on)
{
	shmrun_epoch *e = d->ep;
	e->lock_all = e->access_all = (uint8_t)on;
	e->flush_any = on ? (uint64_t)d->n : 0;
	if (on)
		e->gate |= SHMRUN_GATE_LOCKALL;
	else
		e->gate &= (uint8_t)~SHMRUN_GATE_LOCKALL;
}

static inline __attribute__((always_inline)) int shmrun_fast_lock_all(MPI_Win win, int assert)
{
	shmrun_win_desc *d = shmrun_desc(win);
	if (d == NULL || assert != 0 || d->ep->gate != 0 || shmrun_any_locked(d))
		return -1;
	__atomic_add_fetch(d->global, 1, __ATOMIC_SEQ_CST);
	for (int t = 0; t < d->n; t++)
		if (shmrun_lock_x(__atomic_load_n(d->lockw[t], __ATOMIC_SEQ_CST)) != 0)
			return 1; /* an exclusive locker holds or waits: Go backs off and waits */
	d->ep->all_check = 1;
	shmrun_set_lock_all(d, 1);
	return 0;
}

static inline __attribute__((always_inline)) int shmrun_fast_unlock_all(MPI_Win win)
{
	shmrun_win_desc *d = shmrun_desc(win);
	if (d == NULL || !d->ep->lock_all || (d->ep->gate & SHMRUN_GATE_FREED) != 0)
		return -1;
	shmrun_set_lock_all(d, 0);
	if (!d->ep->all_check)
		shmrun_full_fence(d);
	else {
		__atomic_sub_fetch(d->global, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(d->gsleep, __ATOMIC_SEQ_CST) != 0)
			shmWinWake((uintptr_t)win, -1, 0);
	}
	return 0;
}

/* shmrun_bar_arrive arrives at a barrier line by package barrier's
 * protocol with no failure of its own: one add; the last arrival clears
 * the next round's failure word if the round before failed and releases
 * the round with one more add; the others spin as Go does, then hand the
 * wait to Go's futex phase (the barrier is window h's fence barrier).
 * *gen is the generation that ended the round. A
 * corrupt line, and a failed wait (the job is ending), return the error
 * Go raised. */
static inline __attribute__((always_inline)) int shmrun_bar_arrive(uint64_t *state, uint32_t *sleepers, uint32_t **fail,
								   uint32_t n, int spin, uintptr_t h,
								   uint32_t *gen_out)
{
	uint64_t v = __atomic_add_fetch(state, 1, __ATOMIC_SEQ_CST);
	uint32_t gen = (uint32_t)(v >> 32), round = gen >> 1, cnt = (uint32_t)v & SHMRUN_BARRIER_COUNT_MASK;
	if (cnt == n) {
		if (gen & 1)
			__atomic_store_n(fail[(round + 1) & 1], 0, __ATOMIC_SEQ_CST);
		uint32_t next = (round + 1) << 1 | (uint32_t)((v & SHMRUN_BARRIER_FAILED_BIT) >> 31);
		uint64_t delta = ((uint64_t)(next - gen) << 32) - n - (v & SHMRUN_BARRIER_FAILED_BIT);
		gen = (uint32_t)(__atomic_add_fetch(state, delta, __ATOMIC_SEQ_CST) >> 32);
		if (__atomic_load_n(sleepers, __ATOMIC_SEQ_CST) != 0)
			shmBarrierWake(h);
	} else if (cnt > n) {
		return shmBarrierCorrupt(h);
	} else {
		uint32_t old = gen;
		for (int i = 0; i < spin; i++) {
			uint32_t g = (uint32_t)(__atomic_load_n(state, __ATOMIC_SEQ_CST) >> 32);
			if (g != old) {
				gen = g;
				break;
			}
			shmrun_relax(spin);
		}
		if (gen == old) {
			int rc = shmBarrierWait(h, old, &gen);
			if (rc != MPI_SUCCESS)
				return rc;
		}
	}
	*gen_out = gen;
	return MPI_SUCCESS;
}

static inline __attribute__((always_inline)) void shmrun_set_fence(shmrun_epoch *e, int open)
{
	e->fence_open = e->access_all = (uint8_t)open;
	if (open)
		e->gate |= SHMRUN_GATE_FENCE;
	else
		e->gate &= (uint8_t)~SHMRUN_GATE_FENCE;
}

/* shmrun_flag_fence is the fence of a window of one or two ranks on the
 * ranks' fence words (FORMAT.md's "Fence"; package win's flagAgree),
 * arriving with no failure of its own: store this rank's next generation
 * into its word of that parity, wait for the other rank's (Go's futex
 * phase after the spins), wake this word's sleepers after a full fence.
 * The other rank's failure code gets Go's verdict. */
static inline __attribute__((always_inline)) int shmrun_flag_fence(shmrun_win_desc *d, uintptr_t win)
{
	uint32_t g = d->ep->fence_gen + 1, p = g & 1;
	d->ep->fence_gen = g;
	__atomic_store_n(d->fword[p], (uint64_t)g, __ATOMIC_RELEASE);
	if (d->fpeer[p] == NULL) {
		shmrun_full_fence(d);
		return MPI_SUCCESS;
	}
	uint64_t v;
	int k = 0;
	while ((int32_t)((uint32_t)(v = __atomic_load_n(d->fpeer[p], __ATOMIC_ACQUIRE)) - g) < 0) {
		if (k++ == d->spin) {
			int rc = shmWinFlagFenceWait(win, g);
			if (rc != MPI_SUCCESS)
				return rc;
			v = __atomic_load_n(d->fpeer[p], __ATOMIC_ACQUIRE);
			break;
		}
		shmrun_relax(d->spin);
	}
	if (shmrun_light_fence) /* the sleepers' membarrier stands for the fence */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	else
		shmrun_full_fence(d);
	if (__atomic_load_n(d->fwsleep[p], __ATOMIC_SEQ_CST) != 0)
		shmWinFlagFenceWake(win, p);
	if ((uint32_t)(v >> 32) != 0)
		return shmWinFenceCode(win, (uint32_t)(v >> 32));
	return MPI_SUCCESS;
}

/* shmrun_fast_fence is MPI_Win_fence when no other epoch is open and the
 * assert is valid: a full fence alone for NOPRECEDE|NOSUCCEED; in a window
 * of up to SHMRUN_FLAG_FENCE_RANKS ranks, shmrun_flag_fence; else an
 * arrival at the window's fence barrier by package barrier's protocol (the
 * last arrival releases the round with one add), spinning as Go does
 * before it hands the wait to Go's futex phase. A round another rank
 * failed, and every local error, go to Go. */
static inline __attribute__((always_inline)) int shmrun_fast_fence(MPI_Win win, int assert, int *rc)
{
	shmrun_win_desc *d = shmrun_desc(win);
	const int allowed = MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED;
	if (d == NULL)
		return -1;
	shmrun_epoch *e = d->ep;
	if ((assert & ~allowed) != 0 || (e->gate & ~(SHMRUN_GATE_FENCE | SHMRUN_GATE_NOLOCKS)) != 0 || shmrun_any_locked(d) ||
	    e->post_open)
		return -1;
	int used = e->fence_open && __atomic_load_n(&e->fence_used, __ATOMIC_RELAXED);
	if ((assert & MPI_MODE_NOPRECEDE) && used)
		return -1; /* Go names the error */
	if ((assert & (MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)) == (MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)) {
		shmrun_full_fence(d);
		shmrun_set_fence(e, 0);
		*rc = MPI_SUCCESS;
		return 0;
	}
	if (d->fword[0] != NULL) {
		if ((*rc = shmrun_flag_fence(d, (uintptr_t)win)) != MPI_SUCCESS)
			return 0;
	} else {
		uint32_t gen;
		if ((*rc = shmrun_bar_arrive(d->fstate, d->fsleep, d->ffail, d->fn, d->spin, (uintptr_t)win, &gen)) !=
		    MPI_SUCCESS)
			return 0;
		if (gen & 1) {
			*rc = shmWinFenceFailed((uintptr_t)win, gen);
			return 0;
		}
	}
	if (assert & MPI_MODE_NOSUCCEED)
		shmrun_set_fence(e, 0);
	else {
		__atomic_store_n(&e->fence_used, 0, __ATOMIC_RELAXED);
		shmrun_set_fence(e, 1);
	}
	*rc = MPI_SUCCESS;
	return 0;
}

/* PSCW (win's pscw.go, FORMAT.md's post and complete counters): the
 * common cases in C; a group not among the last two Go saw, a Start whose
 * targets have not all posted within the spin phase, a Wait whose origins
 * have not all completed within it, and every error take the Go path. No
 * state changes before a fast path commits to its call. */

/* shmrun_group_of is group's window ranks from the descriptor's cache. */
static inline __attribute__((always_inline)) const struct shmrun_group_ranks *shmrun_group_of(shmrun_win_desc *d,
												 MPI_Group group)
{
	uintptr_t g = (uintptr_t)group;
	if (g == 0)
		return NULL;
	if (d->groups[0].handle == g)
		return &d->groups[0];
	if (d->groups[1].handle == g)
		return &d->groups[1];
	return NULL;
}

/* shmrun_pscw_ok: no epoch a Post or Start refuses; a fence epoch without
 * RMA calls is closed. */
static inline __attribute__((always_inline)) int shmrun_pscw_ok(const shmrun_win_desc *d, shmrun_epoch *e)
{
	if ((e->gate & (SHMRUN_GATE_FREED | SHMRUN_GATE_CHECK | SHMRUN_GATE_LOCKALL)) != 0 || shmrun_any_locked(d) ||
	    (e->fence_open && __atomic_load_n(&e->fence_used, __ATOMIC_RELAXED)))
		return 0;
	return 1;
}

static inline __attribute__((always_inline)) void shmrun_ring(MPI_Win win, shmrun_win_desc *d, const int32_t *ranks, int n)
{
	for (int i = 0; i < n; i++)
		if (__atomic_load_n(d->bellsleep[ranks[i]], __ATOMIC_SEQ_CST) != 0)
			shmWinBell((uintptr_t)win, ranks[i]);
}

static inline __attribute__((always_inline)) int shmrun_fast_post(MPI_Group group, int assert, MPI_Win win)
{
	shmrun_win_desc *d = shmrun_desc(win);
	if (d == NULL || (assert & ~(MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT)) != 0)
		return -1;
	shmrun_epoch *e = d->ep;
	const struct shmrun_group_ranks *g;
	if (!shmrun_pscw_ok(d, e) || e->post_open || (g = shmrun_group_of(d, group)) == NULL)
		return -1;
	if (e->fence_open)
		shmrun_set_fence(e, 0);
	for (int i = 0; i < g->n; i++) {
		int o = g->ranks[i];
		__atomic_store_n(d->postw[o], ++d->posts_to[o], __ATOMIC_RELEASE);
	}
	shmrun_full_fence(d);
	shmrun_ring(win, d, g->ranks, g->n);
	memcpy(d->post_group, g->ranks, (size_t)g->n * sizeof(int32_t));
	e->post_n = g->n;
	e->post_open = 1;
	return 0;
}

static inline __attribute__((always_inline)) int shmrun_fast_start(MPI_Group group, int assert, MPI_Win win)
{
	shmrun_win_desc *d = shmrun_desc(win);
	if (d == NULL || (assert & ~MPI_MODE_NOCHECK) != 0)
		return -1;
	shmrun_epoch *e = d->ep;
	const struct shmrun_group_ranks *g;
	if (!shmrun_pscw_ok(d, e) || (e->gate & SHMRUN_GATE_START) != 0 || (g = shmrun_group_of(d, group)) == NULL)
		return -1;
	if (!(assert & MPI_MODE_NOCHECK)) {
		int ready = 0;
		for (int k = 0; k <= d->spin && !ready; k++) {
			ready = 1;
			for (int i = 0; i < g->n && ready; i++) {
				int t = g->ranks[i];
				ready = (int32_t)(__atomic_load_n(d->startw[t], __ATOMIC_ACQUIRE) - (d->starts_from[t] + 1)) >= 0;
			}
			if (!ready)
				shmrun_relax(d->spin);
		}
		if (!ready)
			return -1; /* Go waits on the doorbell */
	}
	if (e->fence_open)
		shmrun_set_fence(e, 0);
	for (int i = 0; i < g->n; i++) {
		int t = g->ranks[i];
		d->starts_from[t]++;
		d->tgt[t] |= SHMRUN_TGT_ACCESS;
	}
	memcpy(d->start_group, g->ranks, (size_t)g->n * sizeof(int32_t));
	e->start_n = g->n;
	e->gate |= SHMRUN_GATE_START;
	return 0;
}

static inline __attribute__((always_inline)) int shmrun_fast_complete(MPI_Win win)
{
	shmrun_win_desc *d = shmrun_desc(win);
	if (d == NULL)
		return -1;
	shmrun_epoch *e = d->ep;
	if ((e->gate & SHMRUN_GATE_START) == 0 || (e->gate & (SHMRUN_GATE_FREED | SHMRUN_GATE_CHECK)) != 0)
		return -1;
	int n = e->start_n;
	for (int i = 0; i < n; i++) {
		int t = d->start_group[i];
		d->tgt[t] &= (uint8_t)~SHMRUN_TGT_ACCESS;
		__atomic_store_n(d->completew[t], d->starts_from[t], __ATOMIC_RELEASE);
	}
	shmrun_full_fence(d);
	shmrun_ring(win, d, d->start_group, n);
	e->start_n = -1;
	e->gate &= (uint8_t)~SHMRUN_GATE_START;
	return 0;
}

static inline __attribute__((always_inline)) int shmrun_fast_wait(MPI_Win win)
{
	shmrun_win_desc *d = shmrun_desc(win);
	if (d == NULL)
		return -1;
	shmrun_epoch *e = d->ep;
	if (!e->post_open || (e->gate & (SHMRUN_GATE_FREED | SHMRUN_GATE_CHECK)) != 0)
		return -1;
	int done = 0;
	for (int k = 0; k <= d->spin && !done; k++) {
		done = 1;
		for (int i = 0; i < e->post_n && done; i++) {
			int o = d->post_group[i];
			done = (int32_t)(__atomic_load_n(d->waitw[o], __ATOMIC_ACQUIRE) - d->posts_to[o]) >= 0;
		}
		if (!done)
			shmrun_relax(d->spin);
	}
	if (!done)
		return -1; /* Go waits on the doorbell */
	e->post_n = -1;
	e->post_open = 0;
	return 0;
}

/* shmrun_comm_of is comm's descriptor, or NULL: none, or nonblocking
 * collectives queued on comm (the Go path waits for them; the acquire
 * pairs with the worker's release of its count once its job is done). */
static inline __attribute__((always_inline)) shmrun_comm_desc *shmrun_comm_of(MPI_Comm comm)
{
	uintptr_t h = (uintptr_t)comm;
	shmrun_comm_desc *d = __atomic_load_n(&shmrun_comms[SHMRUN_COMM_SLOT(h)], __ATOMIC_ACQUIRE);
	if (d == NULL || d->handle != h || __atomic_load_n(&d->nbc, __ATOMIC_ACQUIRE) != 0)
		return NULL;
	return d;
}

/* SHMRUN_RMW defines shmrun_rmw<BITS>: op on the aligned word of UT at p,
 * whose float kind is FT (kind 2), with the origin value at v (unused for
 * MPI_NO_OP) and the old value to res if res. -1: an op (or type) the
 * fast path leaves to Go. */
#define SHMRUN_RMW(BITS, UT, FT)                                                                              \
	static inline __attribute__((always_inline)) int shmrun_rmw##BITS(void *p, const void *v, void *res,    \
									    MPI_Op op, int kind)                 \
	{                                                                                                     \
		UT *w = p, x = 0, old;                                                                        \
		if (op != MPI_NO_OP)                                                                          \
			memcpy(&x, v, sizeof x);                                                              \
		if (op == MPI_NO_OP)                                                                          \
			old = __atomic_load_n(w, __ATOMIC_SEQ_CST);                                           \
		else if (op == MPI_REPLACE)                                                                   \
			old = __atomic_exchange_n(w, x, __ATOMIC_SEQ_CST);                                    \
		else if (kind == 1 && op == MPI_SUM)                                                          \
			old = __atomic_fetch_add(w, x, __ATOMIC_SEQ_CST);                                     \
		else if (kind == 1 && op == MPI_BAND)                                                         \
			old = __atomic_fetch_and(w, x, __ATOMIC_SEQ_CST);                                     \
		else if (kind == 1 && op == MPI_BOR)                                                          \
			old = __atomic_fetch_or(w, x, __ATOMIC_SEQ_CST);                                      \
		else if (kind == 1 && op == MPI_BXOR)                                                         \
			old = __atomic_fetch_xor(w, x, __ATOMIC_SEQ_CST);                                     \
		else if (kind == 2 && op == MPI_SUM) {                                                        \
			FT a, b;                                                                              \
			UT nw;                                                                                \
			memcpy(&b, &x, sizeof b);                                                             \
			old = __atomic_load_n(w, __ATOMIC_SEQ_CST);                                           \
			do {                                                                                  \
				memcpy(&a, &old, sizeof a);                                                   \
				a += b;                                                                       \
				memcpy(&nw, &a, sizeof nw);                                                   \
			} while (!__atomic_compare_exchange_n(w, &old, nw, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)); \
		} else                                                                                        \
			return -1;                                                                            \
		if (res)                                                                                      \
			memcpy(res, &old, sizeof old);                                                        \
		return 0;                                                                                     \
	}
SHMRUN_RMW(64, uint64_t, double)
SHMRUN_RMW(32, uint32_t, float)

/* shmrun_rmw does op on the aligned element of sz bytes at p (kind is
 * shmrun_elem's): shmrun_rmw64 or shmrun_rmw32. */
static inline __attribute__((always_inline)) int shmrun_rmw(void *p, const void *v, void *res, MPI_Op op, int sz, int kind)
{
	if (sz == 8)
		return shmrun_rmw64(p, v, res, op, kind);
	if (sz == 4)
		return shmrun_rmw32(p, v, res, op, kind);
	return -1;
}

/* shmrun_fast_acc is Accumulate (res NULL) and Get_accumulate /
 * Fetch_and_op on count aligned elements of a 4- or 8-byte type. */
static inline __attribute__((always_inline)) int shmrun_fast_acc(MPI_Win win, const void *origin, MPI_Count ocount, MPI_Datatype otype, void *res,
				  MPI_Count rcount, MPI_Datatype rtype, int t, MPI_Aint disp, MPI_Count tcount,
				  MPI_Datatype ttype, MPI_Op op, int fetch)
{
	int kind, sz;
	shmrun_win_desc *d = shmrun_desc(win);
	if (d == NULL || ttype != otype || tcount != ocount || ocount < 0 || (fetch && (rtype != ttype || rcount != tcount)) ||
	    !shmrun_open(d, t) || (sz = shmrun_elem(ttype, &kind)) < 4 || kind == 0)
		return -1;
	if (op != MPI_SUM && op != MPI_REPLACE && op != MPI_NO_OP && op != MPI_BAND && op != MPI_BOR && op != MPI_BXOR)
		return -1;
	if (op == MPI_NO_OP && !fetch)
		return -1; /* MPI_NO_OP is for the fetching calls: Go names the error */
	if ((uint64_t)ocount >> 59 != 0)
		return -1; /* its bytes may overflow (sz < 16): the range check below would pass */
	size_t n = (size_t)ocount * (size_t)sz;
	char *p = shmrun_target(d, t, disp, n);
	if (p == NULL || ((uintptr_t)p & (uintptr_t)(sz - 1)) != 0 || (n > 0 && op != MPI_NO_OP && origin == NULL) ||
	    (fetch && n > 0 && res == NULL))
		return -1;
	/* Check the op against the type before touching memory: a float
	 * op other than Sum/Replace/No_op goes to Go whole. */
	if (kind == 2 && op != MPI_SUM && op != MPI_REPLACE && op != MPI_NO_OP)
		return -1;
	for (MPI_Count i = 0; i < ocount; i++) {
		const char *v = op == MPI_NO_OP ? NULL : (const char *)origin + i * sz;
		if (shmrun_rmw(p + i * sz, v, fetch ? (char *)res + i * sz : NULL, op, sz, kind) != 0)
			return -1; /* not reached: the op was checked above */
	}
	return 0;
}

/* shmrun_fast_sum64 is the accumulates' common case, apart: MPI_SUM of
 * one 8-byte integer (a counter), with the old value to res if fetch.
 * The calls try it first and hand anything else to a function of its own
 * (shmrun_fast_acc, then Go), so that this path keeps its few values in
 * registers: with the general loop in the same function, the compiler
 * saved six registers and spilled the arguments on every call
 * (bench/NOTES.md). -1: not this case, nothing done. */
static inline __attribute__((always_inline)) int shmrun_fast_sum64(MPI_Win win, const void *origin, MPI_Datatype otype,
								   void *res, MPI_Count rcount, MPI_Datatype rtype, int t,
								   MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype, int fetch)
{
	int kind;
	shmrun_win_desc *d = shmrun_desc(win);
	if (d == NULL || ttype != otype || tcount != 1 || origin == NULL || (fetch && (rtype != ttype || rcount != 1 || res == NULL)) ||
	    shmrun_elem(ttype, &kind) != 8 || kind != 1 || !shmrun_open(d, t))
		return -1;
	char *p = shmrun_target(d, t, disp, 8);
	if (p == NULL || ((uintptr_t)p & 7) != 0)
		return -1;
	uint64_t x, old;
	memcpy(&x, origin, 8);
	old = __atomic_fetch_add((uint64_t *)p, x, __ATOMIC_SEQ_CST);
	if (fetch)
		memcpy(res, &old, 8);
	return 0;
}

/* shmrun_fast_cas is MPI_Compare_and_swap of one 4- or 8-byte integer at
 * an aligned displacement inside target t's part, in an access epoch to
 * t. Anything else (another type, MPI_BYTE included; a NULL buffer;
 * MPI_PROC_NULL or a rank or displacement out of range; a misaligned
 * word) returns -1: Go does it or names the error. */
static inline __attribute__((always_inline)) int shmrun_fast_cas(MPI_Win win, const void *origin, const void *compare, void *res, MPI_Datatype type, int t,
				  MPI_Aint disp)
{
	shmrun_win_desc *d = shmrun_desc(win);
	uintptr_t i = SHMRUN_DT(type);
	if (d == NULL || origin == NULL || compare == NULL || res == NULL || i >= sizeof shmrun_elems || !shmrun_open(d, t))
		return -1;
	/* The table entry compared whole, not taken apart into size and
	 * kind: fewer live values, two registers saved instead of four. */
	uint8_t e = shmrun_elems[i];
	if (e == SHMRUN_E(8, 1)) {
		char *p = shmrun_target(d, t, disp, 8);
		if (p == NULL || ((uintptr_t)p & 7) != 0)
			return -1;
		uint64_t want, nw;
		memcpy(&want, compare, 8);
		memcpy(&nw, origin, 8);
		__atomic_compare_exchange_n((uint64_t *)p, &want, nw, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		memcpy(res, &want, 8);
		return 0;
	}
	if (e == SHMRUN_E(4, 1)) {
		char *p = shmrun_target(d, t, disp, 4);
		if (p == NULL || ((uintptr_t)p & 3) != 0)
			return -1;
		uint32_t want, nw;
		memcpy(&want, compare, 4);
		memcpy(&nw, origin, 4);
		__atomic_compare_exchange_n((uint32_t *)p, &want, nw, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		memcpy(res, &want, 4);
		return 0;
	}
	return -1;
}

/* ---- The small collectives ------------------------------------------------
 * MPI_Bcast, MPI_Reduce and MPI_Allreduce whose data fits a flag line's
 * inline bytes, on a communicator with a descriptor, for a predefined
 * datatype (and op) the tables of capi.h know: package comm's one-round
 * protocol (call.agree, and the inline paths of bcast and reduce), which
 * Go ranks of the same job run on the same lines. */

/* SHMRUN_FLINE is rank q's flag line of parity p. */
#define SHMRUN_FLINE(d, q, p) ((d)->lines + (size_t)((d)->par * (uint32_t)(q) + (uint32_t)(p)) * SHMRUN_LINE)

/* shmrun_coll_flush wakes the sleepers of the rounds this rank published
 * without a wake-up (comm's collArea.flush): a full fence (unless this
 * process is registered for the sleepers' heavy fence: internal/raw's
 * LightFence; program order then suffices, kept by a compiler barrier),
 * then the lines' sleeper words; Go wakes them if there are any. */
static inline __attribute__((always_inline)) void shmrun_coll_flush(shmrun_comm_desc *d, uintptr_t comm)
{
	shmrun_coll *h = d->h;
	if (h->pending == 0)
		return;
	if (shmrun_light_fence)
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	else
		__atomic_fetch_add(&d->fence, 1, __ATOMIC_SEQ_CST);
	int wake = 0;
	for (uint64_t m = h->pending; m != 0; m &= m - 1)
		wake |= __atomic_load_n(&d->sleepers[__builtin_ctzll(m)], __ATOMIC_SEQ_CST) != 0;
	if (wake)
		shmCommWakeLines(comm);
	else
		h->pending = 0;
}

/* shmrun_fast_round runs the one round of a small collective of kind:
 * publish this rank's signature (w0, w1: comm's sig words, no failure of
 * its own) and nb inline bytes of data, wait for every rank's, check that
 * they agree on what same names. -1: not taken (the round before is not
 * known complete: Go waits for it), nothing published. 0: the round ran;
 * *rc is MPI_SUCCESS and *parity the round's parity, or the error Go
 * raised (a rank in another call, arguments refused elsewhere, the job
 * ending). The caller reads the others' lines, then flushes. */
static inline __attribute__((always_inline)) int shmrun_fast_round(shmrun_comm_desc *d, uintptr_t comm, uint8_t kind, uint64_t w0,
								   uint64_t w1, const void *data, size_t nb, uint8_t same,
								   int *parity, int *rc)
{
	shmrun_coll *h = d->h;
	uint32_t r = h->round + 1;
	if (h->seen != r - 1)
		return -1;
	int p = (int)(r & (d->par - 1));
	char *own = SHMRUN_FLINE(d, d->me, p);
	if (d->n > 2) {
		/* Busy (comm's coll_check.go): a rank comparing round r-P late
		 * may be reading this line; the round word says r-1 until the
		 * line holds round r, and is stored before the line's other
		 * words. */
		__atomic_store_n((uint32_t *)(own + SHMRUN_FLAG_SEQ), r - 1, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_RELEASE);
	}
	if (nb > 0)
		memcpy(own + SHMRUN_FLAG_INLINE, data, nb);
	uint64_t sig[2] = {w0, w1};
	memcpy(own + SHMRUN_FLAG_KIND, sig, sizeof sig);
	__atomic_store_n((uint32_t *)(own + SHMRUN_FLAG_SEQ), r, __ATOMIC_RELEASE);
	h->round = r;
	h->pending |= (uint64_t)1 << p;
	*rc = MPI_SUCCESS;
	for (uint32_t q = 0; q < d->n; q++) {
		if (q == d->me)
			continue; /* its own round, just stored: loading it back stalls */
		uint32_t *seq = (uint32_t *)(SHMRUN_FLINE(d, q, p) + SHMRUN_FLAG_SEQ);
		int k = 0;
		while ((int32_t)(__atomic_load_n(seq, __ATOMIC_ACQUIRE) - r) < 0) {
			if (k++ == d->spin) {
				/* Go's futex phase for the ranks left. */
				if ((*rc = shmCommWaitRound(comm, r, kind)) != MPI_SUCCESS)
					return 0;
				q = d->n;
				break;
			}
			shmrun_relax(d->spin);
		}
	}
	h->seen = r; /* every rank has published round r: the most it can be */
	uint64_t mask = 0xffffu | (uint64_t)0xff << 24;
	if (same & SHMRUN_SAME_OP)
		mask |= (uint64_t)0xff << 16;
	if (same & SHMRUN_SAME_ROOT)
		mask |= (uint64_t)0xffffffffu << 32;
	for (uint32_t q = 0; q < d->n; q++) {
		if (q == d->me)
			continue; /* its own words are w0, w1 */
		uint64_t m[2];
		const char *line = SHMRUN_FLINE(d, q, p);
		memcpy(m, line + SHMRUN_FLAG_KIND, sizeof m);
		__atomic_thread_fence(__ATOMIC_ACQUIRE); /* the signature's loads before the round word's */
		/* A line that no longer holds round r was moved on (comm's
		 * coll_check.go): by a rank in another call, or by one that does
		 * not count this rank among its line's readers (a Bcast's
		 * reader). What was read of it is not round r's; Go judges
		 * from rank 0's record. */
		if (((m[0] ^ w0) & mask) != 0 || ((same & SHMRUN_SAME_COUNT) && m[1] != w1) ||
		    __atomic_load_n((const uint32_t *)(line + SHMRUN_FLAG_SEQ), __ATOMIC_ACQUIRE) != r) {
			/* Go's verdict: a mismatch, or types that match by size (a
			 * rank of MPI_BYTE, say), over every rank's line. */
			if ((*rc = shmCommMismatch(comm, r, kind, same)) != MPI_SUCCESS)
				return 0;
			break;
		}
	}
	if (d->checked != NULL)
		__atomic_store_n(d->checked, r, __ATOMIC_RELEASE); /* every round through r compared */
	*parity = p;
	return 0;
}

/* shmrun_fast_barrier is MPI_Barrier by package comm's protocol
 * (call.barrier) when the previous round is complete: publish the Barrier
 * signature and the round on this rank's flag line, wait for the others'
 * as the one-round calls do. A rank in another call gets Go's verdict. */
static inline __attribute__((always_inline)) int shmrun_fast_barrier(MPI_Comm comm, int *rc)
{
	shmrun_comm_desc *d = shmrun_comm_of(comm);
	int p;
	if (d == NULL || shmrun_fast_round(d, (uintptr_t)comm, SHMRUN_COLL_BARRIER, d->sig[0], d->sig[1], NULL, 0, 0, &p, rc) != 0)
		return -1;
	shmrun_coll_flush(d, (uintptr_t)comm);
	return 0;
}

/* shmrun_sig0 is a signature's first word (comm's mkSig). */
static inline __attribute__((always_inline)) uint64_t shmrun_sig0(uint8_t kind, uint8_t typ, uint8_t op, int32_t root)
{
	return (uint64_t)kind << 8 * (SHMRUN_FLAG_KIND - 8) | (uint64_t)typ << 8 * (SHMRUN_FLAG_TYPE - 8) |
	       (uint64_t)op << 8 * (SHMRUN_FLAG_OP - 8) | (uint64_t)(uint32_t)root << 8 * (SHMRUN_FLAG_ROOT - 8);
}

/* shmrun_ctype_of is datatype dt's entry, or NULL. */
static inline __attribute__((always_inline)) const shmrun_ctype *shmrun_ctype_of(MPI_Datatype dt)
{
	uintptr_t i = SHMRUN_DT(dt);
	return i < 256 && shmrun_ctypes[i].cls != 0 ? &shmrun_ctypes[i] : NULL;
}

/* shmrun_partial_dear reports whether a call whose ranks read only some
 * ranks' data (a rooted call, a scan) had better take the Go path, which
 * lets a rank run ahead of the ranks whose data it does not read, than
 * wait here for every rank: when ranks share cores (the short spin of the
 * oversubscribed wait policy), waiting for every rank every call measured
 * 6-7 us a Bcast, Gather or Scatter at 8 ranks on 2 cores, Go's path
 * 0.3-1.5 us with its cgo call. */
static inline __attribute__((always_inline)) int shmrun_partial_dear(const shmrun_comm_desc *d)
{
	return d->spin < SHMRUN_PAUSE_FROM;
}

/* shmrun_fast_bcast is MPI_Bcast of up to SHMRUN_INLINE_LEN bytes
 * (comm's bcast, inline): the root's data rides in its line. */
static inline __attribute__((always_inline)) int shmrun_fast_bcast(void *buf, MPI_Count count, MPI_Datatype dt, int root,
								   MPI_Comm comm, int *rc)
{
	shmrun_comm_desc *d = shmrun_comm_of(comm);
	const shmrun_ctype *ct = shmrun_ctype_of(dt);
	if (d == NULL || ct == NULL || count < 0 || count > SHMRUN_INLINE_LEN / ct->size || root < 0 ||
	    (uint32_t)root >= d->n || shmrun_partial_dear(d))
		return -1;
	size_t nb = (size_t)count * ct->size;
	if (nb > 0 && buf == NULL)
		return -1;
	int me = (int)d->me == root, p;
	if (shmrun_fast_round(d, (uintptr_t)comm, SHMRUN_COLL_BCAST, shmrun_sig0(SHMRUN_COLL_BCAST, ct->mtyp, 0, root),
			      (uint64_t)count * ct->mmul, buf, me ? nb : 0, SHMRUN_SAME_COUNT | SHMRUN_SAME_ROOT, &p, rc) != 0)
		return -1;
	if (*rc == MPI_SUCCESS && !me && nb > 0)
		memcpy(buf, SHMRUN_FLINE(d, root, p) + SHMRUN_FLAG_INLINE, nb);
	shmrun_coll_flush(d, (uintptr_t)comm);
	return 0;
}

/* The folds of the reductions: acc = x_0 op (x_1 op (... op x_{n-1})),
 * as comm folds them (acc starts as x_{n-1}; each step is
 * acc = acc op x_q, package atomics' ReduceLocal with inout = acc), bit
 * for bit: integer sums and products wrap, Max and Min on floats are Go's
 * math.Max and math.Min (an infinity of the op's sign wins, then NaN,
 * then +0 over -0), float32 through float64. */
static inline double shmrun_go_nan(void)
{
	uint64_t b = 0x7FF8000000000001ull; /* Go's math.NaN() */
	double x;
	memcpy(&x, &b, sizeof x);
	return x;
}
static inline double shmrun_go_max(double x, double y)
{
	if (__builtin_isinf_sign(x) > 0 || __builtin_isinf_sign(y) > 0)
		return __builtin_inf();
	if (x != x || y != y)
		return shmrun_go_nan();
	if (x == 0 && x == y)
		return __builtin_signbit(x) ? y : x;
	return x > y ? x : y;
}
static inline double shmrun_go_min(double x, double y)
{
	if (__builtin_isinf_sign(x) < 0 || __builtin_isinf_sign(y) < 0)
		return -__builtin_inf();
	if (x != x || y != y)
		return shmrun_go_nan();
	if (x == 0 && x == y)
		return __builtin_signbit(x) ? x : y;
	return x < y ? x : y;
}

#define SHMRUN_FOLD_INT(NAME, T)                                                                           \
	static void NAME(T *acc, const T *x, int m, MPI_Op op)                                             \
	{                                                                                                  \
		for (int i = 0; i < m; i++) {                                                              \
			T a = acc[i], b = x[i];                                                            \
			if (op == MPI_SUM)                                                                 \
				a = (T)((uint64_t)a + (uint64_t)b);                                        \
			else if (op == MPI_PROD)                                                           \
				a = (T)((uint64_t)a * (uint64_t)b);                                        \
			else if (op == MPI_MAX)                                                            \
				a = a > b ? a : b;                                                         \
			else if (op == MPI_MIN)                                                            \
				a = a < b ? a : b;                                                         \
			else if (op == MPI_BAND)                                                           \
				a &= b;                                                                    \
			else if (op == MPI_BOR)                                                            \
				a |= b;                                                                    \
			else if (op == MPI_BXOR)                                                           \
				a ^= b;                                                                    \
			else if (op == MPI_LAND)                                                           \
				a = a != 0 && b != 0;                                                      \
			else if (op == MPI_LOR)                                                            \
				a = a != 0 || b != 0;                                                      \
			else                                                                               \
				a = (a != 0) != (b != 0);                                                  \
			acc[i] = a;                                                                        \
		}                                                                                          \
	}
SHMRUN_FOLD_INT(shmrun_fold_i8, int8_t)
SHMRUN_FOLD_INT(shmrun_fold_i16, int16_t)
SHMRUN_FOLD_INT(shmrun_fold_i32, int32_t)
SHMRUN_FOLD_INT(shmrun_fold_i64, int64_t)
SHMRUN_FOLD_INT(shmrun_fold_u8, uint8_t)
SHMRUN_FOLD_INT(shmrun_fold_u16, uint16_t)
SHMRUN_FOLD_INT(shmrun_fold_u32, uint32_t)
SHMRUN_FOLD_INT(shmrun_fold_u64, uint64_t)

#define SHMRUN_FOLD_FLOAT(NAME, T)                                                      \
	static void NAME(T *acc, const T *x, int m, MPI_Op op)                          \
	{                                                                               \
		for (int i = 0; i < m; i++) {                                           \
			if (op == MPI_SUM)                                              \
				acc[i] = acc[i] + x[i];                                 \
			else if (op == MPI_PROD)                                        \
				acc[i] = acc[i] * x[i];                                 \
			else if (op == MPI_MAX)                                         \
				acc[i] = (T)shmrun_go_max(acc[i], x[i]);                \
			else                                                            \
				acc[i] = (T)shmrun_go_min(acc[i], x[i]);                \
		}                                                                       \
	}
SHMRUN_FOLD_FLOAT(shmrun_fold_f32, float)
SHMRUN_FOLD_FLOAT(shmrun_fold_f64, double)

/* shmrun_fold_step is acc = acc op x over m elements of type ct. */
static inline void shmrun_fold_step(void *acc, const void *x, int m, const shmrun_ctype *ct, MPI_Op op)
{
	switch (ct->cls << 4 | ct->size) {
	case SHMRUN_CLS_SIGNED << 4 | 1: shmrun_fold_i8(acc, x, m, op); break;
	case SHMRUN_CLS_SIGNED << 4 | 2: shmrun_fold_i16(acc, x, m, op); break;
	case SHMRUN_CLS_SIGNED << 4 | 4: shmrun_fold_i32(acc, x, m, op); break;
	case SHMRUN_CLS_SIGNED << 4 | 8: shmrun_fold_i64(acc, x, m, op); break;
	case SHMRUN_CLS_UNSIGNED << 4 | 1: shmrun_fold_u8(acc, x, m, op); break;
	case SHMRUN_CLS_UNSIGNED << 4 | 2: shmrun_fold_u16(acc, x, m, op); break;
	case SHMRUN_CLS_UNSIGNED << 4 | 4: shmrun_fold_u32(acc, x, m, op); break;
	case SHMRUN_CLS_UNSIGNED << 4 | 8: shmrun_fold_u64(acc, x, m, op); break;
	case SHMRUN_CLS_FLOAT << 4 | 4: shmrun_fold_f32(acc, x, m, op); break;
	case SHMRUN_CLS_FLOAT << 4 | 8: shmrun_fold_f64(acc, x, m, op); break;
	}
}

/* shmrun_fast_reduce is MPI_Reduce (kind SHMRUN_COLL_REDUCE) and
 * MPI_Allreduce (SHMRUN_COLL_ALLREDUCE, root -1) of up to
 * SHMRUN_INLINE_LEN bytes of integers or floats with a predefined op
 * (comm's reduce, inline): every rank's data rides in its line, and each
 * receiving rank folds them all in rank order. */
static inline __attribute__((always_inline)) int shmrun_fast_reduce(const void *sendbuf, void *recvbuf, MPI_Count count,
								    MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm,
								    uint8_t kind, int *rc)
{
	shmrun_comm_desc *d = shmrun_comm_of(comm);
	const shmrun_ctype *ct = shmrun_ctype_of(dt);
	uintptr_t oi = (uintptr_t)op - (uintptr_t)MPI_OP_NULL;
	if (d == NULL || ct == NULL || ct->cls > SHMRUN_CLS_FLOAT || oi >= 32 || shmrun_cops[oi] == 0 ||
	    ((shmrun_copok[ct->typ & 31] >> shmrun_cops[oi]) & 1) == 0 || count < 0 ||
	    count > SHMRUN_INLINE_LEN / ct->size ||
	    (kind == SHMRUN_COLL_REDUCE && (root < 0 || (uint32_t)root >= d->n || shmrun_partial_dear(d))))
		return -1;
	size_t nb = (size_t)count * ct->size;
	const void *src = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
	int receives = kind == SHMRUN_COLL_ALLREDUCE || (uint32_t)root == d->me, p;
	/* NULL buffers and aliased or overlapping ones (without
	 * MPI_IN_PLACE): errors Go reports. */
	if (nb > 0 && (src == NULL || (receives && (recvbuf == NULL || (sendbuf != MPI_IN_PLACE &&
									(const char *)recvbuf < (const char *)sendbuf + nb &&
									(const char *)sendbuf < (const char *)recvbuf + nb)))))
		return -1;
	if (shmrun_fast_round(d, (uintptr_t)comm, kind, shmrun_sig0(kind, ct->typ, shmrun_cops[oi], root), (uint64_t)count, src,
			      nb, SHMRUN_SAME_COUNT | SHMRUN_SAME_ROOT | SHMRUN_SAME_OP, &p, rc) != 0)
		return -1;
	if (*rc == MPI_SUCCESS && receives && nb > 0) {
		/* This rank's own data from src, not from its line: loading
		 * that back while the others poll it stalls. The fold is into
		 * acc, so src (recvbuf in place) is intact until the end. */
		uint64_t acc[SHMRUN_INLINE_LEN / 8 + 1];
		uint32_t last = d->n - 1;
		memcpy(acc, last == d->me ? src : SHMRUN_FLINE(d, last, p) + SHMRUN_FLAG_INLINE, nb);
		for (int q = (int)d->n - 2; q >= 0; q--)
			shmrun_fold_step(acc, (uint32_t)q == d->me ? src : SHMRUN_FLINE(d, q, p) + SHMRUN_FLAG_INLINE, (int)count,
					 ct, op);
		memcpy(recvbuf, acc, nb);
	}
	shmrun_coll_flush(d, (uintptr_t)comm);
	return 0;
}

/* shmrun_piece is comm's piece: the most bytes a block may have when n
 * blocks ride packed in room bytes (a multiple of 16 from 16 up). */
static inline __attribute__((always_inline)) size_t shmrun_piece(size_t room, uint32_t n)
{
	size_t p = room / n;
	return p >= 16 ? p & ~(size_t)15 : p;
}

/* shmrun_overlap reports whether [a, a+na) and [b, b+nb) share a byte. */
static inline __attribute__((always_inline)) int shmrun_overlap(const void *a, size_t na, const void *b, size_t nb)
{
	return na > 0 && nb > 0 && (const char *)a < (const char *)b + nb && (const char *)b < (const char *)a + na;
}

/* shmrun_fast_move is MPI_Gather, MPI_Scatter, MPI_Allgather and
 * MPI_Alltoall (kind) of blocks of a predefined datatype that ride inline,
 * with the same count and type on both sides where both are used: comm's
 * fast paths of gather, scatter, allgather and alltoall, mirrored (the
 * same signature, the same bytes at the same place of the line), every
 * rank waiting for every rank as the other calls here do. MPI_IN_PLACE
 * where the standard allows it (a Gather's root's send buffer, a
 * Scatter's root's receive buffer, Allgather's and Alltoall's send
 * buffer): the data is where the standard says. Counts or types that
 * differ, MPI_IN_PLACE elsewhere, NULL or overlapping buffers: the Go
 * path, which reports what is wrong or converts. */
static inline __attribute__((always_inline)) int shmrun_fast_move(const void *sendbuf, MPI_Count scount, MPI_Datatype stype,
								  void *recvbuf, MPI_Count rcount, MPI_Datatype rtype, int root,
								  MPI_Comm comm, uint8_t kind, int *rc)
{
	shmrun_comm_desc *d = shmrun_comm_of(comm);
	if (d == NULL)
		return -1;
	uint32_t n = d->n, me = d->me;
	int scatter = kind == SHMRUN_COLL_SCATTER, gather = kind == SHMRUN_COLL_GATHER, rooted = scatter || gather;
	if (rooted && (root < 0 || (uint32_t)root >= n || shmrun_partial_dear(d)))
		return -1;
	int isroot = rooted && (uint32_t)root == me;
	/* In place: the side MPI_IN_PLACE stands for is not used, and its
	 * data is in the other buffer (a Scatter's root: in its send buffer;
	 * elsewhere in the receive buffer, at this rank's block). */
	int sin = sendbuf == MPI_IN_PLACE, rin = recvbuf == MPI_IN_PLACE;
	if ((sin && (scatter || (gather && !isroot))) || (rin && !(scatter && isroot)))
		return -1;
	/* Whose count and type every rank has: a Gather's send side, a
	 * Scatter's receive side, both of Allgather's and Alltoall's; the
	 * other side only at the root. In place, the one used. */
	int sused = (!scatter || isroot) && !sin, rused = (!gather || isroot) && !rin;
	int fromr = scatter ? rused : !sused; /* the count and type are the receive side's */
	const shmrun_ctype *ct = shmrun_ctype_of(fromr ? rtype : stype);
	MPI_Count count = fromr ? rcount : scount;
	if (ct == NULL || count < 0 || count > SHMRUN_INLINE_LEN || (sused && rused && (stype != rtype || scount != rcount)))
		return -1;
	int packed = scatter || kind == SHMRUN_COLL_ALLTOALL; /* n blocks in one line */
	size_t b = (size_t)count * ct->size;
	if (b > (packed ? shmrun_piece(SHMRUN_INLINE_LEN, n) : SHMRUN_INLINE_LEN) || (packed && b == 0))
		return -1;
	size_t sb = !sused ? 0 : packed ? n * b : b;
	size_t rb = !rused ? 0 : scatter ? b : n * b;
	if ((sb > 0 && sendbuf == NULL) || (rb > 0 && recvbuf == NULL) || shmrun_overlap(sendbuf, sb, recvbuf, rb))
		return -1;
	/* What this rank publishes: its block (a Gather's sender,
	 * Allgather), its n blocks (a Scatter's root, Alltoall), or nothing
	 * (a Gather's root, a Scatter's reader). */
	const char *in = sin ? recvbuf : sendbuf;
	size_t nb = packed ? (sused || sin ? n * b : 0) : (gather && isroot ? 0 : b);
	if (sin && !packed)
		in += me * b; /* Allgather in place: its own block of recvbuf */
	int p;
	if (shmrun_fast_round(d, (uintptr_t)comm, kind, shmrun_sig0(kind, ct->mtyp, 0, rooted ? root : -1), (uint64_t)count * ct->mmul, in,
			      nb, rooted ? SHMRUN_SAME_COUNT | SHMRUN_SAME_ROOT : SHMRUN_SAME_COUNT, &p, rc) != 0)
		return -1;
	if (*rc == MPI_SUCCESS && b > 0) {
		char *out = recvbuf;
		switch (kind) {
		case SHMRUN_COLL_SCATTER:
			if (!rin)
				memcpy(out, (isroot ? in : SHMRUN_FLINE(d, root, p) + SHMRUN_FLAG_INLINE) + me * b, b);
			break;
		case SHMRUN_COLL_ALLTOALL:
			for (uint32_t q = 0; q < n; q++)
				if (q != me)
					memcpy(out + q * b, SHMRUN_FLINE(d, q, p) + SHMRUN_FLAG_INLINE + me * b, b);
				else if (!sin)
					memcpy(out + q * b, in + q * b, b);
			break;
		default: /* a Gather's root, Allgather */
			if (!gather || isroot)
				for (uint32_t q = 0; q < n; q++)
					if (q != me)
						memcpy(out + q * b, SHMRUN_FLINE(d, q, p) + SHMRUN_FLAG_INLINE, b);
					else if (!sin)
						memcpy(out + q * b, in, b);
		}
	}
	shmrun_coll_flush(d, (uintptr_t)comm);
	return 0;
}

/* shmrun_reduce_ok reports whether count elements of ct reduce by op on
 * the fast paths: integers or floats, a predefined op defined on them,
 * riding inline. */
static inline __attribute__((always_inline)) int shmrun_reduce_ok(const shmrun_ctype *ct, MPI_Op op, MPI_Count count, size_t room)
{
	uintptr_t oi = (uintptr_t)op - (uintptr_t)MPI_OP_NULL;
	return ct != NULL && ct->cls <= SHMRUN_CLS_FLOAT && oi < 32 && shmrun_cops[oi] != 0 &&
	       ((shmrun_copok[ct->typ & 31] >> shmrun_cops[oi]) & 1) != 0 && count >= 0 && (size_t)count <= room / ct->size;
}

/* shmrun_fast_scan is MPI_Scan (kind SHMRUN_COLL_SCAN) and MPI_Exscan
 * (SHMRUN_COLL_EXSCAN) of integers or floats riding inline with a
 * predefined op (comm's scan, inline): each rank folds the data of ranks
 * 0 to itself (Exscan: to the one below), in comm's order; rank 0 of an
 * Exscan leaves recvbuf as it was. */
static inline __attribute__((always_inline)) int shmrun_fast_scan(const void *sendbuf, void *recvbuf, MPI_Count count,
								  MPI_Datatype dt, MPI_Op op, MPI_Comm comm, uint8_t kind, int *rc)
{
	shmrun_comm_desc *d = shmrun_comm_of(comm);
	const shmrun_ctype *ct = shmrun_ctype_of(dt);
	if (d == NULL || !shmrun_reduce_ok(ct, op, count, SHMRUN_INLINE_LEN) || shmrun_partial_dear(d))
		return -1;
	size_t nb = (size_t)count * ct->size;
	const void *src = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
	uint32_t hi = kind == SHMRUN_COLL_SCAN ? d->me + 1 : d->me; /* the ranks folded: [0, hi) */
	if (nb > 0 && (src == NULL || (hi > 0 && (recvbuf == NULL || (sendbuf != MPI_IN_PLACE && shmrun_overlap(sendbuf, nb, recvbuf, nb))))))
		return -1;
	int p;
	uintptr_t oi = (uintptr_t)op - (uintptr_t)MPI_OP_NULL;
	if (shmrun_fast_round(d, (uintptr_t)comm, kind, shmrun_sig0(kind, ct->typ, shmrun_cops[oi], -1), (uint64_t)count, src, nb,
			      SHMRUN_SAME_COUNT | SHMRUN_SAME_OP, &p, rc) != 0)
		return -1;
	if (*rc == MPI_SUCCESS && hi > 0 && nb > 0) {
		uint64_t acc[SHMRUN_INLINE_LEN / 8 + 1];
		uint32_t last = hi - 1;
		memcpy(acc, last == d->me ? src : SHMRUN_FLINE(d, last, p) + SHMRUN_FLAG_INLINE, nb);
		for (int q = (int)hi - 2; q >= 0; q--)
			shmrun_fold_step(acc, SHMRUN_FLINE(d, q, p) + SHMRUN_FLAG_INLINE, (int)count, ct, op);
		memcpy(recvbuf, acc, nb);
	}
	shmrun_coll_flush(d, (uintptr_t)comm);
	return 0;
}

/* shmrun_fast_reduce_scatter_block is MPI_Reduce_scatter_block of n
 * blocks of count integers or floats riding inline together, with a
 * predefined op (comm's reduceScatter, inline): every rank publishes its
 * n blocks and folds block me of every rank's, in comm's order. */
static inline __attribute__((always_inline)) int shmrun_fast_reduce_scatter_block(const void *sendbuf, void *recvbuf, MPI_Count count,
										  MPI_Datatype dt, MPI_Op op, MPI_Comm comm, int *rc)
{
	shmrun_comm_desc *d = shmrun_comm_of(comm);
	const shmrun_ctype *ct = shmrun_ctype_of(dt);
	if (d == NULL || count <= 0 || count > SHMRUN_INLINE_LEN || !shmrun_reduce_ok(ct, op, count * (MPI_Count)d->n, SHMRUN_INLINE_LEN))
		return -1;
	size_t b = (size_t)count * ct->size, nb = d->n * b;
	const void *src = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
	if (src == NULL || recvbuf == NULL || (sendbuf != MPI_IN_PLACE && shmrun_overlap(sendbuf, nb, recvbuf, b)))
		return -1;
	int p;
	uintptr_t oi = (uintptr_t)op - (uintptr_t)MPI_OP_NULL;
	if (shmrun_fast_round(d, (uintptr_t)comm, SHMRUN_COLL_REDUCE_SCATTER_BLOCK,
			      shmrun_sig0(SHMRUN_COLL_REDUCE_SCATTER_BLOCK, ct->typ, shmrun_cops[oi], -1), (uint64_t)count, src, nb,
			      SHMRUN_SAME_COUNT | SHMRUN_SAME_OP, &p, rc) != 0)
		return -1;
	if (*rc == MPI_SUCCESS) {
		uint64_t acc[SHMRUN_INLINE_LEN / 8 + 1];
		size_t at = d->me * b; /* block me of each rank's n */
		uint32_t last = d->n - 1;
		memcpy(acc, (last == d->me ? (const char *)src : SHMRUN_FLINE(d, last, p) + SHMRUN_FLAG_INLINE) + at, b);
		for (int q = (int)d->n - 2; q >= 0; q--)
			shmrun_fold_step(acc, ((uint32_t)q == d->me ? (const char *)src : SHMRUN_FLINE(d, q, p) + SHMRUN_FLAG_INLINE) + at,
					 (int)count, ct, op);
		memcpy(recvbuf, acc, b);
	}
	shmrun_coll_flush(d, (uintptr_t)comm);
	return 0;
}
