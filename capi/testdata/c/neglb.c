/* ranks: 2
 * Datatypes whose data start before the buffer's address (a negative
 * lower bound, which MPI allows: a vector of negative stride, a block at
 * a negative displacement) in the calls of one buffer: MPI_Send and
 * MPI_Recv, MPI_Isend and MPI_Irecv, MPI_Sendrecv, MPI_Pack and
 * MPI_Unpack, MPI_Put and MPI_Get's origin, MPI_Bcast; count 1 and 2
 * (the instances a stride of the extent apart). Then the v collectives
 * (Gatherv, Allgatherv, Scatterv, Alltoallv, Alltoallw) with blocks at
 * negative displacements. The same output under Open MPI. */
#include <string.h>
#include "check.h"

/* add_back adds instances of back: from each instance's address, the 2
 * ints 16 bytes before it and the one at it. */
static void add_back(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	for (int i = 0; i < *len; i++) {
		int *a = (int *)in + 5 * i, *b = (int *)inout + 5 * i;
		b[-4] += a[-4], b[-3] += a[-3], b[0] += a[0];
	}
}

int main(int argc, char **argv)
{
	int rank;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	int peer = 1 - rank;

	/* rev: a[9], a[8], a[7] from a+9; back: the block of 2 ints 4 ints
	 * before the address, then the one at it. */
	MPI_Datatype rev, back;
	MPI_Type_vector(3, 1, -1, MPI_INT, &rev);
	MPI_Type_commit(&rev);
	int bl[2] = {2, 1};
	MPI_Aint dp[2] = {-16, 0};
	MPI_Type_create_hindexed(2, bl, dp, MPI_INT, &back);
	MPI_Type_commit(&back);

	int a[20], r[20];
	for (int i = 0; i < 20; i++)
		a[i] = 100 * rank + i;
	/* Send typed, receive plain; then send plain, receive typed. */
	memset(r, -1, sizeof r);
	CHECK(MPI_Sendrecv(a + 9, 1, rev, peer, 1, r, 3, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS,
	      "Sendrecv rev");
	CHECK(r[0] == 100 * peer + 9 && r[1] == 100 * peer + 8 && r[2] == 100 * peer + 7, "rev: %d %d %d", r[0], r[1], r[2]);
	memset(r, -1, sizeof r);
	int three[3] = {1, 2, 3};
	MPI_Request q[2];
	MPI_Irecv(r + 10, 1, rev, peer, 2, MPI_COMM_WORLD, &q[0]);
	MPI_Isend(three, 3, MPI_INT, peer, 2, MPI_COMM_WORLD, &q[1]);
	CHECK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "Irecv rev");
	CHECK(r[10] == 1 && r[9] == 2 && r[8] == 3 && r[7] == -1 && r[11] == -1, "Irecv rev: %d %d %d", r[10], r[9], r[8]);
	/* Two instances of back (extent 12 bytes... from -16 to 4: its
	 * extent is 20): a[4..5], a[8], a[9..10], a[13] from a+8. */
	memset(r, -1, sizeof r);
	if (rank == 0) {
		CHECK(MPI_Send(a + 8, 2, back, 1, 3, MPI_COMM_WORLD) == MPI_SUCCESS, "Send back");
	} else {
		MPI_Status st;
		int got = -1;
		CHECK(MPI_Recv(r, 6, MPI_INT, 0, 3, MPI_COMM_WORLD, &st) == MPI_SUCCESS, "Recv");
		MPI_Get_count(&st, MPI_INT, &got);
		CHECK(got == 6 && r[0] == 4 && r[1] == 5 && r[2] == 8 && r[3] == 9 && r[4] == 10 && r[5] == 13,
		      "back x2: count %d, %d %d %d %d %d %d", got, r[0], r[1], r[2], r[3], r[4], r[5]);
	}
	report("point-to-point with negative lower bounds");

	char packed[64];
	int pos = 0;
	CHECK(MPI_Pack(a + 8, 2, back, packed, sizeof packed, &pos, MPI_COMM_WORLD) == MPI_SUCCESS && pos == 24,
	      "Pack: position %d", pos);
	memset(r, -1, sizeof r);
	pos = 0;
	CHECK(MPI_Unpack(packed, sizeof packed, &pos, r + 8, 2, back, MPI_COMM_WORLD) == MPI_SUCCESS && pos == 24,
	      "Unpack: position %d", pos);
	for (int i = 0; i < 20; i++) {
		int want = (i == 4 || i == 5 || i == 8 || i == 9 || i == 10 || i == 13) ? 100 * rank + i : -1;
		CHECK(r[i] == want, "Unpack: r[%d] = %d, want %d", i, r[i], want);
	}
	report("pack and unpack with negative lower bounds");

	int *base;
	MPI_Win win;
	MPI_Win_allocate(8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
	for (int i = 0; i < 8; i++)
		base[i] = -1;
	MPI_Win_fence(0, win);
	CHECK(MPI_Put(a + 9, 1, rev, peer, 0, 3, MPI_INT, win) == MPI_SUCCESS, "Put rev");
	MPI_Win_fence(0, win);
	CHECK(base[0] == 100 * peer + 9 && base[1] == 100 * peer + 8 && base[2] == 100 * peer + 7, "Put rev: %d %d %d",
	      base[0], base[1], base[2]);
	memset(r, -1, sizeof r);
	CHECK(MPI_Get(r + 12, 1, rev, peer, 0, 3, MPI_INT, win) == MPI_SUCCESS, "Get rev");
	MPI_Win_fence(0, win);
	CHECK(r[12] == 100 * rank + 9 && r[11] == 100 * rank + 8 && r[10] == 100 * rank + 7, "Get rev: %d %d %d", r[12],
	      r[11], r[10]);
	MPI_Win_free(&win);
	report("RMA origins with negative lower bounds");

	memset(r, -1, sizeof r);
	if (rank == 0)
		memcpy(r, a, sizeof a);
	CHECK(MPI_Bcast(r + 9, 1, rev, 0, MPI_COMM_WORLD) == MPI_SUCCESS, "Bcast rev");
	CHECK(r[9] == 9 && r[8] == 8 && r[7] == 7 && (rank == 0 || r[10] == -1), "Bcast rev: %d %d %d", r[9], r[8], r[7]);
	report("MPI_Bcast with a negative lower bound");

	/* The v collectives with blocks before the buffer's address:
	 * rank q's block of 2 ints at displacement -4(q+1) from mid. */
	int big[64], *mid = big + 32, cnt[2], dsp[2], sb[2] = {10 * rank, 10 * rank + 1};
	for (int q = 0; q < 2; q++)
		cnt[q] = 2, dsp[q] = -4 * (q + 1);
	for (int k = 0; k < 64; k++)
		big[k] = -1;
	CHECK(MPI_Gatherv(sb, 2, MPI_INT, mid, cnt, dsp, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS, "Gatherv");
	for (int q = 0; rank == 0 && q < 2; q++)
		CHECK(mid[dsp[q]] == 10 * q && mid[dsp[q] + 1] == 10 * q + 1, "Gatherv block %d: %d %d", q, mid[dsp[q]],
		      mid[dsp[q] + 1]);
	for (int k = 0; k < 64; k++)
		big[k] = -1;
	CHECK(MPI_Allgatherv(sb, 2, MPI_INT, mid, cnt, dsp, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS, "Allgatherv");
	for (int q = 0; q < 2; q++)
		CHECK(mid[dsp[q]] == 10 * q && mid[dsp[q] + 1] == 10 * q + 1 && mid[dsp[q] + 2] == -1, "Allgatherv block %d",
		      q);
	for (int k = 0; k < 64; k++)
		big[k] = k;
	int two[2] = {-1, -1};
	CHECK(MPI_Scatterv(mid, cnt, dsp, MPI_INT, two, 2, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS &&
		      two[0] == 32 + dsp[rank] && two[1] == 33 + dsp[rank],
	      "Scatterv: %d %d", two[0], two[1]);
	int sbig[64], *smid = sbig + 32, sd[2], rd[2], one[2] = {1, 1};
	int sdb[2], rdb[2];
	MPI_Datatype ints[2] = {MPI_INT, MPI_INT};
	for (int q = 0; q < 2; q++) {
		sd[q] = -(q + 1), rd[q] = -3 * (q + 1);
		smid[sd[q]] = 100 * rank + q;
		sdb[q] = (int)sizeof(int) * sd[q], rdb[q] = (int)sizeof(int) * rd[q];
	}
	for (int k = 0; k < 64; k++)
		big[k] = -1;
	CHECK(MPI_Alltoallv(smid, one, sd, MPI_INT, mid, one, rd, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS, "Alltoallv");
	for (int q = 0; q < 2; q++)
		CHECK(mid[rd[q]] == 100 * q + rank, "Alltoallv from %d: %d", q, mid[rd[q]]);
	for (int k = 0; k < 64; k++)
		big[k] = -1;
	CHECK(MPI_Alltoallw(smid, one, sdb, ints, mid, one, rdb, ints, MPI_COMM_WORLD) == MPI_SUCCESS, "Alltoallw");
	for (int q = 0; q < 2; q++)
		CHECK(mid[rd[q]] == 100 * q + rank, "Alltoallw from %d: %d", q, mid[rd[q]]);
	report("v collectives with negative displacements");

	/* The other collectives, of rev (extent 12: instance i is the three
	 * ints ending at a[9 + 3i], backwards). */
	int g[20];
	for (int k = 0; k < 20; k++)
		g[k] = -1;
	CHECK(MPI_Allgather(a + 9, 1, rev, g, 3, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS, "Allgather from rev");
	for (int q = 0; q < 2; q++)
		CHECK(g[3 * q] == 100 * q + 9 && g[3 * q + 2] == 100 * q + 7, "Allgather from rev: rank %d's %d %d", q,
		      g[3 * q], g[3 * q + 2]);
	for (int k = 0; k < 20; k++)
		g[k] = -1;
	CHECK(MPI_Gather(three, 3, MPI_INT, g + 9, 1, rev, 0, MPI_COMM_WORLD) == MPI_SUCCESS, "Gather into rev");
	CHECK(rank != 0 || (g[9] == 1 && g[7] == 3 && g[12] == 1 && g[10] == 3 && g[6] == -1 && g[13] == -1),
	      "Gather into rev: %d %d %d %d", g[9], g[7], g[12], g[10]);
	int sum[20];
#ifdef MPI_ABI_VERSION /* a predefined op on a derived type: shmrun's extension, not Open MPI's */
	for (int k = 0; k < 20; k++)
		sum[k] = -1;
	CHECK(MPI_Allreduce(a + 9, sum + 12, 2, rev, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS, "Allreduce of rev");
	/* element j of instance i is a[9 + 3i - j]: the sum over ranks of
	 * 100r + 9 + 3i - j = 100 + 2(9 + 3i - j), at sum[12 + 3i - j]. */
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 3; j++)
			CHECK(sum[12 + 3 * i - j] == 100 + 2 * (9 + 3 * i - j), "Allreduce of rev: sum[%d] = %d", 12 + 3 * i - j,
			      sum[12 + 3 * i - j]);
	CHECK(sum[9] == -1 && sum[16] == -1, "Allreduce of rev wrote outside its instances");
#endif
	/* A user op on back (MPI calls it with instances in back's layout:
	 * from the pointer it gets, the 2 ints at -16 and the one at 0). */
	MPI_Op addback;
	MPI_Op_create(add_back, 1, &addback);
	for (int k = 0; k < 20; k++)
		sum[k] = -1, g[k] = 10 * rank + k;
	CHECK(MPI_Allreduce(g + 8, sum + 8, 1, back, addback, MPI_COMM_WORLD) == MPI_SUCCESS, "user-op Allreduce of back");
	for (int k = 0; k < 20; k++) {
		int want = (k == 4 || k == 5 || k == 8) ? 2 * k + 10 : -1;
		CHECK(sum[k] == want, "user-op Allreduce of back: sum[%d] = %d, want %d", k, sum[k], want);
	}
	MPI_Op_free(&addback);
	/* Alltoallw with back as every block's type: rank q's block at
	 * bytes 16 + 20q of the send buffer, so its data start at 20q. */
	int sdw[2] = {16, 36}, rdw[2] = {16, 36};
	MPI_Datatype backs[2] = {back, back};
	for (int k = 0; k < 20; k++)
		g[k] = 100 * rank + k, sum[k] = -1;
	CHECK(MPI_Alltoallw(g, one, sdw, backs, sum, one, rdw, backs, MPI_COMM_WORLD) == MPI_SUCCESS, "Alltoallw of back");
	for (int q = 0; q < 2; q++) {
		int at = 4 + 5 * q, src = 100 * q + 5 * rank; /* rank q's block for me: its 5*me..5*me+4 */
		CHECK(sum[at - 4] == src && sum[at - 3] == src + 1 && sum[at] == src + 4, "Alltoallw of back from %d: %d %d %d",
		      q, sum[at - 4], sum[at - 3], sum[at]);
	}
	report("other collectives with negative lower bounds");

#ifdef MPI_ABI_VERSION /* atomics on a derived type of one element: shmrun's extension */
	MPI_Datatype before, after;
	int bl1 = 1;
	MPI_Aint dm8 = -8, dp8 = 8;
	MPI_Type_create_hindexed(1, &bl1, &dm8, MPI_INT, &before);
	MPI_Type_create_hindexed(1, &bl1, &dp8, MPI_INT, &after);
	MPI_Type_commit(&before);
	MPI_Type_commit(&after);
	MPI_Win_allocate(8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
	base[0] = 5, base[1] = 6;
	MPI_Win_lock_all(0, win);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		int o[6] = {0, 77, 0, 0, 0, 0}, c[6] = {0, 5, 0, 0, 0, 0}, res[6] = {-1, -1, -1, -1, -1, -1};
		CHECK(MPI_Compare_and_swap(o + 3, c + 3, res + 3, before, 1, 0, win) == MPI_SUCCESS, "CAS before");
		MPI_Win_flush(1, win);
		CHECK(res[1] == 5 && res[3] == -1, "CAS before: result %d", res[1]);
		int f[6] = {0, 0, 0, 3, 0, 0}, fr[6] = {-1, -1, -1, -1, -1, -1};
		CHECK(MPI_Fetch_and_op(f + 1, fr + 1, after, 1, 1, MPI_SUM, win) == MPI_SUCCESS, "Fetch_and_op after");
		MPI_Win_flush(1, win);
		CHECK(fr[3] == 6 && fr[1] == -1, "Fetch_and_op after: result %d", fr[3]);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_unlock_all(win);
	if (rank == 1)
		CHECK(base[0] == 77 && base[1] == 9, "atomics left %d %d", base[0], base[1]);
	MPI_Win_free(&win);
	MPI_Type_free(&before);
	MPI_Type_free(&after);
#endif
	report("atomics on a type of one element before or past the address");

	MPI_Type_free(&rev);
	MPI_Type_free(&back);
	MPI_Finalize();
	return failures != 0;
}
