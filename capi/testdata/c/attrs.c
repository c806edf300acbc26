/* ranks: 2
 * Attribute caching with the program's keys (MPI 4.1 §7.7): keyvals for
 * communicators, windows and datatypes; values set, got, replaced and
 * deleted, the delete callback run for a value that goes (replaced,
 * deleted, its object freed: last set first) with the key's extra state;
 * copy callbacks run by MPI_Comm_dup and MPI_Type_dup (MPI_*_NULL_COPY_FN
 * copies nothing, MPI_*_DUP_FN the value); a freed keyval's attributes
 * kept until they go; MPI_COMM_SELF's attributes deleted first thing in
 * MPI_Finalize, last set first. With the standard ABI's header, the
 * errors: keys that are invalid, predefined, of another kind or freed
 * (MPI_ERR_KEYVAL), and callbacks that fail the call that ran them (the
 * object left as it was). */
#include <stdint.h>
#include <string.h>

#include "check.h"

/* log records the callbacks run: "c<key's tag>:<value>" for a copy,
 * "d<tag>:<value>" for a delete, the tag being the key's extra state. */
static char cblog[512];
static int fail_copy, fail_delete; /* a callback's return code when set */

static void logf_(char kind, void *extra, intptr_t v)
{
	size_t n = strlen(cblog);
	snprintf(cblog + n, sizeof cblog - n, "%c%s:%ld ", kind, (const char *)extra, (long)v);
}

static int copy_plus1(MPI_Comm c, int key, void *extra, void *in, void *out, int *flag)
{
	(void)c, (void)key;
	logf_('c', extra, (intptr_t)in);
	if (fail_copy)
		return fail_copy;
	*(void **)out = (void *)((intptr_t)in + 1);
	*flag = 1;
	return MPI_SUCCESS;
}

static int del_comm(MPI_Comm c, int key, void *val, void *extra)
{
	(void)c, (void)key;
	logf_('d', extra, (intptr_t)val);
	return fail_delete;
}

static int del_win(MPI_Win w, int key, void *val, void *extra)
{
	(void)w, (void)key;
	logf_('d', extra, (intptr_t)val);
	return fail_delete;
}

static int copy_type(MPI_Datatype t, int key, void *extra, void *in, void *out, int *flag)
{
	(void)t, (void)key;
	logf_('c', extra, (intptr_t)in);
	if (fail_copy)
		return fail_copy;
	*(void **)out = (void *)((intptr_t)in * 10);
	*flag = 1;
	return MPI_SUCCESS;
}

static int del_type(MPI_Datatype t, int key, void *val, void *extra)
{
	(void)t, (void)key;
	logf_('d', extra, (intptr_t)val);
	return fail_delete;
}

/* log_is checks the callbacks run since the last check. */
static void log_is(const char *what, const char *want)
{
	CHECK(strcmp(cblog, want) == 0, "%s: callbacks \"%s\", want \"%s\"", what, cblog, want);
	cblog[0] = 0;
}

/* The attributes of MPI_COMM_SELF go at MPI_Finalize, B (set last)
 * first, while MPI is still initialized. */
static int self_rank, self_order;

static int del_self(MPI_Comm c, int key, void *val, void *extra)
{
	(void)c, (void)key, (void)extra;
	int fin = 1;
	MPI_Finalized(&fin);
	if ((intptr_t)val == 2 && self_order == 0 && !fin)
		self_order = 1;
	else if ((intptr_t)val == 1 && self_order == 1 && !fin)
		self_order = 2;
	else
		self_order = -1;
	if ((intptr_t)val == 1 && self_rank == 0) {
		printf("%s MPI_COMM_SELF's attributes deleted first in MPI_Finalize, last set first\n", self_order == 2 ? "ok" : "FAILED");
		fflush(stdout);
	}
	return MPI_SUCCESS;
}

#ifdef MPI_ABI_VERSION
static void fails(const char *name, int err, int class)
{
	int c = MPI_SUCCESS, len = 0;
	char msg[MPI_MAX_ERROR_STRING] = "";
	if (err != MPI_SUCCESS) {
		MPI_Error_class(err, &c);
		MPI_Error_string(err, msg, &len);
	}
	CHECK(c == class && strncmp(msg, name, strlen(name)) == 0 && msg[strlen(name)] == ':', "%s: class %d (%s), want %d", name, c, msg, class);
}

static int fail_fin;

static int del_fin(MPI_Comm c, int key, void *val, void *extra)
{
	(void)c, (void)key, (void)val, (void)extra;
	return fail_fin;
}
#endif

