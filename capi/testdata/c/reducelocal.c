/* ranks: 2
 * MPI_Reduce_local (MPI 4.1 §6.9.7): inoutbuf = inbuf op inoutbuf, on the
 * calling process alone, with the predefined ops (integers, floats,
 * MPI_BYTE's bitwise ops, the pair types' MINLOC and MAXLOC, long
 * double's ops) and a program's ops, called with the call's datatype and
 * count (a non-commutative one sees in and inout in that order), a count
 * of 0 doing nothing. With the standard ABI's header: the _c form,
 * MPI_Op_create_c's ops (whose len is an MPI_Count) in MPI_Reduce_local
 * and in the collectives, an MPI_User_function called in pieces of at
 * most INT_MAX instances, predefined ops over derived types of one basic
 * type (their holes left as they were), and the errors: an op that does
 * not apply to the type is MPI_ERR_OP as in MPI_Reduce, and the other
 * arguments' errors, on MPI_COMM_SELF's handler. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "check.h"

struct s {
	int a;
	double b;
};

static MPI_Datatype s_type;
static int calls, last_len;
static MPI_Datatype last_type;

/* digits: inout = in * 10 + inout, element by element: not commutative. */
static void digits(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	const int *a = in;
	int *b = inout;
	for (int i = 0; i < *len; i++)
		b[i] = a[i] * 10 + b[i];
	calls++;
	last_len = *len;
	last_type = *dt;
}

/* s_sum adds struct s instances, field by field. */
static void s_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	const struct s *a = in;
	struct s *b = inout;
	for (int i = 0; i < *len; i++) {
		b[i].a += a[i].a;
		b[i].b += a[i].b;
	}
	calls++;
	last_len = *len;
	last_type = *dt;
}

#ifdef MPI_ABI_VERSION
static MPI_Count last_len_c;

static void digits_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
	const int *a = in;
	int *b = inout;
	for (MPI_Count i = 0; i < *len; i++)
		b[i] = a[i] * 10 + b[i];
	calls++;
	last_len_c = *len;
	last_type = *dt;
}

static void s_sum_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
	const struct s *a = in;
	struct s *b = inout;
	for (MPI_Count i = 0; i < *len; i++) {
		b[i].a += a[i].a;
		b[i].b += a[i].b;
	}
	calls++;
	last_len_c = *len;
	last_type = *dt;
}

/* count_only records its calls' lengths: the data are of a type of size 0. */
static MPI_Count total;
static int max_len;

static void count_only(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)in, (void)inout, (void)dt;
	calls++;
	total += *len;
	if (*len > max_len)
		max_len = *len;
}

static void count_only_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
	(void)in, (void)inout, (void)dt;
	calls++;
	total += *len;
}

/* fails checks that call failed with class, its message naming name, on
 * MPI_COMM_SELF's handler (MPI_ERRORS_RETURN: MPI_COMM_WORLD's is fatal). */
static void fails(const char *name, int err, int class)
{
	int c = MPI_SUCCESS, len = 0;
	char msg[MPI_MAX_ERROR_STRING] = "";
	if (err != MPI_SUCCESS) {
		MPI_Error_class(err, &c);
		MPI_Error_string(err, msg, &len);
	}
	CHECK(c == class && strncmp(msg, name, strlen(name)) == 0 && msg[strlen(name)] == ':', "%s: class %d (%s), want %d", name, c, msg, class);
}
#endif

