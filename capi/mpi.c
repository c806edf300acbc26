/*
 * mpi.c - the MPI functions shmrun implements, as the standard ABI names
 * them: each PMPI_ function converts its handles to words and enters the
 * runtime (the shm* functions of the Go half); MPI_ names are weak aliases
 * (aliases.h, generated), so tools may wrap them (the profiling interface).
 * Large-count _c forms share the code of their int forms.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "capi.h"
#include "_cgo_export.h"
#include "mpi_fast.h"
#include "p2p_fast.h"

shmrun_win_desc *shmrun_wins[SHMRUN_WIN_SLOTS];
shmrun_comm_desc *shmrun_comms[SHMRUN_COMM_SLOTS];
shmrun_p2p_comm *shmrun_p2ps[SHMRUN_COMM_SLOTS];
unsigned long long shmrun_p2p_fast;

/* The receives queued in C and the persistent requests C may start
 * (capi.h, p2p_fast.h). */
shmrun_cq_t shmrun_cq;
shmrun_pers *shmrun_perss[SHMRUN_PERS_SLOTS];
unsigned shmrun_any_next;

int shmrun_cq_pop(void)
{
	shmrun_cq_t *q = &shmrun_cq;
	shmrun_cq_trim(q);
	if (q->head == q->tail)
		return -1;
	uint32_t o = q->order[q->head++ & (SHMRUN_CQ_ORDER - 1)];
	q->e->cq--;
	return (int)(o & 0xffff);
}

/* shmrun_p2p_fast_count is how many messages this process has sent and
 * received without leaving C (p2p_fast.h): not an MPI function, a hook
 * for the tests (testdata/c/p2p.c), which declare it weak. */
__attribute__((visibility("default"))) unsigned long long shmrun_p2p_fast_count(void)
{
	return __atomic_load_n(&shmrun_p2p_fast, __ATOMIC_RELAXED);
}
shmrun_ctype shmrun_ctypes[256];
int shmrun_light_fence;
uint8_t shmrun_cops[32];
uint32_t shmrun_copok[32];
__thread uintptr_t shmrun_call_pc __attribute__((tls_model("initial-exec")));

#define H(x) ((uintptr_t)(x))
#define HP(x) ((uintptr_t *)(x))
/* The RMA calls note their caller for --check's reports (a store to this
 * thread's variable), on their Go path only: a checked window has no C
 * fast path, so the fast paths need not pay for it. */
#define SHMRUN_CALL_PC() (shmrun_call_pc = (uintptr_t)__builtin_extract_return_addr(__builtin_return_address(0)))
#define B(p) ((char *)(uintptr_t)(p))

/* Pointer arguments: one the call must read or write through (an output,
 * a handle it updates, an array or a string it needs) that is NULL is
 * MPI_ERR_ARG naming it, as MPICH's and Open MPI's parameter checks make
 * it, raised on the handler the call's other errors go to: its
 * communicator's (ARG_COMM), its window's (ARG_WIN), MPI_COMM_SELF's for a
 * call with neither (ARG_SELF). A compare in C: before a fast path that
 * reads through the pointer, after one that leaves a NULL to Go. Data
 * buffers are not checked (NULL is MPI_BOTTOM there, which a derived
 * type's absolute addresses make legal: the Go half refuses what it
 * cannot take), nor a status the call fills (NULL is MPI_STATUS_IGNORE).
 * The call's name is the function's, less its P. */
#define ARG_COMM(p, comm)                                                                        \
	do {                                                                                     \
		if ((p) == NULL)                                                                 \
			return shmRaise(B(__func__ + 1), #p " is NULL", MPI_ERR_ARG, H(comm));   \
	} while (0)
/* ARG_COLL is ARG_COMM for a collective call of kind over comm: the
 * other ranks' call fails too (shmRefuseColl), instead of waiting for
 * this rank's. */
#define ARG_COLL(p, comm, kind)                                                                                  \
	do {                                                                                                     \
		if ((p) == NULL)                                                                                 \
			return shmRefuseColl(B(__func__ + 1), #p " is NULL", MPI_ERR_ARG, H(comm), SHMRUN_COLL_##kind); \
	} while (0)
#define ARG_WIN(p, win)                                                                          \
	do {                                                                                     \
		if ((p) == NULL)                                                                 \
			return shmRaiseWin(B(__func__ + 1), #p " is NULL", MPI_ERR_ARG, H(win)); \
	} while (0)
#define ARG_SELF(p) ARG_COMM(p, MPI_COMM_SELF)

/* ---- environment ---------------------------------------------------- */

int PMPI_Init(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return shmInit(MPI_THREAD_SINGLE, NULL, "MPI_Init");
}

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	(void)argc;
	(void)argv;
	ARG_SELF(provided);
	return shmInit(required, provided, "MPI_Init_thread");
}

static void shmrun_bsend_gone(MPI_Comm comm);
int PMPI_Finalize(void)
{
	shmrun_bsend_gone(MPI_COMM_NULL);
	return shmFinalize();
}
int PMPI_Initialized(int *flag)
{
	ARG_SELF(flag);
	return shmInitialized(flag);
}
int PMPI_Finalized(int *flag)
{
	ARG_SELF(flag);
	return shmFinalized(flag);
}
int PMPI_Query_thread(int *provided)
{
	ARG_SELF(provided);
	return shmQueryThread(provided);
}
int PMPI_Is_thread_main(int *flag)
{
	ARG_SELF(flag);
	return shmIsThreadMain(flag);
}
int PMPI_Abort(MPI_Comm comm, int errorcode) { return shmAbort(H(comm), errorcode); }
double PMPI_Wtime(void) { return shmWtime(); }
double PMPI_Wtick(void) { return shmWtick(); }
int PMPI_Get_processor_name(char *name, int *resultlen)
{
	ARG_SELF(name);
	ARG_SELF(resultlen);
	return shmGetProcessorName(name, resultlen);
}
int PMPI_Get_library_version(char *version, int *resultlen)
{
	ARG_SELF(version);
	ARG_SELF(resultlen);
	return shmGetLibraryVersion(version, resultlen);
}
int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
	ARG_SELF(string);
	ARG_SELF(resultlen);
	return shmErrorString(errorcode, string, resultlen);
}
int PMPI_Error_class(int errorcode, int *errorclass)
{
	ARG_SELF(errorclass);
	return shmErrorClass(errorcode, errorclass);
}
int PMPI_Add_error_class(int *errorclass)
{
	ARG_SELF(errorclass);
	return shmAddErrorClass(errorclass);
}
int PMPI_Add_error_code(int errorclass, int *errorcode)
{
	ARG_SELF(errorcode);
	return shmAddErrorCode(errorclass, errorcode);
}
int PMPI_Add_error_string(int errorcode, const char *string)
{
	ARG_SELF(string);
	return shmAddErrorString(errorcode, (char *)string);
}
int PMPI_Remove_error_class(int errorclass) { return shmRemoveError(errorclass, 0); }
int PMPI_Remove_error_code(int errorcode) { return shmRemoveError(errorcode, 1); }
int PMPI_Remove_error_string(int errorcode) { return shmRemoveError(errorcode, 2); }

int PMPI_Get_version(int *version, int *subversion)
{
	ARG_SELF(version);
	ARG_SELF(subversion);
	*version = MPI_VERSION;
	*subversion = MPI_SUBVERSION;
	return MPI_SUCCESS;
}

int PMPI_Abi_get_version(int *abi_major, int *abi_minor)
{
	ARG_SELF(abi_major);
	ARG_SELF(abi_minor);
	*abi_major = MPI_ABI_VERSION;
	*abi_minor = MPI_ABI_SUBVERSION;
	return MPI_SUCCESS;
}

int PMPI_Abi_get_info(MPI_Info *info)
{
	char v[8];
	ARG_SELF(info);
	int rc = shmInfoCreate(HP(info));
	if (rc != MPI_SUCCESS)
		return rc;
	snprintf(v, sizeof v, "%d", (int)sizeof(MPI_Aint));
	shmInfoSet(H(*info), "mpi_aint_size", v);
	snprintf(v, sizeof v, "%d", (int)sizeof(MPI_Count));
	shmInfoSet(H(*info), "mpi_count_size", v);
	snprintf(v, sizeof v, "%d", (int)sizeof(MPI_Offset));
	shmInfoSet(H(*info), "mpi_offset_size", v);
	return MPI_SUCCESS;
}

int PMPI_Abi_get_fortran_info(MPI_Info *info)
{
	ARG_SELF(info);
	*info = MPI_INFO_NULL; /* no Fortran here */
	return MPI_SUCCESS;
}

MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) { return base + disp; }
MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) { return addr1 - addr2; }

int PMPI_Get_address(const void *location, MPI_Aint *address)
{
	ARG_SELF(address);
	*address = (MPI_Aint)(intptr_t)location;
	return MPI_SUCCESS;
}

/* The profiling interface's control (MPI 4.1 §15.2.4): the library has
 * no profiler of its own, so every level is valid and does nothing (a
 * tool that wraps MPI_Pcontrol sees the call). */
int PMPI_Pcontrol(const int level, ...)
{
	(void)level;
	return MPI_SUCCESS;
}

/* ---- communicators and groups ------------------------------------------ */

int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
	ARG_COMM(rank, comm);
	return shmCommRank(H(comm), rank);
}
int PMPI_Comm_size(MPI_Comm comm, int *size)
{
	ARG_COMM(size, comm);
	return shmCommSize(H(comm), size);
}
/* The calls that make a communicator refuse a NULL on this rank alone,
 * as they do their other arguments: the other ranks are left in the
 * call (an erroneous program; its handler has the error). */
int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
	ARG_COLL(newcomm, comm, DUP);
	return shmCommDup(H(comm), HP(newcomm));
}
int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
	ARG_COLL(newcomm, comm, DUP);
	return shmCommDupInfo(H(comm), H(info), HP(newcomm));
}
/* A NULL newcomm or request fails the other ranks' call too (their job's
 * round), as a nonblocking collective's NULL request does. */
int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
	ARG_COLL(newcomm, comm, DUP);
	ARG_COLL(request, comm, DUP);
	return shmCommIdup(H(comm), H(MPI_INFO_NULL), 0, HP(newcomm), HP(request));
}
int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
	ARG_COLL(newcomm, comm, DUP);
	ARG_COLL(request, comm, DUP);
	return shmCommIdup(H(comm), H(info), 1, HP(newcomm), HP(request));
}
int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
	return shmCommSetInfo(H(comm), H(info));
}
int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
	ARG_COMM(info_used, comm);
	return shmCommGetInfo(H(comm), HP(info_used));
}
int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
	ARG_COLL(newcomm, comm, SPLIT);
	return shmCommSplit(H(comm), color, key, HP(newcomm));
}
int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
	ARG_COLL(newcomm, comm, SPLIT_TYPE);
	return shmCommSplitType(H(comm), split_type, key, H(info), HP(newcomm));
}
int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
	ARG_COLL(newcomm, comm, CREATE);
	return shmCommCreate(H(comm), H(group), HP(newcomm));
}
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
	ARG_COMM(newcomm, comm);
	return shmCommCreateGroup(H(comm), H(group), tag, HP(newcomm));
}
int PMPI_Comm_free(MPI_Comm *comm)
{
	ARG_SELF(comm);
	if (*comm != MPI_COMM_WORLD && *comm != MPI_COMM_SELF)
		shmrun_bsend_gone(*comm);
	return shmCommFree(HP(comm));
}
int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
	ARG_COMM(result, comm1);
	return shmCommCompare(H(comm1), H(comm2), result);
}
int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
	ARG_COMM(group, comm);
	return shmCommGroup(H(comm), HP(group));
}
/* Every communicator of shmrun is an intracommunicator: the remote
 * group's calls are MPI_ERR_COMM on one (shmCommRemote). */
int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
	ARG_COMM(flag, comm);
	return shmCommTestInter(H(comm), flag);
}
int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
	ARG_COMM(size, comm);
	return shmCommRemote(H(comm), B("MPI_Comm_remote_size"));
}
int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
	ARG_COMM(group, comm);
	return shmCommRemote(H(comm), B("MPI_Comm_remote_group"));
}
int PMPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
	ARG_COMM(comm_name, comm);
	return shmCommSetName(H(comm), B(comm_name));
}
int PMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
	ARG_COMM(comm_name, comm);
	ARG_COMM(resultlen, comm);
	return shmCommGetName(H(comm), comm_name, resultlen);
}
int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) { return shmCommSetErrhandler(H(comm), H(errhandler)); }
int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
	ARG_COMM(errhandler, comm);
	return shmCommGetErrhandler(H(comm), HP(errhandler));
}
int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *comm_errhandler_fn, MPI_Errhandler *errhandler)
{
	ARG_SELF(comm_errhandler_fn);
	ARG_SELF(errhandler);
	return shmCreateErrhandler(H(comm_errhandler_fn), 0, HP(errhandler));
}
int PMPI_Errhandler_free(MPI_Errhandler *errhandler)
{
	ARG_SELF(errhandler);
	return shmErrhandlerFree(HP(errhandler));
}
/* Attribute caching (attrcache.go): the program's keys' values are
 * Go's; MPI_Comm_get_attr's and MPI_Win_get_attr's predefined keys stay
 * theirs (user is 0 for those). */
#define ATTR_CALLS(K, KIND, T, OBJ)                                                                                       \
	int PMPI_##K##_create_keyval(MPI_##K##_copy_attr_function *copy_fn, MPI_##K##_delete_attr_function *delete_fn, \
				     int *keyval, void *extra_state)                                                   \
	{                                                                                                         \
		ARG_SELF(keyval);                                                                                 \
		return shmKeyvalCreate(KIND, H(copy_fn), H(delete_fn), keyval, H(extra_state));                   \
	}                                                                                                         \
	int PMPI_##K##_free_keyval(int *keyval)                                                                   \
	{                                                                                                         \
		ARG_SELF(keyval);                                                                                 \
		return shmKeyvalFree(KIND, keyval);                                                               \
	}                                                                                                         \
	int PMPI_##K##_set_attr(T OBJ, int keyval, void *attribute_val)                                           \
	{                                                                                                         \
		return shmAttrSet(KIND, H(OBJ), keyval, H(attribute_val));                                        \
	}                                                                                                         \
	int PMPI_##K##_delete_attr(T OBJ, int keyval) { return shmAttrDelete(KIND, H(OBJ), keyval); }
ATTR_CALLS(Comm, 0, MPI_Comm, comm)
ATTR_CALLS(Win, 1, MPI_Win, win)
ATTR_CALLS(Type, 2, MPI_Datatype, datatype)
int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag)
{
	int user;
	ARG_COMM(attribute_val, comm);
	ARG_COMM(flag, comm);
	int rc = shmAttrGet(0, H(comm), comm_keyval, (uintptr_t *)attribute_val, flag, &user);
	if (user)
		return rc;
	return shmCommGetAttr(H(comm), comm_keyval, (int **)attribute_val, flag);
}
int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag)
{
	int user;
	ARG_SELF(attribute_val);
	ARG_SELF(flag);
	return shmAttrGet(2, H(datatype), type_keyval, (uintptr_t *)attribute_val, flag, &user);
}
int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) { return shmCallErrhandler(H(comm), errorcode, 0); }
int PMPI_Win_call_errhandler(MPI_Win win, int errorcode) { return shmCallErrhandler(H(win), errorcode, 1); }

/* A group's errors are MPI_COMM_SELF's (it has no handler); its arrays
 * are needed when they have elements. */
int PMPI_Group_size(MPI_Group group, int *size)
{
	ARG_SELF(size);
	return shmGroupSize(H(group), size);
}
int PMPI_Group_rank(MPI_Group group, int *rank)
{
	ARG_SELF(rank);
	return shmGroupRank(H(group), rank);
}
int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
	if (n > 0)
		ARG_SELF(ranks);
	ARG_SELF(newgroup);
	return shmGroupInclExcl(H(group), n, (int *)(uintptr_t)ranks, 0, HP(newgroup));
}
int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
	if (n > 0)
		ARG_SELF(ranks);
	ARG_SELF(newgroup);
	return shmGroupInclExcl(H(group), n, (int *)(uintptr_t)ranks, 1, HP(newgroup));
}
int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
	if (n > 0)
		ARG_SELF(ranges);
	ARG_SELF(newgroup);
	return shmGroupRange(H(group), n, ranges == NULL ? NULL : &ranges[0][0], 0, HP(newgroup));
}
int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
	if (n > 0)
		ARG_SELF(ranges);
	ARG_SELF(newgroup);
	return shmGroupRange(H(group), n, ranges == NULL ? NULL : &ranges[0][0], 1, HP(newgroup));
}
int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
	ARG_SELF(newgroup);
	return shmGroupSetOp(H(group1), H(group2), 0, HP(newgroup));
}
int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
	ARG_SELF(newgroup);
	return shmGroupSetOp(H(group1), H(group2), 1, HP(newgroup));
}
int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
	ARG_SELF(newgroup);
	return shmGroupSetOp(H(group1), H(group2), 2, HP(newgroup));
}
int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[])
{
	if (n > 0) {
		ARG_SELF(ranks1);
		ARG_SELF(ranks2);
	}
	return shmGroupTranslateRanks(H(group1), n, (int *)(uintptr_t)ranks1, H(group2), ranks2);
}
int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
	ARG_SELF(result);
	return shmGroupCompare(H(group1), H(group2), result);
}
int PMPI_Group_free(MPI_Group *group)
{
	ARG_SELF(group);
	return shmGroupFree(HP(group));
}

