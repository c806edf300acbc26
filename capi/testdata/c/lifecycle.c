/* ranks: 2
 * The process's MPI lifecycle and the objects around it: the queries
 * allowed before MPI_Init and after MPI_Finalize, the predefined
 * attributes, invalid attribute keys and error codes (an error, not a
 * made-up answer), a program's error handler that calls MPI itself and
 * outlives its handle, communicator names at MPI_MAX_OBJECT_NAME, and
 * frees of the predefined communicators. */
#include <string.h>

#include "check.h"

static int handled;
static MPI_Comm handled_comm;
static int handled_class;

/* on_error calls MPI from inside the handler: the library must hold no
 * lock of its own while it runs. */
static void on_error(MPI_Comm *comm, int *code, ...)
{
	char msg[MPI_MAX_ERROR_STRING], name[MPI_MAX_OBJECT_NAME];
	int len = -1, nlen = -1, rank = -1;
	handled++;
	handled_comm = *comm;
	MPI_Error_class(*code, &handled_class);
	MPI_Error_string(*code, msg, &len);
	CHECK(len >= 0 && len < MPI_MAX_ERROR_STRING && (int)strlen(msg) == len, "MPI_Error_string in a handler: length %d", len);
	MPI_Comm_get_name(*comm, name, &nlen);
	CHECK(MPI_Comm_rank(*comm, &rank) == MPI_SUCCESS && rank >= 0, "MPI_Comm_rank in a handler: %d", rank);
}

int main(int argc, char **argv)
{
	int init0 = -1, fin0 = -1, ver = -1, sub = -1;
	MPI_Initialized(&init0);
	MPI_Finalized(&fin0);
	MPI_Get_version(&ver, &sub);
#ifdef MPI_ABI_VERSION
	/* MPI_Info_create_env may be called before MPI_Init (MPI 4.1
	 * §12.4.1), MPI_INFO_ENV only used after (§12.2.1). */
	MPI_Info envi = MPI_INFO_NULL;
	int env_err = MPI_Info_create_env(argc, argv, &envi);
#endif

	MPI_Init(&argc, &argv);
	int rank, err, class, flag, len;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	CHECK(init0 == 0 && fin0 == 0, "before MPI_Init: initialized %d, finalized %d", init0, fin0);
	CHECK(ver >= 3, "MPI_Get_version before MPI_Init: %d.%d", ver, sub);
	MPI_Initialized(&flag);
	CHECK(flag == 1, "MPI_Initialized after MPI_Init: %d", flag);
#ifdef MPI_ABI_VERSION
	/* It holds what MPI_INFO_ENV holds. */
	int nenv = -1, nmine = -2;
	CHECK(env_err == MPI_SUCCESS && envi != MPI_INFO_NULL, "MPI_Info_create_env before MPI_Init: %d", env_err);
	MPI_Info_get_nkeys(MPI_INFO_ENV, &nenv);
	MPI_Info_get_nkeys(envi, &nmine);
	CHECK(nenv > 0 && nenv == nmine, "MPI_INFO_ENV has %d keys, MPI_Info_create_env's %d", nenv, nmine);
	for (int i = 0; i < nenv && nenv == nmine; i++) {
		char key[MPI_MAX_INFO_KEY], v1[MPI_MAX_INFO_VAL], v2[MPI_MAX_INFO_VAL];
		int l1 = sizeof v1, l2 = sizeof v2, f1 = 0, f2 = 0;
		MPI_Info_get_nthkey(MPI_INFO_ENV, i, key);
		MPI_Info_get_string(MPI_INFO_ENV, key, &l1, v1, &f1);
		MPI_Info_get_string(envi, key, &l2, v2, &f2);
		CHECK(f1 && f2 && strcmp(v1, v2) == 0, "key %s: MPI_INFO_ENV's %s, MPI_Info_create_env's %s", key, v1, f2 ? v2 : "(none)");
	}
	MPI_Info_free(&envi);
#endif
	report("before MPI_Init");

	int *val = NULL;
	flag = -1;
	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &val, &flag);
	CHECK(flag && val && *val >= 32767, "MPI_TAG_UB: flag %d, %d", flag, val ? *val : -1);
	flag = -1;
	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &val, &flag);
	CHECK(flag && val && (*val == 0 || *val == 1), "MPI_WTIME_IS_GLOBAL: flag %d, %d", flag, val ? *val : -1);
	flag = -1;
	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &val, &flag);
	CHECK(flag && val && *val >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE: flag %d, %d", flag, val ? *val : -1);
	/* The first (only) program on the launcher's command line. */
	flag = -1;
	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &val, &flag);
	CHECK(flag && val && *val == 0, "MPI_APPNUM: flag %d, %d", flag, flag && val ? *val : -1);
	report("predefined attributes");

	/* MPI_KEYVAL_INVALID is no key: MPI_ERR_KEYVAL, on communicators and
	 * windows alike (not flag = 0, which says a valid key has no value). */
	class = -1;
	err = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &val, &flag);
	MPI_Error_class(err, &class);
	CHECK(err != MPI_SUCCESS && class == MPI_ERR_KEYVAL, "MPI_Comm_get_attr(MPI_KEYVAL_INVALID): %d, class %d", err, class);
	err = MPI_Comm_get_attr(MPI_COMM_WORLD, 77, &val, &flag);
	CHECK(err != MPI_SUCCESS, "MPI_Comm_get_attr of key 77, never created: %d", err);
	MPI_Win win;
	int *base;
	MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
	MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
	class = -1;
	err = MPI_Win_get_attr(win, MPI_KEYVAL_INVALID, &val, &flag);
	MPI_Error_class(err, &class);
	CHECK(err != MPI_SUCCESS && class == MPI_ERR_KEYVAL, "MPI_Win_get_attr(MPI_KEYVAL_INVALID): %d, class %d", err, class);
	MPI_Aint *size = NULL;
	flag = -1;
	MPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &flag);
	CHECK(flag && size && *size == sizeof(int), "MPI_WIN_SIZE: flag %d, %ld", flag, size ? (long)*size : -1L);
	MPI_Win_free(&win);
	report("invalid attribute keys");

	/* A number that is no error code or class gets an error, not a class
	 * made up from its bits. */
	int bad[] = {-1, 100, 12345, 70000, 0x7fffffff};
	for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		class = -7;
		err = MPI_Error_class(bad[i], &class);
		CHECK(err != MPI_SUCCESS, "MPI_Error_class(%d): %d, class %d", bad[i], err, class);
	}
	char msg[MPI_MAX_ERROR_STRING];
	class = -1;
	err = MPI_Error_string(12345, msg, &len);
	MPI_Error_class(err, &class);
	CHECK(err != MPI_SUCCESS && class == MPI_ERR_ARG, "MPI_Error_string(12345): %d, class %d", err, class);
	err = MPI_Error_class(MPI_ERR_RMA_SYNC, &class);
	CHECK(err == MPI_SUCCESS && class == MPI_ERR_RMA_SYNC, "MPI_Error_class(MPI_ERR_RMA_SYNC): %d, class %d", err, class);
