//go:build mpi

package mpi

/*
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

// The error classes the Go side distinguishes (Class in Go).
enum {
	SHMC_OK, SHMC_OTHER, SHMC_RANK, SHMC_TAG, SHMC_COUNT, SHMC_TYPE, SHMC_OP,
	SHMC_COMM, SHMC_WIN, SHMC_ARG, SHMC_TRUNCATE, SHMC_RMA_SYNC, SHMC_RMA_RANGE,
	SHMC_RMA_SHARED, SHMC_RMA_FLAVOR, SHMC_DISP, SHMC_SIZE, SHMC_LOCKTYPE,
	SHMC_ASSERT, SHMC_NO_MEM, SHMC_BUFFER, SHMC_INFO, SHMC_ROOT, SHMC_GROUP,
	SHMC_REQUEST, SHMC_RMA_ATTACH, SHMC_RMA_CONFLICT,
};

static int shmc_class(int rc) {
	int cls = MPI_ERR_OTHER;
	if (MPI_Error_class(rc, &cls) != MPI_SUCCESS) return SHMC_OTHER;
	switch (cls) {
	case MPI_SUCCESS: return SHMC_OK;
	case MPI_ERR_RANK: return SHMC_RANK;
	case MPI_ERR_TAG: return SHMC_TAG;
	case MPI_ERR_COUNT: return SHMC_COUNT;
	case MPI_ERR_TYPE: return SHMC_TYPE;
	case MPI_ERR_OP: return SHMC_OP;
	case MPI_ERR_COMM: return SHMC_COMM;
	case MPI_ERR_WIN: return SHMC_WIN;
	case MPI_ERR_ARG: return SHMC_ARG;
	case MPI_ERR_TRUNCATE: return SHMC_TRUNCATE;
	case MPI_ERR_RMA_SYNC: return SHMC_RMA_SYNC;
	case MPI_ERR_RMA_RANGE: return SHMC_RMA_RANGE;
	case MPI_ERR_RMA_SHARED: return SHMC_RMA_SHARED;
	case MPI_ERR_RMA_FLAVOR: return SHMC_RMA_FLAVOR;
	case MPI_ERR_RMA_ATTACH: return SHMC_RMA_ATTACH;
	case MPI_ERR_RMA_CONFLICT: return SHMC_RMA_CONFLICT;
	case MPI_ERR_DISP: return SHMC_DISP;
	case MPI_ERR_SIZE: return SHMC_SIZE;
	case MPI_ERR_LOCKTYPE: return SHMC_LOCKTYPE;
	case MPI_ERR_ASSERT: return SHMC_ASSERT;
	case MPI_ERR_NO_MEM: return SHMC_NO_MEM;
	case MPI_ERR_BUFFER: return SHMC_BUFFER;
	case MPI_ERR_INFO_KEY: case MPI_ERR_INFO_VALUE: case MPI_ERR_INFO_NOKEY: case MPI_ERR_INFO: return SHMC_INFO;
	case MPI_ERR_ROOT: return SHMC_ROOT;
	case MPI_ERR_GROUP: return SHMC_GROUP;
	case MPI_ERR_REQUEST: return SHMC_REQUEST;
	}
	return SHMC_OTHER;
}

static void shmc_error_string(int rc, char *buf) {
	int n = 0;
	if (MPI_Error_string(rc, buf, &n) != MPI_SUCCESS) n = 0;
	buf[n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1] = 0;
}

// Predefined handles: some MPIs define them as expressions cgo cannot read.
static MPI_Comm shmc_comm_world(void) { return MPI_COMM_WORLD; }
static MPI_Comm shmc_comm_self(void) { return MPI_COMM_SELF; }
static MPI_Comm shmc_comm_null(void) { return MPI_COMM_NULL; }
static MPI_Win shmc_win_null(void) { return MPI_WIN_NULL; }
static MPI_Group shmc_group_null(void) { return MPI_GROUP_NULL; }
static int shmc_undefined(void) { return MPI_UNDEFINED; }
static int shmc_any_source(void) { return MPI_ANY_SOURCE; }
static int shmc_any_tag(void) { return MPI_ANY_TAG; }
static int shmc_proc_null(void) { return MPI_PROC_NULL; }

// The datatypes of atomics.Type, in its order (0 is MPI_BYTE).
static MPI_Datatype shmc_type(int t) {
	switch (t) {
	case 1: return MPI_INT8_T;
	case 2: return MPI_INT16_T;
	case 3: return MPI_INT32_T;
	case 4: return MPI_INT64_T;
	case 5: return MPI_UINT8_T;
	case 6: return MPI_UINT16_T;
	case 7: return MPI_UINT32_T;
	case 8: return MPI_UINT64_T;
	case 9: return MPI_FLOAT;
	case 10: return MPI_DOUBLE;
	case 11: return MPI_C_FLOAT_COMPLEX;
	case 12: return MPI_C_DOUBLE_COMPLEX;
	case 13: return MPI_FLOAT_INT;
	case 14: return MPI_DOUBLE_INT;
	case 15: return MPI_LONG_INT;
	case 16: return MPI_2INT;
	case 17: return MPI_SHORT_INT;
	}
	return MPI_BYTE;
}

// The ops of atomics.Op, in its order.
static MPI_Op shmc_op(int op) {
	switch (op) {
	case 1: return MPI_SUM;
	case 2: return MPI_PROD;
	case 3: return MPI_MAX;
	case 4: return MPI_MIN;
	case 5: return MPI_BAND;
	case 6: return MPI_BOR;
	case 7: return MPI_BXOR;
	case 8: return MPI_LAND;
	case 9: return MPI_LOR;
	case 10: return MPI_LXOR;
	case 11: return MPI_REPLACE;
	case 12: return MPI_NO_OP;
	case 13: return MPI_MINLOC;
	case 14: return MPI_MAXLOC;
	}
	return MPI_OP_NULL;
}

// The asserts of package win (bit i of its Mode constants), in MPI's values.
static int shmc_assert(int a) {
	int m = 0;
	if (a & 1) m |= MPI_MODE_NOCHECK;
	if (a & 2) m |= MPI_MODE_NOSTORE;
	if (a & 4) m |= MPI_MODE_NOPUT;
	if (a & 8) m |= MPI_MODE_NOPRECEDE;
	if (a & 16) m |= MPI_MODE_NOSUCCEED;
	return m;
}

static int shmc_lock_type(int exclusive) { return exclusive ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED; }

static int shmc_thread_multiple(void) { return MPI_THREAD_MULTIPLE; }

static int shmc_init(int *provided) {
	return MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, provided);
}

static int shmc_errors_return(MPI_Comm c) { return MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN); }
static int shmc_win_errors_return(MPI_Win w) { return MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN); }

// shmc_st3 gives Go a received message's status as three ints: source,
// tag and length in bytes.
static void shmc_st3(MPI_Status *s, int *st) {
	int cnt = 0;
	MPI_Get_count(s, MPI_BYTE, &cnt);
	st[0] = s->MPI_SOURCE; st[1] = s->MPI_TAG; st[2] = cnt;
}

static int shmc_recv(void *buf, int n, int src, int tag, MPI_Comm c, int *st) {
	MPI_Status s;
	int rc = MPI_Recv(buf, n, MPI_BYTE, src, tag, c, &s);
	shmc_st3(&s, st);
	return rc;
}

static int shmc_sendrecv(void *sbuf, int sn, int dest, int stag, void *rbuf, int rn, int src, int rtag, MPI_Comm c, int *st) {
	MPI_Status s;
	int rc = MPI_Sendrecv(sbuf, sn, MPI_BYTE, dest, stag, rbuf, rn, MPI_BYTE, src, rtag, c, &s);
	shmc_st3(&s, st);
	return rc;
}

static int shmc_probe(int src, int tag, MPI_Comm c, int block, int *flag, int *st) {
	MPI_Status s;
	int rc;
	if (block) { rc = MPI_Probe(src, tag, c, &s); *flag = 1; }
	else rc = MPI_Iprobe(src, tag, c, flag, &s);
	if (rc == MPI_SUCCESS && *flag) {
		shmc_st3(&s, st);
	}
	return rc;
}

static int shmc_split_shared(MPI_Comm c, int join, int key, MPI_Comm *out) {
	return MPI_Comm_split_type(c, join ? MPI_COMM_TYPE_SHARED : MPI_UNDEFINED, key, MPI_INFO_NULL, out);
}

// shmc_world_ranks writes the world ranks of c's members into out (size of c).
static int shmc_world_ranks(MPI_Comm c, int n, int *in, int *out) {
	MPI_Group g, wg;
	int rc = MPI_Comm_group(c, &g);
	if (rc != MPI_SUCCESS) return rc;
	rc = MPI_Comm_group(MPI_COMM_WORLD, &wg);
	if (rc == MPI_SUCCESS) {
		for (int i = 0; i < n; i++) in[i] = i;
		rc = MPI_Group_translate_ranks(g, n, in, wg, out);
		MPI_Group_free(&wg);
	}
	MPI_Group_free(&g);
	return rc;
}

// shmc_group makes the group of c's ranks listed in ranks.
static int shmc_group(MPI_Comm c, int n, int *ranks, MPI_Group *out) {
	MPI_Group g;
	int rc = MPI_Comm_group(c, &g);
	if (rc != MPI_SUCCESS) return rc;
	rc = MPI_Group_incl(g, n, ranks, out);
	MPI_Group_free(&g);
	return rc;
}

static int shmc_create_group(MPI_Comm world, int n, int *ranks, int tag, MPI_Comm *out) {
	MPI_Group g;
	int rc = shmc_group(world, n, ranks, &g);
	if (rc != MPI_SUCCESS) return rc;
	rc = MPI_Comm_create_group(world, g, tag, out);
	MPI_Group_free(&g);
	return rc;
}

static int shmc_win_allocate(MPI_Aint size, int du, MPI_Comm c, int shared, void **base, MPI_Win *w) {
	int rc = shared ? MPI_Win_allocate_shared(size, du, MPI_INFO_NULL, c, base, w)
	                : MPI_Win_allocate(size, du, MPI_INFO_NULL, c, base, w);
	if (rc == MPI_SUCCESS) MPI_Win_set_errhandler(*w, MPI_ERRORS_RETURN);
	return rc;
}

// shmc_win_alloc_create is MPI_Win_allocate done as MPI_Alloc_mem and
// MPI_Win_create (see allocByCreate).
static int shmc_win_alloc_create(MPI_Aint size, int du, MPI_Comm c, void **base, MPI_Win *w) {
	int rc = MPI_Alloc_mem(size > 0 ? size : 1, MPI_INFO_NULL, base);
	if (rc != MPI_SUCCESS) return rc;
	rc = MPI_Win_create(*base, size, du, MPI_INFO_NULL, c, w);
	if (rc != MPI_SUCCESS) { MPI_Free_mem(*base); return rc; }
	MPI_Win_set_errhandler(*w, MPI_ERRORS_RETURN);
	return rc;
}

static int shmc_win_create(uintptr_t base, MPI_Aint size, int du, MPI_Comm c, MPI_Win *w) {
	int rc = MPI_Win_create((void *)base, size, du, MPI_INFO_NULL, c, w);
	if (rc == MPI_SUCCESS) MPI_Win_set_errhandler(*w, MPI_ERRORS_RETURN);
	return rc;
}

static int shmc_win_create_dynamic(MPI_Comm c, MPI_Win *w) {
	int rc = MPI_Win_create_dynamic(MPI_INFO_NULL, c, w);
	if (rc == MPI_SUCCESS) MPI_Win_set_errhandler(*w, MPI_ERRORS_RETURN);
	return rc;
}

static int shmc_win_shared_query(MPI_Win w, int rank, MPI_Aint *size, int *du, void **base) {
	return MPI_Win_shared_query(w, rank, size, du, base);
}

// shmc_appnum reads MPI_COMM_WORLD's MPI_APPNUM attribute.
static int shmc_appnum(int *v, int *set) {
	int *p = NULL, flag = 0;
	int rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &p, &flag);
	*set = rc == MPI_SUCCESS && flag && p;
	*v = *set ? *p : 0;
	return rc;
}

// shmc_win_unified says whether w's memory model is MPI_WIN_UNIFIED.
static int shmc_win_unified(MPI_Win w, int *unified) {
	int *model = NULL, flag = 0;
	int rc = MPI_Win_get_attr(w, MPI_WIN_MODEL, &model, &flag);
	*unified = rc == MPI_SUCCESS && flag && model && *model == MPI_WIN_UNIFIED;
	return rc;
}

// User ops: the function every user MPI_Op calls, which finds the Go
// function by the datatype, one per op (userop.go).
extern void shmcUserApply(uintptr_t dt, void *in, void *inout, int n);
static void shmc_user_fn(void *in, void *inout, int *len, MPI_Datatype *dt) {
	shmcUserApply((uintptr_t)(*dt), in, inout, *len);
}
int shmc_user_op(int unit, int commute, MPI_Datatype *dt, MPI_Op *op, uintptr_t *key) {
	int rc = MPI_Type_contiguous(unit, MPI_BYTE, dt);
	if (rc != MPI_SUCCESS) return rc;
	rc = MPI_Type_commit(dt);
	if (rc != MPI_SUCCESS) return rc;
	*key = (uintptr_t)(*dt);
	return MPI_Op_create(shmc_user_fn, commute, op);
}

// Requests. A status goes to Go as five ints: source, tag, length in
// bytes, cancelled, error code (MPI_SUCCESS unless MPI_ERR_IN_STATUS).
// Every MPI_Status here starts with MPI_ERROR = MPI_SUCCESS: an MPI sets
// that field only when a call returns MPI_ERR_IN_STATUS (MPICH leaves it
// alone otherwise), and shmc_st reads it.
static void shmc_st(MPI_Status *s, int *out, int rc) {
	int cnt = 0, canc = 0;
	MPI_Get_count(s, MPI_BYTE, &cnt);
	MPI_Test_cancelled(s, &canc);
	out[0] = s->MPI_SOURCE; out[1] = s->MPI_TAG; out[2] = cnt; out[3] = canc;
	out[4] = rc == MPI_ERR_IN_STATUS ? s->MPI_ERROR : rc;
	// Open MPI's MPI_Wait on a receive truncated through its self path
	// returns MPI_SUCCESS and says MPI_ERR_TRUNCATE only in the status.
	int cls;
	if (rc == MPI_SUCCESS && s->MPI_ERROR != MPI_SUCCESS && MPI_Error_class(s->MPI_ERROR, &cls) == MPI_SUCCESS && cls == MPI_ERR_TRUNCATE)
		out[4] = s->MPI_ERROR;
}

static int shmc_wait(MPI_Request *r, int *st) {
	MPI_Status s;
	s.MPI_ERROR = MPI_SUCCESS;
	int rc = MPI_Wait(r, &s);
	shmc_st(&s, st, rc);
	return rc;
}

static int shmc_test(MPI_Request *r, int *flag, int *st) {
	MPI_Status s;
	s.MPI_ERROR = MPI_SUCCESS;
	int rc = MPI_Test(r, flag, &s);
	if (*flag) shmc_st(&s, st, rc);
	return rc;
}

// shmc_multi is MPI_Waitall (kind 0), Waitany (1), Waitsome (2), Testall
// (3), Testany (4), Testsome (5) over n requests. idx receives the
// completed indices (*count of them; Waitall: all; Testall: all or none,
// but for those still pending at another's failure), st five ints per
// request, by request index.
static int shmc_multi(int kind, int n, MPI_Request *rs, int *count, int *idx, int *st) {
	MPI_Status few[64];
	MPI_Status *ss = n <= 64 ? few : calloc(n, sizeof(MPI_Status));
	if (!ss) return MPI_ERR_NO_MEM;
	// The MPI sets a status's MPI_ERROR only when the call returns
	// MPI_ERR_IN_STATUS, and shmc_st reads it.
	for (int i = 0; i < n; i++) ss[i].MPI_ERROR = MPI_SUCCESS;
	int rc = MPI_SUCCESS, flag = 0, one = MPI_UNDEFINED;
	*count = 0;
	switch (kind) {
	case 0: rc = MPI_Waitall(n, rs, ss); flag = 1; break;
	case 3: rc = MPI_Testall(n, rs, &flag, ss); break;
	case 1: rc = MPI_Waitany(n, rs, &one, ss); break;
	case 4: rc = MPI_Testany(n, rs, &one, &flag, ss); break;
	case 2: rc = MPI_Waitsome(n, rs, count, idx, ss); break;
	case 5: rc = MPI_Testsome(n, rs, count, idx, ss); break;
	}
	if (kind == 0 && rc == MPI_ERR_IN_STATUS) {
		// A request whose status says MPI_ERR_PENDING neither failed nor
		// completed (MPICH may return at another's failure): it is still
		// the MPI's, with its buffer. Waitall completes every request, so
		// wait for each such one here; its own error goes in its status.
		for (int i = 0; i < n; i++) {
			if (ss[i].MPI_ERROR != MPI_ERR_PENDING) continue;
			ss[i].MPI_ERROR = MPI_SUCCESS;
			int wrc = MPI_Wait(&rs[i], &ss[i]);
			if (wrc != MPI_SUCCESS) ss[i].MPI_ERROR = wrc;
		}
	}
	if (kind == 0 || kind == 3) {
		if (flag || rc == MPI_ERR_IN_STATUS) {
			// Testall's pending ones (as above) stay active: not
			// reported, so Go keeps them live; every other one is done.
			for (int i = 0; i < n; i++) {
				if (rc == MPI_ERR_IN_STATUS && ss[i].MPI_ERROR == MPI_ERR_PENDING) continue;
				idx[*count] = i;
				(*count)++;
				shmc_st(&ss[i], st + 5 * i, rc);
			}
		}
	} else if (kind == 1 || kind == 4) {
		// Waitany and Testany return the request's own error, with its
		// index: the request is done (the MPI freed it), and its status
		// carries the error, as MPI_ERR_IN_STATUS's would.
		if (one != MPI_UNDEFINED) { *count = 1; idx[0] = one; shmc_st(&ss[0], st + 5 * one, rc); rc = MPI_SUCCESS; }
	} else {
		if (*count == MPI_UNDEFINED) *count = 0;
		for (int i = 0; i < *count; i++) shmc_st(&ss[i], st + 5 * idx[i], rc);
	}
	if (ss != few) free(ss);
	return rc == MPI_ERR_IN_STATUS ? MPI_SUCCESS : rc;
}

// A generalized request (MPI_Grequest_start) completed by the Go side:
// a nonblocking or persistent collective's, or an Isendrecv's, whose job
// runs on a goroutine. Its status is the empty one (package comm keeps
// an Isendrecv's own); it cannot be cancelled.
static int shmc_greq_query(void *extra, MPI_Status *st) {
	(void)extra;
	MPI_Status_set_elements(st, MPI_BYTE, 0);
	MPI_Status_set_cancelled(st, 0);
	st->MPI_SOURCE = MPI_ANY_SOURCE;
	st->MPI_TAG = MPI_ANY_TAG;
	return MPI_SUCCESS;
}
static int shmc_greq_free(void *extra) { (void)extra; return MPI_SUCCESS; }
static int shmc_greq_cancel(void *extra, int complete) { (void)extra; (void)complete; return MPI_SUCCESS; }
static int shmc_greq_start(MPI_Request *r) {
	return MPI_Grequest_start(shmc_greq_query, shmc_greq_free, shmc_greq_cancel, NULL, r);
}

static void shmc_noop(void) {}

static void shmc_memcpy(uintptr_t dst, uintptr_t src, size_t n) { memcpy((void *)dst, (const void *)src, n); }

// shmc_make_type builds an hindexed type of old over n blocks, resized to
// lb and extent, and commits it.
static int shmc_make_type(int n, int *lens, MPI_Aint *displs, MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *out) {
	MPI_Datatype h;
	int rc = MPI_Type_create_hindexed(n, lens, displs, old, &h);
	if (rc != MPI_SUCCESS) return rc;
	rc = MPI_Type_create_resized(h, lb, extent, out);
	MPI_Type_free(&h);
	if (rc != MPI_SUCCESS) return rc;
	return MPI_Type_commit(out);
}

static int shmc_type_free(MPI_Datatype d) { return MPI_Type_free(&d); }

static int shmc_put_dt(void *src, int n, MPI_Datatype sdt, int t, MPI_Aint off, int tn, MPI_Datatype tdt, MPI_Win w) {
	return MPI_Put(src, n, sdt, t, off, tn, tdt, w);
}
static int shmc_get_dt_now(void *dst, int n, MPI_Datatype ddt, int t, MPI_Aint off, int tn, MPI_Datatype tdt, MPI_Win w) {
	int rc = MPI_Get(dst, n, ddt, t, off, tn, tdt, w);
	return rc != MPI_SUCCESS ? rc : MPI_Win_flush_local(t, w);
}
static int shmc_acc_dt(void *src, int n, MPI_Datatype sdt, int t, MPI_Aint off, int tn, MPI_Datatype tdt, MPI_Op op, MPI_Win w) {
	return MPI_Accumulate(src, n, sdt, t, off, tn, tdt, op, w);
}
static int shmc_get_acc_dt_now(void *src, int n, MPI_Datatype sdt, void *res, int t, MPI_Aint off, int tn, MPI_Datatype tdt, MPI_Op op, MPI_Win w) {
	int rc = MPI_Get_accumulate(src, n, sdt, res, n, sdt, t, off, tn, tdt, op, w);
	return rc != MPI_SUCCESS ? rc : MPI_Win_flush_local(t, w);
}

static int shmc_new_request(int kind, void *buf, int n, int peer, int tag, MPI_Comm c, MPI_Request *r) {
	switch (kind) {
	case 0: return MPI_Isend(buf, n, MPI_BYTE, peer, tag, c, r);
	case 1: return MPI_Issend(buf, n, MPI_BYTE, peer, tag, c, r);
	case 2: return MPI_Irecv(buf, n, MPI_BYTE, peer, tag, c, r);
	case 3: return MPI_Send_init(buf, n, MPI_BYTE, peer, tag, c, r);
	case 4: return MPI_Ssend_init(buf, n, MPI_BYTE, peer, tag, c, r);
	}
	return MPI_Recv_init(buf, n, MPI_BYTE, peer, tag, c, r);
}

static int shmc_mprobe(int src, int tag, MPI_Comm c, int block, int *flag, MPI_Message *m, int *st) {
	MPI_Status s;
	int rc;
	if (block) { rc = MPI_Mprobe(src, tag, c, m, &s); *flag = 1; }
	else rc = MPI_Improbe(src, tag, c, flag, m, &s);
	if (rc == MPI_SUCCESS && *flag) {
		shmc_st3(&s, st);
	}
	return rc;
}

static int shmc_mrecv(void *buf, int n, MPI_Message *m, int *st) {
	MPI_Status s;
	int rc = MPI_Mrecv(buf, n, MPI_BYTE, m, &s);
	shmc_st3(&s, st);
	return rc;
}

// shmc_movev is MPI_Gatherv (kind 0), MPI_Scatterv (1), MPI_Allgatherv (2)
// or MPI_Alltoallv (3) of bytes.
static int shmc_movev(int kind, void *sp, int sn, int *sc, int *sd, void *rp, int rn, int *rc, int *rd, int root, MPI_Comm c) {
	switch (kind) {
	case 0: return MPI_Gatherv(sp, sn, MPI_BYTE, rp, rc, rd, MPI_BYTE, root, c);
	case 1: return MPI_Scatterv(sp, sc, sd, MPI_BYTE, rp, rn, MPI_BYTE, root, c);
	case 2: return MPI_Allgatherv(sp, sn, MPI_BYTE, rp, rc, rd, MPI_BYTE, c);
	}
	return MPI_Alltoallv(sp, sc, sd, MPI_BYTE, rp, rc, rd, MPI_BYTE, c);
}

static int shmc_sendrecv_replace(void *buf, int n, int dest, int stag, int src, int rtag, MPI_Comm c, int *st) {
	MPI_Status s;
	int rc = MPI_Sendrecv_replace(buf, n, MPI_BYTE, dest, stag, src, rtag, c, &s);
	shmc_st3(&s, st);
	return rc;
}

// Fetching calls completed at the origin in the same C call, so that the
// MPI never holds a Go address past the call that gave it.
static int shmc_get_now(void *dst, int n, int t, MPI_Aint off, MPI_Win w) {
	int rc = MPI_Get(dst, n, MPI_BYTE, t, off, n, MPI_BYTE, w);
	return rc != MPI_SUCCESS ? rc : MPI_Win_flush_local(t, w);
}
static int shmc_get_acc_now(void *src, void *res, int n, MPI_Datatype dt, int t, MPI_Aint off, MPI_Op op, MPI_Win w) {
	int rc = MPI_Get_accumulate(src, n, dt, res, n, dt, t, off, n, dt, op, w);
	return rc != MPI_SUCCESS ? rc : MPI_Win_flush_local(t, w);
}
static int shmc_fop_now(void *src, void *res, MPI_Datatype dt, int t, MPI_Aint off, MPI_Op op, MPI_Win w) {
	int rc = MPI_Fetch_and_op(src, res, dt, t, off, op, w);
	return rc != MPI_SUCCESS ? rc : MPI_Win_flush_local(t, w);
}
static int shmc_cas_now(void *v, void *cmp, void *res, MPI_Datatype dt, int t, MPI_Aint off, MPI_Win w) {
	int rc = MPI_Compare_and_swap(v, cmp, res, dt, t, off, w);
	return rc != MPI_SUCCESS ? rc : MPI_Win_flush_local(t, w);
}

static MPI_Request shmc_request_null(void) { return MPI_REQUEST_NULL; }

// The hot calls. cgo checks every pointer argument of a call for Go
// pointers (cgoCheckPointer, several ns each), and Open MPI's handles are
// pointers: these take handles and addresses as uintptr_t instead, so
// that the calls the benchmarks time cost one cgo call and no checks
// (see addr in Go for the rule on Go memory).
#define HW(x) ((MPI_Win)(x))
#define HC(x) ((MPI_Comm)(x))
#define HT(x) ((MPI_Datatype)(x))
#define HO(x) ((MPI_Op)(x))
#define HP(x) ((void *)(x))
#define HR(x) ((MPI_Request *)(x))
#define HI(x) ((int *)(x))

static int shmc_h_put(uintptr_t b, int n, int t, MPI_Aint off, uintptr_t w) {
	return MPI_Put(HP(b), n, MPI_BYTE, t, off, n, MPI_BYTE, HW(w));
}
static int shmc_h_get(uintptr_t b, int n, int t, MPI_Aint off, uintptr_t w) {
	return shmc_get_now(HP(b), n, t, off, HW(w));
}
static int shmc_h_acc(uintptr_t b, int n, uintptr_t dt, int t, MPI_Aint off, uintptr_t op, uintptr_t w) {
	return MPI_Accumulate(HP(b), n, HT(dt), t, off, n, HT(dt), HO(op), HW(w));
}
static int shmc_h_get_acc(uintptr_t b, uintptr_t res, int n, uintptr_t dt, int t, MPI_Aint off, uintptr_t op, uintptr_t w) {
	return shmc_get_acc_now(HP(b), HP(res), n, HT(dt), t, off, HO(op), HW(w));
}
static int shmc_h_fop(uintptr_t b, uintptr_t res, uintptr_t dt, int t, MPI_Aint off, uintptr_t op, uintptr_t w) {
	return shmc_fop_now(HP(b), HP(res), HT(dt), t, off, HO(op), HW(w));
}
static int shmc_h_cas(uintptr_t v, uintptr_t cmp, uintptr_t res, uintptr_t dt, int t, MPI_Aint off, uintptr_t w) {
	return shmc_cas_now(HP(v), HP(cmp), HP(res), HT(dt), t, off, HW(w));
}
// shmc_h_sync is the synchronization calls of one window: what 0..9.
static int shmc_h_sync(int what, int rank, int assert, uintptr_t w) {
	switch (what) {
	case 0: return MPI_Win_flush(rank, HW(w));
	case 1: return MPI_Win_flush_local(rank, HW(w));
	case 2: return MPI_Win_flush_all(HW(w));
	case 3: return MPI_Win_flush_local_all(HW(w));
	case 4: return MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, assert, HW(w));
	case 5: return MPI_Win_lock(MPI_LOCK_SHARED, rank, assert, HW(w));
	case 6: return MPI_Win_unlock(rank, HW(w));
	case 7: return MPI_Win_lock_all(assert, HW(w));
	case 8: return MPI_Win_unlock_all(HW(w));
	case 9: return MPI_Win_sync(HW(w));
	}
	return MPI_Win_fence(assert, HW(w));
}
static int shmc_h_barrier(uintptr_t c) { return MPI_Barrier(HC(c)); }
static int shmc_h_send(uintptr_t b, int n, int dest, int tag, uintptr_t c, int sync) {
	return sync ? MPI_Ssend(HP(b), n, MPI_BYTE, dest, tag, HC(c)) : MPI_Send(HP(b), n, MPI_BYTE, dest, tag, HC(c));
}
static int shmc_h_recv(uintptr_t b, int n, int src, int tag, uintptr_t c, uintptr_t st) {
	return shmc_recv(HP(b), n, src, tag, HC(c), HI(st));
}
static int shmc_h_bcast(uintptr_t b, int n, int root, uintptr_t c) {
	return MPI_Bcast(HP(b), n, MPI_BYTE, root, HC(c));
}
// shmc_h_reduce is MPI_Allreduce (root < 0) or MPI_Reduce, of
// MPI_IN_PLACE when inplace.
static int shmc_h_reduce(int inplace, uintptr_t in, uintptr_t out, int n, uintptr_t dt, uintptr_t op, int root, uintptr_t c) {
	void *s = inplace ? MPI_IN_PLACE : HP(in);
	if (root < 0) return MPI_Allreduce(s, HP(out), n, HT(dt), HO(op), HC(c));
	return MPI_Reduce(s, HP(out), n, HT(dt), HO(op), root, HC(c));
}
static int shmc_h_new_request(int kind, uintptr_t b, int n, int peer, int tag, uintptr_t c, uintptr_t r) {
	return shmc_new_request(kind, HP(b), n, peer, tag, HC(c), HR(r));
}
static int shmc_h_wait(uintptr_t r, uintptr_t st) { return shmc_wait(HR(r), HI(st)); }
static int shmc_h_test(uintptr_t r, uintptr_t flag, uintptr_t st) { return shmc_test(HR(r), HI(flag), HI(st)); }
static int shmc_h_start(uintptr_t r) { return MPI_Start(HR(r)); }
static int shmc_h_startall(int n, uintptr_t rs) { return MPI_Startall(n, HR(rs)); }
static int shmc_h_multi(int kind, int n, uintptr_t rs, uintptr_t count, uintptr_t idx, uintptr_t st) {
	return shmc_multi(kind, n, HR(rs), HI(count), HI(idx), HI(st));
}


// The signal handlers in place before MPI_Init (the Go runtime's).
static struct sigaction shmc_before[65];

static void shmc_save_signals(void) {
	for (int s = 1; s < 65; s++) {
		if (s == SIGKILL || s == SIGSTOP) continue;
		sigaction(s, NULL, &shmc_before[s]);
	}
}

static unsigned long long shmc_restored;
static unsigned long long shmc_get_restored(void) { return shmc_restored; }

// shmc_go_needs says whether the Go runtime's own handler must stay on s:
// the synchronous signals it turns into panics or crash reports, and the
// ones it preempts goroutines and profiles with.
static int shmc_go_needs(int s) {
	return s == SIGSEGV || s == SIGBUS || s == SIGFPE || s == SIGILL || s == SIGTRAP ||
	       s == SIGURG || s == SIGPROF;
}

// shmc_restore_signals puts back the Go runtime's handler on the signals it
// needs where MPI_Init replaced it, and gives SA_ONSTACK to any other
// handler the MPI installed without it, since the Go runtime aborts on a
// signal whose handler runs on a goroutine's stack. It returns how many
// handlers it changed, and records which in shmc_restored.
static int shmc_restore_signals(void) {
	int changed = 0;
	shmc_restored = 0;
	for (int s = 1; s < 65; s++) {
		struct sigaction now, *was = &shmc_before[s];
		if (s == SIGKILL || s == SIGSTOP) continue;
		if (sigaction(s, NULL, &now) != 0) continue;
		if (now.sa_handler == was->sa_handler) continue;
		int had = was->sa_handler != SIG_DFL && was->sa_handler != SIG_IGN;
		int has = now.sa_handler != SIG_DFL && now.sa_handler != SIG_IGN;
		if (had && shmc_go_needs(s)) {
			sigaction(s, was, NULL);
		} else if (has && !(now.sa_flags & SA_ONSTACK)) {
			now.sa_flags |= SA_ONSTACK;
			sigaction(s, &now, NULL);
		} else {
			continue;
		}
		changed++;
		shmc_restored |= 1ULL << (s - 1);
	}
	return changed;
}
*/
import "C"

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"
	"unsafe"

	"github.com/shmrun/shmrun/atomics"
)

