/* ranks: mixed (run with Go ranks first: testdata/mixgo)
 * The C half of the mixed job: see testdata/mixgo/main.go, which it
 * mirrors call for call. */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include "check.h"

#define WORDS 8
#define ADDS 1000
#define ACCS 200
#define LOCKED 300
#define PAIRS 200

/* cls is the error class of an MPI call's return code. */
static int cls(int rc)
{
	int c = rc;
	if (rc != MPI_SUCCESS)
		MPI_Error_class(rc, &c);
	return c;
}

/* small_colls runs Allreduce, Reduce and Bcast of a few bytes, which C
 * ranks fold in C (the small collectives' fast path) and Go ranks in Go,
 * on values where a fold could differ (signed zeros, NaNs, infinities,
 * rounding, integer overflow), and checks that every rank, whatever its
 * language, got the same bits. */
static void small_colls(int me, int n)
{
	uint64_t nanb = 0x7FF8000000000123ull, r[25] = {0}, all[25 * 64];
	double d[4] = {me == 0 ? -0.0 : 0.0, me + 0.25, me == n - 1 ? -1.0 / 0.0 : me * 1.5, 0.1 * (me + 1)};
	if (me == 1)
		memcpy(&d[1], &nanb, 8);
	double sum[4], mn[4], mx[4], red[4];
	MPI_Allreduce(d, sum, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(d, mn, 4, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
	memcpy(mx, d, sizeof d);
	MPI_Allreduce(MPI_IN_PLACE, mx, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	uint32_t fnan = 0x7FC00123u;
	float f = (float)me - 0.5f, fs, fm;
	if (me == 1)
		memcpy(&f, &fnan, 4);
	MPI_Allreduce(&f, &fs, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(&f, &fm, 1, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD);
	int32_t p = (me + 1) * 100000, pr, lx = me % 2, lr[3];
	int8_t s8 = 100, s8r;
	uint16_t u = (uint16_t)(300 + me), ur;
	MPI_Allreduce(&p, &pr, 1, MPI_INT32_T, MPI_PROD, MPI_COMM_WORLD);
	MPI_Allreduce(&s8, &s8r, 1, MPI_INT8_T, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(&u, &ur, 1, MPI_UINT16_T, MPI_PROD, MPI_COMM_WORLD);
	MPI_Allreduce(&lx, &lr[0], 1, MPI_INT32_T, MPI_LXOR, MPI_COMM_WORLD);
	lx = me != 1;
	MPI_Allreduce(&lx, &lr[1], 1, MPI_INT32_T, MPI_LAND, MPI_COMM_WORLD);
	MPI_Allreduce(&lx, &lr[2], 1, MPI_INT32_T, MPI_LOR, MPI_COMM_WORLD);
	memcpy(red, d, sizeof d);
	MPI_Reduce(me == n - 1 ? MPI_IN_PLACE : (void *)d, red, 4, MPI_DOUBLE, MPI_SUM, n - 1, MPI_COMM_WORLD);
	if (me == n - 1)
		CHECK(memcmp(red, sum, sizeof sum) == 0, "Reduce and Allreduce differ");
	int64_t bc[5];
	for (int i = 0; i < 5; i++)
		bc[i] = me == 1 % n ? -(int64_t)i * 1000003 : 0;
	MPI_Bcast(bc, 5, MPI_INT64_T, 1 % n, MPI_COMM_WORLD);
	memcpy(&r[0], sum, 32);
	memcpy(&r[4], mn, 32);
	memcpy(&r[8], mx, 32);
	memcpy(&r[12], &fs, 4);
	memcpy(&r[13], &fm, 4);
	r[14] = (uint32_t)pr, r[15] = (uint8_t)s8r, r[16] = ur;
	for (int i = 0; i < 3; i++)
		r[17 + i] = (uint32_t)lr[i];
	memcpy(&r[20], bc, 40);
	CHECK(__builtin_signbit(mn[0]) && !__builtin_signbit(mx[0]), "signed zeros: min %g max %g", mn[0], mx[0]);
	CHECK(r[5] == 0x7FF8000000000001ull && r[9] == r[5], "min, max with a NaN: %#llx %#llx", (unsigned long long)r[5],
	      (unsigned long long)r[9]);
	CHECK(s8r == (int8_t)(100 * n) && bc[4] == -4000012, "int8 sum %d, bcast %ld", s8r, (long)bc[4]);
	MPI_Allgather(r, 25, MPI_UINT64_T, all, 25, MPI_UINT64_T, MPI_COMM_WORLD);
	for (int q = 0; q < n; q++)
		for (int i = 0; i < 25; i++)
			CHECK(all[q * 25 + i] == r[i], "rank %d's result %d: %#llx, mine %#llx", q, i,
			      (unsigned long long)all[q * 25 + i], (unsigned long long)r[i]);
}

/* loop_colls runs loops of small rooted collectives, several rings of flag
 * lines long, so that ranks of both languages run ahead of each other (a
 * Bcast's root as far as its lines allow, its readers as far as the root)
 * and rank 0, in either language, keeps comparing for all. */
static void loop_colls(int me, int n)
{
	for (int i = 0; i < 600; i++) {
		int root = i < 200 ? 0 : i < 400 ? n - 1 : i % n;
		int64_t v = me == root ? 1000 * i + root : -1;
		MPI_Bcast(&v, 1, MPI_INT64_T, root, MPI_COMM_WORLD);
		CHECK(v == 1000 * i + root, "bcast %d from %d: %ld", i, root, (long)v);
	}
	for (int i = 0; i < 200; i++) {
		int64_t v = me + i, s = -1;
		MPI_Reduce(&v, &s, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
		if (me == 0)
			CHECK(s == (int64_t)n * i + n * (n - 1) / 2, "reduce %d: %ld", i, (long)s);
	}
	/* The other small collectives, rooted ones from every root: each
	 * block says who sent it to whom in which call. */
	int64_t one, blocks[8], got[8];
	for (int i = 0; i < 200; i++) {
		/* Odd calls in place, where the standard allows it. */
		int root = i % n, ip = i % 2;
		one = 100000 * i + me;
		got[me] = one;
		MPI_Gather(ip && me == root ? MPI_IN_PLACE : &one, 1, MPI_INT64_T, got, 1, MPI_INT64_T, root, MPI_COMM_WORLD);
		for (int q = 0; me == root && q < n; q++)
			CHECK(got[q] == 100000 * i + q, "gather %d from %d: block %d is %ld", i, root, q, (long)got[q]);
		for (int q = 0; q < n; q++)
			blocks[q] = 100000 * i + 100 * me + q;
		one = -1;
		MPI_Scatter(blocks, 1, MPI_INT64_T, ip && me == root ? MPI_IN_PLACE : &one, 1, MPI_INT64_T, root, MPI_COMM_WORLD);
		CHECK(one == (ip && me == root ? -1 : 100000 * i + 100 * root + me), "scatter %d from %d: %ld", i, root, (long)one);
		one = 100000 * i + me;
		got[me] = one;
		MPI_Allgather(ip ? MPI_IN_PLACE : &one, 1, MPI_INT64_T, got, 1, MPI_INT64_T, MPI_COMM_WORLD);
		for (int q = 0; q < n; q++)
			CHECK(got[q] == 100000 * i + q, "allgather %d: block %d is %ld", i, q, (long)got[q]);
		if (ip) {
			memcpy(got, blocks, (size_t)n * sizeof *got);
			MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, got, 1, MPI_INT64_T, MPI_COMM_WORLD);
		} else
			MPI_Alltoall(blocks, 1, MPI_INT64_T, got, 1, MPI_INT64_T, MPI_COMM_WORLD);
		for (int q = 0; q < n; q++)
			CHECK(got[q] == 100000 * i + 100 * q + me, "alltoall %d: block %d is %ld", i, q, (long)got[q]);
		int64_t v = me + i, s = -1;
		MPI_Scan(&v, &s, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
		CHECK(s == (int64_t)(me + 1) * i + me * (me + 1) / 2, "scan %d: %ld", i, (long)s);
		s = -1;
		MPI_Exscan(&v, &s, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
		CHECK(me == 0 ? s == -1 : s == (int64_t)me * i + me * (me - 1) / 2, "exscan %d: %ld", i, (long)s);
		MPI_Reduce_scatter_block(blocks, &s, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
		CHECK(s == (int64_t)n * (100000 * i + me) + 100 * n * (n - 1) / 2, "reduce_scatter_block %d: %ld", i, (long)s);
	}
	/* A count mismatch (the last rank's blocks are two elements) in the
	 * calls that read every rank: an error on every rank, in the call,
	 * whichever language ran it; the communicator works after. */
	MPI_Comm dd;
	MPI_Comm_dup(MPI_COMM_WORLD, &dd);
	MPI_Comm_set_errhandler(dd, MPI_ERRORS_RETURN);
	CHECK(MPI_Barrier(dd) == MPI_SUCCESS, "barrier before the mismatches");
	int c = me == n - 1 ? 2 : 1, rc;
	int64_t sb[16] = {0}, rb[16];
	rc = MPI_Allgather(sb, c, MPI_INT64_T, rb, c, MPI_INT64_T, dd);
	CHECK(cls(rc) == MPI_ERR_COUNT, "an Allgather's count mismatch: %d", rc);
	rc = MPI_Alltoall(sb, c, MPI_INT64_T, rb, c, MPI_INT64_T, dd);
	CHECK(cls(rc) == MPI_ERR_COUNT, "an Alltoall's count mismatch: %d", rc);
	rc = MPI_Reduce_scatter_block(sb, rb, c, MPI_INT64_T, MPI_SUM, dd);
	CHECK(cls(rc) == MPI_ERR_COUNT, "a Reduce_scatter_block's count mismatch: %d", rc);
	one = me;
	CHECK(MPI_Allgather(&one, 1, MPI_INT64_T, got, 1, MPI_INT64_T, dd) == MPI_SUCCESS && got[n - 1] == n - 1,
	      "allgather after the mismatches");
	MPI_Comm_free(&dd);
}

/* pair_colls moves pair types where the Go ranks pass them too (mixgo's
 * pairColls): MPI_DOUBLE_INT broadcast, 2 MPI_INT a rank gathered where
 * Go gathers one TwoInt, a MAXLOC over MPI_DOUBLE_INT. */
static void pair_colls(int me, int n)
{
	struct {
		double v;
		int i;
	} b[2] = {{0, 0}, {0, 0}}, x = {me % 2, me}, ml = {0, 0};
	if (me == 1)
		b[0].v = 2.5, b[0].i = 7, b[1].v = -1, b[1].i = 8;
	int rc = MPI_Bcast(b, 2, MPI_DOUBLE_INT, 1, MPI_COMM_WORLD);
	CHECK(rc == MPI_SUCCESS && b[0].v == 2.5 && b[0].i == 7 && b[1].v == -1 && b[1].i == 8, "pair bcast: rc %d", rc);
	int mine[2] = {me, 10 * me}, *all = calloc(2 * n, sizeof(int));
	rc = MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD);
	for (int q = 0; q < n; q++)
		CHECK(rc == MPI_SUCCESS && all[2 * q] == q && all[2 * q + 1] == 10 * q, "pair allgather: rank %d's %d %d", q, all[2 * q], all[2 * q + 1]);
	free(all);
	rc = MPI_Allreduce(&x, &ml, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
	CHECK(rc == MPI_SUCCESS && ml.v == 1 && ml.i == 1, "maxloc: %g %d", ml.v, ml.i);
}

int main(int argc, char **argv)
{
	int me, n;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &n);

	MPI_Win w;
	int64_t *mine;
	MPI_Win_allocate_shared(WORDS * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &w);
	MPI_Win_lock_all(0, w);
	for (int i = 0; i < WORDS; i++)
		mine[i] = me * 100 + i;
	MPI_Win_sync(w);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_sync(w);
	for (int q = 0; q < n; q++) {
		int64_t *v;
		MPI_Aint sz;
		int du;
		MPI_Win_shared_query(w, q, &sz, &du, &v);
		for (int i = 0; i < WORDS; i++)
			CHECK(v[i] == q * 100 + i, "rank %d's word %d is %ld", q, i, (long)v[i]);
	}
	MPI_Win_unlock_all(w);
	report("loads of every rank's part");

	/* Fence and PSCW epochs across languages: each rank puts into the
	 * next rank's part (word 0 under fence, word 1 under PSCW). */
	int peer = (me + 1) % n, prev = (me + n - 1) % n;
	int64_t x = me * 10 + 1;
	MPI_Win_fence(MPI_MODE_NOPRECEDE, w);
	MPI_Put(&x, 1, MPI_INT64_T, peer, 0, 1, MPI_INT64_T, w);
	MPI_Win_fence(MPI_MODE_NOSUCCEED, w);
	CHECK(mine[0] == prev * 10 + 1, "fence: word 0 is %ld, want %d", (long)mine[0], prev * 10 + 1);
	MPI_Group wg, from, to;
	MPI_Win_get_group(w, &wg);
	MPI_Group_incl(wg, 1, &prev, &from);
	MPI_Group_incl(wg, 1, &peer, &to);
	for (int i = 0; i < 20; i++) { /* the first epoch in Go, the others in C */
		MPI_Win_post(from, 0, w);
		MPI_Win_start(to, 0, w);
		x = me * 10 + 2 + i * 1000;
		MPI_Put(&x, 1, MPI_INT64_T, peer, 1, 1, MPI_INT64_T, w);
		MPI_Win_complete(w);
		MPI_Win_wait(w);
		CHECK(mine[1] == prev * 10 + 2 + i * 1000, "PSCW: word 1 is %ld, want %d", (long)mine[1],
		      prev * 10 + 2 + i * 1000);
	}
	MPI_Group_free(&from);
	MPI_Group_free(&to);
	MPI_Group_free(&wg);
	report("fence and PSCW epochs across languages");

	/* One epoch state for the C and the Go halves of this library: an
	 * epoch opened by a call that ran in C is the one the calls that run
	 * in Go check, and the other way round. */
	MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
	MPI_Datatype two;
	MPI_Type_vector(2, 1, 2, MPI_INT64_T, &two);
	MPI_Type_commit(&two);
	int64_t src[3] = {me, -1, me};
	x = 42;
	CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, w) == MPI_SUCCESS, "lock");
	CHECK(cls(MPI_Win_lock_all(0, w)) == MPI_ERR_RMA_SYNC, "lock_all inside a lock");
	CHECK(cls(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, w)) == MPI_ERR_RMA_SYNC, "lock twice");
	CHECK(MPI_Put(src, 1, two, peer, 4, 1, two, w) == MPI_SUCCESS, "strided put in a lock epoch");
	CHECK(cls(MPI_Win_fence(0, w)) == MPI_ERR_RMA_SYNC, "fence inside a lock");
	CHECK(MPI_Win_unlock(peer, w) == MPI_SUCCESS, "unlock");
	CHECK(cls(MPI_Win_unlock(peer, w)) == MPI_ERR_RMA_SYNC, "unlock twice");
	CHECK(MPI_Win_lock(MPI_LOCK_SHARED, peer, MPI_MODE_NOCHECK, w) == MPI_SUCCESS, "nocheck lock");
	CHECK(MPI_Put(&x, 1, MPI_INT64_T, peer, 7, 1, MPI_INT64_T, w) == MPI_SUCCESS, "put in a nocheck epoch");
	CHECK(MPI_Win_unlock(peer, w) == MPI_SUCCESS, "nocheck unlock");
	CHECK(cls(MPI_Put(&x, 1, MPI_INT64_T, peer, 7, 1, MPI_INT64_T, w)) == MPI_ERR_RMA_SYNC, "put outside an epoch");
	CHECK(MPI_Win_lock_all(0, w) == MPI_SUCCESS, "lock_all");
	CHECK(cls(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, w)) == MPI_ERR_RMA_SYNC, "lock inside lock_all");
	CHECK(MPI_Put(src, 1, two, peer, 4, 1, two, w) == MPI_SUCCESS, "strided put in lock_all");
	CHECK(MPI_Win_flush(peer, w) == MPI_SUCCESS, "flush in lock_all");
	CHECK(MPI_Win_unlock_all(w) == MPI_SUCCESS, "unlock_all");
	CHECK(cls(MPI_Win_unlock_all(w)) == MPI_ERR_RMA_SYNC, "unlock_all twice");
	CHECK(cls(MPI_Win_flush(peer, w)) == MPI_ERR_RMA_SYNC, "flush outside an epoch");
	/* A fence that fails on the odd ranks (an epoch is open there) fails
	 * on every rank, whichever path the even ranks' fence took. */
	if (me % 2)
		CHECK(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, w) == MPI_SUCCESS, "lock before a failing fence");
	CHECK(cls(MPI_Win_fence(0, w)) == MPI_ERR_RMA_SYNC, "fence that fails elsewhere");
	if (me % 2)
		CHECK(MPI_Win_unlock(peer, w) == MPI_SUCCESS, "unlock after a failing fence");
	CHECK(MPI_Win_fence(0, w) == MPI_SUCCESS, "fence");
	CHECK(MPI_Put(&x, 1, MPI_INT64_T, peer, 7, 1, MPI_INT64_T, w) == MPI_SUCCESS, "put in a fence epoch");
	CHECK(cls(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, w)) == MPI_ERR_RMA_SYNC, "lock in a used fence epoch");
	CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w) == MPI_SUCCESS, "closing fence");
	CHECK(mine[4] == prev && mine[5] == me * 100 + 5 && mine[6] == prev && mine[7] == 42, "words 4..7: %ld %ld %ld %ld",
	      (long)mine[4], (long)mine[5], (long)mine[6], (long)mine[7]);
	MPI_Type_free(&two);
	report("one epoch state for calls in C and in Go");

	/* A mismatched collective (Barrier here, Bcast there) fails on every
	 * rank, whether its Barrier ran in C or in Go, and the communicator
	 * works after it. A dup's second Barrier runs in C too. */
	MPI_Comm dup;
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
	CHECK(MPI_Barrier(dup) == MPI_SUCCESS, "first barrier");
	CHECK(MPI_Barrier(dup) == MPI_SUCCESS, "second barrier");
	int v = 7, rc;
	if (me % 2 == 0)
		rc = MPI_Barrier(dup);
	else
		rc = MPI_Bcast(&v, 1, MPI_INT, 0, dup);
	CHECK(rc != MPI_SUCCESS, "a Barrier matched with a Bcast succeeded");
	for (int i = 0; i < 3; i++)
		CHECK(MPI_Barrier(dup) == MPI_SUCCESS, "barrier %d after the mismatch", i);
	v = me;
	CHECK(MPI_Bcast(&v, 1, MPI_INT, 1, dup) == MPI_SUCCESS && v == 1, "bcast after the mismatch: %d", v);
	CHECK(MPI_Barrier(dup) == MPI_SUCCESS, "barrier after a bcast");
	MPI_Comm_free(&dup);
	/* The same in pairs of a Go and a C rank, whose areas alternate two
	 * line parities instead of 64 (shmrun_coll_parities). */
	MPI_Comm pair;
	int pr;
	MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &pair);
	MPI_Comm_set_errhandler(pair, MPI_ERRORS_RETURN);
	MPI_Comm_rank(pair, &pr);
	for (int i = 0; i < 3; i++)
		CHECK(MPI_Barrier(pair) == MPI_SUCCESS, "pair barrier %d", i);
	v = 7;
	if (pr == 0)
		rc = MPI_Barrier(pair);
	else
		rc = MPI_Bcast(&v, 1, MPI_INT, 0, pair);
	CHECK(cls(rc) == MPI_ERR_ARG, "a pair's Barrier matched with a Bcast: %d", rc);
	char es[MPI_MAX_ERROR_STRING];
	int elen;
	MPI_Error_string(rc, es, &elen);
	CHECK(strncmp(es, pr == 0 ? "MPI_Barrier" : "MPI_Bcast", pr == 0 ? 11 : 9) == 0, "the error names the call: %s", es);
	for (int i = 0; i < 3; i++)
		CHECK(MPI_Barrier(pair) == MPI_SUCCESS, "pair barrier %d after the mismatch", i);
	v = pr;
	CHECK(MPI_Bcast(&v, 1, MPI_INT, 1, pair) == MPI_SUCCESS && v == 1, "pair bcast after the mismatch: %d", v);
	/* Loops of rooted calls, each rank root in turn: a Go root runs a call
	 * ahead of a C reader (and checks its signature a call late). */
	for (int i = 0; i < 50; i++) {
		int root = i % 2, b = pr == root ? 1000 + i : -1, s = 0, x = pr + i;
		CHECK(MPI_Bcast(&b, 1, MPI_INT, root, pair) == MPI_SUCCESS && b == 1000 + i, "pair bcast %d: %d", i, b);
		CHECK(MPI_Reduce(&x, &s, 1, MPI_INT, MPI_SUM, root, pair) == MPI_SUCCESS, "pair reduce %d", i);
		CHECK(pr != root || s == 2 * i + 1, "pair reduce %d: %d", i, s);
		CHECK(MPI_Scan(&x, &s, 1, MPI_INT, MPI_SUM, pair) == MPI_SUCCESS && s == (pr == 0 ? i : 2 * i + 1), "pair scan %d: %d", i, s);
	}
	/* A count mismatch in a Bcast: the root may learn of it from its next
	 * call (a Go root does), the other rank in the Bcast itself. */
	{
		int two[2] = {0, 0};
		rc = MPI_Bcast(two, 1 + pr, MPI_INT, 0, pair);
		int rc2 = MPI_Barrier(pair);
		if (rc == MPI_SUCCESS)
			CHECK(pr == 0 && cls(rc2) == MPI_ERR_COUNT, "a Bcast's count mismatch, found late: %d", rc2);
		else
			CHECK(cls(rc) == MPI_ERR_COUNT && rc2 == MPI_SUCCESS, "a Bcast's count mismatch: %d, then %d", rc, rc2);
		CHECK(MPI_Barrier(pair) == MPI_SUCCESS, "pair barrier after the count mismatch");
	}
	/* A Gather's sender learns of a count mismatch late (it reads
	 * nothing): here from MPI_Comm_free, which frees all the same. */
	{
		MPI_Comm pd;
		MPI_Comm_dup(pair, &pd);
		MPI_Comm_set_errhandler(pd, MPI_ERRORS_RETURN);
		int mine[2] = {pr, pr}, all[4] = {0};
		rc = MPI_Gather(mine, 1 + pr, MPI_INT, all, 1, MPI_INT, 0, pd);
		CHECK(pr == 1 ? rc == MPI_SUCCESS : cls(rc) == MPI_ERR_COUNT, "a Gather's count mismatch: %d", rc);
		rc = MPI_Comm_free(&pd);
		CHECK(pr == 1 ? cls(rc) == MPI_ERR_COUNT : rc == MPI_SUCCESS, "Comm_free after the Gather: %d", rc);
		CHECK(pd == MPI_COMM_NULL, "a communicator freed with a late error is MPI_COMM_NULL");
	}
	/* A window of the pair fences on its fence words: puts across, and a
	 * fence failed by one rank (it holds a lock) fails on both. */
	MPI_Win pw;
	int64_t *pmine;
	MPI_Win_allocate_shared(8, 8, MPI_INFO_NULL, pair, &pmine, &pw);
	MPI_Win_set_errhandler(pw, MPI_ERRORS_RETURN);
	CHECK(MPI_Win_fence(0, pw) == MPI_SUCCESS, "pair fence");
	for (int64_t i = 0; i < 20; i++) {
		int64_t x = 100 * pr + i;
		CHECK(MPI_Put(&x, 1, MPI_INT64_T, 1 - pr, 0, 1, MPI_INT64_T, pw) == MPI_SUCCESS, "pair put");
		CHECK(MPI_Win_fence(0, pw) == MPI_SUCCESS, "pair fence %ld", (long)i);
		CHECK(*pmine == 100 * (1 - pr) + i, "pair round %ld: %ld", (long)i, (long)*pmine);
		CHECK(MPI_Win_fence(0, pw) == MPI_SUCCESS, "pair fence %ld", (long)i);
	}
	if (pr == 1)
		CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, pw) == MPI_SUCCESS, "pair lock");
	CHECK(cls(MPI_Win_fence(0, pw)) == MPI_ERR_RMA_SYNC, "a pair fence failed by rank 1");
	if (pr == 1)
		CHECK(MPI_Win_unlock(0, pw) == MPI_SUCCESS, "pair unlock");
	CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, pw) == MPI_SUCCESS, "pair closing fence");
	MPI_Win_free(&pw);
	MPI_Comm_free(&pair);
	/* A freed request's handle names nothing, not the request that
	 * reuses its slot. */
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	MPI_Request rq, stale, rq2;
	int a = 5, b = 0;
	MPI_Irecv(&b, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &rq);
	stale = rq;
	MPI_Send(&a, 1, MPI_INT, 0, 5, MPI_COMM_SELF);
	CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE) == MPI_SUCCESS && b == 5 && rq == MPI_REQUEST_NULL, "self message");
	MPI_Irecv(&b, 1, MPI_INT, 0, 6, MPI_COMM_SELF, &rq2);
	CHECK(cls(MPI_Wait(&stale, MPI_STATUS_IGNORE)) == MPI_ERR_REQUEST, "Wait on a freed request's handle");
	a = 6;
	MPI_Send(&a, 1, MPI_INT, 0, 6, MPI_COMM_SELF);
	CHECK(MPI_Wait(&rq2, MPI_STATUS_IGNORE) == MPI_SUCCESS && b == 6, "the request in the reused slot");
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
	report("a mismatched collective fails everywhere, then the communicator works");

	MPI_Win cw;
	int64_t *unused, *ctr;
	MPI_Win_allocate_shared(me == 0 ? 5 * 8 : 0, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &unused, &cw);
	MPI_Aint sz;
	int du;
	MPI_Win_shared_query(cw, 0, &sz, &du, &ctr);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock_all(0, cw);
	for (int i = 0; i < ADDS; i++)
		atomic_fetch_add_explicit((_Atomic int64_t *)&ctr[0], 1, memory_order_seq_cst);
	int64_t one = 1;
	for (int i = 0; i < ACCS; i++) {
		MPI_Accumulate(&one, 1, MPI_INT64_T, 0, 1, 1, MPI_INT64_T, MPI_SUM, cw);
		MPI_Win_flush(0, cw);
	}
	MPI_Win_unlock_all(cw);
	for (int i = 0; i < LOCKED; i++) {
		int64_t v;
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, cw);
		MPI_Get(&v, 1, MPI_INT64_T, 0, 2, 1, MPI_INT64_T, cw);
		MPI_Win_flush(0, cw);
		v++;
		MPI_Put(&v, 1, MPI_INT64_T, 0, 2, 1, MPI_INT64_T, cw);
		MPI_Win_unlock(0, cw);
	}
	/* Readers under shared locks never see a pair half written by a
	 * writer under an exclusive lock, whichever language either is. */
	for (int i = 0; i < PAIRS; i++) {
		int64_t p[2];
		if (i % 4 == me % 4) {
			MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, cw);
			p[0] = me * 1000 + i;
			MPI_Put(&p[0], 1, MPI_INT64_T, 0, 3, 1, MPI_INT64_T, cw);
			MPI_Win_flush(0, cw);
			MPI_Put(&p[0], 1, MPI_INT64_T, 0, 4, 1, MPI_INT64_T, cw);
			MPI_Win_unlock(0, cw);
		} else {
			MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, cw);
			MPI_Get(p, 2, MPI_INT64_T, 0, 3, 2, MPI_INT64_T, cw);
			MPI_Win_unlock(0, cw);
			CHECK(p[0] == p[1], "a shared lock saw a half-written pair: %ld %ld", (long)p[0], (long)p[1]);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	report("atomics, accumulates and locks of both languages");

	int tok = 1;
	if (me == 0) {
		MPI_Send(&tok, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
		MPI_Recv(&tok, 1, MPI_INT, n - 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		CHECK(tok == 1 + n * (n - 1) / 2, "token %d", tok);
	} else {
		MPI_Recv(&tok, 1, MPI_INT, me - 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		tok += me;
		MPI_Send(&tok, 1, MPI_INT, (me + 1) % n, 3, MPI_COMM_WORLD);
	}
	/* The token around the ring a hundred times more, then a burst that
	 * waits in the rings: C ranks send and receive these eager messages
	 * without leaving C, Go ranks through the engine, on the same rings. */
	for (int round = 0; round < 100; round++) {
		int t = round;
		if (me == 0) {
			MPI_Send(&t, 1, MPI_INT, 1, 4, MPI_COMM_WORLD);
			MPI_Recv(&t, 1, MPI_INT, n - 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			CHECK(t == round + n * (n - 1) / 2, "round %d: token %d", round, t);
		} else {
			MPI_Recv(&t, 1, MPI_INT, me - 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			t += me;
			MPI_Send(&t, 1, MPI_INT, (me + 1) % n, 4, MPI_COMM_WORLD);
		}
	}
	for (int k = 0; k < 20; k++) {
		double v = me * 100 + k;
		MPI_Send(&v, 1, MPI_DOUBLE, (me + 1) % n, 7, MPI_COMM_WORLD);
	}
	for (int k = 0; k < 20; k++) {
		double v = -1;
		MPI_Status st;
		MPI_Recv(&v, 1, MPI_DOUBLE, (me + n - 1) % n, 7, MPI_COMM_WORLD, &st);
		CHECK(v == (me + n - 1) % n * 100 + k && st.MPI_SOURCE == (me + n - 1) % n, "burst %d: %g", k, v);
	}
	double d = me, sum = 0;
	MPI_Allreduce(&d, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	CHECK(sum == n * (n - 1) / 2, "allreduce %g", sum);
	report("messages and a reduction across languages");
	small_colls(me, n);
	report("small collectives folded in C and in Go give the same bits");
	loop_colls(me, n);
	report("loops of small rooted collectives across languages");
	pair_colls(me, n);
	report("pair types across languages, as their halves");
	MPI_Win_free(&cw);
	MPI_Win_free(&w);
	MPI_Finalize();
	return 0;
}
