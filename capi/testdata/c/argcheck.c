/* ranks: 3
 * The C interface's checks of its arguments, call by call: a NULL where
 * the call must read or write through a pointer (an output, a handle to
 * update, a required array or string) is MPI_ERR_ARG on the handler of the
 * object the call's other errors go to (its communicator's, its window's,
 * MPI_COMM_SELF's), not a fault; the NULLs the standard gives a meaning
 * (MPI_STATUS_IGNORE, the arrays of an empty list, an insignificant
 * argument) still work. Negative counts of the v collectives are
 * MPI_ERR_COUNT (not MPI_ERR_NO_MEM), negative displacements MPI_ERR_ARG,
 * displacements whose blocks reach past the end of memory MPI_ERR_COUNT
 * with nothing written; a collective whose send and receive buffers are
 * one without MPI_IN_PLACE is MPI_ERR_BUFFER. A collective refused on one
 * rank fails on every rank, with that class.
 *
 * shmrun's checks: other MPIs skip them (MPICH and Open MPI make most,
 * not all, of them, and some of their calls fault on a NULL). */
#include <stdint.h>
#include <string.h>

#include "check.h"

#ifdef MPI_ABI_VERSION

/* The rows: each call's class and the handler that ran. */
enum on { ON_NONE, ON_COMM, ON_WIN, ON_SELF };

static MPI_Comm comm; /* a dup of MPI_COMM_WORLD with on_comm */
static MPI_Win win;   /* a window with on_win */
static int calls;     /* handler calls since the last row */
static MPI_Comm called_comm;
static MPI_Win called_win;

static void on_comm(MPI_Comm *c, int *code, ...)
{
	(void)code;
	calls++;
	called_comm = *c;
}

static void on_win(MPI_Win *w, int *code, ...)
{
	(void)code;
	calls++;
	called_win = *w;
}

static const char *on_names[] = {"no", "the communicator's", "the window's", "MPI_COMM_SELF's"};

static void row(const char *what, int err, int want, enum on on)
{
	int class = MPI_SUCCESS, len = 0;
	char msg[MPI_MAX_ERROR_STRING] = "";
	if (err != MPI_SUCCESS) {
		MPI_Error_class(err, &class);
		MPI_Error_string(err, msg, &len);
	}
	int handled = calls == 0;
	switch (on) {
	case ON_COMM:
		handled = calls == 1 && called_comm == comm;
		break;
	case ON_WIN:
		handled = calls == 1 && called_win == win;
		break;
	case ON_SELF:
		handled = calls == 1 && called_comm == MPI_COMM_SELF;
		break;
	case ON_NONE:
		break;
	}
	CHECK(class == want && handled, "%s: class %d (%s), want %d on %s handler (%d handler calls)", what, class, msg, want,
	      on_names[on], calls);
	calls = 0;
	called_comm = MPI_COMM_NULL;
	called_win = MPI_WIN_NULL;
}

#define ROW(want, on, call) row(#call, (call), want, on)
#define ARG(on, call) ROW(MPI_ERR_ARG, on, call)
#define OK(call) ROW(MPI_SUCCESS, ON_NONE, call)

static void user_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)in, (void)inout, (void)len, (void)dt;
}

static void user_op_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
	(void)in, (void)inout, (void)len, (void)dt;
}

/* null_outputs calls every function that reads or writes through a
 * pointer with NULL there. */
