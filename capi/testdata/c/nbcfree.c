/* ranks: 3
 * A datatype or op freed while a nonblocking or persistent collective
 * that uses it is pending: the collective completes normally (MPI 4.1
 * §5.1.10: "Any communication that is currently using this datatype will
 * complete normally"; MPI_Op_free likewise only marks the op), and its
 * later starts still use them; the freed handles are gone for the
 * program (a second free is an error). */
#include "check.h"

static void addpairs(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	int *a = in, *b = inout;
	for (int i = 0; i < 2 * *len; i++)
		b[i] += a[i];
}

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Datatype pair, kept;
	MPI_Op op;
	MPI_Request q;
	int in[4] = {rank, 1, rank * 2, 2}, out[4] = {-1, -1, -1, -1};

	/* Iallreduce of a derived type under a program's op, both freed at
	 * once. */
	MPI_Type_contiguous(2, MPI_INT, &pair);
	MPI_Type_commit(&pair);
	MPI_Op_create(addpairs, 1, &op);
	kept = pair;
	(void)kept;
	MPI_Iallreduce(in, out, 2, pair, op, MPI_COMM_WORLD, &q);
	MPI_Type_free(&pair);
	MPI_Op_free(&op);
	CHECK(pair == MPI_DATATYPE_NULL && op == MPI_OP_NULL, "the freed handles were not reset");
	MPI_Wait(&q, MPI_STATUS_IGNORE);
	int s = size * (size - 1) / 2;
	CHECK(out[0] == s && out[1] == size && out[2] == 2 * s && out[3] == 2 * size, "Iallreduce after the frees: %d %d %d %d", out[0],
	      out[1], out[2], out[3]);
	report("MPI_Type_free and MPI_Op_free while an MPI_Iallreduce uses them");

	/* Ibcast and Ialltoall of a vector type freed before the wait. */
	MPI_Datatype every2;
	MPI_Type_vector(2, 1, 2, MPI_INT, &every2);
	MPI_Type_commit(&every2);
	int b[4] = {-1, -1, -1, -1};
	if (rank == 0)
		b[0] = 10, b[2] = 12;
	MPI_Ibcast(b, 1, every2, 0, MPI_COMM_WORLD, &q);
	MPI_Type_free(&every2);
	MPI_Wait(&q, MPI_STATUS_IGNORE);
	CHECK(b[0] == 10 && b[1] == -1 && b[2] == 12 && b[3] == -1, "Ibcast after the free: %d %d %d %d", b[0], b[1], b[2], b[3]);
	report("MPI_Type_free while an MPI_Ibcast uses the type");

#ifdef MPI_ABI_VERSION /* persistent collectives are MPI 4.0: Open MPI 4.1 has none */
	/* Bcast_init, then the type freed: every start uses it. */
	MPI_Datatype two;
	MPI_Type_contiguous(2, MPI_INT, &two);
	MPI_Type_commit(&two);
	int c[2];
	MPI_Bcast_init(c, 1, two, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &q);
	MPI_Datatype freed = two;
	MPI_Type_free(&two);
	for (int i = 0; i < 3; i++) {
		c[0] = c[1] = -1;
		if (rank == 1)
			c[0] = 100 + i, c[1] = 200 + i;
		MPI_Start(&q);
		MPI_Wait(&q, MPI_STATUS_IGNORE);
		CHECK(c[0] == 100 + i && c[1] == 200 + i, "start %d of a Bcast_init whose type was freed: %d %d", i, c[0], c[1]);
	}
	/* The freed handle is gone for the program, the request still
	 * pending a free. */
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	CHECK(MPI_Type_free(&freed) != MPI_SUCCESS, "a second MPI_Type_free of a pinned type succeeded");
	int sz = -1;
	CHECK(MPI_Type_size(kept, &sz) != MPI_SUCCESS, "MPI_Type_size of a freed type succeeded: %d", sz);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
	MPI_Request_free(&q);
#endif
	report("MPI_Type_free after MPI_Bcast_init: every start uses the type");
	MPI_Finalize();
	return 0;
}
