/* ranks: 1
 * MPI_Status_set_elements (and its _c and _x forms) sets a status so that
 * MPI_Get_elements with the same datatype gives the count set, and
 * MPI_Get_count the whole instances those elements make (MPI_UNDEFINED
 * when they end inside one: MPI 4.1 §12.3), for predefined types, pair
 * types, structs that mix basic types, vectors of them and types of
 * pairs; the status's source, tag and error stay. MPI_Status_set_cancelled
 * sets what MPI_Test_cancelled reads. The MPI_Count (_x) forms of
 * MPI_Get_elements, MPI_Type_size, MPI_Type_get_extent and
 * MPI_Type_get_true_extent answer as the others do. shmrun's errors (with
 * the standard ABI's header): a negative count, an invalid or uncommitted
 * datatype, a count no status can hold. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "check.h"

struct s {
	int a;
	double b;
};

static MPI_Datatype s_type, vec_type, di2_type;

static void make_types(void)
{
	int bl[2] = {1, 1};
	MPI_Aint d[2] = {offsetof(struct s, a), offsetof(struct s, b)};
	MPI_Datatype t[2] = {MPI_INT, MPI_DOUBLE};
	MPI_Type_create_struct(2, bl, d, t, &s_type);
	MPI_Type_commit(&s_type);
	MPI_Type_vector(2, 1, 2, s_type, &vec_type); /* 2 × s, with holes: 4 elements */
	MPI_Type_commit(&vec_type);
	MPI_Type_contiguous(2, MPI_DOUBLE_INT, &di2_type); /* 4 elements: double, int, double, int */
	MPI_Type_commit(&di2_type);
}

/* set sets count elements of type in a status and checks what the count
 * calls give for it. */
static void set(MPI_Datatype type, const char *tname, int count, int want_count)
{
	MPI_Status st;
	memset(&st, 0, sizeof st);
	int c = -2, e = -2;
	int err = MPI_Status_set_elements(&st, type, count);
	MPI_Get_count(&st, type, &c);
	MPI_Get_elements(&st, type, &e);
	CHECK(err == MPI_SUCCESS && c == want_count && e == count, "MPI_Status_set_elements(%s, %d): %d, count %d (want %d), elements %d", tname,
	      count, err, c, want_count, e);
	MPI_Count cx = -2;
	memset(&st, 0, sizeof st);
	err = MPI_Status_set_elements_x(&st, type, count);
	MPI_Get_elements_x(&st, type, &cx);
	MPI_Get_count(&st, type, &c);
	CHECK(err == MPI_SUCCESS && cx == count && c == want_count, "MPI_Status_set_elements_x(%s, %d): %d, elements %lld, count %d", tname,
	      count, err, (long long)cx, c);
#ifdef MPI_ABI_VERSION
	MPI_Count cc = -2, ce = -2;
	memset(&st, 0, sizeof st);
	err = MPI_Status_set_elements_c(&st, type, count);
	MPI_Get_count_c(&st, type, &cc);
	MPI_Get_elements_c(&st, type, &ce);
	CHECK(err == MPI_SUCCESS && cc == want_count && ce == count, "MPI_Status_set_elements_c(%s, %d): %d, count %lld, elements %lld", tname,
	      count, err, (long long)cc, (long long)ce);
#endif
}