int main(int argc, char **argv)
{
	int rank, flag = -1;
	void *v = NULL;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	self_rank = rank;

	/* communicators */
	int ka, kn, kd;
	MPI_Comm_create_keyval(copy_plus1, del_comm, &ka, "A");
	MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_comm, &kn, "N");
	MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kd, "D");
	CHECK(ka != kn && kn != kd && ka != MPI_KEYVAL_INVALID, "keyvals %d %d %d", ka, kn, kd);
	MPI_Comm c1, c2;
	MPI_Comm_dup(MPI_COMM_WORLD, &c1);
	MPI_Comm_get_attr(c1, ka, &v, &flag);
	CHECK(flag == 0, "an attribute never set: flag %d", flag);
	MPI_Comm_set_attr(c1, ka, (void *)10);
	MPI_Comm_set_attr(c1, kn, (void *)20);
	MPI_Comm_set_attr(c1, kd, (void *)30);
	MPI_Comm_get_attr(c1, ka, &v, &flag);
	CHECK(flag == 1 && v == (void *)10, "MPI_Comm_get_attr: flag %d, %p", flag, v);
	int *ub = NULL;
	MPI_Comm_get_attr(c1, MPI_TAG_UB, &ub, &flag);
	CHECK(flag == 1 && ub != NULL && *ub >= 32767, "MPI_TAG_UB beside the program's keys: flag %d", flag);
	MPI_Comm_set_attr(c1, ka, (void *)11);
	log_is("a value replaced", "dA:10 ");
	MPI_Comm_dup(c1, &c2);
	log_is("MPI_Comm_dup", "cA:11 ");
	MPI_Comm_get_attr(c2, ka, &v, &flag);
	CHECK(flag == 1 && v == (void *)12, "the copy callback's value: flag %d, %p", flag, v);
	MPI_Comm_get_attr(c2, kn, &v, &flag);
	CHECK(flag == 0, "MPI_COMM_NULL_COPY_FN's key on the dup: flag %d", flag);
	MPI_Comm_get_attr(c2, kd, &v, &flag);
	CHECK(flag == 1 && v == (void *)30, "MPI_COMM_DUP_FN's key on the dup: flag %d, %p", flag, v);
	MPI_Comm_delete_attr(c1, kn);
	log_is("MPI_Comm_delete_attr", "dN:20 ");
	MPI_Comm_get_attr(c1, kn, &v, &flag);
	CHECK(flag == 0, "a deleted attribute: flag %d", flag);
#ifdef MPI_ABI_VERSION
	/* nothing to delete (MPICH's answer; Open MPI's is an error) */
	CHECK(MPI_Comm_delete_attr(c1, kn) == MPI_SUCCESS, "deleting an attribute not set failed");
	log_is("deleting an attribute not set", "");
#endif
	MPI_Comm_set_attr(c1, kn, (void *)21);
	MPI_Comm_free(&c1); /* last set first: kn, then kd (no callback), then ka */
	log_is("MPI_Comm_free", "dN:21 dA:11 ");
	int kcopy = ka;
	MPI_Comm_free_keyval(&ka);
	CHECK(ka == MPI_KEYVAL_INVALID, "MPI_Comm_free_keyval left %d", ka);
	MPI_Comm_get_attr(c2, kcopy, &v, &flag);
	CHECK(flag == 1 && v == (void *)12, "a freed keyval's attribute: flag %d, %p", flag, v);
	MPI_Comm_free(&c2);
	log_is("MPI_Comm_free of the dup", "dA:12 ");
	MPI_Comm_free_keyval(&kn);
	MPI_Comm_free_keyval(&kd);
	report("communicator attributes: set, get, replace, delete, copy on MPI_Comm_dup, delete on MPI_Comm_free");

	/* windows */
	int kw;
	MPI_Win win;
	int *base;
	MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, del_win, &kw, "W");
	MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
	MPI_Win_get_attr(win, kw, &v, &flag);
	CHECK(flag == 0, "a window attribute never set: flag %d", flag);
	MPI_Win_set_attr(win, kw, (void *)5);
	MPI_Win_get_attr(win, kw, &v, &flag);
	CHECK(flag == 1 && v == (void *)5, "MPI_Win_get_attr: flag %d, %p", flag, v);
	void *wb = NULL;
	MPI_Win_get_attr(win, MPI_WIN_BASE, &wb, &flag);
	CHECK(flag == 1 && wb == base, "MPI_WIN_BASE beside the program's keys: flag %d", flag);
	MPI_Win_set_attr(win, kw, (void *)6);
	log_is("a window value replaced", "dW:5 ");
	MPI_Win_delete_attr(win, kw);
	log_is("MPI_Win_delete_attr", "dW:6 ");
	MPI_Win_set_attr(win, kw, (void *)7);
	MPI_Win_free(&win);
	log_is("MPI_Win_free", "dW:7 ");
	MPI_Win_free_keyval(&kw);
	CHECK(kw == MPI_KEYVAL_INVALID, "MPI_Win_free_keyval left %d", kw);
	report("window attributes");

	/* datatypes */
	int kt;
	MPI_Datatype t, t2;
	MPI_Type_create_keyval(copy_type, del_type, &kt, "T");
	MPI_Type_contiguous(2, MPI_INT, &t);
	MPI_Type_set_attr(t, kt, (void *)3);
	MPI_Type_dup(t, &t2);
	log_is("MPI_Type_dup", "cT:3 ");
	MPI_Type_get_attr(t2, kt, &v, &flag);
	CHECK(flag == 1 && v == (void *)30, "the dup's attribute: flag %d, %p", flag, v);
	MPI_Type_free(&t2); /* the dup first: Open MPI keeps a type its dup uses */
	log_is("MPI_Type_free of the dup", "dT:30 ");
	MPI_Type_free(&t);
	log_is("MPI_Type_free", "dT:3 ");
	MPI_Type_set_attr(MPI_INT, kt, (void *)4);
	MPI_Type_get_attr(MPI_INT, kt, &v, &flag);
	CHECK(flag == 1 && v == (void *)4, "an attribute of MPI_INT: flag %d, %p", flag, v);
	MPI_Type_delete_attr(MPI_INT, kt);
	log_is("MPI_Type_delete_attr of MPI_INT's", "dT:4 ");
	MPI_Type_free_keyval(&kt);
	report("datatype attributes");

