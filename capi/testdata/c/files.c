/* ranks: 1
 * MPI I/O is outside shmrun's subset, and a program that tries it must be
 * able to fall back: MPI_File_open and MPI_File_delete raise their errors
 * on MPI_FILE_NULL's handler, MPI_ERRORS_RETURN by default (MPI 4.1
 * §14.7), so they return an error and the program goes on (shmrun's is
 * MPI_ERR_UNSUPPORTED_OPERATION). MPI_File_get_errhandler and
 * MPI_File_set_errhandler work on MPI_FILE_NULL. With shmrun (the
 * standard ABI's header): MPI_Session_init, not implemented, returns its
 * error through the handler it is given (§11.3.1), here MPI_ERRORS_RETURN. */
#include "check.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
	int err = MPI_File_get_errhandler(MPI_FILE_NULL, &eh);
	CHECK(err == MPI_SUCCESS && eh == MPI_ERRORS_RETURN, "MPI_File_get_errhandler(MPI_FILE_NULL): %d, default handler is not MPI_ERRORS_RETURN", err);
	MPI_File fh;
	err = MPI_File_open(MPI_COMM_WORLD, "/nonexistent/shmrun-test", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
	CHECK(err != MPI_SUCCESS, "MPI_File_open of a file that cannot exist succeeded");
#ifdef MPI_ABI_VERSION
	CHECK(class_of(err) == MPI_ERR_UNSUPPORTED_OPERATION, "MPI_File_open: class %d", class_of(err));
#endif
	err = MPI_File_delete("/nonexistent/shmrun-test", MPI_INFO_NULL);
	CHECK(err != MPI_SUCCESS, "MPI_File_delete of a file that cannot exist succeeded");
	err = MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_ARE_FATAL);
	MPI_File_get_errhandler(MPI_FILE_NULL, &eh);
	CHECK(err == MPI_SUCCESS && eh == MPI_ERRORS_ARE_FATAL, "MPI_File_set_errhandler(MPI_FILE_NULL, fatal): %d", err);
	MPI_Errhandler_free(&eh);
	MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
	report("MPI I/O errors go to MPI_FILE_NULL's handler");

#ifdef MPI_ABI_VERSION
	MPI_Session s;
	err = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
	CHECK(class_of(err) == MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Session_init: class %d", class_of(err));
#endif
	report("MPI_Session_init's error through the handler it is given");
	MPI_Finalize();
	return 0;
}
