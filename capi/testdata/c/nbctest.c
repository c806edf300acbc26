/* ranks: 3
 * Nonblocking collectives polled by MPI_Test until they complete, as a
 * program that overlaps them with work does: 200 rounds of small ones,
 * each round another call, root and late rank (the late one sleeps
 * first), results checked; two at once completed by MPI_Testall and by
 * MPI_Testany; a persistent MPI_Allreduce_init started and tested; a
 * derived datatype's and a user op's; a user op's reduction polled by
 * MPI_Test while the other ranks are late; and, on shmrun, a mismatch
 * polled by MPI_Test: an error on every rank, the communicator still
 * usable after it. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>
#include "check.h"

static void nap(long us)
{
	struct timespec t = {0, us * 1000};
	nanosleep(&t, NULL);
}

/* poll tests r until it completes and returns the test's code. */
static int poll(MPI_Request *r)
{
	int flag = 0, rc = MPI_SUCCESS;
	while (!flag && rc == MPI_SUCCESS)
		rc = MPI_Test(r, &flag, MPI_STATUS_IGNORE);
	return rc;
}

static void maxabs(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	long *a = in, *b = inout;
	for (int i = 0; i < *len; i++) {
		long x = a[i] < 0 ? -a[i] : a[i], y = b[i] < 0 ? -b[i] : b[i];
		b[i] = x > y ? a[i] : b[i];
	}
}

int main(int argc, char **argv)
{
	int me, n;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Barrier(MPI_COMM_WORLD);

	for (int i = 0; i < 200; i++) {
		int root = i % n, late = (i / 3) % n;
		long v = 100L * i + me, base = 100L * i, sum = n * base + n * (n - 1) / 2;
		if (me == late)
			nap(50 + (i % 4) * 100);
		MPI_Request r;
		long out[8] = {0}, in[8];
		switch (i % 6) {
		case 0:
			CHECK(MPI_Iallreduce(&v, out, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &r) == MPI_SUCCESS, "Iallreduce");
			CHECK(poll(&r) == MPI_SUCCESS, "round %d: Iallreduce's test", i);
			CHECK(out[0] == sum, "round %d: Iallreduce %ld, want %ld", i, out[0], sum);
			break;
		case 1:
			out[0] = v;
			CHECK(MPI_Ibcast(out, 1, MPI_LONG, root, MPI_COMM_WORLD, &r) == MPI_SUCCESS, "Ibcast");
			CHECK(poll(&r) == MPI_SUCCESS, "round %d: Ibcast's test", i);
			CHECK(out[0] == base + root, "round %d: Ibcast %ld, want %ld", i, out[0], base + root);
			break;
		case 2:
			out[0] = -1;
			CHECK(MPI_Ireduce(&v, out, 1, MPI_LONG, MPI_SUM, root, MPI_COMM_WORLD, &r) == MPI_SUCCESS, "Ireduce");
			CHECK(poll(&r) == MPI_SUCCESS, "round %d: Ireduce's test", i);
			CHECK(out[0] == (me == root ? sum : -1), "round %d: Ireduce %ld on rank %d (root %d)", i, out[0], me, root);
			break;
		case 3:
			CHECK(MPI_Iscan(&v, out, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &r) == MPI_SUCCESS, "Iscan");
			CHECK(poll(&r) == MPI_SUCCESS, "round %d: Iscan's test", i);
			CHECK(out[0] == (me + 1) * base + me * (me + 1) / 2, "round %d: Iscan %ld", i, out[0]);
			break;
		case 4:
			CHECK(MPI_Igather(&v, 1, MPI_LONG, out, 1, MPI_LONG, root, MPI_COMM_WORLD, &r) == MPI_SUCCESS, "Igather");
			CHECK(poll(&r) == MPI_SUCCESS, "round %d: Igather's test", i);
			for (int q = 0; me == root && q < n; q++)
				CHECK(out[q] == base + q, "round %d: Igather's block %d: %ld", i, q, out[q]);
			break;
		default:
			for (int q = 0; q < n; q++)
				in[q] = 10 * v + q;
			CHECK(MPI_Ialltoall(in, 1, MPI_LONG, out, 1, MPI_LONG, MPI_COMM_WORLD, &r) == MPI_SUCCESS, "Ialltoall");
			CHECK(poll(&r) == MPI_SUCCESS, "round %d: Ialltoall's test", i);
			for (int q = 0; q < n; q++)
				CHECK(out[q] == 10 * (base + q) + me, "round %d: Ialltoall's block %d: %ld", i, q, out[q]);
		}
	}
	report("200 rounds polled by MPI_Test");

	/* Two at once: MPI_Testall, then MPI_Testany. */
	for (int i = 0; i < 20; i++) {
		long a = me + i, b = 0, c = me == 0 ? 7 + i : -1;
		if (me == i % n)
			nap(200);
		MPI_Request r[2];
		MPI_Iallreduce(&a, &b, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD, &r[0]);
		MPI_Ibcast(&c, 1, MPI_LONG, 0, MPI_COMM_WORLD, &r[1]);
		int flag = 0, rc = MPI_SUCCESS;
		if (i % 2 == 0) {
			while (!flag && rc == MPI_SUCCESS)
				rc = MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE);
		} else {
			for (int done = 0; done < 2 && rc == MPI_SUCCESS;) {
				int idx;
				rc = MPI_Testany(2, r, &idx, &flag, MPI_STATUS_IGNORE);
				done += flag && idx != MPI_UNDEFINED;
			}
		}
		CHECK(rc == MPI_SUCCESS, "round %d: the tests of two", i);
		CHECK(b == n - 1 + i && c == 7 + i, "round %d: %ld %ld, want %d %d", i, b, c, n - 1 + i, 7 + i);
	}
	report("two at once, MPI_Testall and MPI_Testany");

	/* A persistent Allreduce, started and tested (MPI 4.0: not in Open
	 * MPI 4.1). */