// Class is an MPI error class, as the Go side tells them apart.
type Class int

// The error classes (MPI_ERR_*) the backend maps to the Go API's errors.
const (
	ClassOther       Class = C.SHMC_OTHER
	ClassRank        Class = C.SHMC_RANK
	ClassTag         Class = C.SHMC_TAG
	ClassCount       Class = C.SHMC_COUNT
	ClassType        Class = C.SHMC_TYPE
	ClassOp          Class = C.SHMC_OP
	ClassComm        Class = C.SHMC_COMM
	ClassWin         Class = C.SHMC_WIN
	ClassArg         Class = C.SHMC_ARG
	ClassTruncate    Class = C.SHMC_TRUNCATE
	ClassRMASync     Class = C.SHMC_RMA_SYNC
	ClassRMARange    Class = C.SHMC_RMA_RANGE
	ClassRMAShared   Class = C.SHMC_RMA_SHARED
	ClassRMAFlavor   Class = C.SHMC_RMA_FLAVOR
	ClassDisp        Class = C.SHMC_DISP
	ClassSize        Class = C.SHMC_SIZE
	ClassLockType    Class = C.SHMC_LOCKTYPE
	ClassAssert      Class = C.SHMC_ASSERT
	ClassNoMem       Class = C.SHMC_NO_MEM
	ClassBuffer      Class = C.SHMC_BUFFER
	ClassInfo        Class = C.SHMC_INFO
	ClassRoot        Class = C.SHMC_ROOT
	ClassGroup       Class = C.SHMC_GROUP
	ClassRequest     Class = C.SHMC_REQUEST
	ClassRMAAttach   Class = C.SHMC_RMA_ATTACH
	ClassRMAConflict Class = C.SHMC_RMA_CONFLICT
)

