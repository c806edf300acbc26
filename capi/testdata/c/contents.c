/* ranks: 1
 * Decoding datatypes (MPI 4.1 §5.1.13): every constructor's type printed
 * back from MPI_Type_get_envelope and MPI_Type_get_contents, recursively
 * (derived old types come back as new handles, freed here; predefined
 * ones as themselves), the inner type's own handle freed before the
 * outer type is decoded. The same output under Open MPI
 * (TestCProgramsOpenMPI). Then the errors, and the large-count forms. */
#include <stdio.h>
#include <string.h>
#include "check.h"

static const char *combiner_name(int c)
{
	switch (c) {
	case MPI_COMBINER_NAMED: return "NAMED";
	case MPI_COMBINER_DUP: return "DUP";
	case MPI_COMBINER_CONTIGUOUS: return "CONTIGUOUS";
	case MPI_COMBINER_VECTOR: return "VECTOR";
	case MPI_COMBINER_HVECTOR: return "HVECTOR";
	case MPI_COMBINER_INDEXED: return "INDEXED";
	case MPI_COMBINER_HINDEXED: return "HINDEXED";
	case MPI_COMBINER_INDEXED_BLOCK: return "INDEXED_BLOCK";
	case MPI_COMBINER_HINDEXED_BLOCK: return "HINDEXED_BLOCK";
	case MPI_COMBINER_STRUCT: return "STRUCT";
	case MPI_COMBINER_SUBARRAY: return "SUBARRAY";
	case MPI_COMBINER_RESIZED: return "RESIZED";
	}
	return "?";
}

/* decode prints t's constructor call, and its old types' indented. */
static void decode(MPI_Datatype t, int depth)
{
	int ni, na, nd, comb;
	MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
	printf("%*s%s", 2 * depth, "", combiner_name(comb));
	if (comb == MPI_COMBINER_NAMED) {
		char name[MPI_MAX_OBJECT_NAME];
		int len;
		MPI_Type_get_name(t, name, &len);
		printf(" %s\n", name);
		return;
	}
	int ints[64];
	MPI_Aint addrs[64];
	MPI_Datatype olds[16];
	CHECK(ni <= 64 && na <= 64 && nd <= 16, "envelope %d %d %d", ni, na, nd);
	MPI_Type_get_contents(t, ni, na, nd, ints, addrs, olds);
	printf(" ints");
	for (int i = 0; i < ni; i++) {
		if (comb == MPI_COMBINER_SUBARRAY && i == ni - 1) /* the order: its value is the ABI's */
			printf(" %s", ints[i] == MPI_ORDER_C ? "C" : ints[i] == MPI_ORDER_FORTRAN ? "F" : "?");
		else
			printf(" %d", ints[i]);
	}
	printf(" addrs");
	for (int i = 0; i < na; i++)
		printf(" %ld", (long)addrs[i]);
	printf(" types %d\n", nd);
	for (int i = 0; i < nd; i++) {
		int oi, oa, od, oc;
		decode(olds[i], depth + 1);
		MPI_Type_get_envelope(olds[i], &oi, &oa, &od, &oc);
		if (oc != MPI_COMBINER_NAMED)
			MPI_Type_free(&olds[i]);
	}
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Datatype t[12], inner;
	int n = 0;
	MPI_Type_contiguous(3, MPI_INT, &t[n++]);
	MPI_Type_vector(2, 3, 5, MPI_DOUBLE, &t[n++]);
	MPI_Type_create_hvector(4, 1, 24, MPI_FLOAT, &t[n++]);
	int bl[3] = {1, 2, 3}, dl[3] = {0, 4, 9};
	MPI_Aint ad[3] = {0, 16, 40};
	MPI_Type_indexed(3, bl, dl, MPI_SHORT, &t[n++]);
	MPI_Type_create_hindexed(3, bl, ad, MPI_LONG, &t[n++]);
	MPI_Type_create_indexed_block(3, 2, dl, MPI_CHAR, &t[n++]);
	MPI_Type_create_hindexed_block(2, 4, ad, MPI_INT, &t[n++]);
	int sizes[2] = {6, 8}, subs[2] = {2, 3}, starts[2] = {1, 4};
	MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_DOUBLE, &t[n++]);
	MPI_Type_create_resized(MPI_INT, 4, 16, &t[n++]);
	MPI_Type_dup(MPI_UNSIGNED, &t[n++]);
	/* A struct of a derived type whose handle is freed before decoding. */
	MPI_Type_vector(2, 1, 3, MPI_INT, &inner);
	MPI_Datatype ts[2] = {MPI_CHAR, inner};
	int sbl[2] = {2, 1};
	MPI_Aint sd[2] = {0, 8};
	MPI_Type_create_struct(2, sbl, sd, ts, &t[n++]);
	MPI_Type_free(&inner);
	for (int i = 0; i < n; i++) {
		decode(t[i], 0);
		MPI_Type_free(&t[i]);
	}
	report("every constructor decoded");

	/* Errors: contents of a predefined type; arrays too short. (Open MPI
	 * 4.1 raises them on MPI_COMM_WORLD, the first as MPI_ERR_INTERN.) */
