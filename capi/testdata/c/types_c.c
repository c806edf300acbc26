/* ranks: 1
 * The large-count datatype constructors (MPI 4.1 §5.1): each _c form
 * makes the type its int twin makes (size, extent, true extent, and the
 * bytes MPI_Pack takes from one buffer), and MPI_Type_get_contents_c
 * gives its arguments back as the standard lays them out: every count,
 * blocklength and displacement among the large counts, subarray's ndims
 * and order among the integers. Open MPI 4.1 (MPI 3.1) has no _c forms:
 * built against it, the program only checks that it runs. */
#include <string.h>
#include "check.h"

#ifdef MPI_ABI_VERSION
static char src[4096];

/* same_type checks that a and b describe the same data, by their sizes,
 * extents and packed bytes. */
static void same_type(const char *what, MPI_Datatype a, MPI_Datatype b)
{
	MPI_Type_commit(&a);
	MPI_Type_commit(&b);
	MPI_Count sa, sb, lba, lbb, ea, eb, tla, tlb, tea, teb;
	MPI_Type_size_c(a, &sa);
	MPI_Type_size_c(b, &sb);
	MPI_Type_get_extent_c(a, &lba, &ea);
	MPI_Type_get_extent_c(b, &lbb, &eb);
	MPI_Type_get_true_extent_c(a, &tla, &tea);
	MPI_Type_get_true_extent_c(b, &tlb, &teb);
	CHECK(sa == sb && lba == lbb && ea == eb && tla == tlb && tea == teb,
	      "%s: size %lld/%lld lb %lld/%lld extent %lld/%lld true %lld+%lld/%lld+%lld", what, (long long)sa,
	      (long long)sb, (long long)lba, (long long)lbb, (long long)ea, (long long)eb, (long long)tla,
	      (long long)tea, (long long)tlb, (long long)teb);
	static char pa[4096], pb[4096];
	int na = 0, nb = 0;
	memset(pa, 0, sizeof pa);
	memset(pb, 0, sizeof pb);
	MPI_Pack(src + 512, 2, a, pa, sizeof pa, &na, MPI_COMM_WORLD);
	MPI_Pack(src + 512, 2, b, pb, sizeof pb, &nb, MPI_COMM_WORLD);
	CHECK(na == nb && na > 0 && memcmp(pa, pb, (size_t)na) == 0, "%s: packed %d and %d bytes, or other bytes", what, na, nb);
}

/* counts_are checks t's envelope_c (ni integers, nc large counts) and
 * that its large counts are want. */
