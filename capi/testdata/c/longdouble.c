/* ranks: 3
 * openmpi osc: pt2pt
 * Accumulates of the types the runtime moves as opaque bytes, which the
 * standard allows as it allows any predefined type (MPI 4.1, 13.3.4):
 * long double under MPI_SUM, MPI_MAX, MPI_REPLACE and MPI_NO_OP, a
 * contiguous type of two of them, MPI_LONG_DOUBLE_INT under MPI_MAXLOC
 * and MPI_C_LONG_DOUBLE_COMPLEX under MPI_SUM, from every rank at once
 * into rank 0's elements (MPI_MAXLOC under shmrun alone: Open MPI 4.1
 * refuses it), on a window of MPI_Win_allocate and one of
 * MPI_Win_create over the program's memory: each element is combined
 * whole and atomically, so the sums come out exact. */
#include <complex.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define ROUNDS 50

struct ldi {
	long double v;
	int i;
};

struct area {
	long double sum, max, repl, pair[2];
	struct ldi loc;
	long double complex cx;
};

#define AT(f) ((MPI_Aint)offsetof(struct area, f))

static void accumulate(MPI_Win w, int rank)
{
	MPI_Datatype two;
	MPI_Type_contiguous(2, MPI_LONG_DOUBLE, &two);
	MPI_Type_commit(&two);
	long double mine = (rank + 1) * 0.5L, pair[2] = {rank + 1.0L, 0.25L}, top = (rank + 1) * 1.25L, old = -1;
	long double complex one = 1.0L + 2.0L * I;
	struct ldi me = {rank == 1 ? 9.5L : 1.0L, rank};
	MPI_Win_lock_all(0, w);
	for (int r = 0; r < ROUNDS; r++) {
		MPI_Accumulate(&mine, 1, MPI_LONG_DOUBLE, 0, AT(sum), 1, MPI_LONG_DOUBLE, MPI_SUM, w);
		MPI_Accumulate(pair, 2, MPI_LONG_DOUBLE, 0, AT(pair), 1, two, MPI_SUM, w);
		MPI_Accumulate(&one, 1, MPI_C_LONG_DOUBLE_COMPLEX, 0, AT(cx), 1, MPI_C_LONG_DOUBLE_COMPLEX, MPI_SUM, w);
	}
	MPI_Fetch_and_op(&top, &old, MPI_LONG_DOUBLE, 0, AT(max), MPI_MAX, w);
	MPI_Win_flush(0, w);
	CHECK(old >= 0 && old < 4, "MPI_MAX fetched %Lg", old);
	if (rank == 1) {
		long double r = 7.75L;
		MPI_Accumulate(&r, 1, MPI_LONG_DOUBLE, 0, AT(repl), 1, MPI_LONG_DOUBLE, MPI_REPLACE, w);
	}
#ifdef MPI_ABI_VERSION /* Open MPI 4.1 refuses MPI_MAXLOC on MPI_LONG_DOUBLE_INT and aborts */
	MPI_Accumulate(&me, 1, MPI_LONG_DOUBLE_INT, 0, AT(loc), 1, MPI_LONG_DOUBLE_INT, MPI_MAXLOC, w);
#else
	(void)me;
	if (rank == 1) {
		me.v = 9.5L;
		MPI_Put(&me, 1, MPI_LONG_DOUBLE_INT, 0, AT(loc), 1, MPI_LONG_DOUBLE_INT, w);
	}
#endif
	MPI_Win_unlock_all(w);
	MPI_Type_free(&two);
}

