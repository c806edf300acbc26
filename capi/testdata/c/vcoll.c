/* ranks: 5
 * The v forms of the collectives, with zero counts on some ranks and
 * MPI_IN_PLACE, a struct datatype in a gather, and the predefined ops on
 * the pair types, long double, complex and bool. */
#include <complex.h>
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

	/* MINLOC and MAXLOC on every pair type (ties go to the lower index),
	 * and the ops on long double, double complex and C bool. */
	{
		int n = size, me = rank;
		struct { double v; int i; } di = {(me * 7) % 3, me}, dr;
		MPI_Allreduce(&di, &dr, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
		CHECK(dr.v == 0 && dr.i == 0, "DOUBLE_INT MINLOC: %g at %d", dr.v, dr.i);
		struct { int v, i; } ii = {me % 2, me}, ir;
		MPI_Allreduce(&ii, &ir, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD);
		CHECK(ir.v == 1 && ir.i == 1, "2INT MAXLOC: %d at %d", ir.v, ir.i);
		struct { float v; int i; } fi = {(float)me, me}, fr = {0, -1};
		MPI_Reduce(&fi, &fr, 1, MPI_FLOAT_INT, MPI_MAXLOC, 0, MPI_COMM_WORLD);
		CHECK(me != 0 || (fr.v == n - 1 && fr.i == n - 1), "FLOAT_INT MAXLOC: %g at %d", fr.v, fr.i);
		struct { long v; int i; } li = {-me, me}, lr;
		MPI_Allreduce(&li, &lr, 1, MPI_LONG_INT, MPI_MINLOC, MPI_COMM_WORLD);
		CHECK(lr.v == -(n - 1) && lr.i == n - 1, "LONG_INT MINLOC: %ld at %d", lr.v, lr.i);
		struct { short v; int i; } si = {3, me}, sr;
		MPI_Allreduce(&si, &sr, 1, MPI_SHORT_INT, MPI_MINLOC, MPI_COMM_WORLD);
		CHECK(sr.v == 3 && sr.i == 0, "SHORT_INT MINLOC: %d at %d", sr.v, sr.i);
		long double ld[2] = {me + 0.5L, -me}, lds[2] = {0, 0}, ldm = 0;
		MPI_Allreduce(ld, lds, 2, MPI_LONG_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		CHECK(lds[0] == n * (n - 1) / 2 + n * 0.5L && lds[1] == -(long double)(n * (n - 1) / 2),
		      "LONG_DOUBLE SUM: %Lg %Lg", lds[0], lds[1]);
		MPI_Allreduce(&ld[0], &ldm, 1, MPI_LONG_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		CHECK(ldm == n - 0.5L, "LONG_DOUBLE MAX: %Lg", ldm);
		double complex z = me + 1.0 * I, zs = 0;
		MPI_Allreduce(&z, &zs, 1, MPI_C_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD);
		CHECK(creal(zs) == n * (n - 1) / 2 && cimag(zs) == n, "C_DOUBLE_COMPLEX SUM: %g%+gi", creal(zs), cimag(zs));
		_Bool b = me == 1, bo = 0;
		MPI_Allreduce(&b, &bo, 1, MPI_C_BOOL, MPI_LOR, MPI_COMM_WORLD);
		CHECK(bo == 1, "C_BOOL LOR: %d", bo);
	}
	report("MINLOC/MAXLOC on pair types; long double, complex and bool ops");
	MPI_Finalize();
	return 0;
}
