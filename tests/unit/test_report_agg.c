/*
 * test_report_agg.c - the report's medians from the middle four of a
 * group's sorted values (reports/report_agg.c): the same numbers as
 * common/stats.c over every value, and over every value but one (the
 * charts' "fleet median of the other runs").
 */
#include "tests/unit/t.h"
#include "reports/report_int.h"
#include "common/stats.h"
#include "common/util.h"

#include <stdint.h>
#include <stdlib.h>

static uint64_t seed = 88172645463325252ULL;

static uint64_t rnd(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return seed;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Every size to 40, values with many ties: each median bit for bit as gv_median's. */
static void test_medians_equal_every_value_held(void)
{
	double v[40], rest[40];
	int bad = 0;
	for (int trial = 0; trial < 4000; trial++) {
		size_t n = (size_t)(trial % 41);
		struct rep_med m = { .n = n };
		for (size_t i = 0; i < n; i++)
			v[i] = (double)(rnd() % (trial % 3 ? 7 : 1000)) / 4.0 - 10;
		qsort(v, n, sizeof *v, cmp_d);
		for (size_t i = 0; i < n; i++)
			rep_med_add(&m, v[i]);
		if (n == 0) {
			CHECK(isnan(rep_med_value(&m)));
			continue;
		}
		bad += rep_med_value(&m) != gv_median(v, n);
		for (size_t out = 0; out < n; out++) {
			size_t k = 0;
			for (size_t i = 0; i < n; i++)
				if (i != out)
					rest[k++] = v[i];
			if (k == 0)
				CHECK(isnan(rep_med_without(&m, v[out])));
			else
				bad += rep_med_without(&m, v[out]) != gv_median(rest, k);
		}
	}
	CHECK(bad == 0);
}

/* A group fed fewer values than counted has no median (never a number from half the values). */
static void test_median_of_a_short_feed_is_none(void)
{
	struct rep_med m = { .n = 5 };
	rep_med_add(&m, 1);
	rep_med_add(&m, 2);
	CHECK(isnan(rep_med_value(&m)));
	CHECK(isnan(rep_med_without(&m, 1)));
}

TEST_MAIN(T(test_medians_equal_every_value_held), T(test_median_of_a_short_feed_is_none))
