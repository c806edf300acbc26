/* ranks: 4
 * Atomics and signalling on windows: a fetch-and-op work counter, an MCS
 * lock built from compare-and-swap and fetch-and-op guarding a plain
 * counter, and Send/Recv signalling around Win_sync on a shared window. */
#include <stdint.h>
#include <string.h>

#include "check.h"

#define TASKS 200
#define ROUNDS 50

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	/* Work counter: rank 0's word hands out task numbers; every task is
	 * taken exactly once. */
	MPI_Win cw;
	long *ctr;
	MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &ctr, &cw);
	*ctr = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	int *taken = calloc(TASKS, sizeof(int));
	long one = 1, task;
	MPI_Win_lock_all(0, cw);
	for (;;) {
		MPI_Fetch_and_op(&one, &task, MPI_LONG, 0, 0, MPI_SUM, cw);
		MPI_Win_flush(0, cw);
		if (task >= TASKS)
			break;
		taken[task]++;
	}
	MPI_Win_unlock_all(cw);
	int *all = calloc(TASKS, sizeof(int));
	MPI_Reduce(taken, all, TASKS, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		for (int t = 0; t < TASKS; t++)
			CHECK(all[t] == 1, "task %d taken %d times", t, all[t]);
	report("fetch-and-op work counter");

	/* MCS lock: rank 0 holds the tail; each rank's window holds its
	 * "next" and "locked" words. The guarded counter is a plain long in
	 * rank 0's window, updated by Get + Put inside the critical section. */
	enum { NEXT, LOCKED, TAIL, COUNT, WORDS };
	MPI_Win lw;
	long *w;
	MPI_Win_allocate(WORDS * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &w, &lw);
	w[NEXT] = -1, w[LOCKED] = 0, w[TAIL] = -1, w[COUNT] = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock_all(0, lw);
	for (int i = 0; i < ROUNDS; i++) {
		long me = rank, minus1 = -1, pred, zero = 0, one1 = 1, val;
		/* acquire */
		MPI_Put(&minus1, 1, MPI_LONG, rank, NEXT, 1, MPI_LONG, lw);
		MPI_Put(&one1, 1, MPI_LONG, rank, LOCKED, 1, MPI_LONG, lw);
		MPI_Win_flush(rank, lw);
		MPI_Fetch_and_op(&me, &pred, MPI_LONG, 0, TAIL, MPI_REPLACE, lw);
		MPI_Win_flush(0, lw);
		if (pred != -1) {
			MPI_Accumulate(&me, 1, MPI_LONG, (int)pred, NEXT, 1, MPI_LONG, MPI_REPLACE, lw);
			MPI_Win_flush((int)pred, lw);
			do {
				MPI_Fetch_and_op(NULL, &val, MPI_LONG, rank, LOCKED, MPI_NO_OP, lw);
				MPI_Win_flush(rank, lw);
			} while (val != 0);
		}
		/* critical section: a plain read-modify-write */
		long c;
		MPI_Get(&c, 1, MPI_LONG, 0, COUNT, 1, MPI_LONG, lw);
		MPI_Win_flush(0, lw);
		c++;
		MPI_Put(&c, 1, MPI_LONG, 0, COUNT, 1, MPI_LONG, lw);
		MPI_Win_flush(0, lw);
		/* release */
		long old;
		MPI_Compare_and_swap(&minus1, &me, &old, MPI_LONG, 0, TAIL, lw);
		MPI_Win_flush(0, lw);
		if (old != me) {
			long next;
			do {
				MPI_Fetch_and_op(NULL, &next, MPI_LONG, rank, NEXT, MPI_NO_OP, lw);
				MPI_Win_flush(rank, lw);
			} while (next == -1);
			MPI_Accumulate(&zero, 1, MPI_LONG, (int)next, LOCKED, 1, MPI_LONG, MPI_REPLACE, lw);
			MPI_Win_flush((int)next, lw);
		}
	}
	MPI_Win_unlock_all(lw);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		CHECK(w[COUNT] == (long)ROUNDS * size, "the guarded counter is %ld, want %ld", w[COUNT], (long)ROUNDS * size);
	report("MCS lock from compare-and-swap");

	/* Compare-and-swap on each size of integer the standard allows (MPI
	 * 4.1, 12.3.4: the C integer and byte types), on the next rank's part
	 * of a shared window: no swap where the compare differs, a swap where
	 * it matches, the old value returned both times. */
	MPI_Win xw;
	unsigned char *xb;
	MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &xb, &xw);
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
#define CAS_ONE(T, MT, OFF)                                                                               \
	do {                                                                                              \
		T nv = (T)(100 + rank), bad = (T)(next + 50), cmp = (T)(next + 11), res = (T)0;             \
		MPI_Compare_and_swap(&nv, &bad, &res, MT, next, OFF, xw);                                   \
		MPI_Win_flush(next, xw);                                                                    \
		CHECK(res == cmp, "%s: a compare that differs returned %lld, want %lld", #MT, (long long)res, \
		      (long long)cmp);                                                                      \
		MPI_Compare_and_swap(&nv, &cmp, &res, MT, next, OFF, xw);                                   \
		MPI_Win_flush(next, xw);                                                                    \
		CHECK(res == cmp, "%s: a compare that matches returned %lld, want %lld", #MT, (long long)res, \
		      (long long)cmp);                                                                      \
	} while (0);