#ifdef MPI_ABI_VERSION
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	int ints[4], ni, na, nd, comb, class = 0, err;
	MPI_Aint addrs[4];
	MPI_Datatype olds[4], v;
	(void)ints, (void)ni, (void)na, (void)nd, (void)comb, (void)class, (void)err, (void)addrs, (void)olds, (void)v;
	err = MPI_Type_get_contents(MPI_INT, 4, 4, 4, ints, addrs, olds);
	if (err != MPI_SUCCESS)
		MPI_Error_class(err, &class);
	CHECK(class == MPI_ERR_TYPE, "MPI_Type_get_contents(MPI_INT): class %d, want MPI_ERR_TYPE", class);
	MPI_Type_vector(2, 3, 5, MPI_DOUBLE, &v);
	class = 0;
	err = MPI_Type_get_contents(v, 2, 0, 1, ints, addrs, olds);
	if (err != MPI_SUCCESS)
		MPI_Error_class(err, &class);
	CHECK(class == MPI_ERR_ARG, "max_integers 2 for a vector: class %d, want MPI_ERR_ARG", class);
	err = MPI_Type_get_envelope(MPI_DATATYPE_NULL, &ni, &na, &nd, &comb);
	CHECK(err != MPI_SUCCESS, "MPI_Type_get_envelope(MPI_DATATYPE_NULL) succeeded");
	MPI_Type_free(&v);
#endif
	report("errors");

#ifdef MPI_ABI_VERSION
	/* A _c constructor's arguments are MPI_Count: the int envelope
	 * cannot say so. */
	MPI_Count ci, ca, cc, cd, counts[4];
	MPI_Type_vector_c(7, 2, 9, MPI_INT, &v);
	MPI_Type_get_envelope_c(v, &ci, &ca, &cc, &cd, &comb);
	CHECK(comb == MPI_COMBINER_VECTOR && ci == 0 && ca == 0 && cc == 3 && cd == 1, "envelope_c of vector_c: %d %lld %lld %lld %lld",
	      comb, (long long)ci, (long long)ca, (long long)cc, (long long)cd);
	MPI_Type_get_contents_c(v, 0, 0, 3, 1, ints, addrs, counts, olds);
	CHECK(counts[0] == 7 && counts[1] == 2 && counts[2] == 9 && olds[0] == MPI_INT, "contents_c of vector_c: %lld %lld %lld",
	      (long long)counts[0], (long long)counts[1], (long long)counts[2]);
	class = 0;
	err = MPI_Type_get_envelope(v, &ni, &na, &nd, &comb);
	if (err != MPI_SUCCESS)
		MPI_Error_class(err, &class);
	CHECK(class == MPI_ERR_TYPE, "the int envelope of a vector_c: class %d, want MPI_ERR_TYPE", class);
	MPI_Type_free(&v);
	MPI_Type_create_hvector(2, 1, 40, MPI_INT, &v);
	MPI_Type_get_envelope_c(v, &ci, &ca, &cc, &cd, &comb);
	CHECK(comb == MPI_COMBINER_HVECTOR && ci == 2 && ca == 1 && cc == 0 && cd == 1, "envelope_c of an hvector: %lld %lld %lld %lld",
	      (long long)ci, (long long)ca, (long long)cc, (long long)cd);
	MPI_Type_free(&v);
#endif
	report("large-count forms");
	MPI_Finalize();
	return 0;
}
