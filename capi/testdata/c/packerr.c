/* ranks: 1
 * MPI_Pack, MPI_Unpack and MPI_Pack_size raise their errors on their
 * communicator's handler (MPI 4.1, 9.3: a call with a communicator
 * argument), and an invalid communicator is MPI_ERR_COMM. */
#include "check.h"

static int calls;
static void count(MPI_Comm *c, int *code, ...)
{
	(void)c;
	(void)code;
	calls++;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm dup;
	MPI_Errhandler eh;
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	MPI_Comm_create_errhandler(count, &eh);
	MPI_Comm_set_errhandler(dup, eh);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	char in[16] = {0}, out[16];
	int pos = 0, size = 0, cls = 0, err;

	err = MPI_Pack(in, 1, MPI_DATATYPE_NULL, out, sizeof out, &pos, dup);
	MPI_Error_class(err, &cls);
	CHECK(cls == MPI_ERR_TYPE && calls == 1, "MPI_Pack of MPI_DATATYPE_NULL: class %d, dup's handler called %d times", cls, calls);
	pos = 0;
	err = MPI_Unpack(in, sizeof in, &pos, out, 1, MPI_DATATYPE_NULL, dup);
	MPI_Error_class(err, &cls);
	CHECK(cls == MPI_ERR_TYPE && calls == 2, "MPI_Unpack of MPI_DATATYPE_NULL: class %d, dup's handler called %d times", cls, calls);
	err = MPI_Pack_size(1, MPI_DATATYPE_NULL, dup, &size);
	MPI_Error_class(err, &cls);
	CHECK(cls == MPI_ERR_TYPE && calls == 3, "MPI_Pack_size of MPI_DATATYPE_NULL: class %d, dup's handler called %d times", cls, calls);
	pos = 0;
	err = MPI_Pack(in, 4, MPI_CHAR, out, sizeof out, &pos, MPI_COMM_NULL);
	MPI_Error_class(err, &cls);
	CHECK(cls == MPI_ERR_COMM, "MPI_Pack on MPI_COMM_NULL: class %d, want MPI_ERR_COMM", cls);
	pos = 0;
	err = MPI_Pack(in, 4, MPI_CHAR, out, sizeof out, &pos, dup);
	CHECK(err == MPI_SUCCESS && pos == 4, "MPI_Pack of 4 chars: %d, position %d", err, pos);
	report("pack errors on the communicator's handler");

	MPI_Comm_free(&dup);
	MPI_Errhandler_free(&eh);
	MPI_Finalize();
	return 0;
}