static void null_outputs(int rank)
{
	int x = 0, len = 0, flag = 0, idx = 0, out = 0, idxs[1], ranks[1] = {0}, ranges[1][3] = {{0, 0, 1}}, bl[1] = {1};
	int disp[1] = {0}, sizes[1] = {4}, subs[1] = {2}, starts[1] = {0}, du = 0;
	MPI_Count cx = 0, clb = 0;
	MPI_Aint ax = 0, alb = 0, adisp[1] = {0}, cdu = 0;
	char name[MPI_MAX_OBJECT_NAME], str[MPI_MAX_ERROR_STRING], value[16], packed[16];
	void *bp = NULL;
	int *attr = NULL;
	MPI_Status st;
	MPI_Request req = MPI_REQUEST_NULL;
	MPI_Message msg = MPI_MESSAGE_NULL;
	MPI_Group g, ng;
	MPI_Info info;
	MPI_Datatype t, ts[1] = {MPI_INT};
	MPI_Win nw;
	MPI_Op op;
	MPI_Errhandler eh;
	memset(&st, 0, sizeof st);
	MPI_Comm_group(MPI_COMM_WORLD, &g);
	MPI_Info_create(&info);
	MPI_Info_set(info, "k", "v");

	/* the environment */
	ARG(ON_SELF, MPI_Initialized(NULL));
	ARG(ON_SELF, MPI_Finalized(NULL));
	ARG(ON_SELF, MPI_Query_thread(NULL));
	ARG(ON_SELF, MPI_Is_thread_main(NULL));
	ARG(ON_SELF, MPI_Get_processor_name(NULL, &len));
	ARG(ON_SELF, MPI_Get_processor_name(name, NULL));
	ARG(ON_SELF, MPI_Get_library_version(NULL, &len));
	ARG(ON_SELF, MPI_Get_library_version(str, NULL));
	ARG(ON_SELF, MPI_Error_string(MPI_ERR_ARG, NULL, &len));
	ARG(ON_SELF, MPI_Error_string(MPI_ERR_ARG, str, NULL));
	ARG(ON_SELF, MPI_Error_class(MPI_ERR_ARG, NULL));
	ARG(ON_SELF, MPI_Get_version(NULL, &x));
	ARG(ON_SELF, MPI_Get_version(&x, NULL));
	ARG(ON_SELF, MPI_Abi_get_version(NULL, &x));
	ARG(ON_SELF, MPI_Abi_get_version(&x, NULL));
	ARG(ON_SELF, MPI_Abi_get_info(NULL));
	ARG(ON_SELF, MPI_Abi_get_fortran_info(NULL));
	ARG(ON_SELF, MPI_Get_address(&x, NULL));

	/* communicators */
	ARG(ON_COMM, MPI_Comm_rank(comm, NULL));
	ARG(ON_COMM, MPI_Comm_size(comm, NULL));
	ARG(ON_COMM, MPI_Comm_dup(comm, NULL));
	ARG(ON_COMM, MPI_Comm_split(comm, 0, 0, NULL));
	ARG(ON_COMM, MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, NULL));
	ARG(ON_COMM, MPI_Comm_create(comm, g, NULL));
	ARG(ON_COMM, MPI_Comm_create_group(comm, g, 0, NULL));
	ARG(ON_COMM, MPI_Comm_compare(comm, MPI_COMM_WORLD, NULL));
	ARG(ON_COMM, MPI_Comm_group(comm, NULL));
	ARG(ON_COMM, MPI_Comm_test_inter(comm, NULL));
	ARG(ON_COMM, MPI_Comm_remote_size(comm, NULL));
	ARG(ON_COMM, MPI_Comm_remote_group(comm, NULL));
	ARG(ON_COMM, MPI_Comm_set_name(comm, NULL));
	ARG(ON_COMM, MPI_Comm_get_name(comm, NULL, &len));
	ARG(ON_COMM, MPI_Comm_get_name(comm, name, NULL));
	ARG(ON_COMM, MPI_Comm_get_errhandler(comm, NULL));
	ARG(ON_COMM, MPI_Comm_get_attr(comm, MPI_TAG_UB, NULL, &flag));
	ARG(ON_COMM, MPI_Comm_get_attr(comm, MPI_TAG_UB, &attr, NULL));
	ARG(ON_SELF, MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, NULL, NULL));
	ARG(ON_SELF, MPI_Comm_free_keyval(NULL));
	ARG(ON_SELF, MPI_Comm_free(NULL));
	ARG(ON_SELF, MPI_Comm_create_errhandler(on_comm, NULL));
	ARG(ON_SELF, MPI_Comm_create_errhandler(NULL, &eh));
	ARG(ON_SELF, MPI_Errhandler_free(NULL));

	/* groups */
	ARG(ON_SELF, MPI_Group_size(g, NULL));
	ARG(ON_SELF, MPI_Group_rank(g, NULL));
	ARG(ON_SELF, MPI_Group_incl(g, 1, NULL, &ng));
	ARG(ON_SELF, MPI_Group_incl(g, 1, ranks, NULL));
	ARG(ON_SELF, MPI_Group_excl(g, 1, NULL, &ng));
	ARG(ON_SELF, MPI_Group_excl(g, 1, ranks, NULL));
	ARG(ON_SELF, MPI_Group_range_incl(g, 1, NULL, &ng));
	ARG(ON_SELF, MPI_Group_range_incl(g, 1, ranges, NULL));
	ARG(ON_SELF, MPI_Group_range_excl(g, 1, NULL, &ng));
	ARG(ON_SELF, MPI_Group_range_excl(g, 1, ranges, NULL));
	ARG(ON_SELF, MPI_Group_union(g, g, NULL));
	ARG(ON_SELF, MPI_Group_intersection(g, g, NULL));
	ARG(ON_SELF, MPI_Group_difference(g, g, NULL));
	ARG(ON_SELF, MPI_Group_translate_ranks(g, 1, NULL, g, idxs));
	ARG(ON_SELF, MPI_Group_translate_ranks(g, 1, ranks, g, NULL));
	ARG(ON_SELF, MPI_Group_compare(g, g, NULL));
	ARG(ON_SELF, MPI_Group_free(NULL));

	/* info */
	ARG(ON_SELF, MPI_Info_create(NULL));
	ARG(ON_SELF, MPI_Info_set(info, NULL, "v"));
	ARG(ON_SELF, MPI_Info_set(info, "k", NULL));
	ARG(ON_SELF, MPI_Info_delete(info, NULL));
	ARG(ON_SELF, MPI_Info_get(info, NULL, 8, value, &flag));
	ARG(ON_SELF, MPI_Info_get(info, "k", 8, NULL, &flag));
	ARG(ON_SELF, MPI_Info_get(info, "k", 8, value, NULL));
	len = 8;
	ARG(ON_SELF, MPI_Info_get_string(info, NULL, &len, value, &flag));
	ARG(ON_SELF, MPI_Info_get_string(info, "k", NULL, value, &flag));
	ARG(ON_SELF, MPI_Info_get_string(info, "k", &len, NULL, &flag));
	ARG(ON_SELF, MPI_Info_get_string(info, "k", &len, value, NULL));
	ARG(ON_SELF, MPI_Info_get_valuelen(info, NULL, &len, &flag));
	ARG(ON_SELF, MPI_Info_get_valuelen(info, "k", NULL, &flag));
	ARG(ON_SELF, MPI_Info_get_valuelen(info, "k", &len, NULL));
	ARG(ON_SELF, MPI_Info_get_nkeys(info, NULL));
	ARG(ON_SELF, MPI_Info_get_nthkey(info, 0, NULL));
	ARG(ON_SELF, MPI_Info_dup(info, NULL));
	ARG(ON_SELF, MPI_Info_free(NULL));

	/* point to point: nothing is sent or posted */
	ARG(ON_COMM, MPI_Isend(&x, 1, MPI_INT, rank, 0, comm, NULL));
	ARG(ON_COMM, MPI_Isend_c(&x, 1, MPI_INT, rank, 0, comm, NULL));
	ARG(ON_COMM, MPI_Issend(&x, 1, MPI_INT, rank, 0, comm, NULL));
	ARG(ON_COMM, MPI_Issend_c(&x, 1, MPI_INT, rank, 0, comm, NULL));
	ARG(ON_COMM, MPI_Irsend(&x, 1, MPI_INT, rank, 0, comm, NULL));
	ARG(ON_COMM, MPI_Irsend_c(&x, 1, MPI_INT, rank, 0, comm, NULL));
	ARG(ON_COMM, MPI_Irecv(&x, 1, MPI_INT, rank, 0, comm, NULL));
	ARG(ON_COMM, MPI_Irecv_c(&x, 1, MPI_INT, rank, 0, comm, NULL));
	ARG(ON_COMM, MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, comm, NULL));
	ARG(ON_COMM, MPI_Send_init(&x, 1, MPI_INT, rank, 0, comm, NULL));
	ARG(ON_COMM, MPI_Send_init_c(&x, 1, MPI_INT, rank, 0, comm, NULL));
	ARG(ON_COMM, MPI_Ssend_init(&x, 1, MPI_INT, rank, 0, comm, NULL));
	ARG(ON_COMM, MPI_Ssend_init_c(&x, 1, MPI_INT, rank, 0, comm, NULL));
	ARG(ON_COMM, MPI_Rsend_init(&x, 1, MPI_INT, rank, 0, comm, NULL));
	ARG(ON_COMM, MPI_Rsend_init_c(&x, 1, MPI_INT, rank, 0, comm, NULL));
	ARG(ON_COMM, MPI_Recv_init(&x, 1, MPI_INT, rank, 0, comm, NULL));
	ARG(ON_COMM, MPI_Recv_init_c(&x, 1, MPI_INT, rank, 0, comm, NULL));
	ARG(ON_COMM, MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, NULL, MPI_STATUS_IGNORE));
	ARG(ON_COMM, MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, NULL, MPI_STATUS_IGNORE));
	ARG(ON_COMM, MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, NULL, &msg, MPI_STATUS_IGNORE));
	ARG(ON_COMM, MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, NULL, MPI_STATUS_IGNORE));
	ARG(ON_SELF, MPI_Mrecv(&x, 1, MPI_INT, NULL, MPI_STATUS_IGNORE));
	ARG(ON_SELF, MPI_Mrecv_c(&x, 1, MPI_INT, NULL, MPI_STATUS_IGNORE));
	ARG(ON_SELF, MPI_Imrecv(&x, 1, MPI_INT, NULL, &req));
	ARG(ON_SELF, MPI_Imrecv(&x, 1, MPI_INT, &msg, NULL));
	ARG(ON_SELF, MPI_Imrecv_c(&x, 1, MPI_INT, NULL, &req));
	ARG(ON_SELF, MPI_Imrecv_c(&x, 1, MPI_INT, &msg, NULL));

	/* requests and statuses */
	ARG(ON_SELF, MPI_Start(NULL));
	ARG(ON_SELF, MPI_Startall(1, NULL));
	ARG(ON_SELF, MPI_Wait(NULL, MPI_STATUS_IGNORE));
	ARG(ON_SELF, MPI_Test(NULL, &flag, MPI_STATUS_IGNORE));
	ARG(ON_SELF, MPI_Test(&req, NULL, MPI_STATUS_IGNORE));
	ARG(ON_SELF, MPI_Waitall(1, NULL, MPI_STATUSES_IGNORE));
	ARG(ON_SELF, MPI_Testall(1, NULL, &flag, MPI_STATUSES_IGNORE));
	ARG(ON_SELF, MPI_Testall(1, &req, NULL, MPI_STATUSES_IGNORE));
	ARG(ON_SELF, MPI_Waitany(1, NULL, &idx, MPI_STATUS_IGNORE));
	ARG(ON_SELF, MPI_Waitany(1, &req, NULL, MPI_STATUS_IGNORE));
	ARG(ON_SELF, MPI_Testany(1, NULL, &idx, &flag, MPI_STATUS_IGNORE));
	ARG(ON_SELF, MPI_Testany(1, &req, NULL, &flag, MPI_STATUS_IGNORE));
	ARG(ON_SELF, MPI_Testany(1, &req, &idx, NULL, MPI_STATUS_IGNORE));
	ARG(ON_SELF, MPI_Waitsome(1, NULL, &out, idxs, MPI_STATUSES_IGNORE));
	ARG(ON_SELF, MPI_Waitsome(1, &req, NULL, idxs, MPI_STATUSES_IGNORE));
	ARG(ON_SELF, MPI_Waitsome(1, &req, &out, NULL, MPI_STATUSES_IGNORE));
	ARG(ON_SELF, MPI_Testsome(1, NULL, &out, idxs, MPI_STATUSES_IGNORE));
	ARG(ON_SELF, MPI_Testsome(1, &req, NULL, idxs, MPI_STATUSES_IGNORE));
	ARG(ON_SELF, MPI_Testsome(1, &req, &out, NULL, MPI_STATUSES_IGNORE));
	ARG(ON_SELF, MPI_Request_free(NULL));
	ARG(ON_SELF, MPI_Request_get_status(req, NULL, MPI_STATUS_IGNORE));
	ARG(ON_SELF, MPI_Cancel(NULL));
	ARG(ON_SELF, MPI_Test_cancelled(NULL, &flag));
	ARG(ON_SELF, MPI_Test_cancelled(&st, NULL));
	ARG(ON_SELF, MPI_Get_count(NULL, MPI_INT, &x));
	ARG(ON_SELF, MPI_Get_count(&st, MPI_INT, NULL));
	ARG(ON_SELF, MPI_Get_count_c(NULL, MPI_INT, &cx));
	ARG(ON_SELF, MPI_Get_count_c(&st, MPI_INT, NULL));
	ARG(ON_SELF, MPI_Get_elements(NULL, MPI_INT, &x));
	ARG(ON_SELF, MPI_Get_elements(&st, MPI_INT, NULL));
	ARG(ON_SELF, MPI_Get_elements_c(NULL, MPI_INT, &cx));
	ARG(ON_SELF, MPI_Get_elements_c(&st, MPI_INT, NULL));
	ARG(ON_SELF, MPI_Get_elements_x(NULL, MPI_INT, &cx));
	ARG(ON_SELF, MPI_Get_elements_x(&st, MPI_INT, NULL));
	ARG(ON_SELF, MPI_Status_set_elements(NULL, MPI_INT, 0));
	ARG(ON_SELF, MPI_Status_set_elements_c(NULL, MPI_INT, 0));
	ARG(ON_SELF, MPI_Status_set_elements_x(NULL, MPI_INT, 0));
	ARG(ON_SELF, MPI_Status_set_cancelled(NULL, 0));
	ARG(ON_SELF, MPI_Status_set_source(NULL, 0));
	ARG(ON_SELF, MPI_Status_set_tag(NULL, 0));
	ARG(ON_SELF, MPI_Status_set_error(NULL, 0));
	ARG(ON_SELF, MPI_Status_get_source(NULL, &x));
	ARG(ON_SELF, MPI_Status_get_source(&st, NULL));
	ARG(ON_SELF, MPI_Status_get_tag(NULL, &x));
	ARG(ON_SELF, MPI_Status_get_tag(&st, NULL));
	ARG(ON_SELF, MPI_Status_get_error(NULL, &x));
	ARG(ON_SELF, MPI_Status_get_error(&st, NULL));

	/* collectives and ops */
	ARG(ON_COMM, MPI_Ibarrier(comm, NULL));
	ARG(ON_SELF, MPI_Op_create(user_op, 1, NULL));
	ARG(ON_SELF, MPI_Op_create(NULL, 1, &op));
	ARG(ON_SELF, MPI_Op_create_c(user_op_c, 1, NULL));
	ARG(ON_SELF, MPI_Op_create_c(NULL, 1, &op));
	ARG(ON_SELF, MPI_Op_free(NULL));
	ARG(ON_SELF, MPI_Op_commutative(MPI_SUM, NULL));

	/* windows: creation's errors are the communicator's (every rank
	 * fails it); the others the window's */
	ARG(ON_COMM, MPI_Win_allocate_shared(8, 1, MPI_INFO_NULL, comm, NULL, &nw));
	ARG(ON_COMM, MPI_Win_allocate_shared(8, 1, MPI_INFO_NULL, comm, &bp, NULL));
	ARG(ON_COMM, MPI_Win_allocate_shared_c(8, 1, MPI_INFO_NULL, comm, NULL, &nw));
	ARG(ON_COMM, MPI_Win_allocate_shared_c(8, 1, MPI_INFO_NULL, comm, &bp, NULL));
	ARG(ON_COMM, MPI_Win_allocate(8, 1, MPI_INFO_NULL, comm, NULL, &nw));
	ARG(ON_COMM, MPI_Win_allocate(8, 1, MPI_INFO_NULL, comm, &bp, NULL));
	ARG(ON_COMM, MPI_Win_allocate_c(8, 1, MPI_INFO_NULL, comm, NULL, &nw));
	ARG(ON_COMM, MPI_Win_allocate_c(8, 1, MPI_INFO_NULL, comm, &bp, NULL));
	ARG(ON_COMM, MPI_Win_create(packed, 8, 1, MPI_INFO_NULL, comm, NULL));
	ARG(ON_COMM, MPI_Win_create_c(packed, 8, 1, MPI_INFO_NULL, comm, NULL));
	ARG(ON_COMM, MPI_Win_create_dynamic(MPI_INFO_NULL, comm, NULL));
	ARG(ON_WIN, MPI_Win_shared_query(win, 0, NULL, &du, &bp));
	ARG(ON_WIN, MPI_Win_shared_query(win, 0, &ax, NULL, &bp));
	ARG(ON_WIN, MPI_Win_shared_query(win, 0, &ax, &du, NULL));
	ARG(ON_WIN, MPI_Win_shared_query_c(win, 0, NULL, &cdu, &bp));
	ARG(ON_WIN, MPI_Win_shared_query_c(win, 0, &ax, NULL, &bp));
	ARG(ON_WIN, MPI_Win_shared_query_c(win, 0, &ax, &cdu, NULL));
	ARG(ON_WIN, MPI_Win_get_attr(win, MPI_WIN_BASE, NULL, &flag));
	ARG(ON_WIN, MPI_Win_get_attr(win, MPI_WIN_BASE, &bp, NULL));
	ARG(ON_SELF, MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, NULL, NULL));
	ARG(ON_SELF, MPI_Win_free_keyval(NULL));
	ARG(ON_WIN, MPI_Win_test(win, NULL));
	ARG(ON_WIN, MPI_Win_get_errhandler(win, NULL));
	ARG(ON_WIN, MPI_Win_get_group(win, NULL));
	ARG(ON_WIN, MPI_Win_get_info(win, NULL));
	ARG(ON_WIN, MPI_Win_set_name(win, NULL));
	ARG(ON_WIN, MPI_Win_get_name(win, NULL, &len));
	ARG(ON_WIN, MPI_Win_get_name(win, name, NULL));
	ARG(ON_WIN, MPI_Rput(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win, NULL));
	ARG(ON_WIN, MPI_Rput_c(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win, NULL));
	ARG(ON_WIN, MPI_Rget(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win, NULL));
	ARG(ON_WIN, MPI_Rget_c(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win, NULL));
	ARG(ON_WIN, MPI_Raccumulate(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win, NULL));
	ARG(ON_WIN, MPI_Raccumulate_c(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win, NULL));
	ARG(ON_WIN, MPI_Rget_accumulate(&x, 1, MPI_INT, &out, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win, NULL));
	ARG(ON_WIN, MPI_Rget_accumulate_c(&x, 1, MPI_INT, &out, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win, NULL));
	ARG(ON_SELF, MPI_Win_free(NULL));
	ARG(ON_SELF, MPI_Win_create_errhandler(on_win, NULL));
	ARG(ON_SELF, MPI_Win_create_errhandler(NULL, &eh));
	ARG(ON_SELF, MPI_Alloc_mem(8, MPI_INFO_NULL, NULL));

	/* datatypes */
	ARG(ON_SELF, MPI_Type_contiguous(1, MPI_INT, NULL));
	ARG(ON_SELF, MPI_Type_contiguous_c(1, MPI_INT, NULL));
	ARG(ON_SELF, MPI_Type_vector(1, 1, 1, MPI_INT, NULL));
	ARG(ON_SELF, MPI_Type_vector_c(1, 1, 1, MPI_INT, NULL));
	ARG(ON_SELF, MPI_Type_create_hvector(1, 1, 4, MPI_INT, NULL));
	ARG(ON_SELF, MPI_Type_create_hvector_c(1, 1, 4, MPI_INT, NULL));
	ARG(ON_SELF, MPI_Type_indexed(1, NULL, disp, MPI_INT, &t));
	ARG(ON_SELF, MPI_Type_indexed(1, bl, NULL, MPI_INT, &t));
	ARG(ON_SELF, MPI_Type_indexed(1, bl, disp, MPI_INT, NULL));
	ARG(ON_SELF, MPI_Type_create_hindexed(1, NULL, adisp, MPI_INT, &t));
	ARG(ON_SELF, MPI_Type_create_hindexed(1, bl, NULL, MPI_INT, &t));
	ARG(ON_SELF, MPI_Type_create_hindexed(1, bl, adisp, MPI_INT, NULL));
	ARG(ON_SELF, MPI_Type_create_indexed_block(1, 1, NULL, MPI_INT, &t));
	ARG(ON_SELF, MPI_Type_create_indexed_block(1, 1, disp, MPI_INT, NULL));
	ARG(ON_SELF, MPI_Type_create_hindexed_block(1, 1, NULL, MPI_INT, &t));
	ARG(ON_SELF, MPI_Type_create_hindexed_block(1, 1, adisp, MPI_INT, NULL));
	ARG(ON_SELF, MPI_Type_create_struct(1, NULL, adisp, ts, &t));
	ARG(ON_SELF, MPI_Type_create_struct(1, bl, NULL, ts, &t));
	ARG(ON_SELF, MPI_Type_create_struct(1, bl, adisp, NULL, &t));
	ARG(ON_SELF, MPI_Type_create_struct(1, bl, adisp, ts, NULL));
	ARG(ON_SELF, MPI_Type_create_subarray(1, NULL, subs, starts, MPI_ORDER_C, MPI_INT, &t));
	ARG(ON_SELF, MPI_Type_create_subarray(1, sizes, NULL, starts, MPI_ORDER_C, MPI_INT, &t));
	ARG(ON_SELF, MPI_Type_create_subarray(1, sizes, subs, NULL, MPI_ORDER_C, MPI_INT, &t));
	ARG(ON_SELF, MPI_Type_create_subarray(1, sizes, subs, starts, MPI_ORDER_C, MPI_INT, NULL));
	ARG(ON_SELF, MPI_Type_create_resized(MPI_INT, 0, 8, NULL));
	ARG(ON_SELF, MPI_Type_dup(MPI_INT, NULL));
	ARG(ON_SELF, MPI_Type_commit(NULL));
	ARG(ON_SELF, MPI_Type_free(NULL));
	ARG(ON_SELF, MPI_Type_size(MPI_INT, NULL));
	ARG(ON_SELF, MPI_Type_size_c(MPI_INT, NULL));
	ARG(ON_SELF, MPI_Type_size_x(MPI_INT, NULL));
	ARG(ON_SELF, MPI_Type_get_extent(MPI_INT, NULL, &ax));
	ARG(ON_SELF, MPI_Type_get_extent(MPI_INT, &alb, NULL));
	ARG(ON_SELF, MPI_Type_get_extent_c(MPI_INT, NULL, &cx));
	ARG(ON_SELF, MPI_Type_get_extent_c(MPI_INT, &clb, NULL));
	ARG(ON_SELF, MPI_Type_get_extent_x(MPI_INT, NULL, &cx));
	ARG(ON_SELF, MPI_Type_get_extent_x(MPI_INT, &clb, NULL));
	ARG(ON_SELF, MPI_Type_get_true_extent(MPI_INT, NULL, &ax));
	ARG(ON_SELF, MPI_Type_get_true_extent(MPI_INT, &alb, NULL));
	ARG(ON_SELF, MPI_Type_get_true_extent_c(MPI_INT, NULL, &cx));
	ARG(ON_SELF, MPI_Type_get_true_extent_c(MPI_INT, &clb, NULL));
	ARG(ON_SELF, MPI_Type_get_true_extent_x(MPI_INT, NULL, &cx));
	ARG(ON_SELF, MPI_Type_get_true_extent_x(MPI_INT, &clb, NULL));
	ARG(ON_SELF, MPI_Type_get_name(MPI_INT, NULL, &len));
	ARG(ON_SELF, MPI_Type_get_name(MPI_INT, name, NULL));
	ARG(ON_SELF, MPI_Type_set_name(MPI_INT, NULL));
	ARG(ON_SELF, MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, NULL, NULL));
	ARG(ON_SELF, MPI_Type_free_keyval(NULL));
	ARG(ON_SELF, MPI_Type_get_attr(MPI_INT, MPI_KEYVAL_INVALID, NULL, &flag));
	ARG(ON_SELF, MPI_Type_get_attr(MPI_INT, MPI_KEYVAL_INVALID, &bp, NULL));
	ARG(ON_COMM, MPI_Pack(&x, 1, MPI_INT, packed, 16, NULL, comm));
	ARG(ON_COMM, MPI_Pack_c(&x, 1, MPI_INT, packed, 16, NULL, comm));
	ARG(ON_COMM, MPI_Unpack(packed, 16, NULL, &x, 1, MPI_INT, comm));
	ARG(ON_COMM, MPI_Unpack_c(packed, 16, NULL, &x, 1, MPI_INT, comm));
	ARG(ON_COMM, MPI_Pack_size(1, MPI_INT, comm, NULL));
	ARG(ON_COMM, MPI_Pack_size_c(1, MPI_INT, comm, NULL));

	MPI_Info_free(&info);
	MPI_Group_free(&g);
}