// Error is a failed MPI call: its name, the class of its error code and
// the MPI's own message for it.
type Error struct {
	Call  string
	Class Class
	Msg   string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s (%s)", e.Call, e.Msg, Impl) }

// check turns an MPI return code into nil or an *Error.
func check(rc C.int, call string) error {
	if rc == C.MPI_SUCCESS {
		return nil
	}
	var buf [C.MPI_MAX_ERROR_STRING + 1]C.char
	C.shmc_error_string(rc, &buf[0])
	return &Error{Call: call, Class: Class(C.shmc_class(rc)), Msg: C.GoString(&buf[0])}
}

// bigCount is the error of a call with a count (of bytes or of elements)
// or a displacement in elements past the MPI's int: the MPI-3 calls
// this backend makes take int counts (MPI 4's _c forms are not in every
// MPI it links), and a count cut to 32 bits would move the wrong bytes,
// or write outside the buffer.
func bigCount(call string, ns ...int) error {
	for _, n := range ns {
		if n > math.MaxInt32 || n < math.MinInt32 {
			return &Error{Call: call, Class: ClassCount, Msg: fmt.Sprintf("%d is past the MPI's int counts (at most %d)", n, math.MaxInt32)}
		}
	}
	return nil
}

// bigCounts is bigCount of every value of each of vs.
func bigCounts(call string, vs ...[]int) error {
	for _, v := range vs {
		if err := bigCount(call, v...); err != nil {
			return err
		}
	}
	return nil
}

// Comm is an MPI communicator handle.
type Comm struct{ h C.MPI_Comm }

// Win is an MPI window handle, with the memory Free gives back to
// MPI_Free_mem when the window was made over it.
type Win struct {
	h    C.MPI_Win
	free unsafe.Pointer
}

// The predefined rank and tag values of the linked MPI.
var (
	ProcNull  = int(C.shmc_proc_null())
	AnySource = int(C.shmc_any_source())
	AnyTag    = int(C.shmc_any_tag())
	Undefined = int(C.shmc_undefined())
)

// World and Self are MPI_COMM_WORLD and MPI_COMM_SELF.
func World() Comm { return Comm{C.shmc_comm_world()} }

// AppNum is MPI_COMM_WORLD's MPI_APPNUM attribute: the number of this
// process's program on mpiexec's command line; set false if the MPI sets
// none.
func AppNum() (n int, set bool, err error) {
	var v, ok C.int
	err = check(C.shmc_appnum(&v, &ok), "MPI_Comm_get_attr")
	return int(v), ok != 0, err
}

// Self is MPI_COMM_SELF.
func Self() Comm { return Comm{C.shmc_comm_self()} }

// IsNull says whether c is MPI_COMM_NULL.
func (c Comm) IsNull() bool { return c.h == C.shmc_comm_null() }

// ptr is the address of b's first byte, or nil for an empty b. Only for the
// length of a call, unless b is pinned.
func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(unsafe.SliceData(b))
}