int main(int argc, char **argv)
{
	int rank;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int bl[2] = {1, 1};
	MPI_Aint d[2] = {offsetof(struct s, a), offsetof(struct s, b)};
	MPI_Datatype t[2] = {MPI_INT, MPI_DOUBLE};
	MPI_Type_create_struct(2, bl, d, t, &s_type);
	MPI_Type_commit(&s_type);

	int in[4] = {1, 2, 3, 4}, io[4] = {10, 20, 30, 40};
	MPI_Reduce_local(in, io, 4, MPI_INT, MPI_SUM);
	CHECK(io[0] == 11 && io[1] == 22 && io[2] == 33 && io[3] == 44, "MPI_SUM: %d %d %d %d", io[0], io[1], io[2], io[3]);
	CHECK(in[0] == 1 && in[3] == 4, "MPI_SUM changed inbuf: %d %d", in[0], in[3]);
	double din[3] = {1.5, -2, 7}, dio[3] = {1, 5, 7.25};
	MPI_Reduce_local(din, dio, 3, MPI_DOUBLE, MPI_MAX);
	CHECK(dio[0] == 1.5 && dio[1] == 5 && dio[2] == 7.25, "MPI_MAX: %g %g %g", dio[0], dio[1], dio[2]);
	unsigned char bin[2] = {0xf0, 0x0f}, bio[2] = {0x3c, 0x3c};
	MPI_Reduce_local(bin, bio, 2, MPI_BYTE, MPI_BAND);
	CHECK(bio[0] == 0x30 && bio[1] == 0x0c, "MPI_BAND on MPI_BYTE: %#x %#x", bio[0], bio[1]);
	struct {
		double v;
		int i;
	} pin[3] = {{1, 5}, {2, 1}, {3, 3}}, pio[3] = {{1, 2}, {3, 0}, {3, 7}};
	MPI_Reduce_local(pin, pio, 3, MPI_DOUBLE_INT, MPI_MAXLOC);
	CHECK(pio[0].v == 1 && pio[0].i == 2 && pio[1].v == 3 && pio[1].i == 0 && pio[2].v == 3 && pio[2].i == 3,
	      "MPI_MAXLOC on MPI_DOUBLE_INT: (%g %d) (%g %d) (%g %d)", pio[0].v, pio[0].i, pio[1].v, pio[1].i, pio[2].v, pio[2].i);
	long double lin[2] = {2, 3}, lio[2] = {4, 0.5};
	MPI_Reduce_local(lin, lio, 2, MPI_LONG_DOUBLE, MPI_PROD);
	CHECK(lio[0] == 8 && lio[1] == 1.5, "MPI_PROD on MPI_LONG_DOUBLE: %Lg %Lg", lio[0], lio[1]);
	CHECK(MPI_Reduce_local(NULL, NULL, 0, MPI_INT, MPI_SUM) == MPI_SUCCESS, "a count of 0 failed");
	report("predefined ops");

	MPI_Op op;
	MPI_Op_create(digits, 0, &op);
	int a[2] = {1, 2}, b[2] = {3, 4};
	MPI_Reduce_local(a, b, 2, MPI_INT, op);
	CHECK(b[0] == 13 && b[1] == 24 && last_type == MPI_INT, "a user op: %d %d (want 13 24)", b[0], b[1]);
	calls = 0;
	MPI_Reduce_local(a, b, 0, MPI_INT, op);
	CHECK(b[0] == 13 && calls == 0, "a user op, count 0: %d, %d calls", b[0], calls);
	MPI_Op_free(&op);
	struct s sin[3] = {{1, 0.5}, {2, 1.5}, {3, 2.5}}, sio[3] = {{10, 1}, {20, 2}, {30, 3}};
	MPI_Op_create(s_sum, 1, &op);
	calls = 0;
	MPI_Reduce_local(sin, sio, 3, s_type, op);
	CHECK(sio[0].a == 11 && sio[0].b == 1.5 && sio[2].a == 33 && sio[2].b == 5.5, "a user op on a struct: (%d %g) (%d %g)", sio[0].a, sio[0].b,
	      sio[2].a, sio[2].b);
	CHECK(calls == 1 && last_len == 3 && last_type == s_type, "a user op on a struct: %d calls, len %d", calls, last_len);
	MPI_Op_free(&op);
	report("user ops: in op inout, with the call's datatype and count");

#ifdef MPI_ABI_VERSION
	/* the large-count forms */
	MPI_Op_create_c(digits_c, 0, &op);
	int ca[3] = {1, 2, 3}, cb[3] = {4, 5, 6};
	calls = 0;
	MPI_Reduce_local_c(ca, cb, 3, MPI_INT, op);
	CHECK(cb[0] == 14 && cb[1] == 25 && cb[2] == 36 && calls == 1 && last_len_c == 3, "MPI_Op_create_c's op in MPI_Reduce_local_c: %d %d %d",
	      cb[0], cb[1], cb[2]);
	MPI_Reduce_local(ca, cb, 1, MPI_INT, op);
	CHECK(cb[0] == 24 && cb[1] == 25, "MPI_Op_create_c's op in MPI_Reduce_local: %d %d", cb[0], cb[1]);
	int commute = -1;
	MPI_Op_commutative(op, &commute);
	CHECK(commute == 0, "MPI_Op_commutative of a non-commutative MPI_Op_create_c op: %d", commute);
	/* in a collective: rank order, x0 op x1 */
	int mine[2] = {rank + 1, rank + 5}, all[2] = {0, 0};
	MPI_Allreduce(mine, all, 2, MPI_INT, op, MPI_COMM_WORLD);
	CHECK(all[0] == 12 && all[1] == 56, "MPI_Allreduce with an MPI_Op_create_c op: %d %d, want 12 56", all[0], all[1]);
	MPI_Op_free(&op);
	MPI_Op_create_c(s_sum_c, 1, &op);
	struct s sm[2] = {{rank + 1, rank + 0.5}, {10 * rank, 1}}, sa[2];
	memset(sa, 0, sizeof sa);
	calls = 0;
	MPI_Allreduce(sm, sa, 2, s_type, op, MPI_COMM_WORLD);
	CHECK(sa[0].a == 3 && sa[0].b == 2 && sa[1].a == 10 && sa[1].b == 2 && calls > 0 && last_type == s_type,
	      "MPI_Allreduce of structs with an MPI_Op_create_c op: (%d %g) (%d %g)", sa[0].a, sa[0].b, sa[1].a, sa[1].b);
	MPI_Op_free(&op);

	/* an MPI_User_function takes at most INT_MAX instances a call */
	MPI_Datatype none;
	MPI_Type_contiguous(0, MPI_INT, &none);
	MPI_Type_commit(&none);
	int x = 0, y = 0;
	MPI_Op_create(count_only, 1, &op);
	calls = 0, total = 0;
	MPI_Reduce_local_c(&x, &y, 5000000000LL, none, op);
	CHECK(calls == 3 && total == 5000000000LL && max_len == INT32_MAX, "5e9 instances to an MPI_User_function: %d calls, %lld in all, at most %d",
	      calls, (long long)total, max_len);
	MPI_Op_free(&op);
	MPI_Op_create_c(count_only_c, 1, &op);
	calls = 0, total = 0;
	MPI_Reduce_local_c(&x, &y, 5000000000LL, none, op);
	CHECK(calls == 1 && total == 5000000000LL, "5e9 instances to an MPI_User_function_c: %d calls, %lld in all", calls, (long long)total);
	MPI_Op_free(&op);
	MPI_Type_free(&none);
#endif
	report("the large-count forms");

#ifdef MPI_ABI_VERSION
	/* predefined ops over derived types: the holes stay */
	MPI_Datatype vec, pairs;
	MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &vec);
	MPI_Type_commit(&vec);
	double vin[6] = {1, 100, 2, 100, 3, 100}, vio[6] = {10, -1, 20, -1, 30, -1};
	MPI_Reduce_local(vin, vio, 1, vec, MPI_SUM);
	CHECK(vio[0] == 11 && vio[1] == -1 && vio[2] == 22 && vio[3] == -1 && vio[4] == 33 && vio[5] == -1,
	      "MPI_SUM over a vector: %g %g %g %g %g %g", vio[0], vio[1], vio[2], vio[3], vio[4], vio[5]);
	MPI_Type_vector(2, 1, 2, MPI_SHORT_INT, &pairs);
	MPI_Type_commit(&pairs);
	struct {
		short v;
		int i;
	} qin[4] = {{5, 1}, {0, 0}, {2, 9}, {0, 0}}, qio[4] = {{5, 0}, {7, 7}, {3, 1}, {7, 7}};
	MPI_Reduce_local(qin, qio, 1, pairs, MPI_MINLOC);
	CHECK(qio[0].v == 5 && qio[0].i == 0 && qio[1].v == 7 && qio[1].i == 7 && qio[2].v == 2 && qio[2].i == 9 && qio[3].v == 7,
	      "MPI_MINLOC over a vector of MPI_SHORT_INT: (%d %d) (%d %d) (%d %d)", qio[0].v, qio[0].i, qio[1].v, qio[1].i, qio[2].v, qio[2].i);
	MPI_Type_free(&vec);
	MPI_Type_free(&pairs);