/* legal_nulls makes the calls whose NULLs the standard allows. */
static void legal_nulls(int rank, int size)
{
	int x = rank, y = -1, flag = 0, idx = 0, out = 0, len = 0, counts[3] = {1, 1, 1}, displs[3] = {0, 1, 2}, all[3];
	MPI_Request req;
	MPI_Group g, ng;
	MPI_Datatype t;
	MPI_Info info;
	OK(MPI_Isend(&x, 1, MPI_INT, rank, 5, comm, &req));
	OK(MPI_Probe(rank, 5, comm, MPI_STATUS_IGNORE));
	OK(MPI_Iprobe(rank, 5, comm, &flag, MPI_STATUS_IGNORE));
	OK(MPI_Recv(&y, 1, MPI_INT, rank, 5, comm, MPI_STATUS_IGNORE));
	OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
	CHECK(y == rank && flag == 1, "a message to self: %d, flag %d", y, flag);
	OK(MPI_Sendrecv(&x, 1, MPI_INT, rank, 6, &y, 1, MPI_INT, rank, 6, comm, MPI_STATUS_IGNORE));
	OK(MPI_Waitall(0, NULL, MPI_STATUSES_IGNORE));
	OK(MPI_Testall(0, NULL, &flag, MPI_STATUSES_IGNORE));
	OK(MPI_Waitany(0, NULL, &idx, MPI_STATUS_IGNORE));
	CHECK(idx == MPI_UNDEFINED, "MPI_Waitany of none: index %d", idx);
	OK(MPI_Testany(0, NULL, &idx, &flag, MPI_STATUS_IGNORE));
	OK(MPI_Waitsome(0, NULL, &out, NULL, MPI_STATUSES_IGNORE));
	OK(MPI_Testsome(0, NULL, &out, NULL, MPI_STATUSES_IGNORE));
	CHECK(out == MPI_UNDEFINED, "MPI_Testsome of none: outcount %d", out);
	OK(MPI_Startall(0, NULL));
	OK(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, MPI_STATUS_IGNORE));

	MPI_Comm_group(MPI_COMM_WORLD, &g);
	OK(MPI_Group_incl(g, 0, NULL, &ng));
	OK(MPI_Group_free(&ng));
	OK(MPI_Group_range_excl(g, 0, NULL, &ng));
	OK(MPI_Group_free(&ng));
	OK(MPI_Group_translate_ranks(g, 0, NULL, g, NULL));
	MPI_Group_free(&g);
	OK(MPI_Type_indexed(0, NULL, NULL, MPI_INT, &t));
	OK(MPI_Type_free(&t));
	OK(MPI_Type_create_struct(0, NULL, NULL, NULL, &t));
	OK(MPI_Type_free(&t));
	OK(MPI_Type_create_hindexed_block(0, 1, NULL, MPI_INT, &t));
	OK(MPI_Type_free(&t));

	/* buflen 0 asks for the value's length, value may be NULL */
	MPI_Info_create(&info);
	MPI_Info_set(info, "k", "v");
	OK(MPI_Info_get_string(info, "k", &len, NULL, &flag));
	CHECK(flag == 1 && len == 2, "MPI_Info_get_string with buflen 0: flag %d, buflen %d", flag, len);
	MPI_Info_free(&info);

	/* off the root, the counts and displacements are not significant */
	int *rc = rank == 0 ? counts : NULL, *rd = rank == 0 ? displs : NULL;
	OK(MPI_Gatherv(&x, 1, MPI_INT, all, rc, rd, MPI_INT, 0, comm));
	if (rank == 0)
		for (int q = 0; q < size; q++)
			CHECK(all[q] == q, "gatherv with NULL counts off the root: %d at %d", all[q], q);
	y = -1;
	OK(MPI_Scatterv(all, rc, rd, MPI_INT, &y, 1, MPI_INT, 0, comm));
	CHECK(y == rank, "scatterv with NULL counts off the root: %d", y);
}

