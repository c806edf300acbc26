/*
 * collrows.h - the collective rows that rmabench.c (over MPI) and collimit.c
 * (the plain-C limit) measure, and the answers they check: what each rank
 * sends and what each rank must receive. bench/cmd/rmabench (shmrun) has the
 * same rows and the same formulas (colls.go).
 *
 * Every row moves doubles and reduces with a sum; every value is an integer
 * far below 2^53, so sums are exact in any order and a wrong answer is a
 * wrong data movement, never rounding. Rooted calls use root 0.
 *
 * iallreduce_8 is Allreduce's data through MPI_Iallreduce and MPI_Wait,
 * iallreduce_test_8 through MPI_Iallreduce and a loop of MPI_Test until
 * it completes (a program that overlaps the call with work polls so; the
 * C limit of both: its Allreduce; no runtime to queue anything).
 *
 * Rows come in two methods (issue 14): "NAME" runs back-to-back calls, timed
 * from the first rank's start to the last rank's end (as the OSU benchmarks
 * average a loop); "NAME_sync" separates single calls by a barrier and
 * reports the slowest rank's mean time inside the call.
 */
#ifndef COLLROWS_H
#define COLLROWS_H

#include <stddef.h>
#include <stdio.h>

enum coll_op {
	COLL_ALLREDUCE,
	COLL_BCAST,
	COLL_REDUCE,
	COLL_GATHER,
	COLL_SCATTER,
	COLL_ALLGATHER,
	COLL_ALLTOALL,
	COLL_SCAN,
	COLL_REDUCE_SCATTER_BLOCK,
	COLL_IALLREDUCE, /* MPI_Iallreduce then MPI_Wait: Allreduce's data */
	COLL_IALLREDUCE_TEST, /* MPI_Iallreduce then MPI_Test until done */
};

struct coll_row {
	const char *name; /* the loop row; the sync row appends "_sync" */
	enum coll_op op;
	size_t m;         /* doubles per rank (per block for the block calls) */
};

#define COLL_BIG ((size_t)131072) /* 1 MiB of doubles */

static const struct coll_row coll_rows[] = {
	{"allreduce_8", COLL_ALLREDUCE, 1},
	{"allreduce_1m", COLL_ALLREDUCE, COLL_BIG},
	{"bcast_8", COLL_BCAST, 1},
	{"bcast_1m", COLL_BCAST, COLL_BIG},
	{"reduce_8", COLL_REDUCE, 1},
	{"gather_8", COLL_GATHER, 1},
	{"scatter_8", COLL_SCATTER, 1},
	{"allgather_8", COLL_ALLGATHER, 1},
	{"alltoall_8", COLL_ALLTOALL, 1},
	{"scan_8", COLL_SCAN, 1},
	{"reduce_scatter_block_8", COLL_REDUCE_SCATTER_BLOCK, 1},
	{"iallreduce_8", COLL_IALLREDUCE, 1},
	{"iallreduce_test_8", COLL_IALLREDUCE_TEST, 1},
};
#define NCOLL ((int)(sizeof coll_rows / sizeof coll_rows[0]))

/* Elements of the send and receive buffers of rank r of n (recv 0: the
 * call writes the send buffer, as Bcast does, or nothing on this rank). */
static inline size_t coll_send_len(enum coll_op op, size_t m, int n)
{
	switch (op) {
	case COLL_SCATTER:
	case COLL_ALLTOALL:
	case COLL_REDUCE_SCATTER_BLOCK:
		return (size_t)n * m;
	default:
		return m;
	}
}

static inline size_t coll_recv_len(enum coll_op op, size_t m, int n)
{
	switch (op) {
	case COLL_BCAST:
		return 0;
	case COLL_GATHER:
	case COLL_ALLGATHER:
	case COLL_ALLTOALL:
		return (size_t)n * m;
	default:
		return m;
	}
}

/* Element i of rank r's send buffer. */
static inline double coll_input(int r, size_t i, double stamp)
{
	return stamp + 1000.0 * r + (double)(i % 977);
}

/* Whether rank r's receive buffer (or, for Bcast, its buffer) holds an
 * answer: not on a non-root of Reduce or Gather. */
static inline int coll_receives(enum coll_op op, int r)
{
	return !((op == COLL_REDUCE || op == COLL_GATHER) && r != 0);
}

/* Element i of what rank r of n must hold after the call. */
static inline double coll_expect(enum coll_op op, size_t m, int r, int n, size_t i,
				 double stamp)
{
	double sum = 0;
	switch (op) {
	case COLL_ALLREDUCE:
	case COLL_IALLREDUCE:
	case COLL_IALLREDUCE_TEST:
	case COLL_REDUCE:
		for (int q = 0; q < n; q++)
			sum += coll_input(q, i, stamp);
		return sum;
	case COLL_BCAST:
		return coll_input(0, i, stamp);
	case COLL_GATHER:
	case COLL_ALLGATHER:
		return coll_input((int)(i / m), i % m, stamp);
	case COLL_SCATTER:
		return coll_input(0, (size_t)r * m + i, stamp);
	case COLL_ALLTOALL:
		return coll_input((int)(i / m), (size_t)r * m + i % m, stamp);
	case COLL_SCAN:
		for (int q = 0; q <= r; q++)
			sum += coll_input(q, i, stamp);
		return sum;
	case COLL_REDUCE_SCATTER_BLOCK:
		for (int q = 0; q < n; q++)
			sum += coll_input(q, (size_t)r * m + i, stamp);
		return sum;
	}
	return -1;
}

/* The poison a receive buffer holds before a checked call: no answer is
 * negative. */
#define COLL_POISON (-1.0)

/* Fill rank r's inputs of row for stamp and poison what the call writes
 * (the receive buffer; for Bcast the buffer itself, except on the root). */
static inline void coll_prepare(const struct coll_row *row, int r, int n, double stamp,
				double *send, double *recv)
{
	size_t ns = coll_send_len(row->op, row->m, n), nr = coll_recv_len(row->op, row->m, n);
	for (size_t i = 0; i < ns; i++)
		send[i] = row->op == COLL_BCAST && r != 0 ? COLL_POISON : coll_input(r, i, stamp);
	for (size_t i = 0; i < nr; i++)
		recv[i] = COLL_POISON;
}

/* Check rank r's answer of the last call of row with stamp: 0 if right,
 * else 1, after an "INFO check NAME WRONG" line naming the first wrong
 * element. */
static inline int coll_verify(const struct coll_row *row, const char *name, int r, int n,
			      double stamp, const double *send, const double *recv)
{
	size_t nr = coll_recv_len(row->op, row->m, n);
	const double *got = recv;
	if (row->op == COLL_BCAST) {
		nr = row->m;
		got = send;
	}
	if (!coll_receives(row->op, r))
		return 0;
	for (size_t i = 0; i < nr; i++) {
		double want = coll_expect(row->op, row->m, r, n, i, stamp);
		if (got[i] != want) {
			printf("INFO check %s WRONG on rank %d: element %zu is %g, want %g\n",
			       name, r, i, got[i], want);
			fflush(stdout);
			return 1;
		}
	}
	return 0;
}

#endif