/* ---- Cartesian topologies ------------------------------------------------ */

/* MPI_Cart_create and MPI_Cart_sub leave their NULL checks to Go, which
 * refuses them collectively (they agree on their arguments first). */
int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm *comm_cart)
{
	return shmCartCreate(H(comm_old), ndims, (int *)(uintptr_t)dims, (int *)(uintptr_t)periods, reorder, HP(comm_cart));
}
int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
	return shmCartSub(H(comm), (int *)(uintptr_t)remain_dims, HP(newcomm));
}
int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
	ARG_COMM(ndims, comm);
	return shmCartdimGet(H(comm), ndims);
}
int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
	return shmCartGet(H(comm), maxdims, dims, periods, coords);
}
int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
	ARG_COMM(rank, comm);
	return shmCartRank(H(comm), (int *)(uintptr_t)coords, rank);
}
int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
	return shmCartCoords(H(comm), rank, maxdims, coords);
}
int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
	ARG_COMM(rank_source, comm);
	ARG_COMM(rank_dest, comm);
	return shmCartShift(H(comm), direction, disp, rank_source, rank_dest);
}
int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
	ARG_COMM(newrank, comm);
	return shmCartMap(H(comm), ndims, (int *)(uintptr_t)dims, (int *)(uintptr_t)periods, newrank);
}
int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
	return shmDimsCreate(nnodes, ndims, dims);
}
int PMPI_Topo_test(MPI_Comm comm, int *status)
{
	ARG_COMM(status, comm);
	return shmTopoTest(H(comm), status);
}

/* ---- info ------------------------------------------------------------- */

int PMPI_Info_create(MPI_Info *info)
{
	ARG_SELF(info);
	return shmInfoCreate(HP(info));
}
int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
	ARG_SELF(key);
	ARG_SELF(value);
	return shmInfoSet(H(info), B(key), B(value));
}
int PMPI_Info_delete(MPI_Info info, const char *key)
{
	ARG_SELF(key);
	return shmInfoDelete(H(info), B(key));
}
int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
	ARG_SELF(key);
	ARG_SELF(value);
	ARG_SELF(flag);
	return shmInfoGet(H(info), B(key), valuelen, value, flag);
}
int PMPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
	ARG_SELF(key);
	ARG_SELF(buflen);
	if (*buflen > 0) /* 0 asks for the length alone */
		ARG_SELF(value);
	ARG_SELF(flag);
	return shmInfoGetString(H(info), B(key), buflen, value, flag);
}
int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
	ARG_SELF(key);
	ARG_SELF(valuelen);
	ARG_SELF(flag);
	return shmInfoGetValuelen(H(info), B(key), valuelen, flag);
}
int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
	ARG_SELF(nkeys);
	return shmInfoGetNkeys(H(info), nkeys);
}
int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
	ARG_SELF(key);
	return shmInfoGetNthkey(H(info), n, key);
}
int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
	ARG_SELF(newinfo);
	return shmInfoDup(H(info), HP(newinfo));
}
/* MPI_INFO_ENV's contents, at any time: they come from the process's own
 * command line (as MPI_INFO_ENV's do), not from argc and argv. */
int PMPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
	(void)argc;
	(void)argv;
	ARG_SELF(info);
	return shmInfoCreateEnv(HP(info));
}
int PMPI_Info_free(MPI_Info *info)
{
	ARG_SELF(info);
	return shmInfoFree(HP(info));
}

/* ---- point-to-point ------------------------------------------------------ */

#define SEND(NAME, CT, MODE)                                                                     \
	int PMPI_##NAME(const void *buf, CT count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) \
	{                                                                                        \
		if (MODE == 0 && shmrun_fast_send(buf, count, datatype, dest, tag, comm, NULL) == 0)  \
			return MPI_SUCCESS;                                                          \
		return shmSend(B(buf), count, H(datatype), dest, tag, H(comm), MODE, "MPI_" #NAME);  \
	}
SEND(Send, int, 0)
SEND(Send_c, MPI_Count, 0)
SEND(Ssend, int, 1)
SEND(Ssend_c, MPI_Count, 1)
/* No ready mode of its own: a standard send does what it promises (a
 * ready send's receive is posted). Buffered sends: shmrun_bsend. */
SEND(Rsend, int, 0)
SEND(Rsend_c, MPI_Count, 0)

#define ISEND(NAME, CT, MODE)                                                                                  \
	int PMPI_##NAME(const void *buf, CT count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,            \
			MPI_Request *request)                                                                  \
	{                                                                                                      \
		if (MODE == 0 && request != NULL &&                                                            \
		    shmrun_fast_send(buf, count, datatype, dest, tag, comm, request) == 0)                     \
			return MPI_SUCCESS;                                                                    \
		ARG_COMM(request, comm);                                                                       \
		return shmIsend(B(buf), count, H(datatype), dest, tag, H(comm), MODE, HP(request), "MPI_" #NAME); \
	}
ISEND(Isend, int, 0)
ISEND(Isend_c, MPI_Count, 0)
ISEND(Issend, int, 1)
ISEND(Issend_c, MPI_Count, 1)
ISEND(Irsend, int, 0)
ISEND(Irsend_c, MPI_Count, 0)

#define RECV(NAME, CT)                                                                                         \
	int PMPI_##NAME(void *buf, CT count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status) \
	{                                                                                                      \
		if (shmrun_fast_recv(buf, count, datatype, source, tag, comm, status) == 0)                        \
			return MPI_SUCCESS;                                                                    \
		return shmRecv(B(buf), count, H(datatype), source, tag, H(comm), status, "MPI_" #NAME);            \
	}
RECV(Recv, int)
RECV(Recv_c, MPI_Count)

#define IRECV(NAME, CT)                                                                                         \
	int PMPI_##NAME(void *buf, CT count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request) \
	{                                                                                                       \
		if (shmrun_fast_irecv(buf, count, datatype, source, tag, comm, request) == 0)                         \
			return MPI_SUCCESS;                                                                     \
		ARG_COMM(request, comm);                                                                        \
		return shmIrecv(B(buf), count, H(datatype), source, tag, H(comm), HP(request), "MPI_" #NAME);       \
	}
IRECV(Irecv, int)
IRECV(Irecv_c, MPI_Count)

#define SENDRECV(NAME, CT)                                                                                           \
	int PMPI_##NAME(const void *sendbuf, CT sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,  \
			CT recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status) \
	{                                                                                                            \
		return shmSendrecv(B(sendbuf), sendcount, H(sendtype), dest, sendtag, B(recvbuf), recvcount, H(recvtype), \
				   source, recvtag, H(comm), status, "MPI_" #NAME);                                      \
	}
SENDRECV(Sendrecv, int)
SENDRECV(Sendrecv_c, MPI_Count)

#define SENDRECV_REPLACE(NAME, CT)                                                                             \
	int PMPI_##NAME(void *buf, CT count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag, \
			MPI_Comm comm, MPI_Status *status)                                                     \
	{                                                                                                      \
		return shmSendrecvReplace(B(buf), count, H(datatype), dest, sendtag, source, recvtag, H(comm), status, \
					  "MPI_" #NAME);                                                       \
	}
SENDRECV_REPLACE(Sendrecv_replace, int)
SENDRECV_REPLACE(Sendrecv_replace_c, MPI_Count)

/* MPI 4.0's nonblocking forms: one request for the receive and the send. */
#define ISENDRECV(NAME, CT)                                                                                           \
	int PMPI_##NAME(const void *sendbuf, CT sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,   \
			CT recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request *request) \
	{                                                                                                             \
		ARG_COMM(request, comm);                                                                              \
		return shmIsendrecv(B(sendbuf), sendcount, H(sendtype), dest, sendtag, B(recvbuf), recvcount, H(recvtype), \
				    source, recvtag, H(comm), HP(request), "MPI_" #NAME);                                  \
	}
ISENDRECV(Isendrecv, int)
ISENDRECV(Isendrecv_c, MPI_Count)

#define ISENDRECV_REPLACE(NAME, CT)                                                                            \
	int PMPI_##NAME(void *buf, CT count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag, \
			MPI_Comm comm, MPI_Request *request)                                                   \
	{                                                                                                      \
		ARG_COMM(request, comm);                                                                       \
		return shmIsendrecvReplace(B(buf), count, H(datatype), dest, sendtag, source, recvtag, H(comm),      \
					   HP(request), "MPI_" #NAME);                                          \
	}
ISENDRECV_REPLACE(Isendrecv_replace, int)
ISENDRECV_REPLACE(Isendrecv_replace_c, MPI_Count)

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status) { return shmProbe(source, tag, H(comm), 1, NULL, status); }
int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
	ARG_COMM(flag, comm);
	return shmProbe(source, tag, H(comm), 0, flag, status);
}
int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
	ARG_COMM(message, comm);
	return shmMprobe(source, tag, H(comm), 1, NULL, HP(message), status);
}
int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status)
{
	ARG_COMM(flag, comm);
	ARG_COMM(message, comm);
	return shmMprobe(source, tag, H(comm), 0, flag, HP(message), status);
}
/* A message handle's errors are MPI_COMM_SELF's (shmMrecv): so are those
 * of its pointer. */
int PMPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status)
{
	ARG_SELF(message);
	return shmMrecv(B(buf), count, H(datatype), HP(message), 1, NULL, status);
}
int PMPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status)
{
	ARG_SELF(message);
	return shmMrecv(B(buf), count, H(datatype), HP(message), 1, NULL, status);
}
int PMPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request)
{
	ARG_SELF(message);
	ARG_SELF(request);
	return shmMrecv(B(buf), count, H(datatype), HP(message), 0, HP(request), NULL);
}
int PMPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request)
{
	ARG_SELF(message);
	ARG_SELF(request);
	return shmMrecv(B(buf), count, H(datatype), HP(message), 0, HP(request), NULL);
}

#define SEND_INIT(NAME, CT, MODE)                                                                               \
	int PMPI_##NAME(const void *buf, CT count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,            \
			MPI_Request *request)                                                                  \
	{                                                                                                      \
		ARG_COMM(request, comm);                                                                       \
		return shmPersistInit(B(buf), count, H(datatype), dest, tag, H(comm), 1, MODE, HP(request), "MPI_" #NAME); \
	}
SEND_INIT(Send_init, int, 0)
SEND_INIT(Send_init_c, MPI_Count, 0)
SEND_INIT(Ssend_init, int, 1)
SEND_INIT(Ssend_init_c, MPI_Count, 1)
SEND_INIT(Rsend_init, int, 0)
SEND_INIT(Rsend_init_c, MPI_Count, 0)
#define RECV_INIT(NAME, CT)                                                                                      \
	int PMPI_##NAME(void *buf, CT count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,                \
			MPI_Request *request)                                                                    \
	{                                                                                                        \
		ARG_COMM(request, comm);                                                                         \
		return shmPersistInit(B(buf), count, H(datatype), source, tag, H(comm), 0, 0, HP(request), "MPI_" #NAME); \
	}
RECV_INIT(Recv_init, int)
RECV_INIT(Recv_init_c, MPI_Count)
/* The completion calls' errors with no request to blame are
 * MPI_COMM_SELF's (reqOf); so are those of their pointers. Their fast
 * paths leave a NULL to the checks after them. */
int PMPI_Start(MPI_Request *request)
{
	ARG_SELF(request);
	if (shmrun_fast_pstartall(1, request) == 1)
		return MPI_SUCCESS;
	return shmStart(HP(request));
}
int PMPI_Startall(int count, MPI_Request array_of_requests[])
{
	if (count > 0)
		ARG_SELF(array_of_requests);
	int i = count > 0 ? shmrun_fast_pstartall(count, array_of_requests) : 0;
	if (count > 0 && i == count)
		return MPI_SUCCESS;
	return shmStartall(count - i, HP(array_of_requests + i));
}

int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
	ARG_SELF(request);
	if (SHMRUN_IS_REQ_SENT(*request)) {
		*request = MPI_REQUEST_NULL;
		shmrun_sent_status(status);
		return MPI_SUCCESS;
	}
	if (SHMRUN_IS_REQ_CQ(*request) && shmrun_fast_reqs(1, request, status, 1, NULL) == 0)
		return MPI_SUCCESS;
	return shmWait(HP(request), status);
}
int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
	ARG_SELF(request);
	ARG_SELF(flag);
	if (SHMRUN_IS_REQ_CQ(*request) && shmrun_fast_reqs(1, request, status, 0, flag) == 0)
		return MPI_SUCCESS;
	return shmTest(HP(request), flag, status);
}
int PMPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
	if (shmrun_fast_reqs(count, array_of_requests, array_of_statuses, 1, NULL) == 0)
		return MPI_SUCCESS;
	if (count > 0)
		ARG_SELF(array_of_requests);
	return shmWaitall(count, HP(array_of_requests), array_of_statuses, 1, NULL);
}
int PMPI_Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[])
{
	if (flag != NULL && shmrun_fast_reqs(count, array_of_requests, array_of_statuses, 0, flag) == 0)
		return MPI_SUCCESS;
	if (count > 0)
		ARG_SELF(array_of_requests);
	ARG_SELF(flag);
	return shmWaitall(count, HP(array_of_requests), array_of_statuses, 0, flag);
}
int PMPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
	if (shmrun_fast_any(count, array_of_requests, index, status, 1, NULL) == 0)
		return MPI_SUCCESS;
	if (count > 0)
		ARG_SELF(array_of_requests);
	ARG_SELF(index);
	return shmWaitany(count, HP(array_of_requests), index, 1, NULL, status);
}
int PMPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag, MPI_Status *status)
{
	if (shmrun_fast_any(count, array_of_requests, index, status, 0, flag) == 0)
		return MPI_SUCCESS;
	if (count > 0)
		ARG_SELF(array_of_requests);
	ARG_SELF(index);
	ARG_SELF(flag);
	return shmWaitany(count, HP(array_of_requests), index, 0, flag, status);
}
int PMPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
		  MPI_Status array_of_statuses[])
{
	if (shmrun_fast_some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, 1) == 0)
		return MPI_SUCCESS;
	if (incount > 0) {
		ARG_SELF(array_of_requests);
		ARG_SELF(array_of_indices);
	}
	ARG_SELF(outcount);
	return shmWaitsome(incount, HP(array_of_requests), outcount, array_of_indices, array_of_statuses, 1);
}
int PMPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
		  MPI_Status array_of_statuses[])
{
	if (shmrun_fast_some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, 0) == 0)
		return MPI_SUCCESS;
	if (incount > 0) {
		ARG_SELF(array_of_requests);
		ARG_SELF(array_of_indices);
	}
	ARG_SELF(outcount);
	return shmWaitsome(incount, HP(array_of_requests), outcount, array_of_indices, array_of_statuses, 0);
}
int PMPI_Request_free(MPI_Request *request)
{
	ARG_SELF(request);
	return shmRequestFree(HP(request));
}
int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
	ARG_SELF(flag);
	return shmRequestGetStatus(H(request), flag, status);
}
/* MPI 4.1's Request_get_status forms of Testall, Testany and Testsome:
 * the requests stay as they are. */
int PMPI_Request_get_status_all(int count, const MPI_Request array_of_requests[], int *flag,
				MPI_Status array_of_statuses[])
{
	if (count > 0)
		ARG_SELF(array_of_requests);
	ARG_SELF(flag);
	return shmRequestGetStatusAll(count, (uintptr_t *)(uintptr_t)array_of_requests, flag, array_of_statuses);
}
int PMPI_Request_get_status_any(int count, const MPI_Request array_of_requests[], int *index, int *flag,
				MPI_Status *status)
{
	if (count > 0)
		ARG_SELF(array_of_requests);
	ARG_SELF(index);
	ARG_SELF(flag);
	return shmRequestGetStatusAny(count, (uintptr_t *)(uintptr_t)array_of_requests, index, flag, status);
}
int PMPI_Request_get_status_some(int incount, const MPI_Request array_of_requests[], int *outcount,
				 int array_of_indices[], MPI_Status array_of_statuses[])
{
	if (incount > 0) {
		ARG_SELF(array_of_requests);
		ARG_SELF(array_of_indices);
	}
	ARG_SELF(outcount);
	return shmRequestGetStatusSome(incount, (uintptr_t *)(uintptr_t)array_of_requests, outcount, array_of_indices,
				       array_of_statuses);
}
int PMPI_Cancel(MPI_Request *request)
{
	ARG_SELF(request);
	return shmCancel(HP(request));
}
/* A status the call reads is no MPI_STATUS_IGNORE: NULL is an error. */
int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
	ARG_SELF(status);
	ARG_SELF(flag);
	return shmTestCancelled((MPI_Status *)(uintptr_t)status, flag);
}