/* COLL is a collective call of the rows below, on every rank, with this
 * class on the communicator's handler. */
#define COLL(want, call) ROW(want, (want) == MPI_SUCCESS ? ON_NONE : ON_COMM, call)

/* rooted is a rooted collective refused at its root: a rank that does not
 * wait for the root (its part was done when its data were sent) may
 * return success and has the error in its next collective call on the
 * communicator, here a Barrier, instead. */
static void rooted(const char *what, int err, int want, int isroot)
{
	int late = !isroot && err == MPI_SUCCESS;
	row(what, err, late ? MPI_SUCCESS : want, late ? ON_NONE : ON_COMM);
	char after[256];
	snprintf(after, sizeof after, "the Barrier after %s", what);
	row(after, MPI_Barrier(comm), late ? want : MPI_SUCCESS, late ? ON_COMM : ON_NONE);
}
#define ROOTED(want, root, call) rooted(#call, (call), want, rank == (root))

/* new_comms: one rank's NULL newcomm fails a communicator-making call on
 * every rank (they do not wait for it). */
static void new_comms(int rank)
{
	MPI_Comm nc = MPI_COMM_NULL;
	MPI_Group g;
	MPI_Comm_group(comm, &g);
	COLL(MPI_ERR_ARG, MPI_Comm_dup(comm, rank == 1 ? NULL : &nc));
	COLL(MPI_ERR_ARG, MPI_Comm_split(comm, 0, 0, rank == 2 ? NULL : &nc));
	COLL(MPI_ERR_ARG, MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, rank == 0 ? NULL : &nc));
	COLL(MPI_ERR_ARG, MPI_Comm_create(comm, g, rank == 1 ? NULL : &nc));
	CHECK(nc == MPI_COMM_NULL, "a refused call made a communicator");
	MPI_Group_free(&g);
}

