/* ranks: 2
 * A program's error handler after MPI_Errhandler_free (MPI 4.1 §9.3): the
 * handle becomes MPI_ERRHANDLER_NULL, the communicators and windows that
 * use the handler keep it (errors still go to it, a dup inherits it), a
 * handle MPI_Comm_get_errhandler returns is a new reference the program
 * frees, and once the last object using it is freed the handler is gone:
 * a stale copy of its handle is then an invalid error handler
 * (MPI_ERR_ERRHANDLER, MPI 4.1's class for it), as it is while objects
 * still use it. */
#include "check.h"

static int calls;
static MPI_Comm called_comm;
static MPI_Win called_win;
static int called_class;

static void on_comm(MPI_Comm *c, int *code, ...)
{
	calls++;
	called_comm = *c;
	MPI_Error_class(*code, &called_class);
}

static void on_win(MPI_Win *w, int *code, ...)
{
	calls++;
	called_win = *w;
	MPI_Error_class(*code, &called_class);
}

int main(int argc, char **argv)
{
	int rank, err;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);

	MPI_Comm c, c2;
	MPI_Errhandler eh, got;
	MPI_Comm_dup(MPI_COMM_WORLD, &c);
	MPI_Comm_create_errhandler(on_comm, &eh);
	MPI_Comm_set_errhandler(c, eh);
	err = MPI_Errhandler_free(&eh);
	CHECK(err == MPI_SUCCESS && eh == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free: %d, handle not nulled", err);
	err = MPI_Send(&rank, -1, MPI_INT, 0, 0, c);
	CHECK(calls == 1 && called_comm == c && called_class == MPI_ERR_COUNT && class_of(err) == MPI_ERR_COUNT,
	      "an error after the free: %d handler calls, class %d, returned class %d", calls, called_class, class_of(err));
	MPI_Comm_dup(c, &c2); /* inherits the freed handler */
	MPI_Comm_call_errhandler(c2, MPI_ERR_OTHER);
	CHECK(calls == 2 && called_comm == c2 && called_class == MPI_ERR_OTHER, "the dup's handler: %d calls, class %d", calls, called_class);
	MPI_Comm_get_errhandler(c, &got);
	CHECK(got != MPI_ERRHANDLER_NULL && got != MPI_ERRORS_ARE_FATAL && got != MPI_ERRORS_RETURN, "MPI_Comm_get_errhandler after the free");
	MPI_Comm_set_errhandler(c2, got); /* a reference the program holds works */
	MPI_Comm_set_errhandler(c2, MPI_ERRORS_RETURN);
	err = MPI_Errhandler_free(&got);
	CHECK(err == MPI_SUCCESS && got == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free of MPI_Comm_get_errhandler's handle: %d", err);
	MPI_Comm_call_errhandler(c, MPI_ERR_TAG);
	CHECK(calls == 3 && called_comm == c && called_class == MPI_ERR_TAG, "after both handles were freed: %d calls, class %d", calls, called_class);
	MPI_Comm_free(&c2);
	MPI_Comm_free(&c);
	report("a freed communicator error handler stays with its communicators");

#ifdef MPI_ABI_VERSION
	/* A request pending at MPI_Comm_free completes later (MPI 4.1
	 * §6.4.3: the communicator is deallocated once nothing refers to
	 * it); its error still goes to the communicator's handler, even when
	 * the program freed the handler's handle and the communicator was its
	 * last user. (Open MPI 4.1 raises it on a NULL communicator: fatal.) */
	MPI_Comm_dup(MPI_COMM_WORLD, &c);
	MPI_Comm_create_errhandler(on_comm, &eh);
	MPI_Comm_set_errhandler(c, eh);
	MPI_Errhandler_free(&eh);
	int two[2] = {7, 8}, one = 0;
	MPI_Request rq = MPI_REQUEST_NULL;
	if (rank == 1)
		MPI_Send(two, 2, MPI_INT, 0, 5, c);
	else
		MPI_Irecv(&one, 1, MPI_INT, 1, 5, c, &rq);
	MPI_Comm freed = c;
	MPI_Comm_free(&c);
	int before = calls;
	calls = 0;
	err = MPI_Wait(&rq, MPI_STATUS_IGNORE);
	if (rank == 0)
		CHECK(calls == 1 && called_comm == freed && called_class == MPI_ERR_TRUNCATE && class_of(err) == MPI_ERR_TRUNCATE,
		      "a truncated receive completed after MPI_Comm_free: %d handler calls, class %d, returned class %d", calls,
		      called_class, class_of(err));
	else
		CHECK(calls == 0 && err == MPI_SUCCESS, "MPI_Wait on MPI_REQUEST_NULL: %d calls, %d", calls, err);
	calls = before; /* the window part below counts on */
#endif
	report("a freed communicator's pending request raises on its handler");

	MPI_Win w;
	int *base;
	MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w);
	MPI_Win_create_errhandler(on_win, &eh);
	MPI_Win_set_errhandler(w, eh);
	MPI_Errhandler_free(&eh);
	CHECK(eh == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free of a window handler left the handle");
	int *val, flag;
	err = MPI_Win_get_attr(w, MPI_KEYVAL_INVALID, &val, &flag);
	CHECK(calls == 4 && called_win == w && called_class == MPI_ERR_KEYVAL && class_of(err) == MPI_ERR_KEYVAL,
	      "a window error after the free: %d calls, class %d", calls, called_class);
	MPI_Win_get_errhandler(w, &got);
	MPI_Errhandler_free(&got);
	MPI_Win_call_errhandler(w, MPI_ERR_OTHER);
	CHECK(calls == 5 && called_win == w && called_class == MPI_ERR_OTHER, "MPI_Win_call_errhandler: %d calls", calls);
	MPI_Win_free(&w);
	report("a freed window error handler stays with its window");

#ifdef MPI_ABI_VERSION
	/* Stale handles: copies of a freed handle (Open MPI 4.1 does not check
	 * them, and has no MPI_ERR_ERRHANDLER). */
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	MPI_Comm_dup(MPI_COMM_WORLD, &c);
	MPI_Comm_dup(MPI_COMM_WORLD, &c2);
	MPI_Comm_set_errhandler(c2, MPI_ERRORS_RETURN);
	MPI_Comm_create_errhandler(on_comm, &eh);
	MPI_Errhandler stale = eh, stale2 = eh;
	MPI_Comm_set_errhandler(c, eh);
	MPI_Errhandler_free(&eh);
	/* c still uses it: the handler is there, the handle is not. */
	err = MPI_Comm_set_errhandler(c2, stale);
	CHECK(class_of(err) == MPI_ERR_ERRHANDLER, "setting a freed handle while in use: class %d", class_of(err));
	err = MPI_Errhandler_free(&stale);
	CHECK(class_of(err) == MPI_ERR_ERRHANDLER && stale == stale2, "freeing a freed handle while in use: class %d", class_of(err));
	calls = 0;
	MPI_Comm_call_errhandler(c2, MPI_ERR_OTHER);
	MPI_Comm_call_errhandler(c, MPI_ERR_OTHER);
	CHECK(calls == 1 && called_comm == c, "after the refused calls: c2 kept MPI_ERRORS_RETURN, c its handler: %d calls", calls);
	MPI_Comm_get_errhandler(c, &got); /* a new reference: valid again */
	CHECK(got == stale2, "MPI_Comm_get_errhandler returned another handle");
	err = MPI_Comm_set_errhandler(c2, got);
	CHECK(err == MPI_SUCCESS, "setting the handle MPI_Comm_get_errhandler returned: %d", err);
	MPI_Errhandler_free(&got);
	MPI_Comm_set_errhandler(c2, MPI_ERRORS_RETURN);
	/* The last object using it goes: so does the handler. */
	MPI_Comm_free(&c);
	err = MPI_Comm_set_errhandler(c2, stale);
	CHECK(class_of(err) == MPI_ERR_ERRHANDLER, "setting a freed handler's handle: class %d", class_of(err));
	err = MPI_Errhandler_free(&stale);
	CHECK(class_of(err) == MPI_ERR_ERRHANDLER, "freeing a freed handler's handle: class %d", class_of(err));
	/* A window handler on a communicator is the wrong kind. */
	MPI_Win_create_errhandler(on_win, &eh);
	err = MPI_Comm_set_errhandler(c2, eh);
	CHECK(class_of(err) == MPI_ERR_ERRHANDLER, "a window handler on a communicator: class %d", class_of(err));
	MPI_Errhandler_free(&eh);
	/* The predefined handlers are never deallocated. */
	got = MPI_ERRORS_RETURN;
	err = MPI_Errhandler_free(&got);
	CHECK(err == MPI_SUCCESS && got == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free(MPI_ERRORS_RETURN): %d", err);
	err = MPI_Comm_set_errhandler(c2, MPI_ERRORS_RETURN);
	CHECK(err == MPI_SUCCESS, "MPI_ERRORS_RETURN after freeing a handle of it: %d", err);
	MPI_Comm_free(&c2);
#endif
	report("stale handles");

	MPI_Finalize();
	return 0;
}
