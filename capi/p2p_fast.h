/*
 * p2p_fast.h - MPI_Send, MPI_Isend, MPI_Recv and MPI_Irecv of eager
 * messages, their completion calls and persistent requests, without
 * leaving C: a call into Go costs ~50-90 ns here, about a one-way
 * message's whole software budget. Over a communicator's point-to-point
 * descriptor (capi.h's shmrun_p2p_comm), under the engine's lock and only
 * while its quiet word says Go's engine holds nothing in progress, they
 * write and read the packets exactly as package comm's engine does
 * (engine.sendNow, reserve and publish; drain, handle and giveBack; the
 * format is docs/FORMAT.md's inbox): a packet of the eager kind, its
 * header, the data, the stamp stored last, the receiver's doorbell rung
 * if it sleeps; a receive takes the next packet of its source's ring if
 * it is an eager message of this communicator with the tag and a type
 * that match and room for it, copies it out, zeroes the cells and gives
 * the room back (from MPI_ANY_SOURCE, the first ring whose next packet
 * it takes); receives posted before their messages queue in C (capi.h's
 * shmrun_cq). Anything else - another kind of packet, a mismatch, a
 * full ring, MPI_PROC_NULL, a synchronous or large send,
 * a derived or unknown datatype, a lock held elsewhere, an observed job,
 * a wait past the spin - returns -1 before changing anything, and the
 * call takes the Go path, which does it all and names any error.
 */
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "capi.h"
#include "shmrun/format.h"

#define SHMRUN_FUTEX_WAKE 1 /* linux/futex.h's FUTEX_WAKE: shared, never private */

/* Messages this process sent and received in C (written under an
 * engine's lock; shmrun_p2p_fast_count in mpi.c reads it for the tests). */
extern unsigned long long shmrun_p2p_fast;

/* shmrun_p2p_of is comm's point-to-point descriptor, or NULL. */
static inline __attribute__((always_inline)) shmrun_p2p_comm *shmrun_p2p_of(MPI_Comm comm)
{
	uintptr_t h = (uintptr_t)comm;
	shmrun_p2p_comm *d = __atomic_load_n(&shmrun_p2ps[SHMRUN_COMM_SLOT(h)], __ATOMIC_ACQUIRE);
	return d != NULL && d->handle == h ? d : NULL;
}

/* shmrun_p2p_lock takes the engine's lock, trying a few times (its Go
 * holders do short work; one that waits longer leaves the call to Go,
 * whose lock sleeps). */