static int count_of(const MPI_Status *status, MPI_Datatype datatype, int elements, int *count)
{
	int64_t n;
	int rc = shmGetCount((MPI_Status *)(uintptr_t)status, H(datatype), &n, elements);
	if (rc != MPI_SUCCESS)
		return rc;
	*count = n == MPI_UNDEFINED || n > INT32_MAX ? MPI_UNDEFINED : (int)n;
	return MPI_SUCCESS;
}
int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
	ARG_SELF(status);
	ARG_SELF(count);
	return count_of(status, datatype, 0, count);
}
int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
	ARG_SELF(status);
	ARG_SELF(count);
	return count_of(status, datatype, 1, count);
}
/* The MPI_Count forms: _c, and _x (MPI-3's, deprecated in 4.1, in the
 * ABI still). */
#define GET_COUNT_C(NAME, ELEMENTS)                                                                  \
	int PMPI_##NAME(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)             \
	{                                                                                            \
		ARG_SELF(status);                                                                    \
		ARG_SELF(count);                                                                     \
		return shmGetCount((MPI_Status *)(uintptr_t)status, H(datatype), (int64_t *)count, ELEMENTS); \
	}
GET_COUNT_C(Get_count_c, 0)
GET_COUNT_C(Get_elements_c, 1)
GET_COUNT_C(Get_elements_x, 1)
/* MPI_Status_set_elements: the status's byte count becomes that of count
 * basic elements of datatype (shmStatusSetElements). */
#define STATUS_SET_ELEMENTS(NAME, CT)                                                          \
	int PMPI_##NAME(MPI_Status *status, MPI_Datatype datatype, CT count)                     \
	{                                                                                      \
		ARG_SELF(status);                                                              \
		return shmStatusSetElements(status, H(datatype), count, B("MPI_" #NAME));        \
	}
STATUS_SET_ELEMENTS(Status_set_elements, int)
STATUS_SET_ELEMENTS(Status_set_elements_c, MPI_Count)
STATUS_SET_ELEMENTS(Status_set_elements_x, MPI_Count)
/* The cancelled flag is MPI_internal[2] (p2p.go's setStatus). */
int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
	ARG_SELF(status);
	status->MPI_internal[2] = flag != 0;
	return MPI_SUCCESS;
}
#define STATUS_SET(NAME, FIELD, T, V)            \
	int PMPI_##NAME(MPI_Status *status, T V) \
	{                                        \
		ARG_SELF(status);                \
		status->FIELD = V;               \
		return MPI_SUCCESS;              \
	}
#define STATUS_GET(NAME, FIELD, T, V)                   \
	int PMPI_##NAME(const MPI_Status *status, T *V) \
	{                                               \
		ARG_SELF(status);                       \
		ARG_SELF(V);                            \
		*V = status->FIELD;                     \
		return MPI_SUCCESS;                     \
	}
STATUS_SET(Status_set_source, MPI_SOURCE, int, source)
STATUS_SET(Status_set_tag, MPI_TAG, int, tag)
STATUS_SET(Status_set_error, MPI_ERROR, int, err)
STATUS_GET(Status_get_source, MPI_SOURCE, int, source)
STATUS_GET(Status_get_tag, MPI_TAG, int, tag)
STATUS_GET(Status_get_error, MPI_ERROR, int, err)

/* ---- collectives ---------------------------------------------------------- */

int PMPI_Barrier(MPI_Comm comm)
{
	int rc;
	if (shmrun_fast_barrier(comm, &rc) == 0)
		return rc;
	return shmBarrier(H(comm));
}
int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
	ARG_COMM(request, comm);
	return shmIbarrier(H(comm), HP(request));
}

#define BCAST(NAME, CT)                                                                        \
	int PMPI_##NAME(void *buffer, CT count, MPI_Datatype datatype, int root, MPI_Comm comm) \
	{                                                                                      \
		int rc;                                                                        \
		if (shmrun_fast_bcast(buffer, count, datatype, root, comm, &rc) == 0)          \
			return rc;                                                             \
		return shmBcast(B(buffer), count, H(datatype), root, H(comm));                   \
	}
BCAST(Bcast, int)
BCAST(Bcast_c, MPI_Count)

#define IN_PLACE(p) ((p) == MPI_IN_PLACE)

#define REDUCE(NAME, CT)                                                                                          \
	int PMPI_##NAME(const void *sendbuf, void *recvbuf, CT count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm) \
	{                                                                                                         \
		int rc;                                                                                           \
		if (shmrun_fast_reduce(sendbuf, recvbuf, count, datatype, op, root, comm, SHMRUN_COLL_REDUCE, &rc) == 0) \
			return rc;                                                                                \
		return shmReduce(B(sendbuf), B(recvbuf), count, H(datatype), H(op), root, H(comm), 0, IN_PLACE(sendbuf)); \
	}
REDUCE(Reduce, int)
REDUCE(Reduce_c, MPI_Count)

#define REDUCE_ALL(NAME, CT, KIND)                                                                               \
	int PMPI_##NAME(const void *sendbuf, void *recvbuf, CT count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) \
	{                                                                                                        \
		int rc;                                                                                          \
		if (KIND == 1 && shmrun_fast_reduce(sendbuf, recvbuf, count, datatype, op, -1, comm, SHMRUN_COLL_ALLREDUCE, &rc) == 0) \
			return rc;                                                                               \
		if (KIND >= 3 && shmrun_fast_scan(sendbuf, recvbuf, count, datatype, op, comm,                   \
						  KIND == 3 ? SHMRUN_COLL_SCAN : SHMRUN_COLL_EXSCAN, &rc) == 0)  \
			return rc;                                                                               \
		return shmReduce(B(sendbuf), B(recvbuf), count, H(datatype), H(op), 0, H(comm), KIND, IN_PLACE(sendbuf)); \
	}
REDUCE_ALL(Allreduce, int, 1)
REDUCE_ALL(Allreduce_c, MPI_Count, 1)
REDUCE_ALL(Scan, int, 3)
REDUCE_ALL(Scan_c, MPI_Count, 3)
REDUCE_ALL(Exscan, int, 4)
REDUCE_ALL(Exscan_c, MPI_Count, 4)

#define REDUCE_SCATTER_BLOCK(NAME, CT)                                                                               \
	int PMPI_##NAME(const void *sendbuf, void *recvbuf, CT recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) \
	{                                                                                                            \
		int rc;                                                                                              \
		if (shmrun_fast_reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, &rc) == 0)     \
			return rc;                                                                                   \
		return shmReduce(B(sendbuf), B(recvbuf), recvcount, H(datatype), H(op), 0, H(comm), 2, IN_PLACE(sendbuf)); \
	}
REDUCE_SCATTER_BLOCK(Reduce_scatter_block, int)
REDUCE_SCATTER_BLOCK(Reduce_scatter_block_c, MPI_Count)

#define MOVE_ROOT(NAME, CT, KIND, INPLACE)                                                                      \
	int PMPI_##NAME(const void *sendbuf, CT sendcount, MPI_Datatype sendtype, void *recvbuf, CT recvcount,  \
			MPI_Datatype recvtype, int root, MPI_Comm comm)                                         \
	{                                                                                                       \
		int rc;                                                                                         \
		if (shmrun_fast_move(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,    \
				     KIND == 0 ? SHMRUN_COLL_GATHER : SHMRUN_COLL_SCATTER, &rc) == 0)            \
			return rc;                                                                              \
		return shmMove(B(sendbuf), sendcount, H(sendtype), B(recvbuf), recvcount, H(recvtype), root, H(comm), \
			       KIND, INPLACE);                                                                  \
	}
MOVE_ROOT(Gather, int, 0, IN_PLACE(sendbuf))
MOVE_ROOT(Gather_c, MPI_Count, 0, IN_PLACE(sendbuf))
MOVE_ROOT(Scatter, int, 1, IN_PLACE(recvbuf))
MOVE_ROOT(Scatter_c, MPI_Count, 1, IN_PLACE(recvbuf))

#define MOVE_ALL(NAME, CT, KIND)                                                                               \
	int PMPI_##NAME(const void *sendbuf, CT sendcount, MPI_Datatype sendtype, void *recvbuf, CT recvcount, \
			MPI_Datatype recvtype, MPI_Comm comm)                                                  \
	{                                                                                                      \
		int rc;                                                                                        \
		if (shmrun_fast_move(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, -1, comm,     \
				     KIND == 2 ? SHMRUN_COLL_ALLGATHER : SHMRUN_COLL_ALLTOALL, &rc) == 0)       \
			return rc;                                                                             \
		return shmMove(B(sendbuf), sendcount, H(sendtype), B(recvbuf), recvcount, H(recvtype), 0, H(comm), \
			       KIND, IN_PLACE(sendbuf));                                                       \
	}
MOVE_ALL(Allgather, int, 2)
MOVE_ALL(Allgather_c, MPI_Count, 2)
MOVE_ALL(Alltoall, int, 3)
MOVE_ALL(Alltoall_c, MPI_Count, 3)

/* The v forms: the int forms widen their counts and displacements into
 * scratch arrays for the one implementation (shmMoveV). A NULL array
 * stays NULL: not used here (a non-root), or an error the Go half reports
 * on every rank, naming it. */
static int widen(MPI_Comm comm, const int *counts, const int *displs, int64_t **c, MPI_Aint **d)
{
	int n;
	*c = NULL, *d = NULL;
	if (counts == NULL && displs == NULL)
		return MPI_SUCCESS;
	int rc = PMPI_Comm_size(comm, &n);
	if (rc != MPI_SUCCESS)
		return rc; /* raised there */
	if ((counts != NULL && (*c = malloc((size_t)n * sizeof **c)) == NULL) ||
	    (displs != NULL && (*d = malloc((size_t)n * sizeof **d)) == NULL)) {
		free(*c), free(*d);
		*c = NULL, *d = NULL;
		return shmRaise("a v collective", "no memory for the counts", MPI_ERR_NO_MEM, H(comm));
	}
	for (int i = 0; i < n; i++) {
		if (counts != NULL)
			(*c)[i] = counts[i];
		if (displs != NULL)
			(*d)[i] = displs[i];
	}
	return MPI_SUCCESS;
}

int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
		 const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	int64_t *c;
	MPI_Aint *d;
	int rc = widen(comm, recvcounts, displs, &c, &d);
	if (rc == MPI_SUCCESS)
		rc = shmMoveV(B(sendbuf), sendcount, NULL, NULL, H(sendtype), B(recvbuf), 0, c, d, H(recvtype), root, H(comm), 0,
			      IN_PLACE(sendbuf));
	free(c), free(d);
	return rc;
}
int PMPI_Gatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
		   const MPI_Aint displs[], MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	return shmMoveV(B(sendbuf), sendcount, NULL, NULL, H(sendtype), B(recvbuf), 0, (int64_t *)(uintptr_t)recvcounts,
			(MPI_Aint *)(uintptr_t)displs, H(recvtype), root, H(comm), 0, IN_PLACE(sendbuf));
}
int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf,
		  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	int64_t *c;
	MPI_Aint *d;
	int rc = widen(comm, sendcounts, displs, &c, &d);
	if (rc == MPI_SUCCESS)
		rc = shmMoveV(B(sendbuf), 0, c, d, H(sendtype), B(recvbuf), recvcount, NULL, NULL, H(recvtype), root, H(comm), 1,
			      IN_PLACE(recvbuf));
	free(c), free(d);
	return rc;
}
int PMPI_Scatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[], MPI_Datatype sendtype,
		    void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	return shmMoveV(B(sendbuf), 0, (int64_t *)(uintptr_t)sendcounts, (MPI_Aint *)(uintptr_t)displs, H(sendtype), B(recvbuf),
			recvcount, NULL, NULL, H(recvtype), root, H(comm), 1, IN_PLACE(recvbuf));
}
int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
		    const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
	int64_t *c;
	MPI_Aint *d;
	int rc = widen(comm, recvcounts, displs, &c, &d);
	if (rc == MPI_SUCCESS)
		rc = shmMoveV(B(sendbuf), sendcount, NULL, NULL, H(sendtype), B(recvbuf), 0, c, d, H(recvtype), 0, H(comm), 2,
			      IN_PLACE(sendbuf));
	free(c), free(d);
	return rc;
}
int PMPI_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
		      const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
	return shmMoveV(B(sendbuf), sendcount, NULL, NULL, H(sendtype), B(recvbuf), 0, (int64_t *)(uintptr_t)recvcounts,
			(MPI_Aint *)(uintptr_t)displs, H(recvtype), 0, H(comm), 2, IN_PLACE(sendbuf));
}
int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
		   const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
	int64_t *sc = NULL, *rcn;
	MPI_Aint *sd = NULL, *rd;
	int rc = widen(comm, recvcounts, rdispls, &rcn, &rd);
	if (rc == MPI_SUCCESS && !IN_PLACE(sendbuf))
		rc = widen(comm, sendcounts, sdispls, &sc, &sd);
	if (rc == MPI_SUCCESS)
		rc = shmMoveV(B(sendbuf), 0, sc, sd, H(sendtype), B(recvbuf), 0, rcn, rd, H(recvtype), 0, H(comm), 3,
			      IN_PLACE(sendbuf));
	free(sc), free(sd), free(rcn), free(rd);
	return rc;
}
int PMPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype,
		     void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
	return shmMoveV(B(sendbuf), 0, (int64_t *)(uintptr_t)sendcounts, (MPI_Aint *)(uintptr_t)sdispls, H(sendtype), B(recvbuf), 0,
			(int64_t *)(uintptr_t)recvcounts, (MPI_Aint *)(uintptr_t)rdispls, H(recvtype), 0, H(comm), 3,
			IN_PLACE(sendbuf));
}

/* Alltoallw: each block its own type, displacements in bytes. */
int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
		   const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
	int64_t *sc = NULL, *rcn;
	MPI_Aint *sd = NULL, *rd;
	int rc = widen(comm, recvcounts, rdispls, &rcn, &rd);
	if (rc == MPI_SUCCESS && !IN_PLACE(sendbuf))
		rc = widen(comm, sendcounts, sdispls, &sc, &sd);
	if (rc == MPI_SUCCESS)
		rc = shmAlltoallw(B(sendbuf), sc, sd, (uintptr_t *)(uintptr_t)sendtypes, B(recvbuf), rcn, rd,
				  (uintptr_t *)(uintptr_t)recvtypes, H(comm), IN_PLACE(sendbuf));
	free(sc), free(sd), free(rcn), free(rd);
	return rc;
}
int PMPI_Alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
		     void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
	return shmAlltoallw(B(sendbuf), (int64_t *)(uintptr_t)sendcounts, (MPI_Aint *)(uintptr_t)sdispls,
			    (uintptr_t *)(uintptr_t)sendtypes, B(recvbuf), (int64_t *)(uintptr_t)recvcounts,
			    (MPI_Aint *)(uintptr_t)rdispls, (uintptr_t *)(uintptr_t)recvtypes, H(comm), IN_PLACE(sendbuf));
}

/* Reduce_scatter: an Allreduce of every block, then this rank's block
 * moved into place by Pack and Unpack (which keep a derived type's holes
 * untouched). Correct for any type; it moves n times the data a direct
 * algorithm would, which is what the v form's rare use here is worth.
 * Arguments refused here fail the Allreduce the other ranks make
 * (shmRefuseColl), as the Go half's refusals fail its calls. */
