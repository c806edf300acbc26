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
 * fast path knows. */
static inline __attribute__((always_inline)) int shmrun_elem(MPI_Datatype t, int *kind)
{
	uintptr_t v = (uintptr_t)t;
	*kind = 1;
	switch (v) {
	case (uintptr_t)MPI_INT:
	case (uintptr_t)MPI_UNSIGNED:
	case (uintptr_t)MPI_INT32_T:
	case (uintptr_t)MPI_UINT32_T:
		return 4;
	case (uintptr_t)MPI_LONG:
	case (uintptr_t)MPI_UNSIGNED_LONG:
	case (uintptr_t)MPI_LONG_LONG:
	case (uintptr_t)MPI_UNSIGNED_LONG_LONG:
	case (uintptr_t)MPI_INT64_T:
	case (uintptr_t)MPI_UINT64_T:
	case (uintptr_t)MPI_AINT:
	case (uintptr_t)MPI_COUNT:
	case (uintptr_t)MPI_OFFSET:
		return 8;
	case (uintptr_t)MPI_FLOAT:
		*kind = 2;
		return 4;
	case (uintptr_t)MPI_DOUBLE:
		*kind = 2;
		return 8;
	case (uintptr_t)MPI_BYTE:
	case (uintptr_t)MPI_CHAR:
	case (uintptr_t)MPI_UNSIGNED_CHAR:
	case (uintptr_t)MPI_INT8_T:
	case (uintptr_t)MPI_UINT8_T:
		*kind = 0;
		return 1;
	case (uintptr_t)MPI_SHORT:
	case (uintptr_t)MPI_INT16_T:
	case (uintptr_t)MPI_UINT16_T:
		*kind = 0;
		return 2;
	}
	return 0;
}

static inline __attribute__((always_inline)) int shmrun_open(const shmrun_win_desc *d, int t)
{
	return (unsigned)t < (unsigned)d->n &&
	       (__atomic_load_n(&d->lockall, __ATOMIC_RELAXED) || __atomic_load_n(&d->locked[t], __ATOMIC_RELAXED));
}

/* shmrun_target is the address of n bytes at disp in target t's part, or
 * NULL when they are not all inside it. */
static inline __attribute__((always_inline)) char *shmrun_target(const shmrun_win_desc *d, int t, MPI_Aint disp, size_t n)
{
	MPI_Aint du = d->disp[t], size = d->size[t];
	if (disp < 0 || disp > d->maxdisp[t]) /* no division here: it costs more than the copy */
		return NULL;
	MPI_Aint off = disp * du;
	if (n > (size_t)(size - off))
		return NULL;
	return d->base[t] + off;
}