/* counts checks the v collectives' counts and displacements (a negative
 * displacement is legal: neglb.c). */
static void counts(int rank, int size)
{
	int s[8], r[8], c[3] = {1, 1, 1}, d[3] = {0, 1, 2}, neg[3] = {1, -3, 1};
	MPI_Count cc[3] = {1, 1, 1}, cneg[3] = {1, 1, -3};
	MPI_Aint cd[3] = {0, 1, 2};
	for (int i = 0; i < 8; i++)
		s[i] = rank, r[i] = -1;
	(void)size;
	COLL(MPI_ERR_COUNT, MPI_Reduce_scatter(s, r, neg, MPI_INT, MPI_SUM, comm));
	COLL(MPI_ERR_COUNT, MPI_Reduce_scatter(MPI_IN_PLACE, s, neg, MPI_INT, MPI_SUM, comm));
	COLL(MPI_ERR_COUNT, MPI_Reduce_scatter_c(s, r, cneg, MPI_INT, MPI_SUM, comm));
	COLL(MPI_ERR_ARG, MPI_Reduce_scatter(s, r, NULL, MPI_INT, MPI_SUM, comm));
	COLL(MPI_ERR_COUNT, MPI_Reduce_scatter_block(s, r, -1, MPI_INT, MPI_SUM, comm));
	COLL(MPI_ERR_COUNT, MPI_Reduce_scatter_block_c(s, r, -1, MPI_INT, MPI_SUM, comm));
	ROOTED(MPI_ERR_COUNT, 0, MPI_Gatherv(s, 1, MPI_INT, r, neg, d, MPI_INT, 0, comm));
	ROOTED(MPI_ERR_ARG, 0, MPI_Gatherv(s, 1, MPI_INT, r, rank == 0 ? NULL : c, d, MPI_INT, 0, comm));
	ROOTED(MPI_ERR_ARG, 0, MPI_Gatherv(s, 1, MPI_INT, r, c, rank == 0 ? NULL : d, MPI_INT, 0, comm));
	ROOTED(MPI_ERR_COUNT, 0, MPI_Gatherv_c(s, 1, MPI_INT, r, cneg, cd, MPI_INT, 0, comm));
	ROOTED(MPI_ERR_COUNT, 0, MPI_Scatterv(s, neg, d, MPI_INT, r, 1, MPI_INT, 0, comm));
	ROOTED(MPI_ERR_COUNT, 0, MPI_Scatterv_c(s, cneg, cd, MPI_INT, r, 1, MPI_INT, 0, comm));
	COLL(MPI_ERR_COUNT, MPI_Allgatherv(s, 1, MPI_INT, r, neg, d, MPI_INT, comm));
	COLL(MPI_ERR_ARG, MPI_Allgatherv(s, 1, MPI_INT, r, NULL, d, MPI_INT, comm));
	COLL(MPI_ERR_COUNT, MPI_Allgatherv_c(s, 1, MPI_INT, r, cneg, cd, MPI_INT, comm));
	COLL(MPI_ERR_COUNT, MPI_Alltoallv(s, neg, d, MPI_INT, r, c, d, MPI_INT, comm));
	COLL(MPI_ERR_COUNT, MPI_Alltoallv(s, c, d, MPI_INT, r, neg, d, MPI_INT, comm));
	COLL(MPI_ERR_ARG, MPI_Alltoallv(s, c, d, MPI_INT, r, c, NULL, MPI_INT, comm));
	COLL(MPI_ERR_COUNT, MPI_Alltoallv_c(s, cc, cd, MPI_INT, r, cneg, cd, MPI_INT, comm));
	for (int i = 0; i < 8; i++)
		CHECK(r[i] == -1, "a refused call wrote element %d of its receive buffer: %d", i, r[i]);
}

