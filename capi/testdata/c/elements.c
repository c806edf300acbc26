/* ranks: 2
 * MPI_Get_elements counts the basic elements received (MPI 4.1 §5.1.11),
 * MPI_Get_count the whole instances of the datatype (MPI_UNDEFINED when
 * the data end inside one): for a struct that mixes basic types, for a
 * message of one and a half instances of it, for one shorter than an
 * instance (a prefix of its type map), after a probe, for a probed
 * message that ends inside a basic element (MPI_UNDEFINED for both: shmrun
 * refuses to receive such bytes into the struct), and for types built
 * from such structs, pair types and long double. Rank 0 sends, rank 1
 * receives. */
#include <stddef.h>
#include <string.h>

#include "check.h"

struct s {
	int a;
	double b;
};

/* three: an int, a double and an int: one and a half instances of s. */
struct three {
	int a;
	double b;
	int c;
};

struct ld {
	int a;
	long double b;
};

static MPI_Datatype s_type, three_type, s2_type, ld_type, di2_type;

static void make_types(void)
{
	int bl[3] = {1, 1, 1};
	MPI_Aint d[3] = {offsetof(struct s, a), offsetof(struct s, b)};
	MPI_Datatype t[3] = {MPI_INT, MPI_DOUBLE, MPI_INT};
	MPI_Type_create_struct(2, bl, d, t, &s_type);
	MPI_Type_commit(&s_type);
	MPI_Aint d3[3] = {offsetof(struct three, a), offsetof(struct three, b), offsetof(struct three, c)};
	MPI_Type_create_struct(3, bl, d3, t, &three_type);
	MPI_Type_commit(&three_type);
	MPI_Type_contiguous(2, s_type, &s2_type);
	MPI_Type_commit(&s2_type);
	MPI_Aint dl[2] = {offsetof(struct ld, a), offsetof(struct ld, b)};
	MPI_Datatype tl[2] = {MPI_INT, MPI_LONG_DOUBLE};
	MPI_Type_create_struct(2, bl, dl, tl, &ld_type);
	MPI_Type_commit(&ld_type);
	MPI_Type_contiguous(2, MPI_DOUBLE_INT, &di2_type);
	MPI_Type_commit(&di2_type);
}

/* counts checks the count and the elements status gives for type. */
static void counts(const char *what, MPI_Status *st, MPI_Datatype type, const char *tname, int count, int elems)
{
	int c = -2, e = -2;
	int err1 = MPI_Get_count(st, type, &c);
	int err2 = MPI_Get_elements(st, type, &e);
	CHECK(err1 == MPI_SUCCESS && c == count, "%s: MPI_Get_count(%s) = %d, want %d", what, tname, c, count);
	CHECK(err2 == MPI_SUCCESS && e == elems, "%s: MPI_Get_elements(%s) = %d, want %d", what, tname, e, elems);
#ifdef MPI_ABI_VERSION
	MPI_Count cc = -2, ce = -2;
	MPI_Get_count_c(st, type, &cc);
	MPI_Get_elements_c(st, type, &ce);
	CHECK(cc == count && ce == elems, "%s: MPI_Get_count_c(%s) = %lld, MPI_Get_elements_c %lld, want %d and %d", what, tname,
	      (long long)cc, (long long)ce, count, elems);
#endif
}

/* recv_s receives the next message into four s and checks its counts. */
static void recv_s(const char *what, int count, int elems, struct s *r)
{
	MPI_Status st;
	memset(r, 0, 4 * sizeof *r);
	MPI_Recv(r, 4, s_type, 0, 0, MPI_COMM_WORLD, &st);
	counts(what, &st, s_type, "s", count, elems);
}