#ifdef MPI_ABI_VERSION
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	int kc, kw2, kt2, kfreed;
	MPI_Comm_create_keyval(copy_plus1, del_comm, &kc, "E");
	MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, del_win, &kw2, "F");
	MPI_Type_create_keyval(copy_type, del_type, &kt2, "G");
	fails("MPI_Comm_set_attr", MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, NULL), MPI_ERR_KEYVAL);
	fails("MPI_Comm_set_attr", MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL), MPI_ERR_KEYVAL);
	fails("MPI_Comm_set_attr", MPI_Comm_set_attr(MPI_COMM_WORLD, kw2, NULL), MPI_ERR_KEYVAL);
	fails("MPI_Comm_get_attr", MPI_Comm_get_attr(MPI_COMM_WORLD, kt2, &v, &flag), MPI_ERR_KEYVAL);
	fails("MPI_Comm_get_attr", MPI_Comm_get_attr(MPI_COMM_WORLD, 99999, &v, &flag), MPI_ERR_KEYVAL);
	fails("MPI_Comm_delete_attr", MPI_Comm_delete_attr(MPI_COMM_WORLD, kw2), MPI_ERR_KEYVAL);
	fails("MPI_Win_get_attr", MPI_Win_get_attr(MPI_WIN_NULL, kw2, &v, &flag), MPI_ERR_WIN);
	fails("MPI_Type_get_attr", MPI_Type_get_attr(MPI_INT, 5, &v, &flag), MPI_ERR_KEYVAL);
	fails("MPI_Type_set_attr", MPI_Type_set_attr(MPI_DATATYPE_NULL, kt2, NULL), MPI_ERR_TYPE);
	fails("MPI_Comm_set_attr", MPI_Comm_set_attr(MPI_COMM_NULL, kc, NULL), MPI_ERR_COMM);
	MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kfreed, NULL);
	int kf2 = kfreed;
	MPI_Comm_free_keyval(&kfreed);
	fails("MPI_Comm_free_keyval", MPI_Comm_free_keyval(&kf2), MPI_ERR_KEYVAL);
	fails("MPI_Win_free_keyval", MPI_Win_free_keyval(&kc), MPI_ERR_KEYVAL);
	MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kfreed, NULL);
	kf2 = kfreed;
	MPI_Comm_set_attr(MPI_COMM_WORLD, kfreed, (void *)1);
	MPI_Comm_free_keyval(&kfreed);
	fails("MPI_Comm_set_attr", MPI_Comm_set_attr(MPI_COMM_WORLD, kf2, (void *)2), MPI_ERR_KEYVAL);
	fails("MPI_Type_free_keyval", MPI_Type_free_keyval(&kf2), MPI_ERR_KEYVAL);
	MPI_Comm_get_attr(MPI_COMM_WORLD, kf2, &v, &flag);
	CHECK(flag == 1 && v == (void *)1, "a freed keyval's attribute on MPI_COMM_WORLD: flag %d, %p", flag, v);
	MPI_Comm_delete_attr(MPI_COMM_WORLD, kf2);
	fails("MPI_Comm_get_attr", MPI_Comm_get_attr(MPI_COMM_WORLD, kf2, &v, &flag), MPI_ERR_KEYVAL); /* gone with its last attribute */
