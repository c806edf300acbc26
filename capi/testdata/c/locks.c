/* ranks: 8
 * Synchronization under contention, oversubscribed: exclusive locks
 * serialize a read-modify-write by Get and Put, shared locks never see a
 * pair half written, and Lock_all epochs exclude exclusive lockers, with
 * every rank mixing the three; then barriers and fences, each round
 * counted by atomic adds that no rank may see short or ahead; then PSCW
 * epochs in blocks of three shapes (ring, all to all, reverse ring), each
 * checked by what it delivered. Counted invariants.
 * (_POSIX_C_SOURCE for nanosleep under -std=c11.) */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <time.h>
#include "check.h"

#define ROUNDS 400
#define SYNCS 300

int main(int argc, char **argv)
{
	int me, n;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &n);

	/* Each rank's part: [0] a count, [1..2] a pair. */
	MPI_Win w;
	int64_t *mine;
	MPI_Win_allocate(3 * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &w);
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, w);
	mine[0] = mine[1] = mine[2] = 0;
	MPI_Win_unlock(me, w);
	MPI_Barrier(MPI_COMM_WORLD);

	int64_t torn = 0, mine_adds = 0;
	for (int i = 0; i < ROUNDS; i++) {
		int t = (me + i) % n;
		int64_t v[2];
		switch ((me + i) % 3) {
		case 0: /* exclusive: count += 1, pair := (count, count) */
			MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w);
			MPI_Get(v, 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T, w);
			MPI_Win_flush(t, w);
			v[0]++;
			v[1] = v[0];
			MPI_Put(v, 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T, w);
			MPI_Put(&v[0], 1, MPI_INT64_T, t, 1, 1, MPI_INT64_T, w);
			MPI_Win_flush(t, w);
			/* Hold the lock with the pair half written for a while, so
			 * that a reader let in would see it. */
			nanosleep(&(struct timespec){.tv_nsec = 20000}, NULL);
			MPI_Put(&v[1], 1, MPI_INT64_T, t, 2, 1, MPI_INT64_T, w);
			MPI_Win_unlock(t, w);
			mine_adds++;
			break;
		case 1: /* shared: the pair is whole */
			MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w);
			MPI_Get(v, 2, MPI_INT64_T, t, 1, 2, MPI_INT64_T, w);
			MPI_Win_unlock(t, w);
			torn += v[0] != v[1];
			break;
		default: /* lock_all: every pair is whole */
			MPI_Win_lock_all(0, w);
			for (int q = 0; q < n; q++) {
				MPI_Get(v, 2, MPI_INT64_T, q, 1, 2, MPI_INT64_T, w);
				MPI_Win_flush(q, w);
				torn += v[0] != v[1];
			}
			MPI_Win_unlock_all(w);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	int64_t adds = 0, total = 0, torn_all = 0;
	MPI_Allreduce(&mine_adds, &adds, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	MPI_Win_lock(MPI_LOCK_SHARED, me, 0, w);
	int64_t c = mine[0];
	CHECK(mine[1] == c && mine[2] == c, "rank %d's pair %ld %ld, count %ld", me, (long)mine[1], (long)mine[2], (long)c);
	MPI_Win_unlock(me, w);
	MPI_Allreduce(&c, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(&torn, &torn_all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	CHECK(total == adds, "counts sum to %ld, %ld increments were made", (long)total, (long)adds);
	CHECK(torn_all == 0, "%ld torn pairs seen", (long)torn_all);
	report("exclusive, shared and lock_all epochs under contention");

	/* Between two barriers (or fences) every rank adds 1 to a word of rank
	 * 0's part: after the i-th, each rank sees between n*i and n*(i+1). */
	MPI_Win cw;
	int64_t *cbase, *ctr;
	MPI_Aint csz;
	int cdu;
	MPI_Win_allocate_shared(me == 0 ? 16 : 0, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &cbase, &cw);
	MPI_Win_shared_query(cw, 0, &csz, &cdu, &ctr);
	if (me == 0)
		ctr[0] = ctr[1] = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	long bad = 0;
	for (int64_t i = 1; i <= SYNCS; i++) {
		__atomic_fetch_add(&ctr[0], 1, __ATOMIC_SEQ_CST);
		MPI_Barrier(MPI_COMM_WORLD);
		int64_t v = __atomic_load_n(&ctr[0], __ATOMIC_SEQ_CST);
		bad += v < n * i || v > n * (i + 1);
	}
	CHECK(bad == 0, "%ld barriers let a rank through early", bad);
	MPI_Win_fence(0, cw);
	for (int64_t i = 1; i <= SYNCS; i++) {
		__atomic_fetch_add(&ctr[1], 1, __ATOMIC_SEQ_CST);
		MPI_Win_fence(0, cw);
		int64_t v = __atomic_load_n(&ctr[1], __ATOMIC_SEQ_CST);
		bad += v < n * i || v > n * (i + 1);
	}
	MPI_Win_fence(MPI_MODE_NOSUCCEED, cw);
	CHECK(bad == 0, "%ld fences let a rank through early", bad);
	MPI_Win_free(&cw);
	report("barriers and fences under contention");

	/* PSCW: word q of my part is written by origin q in its epochs. */
	MPI_Win pw;
	int64_t *pb;
	MPI_Win_allocate((MPI_Aint)n * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &pb, &pw);
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, pw);
	for (int q = 0; q < n; q++)
		pb[q] = -1;
	MPI_Win_unlock(me, pw);
	MPI_Barrier(MPI_COMM_WORLD);
	int next = (me + 1) % n, prev = (me + n - 1) % n, others[64], no = 0;
	for (int q = 0; q < n; q++)
		if (q != me)
			others[no++] = q;
	MPI_Group wg, g_next, g_prev, g_others;
	MPI_Win_get_group(pw, &wg);
	MPI_Group_incl(wg, 1, &next, &g_next);
	MPI_Group_incl(wg, 1, &prev, &g_prev);
	MPI_Group_incl(wg, no, others, &g_others);
	bad = 0;
	for (int64_t i = 0; i < SYNCS; i++) {
		int shape = (int)(i / 50) % 3;
		MPI_Group from = shape == 0 ? g_prev : shape == 1 ? g_others : g_next;
		MPI_Group to = shape == 0 ? g_next : shape == 1 ? g_others : g_prev;
		MPI_Win_post(from, 0, pw);
		MPI_Win_start(to, 0, pw);
		if (shape == 1)
			for (int k = 0; k < no; k++)
				MPI_Put(&i, 1, MPI_INT64_T, others[k], me, 1, MPI_INT64_T, pw);
		else
			MPI_Put(&i, 1, MPI_INT64_T, shape == 0 ? next : prev, me, 1, MPI_INT64_T, pw);
		MPI_Win_complete(pw);
		MPI_Win_wait(pw);
		if (shape == 1) {
			for (int k = 0; k < no; k++)
				bad += pb[others[k]] != i;
		} else
			bad += pb[shape == 0 ? prev : next] != i;
	}
	CHECK(bad == 0, "%ld PSCW epochs delivered the wrong value", bad);
	MPI_Group_free(&g_next);
	MPI_Group_free(&g_prev);
	MPI_Group_free(&g_others);
	MPI_Group_free(&wg);
	MPI_Win_free(&pw);
	report("PSCW epochs of three shapes under contention");

	MPI_Win_free(&w);
	MPI_Finalize();
	return 0;
}