#define CAS_SEEN(T, MT, OFF)                                                                          \
	do {                                                                                          \
		T v;                                                                                  \
		memcpy(&v, xb + (OFF), sizeof v);                                                     \
		CHECK(v == (T)(100 + prev), "%s: the word is %lld, want %lld", #MT, (long long)v,       \
		      (long long)(T)(100 + prev));                                                    \
	} while (0);
#define CAS_INIT(T, MT, OFF)                            \
	do {                                            \
		T v = (T)(rank + 11);                   \
		memcpy(xb + (OFF), &v, sizeof v);       \
	} while (0);
#define CAS_TYPES(X)                       \
	X(unsigned char, MPI_BYTE, 0)      \
	X(short, MPI_SHORT, 2)             \
	X(int, MPI_INT, 4)                 \
	X(unsigned, MPI_UNSIGNED, 8)       \
	X(long, MPI_LONG, 16)              \
	X(int64_t, MPI_INT64_T, 24)        \
	X(uint64_t, MPI_UINT64_T, 32)
	CAS_TYPES(CAS_INIT)
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock_all(0, xw);
	CAS_TYPES(CAS_ONE)
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_sync(xw);
	CAS_TYPES(CAS_SEEN)
	MPI_Win_unlock_all(xw);
	MPI_Win_free(&xw);
	report("compare-and-swap of 1, 2, 4 and 8-byte integers");

	/* MPI_BYTE in the accumulates (MPI 4.1, 7.9.2 and 13.3.4: the bitwise
	 * ops, MPI_REPLACE and MPI_NO_OP): every rank ORs its bit into rank
	 * 0's bytes, one byte type built of MPI_BYTE among them; a fetching
	 * XOR and a NO_OP read them; REPLACE writes them. */
	MPI_Win bw;
	unsigned char *bb;
	MPI_Win_allocate(8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &bb, &bw);
	memset(bb, 0, 8);
	MPI_Datatype four;
	MPI_Type_contiguous(4, MPI_BYTE, &four);
	MPI_Type_commit(&four);
	unsigned char bit[8], got8[8], want = (unsigned char)((1u << size) - 1), old = 0, zero = 0;
	memset(bit, 1 << rank, sizeof bit);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock_all(0, bw);
	MPI_Accumulate(bit, 4, MPI_BYTE, 0, 0, 4, MPI_BYTE, MPI_BOR, bw);
	MPI_Accumulate(bit, 4, MPI_BYTE, 0, 4, 1, four, MPI_BOR, bw);
	MPI_Win_flush_all(bw);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, got8, 8, MPI_BYTE, 0, 0, 8, MPI_BYTE, MPI_NO_OP, bw);
	MPI_Win_flush(0, bw);
	for (int i = 0; i < 8; i++)
		CHECK(got8[i] == want, "MPI_BOR on MPI_BYTE: byte %d is %#x, want %#x", i, got8[i], want);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Fetch_and_op(bit, &old, MPI_BYTE, 0, 7, MPI_BXOR, bw);
	MPI_Win_flush(0, bw);
	CHECK((old & (1 << rank)) != 0, "MPI_BXOR on MPI_BYTE fetched %#x: rank %d's bit is gone", old, rank);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		MPI_Accumulate(&zero, 1, MPI_BYTE, 0, 0, 1, MPI_BYTE, MPI_REPLACE, bw);
	MPI_Win_unlock_all(bw);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		CHECK(bb[0] == 0 && bb[6] == want && bb[7] == 0, "bytes 0, 6 and 7 are %#x %#x %#x, want 0 %#x 0", bb[0], bb[6],
		      bb[7], want);
	}
	MPI_Type_free(&four);
	MPI_Win_free(&bw);
	report("MPI_BYTE under the bitwise ops, MPI_REPLACE and MPI_NO_OP");

	/* Send/Recv signalling around Win_sync: rank 0 stores into its part of
	 * a shared window, syncs, and sends a message; the receiver syncs and
	 * loads. */
	MPI_Win sw;
	int *sb;
	MPI_Win_allocate_shared(64 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &sb, &sw);
	int *p0;
	MPI_Aint sz;
	int du;
	MPI_Win_shared_query(sw, 0, &sz, &du, &p0);
	MPI_Win_lock_all(0, sw);
	for (int round = 0; round < 20; round++) {
		if (rank == 0) {
			for (int i = 0; i < 64; i++)
				p0[i] = round * 1000 + i;
			MPI_Win_sync(sw);
			for (int q = 1; q < size; q++)
				MPI_Send(&round, 1, MPI_INT, q, 1, MPI_COMM_WORLD);
			for (int q = 1; q < size; q++)
				MPI_Recv(NULL, 0, MPI_INT, q, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			int r;
			MPI_Recv(&r, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Win_sync(sw);
			for (int i = 0; i < 64; i++)
				CHECK(p0[i] == r * 1000 + i, "round %d element %d is %d", r, i, p0[i]);
			MPI_Send(NULL, 0, MPI_INT, 0, 2, MPI_COMM_WORLD);
		}
	}
	MPI_Win_unlock_all(sw);
	report("Send/Recv signalling around Win_sync");

	/* With MPI_NO_OP the origin is ignored: NULL, 0 and MPI_DATATYPE_NULL
	 * are what programs pass there (MPI 4.1, 12.3.4). */
	MPI_Win_fence(0, sw);
	if (rank == 0)
		p0[1] = 77;
	MPI_Win_fence(0, sw);
	int got = -1;
	long lgot = -1;
	MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, sw);
	MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, &got, 1, MPI_INT, 0, 1, 1, MPI_INT, MPI_NO_OP, sw);
	MPI_Win_unlock(0, sw);
	CHECK(got == 77, "Get_accumulate(MPI_NO_OP) read %d, want 77", got);
	MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, lw);
	MPI_Fetch_and_op(NULL, &lgot, MPI_LONG, 0, LOCKED, MPI_NO_OP, lw);
	MPI_Win_unlock(0, lw);
	CHECK(lgot >= 0, "Fetch_and_op(MPI_NO_OP) read %ld", lgot);
	MPI_Barrier(MPI_COMM_WORLD);
	report("MPI_NO_OP with a NULL origin and MPI_DATATYPE_NULL");

	MPI_Win_free(&sw);
	MPI_Win_free(&lw);
	MPI_Win_free(&cw);
	free(taken);
	free(all);
	MPI_Finalize();
	return 0;
}