#ifdef MPI_ABI_VERSION
	/* MPI_ERR_LASTCODE is in the standard's table of classes (Open MPI
	 * refuses it; shmrun takes it as its own class). */
	err = MPI_Error_class(MPI_ERR_LASTCODE, &class);
	CHECK(err == MPI_SUCCESS && class == MPI_ERR_LASTCODE, "MPI_Error_class(MPI_ERR_LASTCODE): %d, class %d", err, class);
#endif
	report("invalid error codes");

	MPI_Comm dup, dup2;
	MPI_Errhandler eh, got;
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	MPI_Comm_create_errhandler(on_error, &eh);
	MPI_Comm_set_errhandler(dup, eh);
	MPI_Errhandler_free(&eh); /* dup keeps it */
	CHECK(eh == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free left the handle");
	err = MPI_Send(&rank, -1, MPI_INT, 0, 0, dup);
	MPI_Error_class(err, &class);
	CHECK(handled == 1 && handled_comm == dup && handled_class == MPI_ERR_COUNT && class == MPI_ERR_COUNT,
	      "a count of -1: handler called %d times, class %d, returned class %d", handled, handled_class, class);
	MPI_Comm_dup(dup, &dup2); /* inherits the handler */
	MPI_Comm_call_errhandler(dup2, MPI_ERR_OTHER);
	CHECK(handled == 2 && handled_comm == dup2 && handled_class == MPI_ERR_OTHER, "MPI_Comm_call_errhandler: %d calls, class %d", handled, handled_class);
	MPI_Comm_get_errhandler(dup2, &got);
	MPI_Errhandler_free(&got);
	MPI_Comm_free(&dup2);
	MPI_Comm_free(&dup);
	report("a program's error handler");

	char name[300], out[MPI_MAX_OBJECT_NAME + 32];
	memset(name, 'n', sizeof name - 1);
	name[sizeof name - 1] = 0;
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	memset(out, 'X', sizeof out);
	len = -1;
	MPI_Comm_get_name(dup, out, &len);
	CHECK(len == 0 && out[0] == 0, "a new communicator's name: %d", len);
	MPI_Comm_set_name(dup, name);
	memset(out, 'X', sizeof out);
	MPI_Comm_get_name(dup, out, &len);
	CHECK(len > 0 && len < MPI_MAX_OBJECT_NAME && out[len] == 0 && (int)strlen(out) == len && out[MPI_MAX_OBJECT_NAME] == 'X',
	      "a long name: length %d", len);
	MPI_Comm_get_name(MPI_COMM_WORLD, out, &len);
	CHECK(strcmp(out, "MPI_COMM_WORLD") == 0, "MPI_COMM_WORLD's name: %s", out);
	MPI_Comm_free(&dup);
	report("names");

	MPI_Comm c = MPI_COMM_WORLD;
	class = -1;
	err = MPI_Comm_free(&c);
	MPI_Error_class(err, &class);
	CHECK(class == MPI_ERR_COMM && c == MPI_COMM_WORLD, "MPI_Comm_free(MPI_COMM_WORLD): class %d", class);
	c = MPI_COMM_SELF;
	class = -1;
	err = MPI_Comm_free(&c);
	MPI_Error_class(err, &class);
	CHECK(class == MPI_ERR_COMM, "MPI_Comm_free(MPI_COMM_SELF): class %d", class);
	c = MPI_COMM_NULL;
	class = -1;
	err = MPI_Comm_free(&c);
	MPI_Error_class(err, &class);
	CHECK(class == MPI_ERR_COMM, "MPI_Comm_free(MPI_COMM_NULL): class %d", class);
	report("freeing predefined communicators");

	MPI_Finalize();
	int init1 = -1, fin1 = -1;
	MPI_Initialized(&init1);
	MPI_Finalized(&fin1);
	MPI_Get_version(&ver, &sub);
	if (rank == 0)
		printf("%s after MPI_Finalize\n", init1 == 1 && fin1 == 1 && ver >= 3 ? "ok" : "FAILED");
	return 0;
}