func dt(t atomics.Type) C.MPI_Datatype { return cTypes[t] }

// addr is the address of b's first byte as the integer the hot calls
// (shmc_h_*) take, 0 for an empty b. An integer does not keep Go memory
// alive: the caller calls runtime.KeepAlive(b) after the C call. The
// memory does not move meanwhile: Go's heap does not move objects, and a
// goroutine's stack does not move while the goroutine is in a C call.
// cgo's rule on what Go memory C may see holds as with a pointer: b
// holds no Go pointers.
func addr(b []byte) C.uintptr_t {
	if len(b) == 0 {
		return 0
	}
	return C.uintptr_t(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}

// addrOf is p as an integer, on addr's terms (p points to no Go pointers).
func addrOf[T any](p *T) C.uintptr_t { return C.uintptr_t(uintptr(unsafe.Pointer(p))) }

func mop(op atomics.Op) C.MPI_Op { return cOps[op] }

// The MPI's predefined handles and constants, read once: cgo reads a C
// macro (Open MPI's MPI_BYTE is one) by a call of its own, which would add
// a cgo call to every MPI call that names it.
var (
	cByte    C.MPI_Datatype     = C.MPI_BYTE
	cInPlace unsafe.Pointer     = C.MPI_IN_PLACE
	cTypes   [32]C.MPI_Datatype // by atomics.Type; 0 is MPI_BYTE
	cOps     [32]C.MPI_Op       // by atomics.Op
	hTypes   [32]C.uintptr_t    // cTypes as the hot calls take them
	hOps     [32]C.uintptr_t    // cOps as the hot calls take them
	cModes   [5]C.int           // MPI_MODE_* of win's Mode bits, in bit order
)

func init() {
	for i := range cTypes {
		cTypes[i] = C.shmc_type(C.int(i))
		hTypes[i] = htype(cTypes[i])
	}
	for i := range cOps {
		cOps[i] = C.shmc_op(C.int(i))
		hOps[i] = hop(cOps[i])
	}
	for i := range cModes {
		cModes[i] = C.shmc_assert(C.int(1 << i))
	}
}

// modes is the MPI assert of win's Mode bits a.
func modes(a int) C.int {
	var m C.int
	for i, v := range cModes {
		if a&(1<<i) != 0 {
			m |= v
		}
	}
	return m
}

// owner is the OS thread that calls MPI_Init_thread and MPI_Finalize, as
// the standard asks of the thread that finalizes.
var owner = make(chan func())

func init() {
	go func() {
		runtime.LockOSThread()
		for f := range owner {
			f()
		}
	}()
}

func onOwner(f func()) {
	done := make(chan struct{})
	owner <- func() { f(); close(done) }
	<-done
}

// Init calls MPI_Init_thread asking for MPI_THREAD_MULTIPLE, on a thread
// kept for it and Finalize, after making the settings of EnvDefaults that
// the user has not made and raising GOMAXPROCS to 2 where it is 1 and the
// user has not set it (minProcs). It saves the signal handlers before and mends
// after what the MPI changed (Restored), and sets MPI_ERRORS_RETURN on
// MPI_COMM_WORLD and MPI_COMM_SELF. A provided level below
// MPI_THREAD_MULTIPLE is an error: goroutines move between threads and
// may call concurrently.
func Init() error {
	for _, kv := range envDefaults {
		if _, ok := os.LookupEnv(kv[0]); !ok {
			os.Setenv(kv[0], kv[1])
		}
	}
	raiseProcs()
	var err error
	onOwner(func() {
		var provided C.int
		C.shmc_save_signals()
		rc := C.shmc_init(&provided)
		C.shmc_restore_signals()
		if err = check(rc, "MPI_Init_thread"); err != nil {
			return
		}
		if provided < C.shmc_thread_multiple() {
			err = &Error{Call: "MPI_Init_thread", Class: ClassOther,
				Msg: fmt.Sprintf("the MPI provides thread level %d, below MPI_THREAD_MULTIPLE", int(provided))}
			C.MPI_Finalize()
			return
		}
		if err = check(C.shmc_errors_return(C.shmc_comm_world()), "MPI_Comm_set_errhandler"); err != nil {
			return
		}
		err = check(C.shmc_errors_return(C.shmc_comm_self()), "MPI_Comm_set_errhandler")
	})
	return err
}

// minProcs is the GOMAXPROCS Init raises a smaller one to, unless the
// user set GOMAXPROCS. A rank bound to one core gets GOMAXPROCS 1, and
// then the Go runtime's sysmon takes the only P away from every MPI call
// that waits longer than its 20 us tick (no P is idle, so it hands the P
// to another thread, which the call's thread must then wait for on the
// same core) and keeps waking every 20 us: measured here, a 2-rank
// MPI_Barrier loop took 755 ns a call with 37000 context switches in two
// seconds at GOMAXPROCS 1, 530 ns and 12000 at 2. With a second P idle,
// sysmon leaves a call's P alone.
const minProcs = 2

// raiseProcs sets GOMAXPROCS to minProcs where it is smaller and the user
// has not set it.
func raiseProcs() {
	if _, set := os.LookupEnv("GOMAXPROCS"); !set && runtime.GOMAXPROCS(0) < minProcs {
		runtime.GOMAXPROCS(minProcs)
	}
}

// EnvDefaults lists the environment settings Init makes where unset, as
// name and value.
func EnvDefaults() [][2]string { return envDefaults }

// Restored lists the signals whose handlers Init mended after MPI_Init
// changed them: the Go runtime's put back (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
// SIGTRAP, SIGURG, SIGPROF), or SA_ONSTACK given to the MPI's.
func Restored() []int {
	var r []int
	for s := 1; s < 65; s++ {
		if C.shmc_get_restored()&(1<<(s-1)) != 0 {
			r = append(r, s)
		}
	}
	return r
}

// life orders MPI_Finalize after the frees that may run on any goroutine
// (Datatype.Free, from cleanups): after it, finalized says not to call.
var life struct {
	sync.RWMutex
	finalized bool
}

// Finalize calls MPI_Finalize on the thread that called MPI_Init_thread.
func Finalize() error {
	life.Lock()
	defer life.Unlock()
	var err error
	onOwner(func() { err = check(C.MPI_Finalize(), "MPI_Finalize") })
	life.finalized = true
	return err
}

// Abort is MPI_Abort.
func Abort(c Comm, code int) { C.MPI_Abort(c.h, C.int(code)) }

// Wtime is MPI_Wtime.
func Wtime() float64 { return float64(C.MPI_Wtime()) }

// Rank is MPI_Comm_rank.
func (c Comm) Rank() (int, error) {
	var r C.int
	err := check(C.MPI_Comm_rank(c.h, &r), "MPI_Comm_rank")
	return int(r), err
}

// Size is MPI_Comm_size.
func (c Comm) Size() (int, error) {
	var n C.int
	err := check(C.MPI_Comm_size(c.h, &n), "MPI_Comm_size")
	return int(n), err
}

// WorldRanks returns the MPI_COMM_WORLD rank of each of c's n ranks.
func (c Comm) WorldRanks(n int) ([]int, error) {
	in := make([]C.int, n)
	out := make([]C.int, n)
	var pin, pout *C.int
	if n > 0 {
		pin, pout = &in[0], &out[0]
	}
	if err := check(C.shmc_world_ranks(c.h, C.int(n), pin, pout), "MPI_Group_translate_ranks"); err != nil {
		return nil, err
	}
	r := make([]int, n)
	for i, v := range out {
		r[i] = int(v)
	}
	return r, nil
}

func (c Comm) made(out C.MPI_Comm, rc C.int, call string) (Comm, error) {
	if err := check(rc, call); err != nil {
		return Comm{}, err
	}
	n := Comm{out}
	if !n.IsNull() {
		if err := check(C.shmc_errors_return(out), "MPI_Comm_set_errhandler"); err != nil {
			return Comm{}, err
		}
	}
	return n, nil
}

// Dup is MPI_Comm_dup.
func (c Comm) Dup() (Comm, error) {
	var out C.MPI_Comm
	return c.made(out, C.MPI_Comm_dup(c.h, &out), "MPI_Comm_dup")
}

// Split is MPI_Comm_split; an undefined color gives MPI_COMM_NULL.
func (c Comm) Split(color, key int) (Comm, error) {
	var out C.MPI_Comm
	if color < 0 {
		color = Undefined
	}
	rc := C.MPI_Comm_split(c.h, C.int(color), C.int(key), &out)
	return c.made(out, rc, "MPI_Comm_split")
}

// SplitShared is MPI_Comm_split_type with MPI_COMM_TYPE_SHARED.
func (c Comm) SplitShared(key int) (Comm, error) {
	var out C.MPI_Comm
	rc := C.shmc_split_shared(c.h, 1, C.int(key), &out)
	return c.made(out, rc, "MPI_Comm_split_type")
}

// SplitSharedOut is SplitShared's call on a rank that passes
// MPI_UNDEFINED: it takes part and gets MPI_COMM_NULL (a zero Comm).
func (c Comm) SplitSharedOut() (Comm, error) {
	var out C.MPI_Comm
	rc := C.shmc_split_shared(c.h, 0, 0, &out)
	return c.made(out, rc, "MPI_Comm_split_type")
}

// CreateGroup is MPI_Comm_create_group over the group of c's ranks listed.
func (c Comm) CreateGroup(ranks []int, tag int) (Comm, error) {
	cr := cints(ranks)
	var out C.MPI_Comm
	rc := C.shmc_create_group(c.h, C.int(len(cr)), cptr(cr), C.int(tag), &out)
	return c.made(out, rc, "MPI_Comm_create_group")
}

// Free is MPI_Comm_free.
func (c *Comm) Free() error { return check(C.MPI_Comm_free(&c.h), "MPI_Comm_free") }

// Barrier is MPI_Barrier.
func (c Comm) Barrier() error {
	defer waited()
	return check(C.shmc_h_barrier(hcomm(c.h)), "MPI_Barrier")
}

func cints(v []int) []C.int {
	r := make([]C.int, len(v))
	for i, x := range v {
		r[i] = C.int(x)
	}
	return r
}

func cptr(v []C.int) *C.int {
	if len(v) == 0 {
		return nil
	}
	return &v[0]
}

// Status is a received message's source, tag and length in bytes.
type Status struct{ Source, Tag, Bytes int }

func status(st *[3]C.int) Status { return Status{int(st[0]), int(st[1]), int(st[2])} }

// Send is MPI_Send of buf as bytes; sync makes it MPI_Ssend.
func (c Comm) Send(buf []byte, dest, tag int, sync bool) error {
	defer waited()
	call, s := "MPI_Send", C.int(0)
	if sync {
		call, s = "MPI_Ssend", 1
	}
	if err := bigCount(call, len(buf)); err != nil {
		return err
	}
	rc := C.shmc_h_send(addr(buf), C.int(len(buf)), C.int(dest), C.int(tag), hcomm(c.h), s)
	runtime.KeepAlive(buf)
	return check(rc, call)
}

// Recv is MPI_Recv into buf as bytes.
func (c Comm) Recv(buf []byte, src, tag int) (Status, error) {
	defer waited()
	var st [3]C.int
	if err := bigCount("MPI_Recv", len(buf)); err != nil {
		return Status{}, err
	}
	rc := C.shmc_h_recv(addr(buf), C.int(len(buf)), C.int(src), C.int(tag), hcomm(c.h), addrOf(&st[0]))
	runtime.KeepAlive(buf)
	return status(&st), check(rc, "MPI_Recv")
}

// Sendrecv is MPI_Sendrecv of bytes.
func (c Comm) Sendrecv(send []byte, dest, stag int, recv []byte, src, rtag int) (Status, error) {
	defer waited()
	var st [3]C.int
	if err := bigCount("MPI_Sendrecv", len(send), len(recv)); err != nil {
		return Status{}, err
	}
	rc := C.shmc_sendrecv(ptr(send), C.int(len(send)), C.int(dest), C.int(stag),
		ptr(recv), C.int(len(recv)), C.int(src), C.int(rtag), c.h, &st[0])
	return status(&st), check(rc, "MPI_Sendrecv")
}

// Probe is MPI_Probe (block) or MPI_Iprobe; found is false when Iprobe
// found nothing.
func (c Comm) Probe(src, tag int, block bool) (st Status, found bool, err error) {
	defer waited()
	var cs [3]C.int
	var flag, blk C.int
	if block {
		blk = 1
	}
	rc := C.shmc_probe(C.int(src), C.int(tag), c.h, blk, &flag, &cs[0])
	if err = check(rc, "MPI_Probe"); err != nil || flag == 0 {
		return Status{}, false, err
	}
	return status(&cs), true, nil
}

// Bcast is MPI_Bcast of buf as bytes.
func (c Comm) Bcast(buf []byte, root int) error {
	defer waited()
	if err := bigCount("MPI_Bcast", len(buf)); err != nil {
		return err // len(buf) is the same on every rank: every rank returns here
	}
	rc := C.shmc_h_bcast(addr(buf), C.int(len(buf)), C.int(root), hcomm(c.h))
	runtime.KeepAlive(buf)
	return check(rc, "MPI_Bcast")
}

// Red is a reduction's datatype and op: a predefined op on a predefined
// type, or a user op over its own datatype (UserOp).
type Red struct {
	dt   C.MPI_Datatype
	op   C.MPI_Op
	user bool // a user op: MPI calls back into Go during the reduction
}

// Predefined is the Red of op on elements of t.
func Predefined(t atomics.Type, op atomics.Op) Red { return Red{dt: dt(t), op: mop(op)} }

func inPlace(send []byte) unsafe.Pointer {
	if send == nil {
		return cInPlace
	}
	return ptr(send)
}

// Reduce is MPI_Reduce (root >= 0) or MPI_Allreduce (root < 0) of count
// instances of r's datatype; a nil send is MPI_IN_PLACE (recv is then the
// data).
func (c Comm) Reduce(send, recv []byte, count int, r Red, root int) error {
	defer waited()
	call := "MPI_Reduce"
	if root < 0 {
		call, root = "MPI_Allreduce", -1
	}
	if err := bigCount(call, count); err != nil {
		return err // count is the same on every rank
	}
	in := C.int(0)
	if send == nil {
		in = 1
	}
	if r.user {
		// The op calls back into Go on this goroutine, whose stack may
		// then move, and with it buffers the caller kept there (addr's
		// rule holds only while no Go code runs): the reduction works
		// on copies on the heap, pinned.
		var pin runtime.Pinner
		defer pin.Unpin()
		heapCopy := func(b []byte) []byte {
			if len(b) == 0 {
				return b
			}
			h := make([]byte, len(b))
			pin.Pin(&h[0])
			copy(h, b)
			return h
		}
		hs, hr := heapCopy(send), heapCopy(recv)
		if send == nil {
			hs = nil
		}
		rc := C.shmc_h_reduce(in, addr(hs), addr(hr), C.int(count), htype(r.dt), hop(r.op), C.int(root), hcomm(c.h))
		copy(recv, hr)
		return check(rc, call)
	}
	rc := C.shmc_h_reduce(in, addr(send), addr(recv), C.int(count), htype(r.dt), hop(r.op), C.int(root), hcomm(c.h))
	runtime.KeepAlive(send)
	runtime.KeepAlive(recv)
	return check(rc, call)
}

// Scan is MPI_Scan, or MPI_Exscan when ex; a nil send is MPI_IN_PLACE.
func (c Comm) Scan(send, recv []byte, count int, r Red, ex bool) error {
	defer waited()
	if err := bigCount("MPI_Scan", count); err != nil {
		return err
	}
	if ex {
		return check(C.MPI_Exscan(inPlace(send), ptr(recv), C.int(count), r.dt, r.op, c.h), "MPI_Exscan")
	}
	return check(C.MPI_Scan(inPlace(send), ptr(recv), C.int(count), r.dt, r.op, c.h), "MPI_Scan")
}

// ReduceScatterBlock is MPI_Reduce_scatter_block of count instances a
// rank; a nil send is MPI_IN_PLACE.
func (c Comm) ReduceScatterBlock(send, recv []byte, count int, r Red) error {
	defer waited()
	if err := bigCount("MPI_Reduce_scatter_block", count); err != nil {
		return err
	}
	return check(C.MPI_Reduce_scatter_block(inPlace(send), ptr(recv), C.int(count), r.dt, r.op, c.h), "MPI_Reduce_scatter_block")
}

// Move kinds of Move.
const (
	MoveGather = iota
	MoveScatter
	MoveAllgather
	MoveAlltoall
)

// Move is MPI_Gather, MPI_Scatter, MPI_Allgather or MPI_Alltoall of n
// bytes a rank; a nil send is MPI_IN_PLACE.
func (c Comm) Move(kind int, send, recv []byte, n, root int) error {
	defer waited()
	if err := bigCount([...]string{"MPI_Gather", "MPI_Scatter", "MPI_Allgather", "MPI_Alltoall"}[kind], n); err != nil {
		return err // n is the same on every rank
	}
	sp := inPlace(send)
	cn := C.int(n)
	switch kind {
	case MoveGather:
		return check(C.MPI_Gather(sp, cn, cByte, ptr(recv), cn, cByte, C.int(root), c.h), "MPI_Gather")
	case MoveScatter:
		rp := ptr(recv)
		if recv == nil {
			rp = cInPlace
		}
		return check(C.MPI_Scatter(ptr(send), cn, cByte, rp, cn, cByte, C.int(root), c.h), "MPI_Scatter")
	case MoveAllgather:
		return check(C.MPI_Allgather(sp, cn, cByte, ptr(recv), cn, cByte, c.h), "MPI_Allgather")
	}
	return check(C.MPI_Alltoall(sp, cn, cByte, ptr(recv), cn, cByte, c.h), "MPI_Alltoall")
}

// AllocWin is MPI_Win_allocate (shared: MPI_Win_allocate_shared) of size
// bytes; the memory is the MPI's, returned as a slice, until Free.
func (c Comm) AllocWin(size, dispUnit int, shared bool) (Win, []byte, error) {
	var base unsafe.Pointer
	var w C.MPI_Win
	sh := C.int(0)
	call := "MPI_Win_allocate"
	if shared {
		sh, call = 1, "MPI_Win_allocate_shared"
	}
	if !shared && allocByCreate {
		rc := C.shmc_win_alloc_create(C.MPI_Aint(size), C.int(dispUnit), c.h, &base, &w)
		if err := check(rc, call); err != nil {
			return Win{}, nil, err
		}
		return Win{w, base}, cbytes(base, size), nil
	}
	rc := C.shmc_win_allocate(C.MPI_Aint(size), C.int(dispUnit), c.h, sh, &base, &w)
	if err := check(rc, call); err != nil {
		return Win{}, nil, err
	}
	return Win{h: w}, cbytes(base, size), nil
}

// cbytes is the slice over n bytes of MPI memory at p.
func cbytes(p unsafe.Pointer, n int) []byte {
	if p == nil || n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(p), n)
}

