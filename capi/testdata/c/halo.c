/* ranks: 4
 * A strided halo exchange with a vector type, the collectives (with
 * MPI_IN_PLACE and a user op), communicators, and errors returned to the
 * caller under MPI_ERRORS_RETURN. */
#include <string.h>
#include "check.h"

#define NX 6 /* rows of this rank's block */
#define NY 8 /* columns, plus a ghost column on each side */

static void addpairs(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	int *a = in, *b = inout;
	for (int i = 0; i < *len; i++)
		b[i] = a[i] + b[i] + 1; /* associative and commutative, not MPI_SUM */
}

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	/* Column blocks in a ring: each rank's block is NX rows of NY+2
	 * columns; columns 1 and NY are sent to the neighbours' ghosts. */
	double a[NX][NY + 2];
	for (int i = 0; i < NX; i++)
		for (int j = 0; j < NY + 2; j++)
			a[i][j] = j == 0 || j == NY + 1 ? -1 : rank * 1000 + i * 10 + j;
	MPI_Datatype col;
	MPI_Type_vector(NX, 1, NY + 2, MPI_DOUBLE, &col);
	MPI_Type_commit(&col);
	int tsize;
	MPI_Aint lb, ext;
	MPI_Type_size(col, &tsize);
	MPI_Type_get_extent(col, &lb, &ext);
	CHECK(tsize == NX * (int)sizeof(double), "vector size %d", tsize);
	CHECK(lb == 0 && ext == (MPI_Aint)(((NX - 1) * (NY + 2) + 1) * sizeof(double)), "vector extent %ld", (long)ext);
	int left = (rank + size - 1) % size, right = (rank + 1) % size;
	MPI_Sendrecv(&a[0][NY], 1, col, right, 5, &a[0][0], 1, col, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Sendrecv(&a[0][1], 1, col, left, 6, &a[0][NY + 1], 1, col, right, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	for (int i = 0; i < NX; i++) {
		CHECK(a[i][0] == left * 1000 + i * 10 + NY, "row %d left ghost %g", i, a[i][0]);
		CHECK(a[i][NY + 1] == right * 1000 + i * 10 + 1, "row %d right ghost %g", i, a[i][NY + 1]);
	}
	report("strided halo with a vector type");

	/* The same exchange with persistent requests, started five times,
	 * completed by Waitall (rounds 0-2), Testall (3) and Waitsome (4);
	 * between the rounds the requests are inactive and waiting on them
	 * returns at once. */
	MPI_Request pr[4];
	MPI_Send_init(&a[0][NY], 1, col, right, 7, MPI_COMM_WORLD, &pr[0]);
	MPI_Recv_init(&a[0][0], 1, col, left, 7, MPI_COMM_WORLD, &pr[1]);
	MPI_Send_init(&a[0][1], 1, col, left, 8, MPI_COMM_WORLD, &pr[2]);
	MPI_Recv_init(&a[0][NY + 1], 1, col, right, 8, MPI_COMM_WORLD, &pr[3]);
	for (int round = 0; round < 5; round++) {
		for (int i = 0; i < NX; i++) {
			a[i][1] = round * 100000 + rank * 1000 + i * 10 + 1;
			a[i][NY] = round * 100000 + rank * 1000 + i * 10 + NY;
			a[i][0] = a[i][NY + 1] = -1;
		}
		MPI_Startall(4, pr);
		int done = 0;
		MPI_Status peek;
		while (!done) /* get_status leaves the request as it is */
			MPI_Request_get_status(pr[1], &done, &peek);
		CHECK(peek.MPI_SOURCE == left && peek.MPI_TAG == 7, "get_status %d %d", peek.MPI_SOURCE, peek.MPI_TAG);
		MPI_Status st[4];
		if (round < 3) {
			MPI_Waitall(4, pr, st);
		} else if (round == 3) {
			int all = 0;
			while (!all)
				MPI_Testall(4, pr, &all, st);
		} else {
			int left4 = 4, idx[4], n;
			MPI_Status got[4];
			while (left4 > 0) {
				MPI_Waitsome(4, pr, &n, idx, got);
				CHECK(n != MPI_UNDEFINED && n > 0, "Waitsome of %d active requests: %d", left4, n);
				for (int j = 0; j < n; j++)
					st[idx[j]] = got[j];
				left4 -= n;
			}
			int none;
			MPI_Waitsome(4, pr, &none, idx, got);
			CHECK(none == MPI_UNDEFINED, "Waitsome of inactive requests: %d", none);
		}
		CHECK(pr[0] != MPI_REQUEST_NULL, "a completed persistent request was freed");
		for (int i = 0; i < NX; i++) {
			CHECK(a[i][0] == round * 100000 + left * 1000 + i * 10 + NY, "round %d row %d left ghost %g", round, i, a[i][0]);
			CHECK(a[i][NY + 1] == round * 100000 + right * 1000 + i * 10 + 1, "round %d row %d right ghost %g", round, i, a[i][NY + 1]);
		}
		CHECK(st[1].MPI_SOURCE == left && st[1].MPI_TAG == 7, "status %d %d", st[1].MPI_SOURCE, st[1].MPI_TAG);
		CHECK(st[3].MPI_SOURCE == right && st[3].MPI_TAG == 8, "round %d status %d %d", round, st[3].MPI_SOURCE, st[3].MPI_TAG);
		MPI_Status idle;
		MPI_Wait(&pr[1], &idle); /* inactive: returns at once, empty status */
		CHECK(idle.MPI_SOURCE == MPI_ANY_SOURCE && idle.MPI_TAG == MPI_ANY_TAG, "inactive request's status");
	}
	for (int i = 0; i < 4; i++)
		MPI_Request_free(&pr[i]);
	CHECK(pr[0] == MPI_REQUEST_NULL, "Request_free leaves the handle");
	MPI_Type_free(&col);
	CHECK(col == MPI_DATATYPE_NULL, "Type_free leaves the handle");
	report("persistent requests");

	/* Collectives. */
	long v = rank + 1, sum = 0;
	MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	CHECK(sum == (long)size * (size + 1) / 2, "allreduce %ld", sum);
	double d = rank;
	MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	CHECK(d == size - 1, "in-place max %g", d);
	int root = size - 1, bc[3] = {0, 0, 0};
	if (rank == root)
		bc[0] = 7, bc[1] = 8, bc[2] = 9;
	MPI_Bcast(bc, 3, MPI_INT, root, MPI_COMM_WORLD);
	CHECK(bc[0] == 7 && bc[1] == 8 && bc[2] == 9, "bcast");
	int prod = 0, mine = rank + 2;
	MPI_Reduce(&mine, &prod, 1, MPI_INT, MPI_PROD, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		int want = 1;
		for (int q = 0; q < size; q++)
			want *= q + 2;
		CHECK(prod == want, "reduce prod %d want %d", prod, want);
	}
	int g[64], s[64], x;
	MPI_Gather(&rank, 1, MPI_INT, g, 1, MPI_INT, 1, MPI_COMM_WORLD);
	if (rank == 1)
		for (int q = 0; q < size; q++)
			CHECK(g[q] == q, "gather %d: %d", q, g[q]);
	for (int q = 0; q < size; q++)
		s[q] = 100 + q;
	MPI_Scatter(s, 1, MPI_INT, &x, 1, MPI_INT, 0, MPI_COMM_WORLD);
	CHECK(x == 100 + rank, "scatter %d", x);
	for (int q = 0; q < size; q++)
		g[q] = -1;
	g[rank] = rank * rank;
	MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g, 1, MPI_INT, MPI_COMM_WORLD);
	for (int q = 0; q < size; q++)
		CHECK(g[q] == q * q, "in-place allgather %d: %d", q, g[q]);
	for (int q = 0; q < size; q++)
		s[q] = rank * 10 + q;
	MPI_Alltoall(s, 1, MPI_INT, g, 1, MPI_INT, MPI_COMM_WORLD);
	for (int q = 0; q < size; q++)
		CHECK(g[q] == q * 10 + rank, "alltoall %d: %d", q, g[q]);
	int sc, ex = -5;
	MPI_Scan(&mine, &sc, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Exscan(&mine, &ex, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	CHECK(sc == (rank + 1) * (rank + 4) / 2, "scan %d", sc);
	if (rank > 0)
		CHECK(ex == rank * (rank + 3) / 2, "exscan %d", ex);
	MPI_Op op;
	MPI_Op_create(addpairs, 1, &op);
	int u = 1, ur = 0;
	MPI_Allreduce(&u, &ur, 1, MPI_INT, op, MPI_COMM_WORLD);
	CHECK(ur == 2 * size - 1, "user op %d", ur);
	MPI_Op_free(&op);
	report("collectives, in place and user op");

	/* Communicators. */
	MPI_Comm half, dup;
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
	int hr, hs;
	MPI_Comm_rank(half, &hr);
	MPI_Comm_size(half, &hs);
	CHECK(hs == (size + 1 - rank % 2) / 2, "split size %d", hs);
	CHECK(hr == hs - 1 - rank / 2, "split rank %d (keys reverse the order)", hr);
	MPI_Comm_dup(half, &dup);
	int cmp;
	MPI_Comm_compare(half, dup, &cmp);
	CHECK(cmp == MPI_CONGRUENT, "compare %d", cmp);
	MPI_Comm_set_name(dup, "dup of half");
	char name[MPI_MAX_OBJECT_NAME];
	int nl;
	MPI_Comm_get_name(dup, name, &nl);
	CHECK(strcmp(name, "dup of half") == 0 && nl == 11, "name %s", name);
	long hsum = 0, one = 1;
	MPI_Allreduce(&one, &hsum, 1, MPI_LONG, MPI_SUM, dup);
	CHECK(hsum == hs, "sum on the split %ld", hsum);
	MPI_Group wg, hg;
	MPI_Comm_group(MPI_COMM_WORLD, &wg);
	MPI_Comm_group(half, &hg);
	int r0 = 0, tr;
	MPI_Group_translate_ranks(hg, 1, &r0, wg, &tr);
	CHECK(tr == (hs - 1) * 2 + rank % 2, "translate: %d", tr);
	MPI_Group_free(&hg);
	MPI_Group_free(&wg);
	MPI_Comm_free(&dup);
	MPI_Comm_free(&half);
	CHECK(half == MPI_COMM_NULL, "Comm_free leaves the handle");
	int *tagub, flag;
	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tagub, &flag);
	CHECK(flag && *tagub >= 32767, "MPI_TAG_UB");
	report("communicators and groups");

	/* Errors returned to the caller. */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	int err = MPI_Send(&v, 1, MPI_LONG, size + 5, 0, MPI_COMM_WORLD), class;
	MPI_Error_class(err, &class);
	CHECK(err != MPI_SUCCESS && class == MPI_ERR_RANK, "send to a bad rank: %d class %d", err, class);
	char msg[MPI_MAX_ERROR_STRING];
	int ml = 0;
	MPI_Error_string(err, msg, &ml);
	CHECK(ml > 0 && (int)strlen(msg) == ml, "error string");
	err = MPI_Bcast(&v, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD);
	MPI_Error_class(err, &class);
	CHECK(class == MPI_ERR_TYPE, "bcast of MPI_DATATYPE_NULL: class %d", class);
#ifdef MPI_ABI_VERSION
	/* A call the library does not implement says so. */
	MPI_Comm inter;
	err = MPI_Comm_spawn("true", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE);
	MPI_Error_class(err, &class);
	CHECK(class == MPI_ERR_UNSUPPORTED_OPERATION, "unsupported call: class %d", class);
#endif
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	report("errors returned");

	MPI_Finalize();
	return 0;
}