#endif
	report("errors: invalid, predefined, foreign and freed keys");

#ifdef MPI_ABI_VERSION

	/* Failing callbacks fail their calls: on one-rank objects, so that no
	 * other rank waits in a collective free. */
	MPI_Comm solo, d = MPI_COMM_WORLD;
	MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &solo);
	MPI_Comm_set_attr(solo, kc, (void *)100);
	cblog[0] = 0;
	fail_copy = MPI_ERR_ARG;
	fails("MPI_Comm_dup", MPI_Comm_dup(solo, &d), MPI_ERR_ARG);
	CHECK(d == MPI_COMM_NULL, "a failed MPI_Comm_dup's communicator is not MPI_COMM_NULL");
	log_is("a failing copy callback", "cE:100 ");
	fail_copy = 0;
	fail_delete = 12345; /* no error code: MPI_ERR_OTHER */
	fails("MPI_Comm_set_attr", MPI_Comm_set_attr(solo, kc, (void *)101), MPI_ERR_OTHER);
	fails("MPI_Comm_delete_attr", MPI_Comm_delete_attr(solo, kc), MPI_ERR_OTHER);
	MPI_Comm_get_attr(solo, kc, &v, &flag);
	CHECK(flag == 1 && v == (void *)100, "an attribute whose delete failed: flag %d, %p", flag, v);
	fails("MPI_Comm_free", MPI_Comm_free(&solo), MPI_ERR_OTHER);
	CHECK(solo != MPI_COMM_NULL, "a failed MPI_Comm_free set the handle to MPI_COMM_NULL");
	log_is("failing delete callbacks", "dE:100 dE:100 dE:100 ");
	fail_delete = 0;
	CHECK(MPI_Comm_free(&solo) == MPI_SUCCESS, "MPI_Comm_free after the delete callback succeeds failed");
	log_is("the free that succeeds", "dE:100 ");

	MPI_Win_create(&flag, 0, 1, MPI_INFO_NULL, MPI_COMM_SELF, &win);
	MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
	MPI_Win_set_attr(win, kw2, (void *)8);
	fail_delete = MPI_ERR_WIN;
	fails("MPI_Win_free", MPI_Win_free(&win), MPI_ERR_WIN);
	fail_delete = 0;
	CHECK(MPI_Win_free(&win) == MPI_SUCCESS, "MPI_Win_free after the delete callback succeeds failed");
	log_is("a failing window delete callback", "dF:8 dF:8 ");

	MPI_Type_contiguous(2, MPI_INT, &t);
	MPI_Type_set_attr(t, kt2, (void *)9);
	fail_copy = MPI_ERR_TYPE;
	t2 = MPI_INT;
	fails("MPI_Type_dup", MPI_Type_dup(t, &t2), MPI_ERR_TYPE);
	CHECK(t2 == MPI_DATATYPE_NULL, "a failed MPI_Type_dup's type is not MPI_DATATYPE_NULL");
	fail_copy = 0;
	fail_delete = MPI_ERR_TYPE;
	fails("MPI_Type_free", MPI_Type_free(&t), MPI_ERR_TYPE);
	fail_delete = 0;
	CHECK(MPI_Type_free(&t) == MPI_SUCCESS && t == MPI_DATATYPE_NULL, "MPI_Type_free after the delete callback succeeds failed");
	log_is("failing datatype callbacks", "cG:9 dG:9 dG:9 ");
	MPI_Comm_free_keyval(&kc);
	MPI_Win_free_keyval(&kw2);
	MPI_Type_free_keyval(&kt2);

	/* MPI_Finalize fails when a delete callback of MPI_COMM_SELF's does */
	int kfin;
	MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_fin, &kfin, NULL);
	MPI_Comm_set_attr(MPI_COMM_SELF, kfin, NULL);
	fail_fin = MPI_ERR_ARG;
	fails("MPI_Finalize", MPI_Finalize(), MPI_ERR_ARG);
	fail_fin = 0;
	MPI_Comm_delete_attr(MPI_COMM_SELF, kfin);
	MPI_Comm_free_keyval(&kfin);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
#endif
	report("callbacks that fail their calls");

	int ks;
	MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_self, &ks, NULL);
	MPI_Comm_set_attr(MPI_COMM_SELF, ks, (void *)1);
	MPI_Comm_free_keyval(&ks);
	int ks2;
	MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_self, &ks2, NULL);
	MPI_Comm_set_attr(MPI_COMM_SELF, ks2, (void *)2);
	MPI_Finalize();
	return 0;
}