// CreateWin is MPI_Win_create over mem, which the caller keeps pinned until
// the window is freed.
//
// The window's disp unit is 1, and it starts Lead(mem) bytes before mem, on
// a 16-byte boundary: the caller adds that lead to every displacement.
// MPICH 4.0.2 (ch4:ucx) misplaces accumulates and gets into windows whose
// base is 8 bytes past a 16-byte boundary, as Go's allocator and a shared
// window's parts may leave them; the bytes before mem are never reached.
func (c Comm) CreateWin(mem []byte) (Win, error) {
	var w C.MPI_Win
	lead := Lead(mem)
	// The base as an integer: a Go pointer lead bytes before mem's
	// allocation would be an invalid pointer, which the garbage collector
	// may find on this stack (checkptr refuses it under -race).
	base := addr(mem)
	if base != 0 {
		base -= C.uintptr_t(lead)
	}
	rc := C.shmc_win_create(base, C.MPI_Aint(len(mem)+lead), 1, c.h, &w)
	runtime.KeepAlive(mem)
	return Win{h: w}, check(rc, "MPI_Win_create")
}

// Lead is how far mem starts past a 16-byte boundary: what CreateWin
// puts before it (0 for an empty mem).
func Lead(mem []byte) int {
	if len(mem) == 0 {
		return 0
	}
	return int(uintptr(ptr(mem)) % 16)
}

