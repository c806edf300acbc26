/* ranks: 5
 * The v forms of the collectives, with zero counts on some ranks and
 * MPI_IN_PLACE, and a struct datatype in a gather. */
#include <stddef.h>
#include "check.h"

#define MAXN 16

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	/* Rank q contributes q % 3 ints, placed in reverse rank order. */
	int counts[MAXN], displs[MAXN], total = 0;
	for (int q = size - 1; q >= 0; q--) {
		counts[q] = q % 3;
		displs[q] = total;
		total += counts[q];
	}
	int mine[2] = {rank * 10, rank * 10 + 1}, all[64];
	for (int i = 0; i < 64; i++)
		all[i] = -1;
	MPI_Gatherv(mine, counts[rank], MPI_INT, all, counts, displs, MPI_INT, 2, MPI_COMM_WORLD);
	if (rank == 2)
		for (int q = 0; q < size; q++)
			for (int i = 0; i < counts[q]; i++)
				CHECK(all[displs[q] + i] == q * 10 + i, "gatherv: rank %d's element %d is %d", q, i, all[displs[q] + i]);
	for (int i = 0; i < 64; i++)
		all[i] = -1;
	for (int i = 0; i < counts[rank]; i++)
		all[displs[rank] + i] = rank * 10 + i;
	MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, counts, displs, MPI_INT, MPI_COMM_WORLD);
	for (int q = 0; q < size; q++)
		for (int i = 0; i < counts[q]; i++)
			CHECK(all[displs[q] + i] == q * 10 + i, "allgatherv: rank %d's element %d is %d", q, i, all[displs[q] + i]);
	int got[2] = {-1, -1};
	MPI_Scatterv(all, counts, displs, MPI_INT, got, counts[rank], MPI_INT, 0, MPI_COMM_WORLD);
	for (int i = 0; i < counts[rank]; i++)
		CHECK(got[i] == rank * 10 + i, "scatterv: element %d is %d", i, got[i]);
	report("gatherv, allgatherv in place, scatterv with zero counts");

	/* Alltoallv: rank r sends (r + q) % 2 ints to q, valued r*100+q. */
	int sc[MAXN], sd[MAXN], rc[MAXN], rd[MAXN], sb[64], rb[64], so = 0, ro = 0;
	for (int q = 0; q < size; q++) {
		sc[q] = (rank + q) % 2, sd[q] = so, so += sc[q];
		rc[q] = (q + rank) % 2, rd[q] = ro, ro += rc[q];
		for (int i = 0; i < sc[q]; i++)
			sb[sd[q] + i] = rank * 100 + q;
	}
	for (int i = 0; i < 64; i++)
		rb[i] = -1;
	MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD);
	for (int q = 0; q < size; q++)
		for (int i = 0; i < rc[q]; i++)
			CHECK(rb[rd[q] + i] == q * 100 + rank, "alltoallv from %d: %d", q, rb[rd[q] + i]);
	report("alltoallv");

	/* Reduce_scatter: block q has q % 3 + 1 ints; element i of the sum
	 * over ranks of (r + i) is size*i + size*(size-1)/2. */
	int rcnt[MAXN], tot = 0, off2 = 0;
	for (int q = 0; q < size; q++) {
		rcnt[q] = q % 3 + 1;
		if (q < rank)
			off2 += rcnt[q];
		tot += rcnt[q];
	}
	int in[64], outb[4] = {-1, -1, -1, -1};
	for (int i = 0; i < tot; i++)
		in[i] = rank + i;
	MPI_Reduce_scatter(in, outb, rcnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < rcnt[rank]; i++)
		CHECK(outb[i] == size * (off2 + i) + size * (size - 1) / 2, "reduce_scatter element %d: %d", i, outb[i]);
	for (int i = 0; i < tot; i++)
		in[i] = rank + i;
	MPI_Reduce_scatter(MPI_IN_PLACE, in, rcnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < rcnt[rank]; i++)
		CHECK(in[i] == size * (off2 + i) + size * (size - 1) / 2, "in-place reduce_scatter element %d: %d", i, in[i]);
	report("reduce_scatter, also in place");

	/* A struct type: {int id; double v;} gathered at rank 0. */
	struct rec {
		int id;
		double v;
	} r = {rank, rank * 0.5}, rs[MAXN];
	int bl[2] = {1, 1};
	MPI_Aint off[2] = {offsetof(struct rec, id), offsetof(struct rec, v)};
	MPI_Datatype ts[2] = {MPI_INT, MPI_DOUBLE}, rt, rtr;
	MPI_Type_create_struct(2, bl, off, ts, &rt);
	MPI_Type_create_resized(rt, 0, sizeof(struct rec), &rtr);
	MPI_Type_commit(&rtr);
	MPI_Gather(&r, 1, rtr, rs, 1, rtr, 0, MPI_COMM_WORLD);
	if (rank == 0)
		for (int q = 0; q < size; q++)
			CHECK(rs[q].id == q && rs[q].v == q * 0.5, "struct %d: %d %g", q, rs[q].id, rs[q].v);
	MPI_Type_free(&rtr);
	MPI_Type_free(&rt);
	report("struct datatype in a gather");
	MPI_Finalize();
	return 0;
}