/* overflow gives the _c forms counts and displacements whose blocks end
 * past the largest MPI_Count or MPI_Aint, or past any address space:
 * refused, and nothing written anywhere (a wrapped end would let a block
 * through its buffer's bounds). */
static void overflow(int rank)
{
	int s[4], r[4];
	for (int i = 0; i < 4; i++)
		s[i] = rank, r[i] = -1;
	MPI_Count one[3] = {1, 1, 1}, big[3] = {INT64_MAX / 2, INT64_MAX / 2, 4};
	/* the end of a block wraps (INT64_MAX - 1 + 2), or its bytes do
	 * (2^61 ints of 4 bytes) */
	MPI_Aint wrap[3] = {0, INT64_MAX - 1, 1}, bytes[3] = {0, (MPI_Aint)1 << 61, 1}, ok[3] = {0, 1, 2};
	/* a block that ends past any address space (2^50 ints on) */
	MPI_Aint far[3] = {0, (MPI_Aint)1 << 50, 1};
	MPI_Count two[3] = {1, 2, 1};
	ROOTED(MPI_ERR_COUNT, 0, MPI_Gatherv_c(s, rank == 1 ? 2 : 1, MPI_INT, r, two, wrap, MPI_INT, 0, comm));
	ROOTED(MPI_ERR_COUNT, 0, MPI_Gatherv_c(s, 1, MPI_INT, r, one, bytes, MPI_INT, 0, comm));
	ROOTED(MPI_ERR_COUNT, 0, MPI_Gatherv_c(s, 1, MPI_INT, r, one, far, MPI_INT, 0, comm));
	ROOTED(MPI_ERR_COUNT, 0, MPI_Scatterv_c(s, two, wrap, MPI_INT, r, rank == 1 ? 2 : 1, MPI_INT, 0, comm));
	ROOTED(MPI_ERR_COUNT, 0, MPI_Scatterv_c(s, one, bytes, MPI_INT, r, 1, MPI_INT, 0, comm));
	ROOTED(MPI_ERR_COUNT, 0, MPI_Scatterv_c(s, one, far, MPI_INT, r, 1, MPI_INT, 0, comm));
	COLL(MPI_ERR_COUNT, MPI_Allgatherv_c(s, rank == 1 ? 2 : 1, MPI_INT, r, two, wrap, MPI_INT, comm));
	COLL(MPI_ERR_COUNT, MPI_Allgatherv_c(s, 1, MPI_INT, r, one, bytes, MPI_INT, comm));
	COLL(MPI_ERR_COUNT, MPI_Allgatherv_c(s, 1, MPI_INT, r, one, far, MPI_INT, comm));
	COLL(MPI_ERR_COUNT, MPI_Allgatherv_c(MPI_IN_PLACE, 0, MPI_INT, r, one, bytes, MPI_INT, comm));
	COLL(MPI_ERR_COUNT, MPI_Allgatherv_c(MPI_IN_PLACE, 0, MPI_INT, r, one, far, MPI_INT, comm));
	COLL(MPI_ERR_COUNT, MPI_Alltoallv_c(s, one, ok, MPI_INT, r, two, wrap, MPI_INT, comm));
	COLL(MPI_ERR_COUNT, MPI_Alltoallv_c(s, one, bytes, MPI_INT, r, one, ok, MPI_INT, comm));
	COLL(MPI_ERR_COUNT, MPI_Alltoallv_c(s, one, ok, MPI_INT, r, one, far, MPI_INT, comm));
	COLL(MPI_ERR_COUNT, MPI_Alltoallv_c(MPI_IN_PLACE, NULL, NULL, MPI_INT, r, one, bytes, MPI_INT, comm));
	/* counts past any address space */
	COLL(MPI_ERR_COUNT, MPI_Bcast_c(s, (MPI_Count)1 << 50, MPI_INT, 0, comm));
	COLL(MPI_ERR_COUNT, MPI_Allreduce_c(s, r, (MPI_Count)1 << 50, MPI_INT, MPI_SUM, comm));
	/* and whose bytes wrap to none (2^62 ints of 4 bytes) */
	COLL(MPI_ERR_COUNT, MPI_Allgather_c(s, (MPI_Count)1 << 62, MPI_INT, r, (MPI_Count)1 << 62, MPI_INT, comm));
	COLL(MPI_ERR_COUNT, MPI_Scan_c(s, r, (MPI_Count)1 << 62, MPI_INT, MPI_SUM, comm));
	COLL(MPI_ERR_COUNT, MPI_Reduce_scatter_block_c(s, r, (MPI_Count)1 << 62, MPI_INT, MPI_SUM, comm));
	ROW(MPI_ERR_COUNT, ON_COMM, MPI_Send_c(s, (MPI_Count)1 << 50, MPI_INT, rank, 0, comm));
	ROW(MPI_ERR_COUNT, ON_COMM, MPI_Recv_c(r, (MPI_Count)1 << 50, MPI_INT, rank, 0, comm, MPI_STATUS_IGNORE));
	/* the counts' sum wraps */
	COLL(MPI_ERR_COUNT, MPI_Reduce_scatter_c(s, r, big, MPI_INT, MPI_SUM, comm));
	for (int i = 0; i < 4; i++)
		CHECK(r[i] == -1 && s[i] == rank, "a refused call wrote element %d: send %d, receive %d", i, s[i], r[i]);
}