// SharedQuery is MPI_Win_shared_query: rank's memory as a slice, and its
// base address (which a part of size 0 has too).
func (w Win) SharedQuery(rank int) (mem []byte, base uintptr, dispUnit int, err error) {
	var size C.MPI_Aint
	var du C.int
	var p unsafe.Pointer
	if err = check(C.shmc_win_shared_query(w.h, C.int(rank), &size, &du, &p), "MPI_Win_shared_query"); err != nil {
		return nil, 0, 0, err
	}
	return cbytes(p, int(size)), uintptr(p), int(du), nil
}

// Unified says whether the window's memory model is MPI_WIN_UNIFIED
// (its MPI_WIN_MODEL attribute).
func (w Win) Unified() (bool, error) {
	var u C.int
	err := check(C.shmc_win_unified(w.h, &u), "MPI_Win_get_attr")
	return u != 0, err
}

// SharedSpan returns the memory of a shared window's n ranks as one
// slice, from the lowest part's first byte (which must be on 8 bytes) to
// the highest part's end (rounded up to 8 bytes, inside the last page of
// the mapping), and each
// rank's part's offset in it. The parts of an MPI_Win_allocate_shared
// window are one mapping in both MPIs; the caller checks that the
// offsets are the same in every process before it relies on that.
func (w Win) SharedSpan(n int) (span []byte, offs []int, err error) {
	var lo unsafe.Pointer // the lowest part's first byte
	bases, ends := make([]uintptr, n), uintptr(0)
	for q := range n {
		var size C.MPI_Aint
		var du C.int
		var p unsafe.Pointer
		if err := check(C.shmc_win_shared_query(w.h, C.int(q), &size, &du, &p), "MPI_Win_shared_query"); err != nil {
			return nil, nil, err
		}
		if p == nil {
			continue
		}
		bases[q], ends = uintptr(p), max(ends, uintptr(p)+uintptr(size))
		if lo == nil || uintptr(p) < uintptr(lo) {
			lo = p
		}
	}
	offs = make([]int, n)
	if lo == nil {
		return nil, offs, nil
	}
	for q := range n {
		if bases[q] != 0 {
			offs[q] = int(bases[q] - uintptr(lo))
		}
	}
	// With lo on 8 bytes, the span rounded up to 8 bytes ends inside the
	// mapping's last page (a mapping is whole pages).
	if uintptr(lo)%8 != 0 {
		return nil, nil, &Error{Call: "MPI_Win_shared_query", Class: ClassOther, Msg: "the shared window does not start on 8 bytes"}
	}
	return unsafe.Slice((*byte)(lo), (ends-uintptr(lo)+7)&^7), offs, nil
}

// Free is MPI_Win_free, and MPI_Free_mem of the memory AllocWin got for it.
func (w *Win) Free() error {
	if err := check(C.MPI_Win_free(&w.h), "MPI_Win_free"); err != nil {
		return err
	}
	if w.free != nil {
		p := w.free
		w.free = nil
		return check(C.MPI_Free_mem(p), "MPI_Free_mem")
	}
	return nil
}

// sync is the window synchronization call what (0..10, shmc_h_sync's).
func (w Win) sync(what int, rank int, assert C.int, call string) error {
	if what == 10 {
		// A fence waits for every rank; the other calls here are the
		// RMA rows' own, where an atomic add would show.
		defer waited()
	}
	return check(C.shmc_h_sync(C.int(what), C.int(rank), assert, hwin(w.h)), call)
}

// Fence is MPI_Win_fence with win's asserts (its Mode bits).
func (w Win) Fence(assert int) error { return w.sync(10, 0, modes(assert), "MPI_Win_fence") }

// Lock is MPI_Win_lock.
func (w Win) Lock(exclusive bool, rank, assert int) error {
	what := 5
	if exclusive {
		what = 4
	}
	return w.sync(what, rank, modes(assert), "MPI_Win_lock")
}

// Unlock is MPI_Win_unlock.
func (w Win) Unlock(rank int) error { return w.sync(6, rank, 0, "MPI_Win_unlock") }

// LockAll is MPI_Win_lock_all.
func (w Win) LockAll(assert int) error { return w.sync(7, 0, modes(assert), "MPI_Win_lock_all") }

// UnlockAll is MPI_Win_unlock_all.
func (w Win) UnlockAll() error { return w.sync(8, 0, 0, "MPI_Win_unlock_all") }

// Flush is MPI_Win_flush (local: MPI_Win_flush_local); rank < 0 is the
// _all form.
func (w Win) Flush(rank int, local bool) error {
	switch {
	case rank < 0 && local:
		return w.sync(3, 0, 0, "MPI_Win_flush_local_all")
	case rank < 0:
		return w.sync(2, 0, 0, "MPI_Win_flush_all")
	case local:
		return w.sync(1, rank, 0, "MPI_Win_flush_local")
	}
	return w.sync(0, rank, 0, "MPI_Win_flush")
}

// Sync is MPI_Win_sync.
func (w Win) Sync() error { return w.sync(9, 0, 0, "MPI_Win_sync") }

// Group is an MPI group handle, made by Comm.Group.
type Group struct{ h C.MPI_Group }

// Group makes the group of c's ranks listed (MPI_Comm_group and
// MPI_Group_incl); Free gives it back.
func (c Comm) Group(ranks []int) (Group, error) {
	cr := cints(ranks)
	var g Group
	err := check(C.shmc_group(c.h, C.int(len(cr)), cptr(cr), &g.h), "MPI_Group_incl")
	return g, err
}

// Free is MPI_Group_free.
func (g *Group) Free() error { return check(C.MPI_Group_free(&g.h), "MPI_Group_free") }

// Post is MPI_Win_post to the group g.
func (w Win) Post(g Group, assert int) error {
	return check(C.MPI_Win_post(g.h, modes(assert), w.h), "MPI_Win_post")
}

// Start is MPI_Win_start toward the group g.
func (w Win) Start(g Group, assert int) error {
	return check(C.MPI_Win_start(g.h, modes(assert), w.h), "MPI_Win_start")
}

// Complete is MPI_Win_complete.
func (w Win) Complete() error {
	defer waited()
	return check(C.MPI_Win_complete(w.h), "MPI_Win_complete")
}