static int reduce_scatter(const char *call, const void *sendbuf, void *recvbuf, const MPI_Count *counts, MPI_Datatype datatype,
			  MPI_Op op, MPI_Comm comm)
{
	int n, me, rc;
	MPI_Count total = 0, off = 0, lb, ext, tlb, text, lo, hi, bytes, psize;
	char why[192];
	if ((rc = PMPI_Comm_size(comm, &n)) != MPI_SUCCESS || (rc = PMPI_Comm_rank(comm, &me)) != MPI_SUCCESS)
		return rc;
	if (counts == NULL)
		return shmRefuseColl(B(call), "recvcounts is NULL", MPI_ERR_ARG, H(comm), SHMRUN_COLL_ALLREDUCE);
	for (int q = 0; q < n; q++) {
		if (counts[q] < 0) {
			snprintf(why, sizeof why, "recvcounts[%d] is %lld, negative", q, (long long)counts[q]);
			return shmRefuseColl(B(call), why, MPI_ERR_COUNT, H(comm), SHMRUN_COLL_ALLREDUCE);
		}
		if (__builtin_add_overflow(total, counts[q], &total))
			return shmRefuseColl(B(call), "the sum of recvcounts overflows MPI_Count", MPI_ERR_COUNT, H(comm),
					     SHMRUN_COLL_ALLREDUCE);
		if (q < me)
			off += counts[q];
	}
	if ((rc = PMPI_Type_get_extent_c(datatype, &lb, &ext)) != MPI_SUCCESS ||
	    (rc = PMPI_Type_get_true_extent_c(datatype, &tlb, &text)) != MPI_SUCCESS)
		return rc;
	/* The scratch buffer holds total instances of the type: element i's
	 * data is at i*ext + [tlb, tlb+text), ext possibly negative. If
	 * instances overlap, the blocks cannot all sit in one buffer of the
	 * type (an Allreduce into it is erroneous). */
	if (total > 1 && text > 0 && (ext > 0 ? ext : -ext) < text) {
		snprintf(why, sizeof why,
			 "the type's instances overlap (extent %lld, true extent %lld): every block of %lld instances cannot sit in "
			 "one buffer of it",
			 (long long)ext, (long long)text, (long long)total);
		return shmRefuseColl(B(call), why, MPI_ERR_TYPE, H(comm), SHMRUN_COLL_ALLREDUCE);
	}
	lo = hi = 0;
	if (total > 0 && (__builtin_mul_overflow(total - 1, ext, &bytes) || __builtin_add_overflow(tlb, ext < 0 ? bytes : 0, &lo) ||
			  __builtin_add_overflow(tlb + text, ext > 0 ? bytes : 0, &hi) || __builtin_sub_overflow(hi, lo, &bytes) ||
			  (uint64_t)bytes > SIZE_MAX / 2)) {
		snprintf(why, sizeof why, "the sum of recvcounts, %lld, times the type's extent, %lld, overflows MPI_Count",
			 (long long)total, (long long)ext);
		return shmRefuseColl(B(call), why, MPI_ERR_COUNT, H(comm), SHMRUN_COLL_ALLREDUCE);
	}
	bytes = hi - lo;
	if (!IN_PLACE(sendbuf) && sendbuf == recvbuf && counts[me] > 0)
		return shmRefuseColl(B(call), "sendbuf and recvbuf are one buffer: they must not be aliased (MPI_IN_PLACE is the in-place form)",
				     MPI_ERR_BUFFER, H(comm), SHMRUN_COLL_ALLREDUCE);
	if ((rc = PMPI_Pack_size_c(counts[me], datatype, comm, &psize)) != MPI_SUCCESS)
		return rc;
	char *all = malloc((size_t)(bytes + (total > 0 ? 0 : 1)));
	char *packed = malloc((size_t)psize + 1);
	if (all == NULL || packed == NULL) {
		free(all), free(packed);
		return shmRaise(B(call), "no memory for the reduction's scratch", MPI_ERR_NO_MEM, H(comm));
	}
	char *tmp = all - lo; /* element 0's start; lb is already in the type's map */
	if (IN_PLACE(sendbuf))
		rc = PMPI_Allreduce_c(MPI_IN_PLACE, recvbuf, total, datatype, op, comm);
	else
		rc = PMPI_Allreduce_c(sendbuf, tmp, total, datatype, op, comm);
	if (rc == MPI_SUCCESS) {
		char *src = IN_PLACE(sendbuf) ? (char *)recvbuf : tmp;
		MPI_Count pos = 0;
		rc = PMPI_Pack_c(src + off * ext, counts[me], datatype, packed, psize, &pos, comm);
		pos = 0;
		if (rc == MPI_SUCCESS)
			rc = PMPI_Unpack_c(packed, psize, &pos, recvbuf, counts[me], datatype, comm);
	}
	free(all), free(packed);
	return rc;
}
int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
			MPI_Comm comm)
{
	int n, rc = PMPI_Comm_size(comm, &n);
	if (rc != MPI_SUCCESS)
		return rc;
	MPI_Count *c = malloc((size_t)n * sizeof *c);
	if (c == NULL)
		return shmRaise(B(__func__ + 1), "no memory for the counts", MPI_ERR_NO_MEM, H(comm));
	for (int q = 0; q < n && recvcounts != NULL; q++)
		c[q] = recvcounts[q];
	rc = reduce_scatter(__func__ + 1, sendbuf, recvbuf, recvcounts ? c : NULL, datatype, op, comm);
	free(c);
	return rc;
}
int PMPI_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op,
			  MPI_Comm comm)
{
	return reduce_scatter(__func__ + 1, sendbuf, recvbuf, recvcounts, datatype, op, comm);
}

int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
	ARG_SELF(user_fn);
	ARG_SELF(op);
	return shmOpCreate(H(user_fn), commute, 0, HP(op));
}
/* The large-count form: the function's len is an MPI_Count. */
int PMPI_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
	ARG_SELF(user_fn);
	ARG_SELF(op);
	return shmOpCreate(H(user_fn), commute, 1, HP(op));
}
/* inoutbuf = inbuf op inoutbuf, on this process alone; its errors are
 * MPI_COMM_SELF's (shmReduceLocal). */
#define REDUCE_LOCAL(NAME, CT)                                                                          \
	int PMPI_##NAME(const void *inbuf, void *inoutbuf, CT count, MPI_Datatype datatype, MPI_Op op)    \
	{                                                                                               \
		return shmReduceLocal(B(inbuf), B(inoutbuf), count, H(datatype), H(op), B("MPI_" #NAME)); \
	}
REDUCE_LOCAL(Reduce_local, int)
REDUCE_LOCAL(Reduce_local_c, MPI_Count)
int PMPI_Op_free(MPI_Op *op)
{
	ARG_SELF(op);
	return shmOpFree(HP(op));
}
int PMPI_Op_commutative(MPI_Op op, int *commute)
{
	ARG_SELF(commute);
	return shmOpCommutative(H(op), commute);
}

/* ---- nonblocking collectives (MPI 4.1 §6.12) ------------------------------- */

/* A nonblocking collective's arguments, kept until its job, on the
 * communicator's worker (capi's nbc.go), makes the blocking call: the
 * large-count form of it, the int forms' count arrays widened into arrays
 * it owns. A program's own arrays are used as they are: MPI says they
 * must not change until the request completes. */
typedef struct shmrun_nbc {
	int (*run)(struct shmrun_nbc *);
	const void *sbuf;
	void *rbuf;
	MPI_Count scount, rcount;
	MPI_Datatype stype, rtype;
	MPI_Op op;
	int root;
	MPI_Comm comm;
	const MPI_Count *scounts, *rcounts;
	const MPI_Aint *sdispls, *rdispls;
	const MPI_Datatype *stypes, *rtypes;
	void *owned[4];
	int keep; /* a persistent collective's: run again at every start */
} shmrun_nbc;

void shmrun_nbc_free(uintptr_t p)
{
	shmrun_nbc *a = (shmrun_nbc *)p;
	for (int i = 0; i < 4; i++)
		free(a->owned[i]);
	free(a);
}
/* shmrun_nbc_handles writes the datatype and op handles that p's call
 * uses into out (at most max; n is the communicator's size, the length of
 * Alltoallw's type arrays) and returns how many there are. */
int shmrun_nbc_handles(uintptr_t p, int n, uintptr_t *out, int max)
{
	shmrun_nbc *a = (shmrun_nbc *)p;
	int k = 0;
#define SHMRUN_NBC_PUT(h)                        \
	do {                                     \
		if (k < max)                     \
			out[k] = (uintptr_t)(h); \
		k++;                             \
	} while (0)
	SHMRUN_NBC_PUT(a->stype);
	SHMRUN_NBC_PUT(a->rtype);
	SHMRUN_NBC_PUT(a->op);
	for (int i = 0; i < n; i++) {
		if (a->stypes != NULL)
			SHMRUN_NBC_PUT(a->stypes[i]);
		if (a->rtypes != NULL)
			SHMRUN_NBC_PUT(a->rtypes[i]);
	}
#undef SHMRUN_NBC_PUT
	return k;
}

/* shmrun_nbc_run makes p's blocking call; a step's run (capi/nbc.go's
 * runJob) may stop and run it again, so the block stays until
 * shmrun_nbc_done. */
int shmrun_nbc_run(uintptr_t p)
{
	shmrun_nbc *a = (shmrun_nbc *)p;
	return a->run(a);
}
/* shmrun_nbc_done is the end of p's job: its block goes unless it is a
 * persistent collective's, kept for every start. */
void shmrun_nbc_done(uintptr_t p)
{
	if (!((shmrun_nbc *)p)->keep)
		shmrun_nbc_free(p);
}

static int nbc_bcast(shmrun_nbc *a) { return PMPI_Bcast_c(a->rbuf, a->rcount, a->rtype, a->root, a->comm); }
static int nbc_reduce(shmrun_nbc *a) { return PMPI_Reduce_c(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->root, a->comm); }
static int nbc_allreduce(shmrun_nbc *a) { return PMPI_Allreduce_c(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm); }
static int nbc_scan(shmrun_nbc *a) { return PMPI_Scan_c(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm); }
static int nbc_exscan(shmrun_nbc *a) { return PMPI_Exscan_c(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm); }
static int nbc_rsb(shmrun_nbc *a) { return PMPI_Reduce_scatter_block_c(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm); }
static int nbc_rs(shmrun_nbc *a) { return PMPI_Reduce_scatter_c(a->sbuf, a->rbuf, a->rcounts, a->rtype, a->op, a->comm); }
static int nbc_gather(shmrun_nbc *a)
{
	return PMPI_Gather_c(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->root, a->comm);
}
static int nbc_scatter(shmrun_nbc *a)
{
	return PMPI_Scatter_c(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->root, a->comm);
}
static int nbc_allgather(shmrun_nbc *a)
{
	return PMPI_Allgather_c(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->comm);
}
static int nbc_alltoall(shmrun_nbc *a)
{
	return PMPI_Alltoall_c(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->comm);
}
static int nbc_gatherv(shmrun_nbc *a)
{
	return PMPI_Gatherv_c(a->sbuf, a->scount, a->stype, a->rbuf, a->rcounts, a->rdispls, a->rtype, a->root, a->comm);
}
static int nbc_scatterv(shmrun_nbc *a)
{
	return PMPI_Scatterv_c(a->sbuf, a->scounts, a->sdispls, a->stype, a->rbuf, a->rcount, a->rtype, a->root, a->comm);
}
static int nbc_allgatherv(shmrun_nbc *a)
{
	return PMPI_Allgatherv_c(a->sbuf, a->scount, a->stype, a->rbuf, a->rcounts, a->rdispls, a->rtype, a->comm);
}
static int nbc_alltoallv(shmrun_nbc *a)
{
	return PMPI_Alltoallv_c(a->sbuf, a->scounts, a->sdispls, a->stype, a->rbuf, a->rcounts, a->rdispls, a->rtype, a->comm);
}
static int nbc_alltoallw(shmrun_nbc *a)
{
	return PMPI_Alltoallw_c(a->sbuf, a->scounts, a->sdispls, a->stypes, a->rbuf, a->rcounts, a->rdispls, a->rtypes, a->comm);
}

/* shmrun_nbc_call_of fills c with p's call as the Go half's entry point
 * takes it, where the C half of the call (PMPI_Allreduce_c and the rest)
 * does nothing but try its fast path first, which a job's call never
 * takes (the descriptor's nbc count holds it off) and calls it: the
 * calls of one count and one datatype a side. Any other keeps entry 0. */
void shmrun_nbc_call_of(uintptr_t p, shmrun_nbc_call *c)
{
	shmrun_nbc *a = (shmrun_nbc *)p;
	int (*run)(shmrun_nbc *) = a->run;
	*c = (shmrun_nbc_call){0};
	c->sbuf = B(a->sbuf), c->rbuf = B(a->rbuf);
	c->scount = (int64_t)a->scount, c->rcount = (int64_t)a->rcount;
	c->stype = H(a->stype), c->rtype = H(a->rtype), c->op = H(a->op), c->comm = H(a->comm);
	c->root = a->root;
	c->inplace = IN_PLACE(a->sbuf);
	if (run == nbc_reduce)
		c->entry = 1, c->kind = 0;
	else if (run == nbc_allreduce)
		c->entry = 1, c->kind = 1, c->root = 0;
	else if (run == nbc_rsb)
		c->entry = 1, c->kind = 2, c->root = 0;
	else if (run == nbc_scan)
		c->entry = 1, c->kind = 3, c->root = 0;
	else if (run == nbc_exscan)
		c->entry = 1, c->kind = 4, c->root = 0;
	else if (run == nbc_bcast)
		c->entry = 2;
	else if (run == nbc_gather)
		c->entry = 3, c->kind = 0;
	else if (run == nbc_scatter)
		c->entry = 3, c->kind = 1, c->inplace = IN_PLACE(a->rbuf);
	else if (run == nbc_allgather)
		c->entry = 3, c->kind = 2, c->root = 0;
	else if (run == nbc_alltoall)
		c->entry = 3, c->kind = 3, c->root = 0;
}

/* nbc_new is a zeroed argument block for call on comm, or NULL after
 * raising MPI_ERR_NO_MEM. */
static shmrun_nbc *nbc_new(const char *call, MPI_Comm comm, int (*run)(shmrun_nbc *))
{
	shmrun_nbc *a = calloc(1, sizeof *a);
	if (a == NULL) {
		shmRaise(B(call), "no memory for the call's arguments", MPI_ERR_NO_MEM, H(comm));
		return NULL;
	}
	a->run = run; a->comm = comm; a->root = 0;
	return a;
}
#define NBC_NEW(a, run)                                                                                 \
	shmrun_nbc *a = nbc_new(__func__ + 1, comm, run);                                                 \
	if (a == NULL)                                                                                  \
		return MPI_ERR_NO_MEM
#define NBC_START(a) shmStartColl(H(comm), B(__func__ + 1), (uintptr_t)(a), HP(request))
/* A persistent collective (MPI 4.1 §6.13) keeps its block for every
 * MPI_Start; MPI_Request_free frees it. */
#define NBC_INIT(a) ((a)->keep = 1, shmInitColl(H(comm), B(__func__ + 1), (uintptr_t)(a), H(info), HP(request)))
/* The argument checks before the block is made: a nonblocking call's NULL
 * request fails the other ranks' call too (their job's round); making a
 * persistent one is local (the info is checked, its hints not used). */
#define NBC_START_ARG(p, comm, kind) ARG_COLL(p, comm, kind)
#define NBC_INIT_ARG(p, comm, kind) ARG_COMM(p, comm)

/* Each collective below is written once for both: GO is NBC_START (the
 * MPI_I form) or NBC_INIT (the _init form, XP its info parameter). */
#define INFO MPI_Info info,

#define IBCAST(NAME, CT, XP, GO)                                                                                    \
	int PMPI_##NAME(void *buffer, CT count, MPI_Datatype datatype, int root, MPI_Comm comm, XP MPI_Request *request) \
	{                                                                                                             \
		GO##_ARG(request, comm, BCAST);                                                                       \
		NBC_NEW(a, nbc_bcast);                                                                                \
		a->rbuf = buffer; a->rcount = count; a->rtype = datatype; a->root = root;                                \
		return GO(a);                                                                                         \
	}
IBCAST(Ibcast, int, , NBC_START)
IBCAST(Ibcast_c, MPI_Count, , NBC_START)
IBCAST(Bcast_init, int, INFO, NBC_INIT)
IBCAST(Bcast_init_c, MPI_Count, INFO, NBC_INIT)

#define IREDUCE(NAME, CT, XP, GO)                                                                                  \
	int PMPI_##NAME(const void *sendbuf, void *recvbuf, CT count, MPI_Datatype datatype, MPI_Op op, int root,  \
			MPI_Comm comm, XP MPI_Request *request)                                                    \
	{                                                                                                          \
		GO##_ARG(request, comm, REDUCE);                                                                   \
		NBC_NEW(a, nbc_reduce);                                                                            \
		a->sbuf = sendbuf; a->rbuf = recvbuf; a->rcount = count; a->rtype = datatype; a->op = op; a->root = root; \
		return GO(a);                                                                                      \
	}
IREDUCE(Ireduce, int, , NBC_START)
IREDUCE(Ireduce_c, MPI_Count, , NBC_START)
IREDUCE(Reduce_init, int, INFO, NBC_INIT)
IREDUCE(Reduce_init_c, MPI_Count, INFO, NBC_INIT)

#define IREDUCE_ALL(NAME, CT, RUN, KIND, XP, GO)                                                                     \
	int PMPI_##NAME(const void *sendbuf, void *recvbuf, CT count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, \
			XP MPI_Request *request)                                                                     \
	{                                                                                                            \
		GO##_ARG(request, comm, KIND);                                                                       \
		NBC_NEW(a, RUN);                                                                                     \
		a->sbuf = sendbuf; a->rbuf = recvbuf; a->rcount = count; a->rtype = datatype; a->op = op;                \
		return GO(a);                                                                                        \
	}
IREDUCE_ALL(Iallreduce, int, nbc_allreduce, ALLREDUCE, , NBC_START)
IREDUCE_ALL(Iallreduce_c, MPI_Count, nbc_allreduce, ALLREDUCE, , NBC_START)
IREDUCE_ALL(Iscan, int, nbc_scan, SCAN, , NBC_START)
IREDUCE_ALL(Iscan_c, MPI_Count, nbc_scan, SCAN, , NBC_START)
IREDUCE_ALL(Iexscan, int, nbc_exscan, EXSCAN, , NBC_START)
IREDUCE_ALL(Iexscan_c, MPI_Count, nbc_exscan, EXSCAN, , NBC_START)
IREDUCE_ALL(Ireduce_scatter_block, int, nbc_rsb, REDUCE_SCATTER_BLOCK, , NBC_START)
IREDUCE_ALL(Ireduce_scatter_block_c, MPI_Count, nbc_rsb, REDUCE_SCATTER_BLOCK, , NBC_START)
IREDUCE_ALL(Allreduce_init, int, nbc_allreduce, ALLREDUCE, INFO, NBC_INIT)
IREDUCE_ALL(Allreduce_init_c, MPI_Count, nbc_allreduce, ALLREDUCE, INFO, NBC_INIT)
IREDUCE_ALL(Scan_init, int, nbc_scan, SCAN, INFO, NBC_INIT)
IREDUCE_ALL(Scan_init_c, MPI_Count, nbc_scan, SCAN, INFO, NBC_INIT)
IREDUCE_ALL(Exscan_init, int, nbc_exscan, EXSCAN, INFO, NBC_INIT)
IREDUCE_ALL(Exscan_init_c, MPI_Count, nbc_exscan, EXSCAN, INFO, NBC_INIT)
IREDUCE_ALL(Reduce_scatter_block_init, int, nbc_rsb, REDUCE_SCATTER_BLOCK, INFO, NBC_INIT)
IREDUCE_ALL(Reduce_scatter_block_init_c, MPI_Count, nbc_rsb, REDUCE_SCATTER_BLOCK, INFO, NBC_INIT)