#ifdef MPI_ABI_VERSION
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
	MPI_Init(&argc, &argv);
	make_types();
	enum { U = MPI_UNDEFINED };

	set(MPI_INT, "MPI_INT", 5, 5);
	set(MPI_INT, "MPI_INT", 0, 0);
	set(MPI_BYTE, "MPI_BYTE", 9, 9);
	set(MPI_DOUBLE_INT, "MPI_DOUBLE_INT", 3, 3);
	set(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", 2, 2);
	report("predefined types: count elements are count instances");

	static const int s_counts[] = {0, U, 1, U, 2, U, 3};
	for (int k = 0; k <= 6; k++)
		set(s_type, "struct{int, double}", k, s_counts[k]);
	static const int vec_counts[] = {0, U, U, U, 1, U, U, U, 2, U};
	for (int k = 0; k <= 9; k++)
		set(vec_type, "vector(2, 1, 2, s)", k, vec_counts[k]);
	for (int k = 0; k <= 9; k++)
		set(di2_type, "contiguous(2, MPI_DOUBLE_INT)", k, k % 4 == 0 ? k / 4 : U);
	report("derived types: whole instances or MPI_UNDEFINED");

	MPI_Status st;
	int flag = -1, v = 0;
	st.MPI_SOURCE = 3;
	st.MPI_TAG = 44;
	st.MPI_ERROR = MPI_ERR_TAG;
	MPI_Status_set_cancelled(&st, 0);
	MPI_Status_set_elements(&st, s_type, 3);
	CHECK(st.MPI_SOURCE == 3 && st.MPI_TAG == 44 && st.MPI_ERROR == MPI_ERR_TAG, "source %d, tag %d, error %d after set_elements", st.MPI_SOURCE,
	      st.MPI_TAG, st.MPI_ERROR);
	MPI_Test_cancelled(&st, &flag);
	CHECK(flag == 0, "MPI_Test_cancelled after MPI_Status_set_cancelled(0): %d", flag);
	MPI_Status_set_cancelled(&st, 1);
	MPI_Test_cancelled(&st, &flag);
	CHECK(flag == 1, "MPI_Test_cancelled after MPI_Status_set_cancelled(1): %d", flag);
	MPI_Get_elements(&st, s_type, &v);
	CHECK(v == 3, "MPI_Get_elements after MPI_Status_set_cancelled: %d, want 3", v);
	MPI_Status_set_cancelled(&st, 0);
	MPI_Test_cancelled(&st, &flag);
	CHECK(flag == 0, "MPI_Test_cancelled after MPI_Status_set_cancelled(0): %d", flag);
	report("source, tag and error stay; MPI_Status_set_cancelled");

	MPI_Count big = 3000000000LL, cx = -2;
	int c = -2, e = -2;
	MPI_Status_set_elements_x(&st, MPI_INT, big);
	MPI_Get_elements_x(&st, MPI_INT, &cx);
	MPI_Get_count(&st, MPI_INT, &c);
	MPI_Get_elements(&st, MPI_INT, &e);
	CHECK(cx == big && c == U && e == U, "3e9 MPI_INTs set: elements_x %lld, count %d, elements %d", (long long)cx, c, e);
	MPI_Status_set_elements_x(&st, s_type, big + 1);
	MPI_Get_elements_x(&st, s_type, &cx);
	MPI_Get_count(&st, s_type, &c);
	CHECK(cx == big + 1 && c == U, "3e9 + 1 elements of s set: elements_x %lld, count %d", (long long)cx, c);
	report("counts past INT_MAX");

	MPI_Count sx = -2, lbx = -2, extx = -2, tlbx = -2, textx = -2;
	MPI_Aint lb, ext, tlb, text;
	int size;
	MPI_Datatype r;
	MPI_Type_create_resized(s_type, -8, 32, &r);
	MPI_Type_commit(&r);
	MPI_Type_size(r, &size);
	MPI_Type_size_x(r, &sx);
	MPI_Type_get_extent(r, &lb, &ext);
	MPI_Type_get_extent_x(r, &lbx, &extx);
	MPI_Type_get_true_extent(r, &tlb, &text);
	MPI_Type_get_true_extent_x(r, &tlbx, &textx);
	CHECK(sx == 12 && size == 12, "MPI_Type_size_x %lld, MPI_Type_size %d, want 12", (long long)sx, size);
	CHECK(lbx == -8 && extx == 32 && lb == -8 && ext == 32, "extent_x %lld %lld, extent %ld %ld, want -8 32", (long long)lbx, (long long)extx,
	      (long)lb, (long)ext);
	CHECK(tlbx == 0 && textx == 16 && tlb == 0 && text == 16, "true extent_x %lld %lld, true extent %ld %ld, want 0 16", (long long)tlbx,
	      (long long)textx, (long)tlb, (long)text);
	MPI_Type_size_x(MPI_DOUBLE_INT, &sx);
	MPI_Type_get_extent_x(MPI_DOUBLE_INT, &lbx, &extx);
	CHECK(sx == 12 && lbx == 0 && extx == 16, "MPI_DOUBLE_INT: size_x %lld, extent_x %lld %lld, want 12, 0 16", (long long)sx, (long long)lbx,
	      (long long)extx);
	MPI_Type_free(&r);
	report("the MPI_Count (_x) forms");

#ifdef MPI_ABI_VERSION
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	MPI_Datatype uncommitted, empty;
	MPI_Type_contiguous(2, MPI_INT, &uncommitted);
	MPI_Type_contiguous(0, MPI_INT, &empty);
	MPI_Type_commit(&empty);
	memset(&st, 0, sizeof st);
	MPI_Status_set_elements(&st, MPI_INT, 4);
	fails("MPI_Status_set_elements", MPI_Status_set_elements(&st, MPI_INT, -1), MPI_ERR_COUNT);
	fails("MPI_Status_set_elements_c", MPI_Status_set_elements_c(&st, MPI_INT, -1), MPI_ERR_COUNT);
	fails("MPI_Status_set_elements_x", MPI_Status_set_elements_x(&st, MPI_INT, -5), MPI_ERR_COUNT);
	fails("MPI_Status_set_elements", MPI_Status_set_elements(&st, MPI_DATATYPE_NULL, 1), MPI_ERR_TYPE);
	fails("MPI_Status_set_elements_c", MPI_Status_set_elements_c(&st, (MPI_Datatype)(intptr_t)0x7777777, 1), MPI_ERR_TYPE);
	fails("MPI_Status_set_elements", MPI_Status_set_elements(&st, uncommitted, 1), MPI_ERR_TYPE);
	fails("MPI_Status_set_elements", MPI_Status_set_elements(&st, empty, 1), MPI_ERR_COUNT);
	fails("MPI_Status_set_elements_c", MPI_Status_set_elements_c(&st, MPI_DOUBLE, INT64_MAX / 4), MPI_ERR_COUNT);
	fails("MPI_Status_set_elements_x", MPI_Status_set_elements_x(&st, s_type, INT64_MAX / 2), MPI_ERR_COUNT);
	fails("MPI_Status_set_elements", MPI_Status_set_elements(NULL, MPI_INT, 1), MPI_ERR_ARG);
	fails("MPI_Status_set_cancelled", MPI_Status_set_cancelled(NULL, 1), MPI_ERR_ARG);
	MPI_Get_elements(&st, MPI_INT, &v);
	CHECK(v == 4, "the status after the refused calls: %d elements, want 4 (unchanged)", v);
	CHECK(MPI_Status_set_elements(&st, empty, 0) == MPI_SUCCESS, "MPI_Status_set_elements of 0 elements of a type of none failed");
	MPI_Get_count(&st, empty, &c);
	MPI_Get_elements(&st, empty, &e);
	CHECK(c == 0 && e == 0, "0 elements of contiguous(0, MPI_INT): count %d, elements %d, want 0 0", c, e);
	/* A type of size 0 counts 0, whatever the message held (MPI 4.1
	 * §3.2.5: "If the size of the datatype is zero, this routine will
	 * return a count of zero"). */
	MPI_Status_set_elements(&st, MPI_INT, 2);
	MPI_Get_count(&st, empty, &c);
	MPI_Get_elements(&st, empty, &e);
	CHECK(c == 0 && e == 0, "8 bytes counted with contiguous(0, MPI_INT): count %d, elements %d, want 0 0", c, e);
	MPI_Type_free(&uncommitted);
	MPI_Type_free(&empty);
#endif
	report("errors: negative counts, invalid and uncommitted types, counts no status holds");

	MPI_Type_free(&s_type);
	MPI_Type_free(&vec_type);
	MPI_Type_free(&di2_type);
	MPI_Finalize();
	return 0;
}