// Wait is MPI_Win_wait.
func (w Win) Wait() error {
	defer waited()
	return check(C.MPI_Win_wait(w.h), "MPI_Win_wait")
}

// Test is MPI_Win_test.
func (w Win) Test() (bool, error) {
	var flag C.int
	err := check(C.MPI_Win_test(w.h, &flag), "MPI_Win_test")
	return flag != 0, err
}

// Put and Accumulate keep their origin address past their return: the
// caller keeps that memory valid (C memory, or pinned Go memory) until the
// epoch's completing call. The fetching calls complete before they return.

// Put is MPI_Put of src as bytes, at disp units into target's memory.
func (w Win) Put(src []byte, target, disp int) error {
	if err := bigCount("MPI_Put", len(src)); err != nil {
		return err
	}
	rc := C.shmc_h_put(addr(src), C.int(len(src)), C.int(target), C.MPI_Aint(disp), hwin(w.h))
	runtime.KeepAlive(src)
	return check(rc, "MPI_Put")
}

// Get is MPI_Get into dst, completed at the origin (MPI_Win_flush_local)
// in the same C call.
func (w Win) Get(dst []byte, target, disp int) error {
	if err := bigCount("MPI_Get", len(dst)); err != nil {
		return err
	}
	rc := C.shmc_h_get(addr(dst), C.int(len(dst)), C.int(target), C.MPI_Aint(disp), hwin(w.h))
	runtime.KeepAlive(dst)
	return check(rc, "MPI_Get")
}

// Accumulate is MPI_Accumulate of count elements of t.
func (w Win) Accumulate(src []byte, count int, t atomics.Type, target, disp int, op atomics.Op) error {
	if err := bigCount("MPI_Accumulate", count); err != nil {
		return err
	}
	rc := C.shmc_h_acc(addr(src), C.int(count), hTypes[t], C.int(target), C.MPI_Aint(disp), hOps[op], hwin(w.h))
	runtime.KeepAlive(src)
	return check(rc, "MPI_Accumulate")
}

// GetAccumulate is MPI_Get_accumulate of count elements of t, completed
// at the origin in the same C call.
func (w Win) GetAccumulate(src, result []byte, count int, t atomics.Type, target, disp int, op atomics.Op) error {
	if err := bigCount("MPI_Get_accumulate", count); err != nil {
		return err
	}
	rc := C.shmc_h_get_acc(addr(src), addr(result), C.int(count), hTypes[t], C.int(target), C.MPI_Aint(disp), hOps[op], hwin(w.h))
	runtime.KeepAlive(src)
	runtime.KeepAlive(result)
	return check(rc, "MPI_Get_accumulate")
}

// FetchAndOp is MPI_Fetch_and_op of one element of t, completed at the
// origin in the same C call; src may be nil for MPI_NO_OP.
func (w Win) FetchAndOp(src, result []byte, t atomics.Type, target, disp int, op atomics.Op) error {
	rc := C.shmc_h_fop(addr(src), addr(result), hTypes[t], C.int(target), C.MPI_Aint(disp), hOps[op], hwin(w.h))
	runtime.KeepAlive(src)
	runtime.KeepAlive(result)
	return check(rc, "MPI_Fetch_and_op")
}

// CompareAndSwap is MPI_Compare_and_swap of one element of t, completed at
// the origin in the same C call.
func (w Win) CompareAndSwap(v, compare, result []byte, t atomics.Type, target, disp int) error {
	rc := C.shmc_h_cas(addr(v), addr(compare), addr(result), hTypes[t], C.int(target), C.MPI_Aint(disp), hwin(w.h))
	runtime.KeepAlive(v)
	runtime.KeepAlive(compare)
	runtime.KeepAlive(result)
	return check(rc, "MPI_Compare_and_swap")
}

var commOf func(x any, call string) (Comm, error)

// RegisterComm gives the package comm's way from a *comm.Comm to its
// handle, for package win (which cannot see comm's fields).
func RegisterComm(f func(x any, call string) (Comm, error)) { commOf = f }

// CommOf returns the handle of x, a *comm.Comm, checked for call.
func CommOf(x any, call string) (Comm, error) { return commOf(x, call) }

// Request is an MPI request handle.
type Request struct{ h C.MPI_Request }

// requestNull is MPI_REQUEST_NULL: a constant (Open MPI's is the address
// of a global of the library), read once rather than by a cgo call each
// time.
var requestNull = Request{C.shmc_request_null()}

// RequestNull is MPI_REQUEST_NULL.
func RequestNull() Request { return requestNull }

// ReqStatus is a completed request's status: its message's source, tag and
// length, whether it was cancelled, and its own error.
type ReqStatus struct {
	Status
	Cancelled bool
	Err       error
}

func reqStatus(st []C.int, call string) ReqStatus {
	return ReqStatus{Status{int(st[0]), int(st[1]), int(st[2])}, st[3] != 0, check(st[4], call)}
}

// Kinds of NewRequest: the calls that make a point-to-point request.
const (
	OpIsend = iota
	OpIssend
	OpIrecv
	OpSendInit
	OpSsendInit
	OpRecvInit
)

// NewRequest is MPI_Isend, MPI_Issend, MPI_Irecv, MPI_Send_init,
// MPI_Ssend_init or MPI_Recv_init (kind: OpIsend ... OpRecvInit) of buf as
// bytes, to or from peer. The MPI works on buf until the request
// completes (a persistent one's until it is freed): the caller keeps it
// valid, C memory or pinned.
func (c Comm) NewRequest(kind int, buf []byte, peer, tag int) (Request, error) {
	var r Request
	call := [...]string{"MPI_Isend", "MPI_Issend", "MPI_Irecv", "MPI_Send_init", "MPI_Ssend_init", "MPI_Recv_init"}[kind]
	if err := bigCount(call, len(buf)); err != nil {
		return r, err
	}
	rc := C.shmc_h_new_request(C.int(kind), addr(buf), C.int(len(buf)), C.int(peer), C.int(tag), hcomm(c.h), addrOf(&r.h))
	runtime.KeepAlive(buf)
	return r, check(rc, call)
}

// Ibarrier is MPI_Ibarrier.
func (c Comm) Ibarrier() (Request, error) {
	var r Request
	err := check(C.MPI_Ibarrier(c.h, &r.h), "MPI_Ibarrier")
	return r, err
}

// GrequestStart is MPI_Grequest_start of a request the caller completes
// with GrequestComplete (from any thread): its status is empty.
func GrequestStart() (Request, error) {
	var r Request
	err := check(C.shmc_greq_start(&r.h), "MPI_Grequest_start")
	return r, err
}

// GrequestComplete is MPI_Grequest_complete of r, a copy of the handle
// GrequestStart returned (the waiter's copy becomes MPI_REQUEST_NULL).
func GrequestComplete(r Request) error {
	return check(C.MPI_Grequest_complete(r.h), "MPI_Grequest_complete")
}

// Start is MPI_Start.
func (r *Request) Start() error {
	rc := C.shmc_h_start(addrOf(&r.h))
	runtime.KeepAlive(r)
	return check(rc, "MPI_Start")
}

// Startall is MPI_Startall of rs (persistent requests): one call into C
// for all of them.
func Startall(rs []Request) error {
	if len(rs) == 0 {
		return nil
	}
	rc := C.shmc_h_startall(C.int(len(rs)), addrOf(&rs[0].h))
	runtime.KeepAlive(rs)
	return check(rc, "MPI_Startall")
}

// Free is MPI_Request_free.
func (r *Request) Free() error { return check(C.MPI_Request_free(&r.h), "MPI_Request_free") }

// Cancel is MPI_Cancel.
func (r *Request) Cancel() error { return check(C.MPI_Cancel(&r.h), "MPI_Cancel") }

// Wait is MPI_Wait.
func (r *Request) Wait() (ReqStatus, error) {
	defer waited()
	var st [5]C.int
	rc := C.shmc_h_wait(addrOf(&r.h), addrOf(&st[0]))
	runtime.KeepAlive(r)
	if err := check(rc, "MPI_Wait"); err != nil {
		return ReqStatus{Status: Status{int(st[0]), int(st[1]), int(st[2])}, Err: err}, nil
	}
	return reqStatus(st[:], "MPI_Wait"), nil
}

// Test is MPI_Test.
func (r *Request) Test() (ReqStatus, bool, error) {
	var st [5]C.int
	var flag C.int
	rc := C.shmc_h_test(addrOf(&r.h), addrOf(&flag), addrOf(&st[0]))
	runtime.KeepAlive(r)
	if flag == 0 {
		return ReqStatus{}, false, check(rc, "MPI_Test")
	}
	if err := check(rc, "MPI_Test"); err != nil {
		return ReqStatus{Status: Status{int(st[0]), int(st[1]), int(st[2])}, Err: err}, true, nil
	}
	return reqStatus(st[:], "MPI_Test"), true, nil
}

// Multi kinds: the MPI_Wait* and MPI_Test* calls over many requests.
const (
	Waitall = iota
	Waitany
	Waitsome
	Testall
	Testany
	Testsome
)

var multiNames = [...]string{"MPI_Waitall", "MPI_Waitany", "MPI_Waitsome", "MPI_Testall", "MPI_Testany", "MPI_Testsome"}

// Multi runs one of the calls over many requests (kind: Waitall ...
// Testsome) and returns the indices completed, appended to done, and
// their statuses, by request index (sts has len(rs) entries).
func Multi(kind int, rs []Request, sts []ReqStatus, done []int) ([]int, error) {
	if kind == Waitall || kind == Waitany || kind == Waitsome {
		defer waited()
	}
	n := len(rs)
	// Up to 64 requests, the C arrays are on the stack.
	var idxFew [64]C.int
	var stFew [5 * 64]C.int
	idx, st := idxFew[:], stFew[:]
	if n > 64 {
		idx, st = make([]C.int, n), make([]C.int, 5*n)
	}
	var count C.int
	var prs C.uintptr_t
	if n > 0 {
		prs = addrOf(&rs[0].h)
	}
	call := multiNames[kind]
	rc := C.shmc_h_multi(C.int(kind), C.int(n), prs, addrOf(&count), addrOf(&idx[0]), addrOf(&st[0]))
	runtime.KeepAlive(rs)
	runtime.KeepAlive(idx)
	runtime.KeepAlive(st)
	if err := check(rc, call); err != nil {
		return done, err
	}
	for i := range int(count) {
		j := int(idx[i])
		done = append(done, j)
		sts[j] = reqStatus(st[5*j:5*j+5], call)
	}
	return done, nil
}

// yieldEvery is how many calls that may wait inside the MPI go by between
// two runtime.Gosched calls of waited.
const yieldEvery = 256

