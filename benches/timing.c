/*
 * timing.c - shared timing helpers.  The harness owns the child process and
 * the deadline; a bench owns its formula and uses these for warm-up counts,
 * repetitions and the summary of repeated measurements (median and spread,
 * as the tools our users trust report them).
 */
#include "benches/bench.h"
#include "common/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double bench_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void bench_stats(const double *v, int n, struct bench_stats *st)
{
	memset(st, 0, sizeof *st);
	if (n <= 0)
		return;
	double *s = malloc(sizeof *s * (size_t)n);
	if (!s)
		abort();
	memcpy(s, v, sizeof *s * (size_t)n);
	st->median = gv_median_inplace(s, (size_t)n);
	st->n = n;
	st->min = s[0];
	st->max = s[n - 1];
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += s[i];
	st->mean = sum / n;
	double var = 0;
	for (int i = 0; i < n; i++)
		var += (s[i] - st->mean) * (s[i] - st->mean);
	st->stddev = n > 1 ? sqrt(var / (n - 1)) : 0;
	st->spread = n > 1 && st->median != 0 ? (st->max - st->min) / fabs(st->median) : 0;
	free(s);
}

struct bench_reps bench_reps_for(enum bench_profile p)
{
	switch (p) {
	case PROFILE_FULL:
		return (struct bench_reps){ .warmup = 10, .reps = 50 };
	case PROFILE_STANDARD:
		return (struct bench_reps){ .warmup = 5, .reps = 20 };
	case PROFILE_QUICK:
	default:
		return (struct bench_reps){ .warmup = 3, .reps = 10 };
	}
}

const char *bench_profile_name(enum bench_profile p)
{
	switch (p) {
	case PROFILE_STANDARD: return "standard";
	case PROFILE_FULL: return "full";
	case PROFILE_QUICK:
	default: return "quick";
	}
}