static void check(MPI_Win w, const struct area *a, int rank, int size, const char *kind)
{
	long double sum = ROUNDS * 0.5L * size * (size + 1) / 2, got = -1;
	MPI_Win_lock_all(0, w);
	MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, &got, 1, MPI_LONG_DOUBLE, 0, AT(sum), 1, MPI_LONG_DOUBLE, MPI_NO_OP, w);
	MPI_Win_unlock_all(w);
	CHECK(got == sum, "%s: MPI_NO_OP read the sum as %Lg, want %Lg", kind, got, sum);
	if (rank != 0)
		return;
	long double complex cx = ROUNDS * size * (1.0L + 2.0L * I);
	CHECK(a->sum == sum, "%s: MPI_SUM of long double: %Lg, want %Lg", kind, a->sum, sum);
	CHECK(a->pair[0] == ROUNDS * (long double)size * (size + 1) / 2 && a->pair[1] == ROUNDS * size * 0.25L,
	      "%s: MPI_SUM of two long doubles: %Lg %Lg", kind, a->pair[0], a->pair[1]);
	CHECK(a->max == size * 1.25L, "%s: MPI_MAX of long double: %Lg, want %Lg", kind, a->max, size * 1.25L);
	CHECK(a->repl == 7.75L, "%s: MPI_REPLACE of long double: %Lg", kind, a->repl);
	CHECK(a->loc.v == 9.5L && a->loc.i == 1, "%s: MPI_MAXLOC of MPI_LONG_DOUBLE_INT: (%Lg, %d), want (9.5, 1)", kind, a->loc.v,
	      a->loc.i);
	CHECK(a->cx == cx, "%s: MPI_SUM of long double complex: %Lg%+Lgi, want %Lg%+Lgi", kind, creall(a->cx), cimagl(a->cx),
	      creall(cx), cimagl(cx));
}

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	struct area *a;
	MPI_Win w;
	MPI_Win_allocate(sizeof *a, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &a, &w);
	memset(a, 0, sizeof *a);
	MPI_Barrier(MPI_COMM_WORLD);
	accumulate(w, rank);
	MPI_Barrier(MPI_COMM_WORLD);
	check(w, a, rank, size, "MPI_Win_allocate");
	MPI_Win_free(&w);
	report("long double and its kin accumulated on an allocated window");

	a = calloc(1, sizeof *a);
	MPI_Win_create(a, sizeof *a, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w);
	MPI_Barrier(MPI_COMM_WORLD);
	accumulate(w, rank);
	MPI_Barrier(MPI_COMM_WORLD);
	check(w, a, rank, size, "MPI_Win_create");
	MPI_Win_free(&w);
	free(a);
	report("long double and its kin accumulated on the program's memory");

	/* MPI_LONG_DOUBLE_INT is "as if" the struct of a long double and an
	 * int (MPI 4.1 §6.9.4): 20 bytes of data in an extent of 32, and it
	 * matches that struct both ways, padding not moved. */
	int sz = 0;
	MPI_Aint lb = -1, ext = 0;
	MPI_Type_size(MPI_LONG_DOUBLE_INT, &sz);
	MPI_Type_get_extent(MPI_LONG_DOUBLE_INT, &lb, &ext);
	CHECK(sz == 20 && lb == 0 && ext == (MPI_Aint)sizeof(struct ldi), "MPI_LONG_DOUBLE_INT: size %d, lb %ld, extent %ld, want 20, 0, %zu", sz,
	      (long)lb, (long)ext, sizeof(struct ldi));
	MPI_Datatype st;
	int bl[2] = {1, 1};
	MPI_Aint at[2] = {offsetof(struct ldi, v), offsetof(struct ldi, i)};
	MPI_Datatype ts[2] = {MPI_LONG_DOUBLE, MPI_INT};
	MPI_Type_create_struct(2, bl, at, ts, &st);
	MPI_Type_create_resized(st, 0, sizeof(struct ldi), &st);
	MPI_Type_commit(&st);
	for (int dir = 0; dir < 2 && size >= 2; dir++) {
		struct ldi pairs[2];
		MPI_Status s;
		if (rank == 0) {
			pairs[0] = (struct ldi){1.5L, 7};
			pairs[1] = (struct ldi){-2.25L, 9};
			MPI_Send(pairs, 2, dir ? MPI_LONG_DOUBLE_INT : st, 1, 5, MPI_COMM_WORLD);
		} else if (rank == 1) {
			memset(pairs, 0x5a, sizeof pairs);
			MPI_Recv(pairs, 2, dir ? st : MPI_LONG_DOUBLE_INT, 0, 5, MPI_COMM_WORLD, &s);
			int n = -1;
			MPI_Get_count(&s, dir ? st : MPI_LONG_DOUBLE_INT, &n);
			CHECK(n == 2 && pairs[0].v == 1.5L && pairs[0].i == 7 && pairs[1].v == -2.25L && pairs[1].i == 9,
			      "%s: count %d, (%Lg, %d) (%Lg, %d)", dir ? "MPI_LONG_DOUBLE_INT into the struct" : "the struct into MPI_LONG_DOUBLE_INT",
			      n, pairs[0].v, pairs[0].i, pairs[1].v, pairs[1].i);
		}
	}
	MPI_Type_free(&st);
	report("MPI_LONG_DOUBLE_INT matches the struct of a long double and an int");

	MPI_Finalize();
	return 0;
}