#endif
	report("predefined ops over derived types");

#ifdef MPI_ABI_VERSION
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	double dd[2] = {1, 2}, de[2] = {3, 4};
	int ia[2] = {1, 2}, ib[2] = {3, 4};
	unsigned char ba[2], bb[2];
	MPI_Datatype uncommitted, ldv, zero_ext;
	MPI_Type_contiguous(2, MPI_INT, &uncommitted);
	MPI_Type_contiguous(2, MPI_LONG_DOUBLE, &ldv);
	MPI_Type_commit(&ldv);
	MPI_Type_create_resized(MPI_INT, 0, 0, &zero_ext);
	MPI_Type_commit(&zero_ext);
	fails("MPI_Reduce_local", MPI_Reduce_local(dd, de, 2, MPI_DOUBLE, MPI_BAND), MPI_ERR_OP);
	fails("MPI_Reduce_local", MPI_Reduce_local(dd, de, 0, MPI_DOUBLE, MPI_BAND), MPI_ERR_OP);
	fails("MPI_Reduce_local_c", MPI_Reduce_local_c(ba, bb, 2, MPI_BYTE, MPI_SUM), MPI_ERR_OP);
	fails("MPI_Reduce_local", MPI_Reduce_local(ia, ib, 2, MPI_INT, MPI_MINLOC), MPI_ERR_OP);
	fails("MPI_Reduce_local", MPI_Reduce_local(ia, ib, 2, MPI_INT, MPI_REPLACE), MPI_ERR_OP);
	fails("MPI_Reduce_local", MPI_Reduce_local(lin, lio, 2, MPI_LONG_DOUBLE, MPI_BAND), MPI_ERR_OP);
	fails("MPI_Reduce_local", MPI_Reduce_local(ia, ib, 2, MPI_INT, MPI_OP_NULL), MPI_ERR_OP);
	/* MPI's Logical class takes MPI_LAND, MPI_LOR and MPI_LXOR alone
	 * (MPI 4.1, 7.9.2): a sum of two trues is no _Bool. */
	_Bool ta[2] = {1, 0}, tb[2] = {1, 1};
	int lg[2] = {1, 0}, lh[2] = {1, 1};
	fails("MPI_Reduce_local", MPI_Reduce_local(ta, tb, 2, MPI_C_BOOL, MPI_SUM), MPI_ERR_OP);
	fails("MPI_Reduce_local", MPI_Reduce_local(ta, tb, 2, MPI_C_BOOL, MPI_BOR), MPI_ERR_OP);
	fails("MPI_Reduce_local", MPI_Reduce_local(lg, lh, 2, MPI_LOGICAL, MPI_MAX), MPI_ERR_OP);
	CHECK(tb[0] == 1 && tb[1] == 1 && lh[0] == 1, "refused logical reductions wrote: %d %d %d", tb[0], tb[1], lh[0]);
	_Bool tr[2] = {1, 1};
	fails("MPI_Allreduce", MPI_Allreduce(ta, tr, 2, MPI_C_BOOL, MPI_SUM, MPI_COMM_SELF), MPI_ERR_OP);
	CHECK(MPI_Allreduce(ta, tr, 2, MPI_C_BOOL, MPI_LAND, MPI_COMM_SELF) == MPI_SUCCESS && tr[0] == 1 && tr[1] == 0,
	      "MPI_LAND on MPI_C_BOOL over MPI_COMM_SELF: %d %d", tr[0], tr[1]);
	CHECK(MPI_Reduce_local(ta, tb, 2, MPI_C_BOOL, MPI_LXOR) == MPI_SUCCESS && tb[0] == 0 && tb[1] == 1,
	      "MPI_LXOR on MPI_C_BOOL: %d %d", tb[0], tb[1]);
	fails("MPI_Reduce_local", MPI_Reduce_local(ia, ib, -1, MPI_INT, MPI_SUM), MPI_ERR_COUNT);
	fails("MPI_Reduce_local_c", MPI_Reduce_local_c(ia, ib, -1, MPI_INT, MPI_SUM), MPI_ERR_COUNT);
	fails("MPI_Reduce_local", MPI_Reduce_local(ia, ib, 2, MPI_DATATYPE_NULL, MPI_SUM), MPI_ERR_TYPE);
	fails("MPI_Reduce_local", MPI_Reduce_local(ia, ib, 1, uncommitted, MPI_SUM), MPI_ERR_TYPE);
	fails("MPI_Reduce_local", MPI_Reduce_local(sin, sio, 1, s_type, MPI_SUM), MPI_ERR_TYPE);
	fails("MPI_Reduce_local", MPI_Reduce_local(lin, lio, 1, ldv, MPI_SUM), MPI_ERR_TYPE);
	fails("MPI_Reduce_local", MPI_Reduce_local(ia, ib, 2, zero_ext, MPI_SUM), MPI_ERR_TYPE);
	fails("MPI_Reduce_local", MPI_Reduce_local(ia, ia, 2, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
	fails("MPI_Reduce_local", MPI_Reduce_local(MPI_IN_PLACE, ia, 2, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
	fails("MPI_Reduce_local", MPI_Reduce_local(ia, MPI_IN_PLACE, 2, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
	CHECK(ia[0] == 1 && ia[1] == 2 && ib[0] == 3 && ib[1] == 4 && de[0] == 3, "refused calls wrote: %d %d %d %d %g", ia[0], ia[1], ib[0], ib[1],
	      de[0]);
	/* the class MPI_Reduce gives the same mismatch */
	int err = MPI_Reduce(dd, de, 2, MPI_DOUBLE, MPI_BAND, 0, MPI_COMM_SELF), class = -1;
	MPI_Error_class(err, &class);
	CHECK(class == MPI_ERR_OP, "MPI_Reduce with MPI_BAND on MPI_DOUBLE: class %d, want MPI_ERR_OP", class);
	MPI_Type_free(&uncommitted);
	MPI_Type_free(&ldv);
	MPI_Type_free(&zero_ext);
#endif
	report("errors: ops that do not apply, invalid counts, types and buffers");

	MPI_Type_free(&s_type);
	MPI_Finalize();
	return 0;
}