static inline __attribute__((always_inline)) int shmrun_p2p_lock(shmrun_p2p *e)
{
	for (int i = 0; i < 64; i++) {
		uint32_t free = 0;
		if (__atomic_load_n(&e->lock, __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&e->lock, &free, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return 1;
		shmrun_relax(SHMRUN_PAUSE_FROM);
	}
	return 0;
}

static inline __attribute__((always_inline)) void shmrun_p2p_unlock(shmrun_p2p *e)
{
	__atomic_store_n(&e->lock, 0, __ATOMIC_RELEASE);
}

/* shmrun_p2p_type is a datatype's element size and the signature digest
 * its data carries (package typesig: a basic type's code; MPI_BYTE's is
 * 0, which matches anything); 0 if the fast path does not know it or the
 * digest depends on the count (MPI_FLOAT_INT). */
static inline __attribute__((always_inline)) size_t shmrun_p2p_type(MPI_Datatype dt, uint32_t *sig)
{
	if (dt == MPI_BYTE) {
		*sig = 0;
		return 1;
	}
	const shmrun_ctype *ct = shmrun_ctype_of(dt);
	if (ct == NULL || ct->msig == 0)
		return 0;
	*sig = ct->msig;
	return ct->size;
}

/* shmrun_p2p_notify rings a doorbell after the state change it announces
 * was stored with a release (comm's engine.notify): a full fence before
 * the load of its sleepers, unless this process is registered for the
 * sleepers' membarrier (the doorbells are light events; program order
 * then suffices, kept by a compiler barrier); then a wake-up only if
 * someone sleeps on it. */
static inline __attribute__((always_inline)) void shmrun_p2p_notify(uint32_t *seq, uint32_t *sleepers)
{
	if (shmrun_light_fence)
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	else
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(sleepers, __ATOMIC_SEQ_CST) != 0) {
		__atomic_fetch_add(seq, 1, __ATOMIC_SEQ_CST);
		syscall(SYS_futex, seq, SHMRUN_FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
	}
}

static inline __attribute__((always_inline)) uint64_t shmrun_cells(uint64_t k)
{
	return (k + SHMRUN_PKT_CELL - 1) & ~(uint64_t)(SHMRUN_PKT_CELL - 1);
}

/* shmrun_p2p_publish stores the stamp of the packet of k bytes at pos:
 * the release that hands it to the reader (peer.publish); the doorbell is
 * rung by shmrun_p2p_notify. */
static inline __attribute__((always_inline)) void shmrun_p2p_publish(shmrun_p2p_tx *t, uint64_t pos, uint64_t k)
{
	if (++t->stamp == 0)
		t->stamp = 1;
	__atomic_store_n((uint32_t *)(t->ring + pos), t->stamp, __ATOMIC_RELEASE);
	t->head += k;
}

/* shmrun_send_args checks an eager send's arguments for the fast path:
 * the communicator's descriptor (NULL: Go's), the data's bytes and
 * signature digest. */
static inline __attribute__((always_inline)) shmrun_p2p_comm *shmrun_send_args(const void *buf, MPI_Count count, MPI_Datatype dt,
									    int dest, int tag, MPI_Comm comm, uint64_t *n,
									    uint32_t *sig)
{
	shmrun_p2p_comm *d = shmrun_p2p_of(comm);
	size_t es = shmrun_p2p_type(dt, sig);
	if (d == NULL || es == 0 || (uint32_t)dest >= d->n || tag < 0 || count < 0)
		return NULL;
	if ((uint64_t)count > d->e->eager || (uint64_t)count * es > d->e->eager || (buf == NULL && count > 0))
		return NULL;
	*n = (uint64_t)count * es;
	if (count == 0)
		*sig = 0; /* empty data: Any, as typesig says */
	return d;
}

/* shmrun_send_locked writes the eager packet of n bytes to dest (engine's
 * peer.reserve, header, copy, publish): 0, or -1 with nothing written (the
 * ring not mapped yet, or full: Go queues it). The lock is held and
 * quiet is 1; the caller rings *tp's doorbell (shmrun_p2p_notify). */
static inline __attribute__((always_inline)) int shmrun_send_locked(shmrun_p2p_comm *d, int dest, const void *buf, uint64_t n,
								    uint32_t sig, int tag, shmrun_p2p_tx **tp)
{
	shmrun_p2p *e = d->e;
	shmrun_p2p_tx *t = &d->tx[d->world[dest]];
	if (t->ring == NULL)
		return -1;
	/* peer.reserve */
	uint64_t size = t->ring_len, k = shmrun_cells(SHMRUN_PKT_HEADER + n);
	uint64_t pos = t->head & (size - 1), need = k;
	if (pos + k > size)
		need += size - pos;
	if (t->head - t->seen_tail + need > size) {
		t->seen_tail = __atomic_load_n(t->tail, __ATOMIC_ACQUIRE);
		if (t->head - t->seen_tail + need > size)
			return -1;
	}
	if (pos + k > size) {
		t->ring[pos + SHMRUN_PKT_KIND] = SHMRUN_PKT_SKIP;
		shmrun_p2p_publish(t, pos, size - pos);
		pos = 0;
	}
	char *b = t->ring + pos;
	uint32_t w = SHMRUN_PKT_EAGER | sig << 8, ctx = d->ctx, ptag = (uint32_t)tag;
	uint64_t id = ++e->next_id;
	memcpy(b + SHMRUN_PKT_KIND, &w, 4);
	memcpy(b + SHMRUN_PKT_CTX, &ctx, 4);
	memcpy(b + SHMRUN_PKT_TAG, &ptag, 4);
	memcpy(b + SHMRUN_PKT_SIZE, &n, 8);
	memcpy(b + SHMRUN_PKT_ID, &id, 8);
	if (n > 0)
		memcpy(b + SHMRUN_PKT_HEADER, buf, n);
	shmrun_p2p_publish(t, pos, k);
	shmrun_p2p_fast++;
	*tp = t;
	return 0;
}

/* shmrun_fast_send sends count elements of dt to dest as one eager packet
 * (MPI_Send, MPI_Isend: complete once it returns 0; with req, the
 * request handle of a completed send goes there). */
static inline __attribute__((always_inline)) int shmrun_fast_send(const void *buf, MPI_Count count, MPI_Datatype dt, int dest,
								  int tag, MPI_Comm comm, MPI_Request *req)
{
	uint64_t n;
	uint32_t sig;
	shmrun_p2p_comm *d = shmrun_send_args(buf, count, dt, dest, tag, comm, &n, &sig);
	if (d == NULL)
		return -1;
	shmrun_p2p *e = d->e;
	/* A glance at quiet first: while Go has work in progress, leave the
	 * lock to the threads doing it. */
	if (__atomic_load_n(&e->quiet, __ATOMIC_RELAXED) == 0 || !shmrun_p2p_lock(e))
		return -1;
	shmrun_p2p_tx *t;
	if (!e->quiet || shmrun_send_locked(d, dest, buf, n, sig, tag, &t) != 0) {
		shmrun_p2p_unlock(e);
		return -1;
	}
	shmrun_p2p_notify(t->seq, t->sleepers);
	if (req != NULL)
		*req = (MPI_Request)(SHMRUN_REQ_SENT | (((uintptr_t)shmrun_p2p_fast << 4) & SHMRUN_REQ_SENT_K));
	shmrun_p2p_unlock(e);
	return 0;
}

/* shmrun_p2p_give_back zeroes the first word of every cell consumed
 * since the last tail and publishes the new tail to the sender, whose
 * doorbell t holds (engine.giveBack). */
static inline __attribute__((always_inline)) void shmrun_p2p_give_back(shmrun_p2p_rx *r, shmrun_p2p_tx *t)
{
	uint64_t size = r->ring_len;
	for (uint64_t g = r->given; g != r->pos; g += SHMRUN_PKT_CELL)
		*(uint32_t *)(r->ring + (g & (size - 1))) = 0;
	r->given = r->pos;
	__atomic_store_n(r->tail, r->pos, __ATOMIC_RELEASE);
	shmrun_p2p_notify(t->seq, t->sleepers);
}

/* shmrun_p2p_head is the next packet of r (from the world rank whose
 * sending state toward this rank is t) that is not a Skip, taking the
 * Skips before it; NULL while there is none, the room taken given back,
 * and then (if at is not NULL) *want is the stamp to wait for at *at.
 * The lock is held. */
static inline __attribute__((always_inline)) char *shmrun_p2p_head(shmrun_p2p_rx *r, shmrun_p2p_tx *t, uint32_t **at,
								   uint32_t *want)
{
	uint64_t size = r->ring_len;
	for (;;) {
		uint64_t pos = r->pos & (size - 1);
		char *b = r->ring + pos;
		uint32_t next = r->stamp + 1;
		if (next == 0)
			next = 1;
		if (__atomic_load_n((uint32_t *)b, __ATOMIC_ACQUIRE) != next) {
			if (r->pos != r->given)
				shmrun_p2p_give_back(r, t); /* Skips taken */
			if (at != NULL) {
				*at = (uint32_t *)b;
				*want = next;
			}
			return NULL;
		}
		if ((unsigned char)b[SHMRUN_PKT_KIND] != SHMRUN_PKT_SKIP)
			return b;
		r->stamp = next;
		r->pos += size - pos;
	}
}

/* shmrun_p2p_take_in receives the next packet of r (from the world rank
 * whose sending state toward this rank is t) into buf if it is an eager
 * message of context cctx the receive takes: 0 taken, 1 the ring is empty
 * (*want is the stamp to wait for at *at), -1 anything else (the Go
 * path). The lock is held. */
static inline __attribute__((always_inline)) int shmrun_p2p_take_in(uint32_t cctx, uint64_t eager, shmrun_p2p_rx *r,
								    shmrun_p2p_tx *t, void *buf, uint64_t room, uint32_t sig,
								    int source, int tag, MPI_Status *status, uint32_t **at,
								    uint32_t *want)
{
	char *b = shmrun_p2p_head(r, t, at, want);
	if (b == NULL)
		return 1;
	uint64_t size = r->ring_len, pos = r->pos & (size - 1);
	uint32_t w, ctx, ptag, psig;
	uint64_t n;
	memcpy(&w, b + SHMRUN_PKT_KIND, 4);
	memcpy(&ctx, b + SHMRUN_PKT_CTX, 4);
	memcpy(&ptag, b + SHMRUN_PKT_TAG, 4);
	memcpy(&n, b + SHMRUN_PKT_SIZE, 8);
	psig = w >> 8;
	if ((w & 0xff) != SHMRUN_PKT_EAGER || ctx != cctx || (tag != MPI_ANY_TAG && (int)ptag != tag) || n > eager ||
	    n > room || (psig != 0 && sig != 0 && psig != sig) || shmrun_cells(SHMRUN_PKT_HEADER + n) > size - pos) {
		if (r->pos != r->given)
			shmrun_p2p_give_back(r, t); /* Skips taken */
		return -1;
	}
	if (n > 0)
		memcpy(buf, b + SHMRUN_PKT_HEADER, n);
	if (++r->stamp == 0)
		r->stamp = 1;
	r->pos += shmrun_cells(SHMRUN_PKT_HEADER + n);
	/* The sender's next packets are on lines of its cache: ask for one a
	 * few cells on now, so that a run of them arrives overlapped, not one
	 * miss after the other (C msgrate_8, 2 ranks bound: 69 -> 59 ns a
	 * message; 8 cells ahead about the same, 16 less). */
	__builtin_prefetch(r->ring + ((r->pos + 4 * SHMRUN_PKT_CELL) & (size - 1)));
	if (r->pos - r->given >= size / 4)
		shmrun_p2p_give_back(r, t); /* else once the ring is next found empty (engine.take) */
	shmrun_p2p_fast++;
	if (status != MPI_STATUS_IGNORE) { /* capi's setStatus */
		status->MPI_SOURCE = source;
		status->MPI_TAG = (int)ptag;
		status->MPI_internal[0] = (int)(uint32_t)n;
		status->MPI_internal[1] = (int)(uint32_t)(n >> 32);
		status->MPI_internal[2] = 0;
	}
	return 0;
}

/* shmrun_p2p_take is shmrun_p2p_take_in on communicator d. */
static inline __attribute__((always_inline)) int shmrun_p2p_take(shmrun_p2p_comm *d, shmrun_p2p_rx *r, shmrun_p2p_tx *t, void *buf,
								 uint64_t room, uint32_t sig, int source, int tag,
								 MPI_Status *status, uint32_t **at, uint32_t *want)
{
	return shmrun_p2p_take_in(d->ctx, d->e->eager, r, t, buf, room, sig, source, tag, status, at, want);
}

/* shmrun_any_next is where MPI_Recv from MPI_ANY_SOURCE in C starts
 * looking (one rank further each call, so that no sender starves). */
extern unsigned shmrun_any_next;

/* shmrun_fast_recv_any is shmrun_fast_recv from MPI_ANY_SOURCE: the next
 * packet of each member's ring, from a rotating start, if it is a message
 * the receive takes; a ring whose next packet it does not take is passed
 * over (any sender's message may be taken; Go, after the spin, sees
 * behind it). Polls with the lock for as long as the engine's spin. */
static inline __attribute__((always_inline)) int shmrun_fast_recv_any(shmrun_p2p_comm *d, void *buf, uint64_t room, uint32_t sig,
								      int tag, MPI_Status *status)
{
	shmrun_p2p *e = d->e;
	uint32_t n = d->n;
	uint32_t start = __atomic_fetch_add(&shmrun_any_next, 1, __ATOMIC_RELAXED);
	for (int i = 0;; i++) {
		if (__atomic_load_n(&e->quiet, __ATOMIC_RELAXED) == 0 || !shmrun_p2p_lock(e))
			return -1;
		if (!e->quiet || e->cq != 0) {
			shmrun_p2p_unlock(e);
			return -1;
		}
		int rc = 1;
		for (uint32_t j = 0; j < n && rc == 1; j++) {
			int src = (int)((start + j) % n), w = d->world[src];
			shmrun_p2p_rx *r = &d->rx[w];
			shmrun_p2p_tx *t = &d->tx[w];
			uint32_t next = r->stamp + 1;
			if (next == 0)
				next = 1;
			if (__atomic_load_n((uint32_t *)(r->ring + (r->pos & (r->ring_len - 1))), __ATOMIC_ACQUIRE) != next)
				continue; /* nothing from it */
			if (t->ring == NULL) {
				rc = -1; /* its room could not be given back here */
				break;
			}
			uint32_t *at, want;
			rc = shmrun_p2p_take(d, r, t, buf, room, sig, src, tag, status, &at, &want);
			if (rc < 0)
				rc = 1; /* not for this receive: the next sender */
		}
		shmrun_p2p_unlock(e);
		if (rc != 1)
			return rc;
		if (i >= e->spin)
			return -1;
		shmrun_relax(e->spin);
	}
}

/* shmrun_fast_recv is MPI_Recv of an eager message from a given source
 * (or any: shmrun_fast_recv_any): it takes the message if it is there,
 * else polls the ring's next stamp for as long as the engine's spin, then
 * leaves the wait to Go. */
static inline __attribute__((always_inline)) int shmrun_fast_recv(void *buf, MPI_Count count, MPI_Datatype dt, int source, int tag,
								  MPI_Comm comm, MPI_Status *status)
{
	shmrun_p2p_comm *d = shmrun_p2p_of(comm);
	uint32_t sig;
	size_t es = shmrun_p2p_type(dt, &sig);
	if (d == NULL || es == 0 || ((uint32_t)source >= d->n && source != MPI_ANY_SOURCE) ||
	    (tag < 0 && tag != MPI_ANY_TAG) || count < 0 || (buf == NULL && count > 0))
		return -1;
	shmrun_p2p *e = d->e;
	uint64_t room = (uint64_t)count > e->eager ? e->eager : (uint64_t)count * es;
	if (count == 0)
		sig = 0;
	if (source == MPI_ANY_SOURCE)
		return shmrun_fast_recv_any(d, buf, room, sig, tag, status);
	int w = d->world[source], spin = e->spin;
	shmrun_p2p_rx *r = &d->rx[w];
	shmrun_p2p_tx *t = &d->tx[w];
	for (int i = 0;;) {
		if (__atomic_load_n(&e->quiet, __ATOMIC_RELAXED) == 0 || !shmrun_p2p_lock(e))
			return -1;
		if (!e->quiet || e->cq != 0 || t->ring == NULL) { /* queued receives first: Go */
			shmrun_p2p_unlock(e);
			return -1;
		}
		uint32_t *at, want;
		int rc = shmrun_p2p_take(d, r, t, buf, room, sig, source, tag, status, &at, &want);
		shmrun_p2p_unlock(e);
		if (rc != 1)
			return rc;
		/* Poll the stamp without the lock (the ring stays mapped). */
		for (; i < spin && __atomic_load_n(at, __ATOMIC_ACQUIRE) != want; i++)
			shmrun_relax(spin);
		if (i >= spin)
			return -1;
	}
}

/* shmrun_sent_status is the status of a completed send (Go's setStatus of
 * its empty comm.Status), MPI_ERROR left as it was (as setStatus does). */
static inline __attribute__((always_inline)) void shmrun_sent_status(MPI_Status *s)
{
	if (s == MPI_STATUS_IGNORE)
		return;
	s->MPI_SOURCE = 0;
	s->MPI_TAG = 0;
	s->MPI_internal[0] = 0;
	s->MPI_internal[1] = 0;
	s->MPI_internal[2] = 0;
}

/* shmrun_null_status is the empty status of a null request (capi's
 * emptyStatus). */
static inline __attribute__((always_inline)) void shmrun_null_status(MPI_Status *s)
{
	if (s == MPI_STATUS_IGNORE)
		return;
	memset(s, 0, sizeof *s);
	s->MPI_SOURCE = MPI_ANY_SOURCE;
	s->MPI_TAG = MPI_ANY_TAG;
}

/* ---- receives queued in C (capi.h's shmrun_cq) ---- */

/* shmrun_cq_live reports whether order entry o is a receive still
 * queued (its slot's state is POSTED in o's generation). */
static inline __attribute__((always_inline)) shmrun_cq_slot *shmrun_cq_live(shmrun_cq_t *q, uint32_t o)
{
	shmrun_cq_slot *s = &q->slot[o & 0xffff];
	return s->state == ((o >> 16) << 2 | SHMRUN_CQ_POSTED) ? s : NULL;
}

/* shmrun_cq_trim drops the order's entries that are no longer queued
 * from its front. The lock is held. */
static inline __attribute__((always_inline)) void shmrun_cq_trim(shmrun_cq_t *q)
{
	while (q->head != q->tail && shmrun_cq_live(q, q->order[q->head & (SHMRUN_CQ_ORDER - 1)]) == NULL)
		q->head++;
}

/* shmrun_cq_done records a queued or new receive of slot s (generation
 * gen) as complete with the message status st describes. */
static inline __attribute__((always_inline)) void shmrun_cq_done(shmrun_cq_slot *s, uint32_t gen, const MPI_Status *st)
{
	s->rtag = st->MPI_TAG;
	s->n = (uint64_t)(uint32_t)st->MPI_internal[0] | (uint64_t)(uint32_t)st->MPI_internal[1] << 32;
	__atomic_store_n(&s->state, gen << 2 | SHMRUN_CQ_DONE, __ATOMIC_RELEASE);
}

/* shmrun_irecv_args checks a receive's arguments for the queue: the
 * communicator's descriptor (NULL: Go's), the element size and the
 * signature digest. */
static inline __attribute__((always_inline)) shmrun_p2p_comm *shmrun_irecv_args(void *buf, MPI_Count count, MPI_Datatype dt,
									     int source, int tag, MPI_Comm comm, size_t *es,
									     uint32_t *sig)
{
	shmrun_p2p_comm *d = shmrun_p2p_of(comm);
	*es = shmrun_p2p_type(dt, sig);
	if (d == NULL || *es == 0 || (uint32_t)source >= d->n || (tag < 0 && tag != MPI_ANY_TAG) || count <= 0 ||
	    (uint64_t)count > ((uint64_t)1 << 40) || buf == NULL)
		return NULL;
	return d;
}

/* shmrun_irecv_locked is MPI_Irecv under the lock, quiet being 1: if
 * nothing is queued and the source's next packet is a message the
 * receive takes, it is received at once, else the receive is queued in
 * C. Either way *req is a queued receive's handle and 0 is returned; -1
 * (nothing changed): Go's. */
static inline __attribute__((always_inline)) int shmrun_irecv_locked(shmrun_p2p_comm *d, void *buf, MPI_Count count, size_t es,
								     uint32_t sig, int source, int tag, MPI_Comm comm,
								     MPI_Request *req)
{
	shmrun_p2p *e = d->e;
	int w = d->world[source];
	shmrun_p2p_rx *r = &d->rx[w];
	shmrun_p2p_tx *t = &d->tx[w];
	shmrun_cq_t *q = &shmrun_cq;
	if (t->ring == NULL)
		return -1;
	/* A free slot: claimed only here, under the lock. */
	int idx = -1;
	for (uint32_t k = 0; k < SHMRUN_CQ_SLOTS; k++) {
		uint32_t i = (q->cursor + k) & (SHMRUN_CQ_SLOTS - 1);
		if ((__atomic_load_n(&q->slot[i].state, __ATOMIC_ACQUIRE) & 3) == SHMRUN_CQ_FREE) {
			idx = (int)i;
			break;
		}
	}
	if (idx < 0)
		return -1;
	q->cursor = (uint32_t)idx + 1;
	shmrun_cq_slot *s = &q->slot[idx];
	uint32_t gen = ((s->state >> 2) + 1) & 0xffff;
	s->src = source;
	s->world = w;
	s->tag = tag;
	s->ctx = d->ctx;
	s->sig = sig;
	s->es = es;
	s->room = (uint64_t)count * es;
	s->buf = buf;
	s->comm = (uintptr_t)comm;
	s->rx = r;
	s->tx = t;
	int rc = 1;
	if (e->cq == 0) {
		MPI_Status st;
		uint32_t *at, want;
		rc = shmrun_p2p_take_in(d->ctx, e->eager, r, t, buf, s->room, s->sig, source, tag, &st, &at, &want);
		if (rc < 0)
			return -1;
		if (rc == 0)
			shmrun_cq_done(s, gen, &st);
	}
	if (rc == 1) {
		if (q->tail - q->head >= SHMRUN_CQ_ORDER)
			shmrun_cq_trim(q);
		if (q->tail - q->head >= SHMRUN_CQ_ORDER)
			return -1;
		q->e = e;
		q->order[q->tail++ & (SHMRUN_CQ_ORDER - 1)] = gen << 16 | (uint32_t)idx;
		e->cq++;
		__atomic_store_n(&s->state, gen << 2 | SHMRUN_CQ_POSTED, __ATOMIC_RELEASE);
	}
	*req = (MPI_Request)SHMRUN_CQ_HANDLE(idx, gen);
	return 0;
}

/* shmrun_fast_irecv is MPI_Irecv of count > 0 elements of a basic type
 * (or bytes) from a given source while Go's engine is quiet
 * (shmrun_irecv_locked); -1 (nothing changed) sends the call to Go. */
static inline __attribute__((always_inline)) int shmrun_fast_irecv(void *buf, MPI_Count count, MPI_Datatype dt, int source, int tag,
								   MPI_Comm comm, MPI_Request *req)
{
	size_t es;
	uint32_t sig;
	shmrun_p2p_comm *d = shmrun_irecv_args(buf, count, dt, source, tag, comm, &es, &sig);
	if (d == NULL || req == NULL)
		return -1;
	shmrun_p2p *e = d->e;
	if (__atomic_load_n(&e->quiet, __ATOMIC_RELAXED) == 0 || !shmrun_p2p_lock(e))
		return -1;
	int rc = e->quiet ? shmrun_irecv_locked(d, buf, count, es, sig, source, tag, comm, req) : -1;
	shmrun_p2p_unlock(e);
	return rc;
}

/* shmrun_cq_progress matches the packets at the heads of the rings of
 * the queued receives' sources to the queued receives, each to the first
 * queued receive (in post order) of its source, communicator and tag. A
 * ring whose next packet no queued receive takes stops there (*blocked).
 * -1: a packet only Go handles (not an eager message, or one its receive
 * takes with an error: truncation, type) - Go must take over. The lock is
 * held and Go's engine is quiet. */
static inline int shmrun_cq_progress(shmrun_p2p *e, int *blocked)
{
	shmrun_cq_t *q = &shmrun_cq;
	int32_t seen[8];
	int nseen = 0;
	shmrun_cq_trim(q);
	for (uint32_t i = q->head; i != q->tail; i++) {
		shmrun_cq_slot *s = shmrun_cq_live(q, q->order[i & (SHMRUN_CQ_ORDER - 1)]);
		if (s == NULL)
			continue;
		int w = s->world, k;
		for (k = 0; k < nseen && seen[k] != w; k++)
			;
		if (k < nseen)
			continue;
		if (nseen == (int)(sizeof seen / sizeof seen[0]))
			break;
		seen[nseen++] = w;
		uint32_t js = i; /* the search starts at the first receive still queued */
		for (;;) {
			char *b = shmrun_p2p_head(s->rx, s->tx, NULL, NULL);
			if (b == NULL)
				break;
			uint32_t kw, ctx, ptag;
			memcpy(&kw, b + SHMRUN_PKT_KIND, 4);
			memcpy(&ctx, b + SHMRUN_PKT_CTX, 4);
			memcpy(&ptag, b + SHMRUN_PKT_TAG, 4);
			if ((kw & 0xff) != SHMRUN_PKT_EAGER)
				return -1;
			shmrun_cq_slot *m = NULL;
			uint32_t mo = 0;
			while (js != q->tail && shmrun_cq_live(q, q->order[js & (SHMRUN_CQ_ORDER - 1)]) == NULL)
				js++;
			for (uint32_t j = js; j != q->tail; j++) {
				uint32_t o = q->order[j & (SHMRUN_CQ_ORDER - 1)];
				shmrun_cq_slot *c = shmrun_cq_live(q, o);
				if (c != NULL && c->world == w && c->ctx == ctx && (c->tag == MPI_ANY_TAG || c->tag == (int)ptag)) {
					m = c;
					mo = o;
					break;
				}
			}
			if (m == NULL) {
				*blocked = 1;
				break;
			}
			MPI_Status st;
			uint32_t *at, want;
			if (shmrun_p2p_take_in(ctx, e->eager, m->rx, m->tx, m->buf, m->room, m->sig, m->src, m->tag, &st, &at,
					       &want) != 0)
				return -1;
			shmrun_cq_done(m, mo >> 16, &st);
			e->cq--;
		}
	}
	shmrun_cq_trim(q);
	return 0;
}

/* shmrun_cq_status is the status of the completed receive of slot s. */
static inline __attribute__((always_inline)) void shmrun_cq_status(const shmrun_cq_slot *s, MPI_Status *st)
{
	if (st == MPI_STATUS_IGNORE)
		return;
	st->MPI_SOURCE = s->src;
	st->MPI_TAG = s->rtag;
	st->MPI_internal[0] = (int)(uint32_t)s->n;
	st->MPI_internal[1] = (int)(uint32_t)(s->n >> 32);
	st->MPI_internal[2] = 0;
}

/* shmrun_pers_of is the persistent request h's C part, or NULL (h is
 * not a slot handle of the Go side's request table, or its request has
 * none). */
static inline __attribute__((always_inline)) shmrun_pers *shmrun_pers_of(MPI_Request h)
{
	uintptr_t v = (uintptr_t)h;
	if ((v & 15) != 0 || (v & ((uintptr_t)1 << 30)) == 0 || v >> 31 != 0)
		return NULL;
	shmrun_pers *p = __atomic_load_n(&shmrun_perss[(v >> 4) & (SHMRUN_PERS_SLOTS - 1)], __ATOMIC_ACQUIRE);
	return p != NULL && p->handle == v ? p : NULL;
}

/* shmrun_fast_pstartall starts inactive persistent requests reqs[0..n)
 * in C, in order, under one taking of the lock (MPI_Startall; MPI_Start
 * with one): a send as an eager MPI_Isend, complete at once; a receive as
 * an MPI_Irecv queued in C. It returns how many it started: Go starts
 * the rest. */
static inline __attribute__((always_inline)) int shmrun_fast_pstartall(int n, MPI_Request *reqs)
{
	shmrun_p2p *e = NULL;
	shmrun_p2p_tx *bell = NULL; /* a doorbell to ring, at the next change of peer or the end */
	int i = 0;
	for (; i < n; i++) {
		shmrun_pers *p = shmrun_pers_of(reqs[i]);
		if (p == NULL || __atomic_load_n(&p->state, __ATOMIC_ACQUIRE) != SHMRUN_PERS_INACTIVE)
			break;
		MPI_Datatype dt = (MPI_Datatype)p->dt;
		MPI_Comm comm = (MPI_Comm)p->comm;
		uint64_t nb;
		size_t es;
		uint32_t sig;
		shmrun_p2p_comm *d = p->send ? shmrun_send_args(p->buf, p->count, dt, p->peer, p->tag, comm, &nb, &sig)
					     : shmrun_irecv_args(p->buf, p->count, dt, p->peer, p->tag, comm, &es, &sig);
		if (d == NULL)
			break;
		if (e == NULL) {
			if (__atomic_load_n(&d->e->quiet, __ATOMIC_RELAXED) == 0 || !shmrun_p2p_lock(d->e))
				break;
			e = d->e;
			if (!e->quiet)
				break;
		} else if (d->e != e) {
			break;
		}
		MPI_Request r = MPI_REQUEST_NULL;
		if (p->send) {
			shmrun_p2p_tx *t;
			if (shmrun_send_locked(d, p->peer, p->buf, nb, sig, p->tag, &t) != 0)
				break;
			if (bell != NULL && bell != t)
				shmrun_p2p_notify(bell->seq, bell->sleepers);
			bell = t;
		} else if (shmrun_irecv_locked(d, p->buf, p->count, es, sig, p->peer, p->tag, comm, &r) != 0) {
			break;
		}
		p->cq = (uintptr_t)r;
		__atomic_store_n(&p->state, SHMRUN_PERS_C, __ATOMIC_RELEASE);
	}
	if (bell != NULL)
		shmrun_p2p_notify(bell->seq, bell->sleepers);
	if (e != NULL)
		shmrun_p2p_unlock(e);
	return i;
}

/* shmrun_inner is what completing request h takes in C: h itself (a
 * completed send, a null request, a queued receive), a started
 * persistent request's operation (its queued receive, or null for a
 * completed send; *pp its C part), MPI_REQUEST_NULL with *pp set for an
 * inactive one; 0 with nothing set for anything else (Go's). */
static inline __attribute__((always_inline)) int shmrun_inner(MPI_Request h, MPI_Request *in, shmrun_pers **pp)
{
	*pp = NULL;
	if (SHMRUN_IS_REQ_SENT(h) || h == MPI_REQUEST_NULL || SHMRUN_IS_REQ_CQ(h)) {
		*in = h;
		return 1;
	}
	shmrun_pers *p = shmrun_pers_of(h);
	if (p == NULL)
		return 0;
	uint32_t st = __atomic_load_n(&p->state, __ATOMIC_ACQUIRE);
	if (st == SHMRUN_PERS_GO)
		return 0;
	*pp = p;
	*in = st == SHMRUN_PERS_C ? (MPI_Request)p->cq : MPI_REQUEST_NULL;
	return 1;
}

/* Kinds of a request for the C completion calls (shmrun_req_state). */
enum { SHMRUN_RQ_NULL, SHMRUN_RQ_DONE, SHMRUN_RQ_PENDING };

/* shmrun_req_state classifies request h for the C completion calls: null
 * (or persistent and inactive), complete, or a queued receive not matched
 * yet; -1 for a request only Go completes (another kind, a queued receive
 * Go took over, an invalid handle Go names). in and *pp as shmrun_inner. */
static inline __attribute__((always_inline)) int shmrun_req_state(MPI_Request h, MPI_Request *in, shmrun_pers **pp)
{
	if (!shmrun_inner(h, in, pp))
		return -1;
	shmrun_pers *p = *pp;
	if (p != NULL && __atomic_load_n(&p->state, __ATOMIC_ACQUIRE) == SHMRUN_PERS_INACTIVE)
		return SHMRUN_RQ_NULL;
	if (*in == MPI_REQUEST_NULL)
		return p != NULL ? SHMRUN_RQ_DONE : SHMRUN_RQ_NULL; /* a persistent send started in C is complete */
	if (SHMRUN_IS_REQ_SENT(*in))
		return SHMRUN_RQ_DONE;
	uint32_t st = __atomic_load_n(&shmrun_cq.slot[SHMRUN_CQ_IDX(*in)].state, __ATOMIC_ACQUIRE);
	if (st >> 2 != SHMRUN_CQ_GEN(*in) || (st & 3) == SHMRUN_CQ_FREE || (st & 3) == SHMRUN_CQ_MIGRATED)
		return -1;
	return (st & 3) == SHMRUN_CQ_DONE ? SHMRUN_RQ_DONE : SHMRUN_RQ_PENDING;
}

/* shmrun_req_finish completes request *h, complete in C (in and p as
 * shmrun_req_state gave them): its status into s, its queued receive's
 * slot freed, the request null (a persistent one inactive). */
static inline __attribute__((always_inline)) void shmrun_req_finish(MPI_Request *h, MPI_Request in, shmrun_pers *p,
								     MPI_Status *s)
{
	if (SHMRUN_IS_REQ_CQ(in)) {
		shmrun_cq_slot *c = &shmrun_cq.slot[SHMRUN_CQ_IDX(in)];
		shmrun_cq_status(c, s);
		__atomic_store_n(&c->state, SHMRUN_CQ_GEN(in) << 2 | SHMRUN_CQ_FREE, __ATOMIC_RELEASE);
	} else {
		shmrun_sent_status(s);
	}
	if (p != NULL) {
		p->cq = 0;
		__atomic_store_n(&p->state, SHMRUN_PERS_INACTIVE, __ATOMIC_RELEASE);
	} else {
		*h = MPI_REQUEST_NULL;
	}
}

/* shmrun_cq_step makes pass k of a completion call's matching of the
 * queued receives (a pause before all but the first): 0, or -1 when Go
 * must take over (k past the engine's spin, its engine not idle or its
 * lock busy, a packet C does not take, a ring blocked by a message no
 * queued receive takes). */
static inline __attribute__((always_inline)) int shmrun_cq_step(int k)
{
	shmrun_p2p *e = shmrun_cq.e;
	if (e == NULL || k > e->spin)
		return -1;
	if (k > 0)
		shmrun_relax(e->spin);
	if (__atomic_load_n(&e->quiet, __ATOMIC_RELAXED) == 0 || !shmrun_p2p_lock(e))
		return -1;
	int blocked = 0, rc = -1;
	if (e->quiet)
		rc = shmrun_cq_progress(e, &blocked);
	shmrun_p2p_unlock(e);
	return rc < 0 || blocked ? -1 : 0;
}

/* shmrun_fast_any is MPI_Waitany (block) and MPI_Testany over requests
 * C completes (shmrun_req_state): the first complete one is completed;
 * none active: MPI_UNDEFINED and an empty status. A wait matches queued
 * receives for as long as the engine's spin; a test once. -1 (nothing
 * completed): Go's. */
static inline __attribute__((always_inline)) int shmrun_fast_any(int n, MPI_Request *reqs, int *index, MPI_Status *status,
								 int block, int *flag)
{
	if (n < 0 || (n > 0 && reqs == NULL) || index == NULL || (!block && flag == NULL))
		return -1;
	MPI_Request in;
	shmrun_pers *p;
	for (int k = 0, passes = 0;; k++) {
		int live = 0;
		for (int i = 0; i < n; i++) {
			int st = shmrun_req_state(reqs[i], &in, &p);
			if (st < 0)
				return -1;
			if (st == SHMRUN_RQ_NULL)
				continue;
			live = 1;
			if (st == SHMRUN_RQ_DONE) {
				shmrun_req_finish(&reqs[i], in, p, status);
				*index = i;
				if (flag != NULL)
					*flag = 1;
				return 0;
			}
		}
		if (!live) {
			*index = MPI_UNDEFINED;
			if (flag != NULL)
				*flag = 1;
			shmrun_null_status(status);
			return 0;
		}
		if (!block && passes > 0) {
			*index = MPI_UNDEFINED;
			*flag = 0;
			return 0;
		}
		passes++;
		if (shmrun_cq_step(k) < 0)
			return -1;
	}
}

/* shmrun_fast_some is MPI_Waitsome (block) and MPI_Testsome over
 * requests C completes: every complete one is completed (statuses and
 * indices in order); none active: MPI_UNDEFINED. A wait matches queued
 * receives for as long as the engine's spin until one completes; a test
 * once. -1 (nothing completed): Go's. */
static inline __attribute__((always_inline)) int shmrun_fast_some(int n, MPI_Request *reqs, int *outcount, int *indices,
								  MPI_Status *sts, int block)
{
	if (n < 0 || (n > 0 && (reqs == NULL || indices == NULL)) || outcount == NULL)
		return -1;
	MPI_Request in;
	shmrun_pers *p;
	for (int i = 0; i < n; i++)
		if (shmrun_req_state(reqs[i], &in, &p) < 0)
			return -1;
	for (int k = 0, passes = 0;; k++) {
		int live = 0, got = 0;
		for (int i = 0; i < n; i++) {
			int st = shmrun_req_state(reqs[i], &in, &p);
			if (st < 0) {
				if (got > 0)
					break; /* another thread's call moved it into Go: return those done */
				return -1;
			}
			if (st == SHMRUN_RQ_NULL)
				continue;
			live = 1;
			if (st == SHMRUN_RQ_DONE) {
				shmrun_req_finish(&reqs[i], in, p, sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[got]);
				indices[got++] = i;
			}
		}
		if (!live && got == 0) {
			*outcount = MPI_UNDEFINED;
			return 0;
		}
		if (got > 0 || (!block && passes > 0)) {
			*outcount = got;
			return 0;
		}
		passes++;
		if (shmrun_cq_step(k) < 0)
			return -1;
	}
}

/* shmrun_fast_reqs completes an array of requests that holds only
 * completed C sends, null requests, receives queued in C and persistent
 * requests inactive or started in C: with block (MPI_Waitall; MPI_Wait
 * with one) it matches the queued receives in C for as long as the
 * engine's spin, polling the ring of the first one pending without the
 * lock in between, and returns 0 once all are complete; without
 * (MPI_Testall, MPI_Test) it matches once and returns 0 with *flag 0,
 * nothing completed, if some are still pending. Completed requests
 * become null, persistent ones inactive. -1 (nothing changed but matches
 * made, which Go sees as completed receives) sends the call to Go: a
 * request of another kind, a queued receive Go took over, a packet C does
 * not take, a ring blocked by a message no queued receive takes (Go sets
 * it aside), Go's engine not idle or its lock busy, a wait past the
 * spin. */
static inline __attribute__((always_inline)) int shmrun_fast_reqs(int n, MPI_Request *reqs, MPI_Status *sts, int block,
								  int *flag)
{
	if (n < 0 || (n > 0 && reqs == NULL))
		return -1;
	shmrun_cq_t *q = &shmrun_cq;
	MPI_Request in;
	shmrun_pers *p;
	for (int i = 0; i < n; i++)
		if (!shmrun_inner(reqs[i], &in, &p))
			return -1;
	int i0 = 0, passes = 0; /* requests before i0 are complete */
	for (int k = 0;;) {
		for (; i0 < n; i0++) {
			int st = shmrun_req_state(reqs[i0], &in, &p);
			if (st < 0)
				return -1; /* another thread's call moved it into Go */
			if (st == SHMRUN_RQ_PENDING)
				break;
		}
		if (i0 == n)
			break;
		if (!block && passes > 0) {
			*flag = 0;
			return 0;
		}
		passes++;
		shmrun_p2p *e = q->e;
		if (k > e->spin || __atomic_load_n(&e->quiet, __ATOMIC_RELAXED) == 0 || !shmrun_p2p_lock(e))
			return -1;
		int blocked = 0, rc = -1;
		uint32_t *at = NULL, want = 0, cq = e->cq;
		if (e->quiet) {
			rc = shmrun_cq_progress(e, &blocked);
			shmrun_cq_slot *s = &q->slot[SHMRUN_CQ_IDX(in)];
			if (rc == 0 && e->cq == cq && s->state == (SHMRUN_CQ_GEN(in) << 2 | SHMRUN_CQ_POSTED)) {
				/* Nothing came: wait for its ring's next packet. */
				shmrun_p2p_rx *r = s->rx;
				at = (uint32_t *)(r->ring + (r->pos & (r->ring_len - 1)));
				want = r->stamp + 1;
				if (want == 0)
					want = 1;
			}
		}
		shmrun_p2p_unlock(e);
		if (rc < 0 || blocked)
			return -1;
		for (k++; at != NULL && k <= e->spin && __atomic_load_n(at, __ATOMIC_ACQUIRE) != want; k++)
			shmrun_relax(e->spin);
	}
	for (int i = 0; i < n; i++) {
		MPI_Status *s = sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[i];
		shmrun_inner(reqs[i], &in, &p);
		if (p != NULL ? __atomic_load_n(&p->state, __ATOMIC_RELAXED) == SHMRUN_PERS_INACTIVE : in == MPI_REQUEST_NULL)
			shmrun_null_status(s); /* a null or inactive request: empty, kept */
		else
			shmrun_req_finish(&reqs[i], in, p, s);
	}
	if (flag != NULL)
		*flag = 1;
	return 0;
}