#if MPI_VERSION >= 4
	long pin = 0, pout = 0;
	MPI_Request p;
	CHECK(MPI_Allreduce_init(&pin, &pout, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &p) == MPI_SUCCESS,
	      "Allreduce_init");
	for (int i = 0; i < 30; i++) {
		pin = i * me;
		if (me == i % n)
			nap(100);
		CHECK(MPI_Start(&p) == MPI_SUCCESS, "Start");
		CHECK(poll(&p) == MPI_SUCCESS, "round %d: the persistent request's test", i);
		CHECK(pout == (long)i * n * (n - 1) / 2, "round %d: %ld", i, pout);
	}
	MPI_Request_free(&p);
#endif
	report("a persistent Allreduce tested");

	/* A derived datatype (two longs, strided) and a user op, the other
	 * ranks late. */
	MPI_Datatype vec;
	MPI_Type_vector(2, 1, 2, MPI_LONG, &vec);
	MPI_Type_commit(&vec);
	MPI_Op op;
	MPI_Op_create(maxabs, 1, &op);
	for (int i = 0; i < 10; i++) {
		long s[4] = {me - 5, 99, me * (i % 2 ? -3 : 3), 99}, d[4] = {0, -1, 0, -1};
		if (me != 0)
			nap(300);
		MPI_Request r;
		CHECK(MPI_Iallreduce(s, d, 1, vec, op, MPI_COMM_WORLD, &r) == MPI_SUCCESS, "Iallreduce of a vector");
		CHECK(poll(&r) == MPI_SUCCESS, "round %d: the vector's test", i);
		long w0 = -5, w2 = (n - 1) * (i % 2 ? -3 : 3);
		CHECK(d[0] == w0 && d[1] == -1 && d[2] == w2 && d[3] == -1, "round %d: %ld %ld %ld %ld, want %ld -1 %ld -1", i,
		      d[0], d[1], d[2], d[3], w0, w2);
	}
	MPI_Op_free(&op);
	MPI_Type_free(&vec);
	report("a derived datatype and a user op");

#ifdef MPI_ABI_VERSION
	/* A mismatch polled by MPI_Test: rank 0 reduces one element, the
	 * others two. */
	long mm[2] = {1, 1}, mo[2];
	MPI_Request r;
	CHECK(MPI_Iallreduce(mm, mo, me == 0 ? 1 : 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &r) == MPI_SUCCESS, "Iallreduce");
	int rc = poll(&r);
	CHECK(class_of(rc) == MPI_ERR_COUNT, "the mismatch's test: class %d, want MPI_ERR_COUNT", class_of(rc));
	long one = 1, all = 0;
	MPI_Iallreduce(&one, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &r);
	CHECK(poll(&r) == MPI_SUCCESS && all == n, "after the mismatch: %ld, want %d", all, n);
#endif
	report("a mismatch polled by MPI_Test");

	MPI_Finalize();
	return 0;
}
