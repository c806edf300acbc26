/* ranks: 3
 * The v and w collectives with empty blocks anywhere: a block of count 0
 * places nothing, so its displacement may lie past the other blocks, past
 * the buffer's end, or below its start (MPI 4.1, 6.5 bounds no empty
 * block), as fixed-stride displacements do when the last ranks send
 * nothing: Gatherv, Scatterv, Allgatherv (in place too), Alltoallv,
 * Alltoallw, their nonblocking forms, and every count 0. */
#include <string.h>

#include "check.h"

#define FAR 1000

static int me, np;

static void setall(int *b, int n, int v)
{
	for (int i = 0; i < n; i++)
		b[i] = v;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	int sb[8], rb[16], c[8], d[8];
	for (int i = 0; i < 8; i++)
		sb[i] = me * 100 + i;
	/* Two from each rank but the last, which sends none from far away. */
	for (int r = 0; r < np; r++) {
		c[r] = r == np - 1 ? 0 : 2;
		d[r] = r == np - 1 ? FAR : 2 * r;
	}
	int n = 2 * (np - 1);
	setall(rb, 16, -1);
	MPI_Gatherv(sb, c[me], MPI_INT, rb, c, d, MPI_INT, 0, MPI_COMM_WORLD);
	if (me == 0)
		for (int i = 0; i < n; i++)
			CHECK(rb[i] == (i / 2) * 100 + i % 2, "Gatherv: element %d is %d", i, rb[i]);
	setall(rb, 16, -1);
	MPI_Request q;
	MPI_Iallgatherv(sb, c[me], MPI_INT, rb, c, d, MPI_INT, MPI_COMM_WORLD, &q);
	MPI_Wait(&q, MPI_STATUS_IGNORE);
	for (int i = 0; i < n; i++)
		CHECK(rb[i] == (i / 2) * 100 + i % 2, "Iallgatherv: element %d is %d", i, rb[i]);
	CHECK(rb[n] == -1, "Iallgatherv wrote past the blocks: %d", rb[n]);
	/* In place: the last rank's own block is the empty one, far away. */
	setall(rb, 16, -1);
	if (me != np - 1)
		memcpy(rb + d[me], sb, 2 * sizeof(int));
	MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, c, d, MPI_INT, MPI_COMM_WORLD);
	for (int i = 0; i < n; i++)
		CHECK(rb[i] == (i / 2) * 100 + i % 2, "Allgatherv in place: element %d is %d", i, rb[i]);
	setall(rb, 16, -1);
	MPI_Scatterv(sb, c, d, MPI_INT, rb, c[me], MPI_INT, 0, MPI_COMM_WORLD);
	if (me != np - 1)
		CHECK(rb[0] == 2 * me && rb[1] == 2 * me + 1, "Scatterv: %d %d", rb[0], rb[1]);
	CHECK(rb[c[me]] == -1, "Scatterv wrote past the block: %d", rb[c[me]]);
	report("a count-0 block's displacement past every other block and the buffer");

	/* Alltoallv and Alltoallw: nothing to or from the last rank, its
	 * blocks at displacement -7 (elements) and FAR. */
	int ac[8], ad[8], wd[8];
	MPI_Datatype wt[8];
	for (int r = 0; r < np; r++) {
		ac[r] = r == np - 1 || me == np - 1 ? 0 : 1;
		ad[r] = ac[r] ? r : (r % 2 ? -7 : FAR);
		wd[r] = ad[r] * (int)sizeof(int);
		wt[r] = MPI_INT;
	}
	setall(rb, 16, -1);
	MPI_Alltoallv(sb, ac, ad, MPI_INT, rb, ac, ad, MPI_INT, MPI_COMM_WORLD);
	for (int r = 0; r < np; r++)
		if (ac[r])
			CHECK(rb[r] == r * 100 + me, "Alltoallv: from rank %d: %d", r, rb[r]);
	setall(rb, 16, -1);
	MPI_Alltoallw(sb, ac, wd, wt, rb, ac, wd, wt, MPI_COMM_WORLD);
	for (int r = 0; r < np; r++)
		if (ac[r])
			CHECK(rb[r] == r * 100 + me, "Alltoallw: from rank %d: %d", r, rb[r]);
	if (me == np - 1)
		CHECK(rb[0] == -1, "Alltoallw wrote into the last rank's buffer: %d", rb[0]);
	report("Alltoallv and Alltoallw with empty blocks far away");

	/* Every count 0, displacements r * FAR. */
	int z[8], zd[8];
	for (int r = 0; r < np; r++)
		z[r] = 0, zd[r] = r * FAR;
	setall(rb, 16, -1);
	int e1 = MPI_Gatherv(sb, 0, MPI_INT, rb, z, zd, MPI_INT, 0, MPI_COMM_WORLD);
	int e2 = MPI_Alltoallv(sb, z, zd, MPI_INT, rb, z, zd, MPI_INT, MPI_COMM_WORLD);
	CHECK(e1 == MPI_SUCCESS && e2 == MPI_SUCCESS && rb[0] == -1, "every count 0: %d %d, %d", e1, e2, rb[0]);
	report("every count 0 at displacements far apart");
	MPI_Finalize();
	return 0;
}