/* aliased passes one buffer as both the send and the receive buffer. */
static void aliased(int rank)
{
	int b[64], c[3] = {1, 1, 1}, d[3] = {0, 1, 2}, other[64];
	MPI_Count cc[3] = {1, 1, 1};
	MPI_Aint cd[3] = {0, 1, 2};
	for (int i = 0; i < 64; i++)
		b[i] = rank;
	COLL(MPI_ERR_BUFFER, MPI_Allreduce(b, b, 1, MPI_INT, MPI_SUM, comm));
	COLL(MPI_ERR_BUFFER, MPI_Allreduce(b, b, 64, MPI_INT, MPI_SUM, comm));
	COLL(MPI_ERR_BUFFER, MPI_Allreduce_c(b, b, 1, MPI_INT, MPI_SUM, comm));
	ROOTED(MPI_ERR_BUFFER, 0, MPI_Reduce(b, b, 1, MPI_INT, MPI_SUM, 0, comm));
	ROOTED(MPI_ERR_BUFFER, 1, MPI_Reduce(b, b, 64, MPI_INT, MPI_SUM, 1, comm));
	ROOTED(MPI_ERR_BUFFER, 2, MPI_Reduce_c(b, b, 1, MPI_INT, MPI_SUM, 2, comm));
	COLL(MPI_ERR_BUFFER, MPI_Scan(b, b, 1, MPI_INT, MPI_SUM, comm));
	COLL(MPI_ERR_BUFFER, MPI_Scan_c(b, b, 1, MPI_INT, MPI_SUM, comm));
	COLL(MPI_ERR_BUFFER, MPI_Exscan(b, b, 1, MPI_INT, MPI_SUM, comm));
	COLL(MPI_ERR_BUFFER, MPI_Exscan_c(b, b, 1, MPI_INT, MPI_SUM, comm));
	COLL(MPI_ERR_BUFFER, MPI_Reduce_scatter_block(b, b, 1, MPI_INT, MPI_SUM, comm));
	COLL(MPI_ERR_BUFFER, MPI_Reduce_scatter_block_c(b, b, 1, MPI_INT, MPI_SUM, comm));
	COLL(MPI_ERR_BUFFER, MPI_Reduce_scatter(b, b, c, MPI_INT, MPI_SUM, comm));
	COLL(MPI_ERR_BUFFER, MPI_Reduce_scatter_c(b, b, cc, MPI_INT, MPI_SUM, comm));
	ROOTED(MPI_ERR_BUFFER, 0, MPI_Gather(b, 1, MPI_INT, b, 1, MPI_INT, 0, comm));
	ROOTED(MPI_ERR_BUFFER, 0, MPI_Gather_c(b, 1, MPI_INT, b, 1, MPI_INT, 0, comm));
	ROOTED(MPI_ERR_BUFFER, 1, MPI_Scatter(b, 1, MPI_INT, b, 1, MPI_INT, 1, comm));
	ROOTED(MPI_ERR_BUFFER, 1, MPI_Scatter_c(b, 1, MPI_INT, b, 1, MPI_INT, 1, comm));
	COLL(MPI_ERR_BUFFER, MPI_Allgather(b, 1, MPI_INT, b, 1, MPI_INT, comm));
	COLL(MPI_ERR_BUFFER, MPI_Allgather_c(b, 1, MPI_INT, b, 1, MPI_INT, comm));
	COLL(MPI_ERR_BUFFER, MPI_Alltoall(b, 1, MPI_INT, b, 1, MPI_INT, comm));
	COLL(MPI_ERR_BUFFER, MPI_Alltoall_c(b, 1, MPI_INT, b, 1, MPI_INT, comm));
	ROOTED(MPI_ERR_BUFFER, 2, MPI_Gatherv(b, 1, MPI_INT, b, c, d, MPI_INT, 2, comm));
	ROOTED(MPI_ERR_BUFFER, 2, MPI_Gatherv_c(b, 1, MPI_INT, b, cc, cd, MPI_INT, 2, comm));
	ROOTED(MPI_ERR_BUFFER, 0, MPI_Scatterv(b, c, d, MPI_INT, b, 1, MPI_INT, 0, comm));
	ROOTED(MPI_ERR_BUFFER, 0, MPI_Scatterv_c(b, cc, cd, MPI_INT, b, 1, MPI_INT, 0, comm));
	COLL(MPI_ERR_BUFFER, MPI_Allgatherv(b, 1, MPI_INT, b, c, d, MPI_INT, comm));
	COLL(MPI_ERR_BUFFER, MPI_Allgatherv_c(b, 1, MPI_INT, b, cc, cd, MPI_INT, comm));
	COLL(MPI_ERR_BUFFER, MPI_Alltoallv(b, c, d, MPI_INT, b, c, d, MPI_INT, comm));
	COLL(MPI_ERR_BUFFER, MPI_Alltoallv_c(b, cc, cd, MPI_INT, b, cc, cd, MPI_INT, comm));
	/* one rank alone aliased (the root of a rooted call): every rank
	 * fails, also those of MPI_Reduce_scatter's Allreduce, and of the C
	 * fast path's (one int) */
	ROOTED(MPI_ERR_BUFFER, 0, MPI_Reduce(b, rank == 0 ? b : other, 1, MPI_INT, MPI_SUM, 0, comm));
	ROOTED(MPI_ERR_BUFFER, 1, MPI_Gather(b, 1, MPI_INT, rank == 1 ? b : other, 1, MPI_INT, 1, comm));
	COLL(MPI_ERR_BUFFER, MPI_Allreduce(b, rank == 2 ? b : other, 1, MPI_INT, MPI_SUM, comm));
	COLL(MPI_ERR_BUFFER, MPI_Reduce_scatter(b, rank == 1 ? b : other, c, MPI_INT, MPI_SUM, comm));
	COLL(MPI_ERR_BUFFER, MPI_Alltoallv(b, c, d, MPI_INT, rank == 0 ? b : other, c, d, MPI_INT, comm));
	/* buffers that overlap without being one (dense types; the C fast
	 * path's small counts too) */
	COLL(MPI_ERR_BUFFER, MPI_Allreduce(b, b + 1, 2, MPI_INT, MPI_SUM, comm));
	COLL(MPI_ERR_BUFFER, MPI_Allreduce(b + 8, b, 16, MPI_INT, MPI_SUM, comm));
	ROOTED(MPI_ERR_BUFFER, 1, MPI_Reduce(b + 1, b, 2, MPI_INT, MPI_SUM, 1, comm));
	COLL(MPI_ERR_BUFFER, MPI_Allgather(b + 2, 1, MPI_INT, b, 1, MPI_INT, comm));
	COLL(MPI_ERR_BUFFER, MPI_Alltoall(b, 1, MPI_INT, b + 2, 1, MPI_INT, comm));
	for (int i = 0; i < 64; i++)
		CHECK(b[i] == rank, "a refused call wrote element %d: %d", i, b[i]);
	/* adjacent, not overlapping: fine */
	COLL(MPI_SUCCESS, MPI_Allreduce(b, b + 2, 2, MPI_INT, MPI_SUM, comm));
	CHECK(b[0] == rank && b[2] == 3 && b[3] == 3, "Allreduce into the next ints: %d %d %d", b[0], b[2], b[3]);
	for (int i = 0; i < 64; i++)
		b[i] = rank;

	/* where the receive buffer is not significant (off the root), or
	 * nothing moves, or MPI_IN_PLACE says it, one buffer is fine */
	COLL(MPI_SUCCESS, MPI_Reduce(b, rank == 0 ? other : b, 1, MPI_INT, MPI_SUM, 0, comm));
	COLL(MPI_SUCCESS, MPI_Gather(b, 1, MPI_INT, rank == 2 ? other : b, 1, MPI_INT, 2, comm));
	COLL(MPI_SUCCESS, MPI_Scatter(b, 1, MPI_INT, rank == 1 ? other : b, 1, MPI_INT, 1, comm));
	COLL(MPI_SUCCESS, MPI_Allreduce(b, b, 0, MPI_INT, MPI_SUM, comm));
	COLL(MPI_SUCCESS, MPI_Allgather(b, 0, MPI_INT, b, 0, MPI_INT, comm));
	for (int i = 0; i < 64; i++)
		b[i] = rank;
	COLL(MPI_SUCCESS, MPI_Allreduce(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, comm));
	CHECK(b[0] == 3 && b[1] == rank, "Allreduce in place: %d %d", b[0], b[1]);
	COLL(MPI_SUCCESS, MPI_Allreduce(MPI_IN_PLACE, b, 64, MPI_INT, MPI_SUM, comm));
	CHECK(b[0] == 9 && b[1] == 3, "Allreduce in place of 64: %d %d", b[0], b[1]);
}

/* cas_args gives MPI_Compare_and_swap each bad argument C's own path
 * (one 4- or 8-byte integer, checked in C) must leave to Go to name: a
 * type that is not an integer, a NULL buffer, a target rank or
 * displacement outside the window; MPI_PROC_NULL and a misaligned word
 * (also Go's) succeed. */