static void counts_are(const char *what, MPI_Datatype t, int comb, MPI_Count ni, const int *wi, MPI_Count nc,
		       const MPI_Count *want, MPI_Count nd)
{
	MPI_Count ci, ca, cc, cd;
	int c;
	MPI_Type_get_envelope_c(t, &ci, &ca, &cc, &cd, &c);
	CHECK(c == comb && ci == ni && ca == 0 && cc == nc && cd == nd, "%s: envelope_c %d %lld %lld %lld %lld", what, c,
	      (long long)ci, (long long)ca, (long long)cc, (long long)cd);
	if (c != comb || ci != ni || cc != nc || cd != nd)
		return;
	int ints[16];
	MPI_Aint addrs[1];
	MPI_Count counts[16];
	MPI_Datatype olds[4];
	MPI_Type_get_contents_c(t, ni, 0, nc, nd, ints, addrs, counts, olds);
	for (MPI_Count i = 0; i < ni; i++)
		CHECK(ints[i] == wi[i], "%s: integer %lld is %d, want %d", what, (long long)i, ints[i], wi[i]);
	for (MPI_Count i = 0; i < nc; i++)
		CHECK(counts[i] == want[i], "%s: count %lld is %lld, want %lld", what, (long long)i, (long long)counts[i],
		      (long long)want[i]);
	for (MPI_Count i = 0; i < nd; i++)
		if (olds[i] != MPI_INT && olds[i] != MPI_DOUBLE && olds[i] != MPI_CHAR)
			MPI_Type_free(&olds[i]);
	int ni32, na32, nd32;
	int err = MPI_Type_get_envelope(t, &ni32, &na32, &nd32, &c);
	CHECK(class_of(err) == MPI_ERR_TYPE, "%s: the int envelope: class %d, want MPI_ERR_TYPE", what, class_of(err));
}
#endif

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
#ifdef MPI_ABI_VERSION
	for (int i = 0; i < (int)sizeof src; i++)
		src[i] = (char)(i * 7 + 1);
	MPI_Datatype a, b;

	int bl[3] = {1, 2, 3}, d[3] = {0, 4, 9};
	MPI_Count cbl[3] = {1, 2, 3}, cd[3] = {0, 4, 9};
	MPI_Type_indexed(3, bl, d, MPI_INT, &a);
	MPI_Type_indexed_c(3, cbl, cd, MPI_INT, &b);
	same_type("indexed_c", a, b);
	counts_are("indexed_c", b, MPI_COMBINER_INDEXED, 0, NULL, 7, (MPI_Count[]){3, 1, 2, 3, 0, 4, 9}, 1);
	MPI_Type_free(&a);
	MPI_Type_free(&b);

	MPI_Aint ad[3] = {0, 16, 40};
	MPI_Count cad[3] = {0, 16, 40};
	MPI_Type_create_hindexed(3, bl, ad, MPI_DOUBLE, &a);
	MPI_Type_create_hindexed_c(3, cbl, cad, MPI_DOUBLE, &b);
	same_type("hindexed_c", a, b);
	counts_are("hindexed_c", b, MPI_COMBINER_HINDEXED, 0, NULL, 7, (MPI_Count[]){3, 1, 2, 3, 0, 16, 40}, 1);
	MPI_Type_free(&a);
	MPI_Type_free(&b);

	MPI_Type_create_indexed_block(3, 2, d, MPI_INT, &a);
	MPI_Type_create_indexed_block_c(3, 2, cd, MPI_INT, &b);
	same_type("indexed_block_c", a, b);
	counts_are("indexed_block_c", b, MPI_COMBINER_INDEXED_BLOCK, 0, NULL, 5, (MPI_Count[]){3, 2, 0, 4, 9}, 1);
	MPI_Type_free(&a);
	MPI_Type_free(&b);

	MPI_Type_create_hindexed_block(3, 2, ad, MPI_INT, &a);
	MPI_Type_create_hindexed_block_c(3, 2, cad, MPI_INT, &b);
	same_type("hindexed_block_c", a, b);
	counts_are("hindexed_block_c", b, MPI_COMBINER_HINDEXED_BLOCK, 0, NULL, 5, (MPI_Count[]){3, 2, 0, 16, 40}, 1);
	MPI_Type_free(&a);
	MPI_Type_free(&b);

	int sbl[2] = {3, 1};
	MPI_Aint sd[2] = {0, 16};
	MPI_Count csbl[2] = {3, 1}, csd[2] = {0, 16};
	MPI_Datatype sty[2] = {MPI_CHAR, MPI_DOUBLE};
	MPI_Type_create_struct(2, sbl, sd, sty, &a);
	MPI_Type_create_struct_c(2, csbl, csd, sty, &b);
	same_type("struct_c", a, b);
	counts_are("struct_c", b, MPI_COMBINER_STRUCT, 0, NULL, 5, (MPI_Count[]){2, 3, 1, 0, 16}, 2);
	MPI_Type_free(&a);
	MPI_Type_free(&b);

	int sz[2] = {6, 8}, sub[2] = {2, 3}, st[2] = {1, 4};
	MPI_Count csz[2] = {6, 8}, csub[2] = {2, 3}, cst[2] = {1, 4};
	MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_FORTRAN, MPI_INT, &a);
	MPI_Type_create_subarray_c(2, csz, csub, cst, MPI_ORDER_FORTRAN, MPI_INT, &b);
	same_type("subarray_c", a, b);
	counts_are("subarray_c", b, MPI_COMBINER_SUBARRAY, 2, (int[]){2, MPI_ORDER_FORTRAN}, 6,
		   (MPI_Count[]){6, 8, 2, 3, 1, 4}, 1);
	MPI_Type_free(&a);
	MPI_Type_free(&b);

	int gs[2] = {7, 5}, ds[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK}, dg[2] = {2, MPI_DISTRIBUTE_DFLT_DARG},
	    ps[2] = {2, 3};
	MPI_Count cgs[2] = {7, 5};
	MPI_Type_create_darray(6, 4, 2, gs, ds, dg, ps, MPI_ORDER_C, MPI_INT, &a);
	MPI_Type_create_darray_c(6, 4, 2, cgs, ds, dg, ps, MPI_ORDER_C, MPI_INT, &b);
	same_type("darray_c", a, b);
	counts_are("darray_c", b, MPI_COMBINER_DARRAY, 10,
		   (int[]){6, 4, 2, MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK, 2, MPI_DISTRIBUTE_DFLT_DARG, 2, 3, MPI_ORDER_C}, 2,
		   (MPI_Count[]){7, 5}, 1);
	MPI_Type_free(&a);
	MPI_Type_free(&b);

	MPI_Type_create_resized(MPI_INT, -4, 16, &a);
	MPI_Type_create_resized_c(MPI_INT, -4, 16, &b);
	same_type("resized_c", a, b);
	counts_are("resized_c", b, MPI_COMBINER_RESIZED, 0, NULL, 2, (MPI_Count[]){-4, 16}, 1);
	MPI_Type_free(&a);
	MPI_Type_free(&b);
#endif
	report("each _c constructor makes its int twin's type");

#ifdef MPI_ABI_VERSION
	/* Their errors: a negative count, a NULL array, a bad old type. */
	MPI_Datatype t;
	MPI_Count one[1] = {1};
	CHECK(class_of(MPI_Type_indexed_c(-1, one, one, MPI_INT, &t)) == MPI_ERR_COUNT, "indexed_c count -1");
	CHECK(class_of(MPI_Type_create_struct_c(1, one, NULL, (MPI_Datatype[]){MPI_INT}, &t)) == MPI_ERR_ARG,
	      "struct_c NULL displacements");
	CHECK(class_of(MPI_Type_create_hindexed_block_c(1, 1, one, MPI_DATATYPE_NULL, &t)) == MPI_ERR_TYPE,
	      "hindexed_block_c of MPI_DATATYPE_NULL");
	CHECK(class_of(MPI_Type_create_subarray_c(1, one, (MPI_Count[]){2}, (MPI_Count[]){0}, MPI_ORDER_C, MPI_INT, &t)) != -1,
	      "subarray_c subsize past size: accepted");
#endif
	report("errors");
	MPI_Finalize();
	return 0;
}