int main(int argc, char **argv)
{
	int rank;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	make_types();
	struct s v[4] = {{1, 1.5}, {2, 2.5}, {3, 3.5}, {4, 4.5}}, r[4];
	MPI_Status st;

	if (rank == 0) {
		MPI_Send(v, 2, s_type, 1, 0, MPI_COMM_WORLD);
		MPI_Send(v, 0, s_type, 1, 0, MPI_COMM_WORLD);
	} else {
		recv_s("two instances", 2, 4, r);
		CHECK(r[0].a == 1 && r[0].b == 1.5 && r[1].a == 2 && r[1].b == 2.5, "two instances: %d %g %d %g", r[0].a, r[0].b, r[1].a, r[1].b);
		recv_s("no data", 0, 0, r);
	}
	report("whole instances of a struct of an int and a double");

	struct three t = {7, 7.5, 8};
	if (rank == 0) {
		MPI_Send(&t, 1, three_type, 1, 0, MPI_COMM_WORLD); /* int, double, int */
		MPI_Send(&t.a, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);   /* int */
		MPI_Send(v, 3, s_type, 1, 0, MPI_COMM_WORLD);       /* 3 × (int, double) */
	} else {
		recv_s("one and a half instances", MPI_UNDEFINED, 3, r);
		CHECK(r[0].a == 7 && r[0].b == 7.5 && r[1].a == 8 && r[1].b == 0, "one and a half instances: %d %g %d %g", r[0].a, r[0].b, r[1].a,
		      r[1].b);
		recv_s("an int", MPI_UNDEFINED, 1, r);
		CHECK(r[0].a == 7 && r[0].b == 0, "an int: %d %g", r[0].a, r[0].b);
		MPI_Recv(r, 2, s2_type, 0, 0, MPI_COMM_WORLD, &st);
		counts("three instances into pairs of them", &st, s2_type, "contiguous(2, s)", MPI_UNDEFINED, 6);
		counts("three instances, counted as s", &st, s_type, "s", 3, 6);
	}
	report("part of an instance: a prefix of the type map");

	if (rank == 0) {
		char bytes[64] = {0};
		MPI_Send(bytes, 28, MPI_BYTE, 1, 0, MPI_COMM_WORLD); /* 2 × s and an int */
	} else {
		recv_s("28 bytes", MPI_UNDEFINED, 5, r);
	}
	report("bytes received into a struct");

	if (rank == 0) {
		MPI_Send(&t, 1, three_type, 1, 0, MPI_COMM_WORLD);
	} else {
		MPI_Probe(0, 0, MPI_COMM_WORLD, &st);
		counts("a probed message", &st, s_type, "s", MPI_UNDEFINED, 3);
		recv_s("the message received", MPI_UNDEFINED, 3, r);
	}
	report("probed messages");

	if (rank == 0) {
		char bytes[64] = {0};
		for (int n = 0; n <= 30; n += 2)
			MPI_Send(bytes, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
	} else {
		/* Messages of 0, 2, ..., 30 bytes, probed and counted as the
		 * types a program would receive them with: MPI_UNDEFINED where
		 * the bytes end inside a basic element. long double is one basic
		 * element; MPI_DOUBLE_INT in a derived type is a double and an int
		 * (MPI 4.1 §6.9.4 defines it as such a struct), alone it is a
		 * predefined type: count = elements. */
		enum { U = MPI_UNDEFINED };
		static const struct {
			int s_count, s_elems, ld_count, ld_elems, di2_count, di2_elems, di_count, di_elems;
		} want[] = {
		    {0, 0, 0, 0, 0, 0, 0, 0}, /* 0 bytes */
		    {U, U, U, U, U, U, U, U}, /* 2 */
		    {U, 1, U, 1, U, U, U, U}, /* 4 */
		    {U, U, U, U, U, U, U, U}, /* 6 */
		    {U, U, U, U, U, 1, U, U}, /* 8 */
		    {U, U, U, U, U, U, U, U}, /* 10 */
		    {1, 2, U, U, U, 2, 1, 1}, /* 12 */
		    {U, U, U, U, U, U, U, U}, /* 14 */
		    {U, 3, U, U, U, U, U, U}, /* 16 */
		    {U, U, U, U, U, U, U, U}, /* 18 */
		    {U, U, 1, 2, U, 3, U, U}, /* 20 */
		    {U, U, U, U, U, U, U, U}, /* 22 */
		    {2, 4, U, 3, 1, 4, 2, 2}, /* 24 */
		    {U, U, U, U, U, U, U, U}, /* 26 */
		    {U, 5, U, U, U, U, U, U}, /* 28 */
		    {U, U, U, U, U, U, U, U}, /* 30 */
		};
		char buf[64];
		for (int i = 0; i <= 15; i++) {
			char what[32];
			snprintf(what, sizeof what, "%d bytes", 2 * i);
			MPI_Probe(0, 0, MPI_COMM_WORLD, &st);
			counts(what, &st, s_type, "s", want[i].s_count, want[i].s_elems);
			counts(what, &st, ld_type, "struct of int, long double", want[i].ld_count, want[i].ld_elems);
			counts(what, &st, di2_type, "contiguous(2, MPI_DOUBLE_INT)", want[i].di2_count, want[i].di2_elems);
			counts(what, &st, MPI_DOUBLE_INT, "MPI_DOUBLE_INT", want[i].di_count, want[i].di_elems);
			MPI_Recv(buf, sizeof buf, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &st);
		}
	}
	report("probed messages ending inside a basic element, long double and pair types");

	MPI_Type_free(&s_type);
	MPI_Type_free(&three_type);
	MPI_Type_free(&s2_type);
	MPI_Type_free(&ld_type);
	MPI_Type_free(&di2_type);
	MPI_Finalize();
	return 0;
}