static void cas_args(int rank, int size)
{
	long v = 1, cmp = 0, res = 0;
	double dv = 1, dcmp = 0, dres = 0;
	MPI_Win_lock_all(0, win);
	ROW(MPI_ERR_TYPE, ON_WIN, MPI_Compare_and_swap(&dv, &dcmp, &dres, MPI_DOUBLE, rank, 0, win));
	ROW(MPI_ERR_TYPE, ON_WIN, MPI_Compare_and_swap(&v, &cmp, &res, MPI_2INT, rank, 0, win));
	ROW(MPI_ERR_BUFFER, ON_WIN, MPI_Compare_and_swap(NULL, &cmp, &res, MPI_LONG, rank, 0, win));
	ROW(MPI_ERR_BUFFER, ON_WIN, MPI_Compare_and_swap(&v, NULL, &res, MPI_LONG, rank, 0, win));
	ROW(MPI_ERR_BUFFER, ON_WIN, MPI_Compare_and_swap(&v, &cmp, NULL, MPI_LONG, rank, 0, win));
	ROW(MPI_ERR_RANK, ON_WIN, MPI_Compare_and_swap(&v, &cmp, &res, MPI_LONG, size, 0, win));
	ROW(MPI_ERR_RANK, ON_WIN, MPI_Compare_and_swap(&v, &cmp, &res, MPI_LONG, MPI_ROOT, 0, win));
	ROW(MPI_ERR_RANK, ON_WIN, MPI_Compare_and_swap(&v, &cmp, &res, MPI_LONG, -7, 0, win));
	OK(MPI_Compare_and_swap(&v, &cmp, &res, MPI_LONG, MPI_PROC_NULL, 0, win)); /* no result written */
	ROW(MPI_ERR_RMA_RANGE, ON_WIN, MPI_Compare_and_swap(&v, &cmp, &res, MPI_LONG, rank, 60, win));
	ROW(MPI_ERR_DISP, ON_WIN, MPI_Compare_and_swap(&v, &cmp, &res, MPI_LONG, rank, -8, win));
	ROW(MPI_ERR_RMA_RANGE, ON_WIN, MPI_Compare_and_swap(&v, &cmp, &res, MPI_INT, rank, 64, win));
	CHECK(res == 0, "a refused compare-and-swap wrote its result: %ld", res);
	/* The logical types take MPI_LAND, MPI_LOR and MPI_LXOR (MPI_REPLACE
	 * and MPI_NO_OP besides, in the accumulates). */
	_Bool bt = 1, bres = 0;
	int lt = 1, lres = 0;
	ROW(MPI_ERR_OP, ON_WIN, MPI_Accumulate(&bt, 1, MPI_C_BOOL, rank, 32, 1, MPI_C_BOOL, MPI_SUM, win));
	ROW(MPI_ERR_OP, ON_WIN, MPI_Fetch_and_op(&lt, &lres, MPI_LOGICAL, rank, 36, MPI_MAX, win));
	OK(MPI_Accumulate(&bt, 1, MPI_C_BOOL, rank, 32, 1, MPI_C_BOOL, MPI_REPLACE, win));
	OK(MPI_Fetch_and_op(&bt, &bres, MPI_C_BOOL, rank, 32, MPI_LOR, win));
	MPI_Win_flush(rank, win);
	CHECK(bres == 1, "MPI_LOR on MPI_C_BOOL fetched %d, want 1", bres);
	/* Long double and its kin, which move as bytes, are not bytes to the
	 * accumulates' ops: their elements are combined whole, by the ops
	 * that apply to them; a type mixing one with another is refused. */
	long double ld[2] = {1, 2}, ldres = 0;
	MPI_Datatype ld2, ldd;
	MPI_Type_contiguous(2, MPI_LONG_DOUBLE, &ld2);
	MPI_Type_commit(&ld2);
	int bl[2] = {1, 1};
	MPI_Aint at[2] = {0, 16};
	MPI_Datatype ts[2] = {MPI_LONG_DOUBLE, MPI_DOUBLE};
	MPI_Type_create_struct(2, bl, at, ts, &ldd);
	MPI_Type_commit(&ldd);
	ROW(MPI_ERR_OP, ON_WIN, MPI_Accumulate(ld, 1, MPI_LONG_DOUBLE, rank, 16, 1, MPI_LONG_DOUBLE, MPI_BAND, win));
	ROW(MPI_ERR_OP, ON_WIN, MPI_Accumulate(ld, 1, MPI_LONG_DOUBLE, rank, 16, 1, MPI_LONG_DOUBLE, MPI_NO_OP, win));
	ROW(MPI_ERR_TYPE, ON_WIN, MPI_Accumulate(ld, 1, ldd, rank, 16, 1, ldd, MPI_REPLACE, win));
	OK(MPI_Accumulate(ld, 2, MPI_LONG_DOUBLE, rank, 16, 1, ld2, MPI_REPLACE, win));
	OK(MPI_Fetch_and_op(&ld[1], &ldres, MPI_LONG_DOUBLE, rank, 16, MPI_SUM, win));
	MPI_Win_flush(rank, win);
	CHECK(ldres == 1, "MPI_SUM on MPI_LONG_DOUBLE fetched %Lg, want 1", ldres);
	OK(MPI_Fetch_and_op(NULL, &ldres, MPI_LONG_DOUBLE, rank, 16, MPI_NO_OP, win));
	MPI_Win_flush(rank, win);
	CHECK(ldres == 3, "MPI_NO_OP on MPI_LONG_DOUBLE fetched %Lg, want 3", ldres);
	MPI_Type_free(&ld2);
	MPI_Type_free(&ldd);
	/* MPI_BYTE takes the bitwise ops, MPI_REPLACE and MPI_NO_OP only. */
	unsigned char by = 1, byres = 0;
	ROW(MPI_ERR_OP, ON_WIN, MPI_Accumulate(&by, 1, MPI_BYTE, rank, 0, 1, MPI_BYTE, MPI_SUM, win));
	ROW(MPI_ERR_OP, ON_WIN, MPI_Fetch_and_op(&by, &byres, MPI_BYTE, rank, 0, MPI_MAX, win));
	ROW(MPI_ERR_OP, ON_WIN, MPI_Get_accumulate(&by, 1, MPI_BYTE, &byres, 1, MPI_BYTE, rank, 0, 1, MPI_BYTE, MPI_LAND, win));
	/* A misaligned word is no error (Go makes it atomic against the
	 * window's other atomics): the swap happens. */
	long word = -5, seen = 0;
	MPI_Put(&word, 1, MPI_LONG, rank, 4, 1, MPI_LONG, win);
	MPI_Win_flush(rank, win);
	OK(MPI_Compare_and_swap(&v, &word, &seen, MPI_LONG, rank, 4, win));
	MPI_Win_flush(rank, win);
	CHECK(seen == -5, "a misaligned compare-and-swap returned %ld, want -5", seen);
	MPI_Get(&word, 1, MPI_LONG, rank, 4, 1, MPI_LONG, win);
	MPI_Win_flush(rank, win);
	CHECK(word == v, "a misaligned compare-and-swap left %ld, want %ld", word, v);
	MPI_Win_unlock_all(win);
}

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Errhandler ceh, weh;
	MPI_Comm_dup(MPI_COMM_WORLD, &comm);
	MPI_Comm_create_errhandler(on_comm, &ceh);
	MPI_Comm_set_errhandler(comm, ceh);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, ceh);
	MPI_Errhandler_free(&ceh);
	int *base;
	MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
	MPI_Win_create_errhandler(on_win, &weh);
	MPI_Win_set_errhandler(win, weh);
	MPI_Errhandler_free(&weh);

	null_outputs(rank);
	report("NULL outputs and required inputs: MPI_ERR_ARG on the call's handler");
	new_comms(rank);
	report("one rank's NULL newcomm fails the call on every rank");
	legal_nulls(rank, size);
	report("MPI_STATUS_IGNORE, empty arrays and insignificant arguments");
	counts(rank, size);
	report("negative counts and displacements of the v collectives");
	overflow(rank);
	report("displacements and counts past the largest MPI_Aint or any address space");
	aliased(rank);
	report("a collective's send and receive buffers aliased");
	cas_args(rank, size);
	report("the RMA atomics' bad types, ops and arguments named in Go");

	MPI_Win_free(&win);
	MPI_Comm_free(&comm);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
	MPI_Finalize();
	return 0;
}

#else

int main(int argc, char **argv)
{
	int rank;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	report("NULL outputs and required inputs: MPI_ERR_ARG on the call's handler");
	report("one rank's NULL newcomm fails the call on every rank");
	report("MPI_STATUS_IGNORE, empty arrays and insignificant arguments");
	report("negative counts and displacements of the v collectives");
	report("displacements and counts past the largest MPI_Aint or any address space");
	report("a collective's send and receive buffers aliased");
	report("the RMA atomics' bad types, ops and arguments named in Go");
	MPI_Finalize();
	return 0;
}

#endif