#define IREDUCE_SCATTER(NAME, XP, GO)                                                                              \
	int PMPI_##NAME(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, \
			MPI_Comm comm, XP MPI_Request *request)                                                     \
	{                                                                                                           \
		GO##_ARG(request, comm, ALLREDUCE); /* it is an Allreduce */                                        \
		int64_t *c;                                                                                         \
		MPI_Aint *unused;                                                                                   \
		int rc = widen(comm, recvcounts, NULL, &c, &unused);                                                \
		if (rc != MPI_SUCCESS)                                                                              \
			return rc;                                                                                  \
		shmrun_nbc *a = nbc_new(__func__ + 1, comm, nbc_rs);                                                \
		if (a == NULL) {                                                                                    \
			free(c);                                                                                    \
			return MPI_ERR_NO_MEM;                                                                      \
		}                                                                                                   \
		a->sbuf = sendbuf; a->rbuf = recvbuf; a->rcounts = (const MPI_Count *)c; a->rtype = datatype; a->op = op; \
		a->owned[0] = c;                                                                                    \
		return GO(a);                                                                                       \
	}
#define IREDUCE_SCATTER_C(NAME, XP, GO)                                                                            \
	int PMPI_##NAME(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype,     \
			MPI_Op op, MPI_Comm comm, XP MPI_Request *request)                                          \
	{                                                                                                           \
		GO##_ARG(request, comm, ALLREDUCE);                                                                 \
		NBC_NEW(a, nbc_rs);                                                                                 \
		a->sbuf = sendbuf; a->rbuf = recvbuf; a->rcounts = recvcounts; a->rtype = datatype; a->op = op;         \
		return GO(a);                                                                                       \
	}
IREDUCE_SCATTER(Ireduce_scatter, , NBC_START)
IREDUCE_SCATTER_C(Ireduce_scatter_c, , NBC_START)
IREDUCE_SCATTER(Reduce_scatter_init, INFO, NBC_INIT)
IREDUCE_SCATTER_C(Reduce_scatter_init_c, INFO, NBC_INIT)

#define IMOVE_BODY(RUN, KIND, SETROOT, GO)                                             \
	{                                                                              \
		GO##_ARG(request, comm, KIND);                                         \
		NBC_NEW(a, RUN);                                                       \
		a->sbuf = sendbuf;                                                     \
		a->scount = sendcount;                                                 \
		a->stype = sendtype;                                                   \
		a->rbuf = recvbuf;                                                     \
		a->rcount = recvcount;                                                 \
		a->rtype = recvtype;                                                   \
		SETROOT;                                                               \
		return GO(a);                                                          \
	}
#define IMOVE_ROOT(NAME, CT, RUN, KIND, XP, GO)                                                                \
	int PMPI_##NAME(const void *sendbuf, CT sendcount, MPI_Datatype sendtype, void *recvbuf, CT recvcount, \
			MPI_Datatype recvtype, int root, MPI_Comm comm, XP MPI_Request *request)               \
	IMOVE_BODY(RUN, KIND, a->root = root, GO)
#define IMOVE_ALL(NAME, CT, RUN, KIND, XP, GO)                                                                 \
	int PMPI_##NAME(const void *sendbuf, CT sendcount, MPI_Datatype sendtype, void *recvbuf, CT recvcount, \
			MPI_Datatype recvtype, MPI_Comm comm, XP MPI_Request *request)                         \
	IMOVE_BODY(RUN, KIND, (void)0, GO)
IMOVE_ROOT(Igather, int, nbc_gather, GATHER, , NBC_START)
IMOVE_ROOT(Igather_c, MPI_Count, nbc_gather, GATHER, , NBC_START)
IMOVE_ROOT(Iscatter, int, nbc_scatter, SCATTER, , NBC_START)
IMOVE_ROOT(Iscatter_c, MPI_Count, nbc_scatter, SCATTER, , NBC_START)
IMOVE_ALL(Iallgather, int, nbc_allgather, ALLGATHER, , NBC_START)
IMOVE_ALL(Iallgather_c, MPI_Count, nbc_allgather, ALLGATHER, , NBC_START)
IMOVE_ALL(Ialltoall, int, nbc_alltoall, ALLTOALL, , NBC_START)
IMOVE_ALL(Ialltoall_c, MPI_Count, nbc_alltoall, ALLTOALL, , NBC_START)
IMOVE_ROOT(Gather_init, int, nbc_gather, GATHER, INFO, NBC_INIT)
IMOVE_ROOT(Gather_init_c, MPI_Count, nbc_gather, GATHER, INFO, NBC_INIT)
IMOVE_ROOT(Scatter_init, int, nbc_scatter, SCATTER, INFO, NBC_INIT)
IMOVE_ROOT(Scatter_init_c, MPI_Count, nbc_scatter, SCATTER, INFO, NBC_INIT)
IMOVE_ALL(Allgather_init, int, nbc_allgather, ALLGATHER, INFO, NBC_INIT)
IMOVE_ALL(Allgather_init_c, MPI_Count, nbc_allgather, ALLGATHER, INFO, NBC_INIT)
IMOVE_ALL(Alltoall_init, int, nbc_alltoall, ALLTOALL, INFO, NBC_INIT)
IMOVE_ALL(Alltoall_init_c, MPI_Count, nbc_alltoall, ALLTOALL, INFO, NBC_INIT)

/* The v forms: the int forms' counts and displacements widened (widen's
 * NULL stays NULL: not used there, or an error the job reports); after a
 * failure a is freed. */
static int nbc_widen(shmrun_nbc *a, MPI_Comm comm, const int *counts, const int *displs, const MPI_Count **c,
		     const MPI_Aint **d, int slot)
{
	int64_t *wc;
	MPI_Aint *wd;
	int rc = widen(comm, counts, displs, &wc, &wd);
	if (rc != MPI_SUCCESS) {
		shmrun_nbc_free((uintptr_t)a);
		return rc;
	}
	a->owned[slot] = wc;
	a->owned[slot + 1] = wd;
	*c = (const MPI_Count *)wc;
	*d = wd;
	return MPI_SUCCESS;
}
/* nbc_widen_all widens both sides of an all-to-all v or w form (the
 * send side's unless in place). */
static int nbc_widen_all(shmrun_nbc *a, MPI_Comm comm, const void *sendbuf, const int *scounts, const int *sdispls,
			 const int *rcounts, const int *rdispls)
{
	int rc = nbc_widen(a, comm, rcounts, rdispls, &a->rcounts, &a->rdispls, 0);
	if (rc == MPI_SUCCESS && !IN_PLACE(sendbuf))
		rc = nbc_widen(a, comm, scounts, sdispls, &a->scounts, &a->sdispls, 2);
	return rc;
}
#define IGATHERV(NAME, XP, GO)                                                                                    \
	int PMPI_##NAME(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,                 \
			const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, \
			XP MPI_Request *request)                                                                  \
	{                                                                                                         \
		GO##_ARG(request, comm, GATHERV);                                                                 \
		NBC_NEW(a, nbc_gatherv);                                                                          \
		int rc = nbc_widen(a, comm, recvcounts, displs, &a->rcounts, &a->rdispls, 0);                     \
		if (rc != MPI_SUCCESS)                                                                            \
			return rc;                                                                                \
		a->sbuf = sendbuf; a->scount = sendcount; a->stype = sendtype; a->rbuf = recvbuf; a->rtype = recvtype; \
		a->root = root;                                                                                   \
		return GO(a);                                                                                     \
	}
#define IGATHERV_C(NAME, XP, GO)                                                                                  \
	int PMPI_##NAME(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,           \
			const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,   \
			MPI_Comm comm, XP MPI_Request *request)                                                   \
	{                                                                                                         \
		GO##_ARG(request, comm, GATHERV);                                                                 \
		NBC_NEW(a, nbc_gatherv);                                                                          \
		a->sbuf = sendbuf; a->scount = sendcount; a->stype = sendtype; a->rbuf = recvbuf; a->rtype = recvtype; \
		a->root = root; a->rcounts = recvcounts; a->rdispls = displs;                                     \
		return GO(a);                                                                                     \
	}
IGATHERV(Igatherv, , NBC_START)
IGATHERV_C(Igatherv_c, , NBC_START)
IGATHERV(Gatherv_init, INFO, NBC_INIT)
IGATHERV_C(Gatherv_init_c, INFO, NBC_INIT)

#define ISCATTERV(NAME, XP, GO)                                                                                   \
	int PMPI_##NAME(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,   \
			void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,             \
			XP MPI_Request *request)                                                                  \
	{                                                                                                         \
		GO##_ARG(request, comm, SCATTERV);                                                                \
		NBC_NEW(a, nbc_scatterv);                                                                         \
		int rc = nbc_widen(a, comm, sendcounts, displs, &a->scounts, &a->sdispls, 0);                     \
		if (rc != MPI_SUCCESS)                                                                            \
			return rc;                                                                                \
		a->sbuf = sendbuf; a->stype = sendtype; a->rbuf = recvbuf; a->rcount = recvcount; a->rtype = recvtype; \
		a->root = root;                                                                                   \
		return GO(a);                                                                                     \
	}
#define ISCATTERV_C(NAME, XP, GO)                                                                                 \
	int PMPI_##NAME(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],              \
			MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, \
			MPI_Comm comm, XP MPI_Request *request)                                                   \
	{                                                                                                         \
		GO##_ARG(request, comm, SCATTERV);                                                                \
		NBC_NEW(a, nbc_scatterv);                                                                         \
		a->sbuf = sendbuf; a->stype = sendtype; a->rbuf = recvbuf; a->rcount = recvcount; a->rtype = recvtype; \
		a->root = root; a->scounts = sendcounts; a->sdispls = displs;                                     \
		return GO(a);                                                                                     \
	}
ISCATTERV(Iscatterv, , NBC_START)
ISCATTERV_C(Iscatterv_c, , NBC_START)
ISCATTERV(Scatterv_init, INFO, NBC_INIT)
ISCATTERV_C(Scatterv_init_c, INFO, NBC_INIT)

#define IALLGATHERV(NAME, XP, GO)                                                                                 \
	int PMPI_##NAME(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,                 \
			const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,          \
			XP MPI_Request *request)                                                                  \
	{                                                                                                         \
		GO##_ARG(request, comm, ALLGATHERV);                                                              \
		NBC_NEW(a, nbc_allgatherv);                                                                       \
		int rc = nbc_widen(a, comm, recvcounts, displs, &a->rcounts, &a->rdispls, 0);                     \
		if (rc != MPI_SUCCESS)                                                                            \
			return rc;                                                                                \
		a->sbuf = sendbuf; a->scount = sendcount; a->stype = sendtype; a->rbuf = recvbuf; a->rtype = recvtype; \
		return GO(a);                                                                                     \
	}
#define IALLGATHERV_C(NAME, XP, GO)                                                                               \
	int PMPI_##NAME(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,           \
			const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,             \
			MPI_Comm comm, XP MPI_Request *request)                                                   \
	{                                                                                                         \
		GO##_ARG(request, comm, ALLGATHERV);                                                              \
		NBC_NEW(a, nbc_allgatherv);                                                                       \
		a->sbuf = sendbuf; a->scount = sendcount; a->stype = sendtype; a->rbuf = recvbuf; a->rtype = recvtype; \
		a->rcounts = recvcounts; a->rdispls = displs;                                                     \
		return GO(a);                                                                                     \
	}
IALLGATHERV(Iallgatherv, , NBC_START)
IALLGATHERV_C(Iallgatherv_c, , NBC_START)
IALLGATHERV(Allgatherv_init, INFO, NBC_INIT)
IALLGATHERV_C(Allgatherv_init_c, INFO, NBC_INIT)

#define IALLTOALLV(NAME, XP, GO)                                                                                  \
	int PMPI_##NAME(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,  \
			void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,        \
			MPI_Comm comm, XP MPI_Request *request)                                                   \
	{                                                                                                         \
		GO##_ARG(request, comm, ALLTOALLV);                                                               \
		NBC_NEW(a, nbc_alltoallv);                                                                        \
		int rc = nbc_widen_all(a, comm, sendbuf, sendcounts, sdispls, recvcounts, rdispls);               \
		if (rc != MPI_SUCCESS)                                                                            \
			return rc;                                                                                \
		a->sbuf = sendbuf; a->stype = sendtype; a->rbuf = recvbuf; a->rtype = recvtype;                       \
		return GO(a);                                                                                     \
	}
#define IALLTOALLV_C(NAME, XP, GO)                                                                                \
	int PMPI_##NAME(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],              \
			MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],                       \
			const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, XP MPI_Request *request) \
	{                                                                                                         \
		GO##_ARG(request, comm, ALLTOALLV);                                                               \
		NBC_NEW(a, nbc_alltoallv);                                                                        \
		a->sbuf = sendbuf; a->scounts = sendcounts; a->sdispls = sdispls; a->stype = sendtype;               \
		a->rbuf = recvbuf; a->rcounts = recvcounts; a->rdispls = rdispls; a->rtype = recvtype;               \
		return GO(a);                                                                                     \
	}
IALLTOALLV(Ialltoallv, , NBC_START)
IALLTOALLV_C(Ialltoallv_c, , NBC_START)
IALLTOALLV(Alltoallv_init, INFO, NBC_INIT)
IALLTOALLV_C(Alltoallv_init_c, INFO, NBC_INIT)

#define IALLTOALLW(NAME, XP, GO)                                                                                  \
	int PMPI_##NAME(const void *sendbuf, const int sendcounts[], const int sdispls[],                        \
			const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[], \
			const MPI_Datatype recvtypes[], MPI_Comm comm, XP MPI_Request *request)                   \
	{                                                                                                         \
		GO##_ARG(request, comm, ALLTOALLV);                                                               \
		NBC_NEW(a, nbc_alltoallw);                                                                        \
		int rc = nbc_widen_all(a, comm, sendbuf, sendcounts, sdispls, recvcounts, rdispls);               \
		if (rc != MPI_SUCCESS)                                                                            \
			return rc;                                                                                \
		a->sbuf = sendbuf; a->stypes = sendtypes; a->rbuf = recvbuf; a->rtypes = recvtypes;                   \
		return GO(a);                                                                                     \
	}
#define IALLTOALLW_C(NAME, XP, GO)                                                                                \
	int PMPI_##NAME(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],              \
			const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],              \
			const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,                  \
			XP MPI_Request *request)                                                                  \
	{                                                                                                         \
		GO##_ARG(request, comm, ALLTOALLV);                                                               \
		NBC_NEW(a, nbc_alltoallw);                                                                        \
		a->sbuf = sendbuf; a->scounts = sendcounts; a->sdispls = sdispls; a->stypes = sendtypes;             \
		a->rbuf = recvbuf; a->rcounts = recvcounts; a->rdispls = rdispls; a->rtypes = recvtypes;             \
		return GO(a);                                                                                     \
	}
IALLTOALLW(Ialltoallw, , NBC_START)
IALLTOALLW_C(Ialltoallw_c, , NBC_START)
IALLTOALLW(Alltoallw_init, INFO, NBC_INIT)
IALLTOALLW_C(Alltoallw_init_c, INFO, NBC_INIT)

static int nbc_barrier(shmrun_nbc *a) { return PMPI_Barrier(a->comm); }
int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	NBC_INIT_ARG(request, comm, BARRIER);
	NBC_NEW(a, nbc_barrier);
	return NBC_INIT(a);
}

/* ---- windows ---------------------------------------------------------------- */

/* A NULL baseptr or win of the creating calls is refused by shmWinAllocate,
 * which fails the creation on every rank, as it does their other
 * arguments. */

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
	return shmWinAllocate(size, disp_unit, H(info), H(comm), 0, NULL, (char **)baseptr, HP(win));
}
int PMPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
	/* Out of int's range either way is refused: a cast would keep the low
	 * 32 bits, which may be a positive unit the program never asked for. */
	if (disp_unit > INT32_MAX || disp_unit < INT32_MIN)
		disp_unit = -1; /* refused as out of range */
	return shmWinAllocate(size, (int)disp_unit, H(info), H(comm), 0, NULL, (char **)baseptr, HP(win));
}
int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
	return shmWinAllocate(size, disp_unit, H(info), H(comm), 1, NULL, (char **)baseptr, HP(win));
}
int PMPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
	if (disp_unit > INT32_MAX || disp_unit < INT32_MIN)
		disp_unit = -1;
	return shmWinAllocate(size, (int)disp_unit, H(info), H(comm), 1, NULL, (char **)baseptr, HP(win));
}
int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
	return shmWinAllocate(size, disp_unit, H(info), H(comm), 2, B(base), NULL, HP(win));
}
int PMPI_Win_create_c(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
	if (disp_unit > INT32_MAX || disp_unit < INT32_MIN)
		disp_unit = -1;
	return shmWinAllocate(size, (int)disp_unit, H(info), H(comm), 2, B(base), NULL, HP(win));
}
int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
	return shmWinAllocate(0, 1, H(info), H(comm), 3, NULL, NULL, HP(win));
}
int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
	ARG_WIN(size, win);
	ARG_WIN(disp_unit, win);
	ARG_WIN(baseptr, win);
	return shmWinSharedQuery(H(win), rank, size, disp_unit, (char **)baseptr);
}
int PMPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr)
{
	int du = 0;
	ARG_WIN(size, win);
	ARG_WIN(disp_unit, win);
	ARG_WIN(baseptr, win);
	int rc = shmWinSharedQuery(H(win), rank, size, &du, (char **)baseptr);
	if (rc == MPI_SUCCESS)
		*disp_unit = du;
	return rc;
}
int PMPI_Win_free(MPI_Win *win)
{
	ARG_SELF(win);
	return shmWinFree(HP(win));
}

