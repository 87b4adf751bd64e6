/*
 * stats.h - the one median and the one comparison of doubles, for every
 * folder (benches' repetition statistics, fingerprint series, rankings,
 * the report, the fleet baseline of the acceptance policy).
 */
#ifndef GPUVET_STATS_H
#define GPUVET_STATS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* qsort comparison of two doubles, ascending (NaN compares equal to everything). */
int gv_cmp_double(const void *a, const void *b);
/* Sorts v[0..n) in place and returns its median (mean of the middle two when n is even); 0 when n == 0. */
double gv_median_inplace(double *v, size_t n);
/* The median of v[0..n) without touching it (sorts a copy); 0 when n == 0. */
double gv_median(const double *v, size_t n);

#ifdef __cplusplus
}
#endif
#endif
