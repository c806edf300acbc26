/* ranks: 1
 * Datatype bounds with markers (MPI 4.1, 5.1.7): the bounds of a resized or
 * subarray type are lb_marker and ub_marker, which carry into the types
 * built from it; a struct's bounds are then the markers' alone, and no
 * alignment padding follows an ub marker. The same numbers under Open MPI
 * (TestCProgramsOpenMPI); MPICH 4.0 pads and takes every entry's bounds. */
#include <stdio.h>
#include <mpi.h>

static void show(const char *name, MPI_Datatype t)
{
	MPI_Aint lb, ext, tlb, text;
	int size;
	MPI_Type_get_extent(t, &lb, &ext);
	MPI_Type_get_true_extent(t, &tlb, &text);
	MPI_Type_size(t, &size);
	printf("%s: size %d lb %ld extent %ld true lb %ld true extent %ld\n", name, size, (long)lb, (long)ext,
	       (long)tlb, (long)text);
}

static MPI_Datatype pair(MPI_Datatype a, MPI_Aint da, MPI_Datatype b, MPI_Aint db)
{
	int bl[2] = {1, 1};
	MPI_Aint d[2] = {da, db};
	MPI_Datatype ts[2] = {a, b}, t;
	MPI_Type_create_struct(2, bl, d, ts, &t);
	return t;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Datatype r6, r9, c2, sa, ts[7];
	MPI_Type_create_resized(MPI_INT, 0, 6, &r6);
	MPI_Type_create_resized(MPI_DOUBLE, 0, 9, &r9);
	MPI_Type_contiguous(2, r6, &c2);
	int sz[1] = {4}, ss[1] = {2}, st[1] = {1};
	MPI_Type_create_subarray(1, sz, ss, st, MPI_ORDER_C, MPI_CHAR, &sa);
	show("{double@0,char@8}", ts[0] = pair(MPI_DOUBLE, 0, MPI_CHAR, 8));
	show("{int@0,char@4}", ts[1] = pair(MPI_INT, 0, MPI_CHAR, 4));
	show("{resized(int,0,6)@0,char@6}", ts[2] = pair(r6, 0, MPI_CHAR, 6));
	show("{char@0,resized(double,0,9)@1}", ts[3] = pair(MPI_CHAR, 0, r9, 1));
	show("{contiguous(2,resized(int,0,6))@0,char@12}", ts[4] = pair(c2, 0, MPI_CHAR, 12));
	show("{subarray(4,2,1,char)@0,double@8}", ts[5] = pair(sa, 0, MPI_DOUBLE, 8));
	MPI_Type_dup(r6, &ts[6]);
	show("dup(resized(int,0,6))", ts[6]);
	for (int i = 0; i < 7; i++)
		MPI_Type_free(&ts[i]);
	MPI_Type_free(&r6);
	MPI_Type_free(&r9);
	MPI_Type_free(&c2);
	MPI_Type_free(&sa);
	MPI_Finalize();
	return 0;
}