static inline __attribute__((always_inline)) int shmrun_fast_copy(MPI_Win win, int put, void *origin, MPI_Count ocount, MPI_Datatype otype, int t,
				   MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype)
{
	int kind, sz;
	shmrun_win_desc *d = shmrun_desc(win);
	if (d == NULL || otype != ttype || ocount != tcount || ocount < 0 || !shmrun_open(d, t) ||
	    (sz = shmrun_elem(otype, &kind)) == 0)
		return -1;
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

static inline __attribute__((always_inline)) int shmrun_fast_flush(MPI_Win win, int t)
{
	shmrun_win_desc *d = shmrun_desc(win);
	if (d == NULL || !shmrun_open(d, t))
		return -1;
	shmrun_full_fence(d);
	return 0;
}

static inline __attribute__((always_inline)) int shmrun_fast_flush_all(MPI_Win win)
{
	shmrun_win_desc *d = shmrun_desc(win);
	if (d == NULL || !__atomic_load_n(&d->lockall, __ATOMIC_RELAXED))
		return -1;
	shmrun_full_fence(d);
	return 0;
}

/* shmrun_rmw does op on the aligned element of sz bytes at p: the origin
 * value at v (unused for MPI_NO_OP), the old value to res if res. kind is
 * shmrun_elem's. -1: an op (or type) the fast path leaves to Go. */
static inline __attribute__((always_inline)) int shmrun_rmw(void *p, const void *v, void *res, MPI_Op op, int sz, int kind)
{
	if (sz == 8) {
		uint64_t *w = p, x = 0, old;
		if (op != MPI_NO_OP)
			memcpy(&x, v, 8);
		if (op == MPI_NO_OP)
			old = __atomic_load_n(w, __ATOMIC_SEQ_CST);
		else if (op == MPI_REPLACE)
			old = __atomic_exchange_n(w, x, __ATOMIC_SEQ_CST);
		else if (kind == 1 && op == MPI_SUM)
			old = __atomic_fetch_add(w, x, __ATOMIC_SEQ_CST);
		else if (kind == 1 && op == MPI_BAND)
			old = __atomic_fetch_and(w, x, __ATOMIC_SEQ_CST);
		else if (kind == 1 && op == MPI_BOR)
			old = __atomic_fetch_or(w, x, __ATOMIC_SEQ_CST);
		else if (kind == 1 && op == MPI_BXOR)
			old = __atomic_fetch_xor(w, x, __ATOMIC_SEQ_CST);
		else if (kind == 2 && op == MPI_SUM) {
			double a, b;
			uint64_t nw;
			memcpy(&b, &x, 8);
			old = __atomic_load_n(w, __ATOMIC_SEQ_CST);
			do {
				memcpy(&a, &old, 8);
				a += b;
				memcpy(&nw, &a, 8);
			} while (!__atomic_compare_exchange_n(w, &old, nw, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
		} else
			return -1;
		if (res)
			memcpy(res, &old, 8);
		return 0;
	}
	if (sz == 4) {
		uint32_t *w = p, x = 0, old;
		if (op != MPI_NO_OP)
			memcpy(&x, v, 4);
		if (op == MPI_NO_OP)
			old = __atomic_load_n(w, __ATOMIC_SEQ_CST);
		else if (op == MPI_REPLACE)
			old = __atomic_exchange_n(w, x, __ATOMIC_SEQ_CST);
		else if (kind == 1 && op == MPI_SUM)
			old = __atomic_fetch_add(w, x, __ATOMIC_SEQ_CST);
		else if (kind == 1 && op == MPI_BAND)
			old = __atomic_fetch_and(w, x, __ATOMIC_SEQ_CST);
		else if (kind == 1 && op == MPI_BOR)
			old = __atomic_fetch_or(w, x, __ATOMIC_SEQ_CST);
		else if (kind == 1 && op == MPI_BXOR)
			old = __atomic_fetch_xor(w, x, __ATOMIC_SEQ_CST);
		else if (kind == 2 && op == MPI_SUM) {
			float a, b;
			uint32_t nw;
			memcpy(&b, &x, 4);
			old = __atomic_load_n(w, __ATOMIC_SEQ_CST);
			do {
				memcpy(&a, &old, 4);
				a += b;
				memcpy(&nw, &a, 4);
			} while (!__atomic_compare_exchange_n(w, &old, nw, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
		} else
			return -1;
		if (res)
			memcpy(res, &old, 4);
		return 0;
	}
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

static inline __attribute__((always_inline)) int shmrun_fast_cas(MPI_Win win, const void *origin, const void *compare, void *res, MPI_Datatype type, int t,
				  MPI_Aint disp)
{
	int kind, sz;
	shmrun_win_desc *d = shmrun_desc(win);
	if (d == NULL || !shmrun_open(d, t) || (sz = shmrun_elem(type, &kind)) < 4 || kind != 1 || origin == NULL ||
	    compare == NULL || res == NULL)
		return -1;
	char *p = shmrun_target(d, t, disp, (size_t)sz);
	if (p == NULL || ((uintptr_t)p & (uintptr_t)(sz - 1)) != 0)
		return -1;
	if (sz == 8) {
		uint64_t want, nw;
		memcpy(&want, compare, 8);
		memcpy(&nw, origin, 8);
		__atomic_compare_exchange_n((uint64_t *)p, &want, nw, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		memcpy(res, &want, 8);
	} else {
		uint32_t want, nw;
		memcpy(&want, compare, 4);
		memcpy(&nw, origin, 4);
		__atomic_compare_exchange_n((uint32_t *)p, &want, nw, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		memcpy(res, &want, 4);
	}
	return 0;
}
