/* ranks: 5
 * The v forms of the collectives, with zero counts on some ranks and
 * MPI_IN_PLACE, a struct datatype in a gather, the predefined ops on
 * the pair types, long double, complex, bool and bytes, and user ops on
 * derived datatypes (whole instances, in their layout, holes kept). */
#include <complex.h>
#include <stddef.h>
#include "check.h"

#define MAXN 16

/* vadd adds 3-vectors; it checks that it is given the call's datatype. */
typedef struct {
	double x, y, z;
} vec3_t;
static int vadd_bad;
static void vadd(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	int sz;
	MPI_Type_size(*dt, &sz);
	vadd_bad += sz != (int)sizeof(vec3_t);
	vec3_t *a = in, *b = inout;
	for (int i = 0; i < *len; i++) {
		b[i].x += a[i].x;
		b[i].y += a[i].y;
		b[i].z += a[i].z;
	}
}

/* viminloc is MINLOC over a padded {double, int} struct. */
static void viminloc(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	struct vi {
		double v;
		int i;
	} *a = in, *b = inout;
	for (int k = 0; k < *len; k++)
		if (a[k].v < b[k].v || (a[k].v == b[k].v && a[k].i < b[k].i))
			b[k] = a[k];
}

/* imax is MAX over the ints of a type with stride 2 (one instance of
 * MPI_Type_vector(4, 1, 2, MPI_INT) a call). */
static void imax(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	int *a = in, *b = inout;
	for (int k = 0; k < *len; k++)
		for (int j = 0; j < 8; j += 2)
			if (a[8 * k + j] > b[8 * k + j])
				b[8 * k + j] = a[8 * k + j];
}

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
	/* Reduce_scatter_block of a predefined type: blocks of 2. */
	for (int i = 0; i < 2 * size; i++)
		in[i] = rank + i;
	MPI_Reduce_scatter_block(in, outb, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < 2; i++)
		CHECK(outb[i] == size * (2 * rank + i) + size * (size - 1) / 2, "reduce_scatter_block element %d: %d", i, outb[i]);
	report("reduce_scatter, also in place, and reduce_scatter_block");

	/* Reduce_scatter with a type whose lower bound is not its data's (an
	 * int every 8 bytes, lb 4: the scratch buffer of every block must
	 * start at the data, not the bound), with a type of negative extent
	 * (data before the buffer: not supported, refused on every rank), and
	 * with a type whose instances overlap (8 bytes of data every 4: the
	 * blocks cannot sit in one buffer of the type), refused on every rank
	 * with nothing written. (MPI_SUM on a derived type of ints is MPI's,
	 * not Open MPI 4.1's.) */
#ifdef MPI_ABI_VERSION
	{
		MPI_Datatype spaced, down, overlap, pair;
		MPI_Type_create_resized(MPI_INT, 4, 8, &spaced);
		MPI_Type_commit(&spaced);
		int sin[128], sout[8];
		for (int i = 0; i < tot; i++)
			sin[2 * i] = rank + i, sin[2 * i + 1] = -5;
		for (int i = 0; i < 8; i++)
			sout[i] = -1;
		MPI_Reduce_scatter(sin, sout, rcnt, spaced, MPI_SUM, MPI_COMM_WORLD);
		for (int i = 0; i < 4; i++) {
			int want = i < rcnt[rank] ? size * (off2 + i) + size * (size - 1) / 2 : -1;
			CHECK(sout[2 * i] == want && sout[2 * i + 1] == -1, "lb 4, extent 8: element %d: %d (gap %d), want %d",
			      i, sout[2 * i], sout[2 * i + 1], want);
		}
		MPI_Type_free(&spaced);

		MPI_Comm dup;
		MPI_Comm_dup(MPI_COMM_WORLD, &dup);
		MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
		MPI_Type_create_resized(MPI_INT, 0, -4, &down);
		MPI_Type_commit(&down);
		/* A negative extent: instance k is din[63 - k], and this
		 * rank's result is written down from dout[3]. */
		int din[64] = {0}, dout[4] = {-1, -1, -1, -1}, off = 0;
		for (int k = 0; k < 64; k++)
			din[63 - k] = k;
		for (int q = 0; q < rank; q++)
			off += rcnt[q];
		int err = MPI_Reduce_scatter(&din[63], &dout[3], rcnt, down, MPI_SUM, dup);
		CHECK(err == MPI_SUCCESS, "Reduce_scatter of negative extent: class %d", class_of(err));
		for (int i = 0; i < 4; i++)
			CHECK(dout[3 - i] == (i < rcnt[rank] ? size * (off + i) : -1), "Reduce_scatter of negative extent: dout[%d] = %d",
			      3 - i, dout[3 - i]);
		MPI_Type_free(&down);

		MPI_Type_contiguous(2, MPI_INT, &pair);
		MPI_Type_create_resized(pair, 0, 4, &overlap);
		MPI_Type_commit(&overlap);
		int ones[MAXN], oin[64] = {0}, oout[4] = {-1, -1, -1, -1};
		for (int q = 0; q < size; q++)
			ones[q] = 1;
		err = MPI_Reduce_scatter(oin, oout, ones, overlap, MPI_SUM, dup);
		int class = MPI_SUCCESS;
		if (err != MPI_SUCCESS)
			MPI_Error_class(err, &class);
		CHECK(class == MPI_ERR_TYPE, "Reduce_scatter of overlapping instances: class %d, want MPI_ERR_TYPE", class);
		CHECK(oout[0] == -1 && oout[1] == -1, "the refused Reduce_scatter wrote %d %d", oout[0], oout[1]);
		err = MPI_Barrier(dup);
		CHECK(err == MPI_SUCCESS, "the Barrier after the refused calls: error %d", err);
		MPI_Comm_free(&dup);
		MPI_Type_free(&overlap);
		MPI_Type_free(&pair);
	}
