/* ranks: 2
 * The pair types are structs of a value and an int (MPI 4.1 §6.9.4): their
 * type signature is those two basic types, so a message of them matches a
 * receive of any datatype of the same signature (§3.3.1). Rank 0 sends,
 * rank 1 receives: MPI_FLOAT_INT into a struct of a float and an int and
 * back; 2 MPI_2INT into 4 MPI_INT and 4 MPI_INT into 2 MPI_2INT (the C
 * fast path's sends); MPI_DOUBLE_INT into a struct of a double and an int
 * resized to 16; one double into a receive of MPI_DOUBLE_INT (a prefix
 * of its signature: MPI_Get_count MPI_UNDEFINED, and MPI_Get_elements,
 * which with a predefined datatype answers as MPI_Get_count does, §5.1.11;
 * a struct's elements count the double).
 * With shmrun (the standard ABI's header), a signature that differs is
 * MPI_ERR_TYPE: MPI_FLOAT_INT into 2 MPI_FLOAT, and the traffic after it
 * is unharmed (Open MPI does not check signatures). */
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

static MPI_Datatype struct_of(MPI_Datatype value, MPI_Aint extent)
{
	int bl[2] = {1, 1};
	MPI_Aint d[2] = {0, extent == 8 ? 4 : 8};
	MPI_Datatype t[2] = {value, MPI_INT}, s, r;
	MPI_Type_create_struct(2, bl, d, t, &s);
	MPI_Type_create_resized(s, 0, extent, &r);
	MPI_Type_free(&s);
	MPI_Type_commit(&r);
	return r;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Datatype fi_t = struct_of(MPI_FLOAT, 8), di_t = struct_of(MPI_DOUBLE, 16);
	MPI_Status st;
	int n = -1, e = -1;

	struct fi fs[2] = {{1.5f, 7}, {2.5f, 8}}, fr[2];
	if (rank == 0) {
		CHECK(MPI_Send(fs, 2, MPI_FLOAT_INT, 1, 1, MPI_COMM_WORLD) == MPI_SUCCESS, "send FLOAT_INT");
		CHECK(MPI_Send(fs, 2, fi_t, 1, 2, MPI_COMM_WORLD) == MPI_SUCCESS, "send struct");
	} else {
		memset(fr, 0, sizeof fr);
		int err = MPI_Recv(fr, 2, fi_t, 0, 1, MPI_COMM_WORLD, &st);
		MPI_Get_count(&st, fi_t, &n);
		CHECK(err == MPI_SUCCESS && n == 2 && memcmp(fr, fs, sizeof fs) == 0, "FLOAT_INT into a struct: %d, count %d, {%g %d}",
		      class_of(err), n, fr[1].v, fr[1].i);
		memset(fr, 0, sizeof fr);
		err = MPI_Recv(fr, 2, MPI_FLOAT_INT, 0, 2, MPI_COMM_WORLD, &st);
		MPI_Get_count(&st, MPI_FLOAT_INT, &n);
		CHECK(err == MPI_SUCCESS && n == 2 && memcmp(fr, fs, sizeof fs) == 0, "a struct into FLOAT_INT: %d, count %d", class_of(err), n);
	}
	report("MPI_FLOAT_INT and a struct of a float and an int");

	int is[4] = {1, 2, 3, 4}, ir[4];
	if (rank == 0) {
		CHECK(MPI_Send(is, 2, MPI_2INT, 1, 3, MPI_COMM_WORLD) == MPI_SUCCESS, "send 2INT");
		CHECK(MPI_Send(is, 4, MPI_INT, 1, 4, MPI_COMM_WORLD) == MPI_SUCCESS, "send INT");
		CHECK(MPI_Send(is, 3, MPI_INT, 1, 5, MPI_COMM_WORLD) == MPI_SUCCESS, "send 3 INT");
	} else {
		memset(ir, 0, sizeof ir);
		int err = MPI_Recv(ir, 4, MPI_INT, 0, 3, MPI_COMM_WORLD, &st);
		MPI_Get_count(&st, MPI_INT, &n);
		CHECK(err == MPI_SUCCESS && n == 4 && memcmp(ir, is, sizeof is) == 0, "2 2INT into 4 INT: %d, count %d", class_of(err), n);
		memset(ir, 0, sizeof ir);
		err = MPI_Recv(ir, 2, MPI_2INT, 0, 4, MPI_COMM_WORLD, &st);
		MPI_Get_count(&st, MPI_2INT, &n);
		CHECK(err == MPI_SUCCESS && n == 2 && memcmp(ir, is, sizeof is) == 0, "4 INT into 2 2INT: %d, count %d", class_of(err), n);
		memset(ir, 0, sizeof ir);
		err = MPI_Recv(ir, 2, MPI_2INT, 0, 5, MPI_COMM_WORLD, &st);
		MPI_Get_count(&st, MPI_2INT, &n);
		MPI_Get_elements(&st, MPI_2INT, &e);
		CHECK(err == MPI_SUCCESS && n == MPI_UNDEFINED && e == MPI_UNDEFINED && memcmp(ir, is, 3 * sizeof(int)) == 0,
		      "3 INT into 2 2INT: %d, count %d, elements %d", class_of(err), n, e);
	}
	report("MPI_2INT and MPI_INT");

	struct di ds[3] = {{0.5, 1}, {1.5, 2}, {2.5, 3}}, dr[3];
	double one = 9.5;
	if (rank == 0) {
		CHECK(MPI_Send(ds, 3, MPI_DOUBLE_INT, 1, 6, MPI_COMM_WORLD) == MPI_SUCCESS, "send DOUBLE_INT");
		CHECK(MPI_Send(&one, 1, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD) == MPI_SUCCESS, "send DOUBLE");
	} else {
		memset(dr, 0, sizeof dr);
		int err = MPI_Recv(dr, 3, di_t, 0, 6, MPI_COMM_WORLD, &st);
		MPI_Get_count(&st, di_t, &n);
		int ok = err == MPI_SUCCESS && n == 3;
		for (int i = 0; i < 3; i++)
			ok = ok && dr[i].v == ds[i].v && dr[i].i == ds[i].i;
		CHECK(ok, "DOUBLE_INT into a struct: %d, count %d", class_of(err), n);
		memset(dr, 0, sizeof dr);
		err = MPI_Recv(dr, 1, MPI_DOUBLE_INT, 0, 7, MPI_COMM_WORLD, &st);
		MPI_Get_count(&st, MPI_DOUBLE_INT, &n);
		MPI_Get_elements(&st, MPI_DOUBLE_INT, &e);
		CHECK(err == MPI_SUCCESS && n == MPI_UNDEFINED && e == MPI_UNDEFINED && dr[0].v == 9.5,
		      "a double into DOUBLE_INT: %d, count %d, elements %d", class_of(err), n, e);
		MPI_Get_elements(&st, di_t, &e);
		CHECK(e == 1, "a double into DOUBLE_INT: elements of the struct %d", e);
	}
	report("MPI_DOUBLE_INT, a struct of a double and an int, and a prefix");

#ifdef MPI_ABI_VERSION
	if (rank == 0) {
		CHECK(MPI_Send(fs, 1, MPI_FLOAT_INT, 1, 8, MPI_COMM_WORLD) == MPI_SUCCESS, "send FLOAT_INT");
		CHECK(MPI_Send(is, 2, MPI_2INT, 1, 9, MPI_COMM_WORLD) == MPI_SUCCESS, "send 2INT");
	} else {
		float f[2];
		int err = MPI_Recv(f, 2, MPI_FLOAT, 0, 8, MPI_COMM_WORLD, &st);
		CHECK(class_of(err) == MPI_ERR_TYPE, "FLOAT_INT into 2 FLOAT: %d, want MPI_ERR_TYPE", class_of(err));
		memset(ir, 0, sizeof ir);
		err = MPI_Recv(ir, 4, MPI_INT, 0, 9, MPI_COMM_WORLD, &st);
		CHECK(err == MPI_SUCCESS && memcmp(ir, is, sizeof is) == 0, "the message after: %d", class_of(err));
	}
#endif
	report("a signature that differs: MPI_ERR_TYPE (shmrun's check)");

	MPI_Type_free(&fi_t);
	MPI_Type_free(&di_t);
	MPI_Finalize();
	return 0;
}
