/* ranks: 1
 * Two properties of derived datatypes that libraries rely on. A
 * duplicate has its old type's committed state (MPI 4.1 §5.1.10): the
 * MPI_Type_dup of a committed vector, or of a predefined type, is used
 * at once, with no MPI_Type_commit of its own. A struct's extent is
 * rounded up to the strictest alignment of its members (§5.1.6's ε),
 * long double and its kin included, so that an array of C structs
 * moves whole: the extents equal C's sizeof, and two structs go
 * through a Sendrecv to self. The same output under Open MPI. */
#include <stddef.h>
#include <string.h>
#include "check.h"

struct sld {
	long double x;
	char c;
};
struct scx {
	long double _Complex z;
	char c;
};
struct sldi {
	struct {
		long double v;
		int i;
	} p;
	char c;
};

static MPI_Datatype pair_struct(MPI_Datatype first, MPI_Aint at)
{
	int bl[2] = {1, 1};
	MPI_Aint d[2] = {0, at};
	MPI_Datatype ty[2] = {first, MPI_CHAR}, t;
	MPI_Type_create_struct(2, bl, d, ty, &t);
	MPI_Type_commit(&t);
	return t;
}

int main(int argc, char **argv)
{
	int rank;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

	MPI_Datatype v, d, di, du;
	MPI_Type_vector(3, 1, 2, MPI_INT, &v);
	MPI_Type_dup(v, &du); /* before the commit: not committed */
	MPI_Type_commit(&v);
	MPI_Type_dup(v, &d);
	MPI_Type_dup(MPI_INT, &di);
	int b[6] = {1, 2, 3, 4, 5, 6}, r[6] = {0};
	CHECK(MPI_Sendrecv(b, 1, d, rank, 1, r, 1, d, rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS,
	      "Sendrecv with the dup of a committed vector");
	CHECK(r[0] == 1 && r[1] == 0 && r[2] == 3 && r[3] == 0 && r[4] == 5 && r[5] == 0, "received %d %d %d %d %d %d",
	      r[0], r[1], r[2], r[3], r[4], r[5]);
	char pb[64];
	int pos = 0;
	CHECK(MPI_Pack(b, 1, d, pb, sizeof pb, &pos, MPI_COMM_WORLD) == MPI_SUCCESS && pos == 12,
	      "Pack with the dup: position %d", pos);
	memset(r, 0, sizeof r);
	CHECK(MPI_Sendrecv(b, 2, di, rank, 2, r, 2, di, rank, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
		      r[0] == 1 && r[1] == 2,
	      "Sendrecv with the dup of MPI_INT");
	CHECK(MPI_Type_commit(&du) == MPI_SUCCESS, "commit of the earlier dup");
	MPI_Type_free(&du);
	MPI_Type_free(&d);
	MPI_Type_free(&di);
	MPI_Type_free(&v);
	report("a duplicate keeps the committed state");

	struct {
		MPI_Datatype t;
		MPI_Aint size;
		const char *name;
	} cases[3] = {
		{pair_struct(MPI_LONG_DOUBLE, offsetof(struct sld, c)), sizeof(struct sld), "long double"},
		{pair_struct(MPI_C_LONG_DOUBLE_COMPLEX, offsetof(struct scx, c)), sizeof(struct scx), "long double _Complex"},
		{pair_struct(MPI_LONG_DOUBLE_INT, offsetof(struct sldi, c)), sizeof(struct sldi), "MPI_LONG_DOUBLE_INT"},
	};
	for (int i = 0; i < 3; i++) {
		MPI_Aint lb, ext;
		MPI_Type_get_extent(cases[i].t, &lb, &ext);
		CHECK(lb == 0 && ext == cases[i].size, "{%s, char}: extent %ld, C's sizeof %ld", cases[i].name, (long)ext,
		      (long)cases[i].size);
	}
	struct sld s[2], rs[2];
	memset(s, 0, sizeof s);
	memset(rs, 0, sizeof rs);
	s[0].x = 1.5L, s[0].c = 'a', s[1].x = 2.5L, s[1].c = 'b';
	CHECK(MPI_Sendrecv(s, 2, cases[0].t, rank, 3, rs, 2, cases[0].t, rank, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE) ==
		      MPI_SUCCESS,
	      "Sendrecv of two structs");
	CHECK(rs[0].x == 1.5L && rs[0].c == 'a' && rs[1].x == 2.5L && rs[1].c == 'b', "received %Lg %c %Lg %c", rs[0].x,
	      rs[0].c, rs[1].x, rs[1].c);
	for (int i = 0; i < 3; i++)
		MPI_Type_free(&cases[i].t);
	report("structs of long double and its kin get C's padding");

	MPI_Finalize();
	return failures != 0;
}