#endif
	report("reduce_scatter: bounds apart from the data, a negative extent; overlapping instances refused");

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

	/* The pairs and complex types of long double, and bytes. */
	{
		int n = size, me = rank;
		struct { long double v; int i; } ldi = {(me * 7) % 3, me}, ldr = {0, -1};
		MPI_Allreduce(&ldi, &ldr, 1, MPI_LONG_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
		CHECK(ldr.v == 0 && ldr.i == 0, "LONG_DOUBLE_INT MINLOC: %Lg at %d", ldr.v, ldr.i);
		MPI_Allreduce(&ldi, &ldr, 1, MPI_LONG_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
		CHECK(ldr.v == 2 && ldr.i == 2, "LONG_DOUBLE_INT MAXLOC: %Lg at %d", ldr.v, ldr.i);
		long double _Complex lz[2] = {me + 1.0L * I, 1.0L * I}, lzs[2] = {0, 0};
		MPI_Allreduce(lz, lzs, 2, MPI_C_LONG_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD);
		CHECK(creall(lzs[0]) == n * (n - 1) / 2 && cimagl(lzs[0]) == n, "C_LONG_DOUBLE_COMPLEX SUM: %Lg%+Lgi",
		      creall(lzs[0]), cimagl(lzs[0]));
		MPI_Allreduce(&lz[1], &lzs[1], 1, MPI_C_LONG_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD);
		/* i^5 = i */
		CHECK(creall(lzs[1]) == 0 && cimagl(lzs[1]) == 1, "C_LONG_DOUBLE_COMPLEX PROD: %Lg%+Lgi", creall(lzs[1]),
		      cimagl(lzs[1]));
		unsigned char by[2] = {(unsigned char)(1 << me), 0xff}, bx[2] = {0, 0};
		MPI_Allreduce(by, bx, 2, MPI_BYTE, MPI_BXOR, MPI_COMM_WORLD);
		CHECK(bx[0] == (1 << n) - 1 && bx[1] == (n % 2 ? 0xff : 0), "BYTE BXOR: %#x %#x", bx[0], bx[1]);
	}
	report("long double pairs and complex, bytes");

	/* User ops on derived datatypes: a 3-vector of doubles, enough of
	 * them to move in many pieces; a padded struct; a vector with holes
	 * in the receive buffer that must stay as they are. */
	{
		MPI_Datatype vec3;
		MPI_Type_contiguous(3, MPI_DOUBLE, &vec3);
		MPI_Type_commit(&vec3);
		MPI_Op op;
		MPI_Op_create(vadd, 1, &op);
		enum { NV = 20000 };
		static vec3_t s[NV], r[NV];
		for (int i = 0; i < NV; i++)
			s[i] = (vec3_t){rank, 1, i % 7};
		MPI_Allreduce(s, r, NV, vec3, op, MPI_COMM_WORLD);
		int bad = 0;
		for (int i = 0; i < NV; i++)
			bad += r[i].x != size * (size - 1) / 2 || r[i].y != size || r[i].z != (double)size * (i % 7);
		CHECK(bad == 0 && vadd_bad == 0, "vec3 user op: %d wrong, %d calls with the wrong datatype", bad, vadd_bad);
		MPI_Scan(s, r, 2, vec3, op, MPI_COMM_WORLD);
		CHECK(r[1].x == rank * (rank + 1) / 2 && r[1].y == rank + 1 && vadd_bad == 0, "vec3 scan: %g %g", r[1].x, r[1].y);
		MPI_Op_free(&op);
		MPI_Type_free(&vec3);

		struct vi { double v; int i; } a = {(rank * 5) % 4, rank}, b = {-1, -1};
		int bl[2] = {1, 1};
		MPI_Aint dis[2] = {offsetof(struct vi, v), offsetof(struct vi, i)};
		MPI_Datatype ts[2] = {MPI_DOUBLE, MPI_INT}, st, vit;
		MPI_Type_create_struct(2, bl, dis, ts, &st);
		MPI_Type_create_resized(st, 0, sizeof(struct vi), &vit);
		MPI_Type_commit(&vit);
		MPI_Op_create(viminloc, 1, &op);
		MPI_Reduce(&a, &b, 1, vit, op, 0, MPI_COMM_WORLD);
		CHECK(rank != 0 || (b.v == 0 && b.i == 0), "struct user op: %g at %d", b.v, b.i);
		MPI_Op_free(&op);
		MPI_Type_free(&vit);
		MPI_Type_free(&st);

		/* Every other int of 8: the holes of the result keep -7. */
		MPI_Datatype every2;
		MPI_Type_vector(4, 1, 2, MPI_INT, &every2);
		MPI_Type_commit(&every2);
		MPI_Op_create(imax, 1, &op);
		int v8[8], o8[8];
		for (int i = 0; i < 8; i++)
			v8[i] = rank * 10 + i, o8[i] = -7;
		MPI_Allreduce(v8, o8, 1, every2, op, MPI_COMM_WORLD);
		for (int i = 0; i < 8; i++)
			CHECK(o8[i] == (i % 2 ? -7 : (size - 1) * 10 + i), "vector user op: [%d] = %d", i, o8[i]);
		MPI_Op_free(&op);
		MPI_Type_free(&every2);
	}
	report("user ops on derived datatypes");

	/* Rank 0 broadcasts 8 bytes as MPI_BYTE, the others receive one
	 * MPI_DOUBLE: the same bytes, which MPI_BYTE matches, in the C fast
	 * path too (its round's signatures differ in the type alone). */
	MPI_Barrier(MPI_COMM_WORLD);
	{
		double dv = rank == 0 ? 2.5 : 0;
		int err = rank == 0 ? MPI_Bcast(&dv, 8, MPI_BYTE, 0, MPI_COMM_WORLD)
				    : MPI_Bcast(&dv, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
		CHECK(err == MPI_SUCCESS && dv == 2.5, "Bcast of 8 MPI_BYTE into one MPI_DOUBLE: error %d, value %g", err, dv);
	}
	report("bytes meet a double in a Bcast");

	/* A rank whose own arguments are refused before the call (an op
	 * handle that names nothing) still takes part in it: the call fails
	 * on every rank, and the next call on the communicator is not blamed
	 * for it. (shmrun's checks: another MPI may take the handle as an
	 * address.) */
#ifdef MPI_ABI_VERSION
	{
		MPI_Comm dup;
		MPI_Comm_dup(MPI_COMM_WORLD, &dup);
		MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
		int one = rank, sum = 0;
		MPI_Op op = rank == 1 ? (MPI_Op)(intptr_t)0x7777770 : MPI_SUM;
		int err = MPI_Allreduce(&one, &sum, 1, MPI_INT, op, dup);
		CHECK(err != MPI_SUCCESS, "Allreduce with rank 1's op refused succeeded on rank %d", rank);
		err = MPI_Barrier(dup);
		CHECK(err == MPI_SUCCESS, "the Barrier after the refused Allreduce: error %d on rank %d", err, rank);
		MPI_Comm_free(&dup);
	}
#endif
	report("arguments refused on one rank fail the call on every rank");
	MPI_Finalize();
	return 0;
}
