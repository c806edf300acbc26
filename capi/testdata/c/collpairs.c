/* ranks: 3
 * The pair types in the data-movement collectives. A pair is the struct
 * of a value and an int (MPI 4.1 §6.9.4): its type signature is those two
 * basic types, and a collective's ranks need only the same signature
 * (§6.1), so even ranks pass the pair type where odd ranks pass its
 * equivalent: MPI_2INT against twice as many MPI_INT, MPI_FLOAT_INT,
 * MPI_DOUBLE_INT and MPI_SHORT_INT against a struct of the same two
 * types (the last two with padding, which does not move). Bcast, Gather,
 * Allgather, Allgatherv, Scatter and Alltoall, at 2 pairs a rank (inline
 * in a flag line: the C fast path where it runs) and at 3000 (staged). */
#include <stddef.h>
#include <string.h>

#include "check.h"

struct fi {
	float v;
	int i;
};
struct di {
	double v;
	int i;
};
struct si {
	short v;
	int i;
};

/* struct_of is the committed struct of a value of type value at 0 and an
 * int at off, resized to extent. */
static MPI_Datatype struct_of(MPI_Datatype value, MPI_Aint off, MPI_Aint extent)
{
	int bl[2] = {1, 1};
	MPI_Aint d[2] = {0, off};
	MPI_Datatype ts[2] = {value, MPI_INT}, s, r;
	MPI_Type_create_struct(2, bl, d, ts, &s);
	MPI_Type_create_resized(s, 0, extent, &r);
	MPI_Type_free(&s);
	MPI_Type_commit(&r);
	return r;
}

/* A kind of pair: its element size, the pair type, the type odd ranks
 * use and how many of it make one pair, and how to write and compare the
 * pair made for (rank q, index i). */
struct kind {
	const char *name;
	size_t size;
	MPI_Datatype pair, other;
	int k;
	void (*put)(void *p, int q, int i);
	int (*eq)(const void *p, int q, int i);
};

static void put_2int(void *p, int q, int i) { ((int *)p)[0] = q, ((int *)p)[1] = i; }
static int eq_2int(const void *p, int q, int i) { return ((const int *)p)[0] == q && ((const int *)p)[1] == i; }
static void put_fi(void *p, int q, int i) { ((struct fi *)p)->v = q + 0.5f, ((struct fi *)p)->i = i; }
static int eq_fi(const void *p, int q, int i) { return ((const struct fi *)p)->v == q + 0.5f && ((const struct fi *)p)->i == i; }
static void put_di(void *p, int q, int i) { ((struct di *)p)->v = q + 0.25, ((struct di *)p)->i = i; }
static int eq_di(const void *p, int q, int i) { return ((const struct di *)p)->v == q + 0.25 && ((const struct di *)p)->i == i; }
static void put_si(void *p, int q, int i) { ((struct si *)p)->v = (short)q, ((struct si *)p)->i = i << 8; }
static int eq_si(const void *p, int q, int i) { return ((const struct si *)p)->v == q && ((const struct si *)p)->i == i << 8; }

/* fill writes n pairs made for rank q from index i0 into b. */
static void fill_pairs(const struct kind *K, char *b, int n, int q, int i0)
{
	for (int i = 0; i < n; i++)
		K->put(b + i * K->size, q, i0 + i);
}

/* bad is the first of n pairs in b that is not the one made for rank
 * q(j) and index i(j), or -1. */
static int check_pairs(const struct kind *K, const char *b, int n, int per, int (*q)(int, int, int), int me, int size)
{
	for (int j = 0; j < n; j++)
		if (!K->eq(b + j * K->size, q(j / per, me, size), j % per))
			return j;
	return -1;
}

static int block_q(int blk, int me, int size) { return (void)me, (void)size, blk; }
static int rev_q(int blk, int me, int size) { return (void)me, size - 1 - blk; }
static int a2a_q(int blk, int me, int size) { return blk * size + me; }

