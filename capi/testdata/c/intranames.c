/* ranks: 2
 * Calls a program makes whatever the library: MPI_Pcontrol at any level
 * (no profiler here: it does nothing and succeeds, MPI 4.1 §15.2.4);
 * MPI_Comm_test_inter (false: every communicator is an intracommunicator
 * here), MPI_Comm_remote_size and MPI_Comm_remote_group (with the
 * standard ABI's header: MPI_ERR_COMM on the intracommunicator's
 * handler, naming the call); MPI_Win_set_name and MPI_Win_get_name
 * (no name until one is set, then the name, cut to MPI_MAX_OBJECT_NAME - 1
 * characters as a communicator's is). */
#include <string.h>

#include "check.h"

#ifdef MPI_ABI_VERSION
static int comm_calls;
static MPI_Comm comm_called;

static void on_comm(MPI_Comm *c, int *code, ...)
{
	(void)code;
	comm_calls++;
	comm_called = *c;
}
#endif

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);

	CHECK(MPI_Pcontrol(0) == MPI_SUCCESS, "MPI_Pcontrol(0) failed");
	CHECK(MPI_Pcontrol(1) == MPI_SUCCESS, "MPI_Pcontrol(1) failed");
	CHECK(MPI_Pcontrol(2, "extra", 3) == MPI_SUCCESS, "MPI_Pcontrol(2, ...) failed");
	CHECK(MPI_Pcontrol(-7) == MPI_SUCCESS, "MPI_Pcontrol(-7) failed");
	report("MPI_Pcontrol");

	MPI_Comm dup;
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	int flag = -1;
	CHECK(MPI_Comm_test_inter(MPI_COMM_WORLD, &flag) == MPI_SUCCESS && flag == 0, "MPI_Comm_test_inter(MPI_COMM_WORLD): %d", flag);
	flag = -1;
	CHECK(MPI_Comm_test_inter(MPI_COMM_SELF, &flag) == MPI_SUCCESS && flag == 0, "MPI_Comm_test_inter(MPI_COMM_SELF): %d", flag);
	flag = -1;
	CHECK(MPI_Comm_test_inter(dup, &flag) == MPI_SUCCESS && flag == 0, "MPI_Comm_test_inter(a dup): %d", flag);
#ifdef MPI_ABI_VERSION
	/* shmrun's check (Open MPI 4.1 answers 0 and MPI_COMM_WORLD's group) */
	{
		MPI_Errhandler eh;
		MPI_Comm_create_errhandler(on_comm, &eh);
		MPI_Comm_set_errhandler(dup, eh);
		int size = -1, class = -1, len = 0;
		char msg[MPI_MAX_ERROR_STRING] = "";
		MPI_Group g = MPI_GROUP_NULL;
		int err = MPI_Comm_remote_size(dup, &size);
		MPI_Error_class(err, &class);
		MPI_Error_string(err, msg, &len);
		CHECK(class == MPI_ERR_COMM && size == -1 && comm_calls == 1 && comm_called == dup,
		      "MPI_Comm_remote_size of an intracommunicator: class %d, size %d, %d handler calls", class, size, comm_calls);
		CHECK(strncmp(msg, "MPI_Comm_remote_size: ", 22) == 0 && strstr(msg, "not an intercommunicator") != NULL, "MPI_Comm_remote_size: %s", msg);
		comm_calls = 0;
		err = MPI_Comm_remote_group(dup, &g);
		MPI_Error_class(err, &class);
		MPI_Error_string(err, msg, &len);
		CHECK(class == MPI_ERR_COMM && g == MPI_GROUP_NULL && comm_calls == 1 && comm_called == dup,
		      "MPI_Comm_remote_group of an intracommunicator: class %d, %d handler calls", class, comm_calls);
		CHECK(strncmp(msg, "MPI_Comm_remote_group: ", 23) == 0 && strstr(msg, "not an intercommunicator") != NULL, "MPI_Comm_remote_group: %s",
		      msg);
		/* an invalid communicator: MPI_COMM_SELF's handler */
		MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
		err = MPI_Comm_test_inter(MPI_COMM_NULL, &flag);
		MPI_Error_class(err, &class);
		CHECK(class == MPI_ERR_COMM, "MPI_Comm_test_inter(MPI_COMM_NULL): class %d", class);
		err = MPI_Comm_remote_size(MPI_COMM_NULL, &size);
		MPI_Error_class(err, &class);
		CHECK(class == MPI_ERR_COMM, "MPI_Comm_remote_size(MPI_COMM_NULL): class %d", class);
		MPI_Errhandler_free(&eh);
	}
#endif
	MPI_Comm_free(&dup);
	report("intracommunicators: MPI_Comm_test_inter, MPI_Comm_remote_size and _group");

	MPI_Win win;
	int *base, len = -1;
	MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
	char name[MPI_MAX_OBJECT_NAME];
	memset(name, 'x', sizeof name);
	MPI_Win_get_name(win, name, &len);
	CHECK(len == 0 && name[0] == 0, "a new window's name: \"%.20s\" (%d)", name, len);
	MPI_Win_set_name(win, "halo exchange");
	MPI_Win_get_name(win, name, &len);
	CHECK(len == 13 && strcmp(name, "halo exchange") == 0, "the window's name: \"%s\" (%d)", name, len);
	char longname[MPI_MAX_OBJECT_NAME + 20];
	memset(longname, 'w', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	MPI_Win_set_name(win, longname);
	MPI_Win_get_name(win, name, &len);
	CHECK(len == MPI_MAX_OBJECT_NAME - 1 && strlen(name) == MPI_MAX_OBJECT_NAME - 1 && name[0] == 'w',
	      "a name longer than MPI_MAX_OBJECT_NAME: %d characters (%zu), want %d", len, strlen(name), MPI_MAX_OBJECT_NAME - 1);
	MPI_Win_set_name(win, "");
	MPI_Win_get_name(win, name, &len);
	CHECK(len == 0 && name[0] == 0, "the name after setting \"\": \"%s\" (%d)", name, len);
#ifdef MPI_ABI_VERSION
	int class = -1, err = MPI_Win_set_name(MPI_WIN_NULL, "x");
	MPI_Error_class(err, &class);
	CHECK(class == MPI_ERR_WIN, "MPI_Win_set_name(MPI_WIN_NULL): class %d", class);
	err = MPI_Win_get_name(MPI_WIN_NULL, name, &len);
	MPI_Error_class(err, &class);
	CHECK(class == MPI_ERR_WIN, "MPI_Win_get_name(MPI_WIN_NULL): class %d", class);
#endif
	MPI_Win_free(&win);
	report("window names");

	MPI_Finalize();
	return 0;
}