int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag)
{
	shmrun_win_attrs *a;
	char *base;
	int user;
	ARG_WIN(attribute_val, win);
	ARG_WIN(flag, win);
	int rc = shmAttrGet(1, H(win), win_keyval, (uintptr_t *)attribute_val, flag, &user);
	if (user)
		return rc;
	rc = shmWinAttrs(H(win), win_keyval, &a, &base);
	if (rc != MPI_SUCCESS)
		return rc;
	*flag = 1;
	switch (win_keyval) {
	case MPI_WIN_BASE:
		*(void **)attribute_val = base;
		break;
	case MPI_WIN_SIZE:
		*(MPI_Aint **)attribute_val = &a->size;
		break;
	case MPI_WIN_DISP_UNIT:
		*(int **)attribute_val = &a->disp_unit;
		break;
	case MPI_WIN_CREATE_FLAVOR:
		*(int **)attribute_val = &a->flavor;
		break;
	case MPI_WIN_MODEL:
		*(int **)attribute_val = &a->model;
		break;
	default:
		*flag = 0;
	}
	return MPI_SUCCESS;
}

int PMPI_Win_fence(int assert, MPI_Win win)
{
	int rc;
	if (shmrun_fast_fence(win, assert, &rc) == 0)
		return rc;
	return shmWinSync(H(win), 0, 0, 0, assert, 0, NULL);
}
/* The passive-target calls run in C over the window's descriptor in their
 * common cases (mpi_fast.h); 1 means the C side made its add and Go
 * finishes the call, -1 that Go makes the whole call. */
int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
	uint64_t v;
	switch (shmrun_fast_lock(win, lock_type, rank, assert, &v)) {
	case 0:
		return MPI_SUCCESS;
	case 1:
		return shmWinLockAfter(H(win), lock_type == MPI_LOCK_SHARED, rank, v);
	}
	return shmWinSync(H(win), 1, lock_type, rank, assert, 0, NULL);
}
int PMPI_Win_unlock(int rank, MPI_Win win)
{
	if (shmrun_fast_unlock(win, rank) == 0)
		return MPI_SUCCESS;
	return shmWinSync(H(win), 2, 0, rank, 0, 0, NULL);
}
int PMPI_Win_lock_all(int assert, MPI_Win win)
{
	switch (shmrun_fast_lock_all(win, assert)) {
	case 0:
		return MPI_SUCCESS;
	case 1:
		return shmWinLockAllRetry(H(win));
	}
	return shmWinSync(H(win), 3, 0, 0, assert, 0, NULL);
}
int PMPI_Win_unlock_all(MPI_Win win)
{
	if (shmrun_fast_unlock_all(win) == 0)
		return MPI_SUCCESS;
	return shmWinSync(H(win), 4, 0, 0, 0, 0, NULL);
}
/* Flushes and Win_sync are a fence in C (the local flushes not even that:
 * RMA completes eagerly) when the epoch state shows the passive-target
 * epoch they need. */
#define FSYNC(NAME, ARGS, KIND, RANK, FAST)                         \
	int PMPI_##NAME ARGS                                       \
	{                                                          \
		if ((FAST) == 0)                                   \
			return MPI_SUCCESS;                        \
		return shmWinSync(H(win), KIND, 0, RANK, 0, 0, NULL); \
	}
FSYNC(Win_flush, (int rank, MPI_Win win), 5, rank, shmrun_fast_flush(win, rank, 1))
FSYNC(Win_flush_all, (MPI_Win win), 6, 0, shmrun_fast_flush_all(win, 1))
FSYNC(Win_flush_local, (int rank, MPI_Win win), 7, rank, shmrun_fast_flush(win, rank, 0))
FSYNC(Win_flush_local_all, (MPI_Win win), 8, 0, shmrun_fast_flush_all(win, 0))
FSYNC(Win_sync, (MPI_Win win), 9, 0, shmrun_fast_flush_all(win, 1))
/* PSCW: C in the common cases (mpi_fast.h), else Go. */
#define PSYNC(NAME, ARGS, KIND, ASSERT, GROUP, FAST)                     \
	int PMPI_##NAME ARGS                                            \
	{                                                               \
		if ((FAST) == 0)                                        \
			return MPI_SUCCESS;                             \
		return shmWinSync(H(win), KIND, 0, 0, ASSERT, GROUP, NULL); \
	}
PSYNC(Win_complete, (MPI_Win win), 10, 0, 0, shmrun_fast_complete(win))
PSYNC(Win_wait, (MPI_Win win), 11, 0, 0, shmrun_fast_wait(win))
PSYNC(Win_post, (MPI_Group group, int assert, MPI_Win win), 13, assert, H(group), shmrun_fast_post(group, assert, win))
PSYNC(Win_start, (MPI_Group group, int assert, MPI_Win win), 14, assert, H(group), shmrun_fast_start(group, assert, win))
int PMPI_Win_test(MPI_Win win, int *flag)
{
	ARG_WIN(flag, win);
	return shmWinSync(H(win), 12, 0, 0, 0, 0, flag);
}

/* RMA: kind 0 Put, 1 Get, 2 Accumulate, 3 Get_accumulate, 4 Fetch_and_op,
 * 5 Compare_and_swap (shmRMA). */
#define PUT(NAME, CT, KIND, CONST)                                                                      \
	int PMPI_##NAME(CONST void *origin_addr, CT origin_count, MPI_Datatype origin_datatype, int target_rank, \
			MPI_Aint target_disp, CT target_count, MPI_Datatype target_datatype, MPI_Win win)  \
	{                                                                                               \
		if (shmrun_fast_copy(win, KIND == 0, (void *)(uintptr_t)origin_addr, origin_count, origin_datatype, \
				     target_rank, target_disp, target_count, target_datatype) == 0)           \
			return MPI_SUCCESS;                                                             \
		SHMRUN_CALL_PC();                                                                       \
		return shmRMA(KIND, B(origin_addr), origin_count, H(origin_datatype), NULL, 0, 0, target_rank, \
			      target_disp, target_count, H(target_datatype), 0, H(win), NULL, NULL);          \
	}
#define RPUT(NAME, CT, KIND, CONST)                                                                     \
	int PMPI_##NAME(CONST void *origin_addr, CT origin_count, MPI_Datatype origin_datatype, int target_rank, \
			MPI_Aint target_disp, CT target_count, MPI_Datatype target_datatype, MPI_Win win,  \
			MPI_Request *request)                                                           \
	{                                                                                               \
		ARG_WIN(request, win);                                                                  \
		SHMRUN_CALL_PC();                                                                       \
		return shmRMA(KIND, B(origin_addr), origin_count, H(origin_datatype), NULL, 0, 0, target_rank, \
			      target_disp, target_count, H(target_datatype), 0, H(win), HP(request), NULL);   \
	}
#define NOCONST
PUT(Put, int, 0, const)
PUT(Put_c, MPI_Count, 0, const)
PUT(Get, int, 1, NOCONST)
PUT(Get_c, MPI_Count, 1, NOCONST)
RPUT(Rput, int, 0, const)
RPUT(Rput_c, MPI_Count, 0, const)
RPUT(Rget, int, 1, NOCONST)
RPUT(Rget_c, MPI_Count, 1, NOCONST)

/* Accumulate, Get_accumulate and Fetch_and_op try their common case (one
 * 8-byte integer summed: shmrun_fast_sum64) first and hand every other
 * call to a function of its own, NAME_rest (the general C path, then Go),
 * which they reach by a tail jump: the common case then needs two saved
 * registers instead of six and no argument spilled to the stack. */
#define ACC(NAME, CT)                                                                                      \
	static __attribute__((noinline)) int NAME##_rest(const void *origin_addr, CT origin_count, MPI_Datatype origin_datatype, \
							 int target_rank, MPI_Aint target_disp, CT target_count,          \
							 MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)            \
	{                                                                                                  \
		if (shmrun_fast_acc(win, origin_addr, origin_count, origin_datatype, NULL, 0, NULL, target_rank,  \
				    target_disp, target_count, target_datatype, op, 0) == 0)                    \
			return MPI_SUCCESS;                                                                \
		return shmRMA(2, B(origin_addr), origin_count, H(origin_datatype), NULL, 0, 0, target_rank,        \
			      target_disp, target_count, H(target_datatype), H(op), H(win), NULL, NULL);         \
	}                                                                                                  \
	int PMPI_##NAME(const void *origin_addr, CT origin_count, MPI_Datatype origin_datatype, int target_rank, \
			MPI_Aint target_disp, CT target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) \
	{                                                                                                  \
		if (origin_count == 1 && op == MPI_SUM &&                                                  \
		    shmrun_fast_sum64(win, origin_addr, origin_datatype, NULL, 0, NULL, target_rank, target_disp,  \
				      target_count, target_datatype, 0) == 0)                                  \
			return MPI_SUCCESS;                                                                \
		SHMRUN_CALL_PC();                                                                          \
		return NAME##_rest(origin_addr, origin_count, origin_datatype, target_rank, target_disp,    \
				   target_count, target_datatype, op, win);                                \
	}
ACC(Accumulate, int)
ACC(Accumulate_c, MPI_Count)

#define RACC(NAME, CT)                                                                                     \
	int PMPI_##NAME(const void *origin_addr, CT origin_count, MPI_Datatype origin_datatype, int target_rank, \
			MPI_Aint target_disp, CT target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, \
			MPI_Request *request)                                                              \
	{                                                                                                  \
		ARG_WIN(request, win);                                                                     \
		SHMRUN_CALL_PC();                                                                          \
		return shmRMA(2, B(origin_addr), origin_count, H(origin_datatype), NULL, 0, 0, target_rank,        \
			      target_disp, target_count, H(target_datatype), H(op), H(win), HP(request), NULL);  \
	}
RACC(Raccumulate, int)
RACC(Raccumulate_c, MPI_Count)

#define GETACC(NAME, CT, REQP, REQ, CHECK, REQA)                                                             \
	static __attribute__((noinline)) int NAME##_rest(const void *origin_addr, CT origin_count,                 \
							 MPI_Datatype origin_datatype, void *result_addr,                 \
							 CT result_count, MPI_Datatype result_datatype, int target_rank,  \
							 MPI_Aint target_disp, CT target_count,                           \
							 MPI_Datatype target_datatype, MPI_Op op, MPI_Win win REQP)       \
	{                                                                                                    \
		if ((REQ) == NULL && shmrun_fast_acc(win, origin_addr, origin_count, origin_datatype, result_addr,    \
						 result_count, result_datatype, target_rank, target_disp, target_count, \
						 target_datatype, op, 1) == 0)                                         \
			return MPI_SUCCESS;                                                                  \
		return shmRMA(3, B(origin_addr), origin_count, H(origin_datatype), B(result_addr), result_count,      \
			      H(result_datatype), target_rank, target_disp, target_count, H(target_datatype), H(op),  \
			      H(win), REQ, NULL);                                                                 \
	}                                                                                                    \
	int PMPI_##NAME(const void *origin_addr, CT origin_count, MPI_Datatype origin_datatype, void *result_addr, \
			CT result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,     \
			CT target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win REQP)              \
	{                                                                                                    \
		CHECK                                                                                        \
		if ((REQ) == NULL && origin_count == 1 && op == MPI_SUM &&                                   \
		    shmrun_fast_sum64(win, origin_addr, origin_datatype, result_addr, result_count, result_datatype, \
				      target_rank, target_disp, target_count, target_datatype, 1) == 0)          \
			return MPI_SUCCESS;                                                                  \
		SHMRUN_CALL_PC();                                                                            \
		return NAME##_rest(origin_addr, origin_count, origin_datatype, result_addr, result_count,     \
				   result_datatype, target_rank, target_disp, target_count, target_datatype, op, \
				   win REQA);                                                                \
	}
#define COMMA_REQ , MPI_Request *request
#define COMMA_REQA , request
GETACC(Get_accumulate, int, , NULL, , )
GETACC(Get_accumulate_c, MPI_Count, , NULL, , )
GETACC(Rget_accumulate, int, COMMA_REQ, HP(request), ARG_WIN(request, win);, COMMA_REQA)
GETACC(Rget_accumulate_c, MPI_Count, COMMA_REQ, HP(request), ARG_WIN(request, win);, COMMA_REQA)

static __attribute__((noinline)) int fetch_and_op_rest(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
							int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
	if (shmrun_fast_acc(win, origin_addr, 1, datatype, result_addr, 1, datatype, target_rank, target_disp, 1, datatype, op, 1) == 0)
		return MPI_SUCCESS;
	return shmRMA(4, B(origin_addr), 1, H(datatype), B(result_addr), 1, H(datatype), target_rank, target_disp, 1,
		      H(datatype), H(op), H(win), NULL, NULL);
}

int PMPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
		      MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
	if (op == MPI_SUM && shmrun_fast_sum64(win, origin_addr, datatype, result_addr, 1, datatype, target_rank, target_disp, 1,
					       datatype, 1) == 0)
		return MPI_SUCCESS;
	SHMRUN_CALL_PC();
	return fetch_and_op_rest(origin_addr, result_addr, datatype, target_rank, target_disp, op, win);
}

static __attribute__((noinline)) int compare_and_swap_rest(const void *origin_addr, const void *compare_addr,
							   void *result_addr, MPI_Datatype datatype, int target_rank,
							   MPI_Aint target_disp, MPI_Win win)
{
	return shmRMA(5, B(origin_addr), 1, H(datatype), B(result_addr), 1, H(datatype), target_rank, target_disp, 1,
		      H(datatype), 0, H(win), NULL, B(compare_addr));
}

/* As Fetch_and_op: the common case (shmrun_fast_cas), else a tail jump
 * to the rest, whose fifteen-argument call then sets up no frame in the
 * common case (with shmrun_fast_cas's single table compare, the C twin's
 * cas_i64 row: 12.2-12.5 -> 11.5-11.7 ns, 2 ranks bound). */
int PMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr, MPI_Datatype datatype,
			  int target_rank, MPI_Aint target_disp, MPI_Win win)
{
	if (shmrun_fast_cas(win, origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp) == 0)
		return MPI_SUCCESS;
	SHMRUN_CALL_PC();
	return compare_and_swap_rest(origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp, win);
}

/* MPI I/O is not implemented: no file is ever open, and its calls return
 * their error on MPI_FILE_NULL's handler (files.go), which these set and
 * get. */
int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler) { return shmFileSetErrhandler(H(file), H(errhandler)); }
int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler) { return shmFileGetErrhandler(H(file), HP(errhandler)); }
int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler) { return shmWinSetErrhandler(H(win), H(errhandler)); }
int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
	ARG_WIN(errhandler, win);
	return shmWinGetErrhandler(H(win), HP(errhandler));
}
int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *win_errhandler_fn, MPI_Errhandler *errhandler)
{
	ARG_SELF(win_errhandler_fn);
	ARG_SELF(errhandler);
	return shmCreateErrhandler(H(win_errhandler_fn), 1, HP(errhandler));
}
int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
	ARG_WIN(group, win);
	return shmWinGetGroup(H(win), HP(group));
}
int PMPI_Win_set_name(MPI_Win win, const char *win_name)
{
	ARG_WIN(win_name, win);
	return shmWinSetName(H(win), B(win_name));
}
int PMPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
	ARG_WIN(win_name, win);
	ARG_WIN(resultlen, win);
	return shmWinGetName(H(win), win_name, resultlen);
}
int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size) { return shmWinAttach(H(win), B(base), size, 1); }
int PMPI_Win_detach(MPI_Win win, const void *base) { return shmWinAttach(H(win), B(base), 0, 0); }
int PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
	ARG_WIN(info_used, win);
	return shmWinGetInfo(H(win), HP(info_used));
}
int PMPI_Win_set_info(MPI_Win win, MPI_Info info) { return shmWinSetInfo(H(win), H(info)); }

int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
	ARG_SELF(baseptr);
	return shmAllocMem(size, H(info), (char **)baseptr);
}
int PMPI_Free_mem(void *base) { return shmFreeMem(B(base)); }

/* Handle serialization (21.4.5): a handle's integer is its value. */
#define TOINT(KIND, T)                                                       \
	int PMPI_##KIND##_toint(T h) { return (int)(intptr_t)h; }                \
	T PMPI_##KIND##_fromint(int i) { return (T)(intptr_t)i; }               \
	MPI_Fint MPI_##KIND##_c2f(T h) { return (MPI_Fint)(intptr_t)h; }         \
	T MPI_##KIND##_f2c(MPI_Fint i) { return (T)(intptr_t)i; }
