/* check.h - shared by the C test programs: counted checks, reported by
 * rank 0 once every rank has run them. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int failures;

#define CHECK(cond, ...)                                                  \
	do {                                                              \
		if (!(cond)) {                                            \
			int r_;                                           \
			MPI_Comm_rank(MPI_COMM_WORLD, &r_);               \
			fprintf(stderr, "rank %d: %s:%d: ", r_, __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                     \
			fputc('\n', stderr);                              \
			failures++;                                       \
		}                                                         \
	} while (0)

/* report prints "ok NAME" on rank 0 if no rank failed since the last
 * report, else "FAILED NAME". Collective. */
static void report(const char *name)
{
	int mine = failures, all = 0, rank;
	MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0) {
		printf("%s %s\n", all ? "FAILED" : "ok", name);
		fflush(stdout);
	}
	failures = 0;
}

/* class_of is err's error class, or -1 for MPI_SUCCESS. */
static inline int class_of(int err)
{
	int class = -1;
	if (err != MPI_SUCCESS)
		MPI_Error_class(err, &class);
	return class;
}

/* fill writes pattern k into b (n bytes); same checks it. */
static inline void fill(unsigned char *b, int n, int k)
{
	for (int i = 0; i < n; i++)
		b[i] = (unsigned char)(k * 131 + i * 7 + 1);
}

static inline int same(const unsigned char *b, int n, int k)
{
	for (int i = 0; i < n; i++)
		if (b[i] != (unsigned char)(k * 131 + i * 7 + 1))
			return 0;
	return 1;
}
