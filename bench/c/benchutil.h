/*
 * benchutil.h - timing plan, statistics and the RESULT line shared by
 * rmabench.c (MPI) and climit.c (plain C), so both report exactly the same way.
 *
 * Method (identical for every runtime, see issue 5):
 *   - a batch runs k operations back to back; k is calibrated once per
 *     measurement so that one batch lasts at least plan.batch_ns (>= 1 ms),
 *     which keeps clock resolution and the clock call out of the result;
 *   - plan.rounds rounds of plan.batches batches each are timed; each batch
 *     yields ns/op = batch time / k;
 *   - the reported median is the median of the per-round medians (a round
 *     that caught a preemption moves its own median only a little and the
 *     outer median not at all); min and max are over every batch, so they
 *     show the spread honestly;
 *   - iterations = rounds * batches * k (timed operations per rank);
 *   - very slow operations get fewer batches per round (plan_batches).
 *
 * Output line (one per measurement, stdout, flushed at once so a run killed
 * by a timeout keeps what it had finished):
 *   RESULT <name> <median_ns_per_op> <min_ns> <max_ns> <iterations>
 */
#ifndef BENCHUTIL_H
#define BENCHUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct plan {
	int rounds;       /* outer repetitions, each gives one median */
	int batches;      /* timed batches per round */
	int64_t batch_ns; /* minimum duration of one batch */
	int slow_batches; /* batches per round for very slow operations */
};

static const struct plan plan_quick = {3, 7, 1000000, 1};
static const struct plan plan_full = {5, 21, 2000000, 7};

/* bench_prefault writes a zero byte of every page of the n bytes at p, as
 * a store the compiler keeps, and returns p. A memset to zero right after
 * malloc is what compilers turn into calloc, which leaves fresh pages
 * untouched: a single-copy reader of such a buffer copies the kernel's one
 * zero page over and over, from its cache (a 1 MiB ping-pong measured 32
 * us so, 78 over real pages). */
static inline void *bench_prefault(void *p, size_t n)
{
	volatile char *c = p;
	for (size_t i = 0; i < n; i += 4096)
		c[i] = 0;
	return p;
}

/* CLOCK_MONOTONIC is one system-wide clock, so timestamps taken by different
 * processes on this node can be compared (used for the contended spans). */
static inline int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Next batch size during calibration: aim 25% past the target so the next
 * try usually succeeds, but grow at least 2x (timer noise on tiny batches)
 * and at most 64x (a first batch hit by a page fault must not explode k). */
static inline int64_t plan_grow(int64_t k, int64_t elapsed_ns, int64_t target_ns)
{
	int64_t next;
	if (elapsed_ns <= 0)
		return k * 64;
	next = (int64_t)((double)k * 1.25 * (double)target_ns / (double)elapsed_ns) + 1;
	if (next < 2 * k)
		next = 2 * k;
	if (next > 64 * k)
		next = 64 * k;
	return next;
}

/* Batches per round once k is known. When a single operation already lasts
 * 20 batch lengths (a 256 MiB touch, a barrier of 32 busy-polling ranks on
 * 2 cores) more batches add minutes, not information: use slow_batches per
 * round instead. The same rule for every runtime, decided on the last
 * calibration batch (k ops in t ns). */
static inline int plan_batches(const struct plan *p, int64_t k, int64_t t)
{
	if (k == 1 && t >= 20 * p->batch_ns && p->batches > p->slow_batches)
		return p->slow_batches;
	return p->batches;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median of n values; sorts v in place. */
static inline double median_sort(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* v holds rounds*batches ns/op values, round-major. */
static inline void report(const char *name, const struct plan *p, const double *v,
			  int64_t k)
{
	int n = p->rounds * p->batches;
	double *tmp = malloc(sizeof(double) * (size_t)n);
	double *meds = malloc(sizeof(double) * (size_t)p->rounds);
	double lo = v[0], hi = v[0], med;
	if (!tmp || !meds) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	for (int i = 0; i < n; i++) {
		if (v[i] < lo)
			lo = v[i];
		if (v[i] > hi)
			hi = v[i];
	}
	memcpy(tmp, v, sizeof(double) * (size_t)n);
	for (int r = 0; r < p->rounds; r++)
		meds[r] = median_sort(tmp + r * p->batches, p->batches);
	med = median_sort(meds, p->rounds);
	printf("RESULT %s %.2f %.2f %.2f %lld\n", name, med, lo, hi,
	       (long long)n * (long long)k);
	fflush(stdout);
	free(tmp);
	free(meds);
}

/* The command line every harness takes: [--quick] [--list] [-n N] all |
 * NAME... . name(j) is measurement j of count; sel[j] is set for each one
 * named. -n N (minn <= N <= maxn) is taken only when maxn > 0. Returns 0,
 * or 2 after one line on stderr (only when say) naming what was wrong. */
struct bench_args {
	int quick, list, all, n;
};

static inline int bench_parse(int argc, char **argv, const char *prog, const char *(*name)(int),
			      int count, int *sel, int minn, int maxn, int say, struct bench_args *a)
{
	for (int i = 1; i < argc; i++) {
		int found = 0;
		if (!strcmp(argv[i], "--quick")) {
			a->quick = 1;
			continue;
		}
		if (!strcmp(argv[i], "--list")) {
			a->list = 1;
			continue;
		}
		if (!strcmp(argv[i], "all")) {
			a->all = 1;
			continue;
		}
		if (maxn > 0 && !strcmp(argv[i], "-n") && i + 1 < argc) {
			char *end;
			long v = strtol(argv[++i], &end, 10);
			if (*end || v < minn || v > maxn) {
				if (say)
					fprintf(stderr, "%s: -n %s: want %d to %d processes\n", prog, argv[i], minn, maxn);
				return 2;
			}
			a->n = (int)v;
			continue;
		}
		for (int j = 0; j < count; j++)
			if (!strcmp(argv[i], name(j)))
				sel[j] = found = 1;
		if (!found) {
			if (say)
				fprintf(stderr, "%s: unknown measurement %s\n", prog, argv[i]);
			return 2;
		}
	}
	return 0;
}

#endif