TOINT(Comm, MPI_Comm)
TOINT(Errhandler, MPI_Errhandler)
TOINT(File, MPI_File)
TOINT(Group, MPI_Group)
TOINT(Info, MPI_Info)
TOINT(Message, MPI_Message)
TOINT(Op, MPI_Op)
TOINT(Request, MPI_Request)
TOINT(Session, MPI_Session)
TOINT(Type, MPI_Datatype)
TOINT(Win, MPI_Win)

/* ---- datatypes -------------------------------------------------------------- */

/* A datatype's errors are MPI_COMM_SELF's (typeCall), also Pack's and
 * Unpack's; its constructors' arrays are needed when they have elements. */
int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	ARG_SELF(newtype);
	return shmTypeContiguous(count, H(oldtype), 0, HP(newtype));
}
int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	ARG_SELF(newtype);
	return shmTypeContiguous(count, H(oldtype), 1, HP(newtype));
}
int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	ARG_SELF(newtype);
	return shmTypeVector(count, blocklength, stride, 0, H(oldtype), 0, HP(newtype));
}
int PMPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	ARG_SELF(newtype);
	return shmTypeVector(count, blocklength, stride, 0, H(oldtype), 1, HP(newtype));
}
int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	ARG_SELF(newtype);
	return shmTypeVector(count, blocklength, stride, 1, H(oldtype), 0, HP(newtype));
}
int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	ARG_SELF(newtype);
	return shmTypeVector(count, blocklength, stride, 1, H(oldtype), 1, HP(newtype));
}
/* shmTypeIndexed tells the forms apart by which arrays are NULL (no
 * blocklens: a _block form; ap: an h form): the empty arrays a count of 0
 * allows to be NULL reach it as an empty array of its own. */
int PMPI_Type_indexed(int count, const int array_of_blocklengths[], const int array_of_displacements[], MPI_Datatype oldtype,
		      MPI_Datatype *newtype)
{
	if (count > 0) {
		ARG_SELF(array_of_blocklengths);
		ARG_SELF(array_of_displacements);
	}
	ARG_SELF(newtype);
	static const int none[1];
	return shmTypeIndexed(count, (int *)(uintptr_t)(count > 0 ? array_of_blocklengths : none), 0,
			      (int *)(uintptr_t)array_of_displacements, NULL, H(oldtype), HP(newtype));
}
int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
			      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	if (count > 0) {
		ARG_SELF(array_of_blocklengths);
		ARG_SELF(array_of_displacements);
	}
	ARG_SELF(newtype);
	static const int none[1];
	static const MPI_Aint anone[1];
	return shmTypeIndexed(count, (int *)(uintptr_t)(count > 0 ? array_of_blocklengths : none), 0, NULL,
			      (MPI_Aint *)(uintptr_t)(count > 0 ? array_of_displacements : anone), H(oldtype), HP(newtype));
}
int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[], MPI_Datatype oldtype,
				   MPI_Datatype *newtype)
{
	if (count > 0)
		ARG_SELF(array_of_displacements);
	ARG_SELF(newtype);
	return shmTypeIndexed(count, NULL, blocklength, (int *)(uintptr_t)array_of_displacements, NULL, H(oldtype), HP(newtype));
}
int PMPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
				    MPI_Datatype *newtype)
{
	if (count > 0)
		ARG_SELF(array_of_displacements);
	ARG_SELF(newtype);
	static const MPI_Aint anone[1];
	return shmTypeIndexed(count, NULL, blocklength, NULL, (MPI_Aint *)(uintptr_t)(count > 0 ? array_of_displacements : anone),
			      H(oldtype), HP(newtype));
}
int PMPI_Type_create_struct(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
			    const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
	if (count > 0) {
		ARG_SELF(array_of_blocklengths);
		ARG_SELF(array_of_displacements);
		ARG_SELF(array_of_types);
	}
	ARG_SELF(newtype);
	return shmTypeStruct(count, (int *)(uintptr_t)array_of_blocklengths, (MPI_Aint *)(uintptr_t)array_of_displacements,
			     (uintptr_t *)(uintptr_t)array_of_types, HP(newtype));
}
int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[], const int array_of_starts[],
			      int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	if (ndims > 0) {
		ARG_SELF(array_of_sizes);
		ARG_SELF(array_of_subsizes);
		ARG_SELF(array_of_starts);
	}
	ARG_SELF(newtype);
	return shmTypeSubarray(ndims, (int *)(uintptr_t)array_of_sizes, (int *)(uintptr_t)array_of_subsizes,
			       (int *)(uintptr_t)array_of_starts, order, H(oldtype), HP(newtype));
}
int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype)
{
	ARG_SELF(newtype);
	return shmTypeResized(H(oldtype), lb, extent, 0, HP(newtype));
}

/* The large-count constructors (MPI 4.1 §5.1.2): every count, blocklength
 * and displacement an MPI_Count (subarray's ndims and order stay ints). */
static const MPI_Count cnone[1];
int PMPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[], const MPI_Count array_of_displacements[],
			MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	if (count > 0) {
		ARG_SELF(array_of_blocklengths);
		ARG_SELF(array_of_displacements);
	}
	ARG_SELF(newtype);
	return shmTypeIndexedC(count, (int64_t *)(uintptr_t)(count > 0 ? array_of_blocklengths : cnone), 0,
			       (int64_t *)(uintptr_t)array_of_displacements, 0, H(oldtype), HP(newtype));
}
int PMPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
				const MPI_Count array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	if (count > 0) {
		ARG_SELF(array_of_blocklengths);
		ARG_SELF(array_of_displacements);
	}
	ARG_SELF(newtype);
	return shmTypeIndexedC(count, (int64_t *)(uintptr_t)(count > 0 ? array_of_blocklengths : cnone), 0,
			       (int64_t *)(uintptr_t)array_of_displacements, 1, H(oldtype), HP(newtype));
}
int PMPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count array_of_displacements[],
				     MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	if (count > 0)
		ARG_SELF(array_of_displacements);
	ARG_SELF(newtype);
	return shmTypeIndexedC(count, NULL, blocklength, (int64_t *)(uintptr_t)array_of_displacements, 0, H(oldtype),
			       HP(newtype));
}
int PMPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count array_of_displacements[],
				      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	if (count > 0)
		ARG_SELF(array_of_displacements);
	ARG_SELF(newtype);
	return shmTypeIndexedC(count, NULL, blocklength, (int64_t *)(uintptr_t)array_of_displacements, 1, H(oldtype),
			       HP(newtype));
}
int PMPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
			      const MPI_Count array_of_displacements[], const MPI_Datatype array_of_types[],
			      MPI_Datatype *newtype)
{
	if (count > 0) {
		ARG_SELF(array_of_blocklengths);
		ARG_SELF(array_of_displacements);
		ARG_SELF(array_of_types);
	}
	ARG_SELF(newtype);
	return shmTypeStructC(count, (int64_t *)(uintptr_t)array_of_blocklengths, (int64_t *)(uintptr_t)array_of_displacements,
			      (uintptr_t *)(uintptr_t)array_of_types, HP(newtype));
}
int PMPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[], const MPI_Count array_of_subsizes[],
				const MPI_Count array_of_starts[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	if (ndims > 0) {
		ARG_SELF(array_of_sizes);
		ARG_SELF(array_of_subsizes);
		ARG_SELF(array_of_starts);
	}
	ARG_SELF(newtype);
	return shmTypeSubarrayC(ndims, (int64_t *)(uintptr_t)array_of_sizes, (int64_t *)(uintptr_t)array_of_subsizes,
				(int64_t *)(uintptr_t)array_of_starts, order, H(oldtype), HP(newtype));
}
int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[], const int array_of_distribs[],
			    const int array_of_dargs[], const int array_of_psizes[], int order, MPI_Datatype oldtype,
			    MPI_Datatype *newtype)
{
	if (ndims > 0) {
		ARG_SELF(array_of_gsizes);
		ARG_SELF(array_of_distribs);
		ARG_SELF(array_of_dargs);
		ARG_SELF(array_of_psizes);
	}
	ARG_SELF(newtype);
	return shmTypeDarray(size, rank, ndims, NULL, (int *)(uintptr_t)array_of_gsizes, (int *)(uintptr_t)array_of_distribs,
			     (int *)(uintptr_t)array_of_dargs, (int *)(uintptr_t)array_of_psizes, order, H(oldtype), 0,
			     HP(newtype));
}
int PMPI_Type_create_darray_c(int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
			      const int array_of_distribs[], const int array_of_dargs[], const int array_of_psizes[],
			      int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	if (ndims > 0) {
		ARG_SELF(array_of_gsizes);
		ARG_SELF(array_of_distribs);
		ARG_SELF(array_of_dargs);
		ARG_SELF(array_of_psizes);
	}
	ARG_SELF(newtype);
	return shmTypeDarray(size, rank, ndims, (int64_t *)(uintptr_t)array_of_gsizes, NULL,
			     (int *)(uintptr_t)array_of_distribs, (int *)(uintptr_t)array_of_dargs,
			     (int *)(uintptr_t)array_of_psizes, order, H(oldtype), 1, HP(newtype));
}
int PMPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent, MPI_Datatype *newtype)
{
	ARG_SELF(newtype);
	return shmTypeResized(H(oldtype), lb, extent, 1, HP(newtype));
}
int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	ARG_SELF(newtype);
	return shmTypeDup(H(oldtype), HP(newtype));
}
int PMPI_Type_commit(MPI_Datatype *datatype)
{
	ARG_SELF(datatype);
	return shmTypeCommit(HP(datatype));
}
int PMPI_Type_free(MPI_Datatype *datatype)
{
	ARG_SELF(datatype);
	return shmTypeFree(HP(datatype));
}
int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
	int64_t n;
	ARG_SELF(size);
	int rc = shmTypeExtent(H(datatype), 0, &n, NULL);
	if (rc == MPI_SUCCESS)
		*size = n > INT32_MAX ? MPI_UNDEFINED : (int)n;
	return rc;
}
#define TYPE_SIZE_C(NAME)                                                    \
	int PMPI_##NAME(MPI_Datatype datatype, MPI_Count *size)              \
	{                                                                    \
		ARG_SELF(size);                                              \
		return shmTypeExtent(H(datatype), 0, (int64_t *)size, NULL); \
	}
TYPE_SIZE_C(Type_size_c)
TYPE_SIZE_C(Type_size_x)
#define TYPE_EXTENT(NAME, T, KIND, LB, EXTENT)                                             \
	int PMPI_##NAME(MPI_Datatype datatype, T *LB, T *EXTENT)                           \
	{                                                                                  \
		ARG_SELF(LB);                                                              \
		ARG_SELF(EXTENT);                                                          \
		return shmTypeExtent(H(datatype), KIND, (int64_t *)LB, (int64_t *)EXTENT); \
	}
TYPE_EXTENT(Type_get_extent, MPI_Aint, 1, lb, extent)
TYPE_EXTENT(Type_get_extent_c, MPI_Count, 1, lb, extent)
TYPE_EXTENT(Type_get_extent_x, MPI_Count, 1, lb, extent)
TYPE_EXTENT(Type_get_true_extent, MPI_Aint, 2, true_lb, true_extent)
TYPE_EXTENT(Type_get_true_extent_c, MPI_Count, 2, true_lb, true_extent)
TYPE_EXTENT(Type_get_true_extent_x, MPI_Count, 2, true_lb, true_extent)
int PMPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
	ARG_SELF(type_name);
	ARG_SELF(resultlen);
	return shmTypeGetName(H(datatype), type_name, resultlen);
}
int PMPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
	ARG_SELF(type_name);
	return shmTypeSetName(H(datatype), B(type_name));
}

int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize, int *position, MPI_Comm comm)
{
	ARG_COMM(position, comm);
	int64_t pos = *position;
	int rc = shmPack(B(inbuf), incount, H(datatype), B(outbuf), outsize, &pos, 1, H(comm));
	if (rc == MPI_SUCCESS && pos > INT32_MAX)
		return shmRaise(B("MPI_Pack"), "the new position is past INT_MAX: use MPI_Pack_c", MPI_ERR_VALUE_TOO_LARGE, H(comm));
	if (rc == MPI_SUCCESS)
		*position = (int)pos;
	return rc;
}
int PMPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf, MPI_Count outsize, MPI_Count *position,
		MPI_Comm comm)
{
	ARG_COMM(position, comm);
	return shmPack(B(inbuf), incount, H(datatype), B(outbuf), outsize, (int64_t *)position, 1, H(comm));
}
int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount, MPI_Datatype datatype, MPI_Comm comm)
{
	ARG_COMM(position, comm);
	int64_t pos = *position;
	int rc = shmPack(B(inbuf), insize, H(datatype), B(outbuf), outcount, &pos, 0, H(comm));
	if (rc == MPI_SUCCESS && pos > INT32_MAX)
		return shmRaise(B("MPI_Unpack"), "the new position is past INT_MAX: use MPI_Unpack_c", MPI_ERR_VALUE_TOO_LARGE, H(comm));
	if (rc == MPI_SUCCESS)
		*position = (int)pos;
	return rc;
}
int PMPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf, MPI_Count outcount, MPI_Datatype datatype,
		  MPI_Comm comm)
{
	ARG_COMM(position, comm);
	return shmPack(B(inbuf), insize, H(datatype), B(outbuf), outcount, (int64_t *)position, 0, H(comm));
}
int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
	int64_t n;
	ARG_COMM(size, comm);
	int rc = shmPackSize(incount, H(datatype), &n, H(comm));
	if (rc == MPI_SUCCESS)
		*size = n > INT32_MAX ? MPI_UNDEFINED : (int)n;
	return rc;
}
int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size)
{
	ARG_COMM(size, comm);
	return shmPackSize(incount, H(datatype), (int64_t *)size, H(comm));
}

/* ---- Buffered sends (MPI 4.1 §3.6) -------------------------------------------
 * MPI_Bsend packs its message into the buffer the program attached (its
 * communicator's, else the process's; MPI_BUFFER_AUTOMATIC: memory of the
 * library's own) and sends the packed bytes with a standard nonblocking
 * send, so it returns without waiting for a receive whatever the message's
 * size. A message's region goes back to the buffer once its send is
 * complete: checked at the next buffered send into that buffer, waited for
 * by detach and flush (and by MPI_Comm_free and MPI_Finalize). A message
 * takes its packed size plus MPI_BSEND_OVERHEAD bytes of the buffer, as
 * the program is told to reckon; the bookkeeping lives outside it. */
struct shmrun_bmsg {
	char *at;
	size_t len;
	MPI_Request req;
	int busy;                 /* being packed and sent, outside the lock, by owner */
	int automatic;            /* at is the library's memory (MPI_BUFFER_AUTOMATIC), freed with it */
	unsigned long seq;        /* the buffer's count of messages when it was made */
	pthread_t owner;
	struct shmrun_bmsg *next; /* in address order */
};
struct shmrun_bbuf {
	MPI_Comm comm; /* MPI_COMM_NULL: the process's buffer */
	char *base;    /* NULL: none attached */
	size_t size;
	int automatic;
	int detaching;     /* a detach waits for its messages: buffered sends into it are refused */
	int gone;          /* its communicator was freed while a message of it was being set up */
	unsigned long seq; /* messages made in it */
	struct shmrun_bmsg *live;
	struct shmrun_bbuf *next;
};
/* shmrun_bmu guards the records; no MPI call that may wait, or raise an
 * error to a handler (which may call these functions again), is made
 * while it is held. shmrun_bcv is broadcast when a message's setting up
 * ends. */
static pthread_mutex_t shmrun_bmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t shmrun_bcv = PTHREAD_COND_INITIALIZER;
static struct shmrun_bbuf shmrun_bproc = {MPI_COMM_NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL};
static struct shmrun_bbuf *shmrun_bcomms; /* the communicators' */

/* shmrun_bfind is comm's buffer record (MPI_COMM_NULL: the process's),
 * or NULL; shmrun_bmu is held. */
static struct shmrun_bbuf *shmrun_bfind(MPI_Comm comm)
{
	if (comm == MPI_COMM_NULL)
		return &shmrun_bproc;
	for (struct shmrun_bbuf *b = shmrun_bcomms; b != NULL; b = b->next)
		if (b->comm == comm)
			return b;
	return NULL;
}

/* shmrun_bunlink takes m out of b's messages and frees it; shmrun_bmu
 * is held. */
static void shmrun_bunlink(struct shmrun_bbuf *b, struct shmrun_bmsg *m)
{
	for (struct shmrun_bmsg **p = &b->live; *p != NULL; p = &(*p)->next)
		if (*p == m) {
			*p = m->next;
			break;
		}
	if (m->automatic)
		free(m->at);
	free(m);
}

/* shmrun_breclaim gives back the regions of b whose sends are complete
 * (their errors are the sends', already raised where they can be, or
 * lost, as a buffered send's may be); shmrun_bmu is held, and a test
 * neither waits nor raises: a buffered send's request is a standard
 * send's whose arguments were checked when it started. */