// waited counts a call that may have waited inside the MPI (a blocking
// call, a collective, a Wait, a window synchronization), and every
// yieldEvery of them lets the Go scheduler run the goroutine anew. A
// goroutine that makes only cgo calls is never rescheduled, and after 10
// ms the runtime's sysmon preempts it by taking its P away during the C
// call, handing the P to another thread (on a rank bound to one core, the
// same core) and then waking every 20 us for a while. Measured here: a
// 2-rank MPI_Barrier loop took 511-560 ns with 12000-14000 context
// switches in 2 s, and 396-428 ns with 2600 when the loop called
// Gosched every 1000 barriers (Open MPI's C program: 390-460 ns).
func waited() {
	if waitsInc()%yieldEvery == 0 {
		runtime.Gosched()
	}
}

// Noop is one call of an empty C function: the cost of a cgo call, which
// the backend adds to every MPI call (bench/run's cgo_call row).
func Noop() { C.shmc_noop() }

// Memcpy copies min(len(dst), len(src)) bytes with the C library's
// memcpy, one cgo call: for large copies into another process's shared
// memory it is faster here than Go's copy (glibc switches to
// non-temporal stores past a size its cache survey sets).
func Memcpy(dst, src []byte) {
	n := min(len(dst), len(src))
	if n == 0 {
		return
	}
	C.shmc_memcpy(addr(dst), addr(src), C.size_t(n))
	runtime.KeepAlive(dst)
	runtime.KeepAlive(src)
}

// CAlloc returns n bytes of C memory (malloc), for data the MPI reads after
// the call that gave it its address; CFree gives it back.
func CAlloc(n int) []byte {
	p := C.malloc(C.size_t(max(n, 1)))
	if p == nil {
		return nil
	}
	return unsafe.Slice((*byte)(p), n)
}

// CFree frees memory from CAlloc.
func CFree(b []byte) {
	if cap(b) > 0 {
		C.free(unsafe.Pointer(unsafe.SliceData(b)))
	}
}

// MoveV is MPI_Gatherv, MPI_Scatterv, MPI_Allgatherv or MPI_Alltoallv
// (kind: MoveGather ... MoveAlltoall) of bytes; counts and displacements
// in bytes, nil where the call does not use them; a nil send (or, for
// Scatterv, recv) is MPI_IN_PLACE.
func (c Comm) MoveV(kind int, send []byte, sn int, sc, sd []int, recv []byte, rn int, rc, rd []int, root int) error {
	defer waited()
	sp, rp := inPlace(send), ptr(recv)
	if kind == MoveScatter {
		sp, rp = ptr(send), inPlace(recv)
	}
	call := [...]string{"MPI_Gatherv", "MPI_Scatterv", "MPI_Allgatherv", "MPI_Alltoallv"}[kind]
	if err := bigCounts(call, []int{sn, rn}, sc, sd, rc, rd); err != nil {
		return err
	}
	csc, csd, crc, crd := cints(sc), cints(sd), cints(rc), cints(rd)
	rcode := C.shmc_movev(C.int(kind), sp, C.int(sn), cptr(csc), cptr(csd), rp, C.int(rn), cptr(crc), cptr(crd), C.int(root), c.h)
	return check(rcode, call)
}

// SendrecvReplace is MPI_Sendrecv_replace of buf as bytes.
func (c Comm) SendrecvReplace(buf []byte, dest, stag, src, rtag int) (Status, error) {
	defer waited()
	var st [3]C.int
	if err := bigCount("MPI_Sendrecv_replace", len(buf)); err != nil {
		return Status{}, err
	}
	rc := C.shmc_sendrecv_replace(ptr(buf), C.int(len(buf)), C.int(dest), C.int(stag), C.int(src), C.int(rtag), c.h, &st[0])
	return status(&st), check(rc, "MPI_Sendrecv_replace")
}

// Mem is a block MPI_Alloc_mem returned, for FreeMem.
type Mem struct{ p unsafe.Pointer }

// AllocMem is MPI_Alloc_mem of n bytes, returned as a slice and as the
// block FreeMem takes.
func AllocMem(n int) ([]byte, Mem, error) {
	var p unsafe.Pointer
	if err := check(C.MPI_Alloc_mem(C.MPI_Aint(max(n, 1)), C.MPI_INFO_NULL, unsafe.Pointer(&p)), "MPI_Alloc_mem"); err != nil {
		return nil, Mem{}, err
	}
	return unsafe.Slice((*byte)(p), n), Mem{p}, nil
}

// FreeMem is MPI_Free_mem of a block AllocMem returned.
func FreeMem(m Mem) error { return check(C.MPI_Free_mem(m.p), "MPI_Free_mem") }

// CreateDynamic is MPI_Win_create_dynamic.
func (c Comm) CreateDynamic() (Win, error) {
	var w C.MPI_Win
	err := check(C.shmc_win_create_dynamic(c.h, &w), "MPI_Win_create_dynamic")
	return Win{h: w}, err
}

// Attach is MPI_Win_attach of mem, which the caller keeps pinned until
// Detach.
func (w Win) Attach(mem []byte) error {
	return check(C.MPI_Win_attach(w.h, ptr(mem), C.MPI_Aint(len(mem))), "MPI_Win_attach")
}

// Detach is MPI_Win_detach of the region attached at mem's first byte.
func (w Win) Detach(mem []byte) error {
	return check(C.MPI_Win_detach(w.h, ptr(mem)), "MPI_Win_detach")
}

// Message is an MPI message handle (MPI_Message), taken by Mprobe.
type Message struct{ h C.MPI_Message }

// Mprobe is MPI_Mprobe (block) or MPI_Improbe: found is false when
// Improbe found nothing.
func (c Comm) Mprobe(src, tag int, block bool) (m Message, st Status, found bool, err error) {
	defer waited()
	var cs [3]C.int
	var flag, blk C.int
	if block {
		blk = 1
	}
	rc := C.shmc_mprobe(C.int(src), C.int(tag), c.h, blk, &flag, &m.h, &cs[0])
	if err = check(rc, "MPI_Mprobe"); err != nil || flag == 0 {
		return m, Status{}, false, err
	}
	return m, status(&cs), true, nil
}

// Recv is MPI_Mrecv of the message into buf as bytes.
func (m *Message) Recv(buf []byte) (Status, error) {
	defer waited()
	var st [3]C.int
	if err := bigCount("MPI_Mrecv", len(buf)); err != nil {
		return Status{}, err
	}
	rc := C.shmc_mrecv(ptr(buf), C.int(len(buf)), &m.h, &st[0])
	return status(&st), check(rc, "MPI_Mrecv")
}

// Irecv is MPI_Imrecv of the message into buf, which stays valid (C
// memory, or pinned) until the request completes.
func (m *Message) Irecv(buf []byte) (Request, error) {
	var r Request
	if err := bigCount("MPI_Imrecv", len(buf)); err != nil {
		return r, err
	}
	err := check(C.MPI_Imrecv(ptr(buf), C.int(len(buf)), cByte, &m.h, &r.h), "MPI_Imrecv")
	return r, err
}

// Datatype is a committed MPI datatype made by MakeType.
type Datatype struct{ h C.MPI_Datatype }

// MakeType builds an MPI datatype: blocks of lens[i] elements of elem
// (atomics.Type 0: bytes) at byte displacements displs[i], resized to lb
// and extent, committed. It lives until Free (or MPI_Finalize).
func MakeType(lens []int, displs []int64, elem atomics.Type, lb, extent int64) (Datatype, error) {
	if err := bigCounts("MPI_Type_create_hindexed", lens, []int{len(lens)}); err != nil {
		return Datatype{}, err
	}
	cl := cints(lens)
	cd := make([]C.MPI_Aint, len(displs))
	for i, d := range displs {
		cd[i] = C.MPI_Aint(d)
	}
	var pd *C.MPI_Aint
	if len(cd) > 0 {
		pd = &cd[0]
	}
	var out C.MPI_Datatype
	rc := C.shmc_make_type(C.int(len(cl)), cptr(cl), pd, dt(elem), C.MPI_Aint(lb), C.MPI_Aint(extent), &out)
	err := check(rc, "MPI_Type_create_hindexed")
	return Datatype{out}, err
}

// Free is MPI_Type_free of d, a no-op once MPI_Finalize has been called.
// Operations pending on d complete normally (MPI 4.1 §5.1.10). Any
// goroutine may call it.
func (d Datatype) Free() error {
	life.RLock()
	defer life.RUnlock()
	if life.finalized {
		return nil
	}
	return check(C.shmc_type_free(d.h), "MPI_Type_free")
}

// PutType is MPI_Put of n elements of elem (0: bytes) at src into tn
// instances of tdt at byte offset off on target. src stays valid until
// the call completes, as for Put.
func (w Win) PutType(src []byte, n int, elem atomics.Type, target, off, tn int, tdt Datatype) error {
	if err := bigCount("MPI_Put", n, tn); err != nil {
		return err
	}
	return check(C.shmc_put_dt(ptr(src), C.int(n), dt(elem), C.int(target), C.MPI_Aint(off), C.int(tn), tdt.h, w.h), "MPI_Put")
}

// GetType is MPI_Get of tn instances of tdt at off on target into n
// elements of elem at dst, completed at the origin in the same C call.
func (w Win) GetType(dst []byte, n int, elem atomics.Type, target, off, tn int, tdt Datatype) error {
	if err := bigCount("MPI_Get", n, tn); err != nil {
		return err
	}
	return check(C.shmc_get_dt_now(ptr(dst), C.int(n), dt(elem), C.int(target), C.MPI_Aint(off), C.int(tn), tdt.h, w.h), "MPI_Get")
}

// AccumulateType is MPI_Accumulate of n elements of elem into tn
// instances of tdt; src stays valid until the call completes.
func (w Win) AccumulateType(src []byte, n int, elem atomics.Type, target, off, tn int, tdt Datatype, op atomics.Op) error {
	if err := bigCount("MPI_Accumulate", n, tn); err != nil {
		return err
	}
	return check(C.shmc_acc_dt(ptr(src), C.int(n), dt(elem), C.int(target), C.MPI_Aint(off), C.int(tn), tdt.h, mop(op), w.h), "MPI_Accumulate")
}

// GetAccumulateType is MPI_Get_accumulate of n elements of elem (result
// in res, n elements too) with tn instances of tdt, completed at the
// origin in the same C call.
func (w Win) GetAccumulateType(src, res []byte, n int, elem atomics.Type, target, off, tn int, tdt Datatype, op atomics.Op) error {
	if err := bigCount("MPI_Get_accumulate", n, tn); err != nil {
		return err
	}
	return check(C.shmc_get_acc_dt_now(ptr(src), C.int(n), dt(elem), ptr(res), C.int(target), C.MPI_Aint(off), C.int(tn), tdt.h, mop(op), w.h), "MPI_Get_accumulate")
}
