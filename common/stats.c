/* stats.c - see stats.h */
#include "common/stats.h"
#include "common/util.h"

#include <stdlib.h>
#include <string.h>

int gv_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double gv_median_inplace(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof *v, gv_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double gv_median(const double *v, size_t n)
{
	if (!n)
		return 0;
	double *c = gv_malloc(n * sizeof *c);
	memcpy(c, v, n * sizeof *c);
	double m = gv_median_inplace(c, n);
	free(c);
	return m;
}