static void run(const struct kind *K, int per, int me, int size)
{
	int odd = me % 2;
	MPI_Datatype t = odd ? K->other : K->pair;
	int c = odd ? per * K->k : per; /* this rank's count of t a block */
	char *mine = calloc(per, K->size), *all = calloc((size_t)size * per, K->size);
	char *buf = calloc((size_t)size * per, K->size);
	int rc, bad;

	/* Bcast from the last rank. */
	if (me == size - 1)
		fill_pairs(K, mine, per, me, 0);
	rc = MPI_Bcast(mine, c, t, size - 1, MPI_COMM_WORLD);
	for (int i = 0; i < per; i++)
		CHECK(rc == MPI_SUCCESS && K->eq(mine + i * K->size, size - 1, i), "%s, %d: Bcast: rc %d, pair %d", K->name, per, rc, i);

	/* Gather to 0 and Allgather. */
	fill_pairs(K, mine, per, me, 0);
	rc = MPI_Gather(mine, c, t, all, c, t, 0, MPI_COMM_WORLD);
	bad = me == 0 ? check_pairs(K, all, size * per, per, block_q, me, size) : -1;
	CHECK(rc == MPI_SUCCESS && bad < 0, "%s, %d: Gather: rc %d, pair %d", K->name, per, rc, bad);
	memset(all, 0, (size_t)size * per * K->size);
	rc = MPI_Allgather(mine, c, t, all, c, t, MPI_COMM_WORLD);
	bad = check_pairs(K, all, size * per, per, block_q, me, size);
	CHECK(rc == MPI_SUCCESS && bad < 0, "%s, %d: Allgather: rc %d, pair %d", K->name, per, rc, bad);

	/* Allgatherv, rank q's block at (size-1-q) blocks. */
	int *counts = malloc(size * sizeof(int)), *displs = malloc(size * sizeof(int));
	for (int q = 0; q < size; q++)
		counts[q] = c, displs[q] = (size - 1 - q) * c;
	memset(all, 0, (size_t)size * per * K->size);
	rc = MPI_Allgatherv(mine, c, t, all, counts, displs, t, MPI_COMM_WORLD);
	bad = check_pairs(K, all, size * per, per, rev_q, me, size);
	CHECK(rc == MPI_SUCCESS && bad < 0, "%s, %d: Allgatherv: rc %d, pair %d", K->name, per, rc, bad);

	/* Scatter from 0 of the blocks made for each rank. */
	if (me == 0)
		for (int q = 0; q < size; q++)
			fill_pairs(K, buf + (size_t)q * per * K->size, per, q, 0);
	memset(mine, 0, per * K->size);
	rc = MPI_Scatter(buf, c, t, mine, c, t, 0, MPI_COMM_WORLD);
	for (int i = 0; i < per; i++)
		CHECK(rc == MPI_SUCCESS && K->eq(mine + i * K->size, me, i), "%s, %d: Scatter: rc %d, pair %d", K->name, per, rc, i);

	/* Alltoall: block j of rank q's send is made for q*size+j. */
	for (int j = 0; j < size; j++)
		fill_pairs(K, buf + (size_t)j * per * K->size, per, me * size + j, 0);
	memset(all, 0, (size_t)size * per * K->size);
	rc = MPI_Alltoall(buf, c, t, all, c, t, MPI_COMM_WORLD);
	bad = check_pairs(K, all, size * per, per, a2a_q, me, size);
	CHECK(rc == MPI_SUCCESS && bad < 0, "%s, %d: Alltoall: rc %d, pair %d", K->name, per, rc, bad);

	free(counts), free(displs), free(mine), free(all), free(buf);
}

int main(int argc, char **argv)
{
	int me, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

	struct kind kinds[] = {
	    {"MPI_2INT", 2 * sizeof(int), MPI_2INT, MPI_INT, 2, put_2int, eq_2int},
	    {"MPI_FLOAT_INT", sizeof(struct fi), MPI_FLOAT_INT, struct_of(MPI_FLOAT, offsetof(struct fi, i), sizeof(struct fi)), 1, put_fi, eq_fi},
	    {"MPI_DOUBLE_INT", sizeof(struct di), MPI_DOUBLE_INT, struct_of(MPI_DOUBLE, offsetof(struct di, i), sizeof(struct di)), 1, put_di, eq_di},
	    {"MPI_SHORT_INT", sizeof(struct si), MPI_SHORT_INT, struct_of(MPI_SHORT, offsetof(struct si, i), sizeof(struct si)), 1, put_si, eq_si},
	};
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		run(&kinds[k], 2, me, size);
		run(&kinds[k], 3000, me, size);
		char name[64];
		snprintf(name, sizeof name, "%s meets its equivalent in the collectives", kinds[k].name);
		report(name);
		if (kinds[k].other != MPI_INT)
			MPI_Type_free(&kinds[k].other);
	}
	MPI_Finalize();
	return 0;
}