static void shmrun_breclaim(struct shmrun_bbuf *b)
{
	for (struct shmrun_bmsg **p = &b->live; *p != NULL;) {
		struct shmrun_bmsg *m = *p;
		int done = 0;
		if (m->busy) {
			p = &m->next;
			continue;
		}
		if (PMPI_Test(&m->req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			done = 1; /* a failed send frees its request */
		if (!done) {
			p = &m->next;
			continue;
		}
		*p = m->next;
		if (m->automatic)
			free(m->at);
		free(m);
	}
}

/* shmrun_bdrain waits until every message b held when it was called is
 * sent (detach: every message, none being added), each wait without
 * shmrun_bmu (held on entry and return), so that buffered sends into
 * other buffers, into b if it is only flushed, and this thread's error
 * handlers, go on meanwhile. A message this thread is still setting up
 * (a handler of its buffered send's failure that detaches) is not waited
 * for: its send failed and it is given back. b stays allocated: only
 * shmrun_bsend_gone frees a record. */
static void shmrun_bdrain(struct shmrun_bbuf *b, int detach)
{
	unsigned long upto = b->seq;
	b->detaching += detach;
	for (;;) {
		struct shmrun_bmsg *m = b->live;
		int busy = 0;
		for (; m != NULL; m = m->next) {
			if (m->seq > upto)
				continue; /* sent into a buffer being flushed after the flush began */
			if (!m->busy)
				break;
			if (!pthread_equal(m->owner, pthread_self()))
				busy = 1;
		}
		if (m == NULL && !busy)
			break;
		if (m == NULL) {
			pthread_cond_wait(&shmrun_bcv, &shmrun_bmu);
			continue;
		}
		MPI_Request req = m->req;
		m->busy = 1, m->owner = pthread_self(); /* ours to wait for */
		pthread_mutex_unlock(&shmrun_bmu);
		PMPI_Wait(&req, MPI_STATUS_IGNORE);
		pthread_mutex_lock(&shmrun_bmu);
		shmrun_bunlink(b, m);
		pthread_cond_broadcast(&shmrun_bcv);
	}
	b->detaching -= detach;
}

/* shmrun_balloc takes len bytes of b for a message (first fit, in
 * address order), or NULL. */
static char *shmrun_balloc(struct shmrun_bbuf *b, size_t len, struct shmrun_bmsg *m)
{
	if (b->automatic) {
		if ((m->at = malloc(len)) != NULL)
			m->next = b->live, b->live = m;
		return m->at;
	}
	char *at = b->base;
	struct shmrun_bmsg **p = &b->live;
	for (; *p != NULL; p = &(*p)->next) {
		if ((size_t)((*p)->at - at) >= len)
			break;
		at = (*p)->at + (*p)->len;
	}
	if (*p == NULL && (size_t)(b->base + b->size - at) < len)
		return NULL;
	m->at = at;
	m->next = *p, *p = m;
	return at;
}

static int shmrun_bsend(const char *call, const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
	MPI_Count psize, pos = 0;
	int rc = PMPI_Pack_size_c(count, datatype, comm, &psize);
	if (rc != MPI_SUCCESS)
		return rc;
	if (dest == MPI_PROC_NULL) /* checks the rest; takes no buffer space */
		return shmSend(B(buf), count, H(datatype), dest, tag, H(comm), 0, B(call));
	char why[160];
	struct shmrun_bmsg *m = calloc(1, sizeof *m);
	if (m == NULL)
		return shmRaise(B(call), "no memory for the message's record", MPI_ERR_NO_MEM, H(comm));
	pthread_mutex_lock(&shmrun_bmu);
	struct shmrun_bbuf *b = shmrun_bfind(comm);
	if (b == NULL || b->base == NULL)
		b = &shmrun_bproc;
	if (b->base == NULL) {
		pthread_mutex_unlock(&shmrun_bmu);
		free(m);
		return shmRaise(B(call), "no buffer is attached (MPI_Buffer_attach or MPI_Comm_attach_buffer)", MPI_ERR_BUFFER,
				H(comm));
	}
	if (b->detaching) {
		pthread_mutex_unlock(&shmrun_bmu);
		free(m);
		return shmRaise(B(call), "the buffer is being detached or flushed (by another thread)", MPI_ERR_BUFFER, H(comm));
	}
	shmrun_breclaim(b);
	m->len = (size_t)psize + MPI_BSEND_OVERHEAD;
	m->req = MPI_REQUEST_NULL, m->busy = 1, m->owner = pthread_self();
	m->automatic = b->automatic, m->seq = ++b->seq;
	char *at = shmrun_balloc(b, m->len, m);
	if (at == NULL && b->automatic) {
		pthread_mutex_unlock(&shmrun_bmu);
		free(m);
		return shmRaise(B(call), "no memory for the message (MPI_BUFFER_AUTOMATIC)", MPI_ERR_NO_MEM, H(comm));
	}
	if (at == NULL) {
		size_t used = 0;
		for (struct shmrun_bmsg *q = b->live; q != NULL; q = q->next)
			used += q->len;
		pthread_mutex_unlock(&shmrun_bmu);
		snprintf(why, sizeof why,
			 "the message needs %zu bytes of the attached buffer (%lld packed + MPI_BSEND_OVERHEAD); %zu of its %zu are in use",
			 m->len, (long long)psize, used, b->size);
		free(m);
		return shmRaise(B(call), why, MPI_ERR_BUFFER, H(comm));
	}
	/* Packed and sent without the lock: a failure raises to the
	 * handler, which may call the buffer functions. */
	pthread_mutex_unlock(&shmrun_bmu);
	MPI_Request req = MPI_REQUEST_NULL;
	rc = PMPI_Pack_c(buf, count, datatype, at, psize, &pos, comm);
	if (rc == MPI_SUCCESS)
		rc = shmIsend(B(at), pos, H(MPI_PACKED), dest, tag, H(comm), 0, HP(&req), B(call));
	pthread_mutex_lock(&shmrun_bmu);
	if (rc != MPI_SUCCESS)
		shmrun_bunlink(b, m); /* the region back */
	else
		m->req = req, m->busy = 0;
	if (b->gone && b->live == NULL)
		free(b); /* a handler freed its communicator meanwhile: the record was left to us */
	pthread_cond_broadcast(&shmrun_bcv);
	pthread_mutex_unlock(&shmrun_bmu);
	return rc;
}

#define BSEND(NAME, CT)                                                                                   \
	int PMPI_##NAME(const void *buf, CT count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) \
	{                                                                                                 \
		return shmrun_bsend("MPI_" #NAME, buf, count, datatype, dest, tag, comm);                 \
	}
BSEND(Bsend, int)
BSEND(Bsend_c, MPI_Count)
/* MPI_Ibsend's request is complete once the message is buffered, which
 * it is when the call returns: a send to MPI_PROC_NULL's request. */
#define IBSEND(NAME, CT)                                                                                  \
	int PMPI_##NAME(const void *buf, CT count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, \
			MPI_Request *request)                                                             \
	{                                                                                                 \
		ARG_COMM(request, comm);                                                                  \
		int rc = shmrun_bsend("MPI_" #NAME, buf, count, datatype, dest, tag, comm);               \
		if (rc != MPI_SUCCESS)                                                                    \
			return rc;                                                                        \
		return shmIsend(NULL, 0, H(MPI_BYTE), MPI_PROC_NULL, 0, H(comm), 0, HP(request), "MPI_" #NAME); \
	}
IBSEND(Ibsend, int)
IBSEND(Ibsend_c, MPI_Count)

/* shmrun_battach attaches buffer (size bytes) as comm's (MPI_COMM_NULL:
 * the process's). */
static int shmrun_battach(const char *call, MPI_Comm comm, void *buffer, MPI_Count size)
{
	char why[128];
	if (comm != MPI_COMM_NULL) {
		int n, rc = PMPI_Comm_size(comm, &n); /* a valid communicator */
		if (rc != MPI_SUCCESS)
			return rc;
	}
	if (buffer != MPI_BUFFER_AUTOMATIC && (size < 0 || (buffer == NULL && size > 0))) {
		snprintf(why, sizeof why, "a buffer of %lld bytes at %p", (long long)size, buffer);
		return shmRaise(B(call), why, MPI_ERR_ARG, H(comm));
	}
	pthread_mutex_lock(&shmrun_bmu);
	struct shmrun_bbuf *b = shmrun_bfind(comm);
	if (b != NULL && b->base != NULL) {
		pthread_mutex_unlock(&shmrun_bmu);
		return shmRaise(B(call), "a buffer is already attached: detach it first", MPI_ERR_BUFFER, H(comm));
	}
	if (b == NULL) {
		b = calloc(1, sizeof *b);
		if (b == NULL) {
			pthread_mutex_unlock(&shmrun_bmu);
			return shmRaise(B(call), "no memory for the buffer's record", MPI_ERR_NO_MEM, H(comm));
		}
		b->comm = comm, b->next = shmrun_bcomms, shmrun_bcomms = b;
	}
	b->automatic = buffer == MPI_BUFFER_AUTOMATIC;
	b->base = b->automatic ? (char *)MPI_BUFFER_AUTOMATIC : buffer != NULL ? buffer : (char *)b; /* an empty buffer */
	b->size = b->automatic ? 0 : (size_t)size;
	pthread_mutex_unlock(&shmrun_bmu);
	return MPI_SUCCESS;
}

/* shmrun_bdetach waits for every message in comm's buffer and detaches
 * it, returning its address and size (both NULL: a flush, which keeps
 * it). narrow: the int form, which refuses a buffer whose size it cannot
 * return (MPI_ERR_VALUE_TOO_LARGE), leaving it attached. */
static int shmrun_bdetach(const char *call, MPI_Comm comm, void *buffer_addr, MPI_Count *size, int flush, int narrow)
{
	if (comm != MPI_COMM_NULL) {
		int n, rc = PMPI_Comm_size(comm, &n);
		if (rc != MPI_SUCCESS)
			return rc;
	}
	if (!flush && (buffer_addr == NULL || size == NULL))
		return shmRaise(B(call), buffer_addr == NULL ? "buffer_addr is NULL" : "size is NULL", MPI_ERR_ARG, H(comm));
	pthread_mutex_lock(&shmrun_bmu);
	struct shmrun_bbuf *b = shmrun_bfind(comm);
	if (b == NULL || b->base == NULL) {
		pthread_mutex_unlock(&shmrun_bmu);
		if (flush)
			return MPI_SUCCESS;
		return shmRaise(B(call), "no buffer is attached", MPI_ERR_BUFFER, H(comm));
	}
	if (narrow && b->size > INT32_MAX) {
		char why[128];
		snprintf(why, sizeof why, "the buffer's size, %zu bytes, does not fit an int: use %s_c", b->size, call);
		pthread_mutex_unlock(&shmrun_bmu);
		return shmRaise(B(call), why, MPI_ERR_VALUE_TOO_LARGE, H(comm));
	}
	shmrun_bdrain(b, !flush);
	if (!flush) {
		void *base = b->automatic ? MPI_BUFFER_AUTOMATIC : b->base == (char *)b ? NULL : b->base;
		memcpy(buffer_addr, &base, sizeof base);
		*size = (MPI_Count)b->size;
		b->base = NULL, b->size = 0, b->automatic = 0;
	}
	pthread_mutex_unlock(&shmrun_bmu);
	return MPI_SUCCESS;
}

int PMPI_Buffer_attach(void *buffer, int size) { return shmrun_battach("MPI_Buffer_attach", MPI_COMM_NULL, buffer, size); }
int PMPI_Buffer_attach_c(void *buffer, MPI_Count size)
{
	return shmrun_battach("MPI_Buffer_attach_c", MPI_COMM_NULL, buffer, size);
}
int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
	MPI_Count n = 0;
	int rc = shmrun_bdetach("MPI_Buffer_detach", MPI_COMM_NULL, buffer_addr, size ? &n : NULL, 0, 1);
	if (rc == MPI_SUCCESS)
		*size = (int)n;
	return rc;
}
int PMPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
	return shmrun_bdetach("MPI_Buffer_detach_c", MPI_COMM_NULL, buffer_addr, size, 0, 0);
}
int PMPI_Buffer_flush(void) { return shmrun_bdetach("MPI_Buffer_flush", MPI_COMM_NULL, NULL, NULL, 1, 0); }
int PMPI_Comm_attach_buffer(MPI_Comm comm, void *buffer, int size)
{
	if (comm == MPI_COMM_NULL)
		return shmRaise(B("MPI_Comm_attach_buffer"), "MPI_COMM_NULL", MPI_ERR_COMM, H(comm));
	return shmrun_battach("MPI_Comm_attach_buffer", comm, buffer, size);
}
int PMPI_Comm_attach_buffer_c(MPI_Comm comm, void *buffer, MPI_Count size)
{
	if (comm == MPI_COMM_NULL)
		return shmRaise(B("MPI_Comm_attach_buffer_c"), "MPI_COMM_NULL", MPI_ERR_COMM, H(comm));
	return shmrun_battach("MPI_Comm_attach_buffer_c", comm, buffer, size);
}
int PMPI_Comm_detach_buffer(MPI_Comm comm, void *buffer_addr, int *size)
{
	if (comm == MPI_COMM_NULL)
		return shmRaise(B("MPI_Comm_detach_buffer"), "MPI_COMM_NULL", MPI_ERR_COMM, H(comm));
	MPI_Count n = 0;
	int rc = shmrun_bdetach("MPI_Comm_detach_buffer", comm, buffer_addr, size ? &n : NULL, 0, 1);
	if (rc == MPI_SUCCESS)
		*size = (int)n;
	return rc;
}
int PMPI_Comm_detach_buffer_c(MPI_Comm comm, void *buffer_addr, MPI_Count *size)
{
	if (comm == MPI_COMM_NULL)
		return shmRaise(B("MPI_Comm_detach_buffer_c"), "MPI_COMM_NULL", MPI_ERR_COMM, H(comm));
	return shmrun_bdetach("MPI_Comm_detach_buffer_c", comm, buffer_addr, size, 0, 0);
}
int PMPI_Comm_flush_buffer(MPI_Comm comm)
{
	if (comm == MPI_COMM_NULL)
		return shmRaise(B("MPI_Comm_flush_buffer"), "MPI_COMM_NULL", MPI_ERR_COMM, H(comm));
	return shmrun_bdetach("MPI_Comm_flush_buffer", comm, NULL, NULL, 1, 0);
}

/* shmrun_bsend_gone is comm's free (NULL: MPI_Finalize): the buffered
 * messages are sent first, and a communicator's buffer is detached. */
static void shmrun_bsend_gone(MPI_Comm comm)
{
	pthread_mutex_lock(&shmrun_bmu);
	for (;;) {
		/* From the list's head each time: the drain lets the lock go,
		 * and other threads' frees change the list meanwhile. */
		struct shmrun_bbuf **p = &shmrun_bcomms;
		while (*p != NULL && comm != MPI_COMM_NULL && (*p)->comm != comm)
			p = &(*p)->next;
		if (*p == NULL)
			break;
		struct shmrun_bbuf *b = *p;
		*p = b->next; /* out of the list first: no new message goes in */
		shmrun_bdrain(b, 1);
		if (b->live == NULL)
			free(b);
		else
			b->gone = 1; /* this thread's message being set up frees it (shmrun_bsend) */
	}
	if (comm == MPI_COMM_NULL)
		shmrun_bdrain(&shmrun_bproc, 1);
	pthread_mutex_unlock(&shmrun_bmu);
}

/* Decoding datatypes: MPI_Type_get_envelope and MPI_Type_get_contents
 * (contents.go). */
int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses, int *num_datatypes, int *combiner)
{
	ARG_SELF(num_integers);
	ARG_SELF(num_addresses);
	ARG_SELF(num_datatypes);
	ARG_SELF(combiner);
	int64_t ni, na, nc, nd;
	int rc = shmTypeGetEnvelope(H(datatype), &ni, &na, &nc, &nd, combiner, 0);
	if (rc == MPI_SUCCESS)
		*num_integers = (int)ni, *num_addresses = (int)na, *num_datatypes = (int)nd;
	return rc;
}
int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers, MPI_Count *num_addresses, MPI_Count *num_large_counts,
			     MPI_Count *num_datatypes, int *combiner)
{
	ARG_SELF(num_integers);
	ARG_SELF(num_addresses);
	ARG_SELF(num_large_counts);
	ARG_SELF(num_datatypes);
	ARG_SELF(combiner);
	return shmTypeGetEnvelope(H(datatype), (int64_t *)num_integers, (int64_t *)num_addresses, (int64_t *)num_large_counts,
				  (int64_t *)num_datatypes, combiner, 1);
}
int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes, int array_of_integers[],
			   MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
	return shmTypeGetContents(H(datatype), max_integers, max_addresses, 0, max_datatypes, array_of_integers, array_of_addresses,
				  NULL, (uintptr_t *)array_of_datatypes, 0);
}
int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses, MPI_Count max_large_counts,
			     MPI_Count max_datatypes, int array_of_integers[], MPI_Aint array_of_addresses[],
			     MPI_Count array_of_large_counts[], MPI_Datatype array_of_datatypes[])
{
	return shmTypeGetContents(H(datatype), max_integers, max_addresses, max_large_counts, max_datatypes, array_of_integers,
				  array_of_addresses, array_of_large_counts, (uintptr_t *)array_of_datatypes, 1);
}

#include "mpi_aliases.h"
